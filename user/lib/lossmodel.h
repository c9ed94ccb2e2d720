/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Packet loss models with the semantics of Linux's sch_netem (random with
 * correlation, Gilbert-Elliott "gemodel", the 4-state GI model "state"),
 * plus two deterministic ones for tests: every N-th packet, and an explicit
 * list of (QPN, PSN) whose first transmission(s) are dropped. A seedable
 * PRNG makes every run reproducible. Used by lhwan; generic enough for any
 * user-space emulator.
 *
 * Text form (one rule), as netem's `loss` argument where netem has it:
 *   random P% [CORR%]            (or just P%)
 *   gemodel P% [R% [1-H% [1-K%]]]
 *   state P13% [P31% [P32% [P23% [P14%]]]]
 *   every N [K]                  drop packet i (1-based) when i % N == K % N
 *   psn [QPN:]PSN[-PSN][,...] [times T]
 * Probabilities need a % sign so that "1" is never read as 100 %.
 */
#ifndef LH_USER_LOSSMODEL_H
#define LH_USER_LOSSMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* splitmix64's finalizer: 64 bits mixed so that each input bit moves about half the output */
static inline uint64_t lh_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* xoshiro256** seeded through splitmix64: fast, good, reproducible */
struct lh_prng {
	uint64_t s[4];
};

void lh_prng_seed(struct lh_prng *r, uint64_t seed);
uint64_t lh_prng_next(struct lh_prng *r);
static inline uint32_t lh_prng_u32(struct lh_prng *r)
{
	return (uint32_t)(lh_prng_next(r) >> 32);
}
/* Uniform double in [0, 1) */
double lh_prng_double(struct lh_prng *r);
/* Mix a seed with a small stream number so that streams are independent */
uint64_t lh_seed_mix(uint64_t seed, uint64_t stream);

/* netem's correlated random number: next = (1 - rho) * U + rho * last */
struct lh_crandom {
	uint32_t rho;
	uint32_t last;
};
uint32_t lh_crandom_next(struct lh_crandom *c, struct lh_prng *r);

/* Probability <-> u32 threshold as iproute2 does (rint(p * UINT32_MAX)) */
uint32_t lh_prob_to_u32(double p);
double lh_u32_to_prob(uint32_t v);

/* Parse "1%", "0.25%" (a % sign is required); 0 or -EINVAL */
int lh_parse_percent(const char *s, double *p);

enum lh_loss_kind {
	LH_LOSS_NONE,
	LH_LOSS_RANDOM,
	LH_LOSS_GEMODEL,
	LH_LOSS_STATE,
	LH_LOSS_EVERY,
	LH_LOSS_PSN,
};

#define LH_PSN_ANY_QP UINT32_MAX

/* One entry of an explicit list: PSNs first..last of a QP (or any QP) */
struct lh_psn_range {
	uint32_t qpn; /* LH_PSN_ANY_QP: any destination QP */
	uint32_t first;
	uint32_t last;
};

struct lh_loss_spec {
	enum lh_loss_kind kind;
	union {
		struct {
			uint32_t p;
			uint32_t corr;
		} random;
		struct {
			uint32_t p; /* good -> bad */
			uint32_t r; /* bad -> good */
			uint32_t h; /* transmission probability in bad state (netem keeps h, the
				       user gives 1-h) */
			uint32_t k1; /* loss probability in good state (1-k) */
		} ge;
		struct {
			uint32_t p13, p31, p32, p23, p14;
		} gi;
		struct {
			uint64_t n;
			uint64_t k;
		} every;
		struct {
			struct lh_psn_range *ranges; /* owned, free with lh_loss_spec_free */
			unsigned int nr;
			uint32_t times; /* transmissions of each listed PSN to drop */
		} psn;
	};
};

/* Parse one rule; on error returns -EINVAL and writes a message into err */
int lh_loss_parse(const char *text, struct lh_loss_spec *spec, char *err, size_t errlen);
void lh_loss_spec_free(struct lh_loss_spec *spec);
/* Canonical text of a rule (what lh_loss_parse reads back) */
void lh_loss_format(const struct lh_loss_spec *spec, char *buf, size_t len);
/* Long-run loss probability the model implies (NAN for psn) */
double lh_loss_expected_rate(const struct lh_loss_spec *spec);
/* Mean length of a burst of consecutive losses the model implies (NAN if not simple) */
double lh_loss_expected_burst(const struct lh_loss_spec *spec);

/* What a model may look at in a packet */
struct lh_loss_pkt {
	bool roce; /* a RoCEv2 packet: qpn and psn are valid */
	uint32_t qpn;
	uint32_t psn;
};

struct lh_psn_entry; /* open-addressing table of listed (QPN, PSN) */

struct lh_loss_state {
	struct lh_loss_spec spec; /* a copy; psn ranges are shared with the caller's spec */
	struct lh_prng prng;
	struct lh_crandom corr;
	uint8_t clg_state; /* Markov state of gemodel / state */
	uint64_t count; /* packets offered (every N) */
	/* psn: */
	struct lh_psn_entry *table;
	uint32_t table_mask;
	bool any_qp;
	/* counters */
	uint64_t seen;
	uint64_t dropped;
	uint64_t bursts; /* runs of consecutive drops */
	bool last_dropped;
};

/* spec must outlive st (psn ranges); 0 or -errno */
int lh_loss_state_init(struct lh_loss_state *st, const struct lh_loss_spec *spec, uint64_t seed);
void lh_loss_state_free(struct lh_loss_state *st);
/* Decide for one packet; true: drop it */
bool lh_loss_event(struct lh_loss_state *st, const struct lh_loss_pkt *pkt);

#endif /* LH_USER_LOSSMODEL_H */
