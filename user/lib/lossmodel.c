// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loss models with sch_netem's semantics (see lossmodel.h): the seedable
 * PRNG, each model's decision per packet, and the closed forms of their
 * long-run loss rate and mean burst length, which the tests compare
 * measurements against. Their text form is lossmodel_text.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lossmodel.h"

static uint64_t splitmix64(uint64_t *x)
{
	return lh_mix64(*x += 0x9e3779b97f4a7c15ULL);
}

void lh_prng_seed(struct lh_prng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t lh_prng_next(struct lh_prng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double lh_prng_double(struct lh_prng *r)
{
	return (double)(lh_prng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t lh_seed_mix(uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);

	return splitmix64(&x);
}

/* The same arithmetic as sch_netem's get_crandom() */
uint32_t lh_crandom_next(struct lh_crandom *c, struct lh_prng *r)
{
	uint64_t value, rho;
	uint32_t answer;

	if (c->rho == 0)
		return lh_prng_u32(r);
	value = lh_prng_u32(r);
	rho = (uint64_t)c->rho + 1;
	answer = (uint32_t)((value * ((1ULL << 32) - rho) + (uint64_t)c->last * rho) >> 32);
	c->last = answer;
	return answer;
}

uint32_t lh_prob_to_u32(double p)
{
	if (p <= 0)
		return 0;
	if (p >= 1)
		return UINT32_MAX;
	return (uint32_t)rint(p * UINT32_MAX);
}

double lh_u32_to_prob(uint32_t v)
{
	return (double)v / UINT32_MAX;
}

/* Stationary loss rate and mean burst of the 4-state chain (see loss_4state()) */
static void gi_closed_form(const struct lh_loss_spec *s, double *rate, double *burst)
{
	double p13 = lh_u32_to_prob(s->gi.p13), p31 = lh_u32_to_prob(s->gi.p31);
	double p32 = lh_u32_to_prob(s->gi.p32), p23 = lh_u32_to_prob(s->gi.p23);
	double p14 = lh_u32_to_prob(s->gi.p14);
	double pi1, pi2, pi3, pi4, entries;

	*rate = *burst = NAN;
	if (p31 <= 0 || (p32 > 0 && p23 <= 0))
		return;
	/* balance: pi3 p31 = pi1 p13, pi2 p23 = pi3 p32, pi4 = pi1 p14 */
	pi1 = 1 / (1 + p14 + p13 / p31 + (p32 > 0 ? p13 * p32 / (p31 * p23) : 0));
	pi3 = pi1 * p13 / p31;
	pi2 = p32 > 0 ? pi3 * p32 / p23 : 0;
	pi4 = pi1 * p14;
	*rate = pi3 + pi4;
	/* a burst starts on entering 3 (geometric, mean 1/(p31+p32)) or 4 (length 1) */
	entries = pi1 * p13 + pi2 * p23 + pi4;
	if (entries > 0)
		*burst = *rate / entries;
}

double lh_loss_expected_rate(const struct lh_loss_spec *s)
{
	double p, r, rate, burst;

	switch (s->kind) {
	case LH_LOSS_NONE:
		return 0;
	case LH_LOSS_RANDOM:
		return lh_u32_to_prob(s->random.p);
	case LH_LOSS_GEMODEL:
		p = lh_u32_to_prob(s->ge.p);
		r = lh_u32_to_prob(s->ge.r);
		if (p + r <= 0)
			return lh_u32_to_prob(s->ge.k1);
		return (r * lh_u32_to_prob(s->ge.k1) + p * (1 - lh_u32_to_prob(s->ge.h))) / (p + r);
	case LH_LOSS_STATE:
		gi_closed_form(s, &rate, &burst);
		return rate;
	case LH_LOSS_EVERY:
		return 1.0 / (double)s->every.n;
	case LH_LOSS_PSN:
		break;
	}
	return NAN;
}

double lh_loss_expected_burst(const struct lh_loss_spec *s)
{
	double rate, burst, p;

	switch (s->kind) {
	case LH_LOSS_RANDOM:
		p = lh_u32_to_prob(s->random.p);
		return s->random.corr || p >= 1 ? NAN : 1 / (1 - p);
	case LH_LOSS_GEMODEL:
		/* only when the states are pure: good never loses, bad always does */
		if (s->ge.k1 || s->ge.h || !s->ge.r)
			return NAN;
		return 1 / lh_u32_to_prob(s->ge.r);
	case LH_LOSS_STATE:
		gi_closed_form(s, &rate, &burst);
		return burst;
	case LH_LOSS_EVERY:
		return s->every.n == 1 ? NAN : 1;
	default:
		return NAN;
	}
}

/* ---- explicit (QPN, PSN) list: open addressing, linear probing ---- */

struct lh_psn_entry {
	uint64_t key; /* 0: empty; else 1 << 63 | qpn << 24 | psn (qpn 0xffffff+1 for any) */
	uint32_t left; /* transmissions still to drop */
};

static uint64_t psn_key(uint32_t qpn, uint32_t psn)
{
	uint64_t q = qpn == LH_PSN_ANY_QP ? 0x1000000ULL : qpn;

	return (1ULL << 63) | (q << 24) | psn;
}

static uint32_t psn_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key;
}

static struct lh_psn_entry *psn_slot(struct lh_loss_state *st, uint64_t key, bool insert)
{
	uint32_t i = psn_hash(key) & st->table_mask;

	for (;; i = (i + 1) & st->table_mask) {
		struct lh_psn_entry *e = &st->table[i];

		if (e->key == key)
			return e;
		if (!e->key) {
			if (!insert)
				return NULL;
			e->key = key;
			return e;
		}
	}
}

int lh_loss_state_init(struct lh_loss_state *st, const struct lh_loss_spec *spec, uint64_t seed)
{
	uint64_t total = 0;
	uint32_t size = 16, psn;
	unsigned int i;

	memset(st, 0, sizeof(*st));
	st->spec = *spec;
	lh_prng_seed(&st->prng, seed);
	switch (spec->kind) {
	case LH_LOSS_RANDOM:
		st->corr.rho = spec->random.corr;
		st->corr.last = lh_prng_u32(&st->prng);
		break;
	case LH_LOSS_GEMODEL: /* state 1: good */
	case LH_LOSS_STATE: /* state 1: TX in gap period */
		st->clg_state = 1;
		break;
	case LH_LOSS_PSN:
		for (i = 0; i < spec->psn.nr; i++)
			total += spec->psn.ranges[i].last - spec->psn.ranges[i].first + 1;
		while (size < 2 * total)
			size <<= 1;
		st->table = calloc(size, sizeof(*st->table));
		if (!st->table)
			return -ENOMEM;
		st->table_mask = size - 1;
		for (i = 0; i < spec->psn.nr; i++) {
			const struct lh_psn_range *r = &spec->psn.ranges[i];

			if (r->qpn == LH_PSN_ANY_QP)
				st->any_qp = true;
			for (psn = r->first; psn <= r->last; psn++)
				psn_slot(st, psn_key(r->qpn, psn), true)->left = spec->psn.times;
		}
		break;
	default:
		break;
	}
	return 0;
}

void lh_loss_state_free(struct lh_loss_state *st)
{
	free(st->table);
	st->table = NULL;
}

/* sch_netem's loss_gilb_ell(): the state before the transition decides */
static bool loss_gemodel(struct lh_loss_state *st)
{
	const struct lh_loss_spec *s = &st->spec;

	if (st->clg_state == 1) {
		if (lh_prng_u32(&st->prng) < s->ge.p)
			st->clg_state = 2;
		return lh_prng_u32(&st->prng) < s->ge.k1;
	}
	if (lh_prng_u32(&st->prng) < s->ge.r)
		st->clg_state = 1;
	return lh_prng_u32(&st->prng) > s->ge.h;
}

/*
 * sch_netem's loss_4state(): 1 TX in gap, 2 TX in burst, 3 lost in burst,
 * 4 lost in gap (isolated); the state names the outcome of the last packet.
 */
static bool loss_4state(struct lh_loss_state *st)
{
	const struct lh_loss_spec *s = &st->spec;
	uint32_t rnd = lh_prng_u32(&st->prng);

	switch (st->clg_state) {
	case 1:
		if (rnd < s->gi.p14) {
			st->clg_state = 4;
			return true;
		}
		if ((uint64_t)rnd < (uint64_t)s->gi.p13 + s->gi.p14) {
			st->clg_state = 3;
			return true;
		}
		return false;
	case 2:
		if (rnd < s->gi.p23) {
			st->clg_state = 3;
			return true;
		}
		return false;
	case 3:
		if (rnd < s->gi.p32) {
			st->clg_state = 2;
			return false;
		}
		if ((uint64_t)rnd < (uint64_t)s->gi.p31 + s->gi.p32) {
			st->clg_state = 1;
			return false;
		}
		return true;
	default:
		st->clg_state = 1;
		return false;
	}
}

static bool loss_psn(struct lh_loss_state *st, const struct lh_loss_pkt *pkt)
{
	struct lh_psn_entry *e;

	if (!pkt->roce)
		return false;
	e = psn_slot(st, psn_key(pkt->qpn, pkt->psn), false);
	if ((!e || !e->left) && st->any_qp)
		e = psn_slot(st, psn_key(LH_PSN_ANY_QP, pkt->psn), false);
	if (!e || !e->left)
		return false;
	/* only the first `times` transmissions: a retransmission must get through */
	e->left--;
	return true;
}

bool lh_loss_event(struct lh_loss_state *st, const struct lh_loss_pkt *pkt)
{
	bool drop = false;

	st->seen++;
	switch (st->spec.kind) {
	case LH_LOSS_NONE:
		break;
	case LH_LOSS_RANDOM:
		/* as netem: 0 never drops, ~0 always */
		drop = st->spec.random.p &&
		       st->spec.random.p >= lh_crandom_next(&st->corr, &st->prng);
		break;
	case LH_LOSS_GEMODEL:
		drop = loss_gemodel(st);
		break;
	case LH_LOSS_STATE:
		drop = loss_4state(st);
		break;
	case LH_LOSS_EVERY:
		st->count++;
		drop = st->count % st->spec.every.n == st->spec.every.k;
		break;
	case LH_LOSS_PSN:
		drop = loss_psn(st, pkt);
		break;
	}
	if (drop) {
		st->dropped++;
		if (!st->last_dropped)
			st->bursts++;
	}
	st->last_dropped = drop;
	return drop;
}
