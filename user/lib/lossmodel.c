// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loss models with sch_netem's semantics (see lossmodel.h), their parser and
 * the closed forms of their long-run loss rate and mean burst length, which
 * the tests compare measurements against.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lossmodel.h"

#define LH_PSN_MAX_ENTRIES (1U << 20)

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
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

int lh_parse_percent(const char *s, double *p)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || strcmp(end, "%") != 0 || !isfinite(v) || v < 0 || v > 100)
		return -EINVAL;
	*p = v / 100;
	return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

#define MAX_WORDS 8

static int split_words(char *s, char **w)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_WORDS)
			return -1;
		w[n++] = t;
	}
	return n;
}

/* Parse up to max percentages from w[0..n) into u32 thresholds */
static int parse_probs(char **w, int n, int max, uint32_t *out, const char *const *names, char *err,
		       size_t errlen)
{
	double p;
	int i;

	if (n > max)
		return fail(err, errlen, "too many values after %s", names[0]);
	for (i = 0; i < n; i++) {
		if (lh_parse_percent(w[i], &p))
			return fail(err, errlen,
				    "%s: '%s' is not a percentage (write e.g. 1%% or 0.5%%)",
				    names[i], w[i]);
		out[i] = lh_prob_to_u32(p);
	}
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || end == s || *end || s[0] == '-') ? -EINVAL : 0;
}

static int parse_psn_list(char *list, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	struct lh_psn_range *r = NULL, *nr;
	unsigned int n = 0;
	uint64_t total = 0, qpn, a, b;
	char *save = NULL, *item, *colon, *dash;

	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		qpn = LH_PSN_ANY_QP;
		colon = strchr(item, ':');
		if (colon) {
			*colon = 0;
			if (strcmp(item, "*") == 0)
				qpn = LH_PSN_ANY_QP;
			else if (parse_u64(item, &qpn) || qpn > 0xffffff)
				goto bad;
			item = colon + 1;
		}
		dash = strchr(item, '-');
		if (dash)
			*dash = 0;
		if (parse_u64(item, &a) || a > 0xffffff)
			goto bad;
		b = a;
		if (dash && (parse_u64(dash + 1, &b) || b > 0xffffff || b < a))
			goto bad;
		total += b - a + 1;
		if (total > LH_PSN_MAX_ENTRIES) {
			free(r);
			return fail(err, errlen, "psn: more than %u PSNs listed",
				    LH_PSN_MAX_ENTRIES);
		}
		nr = realloc(r, (n + 1) * sizeof(*r));
		if (!nr) {
			free(r);
			return -ENOMEM;
		}
		r = nr;
		r[n].qpn = (uint32_t)qpn;
		r[n].first = (uint32_t)a;
		r[n].last = (uint32_t)b;
		n++;
	}
	if (!n) {
		free(r);
		return fail(err, errlen, "psn: empty list");
	}
	spec->psn.ranges = r;
	spec->psn.nr = n;
	return 0;
bad:
	free(r);
	return fail(err, errlen,
		    "psn: bad item (want [QPN:]PSN[-PSN], QPN and PSN < 2^24, QPN * for any)");
}

/* random P% [CORR%], or just P%: w[0] is "random" or the percentage */
static int parse_random(char **w, int nw, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	static const char *const names[] = {"random", "correlation"};
	int off = strcmp(w[0], "random") == 0 ? 1 : 0;
	uint32_t v[2] = {0};
	int ret;

	if (nw - off < 1)
		return fail(err, errlen, "random: missing percentage");
	ret = parse_probs(w + off, nw - off, 2, v, names, err, errlen);
	if (ret)
		return ret;
	spec->kind = LH_LOSS_RANDOM;
	spec->random.p = v[0];
	spec->random.corr = nw - off > 1 ? v[1] : 0;
	return 0;
}

/* gemodel P% [R% [1-H% [1-K%]]] */
static int parse_gemodel(char **w, int nw, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	static const char *const names[] = {"gemodel p", "r", "1-h", "1-k"};
	uint32_t v[4] = {0};
	int ret;

	if (nw < 2)
		return fail(err, errlen, "gemodel: missing p");
	ret = parse_probs(w + 1, nw - 1, 4, v, names, err, errlen);
	if (ret)
		return ret;
	/* iproute2's defaults: r = 1 - p, 1-h = 100 %, 1-k = 0 */
	spec->kind = LH_LOSS_GEMODEL;
	spec->ge.p = v[0];
	spec->ge.r = nw > 2 ? v[1] : lh_prob_to_u32(1 - lh_u32_to_prob(v[0]));
	spec->ge.h = nw > 3 ? UINT32_MAX - v[2] : 0;
	spec->ge.k1 = nw > 4 ? v[3] : 0;
	return 0;
}

/* state P13% [P31% [P32% [P23% [P14%]]]] */
static int parse_state(char **w, int nw, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	static const char *const names[] = {"state p13", "p31", "p32", "p23", "p14"};
	uint32_t v[5] = {0};
	int ret;

	if (nw < 2)
		return fail(err, errlen, "state: missing p13");
	ret = parse_probs(w + 1, nw - 1, 5, v, names, err, errlen);
	if (ret)
		return ret;
	/* iproute2's defaults: p31 = 1 - p13, p32 = 0, p23 = 100 %, p14 = 0 */
	spec->kind = LH_LOSS_STATE;
	spec->gi.p13 = v[0];
	spec->gi.p31 = nw > 2 ? v[1] : lh_prob_to_u32(1 - lh_u32_to_prob(v[0]));
	spec->gi.p32 = nw > 3 ? v[2] : 0;
	spec->gi.p23 = nw > 4 ? v[3] : UINT32_MAX;
	spec->gi.p14 = nw > 5 ? v[4] : 0;
	if ((uint64_t)spec->gi.p13 + spec->gi.p14 > UINT32_MAX ||
	    (uint64_t)spec->gi.p31 + spec->gi.p32 > UINT32_MAX)
		return fail(err, errlen, "state: p13 + p14 and p31 + p32 must not exceed 100%%");
	return 0;
}

/* every N [K] */
static int parse_every(char **w, int nw, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	uint64_t n, k = 0;

	if (nw < 2 || nw > 3 || parse_u64(w[1], &n) || n == 0)
		return fail(err, errlen, "every: want 'every N [K]' with N >= 1");
	if (nw == 3 && parse_u64(w[2], &k))
		return fail(err, errlen, "every: K must be a number");
	spec->kind = LH_LOSS_EVERY;
	spec->every.n = n;
	spec->every.k = k % n;
	return 0;
}

/* psn [QPN:]PSN[-PSN][,...] [times T] */
static int parse_psn(char **w, int nw, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	uint64_t times = 1;

	if (nw != 2 && !(nw == 4 && strcmp(w[2], "times") == 0))
		return fail(err, errlen, "psn: want 'psn [QPN:]PSN[-PSN][,...] [times T]'");
	if (nw == 4 && (parse_u64(w[3], &times) || times == 0 || times > UINT32_MAX))
		return fail(err, errlen, "psn: times must be >= 1");
	spec->kind = LH_LOSS_PSN;
	spec->psn.times = (uint32_t)times;
	return parse_psn_list(w[1], spec, err, errlen);
}

/* The models named by their first word (random also by a bare percentage) */
static const struct {
	const char *name;
	int (*parse)(char **w, int nw, struct lh_loss_spec *spec, char *err, size_t errlen);
} models[] = {
	{"gemodel", parse_gemodel},
	{"state", parse_state},
	{"every", parse_every},
	{"psn", parse_psn},
};

int lh_loss_parse(const char *text, struct lh_loss_spec *spec, char *err, size_t errlen)
{
	char buf[4096], *w[MAX_WORDS];
	size_t len;
	int nw;

	memset(spec, 0, sizeof(*spec));
	len = text ? strlen(text) : sizeof(buf);
	if (len >= sizeof(buf))
		return fail(err, errlen, "loss spec missing or too long");
	memcpy(buf, text, len + 1);
	nw = split_words(buf, w);
	if (nw < 0)
		return fail(err, errlen, "loss spec '%s': too many words", text);
	if (nw == 0)
		return fail(err, errlen, "empty loss spec");

	if (strcmp(w[0], "none") == 0 && nw == 1) {
		spec->kind = LH_LOSS_NONE;
		return 0;
	}
	if (strcmp(w[0], "random") == 0 || strchr(w[0], '%'))
		return parse_random(w, nw, spec, err, errlen);
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (strcmp(w[0], models[i].name) == 0)
			return models[i].parse(w, nw, spec, err, errlen);
	return fail(err, errlen,
		    "unknown loss model '%s' (random, gemodel, state, every, psn, none)", w[0]);
}

void lh_loss_spec_free(struct lh_loss_spec *spec)
{
	if (spec->kind == LH_LOSS_PSN) {
		free(spec->psn.ranges);
		spec->psn.ranges = NULL;
		spec->psn.nr = 0;
	}
}

/* A percentage printed so that it parses back to the same u32 */
static int pct(char *b, size_t len, uint32_t v)
{
	return snprintf(b, len, "%.7g%%", lh_u32_to_prob(v) * 100);
}

void lh_loss_format(const struct lh_loss_spec *s, char *buf, size_t len)
{
	char a[5][32];
	size_t off;
	unsigned int i;

	switch (s->kind) {
	case LH_LOSS_NONE:
		snprintf(buf, len, "none");
		break;
	case LH_LOSS_RANDOM:
		pct(a[0], sizeof(a[0]), s->random.p);
		pct(a[1], sizeof(a[1]), s->random.corr);
		if (s->random.corr)
			snprintf(buf, len, "random %s %s", a[0], a[1]);
		else
			snprintf(buf, len, "random %s", a[0]);
		break;
	case LH_LOSS_GEMODEL:
		pct(a[0], sizeof(a[0]), s->ge.p);
		pct(a[1], sizeof(a[1]), s->ge.r);
		pct(a[2], sizeof(a[2]), UINT32_MAX - s->ge.h);
		pct(a[3], sizeof(a[3]), s->ge.k1);
		snprintf(buf, len, "gemodel %s %s %s %s", a[0], a[1], a[2], a[3]);
		break;
	case LH_LOSS_STATE:
		pct(a[0], sizeof(a[0]), s->gi.p13);
		pct(a[1], sizeof(a[1]), s->gi.p31);
		pct(a[2], sizeof(a[2]), s->gi.p32);
		pct(a[3], sizeof(a[3]), s->gi.p23);
		pct(a[4], sizeof(a[4]), s->gi.p14);
		snprintf(buf, len, "state %s %s %s %s %s", a[0], a[1], a[2], a[3], a[4]);
		break;
	case LH_LOSS_EVERY:
		snprintf(buf, len, "every %llu %llu", (unsigned long long)s->every.n,
			 (unsigned long long)s->every.k);
		break;
	case LH_LOSS_PSN:
		off = (size_t)snprintf(buf, len, "psn ");
		for (i = 0; i < s->psn.nr && off < len; i++) {
			const struct lh_psn_range *r = &s->psn.ranges[i];

			if (r->qpn == LH_PSN_ANY_QP)
				off += (size_t)snprintf(buf + off, len - off, "%s*:%u",
							i ? "," : "", r->first);
			else
				off += (size_t)snprintf(buf + off, len - off, "%s0x%x:%u",
							i ? "," : "", r->qpn, r->first);
			if (off < len && r->last != r->first)
				off += (size_t)snprintf(buf + off, len - off, "-%u", r->last);
		}
		if (off < len)
			snprintf(buf + off, len - off, " times %u", s->psn.times);
		break;
	}
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
