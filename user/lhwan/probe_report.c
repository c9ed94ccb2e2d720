// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the probe's receiver counts for each packet (which sequence numbers
 * came, duplicates, reordering, one-way delays) and its JSON report: loss
 * rate, bursts, delay percentiles, the rate on the wire.
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include "json.h"
#include "probe_int.h"

int rx_account(struct rx_state *s, const struct probe_opts *o, const uint8_t *bth, size_t len,
	       size_t wire_len, uint64_t rx_ns)
{
	const struct probe_hdr *h;
	uint64_t seq, count;
	uint32_t psn;
	double d;

	if (len < PROBE_BTH_LEN + sizeof(*h))
		goto foreign;
	h = (const struct probe_hdr *)(bth + PROBE_BTH_LEN);
	if (ntohl(h->magic) != PROBE_MAGIC || ntohl(h->stream) != o->stream)
		goto foreign;
	seq = be64toh(h->seq);
	count = be64toh(h->count);
	if (!s->seen) {
		if (!count || count > MAX_SEQS)
			goto foreign;
		s->count = count;
		s->seen = calloc(count, 1);
		s->psn = calloc(count, sizeof(uint32_t));
		s->delays = malloc((count < MAX_DELAYS ? count : MAX_DELAYS) * sizeof(double));
		if (!s->seen || !s->psn || !s->delays)
			return -ENOMEM;
	}
	if (seq >= s->count)
		goto foreign;
	psn = ((uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11]);
	if (s->seen[seq]) {
		s->duplicates++;
		if (s->seen[seq] < 255)
			s->seen[seq]++;
		return 0;
	}
	s->seen[seq] = 1;
	s->psn[seq] = psn;
	s->received++;
	if (s->any && seq < s->max_seq)
		s->reordered++;
	if (!s->any || seq > s->max_seq)
		s->max_seq = seq;
	if (!s->any)
		s->first_ns = rx_ns;
	s->any = true;
	s->last_ns = rx_ns;
	s->bytes += wire_len;
	s->last_bytes = wire_len;
	d = ((double)rx_ns - (double)be64toh(h->tx_ns)) / 1000.0;
	if (s->nr_delays < MAX_DELAYS)
		s->delays[s->nr_delays++] = d;
	if (s->received == 1 || d < s->dmin)
		s->dmin = d;
	if (s->received == 1 || d > s->dmax)
		s->dmax = d;
	s->dsum += d;
	return 0;
foreign:
	s->foreign++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pctl(const double *v, uint64_t n, double q)
{
	uint64_t i;

	if (!n)
		return NAN;
	i = (uint64_t)(q * (double)(n - 1) + 0.5);
	return v[i];
}

void rx_report(struct rx_state *s, const struct probe_opts *o)
{
	struct lh_json *j = lh_json_new(stdout, o->pretty);
	uint64_t lost = 0, bursts = 0, max_burst = 0, run = 0, i;
	double dur = s->any ? (double)(s->last_ns - s->first_ns) / 1e9 : 0;

	for (i = 0; i < s->count; i++) {
		if (!s->seen[i]) {
			lost++;
			run++;
			if (run == 1)
				bursts++;
			if (run > max_burst)
				max_burst = run;
		} else {
			run = 0;
		}
	}
	if (s->nr_delays)
		qsort(s->delays, s->nr_delays, sizeof(double), cmp_double);
	lh_json_start_object(j);
	lh_json_uint_field(j, "stream", o->stream);
	lh_json_uint_field(j, "expected", s->count);
	lh_json_uint_field(j, "received", s->received);
	lh_json_uint_field(j, "lost", lost);
	lh_json_double_field(j, "loss_rate", s->count ? (double)lost / (double)s->count : 0);
	lh_json_uint_field(j, "bursts", bursts);
	lh_json_double_field(j, "mean_burst", bursts ? (double)lost / (double)bursts : 0);
	lh_json_uint_field(j, "max_burst", max_burst);
	lh_json_uint_field(j, "duplicates", s->duplicates);
	lh_json_uint_field(j, "reordered", s->reordered);
	lh_json_uint_field(j, "foreign", s->foreign);
	lh_json_name(j, "delay_us");
	lh_json_start_object(j);
	lh_json_double_field(j, "min", s->received ? s->dmin : NAN);
	lh_json_double_field(j, "avg", s->received ? s->dsum / (double)s->received : NAN);
	lh_json_double_field(j, "p50", pctl(s->delays, s->nr_delays, 0.5));
	lh_json_double_field(j, "p99", pctl(s->delays, s->nr_delays, 0.99));
	lh_json_double_field(j, "max", s->received ? s->dmax : NAN);
	lh_json_end_object(j);
	lh_json_double_field(j, "seconds", dur);
	lh_json_uint_field(j, "wire_bytes", s->bytes);
	/* the first frame's bits were on the wire before the first time stamp */
	lh_json_double_field(j, "rate_bps",
			     dur > 0 ? (double)(s->bytes - s->last_bytes) * 8 / dur : 0);
	if (o->list_lost) {
		lh_json_name(j, "lost_seqs");
		lh_json_start_array(j);
		for (i = 0; i < s->count; i++)
			if (!s->seen[i])
				lh_json_uint(j, i);
		lh_json_end_array(j);
		lh_json_name(j, "received_psns");
		lh_json_start_array(j);
		for (i = 0; i < s->count; i++)
			if (s->seen[i])
				lh_json_uint(j, s->psn[i]);
		lh_json_end_array(j);
	}
	lh_json_end_object(j);
	lh_json_free(j);
}
