// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What happens to a frame on arrival: the models (loss rules, duplication,
 * stall rules) decide, over the frames --match lets them see; then it is
 * scheduled (emulator_shape.c).
 */
#include <string.h>

#include "emulator_int.h"
#include "pkt.h"

static void classify(struct dir *d, const uint8_t *frame, uint32_t len, struct lh_loss_pkt *lp)
{
	struct lh_pkt p;

	lp->roce = false;
	if (!d->need_parse)
		return;
	if (lh_pkt_parse(frame, len, true, &p) == LH_STAT_ROCE) {
		lp->roce = true;
		lp->qpn = p.roce.dqpn;
		lp->psn = p.roce.psn;
	}
}

void handle_frame(struct emu *e, struct dir *d, uint32_t slot, uint32_t len, uint64_t now)
{
	const struct dir_cfg *c = &d->cfg;
	struct lh_loss_pkt lp;
	bool matched, lost = false;
	int copies = 1, i;
	uint64_t stall_ns = 0;
	uint32_t slot2;

	STAT_ADD(d->st.rx_packets, 1);
	STAT_ADD(d->st.rx_bytes, len);
	if (len >= d->slot_size) {
		STAT_ADD(d->st.drop_oversize, 1);
		slot_put(d, slot);
		return;
	}
	classify(d, slot_data(d, slot), len, &lp);
	matched = !e->match_roce || lp.roce;
	if (matched) {
		STAT_ADD(d->st.matched, 1);
		/* netem's order: duplication is decided before loss, so a lost duplicate still
		 * passes once */
		if (c->dup_p && c->dup_p >= lh_crandom_next(&d->dup_c, &d->prng))
			copies++;
		for (i = 0; i < (int)c->nr_loss && !loss_paused; i++)
			if (lh_loss_event(&d->loss[i], &lp))
				lost = true;
		if (lost) {
			copies--;
			STAT_ADD(d->st.drop_loss, 1);
			if (!d->last_lost)
				STAT_ADD(d->st.loss_bursts, 1);
		}
		d->last_lost = lost;
		if (copies == 2)
			STAT_ADD(d->st.duplicated, 1);
		/* a lost frame is not held: its rule sees it all the same (psn: once) */
		for (i = 0; i < (int)c->nr_stall; i++)
			if (lh_loss_event(&d->stall[i], &lp) && copies && c->stall_ns[i] > stall_ns)
				stall_ns = c->stall_ns[i];
		if (stall_ns)
			STAT_ADD(d->st.stalled, 1);
	}
	if (!copies) {
		slot_put(d, slot);
		return;
	}
	if (copies == 2) {
		if (d->nr_free) {
			slot2 = d->free_stack[--d->nr_free];
			memcpy(slot_data(d, slot2), slot_data(d, slot), len);
			if (!schedule(d, slot, len, now, matched, stall_ns))
				slot_put(d, slot);
			/* the duplicate right behind the original */
			if (!schedule(d, slot2, len, now, false, stall_ns))
				slot_put(d, slot2);
			return;
		}
		STAT_ADD(d->st.drop_pool, 1);
	}
	if (!schedule(d, slot, len, now, matched, stall_ns))
		slot_put(d, slot);
}
