/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What observe mode's XDP program does first: parse the frame and count its
 * outcome (lh_stats) and opcode (lh_opcodes). Returns LH_STAT_ROCE when the
 * frame is RoCEv2 and *m describes it.
 */
#ifndef LH_BPF_XDP_ENTRY_H
#define LH_BPF_XDP_ENTRY_H

#include "parse.h"
#include "stats.h"

static __always_inline enum lh_stat lh_xdp_count_frame(struct xdp_md *ctx, struct hdr_cursor *c,
						 struct lh_pkt_meta *m, struct lh_stats *st)
{
	enum lh_stat r;

	cursor_init(c, (void *)(long)ctx->data, (void *)(long)ctx->data_end,
		    bpf_xdp_get_buff_len(ctx));
	lh_count(st, LH_STAT_RX);
	r = lh_parse_packet(c, m);
	lh_count(st, r);
	if (r == LH_STAT_ROCE)
		lh_count_opcode(m->bth->opcode);
	return r;
}

/* Count the verdict an XDP program returns */
static __always_inline int lh_xdp_verdict(struct lh_stats *st, int verdict)
{
	if (verdict == XDP_PASS)
		lh_count(st, LH_STAT_PASS);
	return verdict;
}

#endif /* LH_BPF_XDP_ENTRY_H */
