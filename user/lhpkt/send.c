// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `lhpkt send`: the series of packets out of an interface (user/lib/pktio.h),
 * paced from the start time (--gap-us, --burst) when asked.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "lhpkt.h"
#include "pktio.h"

/* One frame out; a full socket queue waited on (1000 x 100 us); 0 or the failure said */
static int send_frame(struct lh_pktio *io, const char *dev, uint8_t *buf, size_t len, size_t cap)
{
	struct lh_frame f = { .data = buf, .len = (uint32_t)len, .cap = (uint32_t)cap };
	int tries, err;

	for (tries = 0; (err = lh_pktio_send(io, &f, 1)) == 0 && tries < 1000; tries++)
		usleep(100); /* socket queue full: wait for it to drain */
	if (err == 1)
		return 0;
	fprintf(stderr, "lhpkt: send on %s failed: %s\n", dev,
		err < 0 ? strerror(-err) : "queue stayed full");
	return -EIO;
}

/* The Ethernet addresses not given: the interface's own and broadcast */
static void fill_macs(struct packet_opts *p, const struct lh_pktio *io)
{
	struct lh_pkt_spec d;

	lh_pkt_spec_init(&d, p->spec.family);
	if (!memcmp(p->spec.src_mac, d.src_mac, sizeof(d.src_mac)))
		memcpy(p->spec.src_mac, lh_pktio_mac(io), sizeof(p->spec.src_mac));
	if (!p->have_dmac)
		memset(p->spec.dst_mac, 0xff, sizeof(p->spec.dst_mac));
}

/* The series out of io; the exit status */
static int send_series(const struct packet_opts *p, struct lh_pktio *io)
{
	unsigned long i, burst = p->burst ? p->burst : 1;
	uint64_t t0 = lh_now_ns();
	uint8_t buf[9216];

	for (i = 0; i < p->count; i++) {
		ssize_t n = packet_build(p, i, buf, sizeof(buf));

		if (n < 0) {
			fprintf(stderr, "lhpkt: cannot build packet: %s\n", strerror((int)-n));
			return EXIT_USAGE;
		}
		if (send_frame(io, p->dev, buf, (size_t)n, sizeof(buf)))
			return EXIT_IO;
		if (p->gap_us && (i + 1) % burst == 0)
			while (lh_sleep_until_ns(t0 + (i + 1) * (uint64_t)p->gap_us * 1000) ==
			       EINTR)
				;
	}
	return 0;
}

int cmd_send(int argc, char **argv)
{
	struct lh_pktio_opts po = { 0 };
	struct packet_opts p;
	struct lh_pktio *io;
	int rc;

	if (packet_opts_parse(argc, argv, &p))
		return EXIT_USAGE;
	if (!p.dev) {
		fprintf(stderr, "lhpkt send: --dev IFACE is required\n");
		return EXIT_USAGE;
	}
	po.ifname = p.dev;
	if (lh_pktio_open(&po, &io))
		return EXIT_IO;
	fill_macs(&p, io);
	rc = send_series(&p, io);
	lh_pktio_close(io);
	return rc;
}
