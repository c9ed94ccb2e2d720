// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Hashed timing wheel with an occupancy bitmap (see twheel.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "twheel.h"

int lh_tw_init(struct lh_twheel *tw, uint64_t tick_ns, uint64_t horizon_ns, uint32_t capacity,
	       uint64_t now)
{
	uint64_t slots = 64;

	memset(tw, 0, sizeof(*tw));
	if (!tick_ns || !capacity)
		return -EINVAL;
	while ((2ULL << tw->tick_shift) <= tick_ns)
		tw->tick_shift++;
	/* two spare slots: an item due within the horizon never wraps */
	while (slots < (horizon_ns >> tw->tick_shift) + 2 && slots < (1U << 26))
		slots <<= 1;
	tw->nslots = (uint32_t)slots;
	tw->head = malloc(slots * sizeof(uint32_t));
	tw->tail = malloc(slots * sizeof(uint32_t));
	tw->bitmap = calloc(slots / 64, sizeof(uint64_t));
	tw->when = malloc((size_t)capacity * sizeof(uint64_t));
	tw->next = malloc((size_t)capacity * sizeof(uint32_t));
	if (!tw->head || !tw->tail || !tw->bitmap || !tw->when || !tw->next) {
		lh_tw_free(tw);
		return -ENOMEM;
	}
	memset(tw->head, 0xff, slots * sizeof(uint32_t));
	memset(tw->tail, 0xff, slots * sizeof(uint32_t));
	tw->cur_tick = now >> tw->tick_shift;
	return 0;
}

void lh_tw_free(struct lh_twheel *tw)
{
	free(tw->head);
	free(tw->tail);
	free(tw->bitmap);
	free(tw->when);
	free(tw->next);
	memset(tw, 0, sizeof(*tw));
}

void lh_tw_add(struct lh_twheel *tw, uint32_t id, uint64_t when)
{
	uint64_t tick = when >> tw->tick_shift;
	uint32_t slot;

	/* the past goes into the current slot: popped on the next call */
	if (tick < tw->cur_tick)
		tick = tw->cur_tick;
	slot = (uint32_t)(tick & (tw->nslots - 1));
	tw->when[id] = when;
	tw->next[id] = LH_TW_NIL;
	if (tw->tail[slot] == LH_TW_NIL)
		tw->head[slot] = id;
	else
		tw->next[tw->tail[slot]] = id;
	tw->tail[slot] = id;
	tw->bitmap[slot / 64] |= 1ULL << (slot % 64);
	tw->count++;
}

/* Next non-empty slot at or after slot `from` (circular), or -1 */
static int64_t next_slot(const struct lh_twheel *tw, uint32_t from)
{
	uint32_t words = tw->nslots / 64, w = from / 64, i;
	uint64_t bits = tw->bitmap[w] & (~0ULL << (from % 64));

	for (i = 0; i <= words; i++) {
		if (bits)
			return (int64_t)w * 64 + __builtin_ctzll(bits);
		w = (w + 1) % words;
		bits = tw->bitmap[w];
	}
	return -1;
}

/* Pop the due items of one slot, keeping the rest in order */
static uint32_t pop_slot(struct lh_twheel *tw, uint32_t slot, uint64_t now, uint32_t *out,
			 uint32_t max)
{
	uint32_t id = tw->head[slot], prev = LH_TW_NIL, n = 0, nx;

	while (id != LH_TW_NIL && n < max) {
		nx = tw->next[id];
		if (tw->when[id] <= now) {
			out[n++] = id;
			if (prev == LH_TW_NIL)
				tw->head[slot] = nx;
			else
				tw->next[prev] = nx;
			if (tw->tail[slot] == id)
				tw->tail[slot] = prev;
		} else {
			prev = id;
		}
		id = nx;
	}
	if (tw->head[slot] == LH_TW_NIL)
		tw->bitmap[slot / 64] &= ~(1ULL << (slot % 64));
	tw->count -= n;
	return n;
}

uint32_t lh_tw_pop_due(struct lh_twheel *tw, uint64_t now, uint32_t *out, uint32_t max)
{
	uint64_t now_tick = now >> tw->tick_shift, tick = tw->cur_tick, span;
	uint32_t mask = tw->nslots - 1, n = 0, slot;
	int64_t s;

	if (!tw->count || now_tick < tick)
		return 0;
	span = now_tick - tick;
	if (span >= tw->nslots)
		span = tw->nslots - 1;
	/* visit non-empty slots from cur_tick to now_tick, skipping empty ones by bitmap */
	while (n < max) {
		slot = (uint32_t)(tick & mask);
		s = next_slot(tw, slot);
		if (s < 0)
			break;
		/* distance from the current slot, circular */
		tick += ((uint32_t)s - slot) & mask;
		if (tick > tw->cur_tick + span)
			break;
		n += pop_slot(tw, (uint32_t)s, now, out + n, max - n);
		if (n >= max)
			break;
		tick++;
	}
	/* everything before now_tick is done unless we stopped for lack of room */
	if (n < max)
		tw->cur_tick = now_tick;
	else if (tick > tw->cur_tick)
		tw->cur_tick = tick;
	return n;
}

uint64_t lh_tw_next_due(const struct lh_twheel *tw)
{
	uint32_t mask = tw->nslots - 1, slot, id, visited = 0;
	uint64_t tick = tw->cur_tick, best = UINT64_MAX, slot_end;
	int64_t s;

	if (!tw->count)
		return UINT64_MAX;
	while (visited <= tw->nslots) {
		slot = (uint32_t)(tick & mask);
		s = next_slot(tw, slot);
		if (s < 0)
			break;
		visited += (((uint32_t)s - slot) & mask) + 1;
		tick += ((uint32_t)s - slot) & mask;
		slot_end = (tick + 1) << tw->tick_shift;
		for (id = tw->head[s]; id != LH_TW_NIL; id = tw->next[id])
			if (tw->when[id] < best)
				best = tw->when[id];
		/* an item of this turn is the earliest of all; else look further */
		if (best < slot_end)
			return best;
		tick++;
	}
	return best;
}
