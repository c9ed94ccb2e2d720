// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The LR2 data path (wan_xdp, dc_xdp, dc_tc) loaded together as longhauld
 * loads it (maps shared through one pin directory) and driven with
 * BPF_PROG_TEST_RUN, step by step through the paths of docs/design.md:
 * Depot hold / Depot-NACK / release in PSN order / replay from the backup
 * pool / ACKs freeing the pool / fail-open when full; Sentry in-order,
 * Sentry-NACK, the SR filter during an episode, Depot-NACK intake; PSN wrap
 * at 2^24 and IPv6. Packets the TC programs emit with bpf_clone_redirect go
 * out a real veth in a private network namespace and are read back.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpf_harness.h"
#include "clock.h"
#include "dp_frames.h"
#include "lh_maps.h"
#include "pkt.h"
#include "tap.h"

#define XDP_DROP_ 1
#define XDP_PASS_ 2
/* LH_TC_NEXT (TC_ACT_UNSPEC, -1): let go, the next program on the hook sees it */
#define TC_NEXT 0xffffffffu
#define TC_SHOT 2
#define POOL 128 /* depot_long_runs holds more than a burst (LH_BURST) */
#define RINGS 16

static const char *const objs[] = { "wan_xdp", "dc_xdp", "dc_tc", "wan_tc" };
static struct lh_harness *h;
static int dc_ifindex, cap_fd;
static struct dp_sizes sizes = { .pool = POOL, .rings = RINGS };

static struct dp_flow f4, f6;

/* ---- running programs ---- */

struct run {
	uint32_t verdict;
	uint8_t out[9216];
	size_t out_len;
	struct lh_pkt p; /* out parsed */
};

static int xdp(const char *prog, const uint8_t *in, size_t len, struct run *r)
{
	r->out_len = sizeof(r->out);
	if (lh_harness_run(h, prog, in, len, &r->verdict, r->out, &r->out_len))
		return -1;
	lh_pkt_parse(r->out, r->out_len, true, &r->p);
	return 0;
}

static int tc(const char *prog, const uint8_t *in, size_t len, struct run *r)
{
	r->out_len = sizeof(r->out);
	if (lh_harness_run_tc(h, prog, in, len, (uint32_t)dc_ifindex, &r->verdict, r->out,
			      &r->out_len))
		return -1;
	return 0;
}

static int64_t ctr(const char *name)
{
	char full[96];

	snprintf(full, sizeof(full), "lh_stats.%s", name);
	return lh_counter_read(h, full);
}

/* Frames that came out of lhu0 since the last call, RoCE only, parsed into caps[] */
struct cap {
	uint8_t b[9216];
	size_t len;
	struct lh_pkt p;
};

static struct cap caps[128];

static int captured(void)
{
	struct pollfd pfd = { .fd = cap_fd, .events = POLLIN };
	int n = 0;

	while (n < 128 && poll(&pfd, 1, 200) > 0) {
		ssize_t len = recv(cap_fd, caps[n].b, sizeof(caps[n].b), 0);

		if (len <= 0)
			break;
		caps[n].len = (size_t)len;
		if (lh_pkt_parse(caps[n].b, (size_t)len, true, &caps[n].p) == LH_STAT_ROCE)
			n++;
	}
	return n;
}

/* What caps_check asks of a run besides PSN, payload, ICRC and TTL */
#define CAP_MACS 1u /* each with the routed MACs (DP_ROUTED_MACS) */
#define CAP_ACKREQ 2u /* AckReq on the last only */
#define CAP_ACKREQ_AFTER_FIRST 4u /* the same, the first (the filler) as it came */

/* The first of caps[0..n) for which cond fails, else the last */
#define CAP_FIRST_BAD(i, n, cond)                   \
	for ((i) = 0; (i) < (n)-1 && (cond); (i)++) \
		;

/*
 * caps[0..n) are data PSNs psn0, psn0 + 1 ... intact: one test point per
 * value (PSN, payload length, payload, ICRC, TTL, and as flags asks the MACs
 * and AckReq) over the run, under the prefix fmt gives; a failure names the
 * first packet that is wrong, with got and want. n is checked by the caller.
 */
static void caps_check(int n, uint32_t psn0, int ttl, unsigned int flags, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void caps_check(int n, uint32_t psn0, int ttl, unsigned int flags, const char *fmt, ...)
{
	uint8_t want[DP_PAYLOAD];
	char desc[512];
	va_list ap;
	int i;

	if (n <= 0)
		return;
	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	tap_prefix("%s", desc);
	CAP_FIRST_BAD(i, n, caps[i].p.roce.psn == ((psn0 + (uint32_t)i) & ROCE_PSN_MASK));
	tap_eq_u64(caps[i].p.roce.psn, (psn0 + (uint32_t)i) & ROCE_PSN_MASK,
		   "PSNs in order (packet %d of %d)", i + 1, n);
	CAP_FIRST_BAD(i, n, caps[i].p.payload_len == DP_PAYLOAD);
	tap_eq_u64(caps[i].p.payload_len, DP_PAYLOAD, "payload length (packet %d of %d)", i + 1, n);
	for (i = 0; i < n - 1; i++) {
		dp_payload_for(psn0 + (uint32_t)i, want);
		if (memcmp(caps[i].b + caps[i].p.payload_off, want, DP_PAYLOAD))
			break;
	}
	dp_payload_for(psn0 + (uint32_t)i, want);
	tap_eq_mem(caps[i].b + caps[i].p.payload_off, want, DP_PAYLOAD, "payload (packet %d of %d)",
		   i + 1, n);
	CAP_FIRST_BAD(i, n, lh_pkt_icrc_ok(caps[i].b, &caps[i].p));
	tap_true(lh_pkt_icrc_ok(caps[i].b, &caps[i].p), "ICRC valid (packet %d of %d)", i + 1, n);
	CAP_FIRST_BAD(i, n, caps[i].p.ttl == ttl);
	tap_eq_int(caps[i].p.ttl, ttl, "TTL (packet %d of %d)", i + 1, n);
	if (flags & CAP_MACS) {
		CAP_FIRST_BAD(i, n, !memcmp(caps[i].b, DP_ROUTED_MACS, 12));
		tap_eq_mem(caps[i].b, DP_ROUTED_MACS, 12, "routed MACs (packet %d of %d)", i + 1,
			   n);
	}
	if (flags & (CAP_ACKREQ | CAP_ACKREQ_AFTER_FIRST)) {
		int from = (flags & CAP_ACKREQ_AFTER_FIRST) ? 1 : 0;

		for (i = from; i < n - 1 && caps[i].p.roce.ackreq == (i == n - 1); i++)
			;
		if (i < n)
			tap_eq_int(caps[i].p.roce.ackreq, i == n - 1,
				   "AckReq on the last only (packet %d of %d)", i + 1, n);
	}
	tap_prefix_end();
}

/* lh_config's re-send guard (ms), the rest as it is */
static void set_resend_guard(uint32_t ms)
{
	int fd = lh_harness_map_fd(h, "lh_config");
	struct lh_config cfg;
	uint32_t zero = 0;

	if (!bpf_map_lookup_elem(fd, &zero, &cfg)) {
		cfg.resend_guard_ms = ms;
		bpf_map_update_elem(fd, &zero, &cfg, 0);
	}
}

/*
 * The XDP output is the input frame (the Depot-NACK, len bytes) behind
 * lh_resend_meta naming a copy of psn: for lh_wan_in to send (BPF_PROG_TEST_RUN
 * returns the metadata in front of the frame)
 */
static void resend_check(const struct run *r, const uint8_t *in, size_t len, uint32_t psn)
{
	struct lh_resend_meta m = {0};

	tap_eq_hex(r->verdict, XDP_PASS_, "verdict");
	tap_eq_u64(r->out_len, len + sizeof(m), "output length (metadata and frame)");
	if (r->out_len >= sizeof(m))
		memcpy(&m, r->out, sizeof(m));
	tap_eq_hex(m.magic, LH_META_RESEND, "metadata magic");
	tap_eq_u64(m.psn, psn, "metadata PSN");
	tap_true(m.slot != LH_NO_SLOT, "metadata names a copy (slot %u)", m.slot);
	tap_eq_mem(r->out + sizeof(m), in, len, "the frame behind the metadata");
}

/* ---- Depot ---- */

/* The QP of fl took a packet just now (last_rx_ns), as for the programs' idle test */
static void qp_touch(struct lh_harness *hh, const struct dp_flow *fl)
{
	struct timespec ts;
	struct lh_qp qp;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (dp_qp_get(hh, fl, &qp)) {
		qp.last_rx_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		dp_qp_put(hh, fl, &qp);
	}
}

static void set_guard(uint64_t wide_until, uint64_t block_until);
static uint64_t guard_wide_until(void);

static void depot_basic(const struct dp_flow *fl, uint32_t base, const char *name)
{
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	size_t len;
	int n;
	int64_t c0, c1, c2;

	len = dp_data_frame(fl, base, in);
	c0 = ctr("depot_new_qp");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: first data packet from the WAN: QP learned, delivered unchanged", name);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_new_qp"), c0 + 1, "depot_new_qp");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_DEPOT, LH_QPF_DEPOT, "flag DEPOT set");
	tap_eq_int(qp.d.deliv, ((base + 1) & ROCE_PSN_MASK), "d.deliv");
	tap_prefix_end();

	tap_true(dp_pair(h, fl), "%s: paired by the agent (requester QPN, ACK index)", name);

	len = dp_data_frame(fl, base + 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: in order: delivered, backed up", name);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, ((base + 2) & ROCE_PSN_MASK), "d.deliv");
	tap_prefix_end();

	/* base+2 and base+3 lost on the WAN */
	len = dp_data_frame(fl, base + 4, in);
	c0 = ctr("depot_nack");
	c1 = ctr("depot_held");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: a gap: the packet is held and becomes a Depot-NACK [PSN %u, 2 PSNs] (valid "
		   "NAK, ICRC, checksums)",
		   name, (base + 2) & ROCE_PSN_MASK);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_str(lh_stat_name(r.p.result), lh_stat_name(LH_STAT_ROCE), "parse result");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x60, "syndrome");
	tap_eq_int(r.p.roce.psn, ((base + 2) & ROCE_PSN_MASK), "PSN");
	tap_eq_hex(r.p.roce.dqpn, DP_QP_S, "dest QP");
	tap_eq_hex(r.p.roce.byte4, (LH_DNACK_MARK | 1), "BTH byte 4");
	tap_eq_mem(&r.p.src, &fl->b, 16, "source address");
	tap_eq_mem(&r.p.dst, &fl->a, 16, "destination address");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_eq_int(ctr("depot_nack"), c0 + 1, "depot_nack");
	tap_eq_int(ctr("depot_held"), c1 + 1, "depot_held");
	tap_prefix_end();
	if (fl->family == AF_INET)
		tap_eq_hex(lh_inet_csum(r.out + r.p.l3_off, 20, 0), 0,
			   "%s: a gap: the Depot-NACK's IPv4 header checksum", name);
	else
		tap_eq_int(r.p.udp_len, 28, "%s: a gap: the Depot-NACK's UDP length", name);

	len = dp_data_frame(fl, base + 5, in);
	c0 = ctr("depot_nack");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: next out-of-order packet: held, no second NACK for the same gap", name);
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("depot_nack"), c0, "depot_nack");
	tap_prefix_end();

	len = dp_data_frame(fl, base + 4, in);
	c0 = ctr("depot_dup_held");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: retransmission of a held PSN: dropped", name);
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("depot_dup_held"), c0 + 1, "depot_dup_held");
	tap_prefix_end();

	len = dp_data_frame(fl, base + 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: first missing PSN arrives: delivered, nothing to release yet (next still "
		   "missing)",
		   name);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, 0, "flag RELEASING clear");
	tap_eq_int(qp.d.deliv, ((base + 3) & ROCE_PSN_MASK), "d.deliv");
	tap_prefix_end();

	len = dp_data_frame(fl, base + 3, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: the gap filler: delivered, the QP marked for release after it", name);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.release_after, ((base + 3) & ROCE_PSN_MASK), "d.release_after");
	tap_prefix_end();

	/* the filler leaves the DC interface: the held run follows it, in order */
	dp_route_frame(in, len, 61); /* routed: new MACs and TTL - 1, as the kernel forwards it */
	captured();
	c0 = ctr("depot_released");
	tc("lh_dc_out", in, len, &r);
	n = captured();
	tap_prefix("%s: DC egress: filler then held PSNs %u, %u in order, intact, with the routed "
		   "MACs and TTL",
		   name, (base + 4) & ROCE_PSN_MASK, (base + 5) & ROCE_PSN_MASK);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, 3, "packets captured");
	tap_eq_int(ctr("depot_released"), c0 + 2, "depot_released");
	tap_prefix_end();
	caps_check(n, base + 3, 61, CAP_MACS, "%s: DC egress: filler then held PSNs", name);
	tap_prefix("%s: after the run: ePSN past it, release done", name);
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, 0, "flag RELEASING clear");
	tap_eq_int(qp.d.deliv, ((base + 6) & ROCE_PSN_MASK), "d.deliv");
	tap_prefix_end();

	/* the receiving NIC lost base+3 inside the DC: the Depot answers from backup */
	len = dp_ack_frame(fl, base + 3, 0x60, 0, 1, in);
	c0 = ctr("depot_nak_local");
	tc("lh_dc_in", in, len, &r);
	n = captured();
	tap_prefix("%s: NIC NAK for PSN %u: replayed from the backup pool toward the NIC, NAK "
		   "absorbed",
		   name, (base + 3) & ROCE_PSN_MASK);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, 3, "packets captured");
	tap_eq_int(ctr("depot_nak_local"), c0 + 1, "depot_nak_local");
	tap_prefix_end();
	caps_check(n, base + 3, 61, CAP_MACS, "%s: NIC NAK for PSN %u: replayed", name,
		   (base + 3) & ROCE_PSN_MASK);

	c0 = ctr("depot_backup_freed");
	len = dp_ack_frame(fl, base + 5, 0x1f, 0, 3, in);
	tc("lh_dc_in", in, len, &r);
	tap_prefix("%s: ACK of PSN %u: all 6 backup copies freed, MSN learned", name,
		   (base + 5) & ROCE_PSN_MASK);
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("depot_backup_freed"), c0 + 6, "depot_backup_freed");
	tap_eq_int(dp_free_slots(h), sizes.pool, "free slots");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_int(qp.msn, 3, "msn");
	tap_prefix_end();

	c0 = ctr("depot_backup_freed");
	c1 = ctr("depot_ack_ahead");
	c2 = ctr("depot_lost_track");
	len = dp_ack_frame(fl, base + 9, 0x1f, 0, 3, in);
	tc("lh_dc_in", in, len, &r);
	tap_prefix("%s: ACK of PSN %u, past what the Depot delivered: passed, counted, the ACK "
		   "point stays",
		   name, (base + 9) & ROCE_PSN_MASK);
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("depot_ack_ahead"), c1 + 1, "depot_ack_ahead");
	tap_eq_int(ctr("depot_backup_freed"), c0, "depot_backup_freed");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_int(qp.d.acked, ((base + 6) & ROCE_PSN_MASK), "d.acked");
	tap_prefix_end();
	tap_prefix("%s: ... the NIC has PSNs that went past the Depot: the QP passes from here "
		   "(stale) until the agent forgets it",
		   name);
	tap_eq_int(ctr("depot_lost_track"), c2 + 1, "depot_lost_track");
	tap_eq_hex(qp.flags & LH_QPF_STALE, LH_QPF_STALE, "flag STALE set");
	tap_prefix_end();
	/* the agent would forget it; put back as it was, the QP goes on below */
	qp.flags &= ~LH_QPF_STALE;
	dp_qp_put(h, fl, &qp);
	tap_true(guard_wide_until() > lh_now_ns(),
		 "%s: ... and QPs learned for a while are wide (it, learned anew, among them)",
		 name);
	set_guard(0, 0);

	len = dp_ack_frame(fl, base + 4, 0x60, 0, 3, in);
	c0 = ctr("depot_nak_forwarded");
	c1 = ctr("depot_nic_back");
	tc("lh_dc_in", in, len, &r);
	tap_prefix("%s: NAK the backup pool cannot answer: forwarded unchanged", name);
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("depot_nak_forwarded"), c0 + 1, "depot_nak_forwarded");
	tap_prefix_end();
	tap_prefix("%s: ... it names a PSN before the NIC's ACK point (a go-back-0 NIC dropped its "
		   "message): the Depot moves back there",
		   name);
	tap_eq_int(ctr("depot_nic_back"), c1 + 1, "depot_nic_back");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, ((base + 4) & ROCE_PSN_MASK), "d.deliv");
	tap_eq_int(qp.d.high, qp.d.deliv, "d.high");
	tap_eq_int(qp.d.acked, qp.d.deliv, "d.acked");
	tap_eq_hex(qp.flags & LH_QPF_D_BACK, LH_QPF_D_BACK, "flag D_BACK set");
	tap_eq_int(qp.d.back_end, ((base + 6) & ROCE_PSN_MASK), "d.back_end");
	tap_prefix_end();

	qp_touch(h, fl); /* not idle: far ahead after 100 ms idle is a new connection */
	len = dp_data_frame(fl, base + 4 + LH_RING_SIZE + 10, in);
	c0 = ctr("depot_back_drop");
	c1 = ctr("depot_window");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: until it is where it was, what comes past its ring is dropped (the NIC "
		   "would drop it, the sender resends it)",
		   name);
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("depot_back_drop"), c0 + 1, "depot_back_drop");
	tap_eq_int(ctr("depot_window"), c1, "depot_window");
	tap_prefix_end();

	len = dp_data_frame(fl, base + 4, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_data_frame(fl, base + 5, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix(
		"%s: the resend delivered in order up to where it was: the Depot is itself again",
		name);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, fl, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, ((base + 6) & ROCE_PSN_MASK), "d.deliv");
	tap_eq_hex(qp.flags & LH_QPF_D_BACK, 0, "flag D_BACK clear");
	tap_prefix_end();

	qp_touch(h, fl);
	len = dp_data_frame(fl, base + 6 + LH_RING_SIZE + 10, in);
	c1 = ctr("depot_window");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("%s: ... and past its ring passes again, counted", name);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("depot_window"), c1 + 1, "depot_window");
	tap_prefix_end();

	len = dp_ack_frame(fl, base + 5, 0x1f, 0, 4, in);
	tc("lh_dc_in", in, len, &r);
	tap_eq_int(dp_free_slots(h), sizes.pool, "%s: the resend's backups freed by its ACK", name);
}

/*
 * The receiving NIC goes back (a go-back-0 NIC dropped its message) while
 * a release run longer than a burst is being emitted: emptying the ring then
 * could free a slot the run is about to send. The Depot notes it and
 * follows the NIC when the run ends (the agent's kick sends the rest).
 */
static void forget(const struct dp_flow *fl, uint32_t dqpn, uint32_t role);

static void depot_back_during_release(void)
{
	const uint32_t b = 30000, held = LH_BURST + 4; /* b + 10 lost, held behind it */
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	uint32_t free0 = dp_free_slots(h), p;
	int64_t c0, c1, c2;
	size_t len;
	int n;

	fl.b.v4.s_addr = htonl(0x0a00090a);
	for (p = b; p < b + 10; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_wan_xdp", in, len, &r);
		if (p == b)
			dp_pair(h, &fl);
	}
	len = dp_ack_frame(&fl, b + 9, 0x1f, 0, 1, in);
	tc("lh_dc_in", in, len, &r);
	for (p = b + 11; p < b + 11 + held; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_wan_xdp", in, len, &r);
	}
	len = dp_data_frame(&fl, b + 10, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_route_frame(in, len, 61);
	captured();
	tc("lh_dc_out", in, len, &r);
	n = captured();
	tap_prefix("back in a release: the NIC ACKed PSN %u; %u held behind PSN %u, a burst of "
		   "them released",
		   b + 9, held, b + 10);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, 1 + LH_BURST, "packets captured");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.acked, b + 10, "d.acked");
	tap_eq_int(qp.d.deliv, b + 11 + LH_BURST, "d.deliv");
	tap_prefix_end();

	/* its backup freed by that ACK: the NAK of b + 3 goes on to the sender */
	len = dp_ack_frame(&fl, b + 3, 0x60, 0, 2, in);
	c0 = ctr("depot_nak_forwarded");
	c1 = ctr("depot_nic_back");
	c2 = ctr("depot_nic_back_due");
	tc("lh_dc_in", in, len, &r);
	tap_prefix("back in a release: the NIC NAKs PSN %u mid-run: forwarded, the Depot notes it "
		   "and frees nothing under the run",
		   b + 3);
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("depot_nak_forwarded"), c0 + 1, "depot_nak_forwarded");
	tap_eq_int(ctr("depot_nic_back"), c1, "depot_nic_back");
	tap_eq_int(ctr("depot_nic_back_due"), c2 + 1, "depot_nic_back_due");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_hex(qp.flags & LH_QPF_D_BACK_DUE, LH_QPF_D_BACK_DUE, "flag D_BACK_DUE set");
	tap_eq_int(qp.d.back_psn, b + 3, "d.back_psn");
	tap_eq_int(qp.d.deliv, b + 11 + LH_BURST, "d.deliv");
	tap_eq_int(captured(), 0, "packets captured");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 10, in);
	dp_route_frame(in, len, 61);
	tc("lh_dc_kick", in, len, &r);
	n = captured();
	tap_prefix("back in a release: the kick sends the run's other %u, then the Depot moves "
		   "back to PSN %u and empties its ring",
		   held - LH_BURST, b + 3);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, (int)(held - LH_BURST), "packets captured");
	tap_eq_int(ctr("depot_nic_back"), c1 + 1, "depot_nic_back");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & (LH_QPF_RELEASING | LH_QPF_D_BACK_DUE), 0,
		   "flag RELEASING|D_BACK_DUE clear");
	tap_eq_hex(qp.flags & LH_QPF_D_BACK, LH_QPF_D_BACK, "flag D_BACK set");
	tap_eq_int(qp.d.deliv, b + 3, "d.deliv");
	tap_eq_int(qp.d.high, b + 3, "d.high");
	tap_eq_int(qp.d.acked, b + 3, "d.acked");
	tap_eq_int(qp.d.back_end, b + 11 + held, "d.back_end");
	tap_eq_int(dp_free_slots(h), free0, "free slots");
	tap_prefix_end();
	forget(&fl, DP_QP_R, LH_QPF_DEPOT); /* its ring back for the tests after */
}

/*
 * In order while a run is released, onto a position an unACKed backup of a
 * ring before still holds (a window larger than the ring): it cannot be held
 * behind the run; it is delivered with no copy and the Depot's ePSN moves
 * past it, and the run goes on to what is held after it. Passed as busy with
 * the ePSN left before it, it would leave the Depot behind the NIC's next ACK.
 */
static void depot_busy_during_release(void)
{
	const uint32_t b = 40000, gap2 = b + 2 + LH_BURST;
	struct dp_flow fl = f4;
	static struct lh_ring ring;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	uint32_t free0 = dp_free_slots(h), p, slot;
	int rfd = lh_harness_map_fd(h, "lh_ring");
	int64_t c0, c1;
	size_t len;
	int n;
	bool ok;

	fl.b.v4.s_addr = htonl(0x0a00090b);
	len = dp_data_frame(&fl, b, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_pair(h, &fl);
	/* b + 1 lost, a burst held, gap2 lost, gap2 + 1 held */
	for (p = b + 2; p <= gap2 + 1; p++) {
		if (p == gap2)
			continue;
		len = dp_data_frame(&fl, p, in);
		xdp("lh_wan_xdp", in, len, &r);
	}
	/* gap2's position: the backup of the PSN a ring before, not yet ACKed */
	ok = dp_qp_get(h, &fl, &qp) &&
	     !bpf_map_lookup_and_delete_elem(lh_harness_map_fd(h, "lh_pool_free"), NULL, &slot) &&
	     !bpf_map_lookup_elem(rfd, &qp.ring, &ring);
	if (ok) {
		ring.ent[gap2 & LH_RING_MASK].slot = slot;
		ring.ent[gap2 & LH_RING_MASK].tag = LH_TAG(LH_SLOT_BACKUP, gap2 - LH_RING_SIZE);
		ok = !bpf_map_update_elem(rfd, &qp.ring, &ring, BPF_ANY);
	}
	len = dp_data_frame(&fl, b + 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_route_frame(in, len, 61);
	captured();
	tc("lh_dc_out", in, len, &r);
	n = captured();
	tap_prefix("busy in a release: a burst released up to the next gap, PSN %u, whose position "
		   "a backup of a ring before holds",
		   gap2);
	tap_true(ok, "a backup of a ring before put at its position");
	tap_eq_int(n, 1 + LH_BURST, "packets captured");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.deliv, gap2, "d.deliv");
	tap_prefix_end();

	c0 = ctr("depot_window");
	c1 = ctr("depot_ring_busy");
	len = dp_data_frame(&fl, gap2, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("busy in a release: PSN %u comes in order mid-run: delivered with no copy, the "
		   "Depot's ePSN past it",
		   gap2);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_int(ctr("depot_window"), c0 + 1, "depot_window");
	tap_eq_int(ctr("depot_ring_busy"), c1, "depot_ring_busy");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.deliv, gap2 + 1, "d.deliv");
	tap_eq_int(qp.d.unsafe_end, gap2 + 1, "d.unsafe_end");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 1, in);
	dp_route_frame(in, len, 61);
	tc("lh_dc_kick", in, len, &r);
	n = captured();
	tap_prefix("busy in a release: the agent's kick goes on with PSN %u, held after it, and "
		   "ends the run",
		   gap2 + 1);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, 1, "packets captured");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, 0, "flag RELEASING clear");
	tap_eq_int(qp.d.deliv, gap2 + 2, "d.deliv");
	tap_prefix_end();
	caps_check(n, gap2 + 1, 61, 0, "busy in a release: the agent's kick sends PSN %u",
		   gap2 + 1);
	forget(&fl, DP_QP_R, LH_QPF_DEPOT);
	tap_eq_int(dp_free_slots(h), free0,
		   "busy in a release: forgotten, every slot back in the pool");
}

/* The first ACK of a QP pairs it on the spot (no agent): the next gap gets its Depot-NACK */
static void pairing_in_bpf(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp_key k;
	uint32_t peer = 0;
	size_t len;
	int64_t c0;

	fl.b.v4.s_addr = htonl(0x0a000905);
	len = dp_data_frame(&fl, 3000, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_data_frame(&fl, 3001, in);
	xdp("lh_wan_xdp", in, len, &r);
	c0 = ctr("ack_unpaired");
	len = dp_ack_frame(&fl, 3001, 0x1f, 0, 1, in);
	tc("lh_dc_in", in, len, &r);
	dp_qp_key(&fl, &k);
	tap_prefix("pairing: the first ACK of a lone QP between two hosts pairs it in BPF");
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("ack_unpaired"), c0, "ack_unpaired");
	tap_true(!bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_pair"), &k, &peer),
		 "lh_pair entry read");
	tap_eq_hex(peer, DP_QP_S, "requester QPN in lh_pair");
	tap_prefix_end();
	len = dp_data_frame(&fl, 3003, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("pairing: the next gap gets its Depot-NACK at once");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_hex(r.p.roce.dqpn, DP_QP_S, "dest QP");
	tap_eq_int(r.p.roce.psn, 3002, "PSN");
	tap_prefix_end();
}

/*
 * Before the first ACK names the requester's QPN: a gap is held all the same
 * (no NACK yet), each delivery asks the NIC for an ACK, and the ACK pairs.
 */
static void depot_unpaired(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	struct lh_pkt pk;
	struct lh_qp_key k;
	uint32_t peer = 0;
	size_t len;
	int64_t c0, c1, c2;

	fl.b.v4.s_addr = htonl(0x0a000906);
	dp_qp_key(&fl, &k);
	len = dp_data_frame(&fl, 4000, in);
	xdp("lh_wan_xdp", in, len, &r);
	c0 = ctr("depot_unpaired");
	c1 = ctr("depot_held");
	c2 = ctr("depot_nack");
	len = dp_data_frame(&fl, 4002, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix(
		"unpaired: a gap before the first ACK: held (the NIC never sees it), no NACK yet");
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("depot_unpaired"), c0 + 1, "depot_unpaired");
	tap_eq_int(ctr("depot_held"), c1 + 1, "depot_held");
	tap_eq_int(ctr("depot_nack"), c2, "depot_nack");
	tap_prefix_end();

	/* the delivered packet on its way into the DC: AckReq set, ICRC right */
	len = dp_data_frame(&fl, 4000, in);
	dp_route_frame(in, len, 63);
	c0 = ctr("depot_ackreq_pair");
	tc("lh_dc_out", in, len, &r);
	tap_prefix("unpaired: a delivery into the DC asks the NIC for an ACK (AckReq, ICRC "
		   "recomputed)");
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_str(lh_stat_name(lh_pkt_parse(r.out, r.out_len, true, &pk)),
		   lh_stat_name(LH_STAT_ROCE), "output parse result");
	tap_true(pk.roce.ackreq, "AckReq set");
	tap_eq_int(pk.roce.psn, 4000, "PSN");
	tap_true(lh_pkt_icrc_ok(r.out, &pk), "ICRC valid");
	tap_eq_mem(r.out + pk.payload_off, in + pk.payload_off, DP_PAYLOAD, "payload");
	tap_eq_int(ctr("depot_ackreq_pair"), c0 + 1, "depot_ackreq_pair");
	tap_prefix_end();

	/* the receiving NIC NAKs before its first ACK: nothing pairs, the NAK goes on */
	len = dp_ack_frame(&fl, 4000, 0x60, 0, 0, in);
	c0 = ctr("depot_nak_unpaired");
	c1 = ctr("depot_nak_local");
	tc("lh_dc_in", in, len, &r);
	tap_prefix(
		"unpaired: a NAK before the first ACK pairs nothing and passes unchanged, counted");
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_nak_unpaired"), c0 + 1, "depot_nak_unpaired");
	tap_eq_int(ctr("depot_nak_local"), c1, "depot_nak_local");
	tap_true(bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_pair"), &k, &peer),
		 "no lh_pair entry");
	tap_prefix_end();

	len = dp_ack_frame(&fl, 4000, 0x1f, 0, 1, in);
	tc("lh_dc_in", in, len, &r);
	len = dp_data_frame(&fl, 4001, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_qp_key(&fl, &k);
	tap_prefix("unpaired: the NIC's ACK pairs the QP; the gap filler releases what was held");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_true(!bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_pair"), &k, &peer),
		 "lh_pair entry read");
	tap_eq_hex(peer, DP_QP_S, "requester QPN in lh_pair");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.release_after, 4001, "d.release_after");
	tap_prefix_end();

	len = dp_data_frame(&fl, 4003, in);
	dp_route_frame(in, len, 63);
	c0 = ctr("depot_ackreq_pair");
	tc("lh_dc_out", in, len, &r);
	tap_prefix("unpaired: once paired, deliveries go into the DC unchanged");
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_str(lh_stat_name(lh_pkt_parse(r.out, r.out_len, true, &pk)),
		   lh_stat_name(LH_STAT_ROCE), "output parse result");
	tap_true(!pk.roce.ackreq, "AckReq clear");
	tap_eq_int(ctr("depot_ackreq_pair"), c0, "depot_ackreq_pair");
	tap_prefix_end();
}

/*
 * Runs longer than a burst (LH_BURST). The filler on the DC egress sends a
 * burst of the held run and leaves the QP releasing; the agent's kick
 * (lh_dc_kick with a frame of the QP) sends the rest. A NIC NAK with more
 * backups behind it than a burst: lh_dc_in replays a burst and asks the
 * agent for the rest (depot_release_more), whose kick with a NAK from there
 * on replays them. Each batch ends with AckReq; order and bytes are checked.
 */
static void depot_long_runs(void)
{
	const uint32_t b = 20000, held = LH_BURST + 6; /* b + 1 lost, b + 2 .. b + 1 + held held */
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	uint32_t free0 = dp_free_slots(h), p;
	int64_t c0, more0;
	size_t len;
	int n;

	fl.b.v4.s_addr = htonl(0x0a000907);
	len = dp_data_frame(&fl, b, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_pair(h, &fl);
	for (p = b + 2; p < b + 2 + held; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_wan_xdp", in, len, &r);
	}
	len = dp_data_frame(&fl, b + 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("long run: %u packets held behind a gap; the filler delivered, the QP releasing",
		   held);
	tap_ge_int(free0, held + 2, "free slots before");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.release_after, b + 1, "d.release_after");
	tap_eq_int(dp_free_slots(h), free0 - held - 2, "free slots");
	tap_prefix_end();

	dp_route_frame(in, len, 61);
	captured();
	c0 = ctr("depot_released");
	more0 = ctr("depot_release_more");
	tc("lh_dc_out", in, len, &r);
	n = captured();
	tap_prefix("long run: DC egress sends the filler and a burst of %d in order, AckReq on the "
		   "last; the rest waits for the agent",
		   LH_BURST);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, 1 + LH_BURST, "packets captured");
	tap_eq_int(ctr("depot_released"), c0 + LH_BURST, "depot_released");
	tap_eq_int(ctr("depot_release_more"), more0 + 1, "depot_release_more");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, LH_QPF_RELEASING, "flag RELEASING set");
	tap_eq_int(qp.d.deliv, b + 2 + LH_BURST, "d.deliv");
	tap_prefix_end();
	caps_check(n, b + 1, 61, CAP_ACKREQ_AFTER_FIRST,
		   "long run: DC egress sends the filler and a burst");

	/* the agent's kick: a frame of the QP toward the NIC */
	len = dp_data_frame(&fl, b + 1, in);
	dp_route_frame(in, len, 61);
	c0 = ctr("depot_released");
	tc("lh_dc_kick", in, len, &r);
	n = captured();
	tap_prefix("long run: the agent's kick (lh_dc_kick) sends the other %u in order and ends "
		   "the run",
		   held - LH_BURST);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, (int)(held - LH_BURST), "packets captured");
	tap_eq_int(ctr("depot_released"), c0 + held - LH_BURST, "depot_released");
	tap_eq_int(ctr("depot_release_more"), more0 + 1, "depot_release_more");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_RELEASING, 0, "flag RELEASING clear");
	tap_eq_int(qp.d.deliv, b + 2 + held, "d.deliv");
	tap_prefix_end();
	caps_check(n, b + 2 + LH_BURST, 61, CAP_MACS | CAP_ACKREQ,
		   "long run: the agent's kick sends the other %u", held - LH_BURST);

	/* the receiving NIC lost all after b: its NAK is answered a burst at a time */
	len = dp_ack_frame(&fl, b + 1, 0x60, 0, 1, in);
	c0 = ctr("depot_replayed");
	tc("lh_dc_in", in, len, &r);
	n = captured();
	tap_prefix("long run: NIC NAK for PSN %u: a burst of %d replayed in order, the agent asked "
		   "for the rest",
		   b + 1, LH_BURST);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, LH_BURST, "packets captured");
	tap_eq_int(ctr("depot_replayed"), c0 + LH_BURST, "depot_replayed");
	tap_eq_int(ctr("depot_release_more"), more0 + 2, "depot_release_more");
	tap_prefix_end();
	caps_check(n, b + 1, 61, CAP_MACS, "long run: NIC NAK for PSN %u: a burst replayed", b + 1);

	len = dp_ack_frame(&fl, b + 1 + LH_BURST, 0x60, 0, 1, in);
	c0 = ctr("depot_replayed");
	tc("lh_dc_kick", in, len, &r);
	n = captured();
	tap_prefix("long run: the kick with a NAK from PSN %u replays the other %u, up to ePSN",
		   b + 1 + LH_BURST, held + 1 - LH_BURST);
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(n, (int)(held + 1 - LH_BURST), "packets captured");
	tap_eq_int(ctr("depot_replayed"), c0 + held + 1 - LH_BURST, "depot_replayed");
	tap_eq_int(ctr("depot_release_more"), more0 + 2, "depot_release_more");
	tap_prefix_end();
	caps_check(n, b + 1 + LH_BURST, 61, CAP_MACS,
		   "long run: the kick with a NAK from PSN %u replays", b + 1 + LH_BURST);

	len = dp_ack_frame(&fl, b + 1 + held, 0x1f, 0, 2, in);
	c0 = ctr("depot_backup_freed");
	tc("lh_dc_in", in, len, &r);
	tap_prefix("long run: the NIC's ACK of PSN %u frees all %u backups", b + 1 + held,
		   held + 2);
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("depot_backup_freed"), c0 + held + 2, "depot_backup_freed");
	tap_eq_int(dp_free_slots(h), free0, "free slots");
	tap_prefix_end();
}

/*
 * A window larger than the ring: an in-order packet whose ring position
 * still holds the backup of the PSN a ring before (the receiving NIC has not
 * ACKed it) is delivered with no copy and counted; the Depot stays in step,
 * so the next in-order packet is delivered too, not held as a gap.
 */
static void depot_window(void)
{
	const uint32_t b = 30000;
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	int64_t w0, busy0, held0;
	uint64_t before;
	size_t len;
	bool ok;

	fl.b.v4.s_addr = htonl(0x0a000908);
	len = dp_data_frame(&fl, b, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_pair(h, &fl);
	/* b's backup stays (no ACK); the next 255 went by with no copy (as with a full pool) */
	ok = dp_qp_get(h, &fl, &qp);
	qp.d.deliv = qp.d.high = b + LH_RING_SIZE;
	ok = ok && dp_qp_put(h, &fl, &qp);
	w0 = ctr("depot_window");
	busy0 = ctr("depot_ring_busy");
	held0 = ctr("depot_held");
	len = dp_data_frame(&fl, b + LH_RING_SIZE, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("window over the ring: in order onto an unACKed backup's position");
	tap_true(ok, "the QP a ring on (setup)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_prefix_end();
	len = dp_data_frame(&fl, b + LH_RING_SIZE + 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("window over the ring: in order onto an unACKed backup's position: delivered "
		   "with no copy (counted), the next in order delivered, nothing held");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_window"), w0 + 1, "depot_window");
	tap_eq_int(ctr("depot_ring_busy"), busy0, "depot_ring_busy");
	tap_eq_int(ctr("depot_held"), held0, "depot_held");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, b + LH_RING_SIZE + 2, "d.deliv");
	tap_eq_int(qp.d.unsafe_end, b + LH_RING_SIZE + 1, "d.unsafe_end");
	tap_prefix_end();
	/* beyond the ring from d.deliv (a gap with the window still sending): passed, alive */
	qp.last_rx_ns -= 50000000ULL;
	before = qp.last_rx_ns;
	ok = dp_qp_put(h, &fl, &qp);
	w0 = ctr("depot_window");
	len = dp_data_frame(&fl, b + 3 * LH_RING_SIZE, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("window over the ring: a PSN 2 rings ahead passes unchanged, counted; the QP "
		   "stays alive");
	tap_true(ok, "the QP aged 50 ms (setup)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_int(ctr("depot_window"), w0 + 1, "depot_window");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, b + LH_RING_SIZE + 2, "d.deliv");
	tap_ge_int((int64_t)qp.last_rx_ns, (int64_t)before + 1, "last_rx_ns moved on");
	tap_eq_hex(qp.flags & LH_QPF_STALE, 0, "flag STALE clear");
	tap_prefix_end();
}

static void depot_pool_full(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t free0 = dp_free_slots(h);
	int i;

	fl.b.v4.s_addr = htonl(0x0a000903); /* a new QP */
	len = dp_data_frame(&fl, 10, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_pair(h, &fl);
	/* the pool holds POOL slots: fill them, in order, without ACKs */
	for (i = 11; i < 11 + (int)free0 - 1; i++) {
		len = dp_data_frame(&fl, (uint32_t)i, in);
		xdp("lh_wan_xdp", in, len, &r);
	}
	c0 = ctr("pool_empty");
	len = dp_data_frame(&fl, (uint32_t)i + 1, in); /* out of order, no slot left */
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("pool full: an out-of-order packet passes unchanged (the NIC's go-back-N "
		   "recovers), counted");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("pool_empty"), c0 + 1, "pool_empty");
	tap_eq_int(dp_free_slots(h), 0, "free slots");
	tap_prefix_end();
	len = dp_data_frame(&fl, (uint32_t)i, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("pool full: an in-order packet is delivered without backup, counted");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_ge_int(ctr("depot_no_backup"), 1, "depot_no_backup");
	tap_prefix_end();
	/* the NIC acks everything: the pool empties again */
	len = dp_ack_frame(&fl, (uint32_t)i, 0x1f, 1, 0, in);
	tc("lh_dc_in", in, len, &r);
	tap_eq_int(dp_free_slots(h), free0, "the NIC's ACK returns every slot to the pool");
}

/* The Depot-NACK's PSN and mark range (include/lh_maps.h), agent and programs alike */
static void depot_nack_rule(void)
{
	struct lh_qp qp = { .d.deliv = 100, .d.acked = 90, .d.unsafe_end = 80 };

	tap_prefix("Depot-NACK: PSN = ePSN, range = the first hole (at least 1)");
	tap_eq_int(lh_depot_nack_psn(&qp), 100, "PSN");
	tap_eq_int(lh_depot_nack_len(&qp, 3), 3, "range for %d held", 3);
	tap_eq_int(lh_depot_nack_len(&qp, 0), 1, "range for %d held", 0);
	tap_prefix_end();
	qp.d.unsafe_end = 95; /* 90..94 went to the NIC without a copy, not yet ACKed */
	tap_prefix("Depot-NACK: PSN = the NIC's ACK point when PSNs without a copy are "
		   "unacknowledged; the range counts from there");
	tap_eq_int(lh_depot_nack_psn(&qp), 90, "PSN");
	tap_eq_int(lh_depot_nack_len(&qp, 3), 13, "range for %d held", 3);
	tap_eq_int(lh_depot_nack_len(&qp, 30), LH_DNACK_MAX_RANGE, "range for %d held", 30);
	tap_prefix_end();
	qp.d.deliv = 5;
	qp.d.acked = 0xfffffb;
	qp.d.unsafe_end = 2;
	tap_prefix("Depot-NACK: the same across the PSN wrap");
	tap_eq_int(lh_depot_nack_psn(&qp), 0xfffffb, "PSN");
	tap_eq_int(lh_depot_nack_len(&qp, 2), 12, "range for %d held", 2);
	tap_prefix_end();
}

/* ---- pairing at any scale (qp.h) ---- */

static bool hostpair_of(const struct dp_flow *fl, struct lh_hostpair *hp)
{
	struct lh_hostpair_key hk;
	struct lh_qp_key k;

	dp_qp_key(fl, &k);
	memcpy(hk.saddr, k.saddr, 16);
	memcpy(hk.daddr, k.daddr, 16);
	return !bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_hostpair"), &hk, hp);
}

/* The agent's prune of fl's host pair list (lh_dc_cmd): the QPs it dropped */
static int prune_hostpair(const struct dp_flow *fl)
{
	struct {
		uint8_t eth[14];
		struct lh_cmd c;
	} __attribute__((packed)) cmd = { .eth = { [12] = 0x08 }, .c.op = LH_CMD_HOSTPAIR_PRUNE };
	struct lh_qp_key k;
	struct run r;

	dp_qp_key(fl, &k);
	memcpy(cmd.c.hk.saddr, k.saddr, 16);
	memcpy(cmd.c.hk.daddr, k.daddr, 16);
	tc("lh_dc_cmd", (const uint8_t *)&cmd, sizeof(cmd), &r);
	return (int)r.verdict;
}

/* The requester's QPN lh_pair holds for data QPN dqpn of fl's host pair; 0: none */
static uint32_t paired_with(const struct dp_flow *fl, uint32_t dqpn)
{
	struct lh_qp_key k;
	uint32_t peer = 0;

	dp_qp_key(fl, &k);
	k.dqpn = dqpn;
	if (bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_pair"), &k, &peer))
		return 0;
	return peer;
}

static bool qp_of(const struct dp_flow *fl, uint32_t dqpn, struct lh_qp *qp)
{
	struct lh_qp_key k;

	dp_qp_key(fl, &k);
	k.dqpn = dqpn;
	return !bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_qp"), &k, qp);
}

static void depot_send(const struct dp_flow *fl, uint32_t dqpn, uint32_t psn)
{
	uint8_t in[9216];
	struct run r;
	size_t len;

	dp_data_qpn = dqpn;
	len = dp_data_frame(fl, psn, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_data_qpn = 0;
}

/* The receiving NIC (requester's QPN req) ACKs or NAKs psn */
static void nic_ack(const struct dp_flow *fl, uint32_t req, uint32_t psn, uint8_t syndrome)
{
	uint8_t in[9216];
	struct run r;
	size_t len;

	dp_ack_qpn = req;
	len = dp_ack_frame(fl, psn, syndrome, 0, 1, in);
	tc("lh_dc_in", in, len, &r);
	dp_ack_qpn = 0;
}

static void set_guard(uint64_t wide_until, uint64_t block_until)
{
	struct lh_pair_guard g = { .wide_until_ns = wide_until, .block_until_ns = block_until };
	uint32_t zero = 0;

	bpf_map_update_elem(lh_harness_map_fd(h, "lh_pair_guard"), &zero, &g, BPF_ANY);
}

static uint64_t guard_wide_until(void)
{
	struct lh_pair_guard g = { 0 };
	uint32_t zero = 0;

	bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_pair_guard"), &zero, &g);
	return g.wide_until_ns;
}

/*
 * An ACK pairs the one unpaired QP between the two hosts that forwarded its
 * PSN: QPs with the same start PSN wait until one of them is ahead; a NAK,
 * or an ACK no QP's range holds, pairs nothing; many QPs between the same
 * hosts all pair, each with its own requester.
 */
static void pairing_ranges(void)
{
	struct dp_flow fl = f4, many = f4;
	struct lh_hostpair hp;
	struct lh_qp qp;
	int64_t c0, c1, c2;
	uint32_t q, wrong = 0;

	fl.b.v4.s_addr = htonl(0x0a000a01);
	depot_send(&fl, 0x300, 5000);
	depot_send(&fl, 0x301, 5000);
	depot_send(&fl, 0x300, 5001);
	depot_send(&fl, 0x301, 5001);
	depot_send(&fl, 0x301, 5002);
	tap_prefix("pairing: two new QPs between two hosts are listed");
	tap_true(hostpair_of(&fl, &hp), "host pair list read");
	tap_eq_int(hp.n, 2, "QPs listed");
	tap_prefix_end();

	c0 = ctr("pair_ambiguous");
	c1 = ctr("ack_unpaired");
	c2 = ctr("pair_exact");
	nic_ack(&fl, 0x400, 5001, 0x1f);
	tap_prefix("pairing: an ACK of a PSN two QPs forwarded (same start PSN) pairs neither: "
		   "passed, counted");
	tap_eq_int(ctr("pair_ambiguous"), c0 + 1, "pair_ambiguous");
	tap_eq_int(ctr("ack_unpaired"), c1 + 1, "ack_unpaired");
	tap_eq_int(ctr("pair_exact"), c2, "pair_exact");
	tap_eq_hex(paired_with(&fl, 0x300), 0, "requester QPN of %#x", 0x300);
	tap_eq_hex(paired_with(&fl, 0x301), 0, "requester QPN of %#x", 0x301);
	tap_prefix_end();

	c0 = ctr("paired");
	nic_ack(&fl, 0x401, 5002, 0x1f);
	tap_prefix("pairing: an ACK of a PSN only one of them forwarded pairs that one, which "
		   "leaves the list");
	tap_eq_int(ctr("paired"), c0 + 1, "paired");
	tap_eq_hex(paired_with(&fl, 0x301), 0x401, "requester QPN");
	tap_eq_hex(paired_with(&fl, 0x300), 0, "requester QPN of %#x", 0x300);
	tap_true(qp_of(&fl, 0x301, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_PAIRED, LH_QPF_PAIRED, "flag PAIRED set");
	tap_eq_hex(qp.flags & LH_QPF_LISTED, 0, "flag LISTED clear");
	tap_eq_int(qp.peer_qpn, 0x401, "peer_qpn");
	tap_true(hostpair_of(&fl, &hp), "host pair list read");
	tap_eq_int(hp.n, 1, "QPs listed");
	tap_prefix_end();

	nic_ack(&fl, 0x400, 5001, 0x1f);
	tap_prefix("pairing: the other's ACK pairs it now; the emptied list stays for the next QP "
		   "(no wide mark)");
	tap_eq_hex(paired_with(&fl, 0x300), 0x400, "requester QPN");
	tap_true(hostpair_of(&fl, &hp), "host pair list read");
	tap_eq_int(hp.n, 0, "QPs listed");
	tap_eq_int(hp.dead, 0, "list not dead");
	tap_eq_int(hp.wide, 0, "no wide mark");
	tap_prefix_end();
	tap_prefix("pairing: the agent's prune deletes the emptied list");
	tap_eq_int(prune_hostpair(&fl), 0, "lh_dc_cmd verdict");
	tap_true(!hostpair_of(&fl, &hp), "host pair list deleted");
	tap_prefix_end();

	depot_send(&fl, 0x302, 7000);
	c0 = ctr("paired");
	nic_ack(&fl, 0x402, 7000, 0x60);
	nic_ack(&fl, 0x402, 6999, 0x1f);
	c1 = ctr("paired");
	nic_ack(&fl, 0x402, 7000, 0x1f);
	tap_prefix("pairing: a NAK (its PSN may never have come this way) and an ACK of a PSN not "
		   "forwarded pair nothing");
	tap_eq_int(c1, c0, "paired after the NAK and the ACK of PSN 6999");
	tap_eq_int(ctr("paired"), c0 + 1, "paired");
	tap_eq_hex(paired_with(&fl, 0x302), 0x402, "requester QPN");
	tap_prefix_end();

	/* 100 QPs between the same two hosts: the list is not bounded by a handful */
	many.b.v4.s_addr = htonl(0x0a000a02);
	for (q = 0; q < 100; q++)
		depot_send(&many, 0x1000 + q, (q * 40000 + 123) & ROCE_PSN_MASK);
	for (q = 0; q < 100; q++)
		depot_send(&many, 0x1000 + q, (q * 40000 + 124) & ROCE_PSN_MASK);
	c0 = ctr("paired");
	c1 = ctr("pair_exact");
	/*
	 * Each listed QP knows its place in the list (lh_qp p_idx): the ACK
	 * that pairs it takes it out without a pass. Taking one moves the
	 * list's last QP into the hole, which learns its new place.
	 */
	for (q = 0; q < 100; q += 2)
		nic_ack(&many, 0x5000 + q, (q * 40000 + 124) & ROCE_PSN_MASK, 0x1f);
	c2 = hostpair_of(&many, &hp);
	for (q = 0; c2 && hp.n == 50 && q < hp.n; q++)
		wrong += !qp_of(&many, hp.dqpn[q], &qp) || qp.p_idx != q || (qp.flags & LH_QPF_PAIRED);
	tap_prefix("pairing: 50 of 100 QPs paired, each of the 50 listed knows its place");
	tap_true(c2, "host pair list read");
	tap_eq_int(hp.n, 50, "QPs listed");
	tap_eq_int(wrong, 0, "listed QPs whose place is wrong or that are paired");
	tap_prefix_end();
	wrong = 0;
	for (q = 1; q < 100; q += 2)
		nic_ack(&many, 0x5000 + q, (q * 40000 + 124) & ROCE_PSN_MASK, 0x1f);
	for (q = 0; q < 100; q++)
		wrong += paired_with(&many, 0x1000 + q) != 0x5000 + q;
	tap_prefix("pairing: 100 QPs between the same two hosts, each paired with its own "
		   "requester in BPF");
	tap_eq_int(ctr("paired"), c0 + 100, "paired");
	tap_eq_int(wrong, 0, "QPs paired with another requester");
	tap_true(hostpair_of(&many, &hp), "host pair list read");
	tap_eq_int(hp.n, 0, "QPs listed");
	tap_prefix_end();
	tap_eq_int(ctr("pair_exact"), c1 + 100,
		   "pairing: each by its ACK's exact PSN (lh_pair_psn), no pass over the list "
		   "(%lld of 100)",
		   (long long)(ctr("pair_exact") - c1));

	/* a QP missing from the lists: nothing pairs until the guard runs out */
	depot_send(&fl, 0x303, 9000);
	set_guard(0, lh_now_ns() + 60000000000ull);
	c0 = ctr("pair_blocked");
	nic_ack(&fl, 0x403, 9000, 0x1f);
	c2 = paired_with(&fl, 0x303);
	set_guard(0, 0);
	nic_ack(&fl, 0x403, 9000, 0x1f);
	tap_prefix("pairing: blocked while a QP could not be listed (counted), paired once the "
		   "guard ran out");
	tap_eq_int(ctr("pair_blocked"), c0 + 1, "pair_blocked");
	tap_eq_hex(c2, 0, "requester QPN while blocked");
	tap_eq_hex(paired_with(&fl, 0x303), 0x403, "requester QPN after");
	tap_prefix_end();

	/* a QP learned when the gateway may have missed its start: its ACKs may go back */
	set_guard(lh_now_ns() + 60000000000ull, 0);
	depot_send(&fl, 0x304, 30000);
	set_guard(0, 0);
	c2 = qp_of(&fl, 0x304, &qp);
	nic_ack(&fl, 0x404, 29000, 0x1f);
	tap_prefix("pairing: a QP learned mid-flight (wide) pairs from an ACK of a PSN before its "
		   "first");
	tap_true(c2, "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_WIDE, LH_QPF_WIDE, "flag WIDE set");
	tap_eq_hex(paired_with(&fl, 0x304), 0x404, "requester QPN");
	tap_prefix_end();
}

/* The agent's prune (lh_dc_cmd): a listed QP that is gone leaves the list, which goes */
static void pairing_prune(void)
{
	struct dp_flow fl = f4;
	struct {
		uint8_t eth[14];
		struct lh_cmd c;
	} __attribute__((packed)) cmd = { .eth = { [12] = 0x08 }, .c.op = LH_CMD_HOSTPAIR_PRUNE };
	struct lh_hostpair hp;
	struct lh_qp_key k;
	struct run r;
	bool listed;
	uint32_t n;

	fl.b.v4.s_addr = htonl(0x0a000a03);
	depot_send(&fl, 0x305, 11000);
	listed = hostpair_of(&fl, &hp);
	n = hp.n;
	dp_qp_key(&fl, &k);
	k.dqpn = 0x305;
	bpf_map_delete_elem(lh_harness_map_fd(h, "lh_qp"), &k);
	memcpy(cmd.c.hk.saddr, k.saddr, 16);
	memcpy(cmd.c.hk.daddr, k.daddr, 16);
	tc("lh_dc_cmd", (const uint8_t *)&cmd, sizeof(cmd), &r);
	tap_prefix("pairing: the agent's prune drops a forgotten QP from its list, and the emptied "
		   "list");
	tap_true(listed, "host pair list read before");
	tap_eq_int(n, 1, "QPs listed before");
	tap_eq_hex(r.verdict, 1, "verdict");
	tap_true(!hostpair_of(&fl, &hp), "host pair list deleted");
	tap_prefix_end();
}

/* ---- Sentry ---- */

/* The sending NIC sends b .. b+n-1 in order through the Sentry; paired after the first */
static void sentry_sent(const struct dp_flow *fl, uint32_t b, uint32_t n)
{
	uint8_t in[9216];
	struct run r;
	uint32_t p;
	size_t len;

	for (p = b; p < b + n; p++) {
		len = dp_data_frame(fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
		if (p == b)
			dp_pair(h, fl);
	}
}

/*
 * A QPN reused by a new connection: after LH_QP_STALE_IDLE_NS (100 ms) of
 * quiet, a packet far from where the old QP left off passes unchanged and
 * marks the entry stale (the agent forgets it); a retransmission from the
 * ACK point after as long does not. The entry is aged by hand.
 */
static void qp_stale(const char *prog, bool sentry)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 30000;
	bool ok;

	fl.a.v4.s_addr = htonl(sentry ? 0x0a000a0b : 0x0a000a0c);
	if (sentry) {
		sentry_sent(&fl, b, 10);
	} else {
		len = dp_data_frame(&fl, b, in);
		xdp(prog, in, len, &r);
		dp_pair(h, &fl);
	}
	ok = dp_qp_get(h, &fl, &qp);
	qp.last_rx_ns -= 200000000ULL;
	ok = ok && dp_qp_put(h, &fl, &qp);
	c0 = ctr("qp_stale");
	/* the Sentry's NIC resends from its ACK point after a timeout; the Depot sees a duplicate */
	len = dp_data_frame(&fl, b, in);
	xdp(prog, in, len, &r);
	tap_prefix("%s: quiet 200 ms, then the PSN it left off at: the same connection", prog);
	tap_true(ok, "the QP aged 200 ms (setup)");
	tap_eq_int(ctr("qp_stale"), c0, "qp_stale");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_STALE, 0, "flag STALE clear");
	tap_prefix_end();
	qp.last_rx_ns -= 200000000ULL;
	ok = dp_qp_put(h, &fl, &qp);
	len = dp_data_frame(&fl, b + 1000000, in);
	xdp(prog, in, len, &r);
	tap_prefix("%s: quiet 200 ms, then a PSN a million away: passed unchanged, the entry "
		   "marked stale",
		   prog);
	tap_true(ok, "the QP aged 200 ms (setup)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("qp_stale"), c0 + 1, "qp_stale");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_STALE, LH_QPF_STALE, "flag STALE set");
	tap_prefix_end();
	len = dp_data_frame(&fl, b + 1000001, in);
	xdp(prog, in, len, &r);
	tap_prefix("%s: until the agent forgets it, the new connection's packets pass unchanged",
		   prog);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("qp_stale"), c0 + 1, "qp_stale");
	tap_prefix_end();
}

/*
 * A go-back-0 NIC restarts the whole message after a NAK and counts its
 * window from there: the Sentry answers the replay of PSNs the receiver
 * ACKed with ACKs as the replay goes (sentry_echo_due), instead of
 * dropping them silently until the NIC's timer fires.
 */
/* IPv6: clearing the mark of a forwarded Depot-NACK keeps its UDP checksum right */
static void sentry_v6_forward(void)
{
	struct dp_flow fl = f6;
	uint8_t in[9216], copy[9216];
	struct run r;
	size_t len;
	uint32_t b = 9000;

	inet_pton(AF_INET6, "fd00::77", &fl.a.v6);
	sentry_sent(&fl, b, 4);
	len = dp_ack_frame(&fl, b + 2, 0x60, LH_DNACK_MARK | 1, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	memcpy(copy, r.out, r.out_len);
	if (r.p.result == LH_STAT_ROCE)
		lh_pkt_udp_csum_update(copy, &r.p);
	tap_prefix("Sentry IPv6: a forwarded Depot-NACK loses its mark, ICRC and UDP checksum "
		   "still right");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_str(lh_stat_name(r.p.result), lh_stat_name(LH_STAT_ROCE), "parse result");
	tap_eq_hex(r.p.roce.byte4, 0, "BTH byte 4");
	tap_eq_int(r.p.roce.psn, b + 2, "PSN");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_eq_mem(copy, r.out, r.out_len, "UDP checksum (output equals it recomputed)");
	tap_prefix_end();
}

/* Under the current prefix: the run passed psn as data, not turned into an ACK */
static void passed_as_data(const struct run *r, uint32_t psn)
{
	tap_eq_hex(r->verdict, XDP_PASS_, "verdict");
	tap_eq_int(r->p.roce.psn, psn, "PSN");
	tap_true(r->p.roce.opcode != ROCE_RC_ACKNOWLEDGE, "data, not an ACK (opcode %#x)",
		 r->p.roce.opcode);
}

/* The Sentry's echo gap (bpf/lib/sentry.h LH_ECHO_GAP_US) */
#define ECHO_GAP_US 200

/*
 * The second of two resends of acknowledged PSNs, run right after the first
 * (which was echoed: sentry_ack_echo at echo0): within the echo gap it is
 * dropped and counted under drop_ctr, no second echo. The runs are
 * timed from here, which takes longer than the program's own clock sees, so
 * runs measured further apart than the gap (an emulated guest under TCG
 * takes about 100 us a run) may have been echoed again as well: then either
 * is right, and nothing else is.
 */
static void second_resend_ok(const struct run *r1, const char *drop_ctr, int64_t drop0,
			     int64_t echo0, long us, const char *what)
{
	if (us <= ECHO_GAP_US)
		tap_prefix("%s (runs %ld us apart, within the %d us gap)", what, us, ECHO_GAP_US);
	else
		tap_prefix("%s, or echoed again: the runs took %ld us, past the %d us gap", what,
			   us, ECHO_GAP_US);
	if (us > ECHO_GAP_US && r1->verdict == XDP_PASS_) {
		/* echoed again */
		tap_eq_hex(r1->p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "echoed: opcode");
		tap_eq_int(ctr("sentry_ack_echo"), echo0 + 1, "echoed: sentry_ack_echo");
	} else {
		tap_eq_hex(r1->verdict, XDP_DROP_, "verdict");
		tap_eq_int(ctr(drop_ctr), drop0 + 1, "%s", drop_ctr);
		tap_eq_int(ctr("sentry_ack_echo"), echo0, "sentry_ack_echo");
	}
	tap_prefix_end();
}

/*
 * Outside an episode, a resend of PSNs the NIC was told are acknowledged
 * (a lost ACK, a go-back-0 NIC resending a message after a tail loss)
 * does not cross the WAN: it is answered with the ACK, the rest passes.
 */
static void sentry_acked_resend(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216], in1[9216];
	struct timespec t0, t1;
	struct run r, r1;
	size_t len, len1;
	int64_t c0, c1;
	uint32_t b = 9000;
	char what[160];
	long us;

	fl.a.v4.s_addr = htonl(0x0a000a09);
	sentry_sent(&fl, b, 10);
	len = dp_ack_frame(&fl, b + 4, 0x1f, 0, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	/*
	 * The NIC's timer: it resends from b, b + 1 right after. The two runs
	 * go back to back, the counters read before and after, so that the
	 * second comes well within the echo gap (200 us) even in an emulated
	 * guest (kernel-check under TCG: about 100 us per test run).
	 */
	len = dp_data_frame(&fl, b, in);
	len1 = dp_data_frame(&fl, b + 1, in1);
	c0 = ctr("sentry_ack_echo");
	c1 = ctr("sentry_acked_drop");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	xdp("lh_dc_xdp", in, len, &r);
	xdp("lh_dc_xdp", in1, len1, &r1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
	snprintf(what, sizeof(what),
		 "Sentry, no episode: a resend of an acknowledged PSN becomes the receiver's ACK (PSN %u) toward the NIC",
		 b + 4);
	tap_prefix("%s", what);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_str(lh_stat_name(r.p.result), lh_stat_name(LH_STAT_ROCE), "parse result");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x1f, "syndrome");
	tap_eq_int(r.p.roce.psn, b + 4, "PSN");
	tap_eq_int(r.p.roce.aeth.msn, 2, "MSN");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_prefix_end();
	second_resend_ok(&r1, "sentry_acked_drop", c1, c0 + 1, us,
			 "Sentry, no episode: the next acknowledged one right after is dropped and counted");
	len = dp_data_frame(&fl, b + 5, in);
	c0 = ctr("sentry_retx_pass");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("Sentry, no episode: a resend from the acknowledged point on passes");
	passed_as_data(&r, b + 5);
	tap_eq_int(ctr("sentry_retx_pass"), c0 + 1, "sentry_retx_pass");
	tap_prefix_end();
}

static void sentry_gb0_echo(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216], in1[9216];
	struct timespec t0, t1;
	struct run r, r1;
	size_t len, len1;
	int64_t c0, c1;
	uint32_t b = 7000;
	char what[160];
	long us;

	fl.a.v4.s_addr = htonl(0x0a000a07);
	sentry_sent(&fl, b, 10);
	/* the receiver ACKs up to b+4; then the Depot NACKs b+7 (lost on the WAN) */
	len = dp_ack_frame(&fl, b + 4, 0x1f, 0, 3, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_ack_frame(&fl, b + 7, 0x60, LH_DNACK_MARK, 3, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("gb0: the Depot-NACK goes on to the NIC");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x60, "syndrome");
	tap_eq_int(r.p.roce.psn, b + 7, "PSN");
	tap_prefix_end();

	/*
	 * The NIC restarts the message at b and sends b + 1 right after: the
	 * two runs go back to back, the counters read before and after, so
	 * that the second comes well within the echo gap (200 us) even in an
	 * emulated guest (kernel-check under TCG: about 100 us per test run).
	 */
	len = dp_data_frame(&fl, b, in);
	len1 = dp_data_frame(&fl, b + 1, in1);
	c0 = ctr("sentry_ack_echo");
	c1 = ctr("sentry_sr_drop");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	xdp("lh_dc_xdp", in, len, &r);
	xdp("lh_dc_xdp", in1, len1, &r1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
	snprintf(what, sizeof(what),
		 "gb0: a replay of a PSN acknowledged (the Depot-NACK acks what precedes it) becomes that ACK, PSN %u (ICRC valid)",
		 b + 6);
	tap_prefix("%s", what);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_str(lh_stat_name(r.p.result), lh_stat_name(LH_STAT_ROCE), "parse result");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x1f, "syndrome");
	tap_eq_int(r.p.roce.psn, b + 6, "PSN");
	tap_eq_hex(r.p.roce.dqpn, DP_QP_S, "dest QP");
	tap_eq_int(r.p.roce.aeth.msn, 3, "MSN");
	tap_eq_mem(&r.p.src, &fl.b, 16, "source address");
	tap_eq_mem(&r.p.dst, &fl.a, 16, "destination address");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_prefix_end();
	snprintf(what, sizeof(what), "gb0: the next replay right after is dropped (one echo per %u us)",
		 (unsigned int)ECHO_GAP_US);
	second_resend_ok(&r1, "sentry_sr_drop", c1, c0 + 1, us, what);
	len = dp_data_frame(&fl, b + 7, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("gb0: the missing PSN passes");
	passed_as_data(&r, b + 7);
	tap_prefix_end();
}

/*
 * A replay of acknowledged PSNs is ACKed as it goes, every LH_ECHO_EVERY
 * (32) PSNs whatever the time: each ACK moves the NIC's ACK point and with
 * it its retransmit timer, and opens its window (rxe: 128) for the rest.
 * One ACK of the receiver's point at once would leave a slow NIC, whose
 * replay of thousands of PSNs outlasts its 67 ms timer, restarting the
 * message at each timeout: with 8 go-back-0 QPs at 1/256 loss, a livelock.
 */
static void sentry_echo_every(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 7500;

	fl.a.v4.s_addr = htonl(0x0a000a21);
	sentry_sent(&fl, b, 80);
	len = dp_ack_frame(&fl, b + 70, 0x60, LH_DNACK_MARK, 4, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_data_frame(&fl, b, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("replay of acknowledged PSNs: its first answered with an ACK 31 PSNs ahead (PSN "
		   "%u), not the receiver's %u",
		   b + 31, b + 69);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_int(r.p.roce.psn, b + 31, "PSN");
	tap_prefix_end();
	c0 = ctr("sentry_ack_echo");
	len = dp_data_frame(&fl, b + 32, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("replay of acknowledged PSNs: 32 PSNs on, another ACK (PSN %u) at once, the "
		   "NIC's timer restarts",
		   b + 63);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x1f, "syndrome");
	tap_eq_int(r.p.roce.psn, b + 63, "PSN");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_eq_int(ctr("sentry_ack_echo"), c0 + 1, "sentry_ack_echo");
	tap_prefix_end();
	len = dp_data_frame(&fl, b + 70, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("replay of acknowledged PSNs: the missing one passes");
	passed_as_data(&r, b + 70);
	tap_prefix_end();
}

/*
 * In an episode, the NIC's timer resends from the receiver's ACK point with
 * nothing missing from there on: the episode ends and the resend passes,
 * even with a missing mark left before that point (the receiver got that
 * PSN another way and ACKed past it)
 */
static void sentry_timer_stale_mark(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 8200, p;

	fl.a.v4.s_addr = htonl(0x0a000a23);
	sentry_sent(&fl, b, 20);
	/* the Depot misses b+5 and b+6; the NIC replays b+5, then b+7 .. b+12 */
	len = dp_ack_frame(&fl, b + 5, 0x60, LH_DNACK_MARK | 1, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	for (p = b + 5; p <= b + 12; p++) {
		if (p == b + 6)
			continue;
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
	}
	/* the receiver ACKs up to b+9: b+6 came another way, its mark stays */
	len = dp_ack_frame(&fl, b + 9, 0x1f, 0, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	c0 = ctr("sentry_episode_timer");
	len = dp_data_frame(&fl, b + 10, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("episode: the NIC's timer resend from the ACK point %u passes (a stale mark "
		   "before it does not count)",
		   b + 10);
	passed_as_data(&r, b + 10);
	tap_eq_int(ctr("sentry_episode_timer"), c0 + 1, "sentry_episode_timer");
	tap_prefix_end();
}

/*
 * A Depot-NACK the NIC ignores (it is in a retry of its own that the Sentry
 * did not see: learned mid-flight): no replay from its PSN ever comes. Once
 * the receiver's ACK passes that PSN the rewind is no longer pending, and
 * the NIC's first timer resend from the ACK point ends the episode and
 * passes: an episode that waited on the replay would drop every resend as
 * held until the NIC gave up (an agent restart learns QPs mid-flight).
 */
static void sentry_nak_ignored(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 8600, p;

	fl.a.v4.s_addr = htonl(0x0a000a24);
	sentry_sent(&fl, b, 20);
	len = dp_ack_frame(&fl, b, 0x1f, 0, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_ack_frame(&fl, b + 5, 0x60, LH_DNACK_MARK, 1, in);
	xdp("lh_wan_xdp", in, len, &r); /* forwarded; the NIC ignores it and sends on */
	for (p = b + 20; p < b + 25; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
	}
	len = dp_ack_frame(&fl, b + 9, 0x1f, 0, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("NAK ignored: the receiver's ACK past its PSN %u ends the wait for a replay "
		   "from it",
		   b + 5);
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_EPISODE, LH_QPF_EPISODE, "flag EPISODE set");
	tap_eq_hex(qp.flags & LH_QPF_REWIND_PENDING, 0, "flag REWIND_PENDING clear");
	tap_eq_int(qp.s.una, b + 10, "s.una");
	tap_prefix_end();
	c0 = ctr("sentry_episode_timer");
	len = dp_data_frame(&fl, b + 10, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("NAK ignored: the NIC's first timer resend from the ACK point %u ends the "
		   "episode and passes",
		   b + 10);
	passed_as_data(&r, b + 10);
	tap_eq_int(ctr("sentry_episode_timer"), c0 + 1, "sentry_episode_timer");
	tap_prefix_end();
}

/*
 * An episode whose premise failed (the Depot that held the rest is gone):
 * the NIC's timer resends after a silence, from its own ACK point, which
 * is not the Sentry's. Resent at once (a replay going on), such a PSN is
 * dropped as held; after a silence longer than a replay pauses it is the
 * NIC's timer: the episode ends and everything from there passes, as
 * without longhaul (dropped as held, it would be resent retry after retry
 * until the NIC gave up).
 */
static void sentry_timer_silence(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 8800, p;

	fl.a.v4.s_addr = htonl(0x0a000a25);
	sentry_sent(&fl, b, 20);
	len = dp_ack_frame(&fl, b + 5, 0x60, LH_DNACK_MARK, 1, in);
	xdp("lh_wan_xdp", in, len, &r); /* forwarded: the NIC replays from b+5 */
	tap_prefix("timer after silence: the replay passes the missing PSN %u and drops the held "
		   "ones",
		   b + 5);
	for (p = b + 5; p < b + 12; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
		tap_eq_hex(r.verdict, p == b + 5 ? XDP_PASS_ : XDP_DROP_, "PSN %u: verdict", p);
	}
	tap_prefix_end();
	len = dp_data_frame(&fl, b + 8, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_eq_hex(r.verdict, XDP_DROP_,
		   "timer after silence: PSN %u resent at once is still dropped as held", b + 8);
	usleep(20000); /* longer than a replay pauses (LH_REPLAY_GAP_NS, two round trips) */
	c0 = ctr("sentry_episode_timer");
	tap_prefix("timer after silence: the NIC's resend from %u, not the Sentry's ACK point %u, "
		   "ends the episode; it and what follows pass",
		   b + 8, b + 5);
	for (p = b + 8; p < b + 12; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
		tap_eq_hex(r.verdict, XDP_PASS_, "PSN %u: verdict", p);
		tap_eq_int(r.p.roce.psn, p, "PSN %u: PSN", p);
		tap_true(r.p.roce.opcode != ROCE_RC_ACKNOWLEDGE,
			 "PSN %u: data, not an ACK (opcode %#x)", p, r.p.roce.opcode);
	}
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_EPISODE, 0, "flag EPISODE clear");
	tap_eq_int(ctr("sentry_episode_timer"), c0 + 1, "sentry_episode_timer");
	tap_prefix_end();
}

/*
 * How long a copy stays (s_stay_*, gateway recovery's bound): a new PSN is
 * timed to the ACK that covers it, through a recovery (a Depot-NACK drops
 * the round trip's sample, never this one)
 */
static void sentry_stay_time(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	uint64_t tx = 0;
	uint32_t b = 8800;
	struct run r;
	size_t len;

	fl.a.v4.s_addr = htonl(0x0a000a2f);
	sentry_sent(&fl, b, 20);
	tap_prefix("stay: a new PSN timed; a Depot-NACK of PSN %u leaves it timed", b + 2);
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_true(qp.s.stay_tx_ns != 0, "a PSN timed (s.stay_tx_ns set)");
	tap_ge_int(psn_diff(qp.s.stay_psn, b), 0, "s.stay_psn %u from PSN %u on", qp.s.stay_psn, b);
	tap_le_int(psn_diff(qp.s.stay_psn, b + 2), -1, "s.stay_psn %u before PSN %u", qp.s.stay_psn,
		   b + 2);
	tx = qp.s.stay_tx_ns;
	len = dp_ack_frame(&fl, b + 2, 0x60, LH_DNACK_MARK, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_true(dp_qp_get(h, &fl, &qp), "after the Depot-NACK: QP entry read");
	tap_eq_u64(qp.s.stay_tx_ns, tx, "after the Depot-NACK: s.stay_tx_ns");
	tap_prefix_end();
	usleep(3000);
	len = dp_ack_frame(&fl, b + 10, 0x1f, 0, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("stay: the ACK of PSN %u ends it (slept 3000 us)", b + 10);
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_u64(qp.s.stay_tx_ns, 0, "s.stay_tx_ns cleared");
	tap_ge_int(qp.s.stay_us, 3000, "s.stay_us");
	tap_le_int(qp.s.stay_us, 999999, "s.stay_us under a second");
	tap_prefix_end();
	len = dp_data_frame(&fl, b + 20, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("stay: the next new PSN is timed");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_true(qp.s.stay_tx_ns != 0, "a PSN timed (s.stay_tx_ns set)");
	tap_eq_int(qp.s.stay_psn, b + 20, "s.stay_psn");
	tap_prefix_end();
}

/*
 * The watchdog: a recovery stuck (no progress for 80 ms) on a QP whose round
 * trip says 500 ms and whose last two recoveries were given up waits
 * 4 x 2 s x 4 by default; with --nic-timeout (LH_CFG_WD_BOUND) the bound is
 * the NICs' timeout, 67 ms here, and the next packet ends the recovery
 */
static void sentry_watchdog_bound(void)
{
	int cfd = lh_harness_map_fd(h, "lh_config");
	struct lh_qp_key k;
	struct lh_config cfg, saved;
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	uint32_t zero = 0, b = 8800, bound, flags0;
	struct run r;
	size_t len;
	int64_t c0;
	bool ok;

	fl.a.v4.s_addr = htonl(0x0a000a25);
	ok = !bpf_map_lookup_elem(cfd, &zero, &saved);
	sentry_sent(&fl, b, 20);
	len = dp_ack_frame(&fl, b, 0x1f, 0, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_ack_frame(&fl, b + 5, 0x60, LH_DNACK_MARK, 1, in);
	xdp("lh_wan_xdp", in, len, &r); /* a Depot-NACK: the recovery begins */
	for (bound = 0; ok && bound < 2; bound++) {
		cfg = saved;
		cfg.watchdog_ms = bound ? 67 : 90;
		cfg.flags = bound ? (saved.flags | LH_CFG_WD_BOUND) : (saved.flags & ~LH_CFG_WD_BOUND);
		ok = !bpf_map_update_elem(cfd, &zero, &cfg, 0) && dp_qp_get(h, &fl, &qp);
		flags0 = qp.flags;
		qp.s.srtt_us = 500000;
		qp.s.rttvar_us = 0;
		qp.s.wd_fired = 2;
		qp.last_progress_ns = lh_now_ns() - 80000000ull;
		ok = ok && dp_qp_put(h, &fl, &qp);
		c0 = ctr("sentry_watchdog");
		len = dp_data_frame(&fl, b + 7, in); /* the NIC's replay, held by the Depot */
		xdp("lh_dc_xdp", in, len, &r);
		ok = ok && dp_qp_get(h, &fl, &qp);
		if (!bound) {
			tap_prefix("watchdog: stuck 80 ms with a 500 ms round trip, 2 given up: it "
				   "waits (4 RTOs, doubled twice)");
			tap_true(ok, "config set, the QP aged (setup)");
			tap_eq_hex(flags0 & LH_QPF_EPISODE, LH_QPF_EPISODE,
				   "in its episode before");
			tap_eq_int(ctr("sentry_watchdog"), c0, "sentry_watchdog");
			tap_eq_hex(qp.flags & LH_QPF_EPISODE, LH_QPF_EPISODE, "flag EPISODE set");
			tap_prefix_end();
		} else {
			tap_prefix("watchdog with --nic-timeout 67ms: the same recovery is given "
				   "up, whatever the round trip");
			tap_true(ok, "config set, the QP aged (setup)");
			tap_eq_hex(flags0 & LH_QPF_EPISODE, LH_QPF_EPISODE,
				   "in its episode before");
			tap_eq_int(ctr("sentry_watchdog"), c0 + 1, "sentry_watchdog");
			tap_eq_hex(qp.flags & LH_QPF_EPISODE, 0, "flag EPISODE clear");
			tap_eq_int(qp.s.wd_fired, 3, "s.wd_fired");
			tap_prefix_end();
		}
	}
	bpf_map_update_elem(cfd, &zero, &saved, 0);
	/* the ring and the copy the filter kept of b + 7 back to their free lists */
	dp_qp_key(&fl, &k);
	forget(&fl, k.dqpn, LH_QPF_SENTRY);
}

/*
 * A go-back-0 responder that meets a gap drops the partial message, the
 * PSNs it ACKed too, and NAKs its first PSN: the Sentry's ACK point goes
 * back there, and the resend of the message passes instead of being
 * dropped as acknowledged
 */
static void sentry_nak_back(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	size_t len;
	int64_t c0, c1;
	uint32_t b = 7800;

	fl.a.v4.s_addr = htonl(0x0a000a22);
	sentry_sent(&fl, b, 20);
	len = dp_ack_frame(&fl, b + 9, 0x1f, 0, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	c0 = ctr("sentry_nak_back");
	len = dp_ack_frame(&fl, b, 0x60, 0, 2, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("the far NIC NAKs PSN %u, before its ACK point %u: passed to the NIC, counted",
		   b, b + 10);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x60, "syndrome");
	tap_eq_int(r.p.roce.psn, b, "PSN");
	tap_eq_int(ctr("sentry_nak_back"), c0 + 1, "sentry_nak_back");
	tap_prefix_end();
	c1 = ctr("sentry_retx_pass");
	len = dp_data_frame(&fl, b, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix(
		"the message's resend from PSN %u passes (the responder dropped what it had ACKed)",
		b);
	passed_as_data(&r, b);
	tap_eq_int(ctr("sentry_retx_pass"), c1 + 1, "sentry_retx_pass");
	tap_prefix_end();
}

/* The gateway's config: Depot and Sentry, and flags (gateway recovery's) */
static int set_config(uint32_t flags)
{
	struct lh_config cfg = { .dc_ifindex = (uint32_t)dc_ifindex,
				 .flags = LH_CFG_DEPOT | LH_CFG_SENTRY | flags };
	uint32_t zero = 0;

	return bpf_map_update_elem(lh_harness_map_fd(h, "lh_config"), &zero, &cfg, 0);
}

/*
 * Gateway recovery: a copy of every new packet; a Depot-NACK for one is
 * absorbed (the NIC never sees it); the report goes to the agent (the TC
 * program consumes it, re-sends nothing itself); over the bound a QP falls
 * back, and resumes once all it sent is acknowledged.
 */
static void sentry_gateway(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	size_t len;
	int64_t c0, c1, c2;
	uint32_t b = 5000;

	fl.a.v4.s_addr = htonl(0x0a000a05);
	set_config(LH_CFG_GATEWAY);
	c0 = ctr("sentry_cached");
	sentry_sent(&fl, b, 6);
	tap_prefix(
		"gateway: each new packet toward the WAN leaves a copy (5 after the QP's first)");
	tap_eq_int(ctr("sentry_cached"), c0 + 5, "sentry_cached");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_GW_OFF, 0, "flag GW_OFF clear");
	tap_prefix_end();

	len = dp_ack_frame(&fl, b + 1, 0x1f, 0, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("gateway: an ACK from the WAN gives the QP the way back (MACs) for the agent's "
		   "re-sends");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_mem(qp.wan_peer_mac, in + 6, 6, "wan_peer_mac");
	tap_eq_mem(qp.wan_mac, in, 6, "wan_mac");
	tap_prefix_end();

	len = dp_ack_frame(&fl, b + 3, 0x60, LH_DNACK_MARK, 1, in);
	c0 = ctr("sentry_dnack_absorb");
	c1 = ctr("sentry_dnack_forward");
	c2 = ctr("sentry_dnack_resend");
	xdp("lh_wan_xdp", in, len, &r);
	c2++;
	tap_prefix("gateway: a Depot-NACK for a PSN with a copy does not reach the NIC: up to "
		   "lh_wan_in, metadata naming the copy of that PSN to send back to the Depot at "
		   "once");
	resend_check(&r, in, len, b + 3);
	tap_eq_int(ctr("sentry_dnack_absorb"), c0 + 1, "sentry_dnack_absorb");
	tap_eq_int(ctr("sentry_dnack_forward"), c1, "sentry_dnack_forward");
	tap_eq_int(ctr("sentry_dnack_resend"), c2, "sentry_dnack_resend");
	tap_prefix_end();
	set_resend_guard(1000);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("gateway: the same Depot-NACK right after (the copy went out less than the "
		   "re-send guard ago): absorbed, nothing handed on");
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("sentry_dnack_absorb"), c0 + 2, "sentry_dnack_absorb");
	tap_eq_int(ctr("sentry_dnack_resend"), c2, "sentry_dnack_resend");
	tap_prefix_end();
	set_resend_guard(0);

	len = dp_report_frame(&fl, b + 3, 3, 1u << 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_eq_hex(r.verdict, XDP_PASS_, "gateway: the report naming them passes lh_wan_xdp");
	captured();
	c0 = ctr("sentry_gw_report");
	c1 = ctr("sentry_resent");
	tc("lh_wan_in", in, len, &r);
	tap_prefix("gateway: the report naming them goes to the agent's paced queue; the TC "
		   "program re-sends nothing");
	tap_eq_hex(r.verdict, TC_SHOT, "verdict");
	tap_eq_int(captured(), 0, "packets captured");
	tap_eq_int(ctr("sentry_gw_report"), c0 + 1, "sentry_gw_report");
	tap_eq_int(ctr("sentry_resent"), c1, "sentry_resent");
	tap_prefix_end();

	set_config(LH_CFG_GATEWAY | LH_CFG_GW_FULL);
	c0 = ctr("sentry_gw_fallback");
	c1 = ctr("sentry_cached");
	sentry_sent(&fl, b + 6, 1);
	tap_prefix("gateway: over the bound (the agent's GW_FULL) no copy: the QP falls back to "
		   "LR2, counted");
	tap_eq_int(ctr("sentry_gw_fallback"), c0 + 1, "sentry_gw_fallback");
	tap_eq_int(ctr("sentry_cached"), c1, "sentry_cached");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_GW_OFF, LH_QPF_GW_OFF, "flag GW_OFF set");
	tap_prefix_end();
	set_config(LH_CFG_GATEWAY);
	len = dp_ack_frame(&fl, b + 6, 0x1f, 0, 2, in);
	c0 = ctr("sentry_gw_resume");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("gateway: all acknowledged: the QP copies again (resume counted)");
	tap_eq_int(ctr("sentry_gw_resume"), c0 + 1, "sentry_gw_resume");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_GW_OFF, 0, "flag GW_OFF clear");
	c1 = ctr("sentry_cached");
	sentry_sent(&fl, b + 7, 1);
	tap_eq_int(ctr("sentry_cached"), c1 + 1, "sentry_cached");
	tap_prefix_end();
	/* its copy back to the pool: the tests after this one count free slots */
	len = dp_ack_frame(&fl, b + 7, 0x1f, 0, 3, in);
	xdp("lh_wan_xdp", in, len, &r);
	set_config(0);
}

static void sentry(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct run r;
	struct lh_qp qp;
	size_t len;
	int64_t c0, c1;
	uint32_t b = 5000, p;
	int n;

	fl.a.v4.s_addr = htonl(0x0a000a01);
	for (p = b; p < b + 3; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
		if (p == b)
			dp_pair(h, &fl);
	}
	tap_prefix("Sentry: data from the DC learned, in-order packets pass; no receiver's ACK "
		   "point yet");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_SENTRY, LH_QPF_SENTRY, "flag SENTRY set");
	tap_eq_int(qp.s.next, b + 3, "s.next");
	tap_eq_hex(qp.flags & LH_QPF_S_SYNCED, 0, "flag S_SYNCED clear");
	tap_prefix_end();

	/* the receiver's first ACK (of b) gives the Sentry its ACK point */
	len = dp_ack_frame(&fl, b, 0x1f, 0, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: the receiver's first ACK sets its ACK point (s.una, s.acked)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.una, b + 1, "s.una");
	tap_eq_int(qp.s.acked, b + 1, "s.acked");
	tap_eq_hex((qp.flags & (LH_QPF_S_SYNCED | LH_QPF_S_ACKED)),
		   (LH_QPF_S_SYNCED | LH_QPF_S_ACKED),
		   "(qp.flags & (LH_QPF_S_SYNCED | LH_QPF_S_ACKED))");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 4, in); /* b+3 lost inside the sender DC */
	c0 = ctr("sentry_nack");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("Sentry: a gap in what the NIC sends: Sentry-NACK straight back, PSN = the "
		   "receiver's ACK point %u (a NAK acknowledges what precedes it)",
		   b + 1);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_str(lh_stat_name(r.p.result), lh_stat_name(LH_STAT_ROCE), "parse result");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x60, "syndrome");
	tap_eq_int(r.p.roce.psn, b + 1, "PSN");
	tap_eq_hex(r.p.roce.dqpn, DP_QP_S, "dest QP");
	tap_eq_hex(r.p.roce.byte4, 0, "BTH byte 4");
	tap_eq_mem(&r.p.src, &fl.b, 4, "source address");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_eq_int(ctr("sentry_nack"), c0 + 1, "sentry_nack");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 5, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_eq_hex(r.verdict, XDP_DROP_,
		   "Sentry: later packets of the gap dropped until the NIC rewinds");
	{
		/* the NIC goes back to b+1: what crossed already is dropped, b+3 on passes */
		static const int want[] = { XDP_DROP_, XDP_DROP_, XDP_PASS_, XDP_PASS_, XDP_PASS_ };

		tap_prefix("Sentry: the NIC's resend: %u..%u (crossed already) dropped, %u on pass",
			   b + 1, b + 2, b + 3);
		for (p = b + 1; p < b + 6; p++) {
			len = dp_data_frame(&fl, p, in);
			xdp("lh_dc_xdp", in, len, &r);
			tap_eq_hex(r.verdict, want[p - b - 1], "PSN %u: verdict", p);
		}
	}
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.next, b + 6, "s.next");
	tap_prefix_end();

	/* the receiver acknowledges b+1: the NIC's retry is over, it takes NAKs again */
	len = dp_ack_frame(&fl, b + 1, 0x1f, 0, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: an ACK from the rewind point on ends the NIC's retry");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_NIC_RETRY, 0, "flag NIC_RETRY clear");
	tap_eq_int(qp.s.una, b + 2, "s.una");
	tap_prefix_end();

	/* Depot-NACKs on a fresh QP: b .. b+5 sent in order, b+1 and b+2 lost on the WAN */
	fl.a.v4.s_addr = htonl(0x0a000a02);
	sentry_sent(&fl, b, 6);

	/* the Depot reports b+1 and b+2 missing: a Depot-NACK with PSN = its ePSN */
	len = dp_ack_frame(&fl, b + 1, 0x60, LH_DNACK_MARK | 1, 0, in);
	c0 = ctr("sentry_dnack_forward");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: Depot-NACK goes on to the NIC as a plain NAK (mark cleared, ICRC still "
		   "valid)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_str(lh_stat_name(r.p.result), lh_stat_name(LH_STAT_ROCE), "parse result");
	tap_eq_hex(r.p.roce.byte4, 0, "BTH byte 4");
	tap_eq_int(r.p.roce.psn, b + 1, "PSN");
	tap_eq_hex(r.p.roce.aeth.syndrome, 0x60, "syndrome");
	tap_true(lh_pkt_icrc_ok(r.out, &r.p), "ICRC valid");
	tap_eq_int(ctr("sentry_dnack_forward"), c0 + 1, "sentry_dnack_forward");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_EPISODE, LH_QPF_EPISODE, "flag EPISODE set");
	tap_prefix_end();

	len = dp_ack_frame(&fl, b + 1, 0x60, LH_DNACK_MARK | 1, 0, in);
	c0 = ctr("sentry_dnack_absorb");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: the same Depot-NACK again while the NIC is in its retry: absorbed (it "
		   "would be ignored), owed");
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("sentry_dnack_absorb"), c0 + 1, "sentry_dnack_absorb");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_NAK_DEFERRED, LH_QPF_NAK_DEFERRED, "flag NAK_DEFERRED set");
	tap_prefix_end();

	/* the report: of b+1 .. b+5 the Depot holds b+3 and b+5 */
	len = dp_report_frame(&fl, b + 1, 5, 1u << 2 | 1u << 4, in);
	c0 = ctr("sentry_report");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: Depot report taken in; missing PSNs were sent before but no copy is "
		   "kept yet: nothing re-sent, report consumed");
	tap_eq_hex(r.verdict, XDP_PASS_, "lh_wan_xdp verdict");
	tap_eq_int(ctr("sentry_report"), c0 + 1, "sentry_report");
	captured();
	tc("lh_wan_in", in, len, &r);
	{
		int n = captured();

		tap_eq_hex(r.verdict, TC_SHOT, "lh_wan_in verdict");
		tap_eq_int(n, 0, "packets captured");
		if (n)
			tap_diag("  the first captured is PSN %u", caps[0].p.roce.psn);
	}
	tap_prefix_end();

	/* the NIC rewinds to b+1 and resends b+1 .. b+5 */
	{
		static const int want[] = { XDP_PASS_, XDP_PASS_, XDP_DROP_, XDP_PASS_, XDP_DROP_ };
		int64_t pass0 = ctr("sentry_sr_pass"), drop0 = ctr("sentry_sr_drop");
		int64_t cached0 = ctr("sentry_cached");

		tap_prefix(
			"Sentry: SR filter: the missing PSNs %u, %u, %u pass; %u, %u (held by the "
			"Depot) dropped; copies of all kept",
			b + 1, b + 2, b + 4, b + 3, b + 5);
		for (p = b + 1; p < b + 6; p++) {
			len = dp_data_frame(&fl, p, in);
			xdp("lh_dc_xdp", in, len, &r);
			tap_eq_hex(r.verdict, want[p - b - 1], "PSN %u: verdict", p);
		}
		tap_eq_int(ctr("sentry_sr_pass"), pass0 + 3, "sentry_sr_pass");
		tap_eq_int(ctr("sentry_sr_drop"), drop0 + 2, "sentry_sr_drop");
		tap_eq_int(ctr("sentry_cached"), cached0 + 5, "sentry_cached");
		tap_prefix_end();
	}

	/* b+2 is lost again on the WAN: the next report names it; the Sentry re-sends its copy */
	len = dp_report_frame(&fl, b + 2, 4, 1u << 1 | 1u << 2 | 1u << 3, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: a missing PSN the replay already let through is re-sent from its copy "
		   "toward the Depot");
	tap_eq_hex(r.verdict, XDP_PASS_, "lh_wan_xdp verdict");
	captured();
	c0 = ctr("sentry_resent");
	tc("lh_wan_in", in, len, &r);
	tap_eq_hex(r.verdict, TC_SHOT, "lh_wan_in verdict");
	n = captured();
	tap_eq_int(n, 1, "packets captured");
	tap_eq_mem(caps[0].b, "\x02\x77\x77\x77\x77\x01\x02\x88\x88\x88\x88\x01", 12,
		   "MACs toward the Depot");
	tap_eq_int(ctr("sentry_resent"), c0 + 1, "sentry_resent");
	tap_prefix_end();
	caps_check(n, b + 2, 61, 0, "Sentry: a missing PSN re-sent from its copy");

	len = dp_ack_frame(&fl, b + 2, 0x60, LH_DNACK_MARK, 0, in);
	c0 = ctr("sentry_dnack_absorb");
	c1 = ctr("sentry_dnack_resend");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: a Depot-NACK for a PSN it holds a copy of is absorbed (no needless NIC "
		   "rewind); in LR2 the report re-sends the copy");
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("sentry_dnack_absorb"), c0 + 1, "sentry_dnack_absorb");
	tap_eq_int(ctr("sentry_dnack_resend"), c1, "sentry_dnack_resend");
	tap_prefix_end();

	/* reports carry a seq: one overtaken on the WAN by a newer one says less */
	dp_report_seq = 1000;
	len = dp_report_frame(&fl, b + 2, 4, 1u << 1 | 1u << 2 | 1u << 3, in);
	c0 = ctr("sentry_report");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: a Depot report older (seq) than one taken in is dropped and counted");
	tap_eq_int(ctr("sentry_report"), c0 + 1, "the newer one (seq 1000): sentry_report");
	dp_report_seq = 999;
	len = dp_report_frame(&fl, b + 1, 5, 0, in);
	c0 = ctr("sentry_report_stale");
	xdp("lh_wan_xdp", in, len, &r);
	tap_eq_hex(r.verdict, XDP_DROP_, "verdict");
	tap_eq_int(ctr("sentry_report_stale"), c0 + 1, "sentry_report_stale");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.base, b + 2, "s.base");
	tap_eq_int(qp.s.report_seq, 1000, "s.report_seq");
	tap_prefix_end();
	/* a restarted agent numbers from elsewhere: far behind is new */
	dp_report_seq = 1000 - 2 * LH_REPORT_SEQ_WINDOW;
	len = dp_report_frame(&fl, b + 2, 4, 1u << 1 | 1u << 2 | 1u << 3, in);
	c0 = ctr("sentry_report");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix(
		"Sentry: a report far behind the last seq (a restarted Depot agent) is taken in");
	tap_eq_int(ctr("sentry_report"), c0 + 1, "sentry_report");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.report_seq, dp_report_seq, "s.report_seq");
	tap_prefix_end();
	dp_report_seq = 0;

	/* a T/C-SACK report: the agent's silence rule learns when and what */
	dp_report_flags = LH_REPORT_F_SACK;
	len = dp_report_frame(&fl, b + 2, 4, 1u << 1 | 1u << 2 | 1u << 3, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_report_flags = 0;
	tap_prefix(
		"Sentry: a T/C-SACK report sets s.sack_ns and s.sack_epsn (new data set s.tx_ns)");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_true(qp.s.sack_ns != 0, "s.sack_ns set");
	tap_eq_int(qp.s.sack_epsn, b + 2, "s.sack_epsn");
	tap_true(qp.s.tx_ns != 0, "s.tx_ns set");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 6, in);
	c0 = ctr("sentry_in_order");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("Sentry: new data ends the episode");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_EPISODE, 0, "flag EPISODE clear");
	tap_eq_int(ctr("sentry_in_order"), c0 + 1, "sentry_in_order");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 3, in);
	c0 = ctr("sentry_retx_pass");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("Sentry: outside an episode a retransmission (a timeout) always passes");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("sentry_retx_pass"), c0 + 1, "sentry_retx_pass");
	tap_prefix_end();

	/* an episode cancelled by the far NIC's own NAK */
	for (p = b + 7; p < b + 12; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
	}
	len = dp_ack_frame(&fl, b + 8, 0x60, LH_DNACK_MARK, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_ack_frame(&fl, b + 8, 0x60, 0, 0, in);
	c0 = ctr("sentry_episode_cancel");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: a plain NAK from the far NIC stops filtering (it needs every packet "
		   "again)");
	tap_eq_hex(r.verdict, XDP_PASS_, "the NAK: verdict");
	tap_eq_int(ctr("sentry_episode_cancel"), c0 + 1, "sentry_episode_cancel");
	len = dp_data_frame(&fl, b + 9, in);
	xdp("lh_dc_xdp", in, len, &r);
	tap_eq_hex(r.verdict, XDP_PASS_, "PSN %u after it: verdict", b + 9);
	tap_prefix_end();

	len = dp_ack_frame(&fl, b + 11, 0x1f, 0, 4, in);
	c0 = ctr("sentry_uncached");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("Sentry: the far NIC's ACK frees the copies it covers");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("sentry_uncached"), c0 + 5, "sentry_uncached");
	tap_prefix_end();
}

/* A run of lh_wan_xdp left the QP as it was: a test point per field a packet from the WAN may
 * change */
static void qp_untouched(const struct lh_qp *a, const struct lh_qp *b)
{
	/* LH_QPF_S_JUMP aside: set by what names PSNs beyond s.next (sentry_jump) */
	tap_eq_hex(b->flags & ~LH_QPF_S_JUMP, a->flags & ~LH_QPF_S_JUMP, "flags as they were");
	tap_eq_int(b->s.una, a->s.una, "s.una as it was");
	tap_eq_int(b->s.next, a->s.next, "s.next as it was");
	tap_eq_int(b->s.acked, a->s.acked, "s.acked as it was");
	tap_eq_int(b->s.base, a->s.base, "s.base as it was");
	tap_eq_int(b->msn, a->msn, "msn as it was");
	tap_eq_int(b->s.retry_psn, a->s.retry_psn, "s.retry_psn as it was");
	tap_eq_int(b->s.report_seq, a->s.report_seq, "s.report_seq as it was");
	tap_eq_mem(b->s.missing, a->s.missing, sizeof(a->s.missing), "s.missing as it was");
	tap_eq_int(b->wan_ifindex, a->wan_ifindex, "wan_ifindex as it was");
}

/*
 * One frame through lh_wan_xdp that must be refused: verdict want, counter
 * up by one, the flow's QP as q0 was, each a test point (under the caller's
 * prefix); *r keeps the run
 */
static void wan_refused(const struct dp_flow *fl, const uint8_t *in, size_t len, uint32_t want,
			const char *counter, const struct lh_qp *q0, struct run *r)
{
	int64_t c0 = ctr(counter);
	struct lh_qp q1;

	xdp("lh_wan_xdp", in, len, r);
	tap_eq_hex(r->verdict, want, "verdict");
	tap_eq_int(ctr(counter), c0 + 1, "%s", counter);
	tap_true(dp_qp_get(h, fl, &q1), "QP entry read");
	qp_untouched(q0, &q1);
}

/*
 * What comes from the WAN moves a Sentry QP only within what the Sentry
 * forwarded: an ACK, NAK or Depot-NACK naming a PSN never sent passes
 * unchanged (the NIC judges it, as without longhaul) and leaves the QP as
 * it was; a Depot-NACK before the receiver's ACK point is dropped as stale;
 * a report naming PSNs never sent, or before that point, is dropped; a
 * report with a forged seq is undone by the Depot's next one with a later
 * ePSN. b .. b+9 sent, the receiver has b .. b+3.
 */
static void sentry_bounds(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp q0, q1;
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 12000;

	fl.a.v4.s_addr = htonl(0x0a000a0d);
	sentry_sent(&fl, b, 10);
	len = dp_ack_frame(&fl, b + 3, 0x1f, 0, 7, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_qp_get(h, &fl, &q0);

	len = dp_ack_frame(&fl, b + 10, 0x1f, 0, 99, in);
	tap_prefix("bounds: an ACK of PSN %u (never sent) passes unchanged to the NIC, counted; "
		   "the QP as it was (s.una %u, MSN 7)",
		   b + 10, b + 4);
	wan_refused(&fl, in, len, XDP_PASS_, "sentry_ack_unsent", &q0, &r);
	tap_eq_int(r.p.roce.psn, b + 10, "PSN");
	tap_true(dp_qp_get(h, &fl, &q1), "QP entry read");
	tap_eq_int(q1.s.una, b + 4, "s.una");
	tap_eq_int(q1.msn, 7, "msn");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 5, in);
	c0 = ctr("sentry_retx_pass");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("bounds: after it the NIC's resend of PSN %u (not acknowledged) still crosses",
		   b + 5);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("sentry_retx_pass"), c0 + 1, "sentry_retx_pass");
	tap_prefix_end();
	dp_qp_get(h, &fl, &q0);

	len = dp_ack_frame(&fl, b + 11, 0x60, 0, 7, in);
	tap_prefix("bounds: a NAK of PSN %u (beyond the next one sent) passes unchanged, counted; "
		   "the QP as it was",
		   b + 11);
	wan_refused(&fl, in, len, XDP_PASS_, "sentry_ack_unsent", &q0, &r);
	tap_prefix_end();

	len = dp_ack_frame(&fl, b + 8, 0x60, LH_DNACK_MARK | 3, 7, in);
	tap_prefix("bounds: a Depot-NACK of %u..%u (past the last PSN sent) passes unchanged, "
		   "counted; no recovery begins",
		   b + 8, b + 11);
	wan_refused(&fl, in, len, XDP_PASS_, "sentry_ack_unsent", &q0, &r);
	tap_eq_hex(r.p.roce.byte4, (LH_DNACK_MARK | 3), "BTH byte 4");
	tap_true(dp_qp_get(h, &fl, &q1), "QP entry read");
	tap_eq_hex(q1.flags & LH_QPF_EPISODE, 0, "flag EPISODE clear");
	tap_prefix_end();

	len = dp_ack_frame(&fl, b + 2, 0x60, LH_DNACK_MARK, 7, in);
	tap_prefix("bounds: a Depot-NACK of PSN %u, before the receiver's ACK point %u: dropped as "
		   "stale, counted; the QP as it was",
		   b + 2, b + 4);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_dnack_stale", &q0, &r);
	tap_prefix_end();

	len = dp_report_frame(&fl, b + 5, 20, 0, in);
	tap_prefix("bounds: a report of %u..%u (never sent): dropped, counted; the QP as it was",
		   b + 5, b + 24);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_report_unsent", &q0, &r);
	tap_prefix_end();
	len = dp_report_frame(&fl, b + 1, 3, 0, in);
	tap_prefix("bounds: a report of ePSN %u, before the receiver's ACK point %u: dropped as "
		   "stale, counted; the QP as it was",
		   b + 1, b + 4);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_report_stale", &q0, &r);
	tap_prefix_end();

	/*
	 * a report in the window but with a seq ahead of the Depot's (within
	 * LH_REPORT_SEQ_WINDOW: further is a restarted Depot agent, and the
	 * Depot's next report is far behind it, new again) ...
	 */
	dp_report_seq = 10;
	len = dp_report_frame(&fl, b + 4, 3, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_report_seq = 10 + LH_REPORT_SEQ_WINDOW / 2;
	len = dp_report_frame(&fl, b + 4, 3, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_report_seq = 11;
	len = dp_report_frame(&fl, b + 4, 3, 1u << 1, in);
	c0 = ctr("sentry_report_stale");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("bounds: after a report with a forged seq, the Depot's next report with a later "
		   "ePSN is taken in");
	tap_eq_int(ctr("sentry_report_stale"), c0 + 1,
		   "the Depot's report of seq 11: sentry_report_stale");
	/* ... makes the Depot's own look old only while its ePSN stands still */
	dp_report_seq = 12;
	len = dp_report_frame(&fl, b + 5, 2, 1u << 1, in);
	c0 = ctr("sentry_report");
	xdp("lh_wan_xdp", in, len, &r);
	tap_eq_int(ctr("sentry_report"), c0 + 1, "its report of seq 12: sentry_report");
	tap_true(dp_qp_get(h, &fl, &q1), "QP entry read");
	tap_eq_int(q1.s.report_seq, 12, "s.report_seq");
	tap_eq_int(q1.s.base, b + 5, "s.base");
	tap_prefix_end();
	dp_report_seq = 0;

	/* the real ACK of everything sent still moves the QP */
	len = dp_ack_frame(&fl, b + 9, 0x1f, 0, 8, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("bounds: the receiver's ACK of all %u PSNs sent is taken in", 10);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &q1), "QP entry read");
	tap_eq_int(q1.s.una, b + 10, "s.una");
	tap_eq_int(q1.s.acked, b + 10, "s.acked");
	tap_eq_int(q1.msn, 8, "msn");
	tap_prefix_end();
}

/*
 * The NIC told of PSNs this Sentry never saw go (learned mid-flight: its
 * earlier packets went by before the programs ran): a Depot-NACK beyond
 * s.next passes unchanged and the NIC resends from there. That PSN, beyond
 * s.next, is taken as sent (LH_QPF_S_JUMP), not as a gap in the sender DC: a
 * Sentry-NACK from the older ACK point is one the NIC ignores, and the filter
 * would then drop its resends until the NIC gave up. The next real gap is
 * NAKed as any gap is.
 */
static void sentry_jump(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	size_t len;
	int64_t c0, c1;
	uint32_t b = 15000;

	fl.a.v4.s_addr = htonl(0x0a000a0f);
	sentry_sent(&fl, b, 5);
	len = dp_ack_frame(&fl, b + 1, 0x1f, 0, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	len = dp_ack_frame(&fl, b + 20, 0x60, LH_DNACK_MARK, 1, in);
	c0 = ctr("sentry_ack_unsent");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("jump: a Depot-NACK of PSN %u (beyond s.next %u) passes to the NIC, counted; "
		   "s.una stays %u",
		   b + 20, b + 5, b + 2);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("sentry_ack_unsent"), c0 + 1, "sentry_ack_unsent");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_S_JUMP, LH_QPF_S_JUMP, "flag S_JUMP set");
	tap_eq_int(qp.s.una, b + 2, "s.una");
	tap_eq_int(qp.s.next, b + 5, "s.next");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 20, in);
	c0 = ctr("sentry_jump");
	c1 = ctr("sentry_nack");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("jump: the NIC's resend from PSN %u crosses, s.next moves there; no Sentry-NACK",
		   b + 20);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(r.p.roce.opcode != ROCE_RC_ACKNOWLEDGE, "data, not an ACK (opcode %#x)",
		 r.p.roce.opcode);
	tap_eq_int(ctr("sentry_jump"), c0 + 1, "sentry_jump");
	tap_eq_int(ctr("sentry_nack"), c1, "sentry_nack");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.next, b + 21, "s.next");
	tap_eq_hex(qp.flags & (LH_QPF_S_JUMP | LH_QPF_SNAK_SENT), 0, "flag S_JUMP|SNAK_SENT clear");
	tap_prefix_end();

	len = dp_data_frame(&fl, b + 21, in);
	xdp("lh_dc_xdp", in, len, &r);
	len = dp_data_frame(&fl, b + 23, in); /* b+22 lost inside the sender DC */
	c1 = ctr("sentry_nack");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("jump: once, the next gap (PSN %u lost) is Sentry-NACKed from the ACK point %u",
		   b + 22, b + 2);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_int(ctr("sentry_nack"), c1 + 1, "sentry_nack");
	tap_eq_int(r.p.roce.psn, b + 2, "PSN");
	tap_prefix_end();
}

/*
 * A QP learned mid-flight (an agent started during a transfer): PSNs before
 * the first one seen may be unacknowledged, so until the receiver's first
 * ACK the Sentry neither NAKs a gap nor drops a resend as acknowledged; that
 * ACK sets the ACK point, behind the first PSN seen too.
 */
static void sentry_mid_flight(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	size_t len;
	int64_t c0, c1;
	uint32_t b = 14000;

	fl.a.v4.s_addr = htonl(0x0a000a0e);
	sentry_sent(&fl, b, 5);
	len = dp_data_frame(&fl, b + 6, in); /* b+5 lost inside the sender's DC */
	c0 = ctr("sentry_unpaired");
	c1 = ctr("sentry_nack");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("mid-flight: a gap before the receiver's first ACK passes (no NAK from a "
		   "guessed ACK point), counted");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(r.p.roce.opcode != ROCE_RC_ACKNOWLEDGE, "data, not an ACK (opcode %#x)",
		 r.p.roce.opcode);
	tap_eq_int(ctr("sentry_unpaired"), c0 + 1, "sentry_unpaired");
	tap_eq_int(ctr("sentry_nack"), c1, "sentry_nack");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.next, b + 7, "s.next");
	tap_prefix_end();

	len = dp_data_frame(&fl, b - 20, in);
	c0 = ctr("sentry_retx_pass");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("mid-flight: the NIC's resend of PSN %u, before the first PSN seen, crosses (no "
		   "ACK covers it)",
		   b - 20);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(r.p.roce.opcode != ROCE_RC_ACKNOWLEDGE, "data, not an ACK (opcode %#x)",
		 r.p.roce.opcode);
	tap_eq_int(ctr("sentry_retx_pass"), c0 + 1, "sentry_retx_pass");
	tap_prefix_end();

	len = dp_ack_frame(&fl, b - 15, 0x1f, 0, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("mid-flight: the receiver's first ACK (of PSN %u) sets the ACK point behind the "
		   "first PSN seen",
		   b - 15);
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.una, b - 14, "s.una");
	tap_eq_hex(qp.flags & LH_QPF_S_SYNCED, LH_QPF_S_SYNCED, "flag S_SYNCED set");
	tap_prefix_end();
}

/*
 * A gateway with several WAN interfaces: each QP records the one its traffic
 * uses (lh_qp wan_ifindex), with the MACs there, for what the agent sends
 * toward the WAN. Depot: the interface its data comes in by, moved (MACs
 * too) when the data comes by another one (a failover); Sentry: the one its
 * ACKs come in by.
 */
static void wan_interface(void)
{
	struct dp_flow fd = f4, fs = f4;
	int if1 = dc_ifindex, if2 = (int)if_nametoindex("lhu1");
	uint8_t in[9216], mac1[12];
	struct run r;
	struct lh_qp qp;
	size_t len;
	uint32_t b = 9000;
	bool ok;

	fd.a.v4.s_addr = htonl(0x0a000b01); /* addresses no other test uses */
	fs.a.v4.s_addr = htonl(0x0a000b02);
	len = dp_data_frame(&fd, b, in);
	memcpy(mac1, in, 12);
	r.out_len = sizeof(r.out);
	ok = !lh_harness_run_xdp(h, "lh_wan_xdp", in, len, (uint32_t)if1, &r.verdict, r.out,
				 &r.out_len);
	tap_prefix("Depot: the QP records the WAN interface its data came in by, with the MACs");
	tap_true(ok, "test run");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fd, &qp), "QP entry read");
	tap_eq_int(qp.wan_ifindex, (uint32_t)if1, "wan_ifindex");
	tap_eq_mem(qp.wan_mac, mac1, 6, "wan_mac");
	tap_eq_mem(qp.wan_peer_mac, mac1 + 6, 6, "wan_peer_mac");
	tap_prefix_end();

	len = dp_data_frame(&fd, b + 1, in);
	in[5] ^= 0x10; /* another next hop and our other interface's MAC */
	in[11] ^= 0x10;
	r.out_len = sizeof(r.out);
	ok = !lh_harness_run_xdp(h, "lh_wan_xdp", in, len, (uint32_t)if1, &r.verdict, r.out,
				 &r.out_len);
	tap_prefix("Depot: by the same interface, the MACs are not rewritten per packet");
	tap_true(ok, "test run");
	tap_true(dp_qp_get(h, &fd, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, b + 2, "d.deliv");
	tap_eq_mem(qp.wan_mac, mac1, 6, "wan_mac");
	tap_eq_mem(qp.wan_peer_mac, mac1 + 6, 6, "wan_peer_mac");
	tap_prefix_end();
	len = dp_data_frame(&fd, b + 2, in);
	in[5] ^= 0x10;
	in[11] ^= 0x10;
	r.out_len = sizeof(r.out);
	ok = !lh_harness_run_xdp(h, "lh_wan_xdp", in, len, (uint32_t)if2, &r.verdict, r.out,
				 &r.out_len);
	tap_prefix("Depot: data by another WAN interface (a failover) moves the way back there, "
		   "MACs too");
	tap_true(ok, "test run");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fd, &qp), "QP entry read");
	tap_eq_int(qp.d.deliv, b + 3, "d.deliv");
	tap_eq_int(qp.wan_ifindex, (uint32_t)if2, "wan_ifindex");
	tap_eq_mem(qp.wan_mac, in, 6, "wan_mac");
	tap_eq_mem(qp.wan_peer_mac, in + 6, 6, "wan_peer_mac");
	tap_prefix_end();

	sentry_sent(&fs, b, 4);
	len = dp_ack_frame(&fs, b + 1, 0x1f, 0, 1, in);
	r.out_len = sizeof(r.out);
	ok = !lh_harness_run_xdp(h, "lh_wan_xdp", in, len, (uint32_t)if1, &r.verdict, r.out,
				 &r.out_len);
	tap_prefix("Sentry: an ACK from the WAN records its interface");
	tap_true(ok, "test run");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fs, &qp), "QP entry read");
	tap_eq_int(qp.wan_ifindex, (uint32_t)if1, "wan_ifindex");
	tap_eq_mem(qp.wan_mac, in, 6, "wan_mac");
	tap_prefix_end();
	len = dp_ack_frame(&fs, b + 2, 0x1f, 0, 2, in);
	in[5] ^= 0x10;
	in[11] ^= 0x10;
	r.out_len = sizeof(r.out);
	ok = !lh_harness_run_xdp(h, "lh_wan_xdp", in, len, (uint32_t)if2, &r.verdict, r.out,
				 &r.out_len);
	tap_prefix("Sentry: ACKs by another interface move the way for the agent's re-sends, MACs "
		   "too");
	tap_true(ok, "test run");
	tap_true(dp_qp_get(h, &fs, &qp), "QP entry read");
	tap_eq_int(qp.wan_ifindex, (uint32_t)if2, "wan_ifindex");
	tap_eq_mem(qp.wan_mac, in, 6, "wan_mac");
	tap_eq_mem(qp.wan_peer_mac, in + 6, 6, "wan_peer_mac");
	tap_prefix_end();
}

/*
 * A data path kept by a stopped agent (LH_CFG_AGENTLESS): within
 * agentless_ms it works on (a new QP learned); past it every packet passes
 * unchanged, counted, and nothing is learned; an agent's config ends it
 */
static void agentless(void)
{
	struct lh_config cfg = { .dc_ifindex = (uint32_t)dc_ifindex,
				 .flags = LH_CFG_DEPOT | LH_CFG_SENTRY | LH_CFG_AGENTLESS,
				 .agentless_ms = 100 };
	struct dp_flow fl = f4;
	uint32_t zero = 0;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	int64_t c0, c1;
	size_t len;
	int fd = lh_harness_map_fd(h, "lh_config");

	fl.b.v4.s_addr = htonl(0x0a000977);
	cfg.agentless_since_ns = lh_now_ns() - 50000000ull;
	bpf_map_update_elem(fd, &zero, &cfg, 0);
	len = dp_data_frame(&fl, 7000, in);
	c0 = ctr("depot_new_qp");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("agentless for 50 of 100 ms: the Depot works on (a new QP learned)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("depot_new_qp"), c0 + 1, "depot_new_qp");
	tap_prefix_end();

	fl.b.v4.s_addr = htonl(0x0a000978);
	cfg.agentless_since_ns = lh_now_ns() - 150000000ull;
	bpf_map_update_elem(fd, &zero, &cfg, 0);
	len = dp_data_frame(&fl, 7000, in);
	c0 = ctr("depot_new_qp");
	c1 = ctr("agentless_pass");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("agentless for 150 of 100 ms: a data packet passes unchanged, counted, nothing "
		   "learned");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_new_qp"), c0, "depot_new_qp");
	tap_eq_int(ctr("agentless_pass"), c1 + 1, "agentless_pass");
	tap_true(!dp_qp_get(h, &fl, &qp), "no QP entry");
	tap_prefix_end();
	len = dp_data_frame(&fl, 7002, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("agentless past the bound: a gap is not held (the NIC's go-back-N sees it)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("agentless_pass"), c1 + 2, "agentless_pass");
	tap_prefix_end();
	len = dp_ack_frame(&fl, 7000, 0x1f, 0, 1, in);
	c0 = ctr("agentless_pass");
	tc("lh_dc_in", in, len, &r);
	tap_prefix("agentless past the bound: the receiving NIC's ACK goes on untouched");
	tap_eq_hex(r.verdict, TC_NEXT, "verdict");
	tap_eq_int(ctr("agentless_pass"), c0 + 1, "agentless_pass");
	tap_prefix_end();
	tap_true(!set_config(0), "an agent's config ends the agentless state");
	len = dp_data_frame(&fl, 7000, in);
	c0 = ctr("depot_new_qp");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("with an agent again: the QP is learned");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("depot_new_qp"), c0 + 1, "depot_new_qp");
	tap_prefix_end();
}

/*
 * --peer (LH_CFG_PEERS, lh_peer): a QP is learned only with a far host in a
 * peer prefix: the source of data from the WAN (Depot), the destination of
 * data from the DC (Sentry); any other passes unchanged, counted
 */
static void peers(void)
{
	struct lh_peer_key k = { .prefixlen = 96 + 24, .addr = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 0 } };
	struct dp_flow fl = f4;
	uint32_t one = 1;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	int64_t c0, c1;
	size_t len;
	int fd = lh_harness_map_fd(h, "lh_peer");

	tap_prefix("peers: 10.0.0.0/24 the one peer prefix");
	tap_true(!bpf_map_update_elem(fd, &k, &one, BPF_ANY), "peer prefix written");
	tap_eq_int(set_config(LH_CFG_PEERS), 0, "config set (LH_CFG_PEERS)");
	tap_prefix_end();
	fl.b.v4.s_addr = htonl(0x0a000979);
	len = dp_data_frame(&fl, 8000, in);
	c0 = ctr("depot_new_qp");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("peers: data from the WAN whose source is in a peer prefix: learned (Depot)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("depot_new_qp"), c0 + 1, "depot_new_qp");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_prefix_end();

	fl.a.v4.s_addr = htonl(0x0a070707);
	len = dp_data_frame(&fl, 8000, in);
	c0 = ctr("depot_new_qp");
	c1 = ctr("not_peer");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("peers: data from the WAN of a source in no peer prefix: passes unchanged, "
		   "counted, not learned");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_new_qp"), c0, "depot_new_qp");
	tap_eq_int(ctr("not_peer"), c1 + 1, "not_peer");
	tap_true(!dp_qp_get(h, &fl, &qp), "no QP entry");
	tap_prefix_end();
	len = dp_data_frame(&fl, 8002, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("peers: its gap is not held: the receiving NIC sees it, as with no gateway");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("not_peer"), c1 + 2, "not_peer");
	tap_prefix_end();

	/* the Sentry's far host is the destination */
	fl = f4;
	fl.b.v4.s_addr = htonl(0x0a07077a);
	len = dp_data_frame(&fl, 9000, in);
	c0 = ctr("sentry_new_qp");
	c1 = ctr("not_peer");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("peers: data toward a host in no peer prefix: passes, counted, not learned "
		   "(Sentry)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("sentry_new_qp"), c0, "sentry_new_qp");
	tap_eq_int(ctr("not_peer"), c1 + 1, "not_peer");
	tap_prefix_end();
	fl.b.v4.s_addr = htonl(0x0a00007a);
	len = dp_data_frame(&fl, 9000, in);
	c0 = ctr("sentry_new_qp");
	xdp("lh_dc_xdp", in, len, &r);
	tap_prefix("peers: data toward a host in a peer prefix: learned (Sentry)");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(ctr("sentry_new_qp"), c0 + 1, "sentry_new_qp");
	tap_prefix_end();
	bpf_map_delete_elem(fd, &k);
	set_config(0);
}

/* lh_config with flags and a report key (LH_CFG_REPORT_MAC) */
static int set_config_key(uint32_t flags, const uint8_t key[LH_SIPHASH_KEY_LEN])
{
	struct lh_config cfg = { .dc_ifindex = (uint32_t)dc_ifindex,
				 .flags = LH_CFG_DEPOT | LH_CFG_SENTRY | LH_CFG_REPORT_MAC | flags };
	uint32_t zero = 0;

	lh_sip_key(key, cfg.report_key);
	return bpf_map_update_elem(lh_harness_map_fd(h, "lh_config"), &zero, &cfg, 0);
}

/* lh_config with the QP limits of --host-qps and --hostpair-qps */
static int set_limits(uint32_t host_qps, uint32_t hostpair_qps)
{
	struct lh_config cfg = { .dc_ifindex = (uint32_t)dc_ifindex,
				 .flags = LH_CFG_DEPOT | LH_CFG_SENTRY,
				 .host_qps = host_qps,
				 .hostpair_qps = hostpair_qps };
	uint32_t zero = 0;

	return bpf_map_update_elem(lh_harness_map_fd(h, "lh_config"), &zero, &cfg, 0);
}

/* A new QP of flow fl with destination QPN dqpn from prog: whether it was learned */
static bool learned(const struct dp_flow *fl, const char *prog, uint32_t dqpn)
{
	uint8_t in[9216];
	struct lh_qp_key k;
	struct lh_qp qp;
	struct run r;
	size_t len;

	dp_data_qpn = dqpn;
	len = dp_data_frame(fl, 7000, in);
	dp_data_qpn = 0;
	xdp(prog, in, len, &r);
	dp_qp_key(fl, &k);
	k.dqpn = dqpn;
	return r.verdict == XDP_PASS_ && r.out_len == len && !memcmp(r.out, in, len) &&
	       !bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_qp"), &k, &qp);
}

/* The agent forgets QP (fl, dqpn) of role: deleted, its counts given back (lh_dc_cmd) */
static void forget(const struct dp_flow *fl, uint32_t dqpn, uint32_t role)
{
	struct {
		uint8_t eth[14];
		struct lh_cmd c;
	} __attribute__((packed)) cmd = { .eth = { [12] = 0x08 }, .c.op = LH_CMD_QP_FORGOTTEN,
					  .c.role = role };
	static struct lh_ring ring, empty;
	struct lh_qp_key k;
	struct lh_qp qp;
	struct run r;
	uint32_t i;

	dp_qp_key(fl, &k);
	k.dqpn = dqpn;
	/* as the agent's forget_qp(): its ring and pool slots back to the free lists */
	if (!bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_qp"), &k, &qp) && qp.ring != LH_NO_SLOT &&
	    !bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_ring"), &qp.ring, &ring)) {
		for (i = 0; i < LH_RING_SIZE; i++)
			if (LH_TAG_STATE(ring.ent[i].tag) != LH_SLOT_FREE)
				bpf_map_update_elem(lh_harness_map_fd(h, "lh_pool_free"), NULL,
						    &ring.ent[i].slot, BPF_ANY);
		bpf_map_update_elem(lh_harness_map_fd(h, "lh_ring"), &qp.ring, &empty, BPF_ANY);
		bpf_map_update_elem(lh_harness_map_fd(h, "lh_ring_free"), NULL, &qp.ring, BPF_ANY);
	}
	bpf_map_delete_elem(lh_harness_map_fd(h, "lh_qp"), &k);
	memcpy(cmd.c.hk.saddr, k.saddr, 16);
	memcpy(cmd.c.hk.daddr, k.daddr, 16);
	tc("lh_dc_cmd", (const uint8_t *)&cmd, sizeof(cmd), &r);
}

/*
 * --host-qps and --hostpair-qps: a far host (a source that spoofs peers'
 * addresses, say) cannot take more QPs than its share; past it a new QP
 * passes unchanged, counted, not learned; a forgotten QP gives its place
 * back. The Depot's far host is the data's source, the Sentry's its
 * destination.
 */
static void qp_limits(void)
{
	struct dp_flow x = f4, y = f4, xb = f4;
	int64_t c0;

	x.b.v4.s_addr = htonl(0x0a000b01); /* responder behind this gateway */
	x.a.v4.s_addr = htonl(0x0a000c01); /* far host X (requester over the WAN) */
	y = x;
	y.a.v4.s_addr = htonl(0x0a000c02); /* far host Y */
	xb = x;
	xb.b.v4.s_addr = htonl(0x0a000b02); /* X to another responder */

	tap_true(!set_limits(2, 0), "limits: --host-qps 2");
	tap_true(learned(&x, "lh_wan_xdp", 0x601), "limits: far host X's first Depot QP learned");
	tap_true(learned(&xb, "lh_wan_xdp", 0x602), "limits: far host X's second Depot QP learned");
	c0 = ctr("qp_host_limit");
	tap_prefix("limits: far host X has 2 Depot QPs; a third passes unchanged, not learned, "
		   "counted");
	tap_true(!learned(&x, "lh_wan_xdp", 0x603), "not learned");
	tap_eq_int(ctr("qp_host_limit"), c0 + 1, "qp_host_limit");
	tap_prefix_end();
	tap_true(learned(&y, "lh_wan_xdp", 0x604), "limits: far host Y's first is learned");
	forget(&x, 0x601, LH_QPF_DEPOT);
	tap_true(learned(&x, "lh_wan_xdp", 0x603),
		 "limits: once the agent forgets one of X's QPs, X's next is learned");
	forget(&x, 0x603, LH_QPF_DEPOT);
	forget(&xb, 0x602, LH_QPF_DEPOT);
	forget(&y, 0x604, LH_QPF_DEPOT);

	tap_true(!set_limits(0, 1), "limits: --hostpair-qps 1");
	tap_true(learned(&x, "lh_wan_xdp", 0x611), "limits: the pair X, A: its first QP learned");
	c0 = ctr("qp_hostpair_limit");
	tap_prefix(
		"limits: the pair X, A has 1 QP; a second passes unchanged, not learned, counted");
	tap_true(!learned(&x, "lh_wan_xdp", 0x612), "not learned");
	tap_eq_int(ctr("qp_hostpair_limit"), c0 + 1, "qp_hostpair_limit");
	tap_prefix_end();
	tap_true(learned(&xb, "lh_wan_xdp", 0x613),
		 "limits: the pair X, B is another pair: learned");
	forget(&x, 0x611, LH_QPF_DEPOT);
	forget(&xb, 0x613, LH_QPF_DEPOT);

	/* the Sentry: data from the DC toward far host X (now the responder) */
	tap_true(!set_limits(1, 0), "limits: --host-qps 1");
	x.b.v4.s_addr = htonl(0x0a000c01);
	x.a.v4.s_addr = htonl(0x0a000b01);
	xb = x;
	xb.a.v4.s_addr = htonl(0x0a000b02);
	tap_true(learned(&x, "lh_dc_xdp", 0x621),
		 "limits: the Sentry QP toward far host X learned");
	c0 = ctr("qp_host_limit");
	tap_prefix("limits: Sentry QPs toward far host X: the second passes, not learned, counted");
	tap_true(!learned(&xb, "lh_dc_xdp", 0x622), "not learned");
	tap_eq_int(ctr("qp_host_limit"), c0 + 1, "qp_host_limit");
	tap_prefix_end();
	forget(&x, 0x621, LH_QPF_SENTRY);
	tap_true(learned(&xb, "lh_dc_xdp", 0x622),
		 "limits: X's place given back: learned (Sentry)");
	forget(&xb, 0x622, LH_QPF_SENTRY);
	set_config(0);
}

/*
 * A report key (--report-key-file, LH_CFG_REPORT_MAC): the Sentry takes in
 * only a report whose tag the key gives over its addresses and its bytes;
 * one without a tag, with another key's, altered after signing, or replayed
 * from another host: dropped, counted, the QP as it was.
 */
static void report_mac(const struct dp_flow *base, const char *fam)
{
	static const uint8_t key[16] = "longhaul-peers!", other[16] = "longhaul-peers?";
	struct dp_flow fl = *base, fl2;
	uint8_t in[9216];
	struct lh_qp q0, q1;
	struct run r;
	size_t len;
	int64_t c0;
	uint32_t b = 15000;

	if (fl.family == AF_INET)
		fl.a.v4.s_addr = htonl(0x0a000a31);
	else
		fl.a.v6.s6_addr[15] = 0x31;
	sentry_sent(&fl, b, 10);
	tap_true(!set_config_key(0, key), "report MAC (%s): a key in lh_config", fam);
	dp_qp_get(h, &fl, &q0);

	len = dp_report_frame(&fl, b + 2, 4, 0, in);
	tap_prefix("report MAC (%s): a report without a tag: dropped, counted; the QP as it was",
		   fam);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_report_nomac", &q0, &r);
	tap_prefix_end();
	dp_report_key = other;
	len = dp_report_frame(&fl, b + 2, 4, 0, in);
	tap_prefix("report MAC (%s): a report signed with another key: dropped, counted; the QP as "
		   "it was",
		   fam);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_report_mac", &q0, &r);
	tap_prefix_end();
	dp_report_key = key;
	len = dp_report_frame(&fl, b + 2, 4, 0, in);
	in[len - LH_REPORT_MAC_LEN - 1] ^= 0x01; /* a held bit flipped on the way */
	tap_prefix("report MAC (%s): a signed report altered after signing: dropped, counted", fam);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_report_mac", &q0, &r);
	tap_prefix_end();
	/* signed for another host pair, its tag sent in a report of this one */
	fl2 = fl;
	if (fl.family == AF_INET)
		fl2.b.v4.s_addr = htonl(0x0a000903);
	else
		fl2.b.v6.s6_addr[15] = 0x03;
	len = dp_report_frame(&fl2, b + 2, 4, 0, in + 4608);
	len = dp_report_frame(&fl, b + 2, 4, 0, in);
	tap_true(memcmp(in + len - LH_REPORT_MAC_LEN, in + 4608 + len - LH_REPORT_MAC_LEN,
			LH_REPORT_MAC_LEN) != 0,
		 "report MAC (%s): the tag covers the addresses (another host pair, another tag)",
		 fam);
	memcpy(in + len - LH_REPORT_MAC_LEN, in + 4608 + len - LH_REPORT_MAC_LEN, LH_REPORT_MAC_LEN);
	tap_prefix("report MAC (%s): the report of another host pair replayed as this one's: "
		   "dropped, counted",
		   fam);
	wan_refused(&fl, in, len, XDP_DROP_, "sentry_report_mac", &q0, &r);
	tap_prefix_end();

	len = dp_report_frame(&fl, b + 2, 4, 1u << 1, in);
	c0 = ctr("sentry_report");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("report MAC (%s): a report with the key's tag is taken in (ePSN %u)", fam,
		   b + 2);
	tap_eq_int(ctr("sentry_report"), c0 + 1, "sentry_report");
	tap_true(dp_qp_get(h, &fl, &q1), "QP entry read");
	tap_eq_int(q1.s.base, b + 2, "s.base");
	tap_prefix_end();
	dp_report_key = NULL;
	set_config(0);
}

/*
 * A QP learned mid-flight (wide: inside the agent's start-up window) that no
 * ACK paired: its gap goes to the NIC unchanged, not held (QPs sharing PSN
 * ranges may never pair, and a held gap would wait on the NIC's timer)
 */
static void depot_wide_unpaired(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp qp;
	struct run r;
	int64_t c0, c1;
	size_t len;

	fl.b.v4.s_addr = htonl(0x0a00097a);
	set_guard(lh_now_ns() + 1000000000ull, 0);
	len = dp_data_frame(&fl, 6000, in);
	xdp("lh_wan_xdp", in, len, &r);
	set_guard(0, 0);
	tap_prefix("wide unpaired: a QP learned in the start-up window is wide, not paired");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_WIDE, LH_QPF_WIDE, "flag WIDE set");
	tap_eq_hex(qp.flags & LH_QPF_PAIRED, 0, "flag PAIRED clear");
	tap_prefix_end();
	len = dp_data_frame(&fl, 6002, in);
	c0 = ctr("depot_wide_unpaired");
	c1 = ctr("depot_held");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("wide unpaired: its gap passes unchanged, counted, nothing held");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_wide_unpaired"), c0 + 1, "depot_wide_unpaired");
	tap_eq_int(ctr("depot_held"), c1, "depot_held");
	tap_prefix_end();

	/*
	 * The receiving NIC is behind the first PSN the Depot saw (a Depot
	 * restarted mid-transfer): its ACK of 5990 pairs the QP (wide) but says
	 * nothing of 6000 on. A Depot-NACK of ePSN 6001 would acknowledge
	 * 5991 .. 6000 to the sending NIC, which the receiver never got.
	 */
	nic_ack(&fl, DP_QP_S, 5990, 0x1f);
	len = dp_data_frame(&fl, 6004, in);
	c0 = ctr("depot_wide_unpaired");
	c1 = ctr("depot_nack");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("unsure: paired by an ACK behind its first PSN, a gap still passes unchanged, "
		   "no Depot-NACK");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_PAIRED, LH_QPF_PAIRED, "flag PAIRED set");
	tap_eq_hex(qp.flags & LH_QPF_D_UNSURE, LH_QPF_D_UNSURE, "flag D_UNSURE set");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_int(r.out_len, len, "output length");
	tap_eq_mem(r.out, in, len, "output bytes");
	tap_eq_int(ctr("depot_wide_unpaired"), c0 + 1, "depot_wide_unpaired");
	tap_eq_int(ctr("depot_nack"), c1, "depot_nack");
	tap_prefix_end();
	nic_ack(&fl, DP_QP_S, 6000, 0x1f);
	len = dp_data_frame(&fl, 6003, in);
	c0 = ctr("depot_held");
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("unsure: the NIC's ACK of its first PSN: sure; the next gap is held, a "
		   "Depot-NACK of 6001");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_D_UNSURE, 0, "flag D_UNSURE clear");
	tap_eq_int(ctr("depot_held"), c0 + 1, "depot_held");
	tap_eq_hex(r.verdict, XDP_PASS_, "verdict");
	tap_eq_hex(r.p.roce.opcode, ROCE_RC_ACKNOWLEDGE, "opcode");
	tap_eq_int(r.p.roce.psn, 6001, "PSN");
	tap_eq_hex(r.p.roce.byte4 & LH_DNACK_MARK, LH_DNACK_MARK, "Depot-NACK mark in BTH byte 4");
	tap_prefix_end();
}

/*
 * A QP learned mid-flight (wide) pairs only with an ACK its UDP source port
 * links it to: the same port both ways (mlx5, lhperf) or rxe's requester
 * port (0xc000 + hash_32(QPN, 14)). An ACK of a QP this gateway never
 * learned, whose PSN the wide QP's range holds, pairs nothing.
 */
static void pairing_wide_linked(void)
{
	struct dp_flow fl = f4;
	uint32_t rxe_port = 0xc000 | (((0x777u * 0x61C88647u) >> 18) & 0x3fff);
	int64_t c0;

	fl.b.v4.s_addr = htonl(0x0a000a44);
	set_guard(lh_now_ns() + 1000000000ull, 0);
	dp_data_sport = (uint16_t)rxe_port; /* its requester, QPN 0x777, is an rxe */
	depot_send(&fl, 0x700, 3000);
	set_guard(0, 0);
	dp_data_sport = 0;
	c0 = ctr("pair_unlinked");
	dp_ack_sport = 0xd123; /* another connection's responder, same PSNs */
	nic_ack(&fl, 0x778, 3000, 0x1f);
	tap_prefix("pairing: a wide QP, the only one listed, and an ACK its port does not link: "
		   "not paired, counted");
	tap_eq_hex(paired_with(&fl, 0x700), 0, "requester QPN of %#x", 0x700);
	tap_eq_int(ctr("pair_unlinked"), c0 + 1, "pair_unlinked");
	tap_prefix_end();
	dp_ack_sport = 0xc555; /* rxe's responder sends from its own port */
	nic_ack(&fl, 0x777, 3000, 0x1f);
	dp_ack_sport = 0;
	tap_eq_int(
		paired_with(&fl, 0x700), 0x777,
		"pairing: the ACK to QPN 0x777, whose rxe port (0x%04x) the data came from: paired",
		rxe_port);
	forget(&fl, 0x700, LH_QPF_DEPOT);
}

/*
 * A Sentry that started afresh learns its QPs mid-flight (wide) and, when
 * their PSN ranges overlap (equal start PSNs, senders in step), no ACK pairs
 * them; its Depot kept their pairing, and its reports name both QPNs: the
 * first report inside what was sent pairs the QP. A report naming a
 * requester QPN another QP is paired with pairs nothing.
 */
static void sentry_report_pairs(void)
{
	struct dp_flow fl = f4;
	uint8_t in[9216];
	struct lh_qp_key k;
	struct lh_qp qp, qp2;
	struct run r;
	size_t len;
	int64_t c0, c1;
	uint32_t b = 41000, p;

	fl.a.v4.s_addr = htonl(0x0a000a51);
	for (p = b; p < b + 4; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
	}
	tap_prefix("report pairing: an unpaired QP is paired by its Depot's report (data and "
		   "requester QPNs)");
	tap_true(dp_qp_get(h, &fl, &qp), "before: QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_PAIRED, 0, "before: flag PAIRED clear");
	c0 = ctr("pair_report");
	len = dp_report_frame(&fl, b + 1, 2, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_PAIRED, LH_QPF_PAIRED, "flag PAIRED set");
	tap_eq_int(qp.peer_qpn, DP_QP_S, "peer_qpn");
	tap_eq_hex(qp.flags & LH_QPF_LISTED, 0, "flag LISTED clear");
	tap_eq_int(ctr("pair_report"), c0 + 1, "pair_report");
	tap_prefix_end();
	c0 = ctr("ack_unpaired");
	len = dp_ack_frame(&fl, b + 1, 0x1f, 0, 1, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("report pairing: the receiver's ACK then finds the QP (s.acked moves)");
	tap_eq_int(ctr("ack_unpaired"), c0, "ack_unpaired");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.s.acked, b + 2, "s.acked");
	tap_prefix_end();

	dp_data_qpn = DP_QP_R + 1;
	for (p = b; p < b + 4; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
	}
	c0 = ctr("pair_report_clash");
	c1 = ctr("pair_report");
	len = dp_report_frame(&fl, b + 1, 2, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	dp_data_qpn = 0;
	dp_qp_key(&fl, &k);
	k.dqpn = DP_QP_R + 1;
	tap_prefix("report pairing: a report naming a requester QPN another QP has: no pairing, "
		   "counted");
	tap_true(!bpf_map_lookup_elem(lh_harness_map_fd(h, "lh_qp"), &k, &qp2), "lh_qp entry read");
	tap_eq_hex(qp2.flags & LH_QPF_PAIRED, 0, "flag PAIRED clear");
	tap_eq_int(ctr("pair_report_clash"), c0 + 1, "pair_report_clash");
	tap_eq_int(ctr("pair_report"), c1, "pair_report");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_int(qp.peer_qpn, DP_QP_S, "peer_qpn");
	tap_prefix_end();

	/* a report past what the NIC sent pairs nothing either (refused before) */
	fl.a.v4.s_addr = htonl(0x0a000a52);
	for (p = b; p < b + 2; p++) {
		len = dp_data_frame(&fl, p, in);
		xdp("lh_dc_xdp", in, len, &r);
	}
	c0 = ctr("pair_report");
	len = dp_report_frame(&fl, b + 100, 2, 0, in);
	xdp("lh_wan_xdp", in, len, &r);
	tap_prefix("report pairing: a report naming PSNs never sent is refused and pairs nothing");
	tap_true(dp_qp_get(h, &fl, &qp), "QP entry read");
	tap_eq_hex(qp.flags & LH_QPF_PAIRED, 0, "flag PAIRED clear");
	tap_eq_int(ctr("pair_report"), c0, "pair_report");
	tap_prefix_end();
}

int main(void)
{
	if (getuid()) {
		tap_skip("needs root", "LR2 data path");
		return tap_done();
	}
	if (!tap_eq_int(dp_netns_veth("lhu0", "lhu1", &dc_ifindex, &cap_fd), 0,
			"private network namespace with a veth for TC emission"))
		return tap_done();
	h = lh_harness_open_set(objs, 4, dp_set_sizes, &sizes);
	if (!tap_true(h != NULL, "wan_xdp, dc_xdp, dc_tc and wan_tc load with shared maps"))
		return tap_done();
	tap_prefix("agent set-up: free lists and configuration");
	tap_eq_int(lh_harness_fill_queue(h, "lh_pool_free", sizes.pool), 0, "lh_pool_free filled");
	tap_eq_int(lh_harness_fill_queue(h, "lh_ring_free", RINGS), 0, "lh_ring_free filled");
	tap_eq_int(set_config(0), 0, "config set (0)");
	tap_prefix_end();
	f4.family = AF_INET;
	f4.a.v4.s_addr = htonl(0x0a000001);
	f4.b.v4.s_addr = htonl(0x0a000902);
	f6.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::1", &f6.a.v6);
	inet_pton(AF_INET6, "fd00:9::2", &f6.b.v6);

	depot_basic(&f4, 1000, "Depot IPv4");
	depot_basic(&f6, 0xfffffd, "Depot IPv6 across the PSN wrap");
	wan_interface(); /* while rings are free: later tests take them all */
	depot_wide_unpaired();
	sentry_report_pairs();
	report_mac(&f4, "IPv4");
	report_mac(&f6, "IPv6");
	qp_limits();
	pairing_wide_linked();
	sentry();
	sentry_gb0_echo();
	sentry_echo_every();
	sentry_nak_back();
	sentry_timer_stale_mark();
	sentry_nak_ignored();
	sentry_timer_silence();
	sentry_stay_time();
	sentry_watchdog_bound();
	sentry_acked_resend();
	sentry_bounds();
	sentry_mid_flight();
	sentry_jump();
	qp_stale("lh_dc_xdp", true);
	qp_stale("lh_wan_xdp", false);
	sentry_v6_forward();
	sentry_gateway();
	pairing_in_bpf();
	depot_window();
	depot_unpaired();
	depot_long_runs();
	depot_back_during_release();
	depot_busy_during_release();
	depot_pool_full();
	depot_nack_rule();
	pairing_ranges();
	pairing_prune();
	agentless();
	peers();
	lh_harness_close(h);
	return tap_done();
}
