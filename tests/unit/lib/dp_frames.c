// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Frames, pairing and the veth of the LR2 data-path tests and bench (dp_frames.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "dp_frames.h"
#include "report.h"
#include "tap.h"

int dp_set_sizes(struct bpf_object *obj, void *ctx)
{
	const struct dp_sizes *sz = ctx;
	struct bpf_map *m;

	bpf_object__for_each_map (m, obj) {
		const char *n = bpf_map__name(m);

		if (!strcmp(n, "lh_pool") || !strcmp(n, "lh_pool_free"))
			bpf_map__set_max_entries(m, sz->pool);
		if (!strcmp(n, "lh_ring") || !strcmp(n, "lh_ring_free"))
			bpf_map__set_max_entries(m, sz->rings);
	}
	return 0;
}

/* ---- frames ---- */

void dp_payload_for(uint32_t psn, uint8_t *p)
{
	int i;

	for (i = 0; i < DP_PAYLOAD; i++)
		p[i] = (uint8_t)(psn * 7 + i);
}

uint32_t dp_data_qpn, dp_ack_qpn;
uint16_t dp_data_sport, dp_ack_sport;

size_t dp_data_frame(const struct dp_flow *fl, uint32_t psn, uint8_t *buf)
{
	static uint8_t pay[DP_PAYLOAD];
	struct lh_pkt_spec s;

	lh_pkt_spec_init(&s, fl->family);
	s.src = fl->a;
	s.dst = fl->b;
	s.ttl = 62;
	s.roce.opcode = ROCE_RC_RDMA_WRITE_MIDDLE;
	s.roce.dqpn = dp_data_qpn ? dp_data_qpn : DP_QP_R;
	if (dp_data_sport)
		s.sport = dp_data_sport;
	s.roce.psn = psn & ROCE_PSN_MASK;
	dp_payload_for(psn, pay);
	s.payload = pay;
	s.payload_len = DP_PAYLOAD;
	return (size_t)lh_pkt_build(&s, buf, 9000);
}

size_t dp_ack_frame(const struct dp_flow *fl, uint32_t psn, uint8_t syndrome, uint8_t byte4,
		    uint32_t msn, uint8_t *buf)
{
	struct lh_pkt_spec s;

	lh_pkt_spec_init(&s, fl->family);
	s.src = fl->b;
	s.dst = fl->a;
	/* from the receiving NIC: its MAC first */
	memcpy(s.src_mac, "\x02\xbb\xbb\xbb\xbb\x01", 6);
	memcpy(s.dst_mac, "\x02\x99\x99\x99\x99\x01", 6);
	s.roce.opcode = ROCE_RC_ACKNOWLEDGE;
	s.roce.dqpn = dp_ack_qpn ? dp_ack_qpn : DP_QP_S;
	if (dp_ack_sport)
		s.sport = dp_ack_sport;
	s.roce.psn = psn & ROCE_PSN_MASK;
	s.roce.byte4 = byte4;
	s.roce.aeth.syndrome = syndrome;
	s.roce.aeth.msn = msn;
	return (size_t)lh_pkt_build(&s, buf, 9000);
}

uint32_t dp_report_seq;
uint16_t dp_report_flags;
const uint8_t *dp_report_key;

size_t dp_report_frame_held(const struct dp_flow *fl, uint32_t epsn, uint32_t n,
			    const uint8_t held[LH_REPORT_BITS / 8], uint8_t *buf)
{
	struct lh_report_info ri = {
		.dqpn = dp_data_qpn ? dp_data_qpn : DP_QP_R, .peer_qpn = DP_QP_S, .epsn = epsn, .nbits = n,
		.seq = dp_report_seq, .flags = dp_report_flags, .key = dp_report_key,
	};
	struct lh_pkt_spec s;

	memcpy(ri.held, held, sizeof(ri.held));
	lh_pkt_spec_init(&s, fl->family);
	s.src = fl->b;
	s.dst = fl->a;
	memcpy(s.src_mac, "\x02\x77\x77\x77\x77\x01", 6); /* the WAN peer */
	memcpy(s.dst_mac, "\x02\x88\x88\x88\x88\x01", 6); /* our WAN interface */
	return (size_t)lh_report_frame(&s, &ri, buf, 9000);
}

size_t dp_report_frame(const struct dp_flow *fl, uint32_t epsn, uint32_t n, uint32_t held_mask,
		       uint8_t *buf)
{
	uint8_t held[LH_REPORT_BITS / 8] = { 0 };
	uint32_t i;

	for (i = 0; i < 32 && i < n; i++)
		if (held_mask & (1u << i))
			held[i / 8] |= (uint8_t)(1u << (i % 8));
	return dp_report_frame_held(fl, epsn, n, held, buf);
}

void dp_route_frame(uint8_t *buf, size_t len, int ttl)
{
	struct lh_pkt fp;

	memcpy(buf, DP_ROUTED_MACS, 12);
	lh_pkt_parse(buf, len, true, &fp);
	buf[fp.l3_off + (fp.family == AF_INET ? 8 : 7)] = (uint8_t)ttl;
	lh_pkt_ipv4_csum_update(buf, &fp);
}

/* ---- maps, as the agent would write them ---- */

void dp_qp_key(const struct dp_flow *fl, struct lh_qp_key *k)
{
	memset(k, 0, sizeof(*k));
	if (fl->family == AF_INET) {
		k->saddr[10] = k->saddr[11] = 0xff;
		k->daddr[10] = k->daddr[11] = 0xff;
		memcpy(k->saddr + 12, &fl->a.v4, 4);
		memcpy(k->daddr + 12, &fl->b.v4, 4);
	} else {
		memcpy(k->saddr, &fl->a.v6, 16);
		memcpy(k->daddr, &fl->b.v6, 16);
	}
	k->dqpn = DP_QP_R;
}

bool dp_qp_get(struct lh_harness *h, const struct dp_flow *fl, struct lh_qp *qp)
{
	struct lh_qp_key k;

	dp_qp_key(fl, &k);
	return !bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_qp"), &k, qp);
}

bool dp_qp_put(struct lh_harness *h, const struct dp_flow *fl, const struct lh_qp *qp)
{
	struct lh_qp_key k;

	dp_qp_key(fl, &k);
	return !bpf_map_update_elem(lh_harness_map_fd(h, "lh_qp"), &k, qp, BPF_EXIST);
}

bool dp_pair(struct lh_harness *h, const struct dp_flow *fl)
{
	struct lh_qp_key k, ak;
	uint32_t peer = DP_QP_S;

	dp_qp_key(fl, &k);
	if (bpf_map_update_elem(lh_harness_map_fd(h, "lh_pair"), &k, &peer, BPF_ANY))
		return false;
	memcpy(ak.saddr, k.daddr, 16);
	memcpy(ak.daddr, k.saddr, 16);
	ak.dqpn = DP_QP_S;
	return !bpf_map_update_elem(lh_harness_map_fd(h, "lh_ack"), &ak, &k, BPF_ANY);
}

uint32_t dp_free_slots(struct lh_harness *h)
{
	int fd = lh_harness_map_fd(h, "lh_pool_free");
	static uint32_t saved[65536];
	uint32_t v, n = 0;

	/* a queue cannot be counted without popping: pop all, push back */
	while (n < 65536 && !bpf_map_lookup_and_delete_elem(fd, NULL, &v))
		saved[n++] = v;
	for (v = 0; v < n; v++)
		bpf_map_update_elem(fd, NULL, &saved[v], BPF_ANY);
	return n;
}

/* ---- the veth that TC emission goes out of ---- */

int dp_netns_veth(const char *ifa, const char *ifb, int *ifindex, int *cap_fd)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	char cmd[256];
	int fd;

	if (unshare(CLONE_NEWNET)) {
		tap_diag("unshare(CLONE_NEWNET): %s", strerror(errno));
		return -1;
	}
	snprintf(cmd, sizeof(cmd),
		 "ip link add %s type veth peer name %s && ip link set %s up && "
		 "ip link set %s up && sysctl -qw net.ipv6.conf.all.disable_ipv6=1",
		 ifa, ifb, ifa, ifb);
	if (system(cmd))
		return -1;
	*ifindex = (int)if_nametoindex(ifa);
	if (!cap_fd)
		return *ifindex ? 0 : -1;
	sll.sll_ifindex = (int)if_nametoindex(ifb);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*cap_fd = fd;
	return 0;
}
