// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * When a frame leaves: the bottleneck (rate, finite buffer, tail drop), then
 * the propagation delay with its jitter, and netem's reordering.
 */
#include <math.h>

#include "emulator_int.h"

uint64_t queue_limit(const struct dir_cfg *c)
{
	uint64_t q;

	if (c->queue_bytes)
		return c->queue_bytes;
	q = (uint64_t)((double)c->rate_bps * DEFAULT_QUEUE_TIME_NS / 8e9);
	return q < MIN_QUEUE_BYTES ? MIN_QUEUE_BYTES : q;
}

static int64_t jitter_sample(struct dir *d)
{
	const struct dir_cfg *c = &d->cfg;
	double u1, u2;

	if (!c->jitter_ns)
		return 0;
	if (c->jitter_dist == JITTER_NORMAL) {
		/* Box-Muller */
		u1 = lh_prng_double(&d->prng);
		u2 = lh_prng_double(&d->prng);
		if (u1 < 1e-300)
			u1 = 1e-300;
		return (int64_t)(sqrt(-2 * log(u1)) * cos(2 * M_PI * u2) * (double)c->jitter_ns);
	}
	/* as netem's tabledist() without a table: uniform in [-jitter, +jitter) */
	return (int64_t)(lh_prng_next(&d->prng) % (2 * c->jitter_ns)) - (int64_t)c->jitter_ns;
}

/*
 * Put one frame on the wire: through the bottleneck (tail drop when its
 * buffer is full), then the propagation delay. Returns false if dropped.
 */
bool schedule(struct dir *d, uint32_t slot, uint32_t len, uint64_t now, bool matched,
	      uint64_t stall_ns)
{
	const struct dir_cfg *c = &d->cfg;
	uint64_t t = now, start;
	int64_t delay;
	bool reorder = false;

	if (c->rate_bps) {
		start = d->link_free_at > now ? d->link_free_at : now;
		if ((double)(start - now) * (double)c->rate_bps / 8e9 + len >
		    (double)queue_limit(c)) {
			STAT_ADD(d->st.drop_queue, 1);
			return false;
		}
		if (start - now > d->st.backlog_max_ns)
			STAT_ADD(d->st.backlog_max_ns, start - now - d->st.backlog_max_ns);
		d->link_free_at =
			start +
			((uint64_t)(len + (uint32_t)c->overhead) * 8000000000ULL) / c->rate_bps;
		t = d->link_free_at;
	}
	/* netem: past the gap, a frame chosen with probability reorder skips the delay */
	if (matched && c->reorder_p) {
		if (d->reorder_counter + 1 >= c->reorder_gap &&
		    c->reorder_p >= lh_crandom_next(&d->reorder_c, &d->prng)) {
			reorder = true;
			d->reorder_counter = 0;
		} else {
			d->reorder_counter++;
		}
	}
	if (reorder) {
		STAT_ADD(d->st.reordered, 1);
	} else {
		delay = (int64_t)c->delay_ns + jitter_sample(d);
		t += (delay > 0 ? (uint64_t)delay : 0) + stall_ns;
		if (!c->jitter_reorder) {
			if (t < d->last_deliver)
				t = d->last_deliver;
			d->last_deliver = t;
		}
	}
	d->len[slot] = len;
	lh_tw_add(&d->tw, slot, t);
	STAT_ADD(d->st.inflight, 1);
	if (d->st.inflight > d->st.inflight_max)
		STAT_ADD(d->st.inflight_max, 1);
	return true;
}
