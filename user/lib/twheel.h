/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A hashed timing wheel for items named by a dense index (0..capacity-1):
 * O(1) insertion at any time, pop of everything due in time order at slot
 * granularity and FIFO within a slot, and the next due time for a precise
 * sleep. lhwan keeps one per direction for the packets on the wire.
 *
 * Items are intrusive: the wheel owns a `when` and a `next` per index, so
 * nothing is allocated per item. An item further away than the wheel's
 * horizon stays in its slot for as many turns as needed (checked on pop).
 */
#ifndef LH_USER_TWHEEL_H
#define LH_USER_TWHEEL_H

#include <stdint.h>

#define LH_TW_NIL UINT32_MAX

struct lh_twheel {
	uint32_t tick_shift; /* a slot spans 2^tick_shift ns */
	uint32_t nslots; /* power of two */
	uint64_t cur_tick; /* every slot before this tick has been emptied of due items */
	uint32_t *head, *tail; /* per slot */
	uint64_t *bitmap; /* non-empty slots */
	uint64_t *when; /* per item: due time, ns */
	uint32_t *next; /* per item: next in its slot */
	uint32_t count; /* items in the wheel */
};

/*
 * horizon_ns: the farthest a typical item is scheduled ahead (the wheel gets
 * at least that many slots); tick_ns is rounded down to a power of two.
 */
int lh_tw_init(struct lh_twheel *tw, uint64_t tick_ns, uint64_t horizon_ns, uint32_t capacity,
	       uint64_t now);
void lh_tw_free(struct lh_twheel *tw);

void lh_tw_add(struct lh_twheel *tw, uint32_t id, uint64_t when);

/* Move up to max items due at or before now into out[], earliest slot first */
uint32_t lh_tw_pop_due(struct lh_twheel *tw, uint64_t now, uint32_t *out, uint32_t max);

/* Earliest due time of any item, UINT64_MAX when empty */
uint64_t lh_tw_next_due(const struct lh_twheel *tw);

#endif /* LH_USER_TWHEEL_H */
