/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Frames and flow state for driving the LR2 data path (wan_xdp, dc_xdp,
 * dc_tc, wan_tc loaded as one set) with BPF_PROG_TEST_RUN: data, ACK/NAK and
 * Depot-report frames of one RC flow, the agent's side of the maps (pairing,
 * free lists, map sizes), and the private netns + veth that TC emission goes
 * out of. Shared by tests/unit/test_datapath.c and tests/bench/datapath_bench.c.
 */
#ifndef LH_TEST_DP_FRAMES_H
#define LH_TEST_DP_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>

#include "bpf_harness.h"
#include "lh_maps.h"
#include "lh_proto.h"
#include "pkt.h"

#define DP_PAYLOAD 256 /* payload bytes of every data frame */
#define DP_FRAME_MAX 9216 /* buffers handed to the frame builders hold this much */
#define DP_QP_R 0x000100 /* responder's QPN: data carries it */
#define DP_QP_S 0x000200 /* requester's QPN: ACKs and NAKs carry it */

/* The MACs a routed frame carries out of the DC interface toward the receiving NIC */
#define DP_ROUTED_MACS "\x02\xbb\xbb\xbb\xbb\x01\x02\x99\x99\x99\x99\x01"

/* One RC connection: a is the requester, b the responder */
struct dp_flow {
	int family;
	union lh_ip_addr a, b;
};

/* Map sizes for lh_harness_open_set's setup callback (dp_set_sizes, ctx = this) */
struct dp_sizes {
	uint32_t pool; /* lh_pool, lh_pool_free */
	uint32_t rings; /* lh_ring, lh_ring_free */
};

int dp_set_sizes(struct bpf_object *obj, void *ctx);

/* The DP_PAYLOAD bytes data PSN psn carries (a pattern a test can check) */
void dp_payload_for(uint32_t psn, uint8_t *p);

/* Data (RDMA WRITE middle) from requester a to responder b, as it arrives at a gateway */
/* destination QPN of the frames dp_data_frame builds (0: DP_QP_R, the default) */
extern uint32_t dp_data_qpn;
size_t dp_data_frame(const struct dp_flow *fl, uint32_t psn, uint8_t *buf);

/* ACK or NAK from responder b to requester a, from the receiving NIC */
/* requester's QPN of the frames dp_ack_frame builds (0: DP_QP_S, the default) */
extern uint32_t dp_ack_qpn;
/* UDP source ports of the data and ACK frames (0: 0xc000, pkt.c's default, for both) */
extern uint16_t dp_data_sport, dp_ack_sport;
size_t dp_ack_frame(const struct dp_flow *fl, uint32_t psn, uint8_t syndrome, uint8_t byte4,
		    uint32_t msn, uint8_t *buf);

/* A Depot report from responder b to requester a: [epsn, epsn + n), held bits (data QPN dp_data_qpn) */
/* seq of the reports dp_report_frame* build (0: unordered, the default) */
extern uint32_t dp_report_seq;
/* flags of those reports (LH_REPORT_F_*, default 0) */
extern uint16_t dp_report_flags;
/* the key the reports dp_report_frame* build are signed with (NULL: unsigned, the default) */
extern const uint8_t *dp_report_key;
size_t dp_report_frame(const struct dp_flow *fl, uint32_t epsn, uint32_t n, uint32_t held_mask,
		       uint8_t *buf);

/* The same with the whole held bitmap (bit i, byte i / 8, LSB first: epsn + i is held) */
size_t dp_report_frame_held(const struct dp_flow *fl, uint32_t epsn, uint32_t n,
			    const uint8_t held[LH_REPORT_BITS / 8], uint8_t *buf);

/* Make a data frame look routed (DP_ROUTED_MACS, TTL/hop limit ttl), as the kernel forwards it */
void dp_route_frame(uint8_t *buf, size_t len, int ttl);

/* The lh_qp key of the flow's data direction */
void dp_qp_key(const struct dp_flow *fl, struct lh_qp_key *k);

/* The flow's lh_qp entry; false when there is none */
bool dp_qp_get(struct lh_harness *h, const struct dp_flow *fl, struct lh_qp *qp);

/* Write a flow's lh_qp entry back (a test ages it, say); true when it took */
bool dp_qp_put(struct lh_harness *h, const struct dp_flow *fl, const struct lh_qp *qp);

/* The agent's pairing: lh_pair gives the requester's QPN; lh_ack finds the data QP */
bool dp_pair(struct lh_harness *h, const struct dp_flow *fl);

/* Entries in lh_pool_free (popped and pushed back) */
uint32_t dp_free_slots(struct lh_harness *h);

/*
 * Enter a private network namespace and create veth ifa <-> ifb, both up;
 * *ifindex is ifa's. With cap_fd, a non-blocking AF_PACKET socket bound to
 * ifb reads what goes out of ifa. 0 or -1 (reported as a TAP diagnostic).
 */
int dp_netns_veth(const char *ifa, const char *ifb, int *ifindex, int *cap_fd);

#endif /* LH_TEST_DP_FRAMES_H */
