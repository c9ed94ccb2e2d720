// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The text form of a loss rule (lossmodel.h): parsed into a spec, one
 * parser per model with iproute2's defaults, and a spec written back in the
 * canonical form that parses to the same spec.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lossmodel.h"

#define LH_PSN_MAX_ENTRIES (1U << 20)

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
