// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What RFC 2747's INTEGRITY costs the credit agent per RSVP message: ns to
 * sign and to verify a Reserve of the size longhauld sends during a transfer
 * (credit return with Accepted, TIME_VALUES), next to decoding the same
 * Reserve unsigned, measured the same way in the same process. Prints the
 * bench JSON of tests/bench/run.sh.
 *
 * Each run times every row over ITERS calls, the rows interleaved so that a
 * run's ratios compare calls made under the same conditions; a row's value
 * and ratio are medians over RUNS runs. Every call's result is checked: the
 * bench fails rather than time a refusal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "json.h"
#include "rsvp.h"
#include "rsvp_key.h"

#define RUNS 7
#define ITERS 200000
#define WARMUP 20000

enum row_id { R_DECODE, R_ENCODE, R_SIGN, R_VERIFY, R_SEND, R_RECV, R_MAX };

static const char *const row_names[R_MAX] = {
	[R_DECODE] = "decode a Reserve, unsigned (rsvp_decode, 108 bytes)",
	[R_ENCODE] = "encode a Reserve, unsigned (rsvp_encode)",
	[R_SIGN] = "sign it (rsvp_sign: HMAC-MD5 over 144 bytes, checksum)",
	[R_VERIFY] = "verify it (rsvp_verify: HMAC-MD5, constant-time compare)",
	[R_SEND] = "send side: encode with INTEGRITY + sign",
	[R_RECV] = "receive side: decode signed + verify + replay check",
};

struct bench {
	uint8_t plain[512], signed_msg[512], out[512];
	size_t plain_len, signed_len;
	struct rsvp_msg m, m_int;
	struct rsvp_key key;
	struct rsvp_replay replay;
	union lh_ip_addr sender;
	uint64_t seq;
};

static double value[R_MAX][RUNS], ratio[R_MAX][RUNS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The Reserve longhauld sends while data flows (credit_msg.c send_reserve) */
static void reserve(struct rsvp_msg *m)
{
	rsvp_msg_init(m, RSVP_MSG_CB_RESERVE);
	m->flow.family = AF_INET;
	m->flow.src.v4.s_addr = 0x0a01000a; /* any addresses: the work does not depend on them */
	m->flow.dst.v4.s_addr = 0x0a02000a;
	m->flow.dqpn = 0x11;
	m->hop.addr.v4.s_addr = 0x0a000101;
	m->hop.lih = 0;
	m->msg_id.epoch = 0x1234;
	m->msg_id.id = 77;
	m->objs |= RSVP_OBJ_TIME_VALUES;
	m->refresh_ms = 50;
	m->credit.credit = 65536;
	m->credit.limit = 262144 + 10000000;
	m->credit.has_accepted = true;
	m->credit.accepted = 10000000;
}

static int setup(struct bench *b)
{
	static const uint8_t secret[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
					   11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
					   21, 22, 23, 24, 25, 26, 27, 28, 29, 30};
	ssize_t n;

	memset(b, 0, sizeof(*b));
	if (rsvp_key_init(&b->key, 42, secret, sizeof(secret)))
		return -1;
	reserve(&b->m);
	n = rsvp_encode(&b->m, b->plain, sizeof(b->plain));
	if (n <= 0)
		return -1;
	b->plain_len = (size_t)n;
	b->m_int = b->m;
	b->m_int.objs |= RSVP_OBJ_INTEGRITY;
	n = rsvp_encode(&b->m_int, b->signed_msg, sizeof(b->signed_msg));
	if (n <= 0 || rsvp_sign(b->signed_msg, (size_t)n, &b->key, 1))
		return -1;
	b->signed_len = (size_t)n;
	b->sender.v4.s_addr = 0x0a000102;
	b->seq = 2;
	return 0;
}

/* One call of a row; false when it did not do what it must */
static bool one(struct bench *b, enum row_id r)
{
	struct rsvp_msg d;

	switch (r) {
	case R_DECODE:
		return rsvp_decode(b->plain, b->plain_len, &d, RSVP_DECODE_REQUIRE_CSUM) ==
		       RSVP_E_OK;
	case R_ENCODE:
		return rsvp_encode(&b->m, b->out, sizeof(b->out)) == (ssize_t)b->plain_len;
	case R_SIGN:
		return !rsvp_sign(b->signed_msg, b->signed_len, &b->key, b->seq++);
	case R_VERIFY:
		return rsvp_decode(b->signed_msg, b->signed_len, &b->m_int, 0) == RSVP_E_OK;
	case R_SEND:
		return rsvp_encode(&b->m_int, b->out, sizeof(b->out)) == (ssize_t)b->signed_len &&
		       !rsvp_sign(b->out, b->signed_len, &b->key, b->seq++);
	case R_RECV:
		/* the same message each time: its number, not the table's work, is made fresh */
		return rsvp_decode(b->signed_msg, b->signed_len, &d, RSVP_DECODE_REQUIRE_CSUM) ==
			       RSVP_E_OK &&
		       rsvp_verify(b->signed_msg, b->signed_len, &d, &b->key) == RSVP_E_OK &&
		       rsvp_replay_accept(&b->replay, &b->sender, d.integrity.key_id, b->seq++) ==
			       RSVP_E_OK;
	default:
		return false;
	}
}

/* R_VERIFY times rsvp_verify alone: the message decoded once, outside the loop */
static bool verify_once(struct bench *b, const struct rsvp_msg *d)
{
	return rsvp_verify(b->signed_msg, b->signed_len, d, &b->key) == RSVP_E_OK;
}

static double time_row(struct bench *b, enum row_id r, int iters)
{
	struct rsvp_msg d;
	uint64_t t0, t1;
	int i;

	if (r == R_VERIFY) {
		if (!one(b, R_VERIFY))
			return -1;
		d = b->m_int;
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			if (!verify_once(b, &d))
				return -1;
		t1 = now_ns();
		return (double)(t1 - t0) / iters;
	}
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		if (!one(b, r))
			return -1;
	t1 = now_ns();
	return (double)(t1 - t0) / iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_of(const double *v, double *spread)
{
	double sorted[RUNS];

	memcpy(sorted, v, sizeof(sorted));
	qsort(sorted, RUNS, sizeof(double), cmp_double);
	if (spread)
		*spread = sorted[RUNS / 2] > 0 ? (sorted[RUNS - 1] - sorted[0]) / sorted[RUNS / 2]
					       : 0;
	return sorted[RUNS / 2];
}

static double round_to(double v, double unit)
{
	return (double)(long long)(v / unit + 0.5) * unit;
}

static void print_json(void)
{
	struct lh_json *j = lh_json_new(stdout, true);
	char notes[512];

	snprintf(notes, sizeof(notes),
		 "RFC 2747 INTEGRITY (HMAC-MD5, user/lib/md5.c) on the Reserve longhauld sends "
		 "during a transfer: ns per message over %d calls, median of %d runs after a "
		 "warm-up; ratio to decoding the same Reserve unsigned in the same run; spread "
		 "is (max-min)/median. One core, no system calls: the agent's sendto/recvfrom "
		 "are not in it.",
		 ITERS, RUNS);
	lh_json_start_object(j);
	lh_json_string_field(j, "name", "rsvp-integrity");
	lh_json_string_field(j, "title", "RSVP INTEGRITY: the cost of signing and verifying");
	lh_json_string_field(j, "notes", notes);
	lh_json_name(j, "rows");
	lh_json_start_array(j);
	for (int r = 0; r < R_MAX; r++) {
		double spread, v = median_of(value[r], &spread);

		lh_json_start_object(j);
		lh_json_string_field(j, "case", row_names[r]);
		lh_json_string_field(j, "metric", "time per message");
		lh_json_string_field(j, "unit", "ns");
		lh_json_double_field(j, "value", round_to(v, 0.1));
		if (r == R_DECODE) {
			lh_json_name(j, "baseline");
			lh_json_null(j);
			lh_json_name(j, "ratio");
			lh_json_null(j);
		} else {
			lh_json_string_field(j, "baseline", row_names[R_DECODE]);
			lh_json_double_field(j, "ratio", round_to(median_of(ratio[r], NULL), 0.01));
		}
		lh_json_uint_field(j, "runs", RUNS);
		lh_json_double_field(j, "spread", round_to(spread, 0.01));
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
	lh_json_end_object(j);
	lh_json_free(j);
}

int main(void)
{
	struct bench *b = malloc(sizeof(*b));

	if (!b || setup(b)) {
		fprintf(stderr, "rsvp-integrity bench: cannot build the sample Reserve\n");
		return 1;
	}
	fprintf(stderr, "rsvp-integrity: Reserve %zu bytes, signed %zu bytes\n", b->plain_len,
		b->signed_len);
	for (int r = 0; r < R_MAX; r++)
		if (time_row(b, (enum row_id)r, WARMUP) < 0) {
			fprintf(stderr, "rsvp-integrity bench: %s failed\n", row_names[r]);
			return 1;
		}
	for (int run = 0; run < RUNS; run++) {
		for (int r = 0; r < R_MAX; r++) {
			value[r][run] = time_row(b, (enum row_id)r, ITERS);
			if (value[r][run] < 0) {
				fprintf(stderr, "rsvp-integrity bench: %s failed\n", row_names[r]);
				return 1;
			}
		}
		for (int r = 0; r < R_MAX; r++)
			ratio[r][run] = value[r][run] / value[R_DECODE][run];
	}
	for (int r = 0; r < R_MAX; r++)
		fprintf(stderr, "%-64s %8.1f ns  x%5.2f\n", row_names[r], median_of(value[r], NULL),
			median_of(ratio[r], NULL));
	print_json();
	free(b);
	return 0;
}
