// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One direction of the emulator set up and torn down: frame slots, timing wheel, model states */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "emulator_int.h"

int dir_init(struct emu *e, struct dir *d, int id, uint64_t now)
{
	struct dir_cfg *c = &d->cfg;
	unsigned int mtu, i;
	uint64_t horizon;
	size_t bytes;
	int err;

	d->id = id;
	d->rx = &e->port[id == DIR_A2B ? 0 : 1];
	d->tx = &e->port[id == DIR_A2B ? 1 : 0];
	mtu = d->rx->mtu > d->tx->mtu ? d->rx->mtu : d->tx->mtu;
	/* Ethernet header and two VLAN tags beyond the MTU, a cache line multiple */
	d->slot_size = ((size_t)mtu + 14 + 8 + 63) & ~(size_t)63;
	if (d->slot_size < 2048)
		d->slot_size = 2048;
	d->nr_slots = e->pool;
	bytes = d->slot_size * d->nr_slots;
	/* only touched pages become resident; freed slots are reused first (LIFO) */
	d->slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (d->slots == MAP_FAILED)
		return -ENOMEM;
	d->len = calloc(d->nr_slots, sizeof(uint32_t));
	d->free_stack = malloc(d->nr_slots * sizeof(uint32_t));
	if (!d->len || !d->free_stack)
		return -ENOMEM;
	for (i = 0; i < d->nr_slots; i++)
		d->free_stack[i] = d->nr_slots - 1 - i;
	d->nr_free = d->nr_slots;

	horizon = c->delay_ns + 2 * c->jitter_ns + 1000000;
	for (i = 0; i < c->nr_stall; i++)
		horizon += c->stall_ns[i];
	if (c->rate_bps)
		horizon += queue_limit(c) * 8000000000ULL / c->rate_bps;
	err = lh_tw_init(&d->tw, TICK_NS, horizon, d->nr_slots, now);
	if (err)
		return err;

	lh_prng_seed(&d->prng, lh_seed_mix(e->seed, 100 + (uint64_t)id));
	d->dup_c.rho = c->dup_corr;
	d->reorder_c.rho = c->reorder_corr;
	for (i = 0; i < c->nr_loss; i++) {
		err = lh_loss_state_init(&d->loss[i], &c->loss[i],
					 lh_seed_mix(e->seed, (uint64_t)id * 16 + i));
		if (err)
			return err;
		if (c->loss[i].kind == LH_LOSS_PSN)
			d->need_parse = true;
	}
	for (i = 0; i < c->nr_stall; i++) {
		err = lh_loss_state_init(&d->stall[i], &c->stall[i],
					 lh_seed_mix(e->seed, 1000 + (uint64_t)id * 16 + i));
		if (err)
			return err;
		if (c->stall[i].kind == LH_LOSS_PSN)
			d->need_parse = true;
	}
	if (e->match_roce)
		d->need_parse = true;
	d->link_free_at = now;
	d->last_deliver = now;
	return 0;
}

/* What dir_init() allocated for the models and the wheel, and the rules' specs */
void dir_free(struct dir *d)
{
	unsigned int i;

	for (i = 0; i < d->cfg.nr_loss; i++) {
		lh_loss_state_free(&d->loss[i]);
		lh_loss_spec_free(&d->cfg.loss[i]);
	}
	for (i = 0; i < d->cfg.nr_stall; i++) {
		lh_loss_state_free(&d->stall[i]);
		lh_loss_spec_free(&d->cfg.stall[i]);
	}
	lh_tw_free(&d->tw);
}
