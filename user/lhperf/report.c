// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf's results: message completion time statistics, the perftest-style
 * text table and the --json object (one field per counter, the same names
 * in both roles where they mean the same thing), and the exit code of a
 * summary.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "lhperf.h"

#define LINE "---------------------------------------------------------------------------------------\n"

static const char *const status_names[LHP_ST_MAX] = {
	[LHP_ST_OK] = "ok",
	[LHP_ST_LIVELOCK] = "livelock",
	[LHP_ST_QP_ERROR] = "qp_error",
	[LHP_ST_TIMEOUT] = "timeout",
	[LHP_ST_PEER_LOST] = "peer_lost",
	[LHP_ST_ERROR] = "error",
};

const char *lhp_status_name(enum lhp_status s)
{
	return (unsigned int)s < LHP_ST_MAX ? status_names[s] : "error";
}

int lhp_status_from_name(const char *s)
{
	int i;

	for (i = 0; i < LHP_ST_MAX; i++)
		if (!strcmp(s, status_names[i]))
			return i;
	return -1;
}

int lhp_exit_code(const struct lhp_summary *s)
{
	switch (s->status) {
	case LHP_ST_OK:
		return s->verified ? LHP_EXIT_OK : LHP_EXIT_VERIFY;
	case LHP_ST_LIVELOCK:
		return LHP_EXIT_LIVELOCK;
	case LHP_ST_QP_ERROR:
		return LHP_EXIT_QP_ERROR;
	case LHP_ST_TIMEOUT:
		return LHP_EXIT_TIMEOUT;
	default:
		return LHP_EXIT_ERROR;
	}
}

void lhp_fct_init(struct lhp_fct *f)
{
	memset(f, 0, sizeof(*f));
	f->rng = 0x2545f4914f6cdd1dull;
}

void lhp_fct_free(struct lhp_fct *f)
{
	free(f->sample);
	f->sample = NULL;
}

/* Exact count, mean and max; percentiles from a uniform reservoir sample */
void lhp_fct_add(struct lhp_fct *f, double us)
{
	uint32_t v = us > 4e9 ? UINT32_MAX : (uint32_t)(us + 0.5);

	f->n++;
	f->sum_us += us;
	if (us > f->max_us)
		f->max_us = us;
	if (!f->sample) {
		f->sample = malloc(sizeof(uint32_t) * LHP_FCT_SAMPLES);
		if (!f->sample)
			return;
	}
	if (f->nsample < LHP_FCT_SAMPLES) {
		f->sample[f->nsample++] = v;
	} else {
		uint64_t r;

		f->rng ^= f->rng << 13;
		f->rng ^= f->rng >> 7;
		f->rng ^= f->rng << 17;
		r = f->rng % f->n;
		if (r < LHP_FCT_SAMPLES)
			f->sample[r] = v;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile */
double lhp_fct_pct(struct lhp_fct *f, double pct)
{
	static uint32_t sorted_n;
	size_t rank;

	if (!f->nsample)
		return 0;
	if (sorted_n != f->nsample) {
		qsort(f->sample, f->nsample, sizeof(uint32_t), cmp_u32);
		sorted_n = f->nsample;
	}
	rank = (size_t)ceil(pct / 100.0 * f->nsample);
	if (rank < 1)
		rank = 1;
	return f->sample[rank - 1];
}

static const char *ev_cause(uint8_t c)
{
	return c == LHP_EV_TIMEOUT ? "timeout" : "nak";
}

static void json_drops(struct lh_json *j, const char *name, const struct lhp_rx_drops *d)
{
#define DROP_FIELD(field) lh_json_uint_field(j, #field, d->field);
	lh_json_name(j, name);
	lh_json_start_object(j);
	LHP_RX_DROPS(DROP_FIELD)
	lh_json_end_object(j);
#undef DROP_FIELD
}

static void json_events(struct lh_json *j, const char *name, const struct lhp_events *e)
{
	unsigned int i;

	lh_json_name(j, name);
	lh_json_start_array(j);
	for (i = 0; e && i < e->n; i++) {
		lh_json_start_object(j);
		lh_json_uint_field(j, "qp", e->ev[i].qp);
		lh_json_uint_field(j, "psn", e->ev[i].psn);
		if (e->ev[i].got != LHP_NO_PSN)
			lh_json_uint_field(j, "got", e->ev[i].got);
		lh_json_string_field(j, "cause", ev_cause(e->ev[i].cause));
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
}

/* Each QP's numbers and the start PSN of its data (the requester's) */
static void json_qp_list(struct lh_json *j, const struct lhp_params *p, bool client)
{
	uint32_t i;

	lh_json_name(j, "qp_list");
	lh_json_start_array(j);
	for (i = 0; p->client_psn && i < p->qps; i++) {
		lh_json_start_object(j);
		lh_json_uint_field(j, "local_qpn",
				   client ? p->client_qpn_base + i : p->server_qpn_base + i);
		lh_json_uint_field(j, "remote_qpn",
				   client ? p->server_qpn_base + i : p->client_qpn_base + i);
		lh_json_uint_field(j, "data_start_psn", p->client_psn[i]);
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
}

static double gbps(uint64_t bytes, double s)
{
	return s > 0 ? (double)bytes * 8 / s / 1e9 : 0;
}

/* The client's own: completion times, rates and the requester's counters */
static void json_client(struct lh_json *j, struct lhp_summary *s, uint64_t msgs)
{
	lh_json_double_field(j, "peak_gbps", s->peak_gbps);
	lh_json_double_field(j, "msg_rate_mpps",
			     s->elapsed_s > 0 ? (double)msgs / s->elapsed_s / 1e6 : 0);
	lh_json_name(j, "fct_us");
	lh_json_start_object(j);
	lh_json_double_field(j, "mean", s->fct.n ? s->fct.sum_us / (double)s->fct.n : 0);
	lh_json_double_field(j, "p50", lhp_fct_pct(&s->fct, 50));
	lh_json_double_field(j, "p99", lhp_fct_pct(&s->fct, 99));
	lh_json_double_field(j, "max", s->fct.max_us);
	lh_json_uint_field(j, "count", s->fct.n);
	lh_json_end_object(j);
	lh_json_uint_field(j, "messages_started", s->messages_started);
	lh_json_uint_field(j, "packets_sent", s->packets_sent);
	lh_json_uint_field(j, "retransmitted_packets", s->retransmitted);
	lh_json_uint_field(j, "naks_received", s->naks_received);
	lh_json_uint_field(j, "naks_ignored", s->naks_ignored);
	lh_json_uint_field(j, "acks_received", s->acks_received);
	lh_json_uint_field(j, "timeouts", s->timeouts);
	lh_json_uint_field(j, "rewinds", s->rewinds);
	lh_json_uint_field(j, "qp_errors", s->qp_errors);
}

/* The client's "requester" object: frames, the window's full time, drops, rewinds */
static void json_requester(struct lh_json *j, const struct lhp_port *pt,
			   const struct lhp_summary *s, const struct lhp_events *rewinds)
{
	lh_json_name(j, "requester");
	lh_json_start_object(j);
	lh_json_uint_field(j, "frames_sent", pt->frames_tx);
	lh_json_uint_field(j, "frames_refused", pt->io ? lh_pktio_tx_refused(pt->io) : 0);
	lh_json_double_field(j, "window_full_s", s->window_full_s);
	lh_json_uint_field(j, "frames_received", pt->frames_rx);
	json_drops(j, "rx_drops", &s->req_drops);
	json_events(j, "rewind_events", rewinds);
	lh_json_uint_field(j, "rewind_events_not_listed", rewinds ? rewinds->dropped : 0);
	lh_json_end_object(j);
}

/* The "responder" object: the server's own, or as the server reported them */
static void json_responder(struct lh_json *j, const struct lhp_summary *s,
			   const struct lhp_events *naks)
{
	lh_json_name(j, "responder");
	lh_json_start_object(j);
	lh_json_bool_field(j, "reported", s->have_server);
	lh_json_uint_field(j, "packets_received", s->r_packets);
	lh_json_uint_field(j, "messages", s->r_messages);
	lh_json_uint_field(j, "bytes", s->r_bytes);
	lh_json_uint_field(j, "naks_sent", s->naks_sent);
	lh_json_uint_field(j, "acks_sent", s->acks_sent);
	lh_json_uint_field(j, "out_of_sequence_drops", s->oos_drops);
	lh_json_uint_field(j, "duplicate_packets", s->dups);
	lh_json_uint_field(j, "verify_errors", s->verify_errors);
	lh_json_uint_field(j, "protocol_errors", s->protocol_errors);
	lh_json_uint_field(j, "discarded_messages", s->discarded_msgs);
	lh_json_uint_field(j, "discarded_packets", s->discarded_pkts);
	lh_json_double_field(j, "cpu_s", s->r_cpu_s);
	lh_json_double_field(j, "pps_per_core",
			     s->r_cpu_s > 0 ? (double)s->r_packets / s->r_cpu_s : 0);
	json_drops(j, "rx_drops", &s->resp_drops);
	json_events(j, "nak_events", naks);
	lh_json_uint_field(j, "nak_events_not_listed", naks ? naks->dropped : 0);
	lh_json_end_object(j);
}

/* The run as both roles describe it: status, parameters, QPs, what was delivered */
static void json_run(struct lh_json *j, const struct lhp_params *p, const struct lhp_port *pt,
		     const struct lhp_summary *s, bool client, uint64_t bytes, uint64_t msgs)
{
	lh_json_string_field(j, "role", client ? "client" : "server");
	lh_json_string_field(j, "status", lhp_status_name(s->status));
	lh_json_int_field(j, "exit_code", lhp_exit_code(s));
	lh_json_bool_field(j, "verified", s->verified);
	if (s->error[0])
		lh_json_string_field(j, "error", s->error);
	lh_json_string_field(j, "op", lhp_op_name(p->op));
	lh_json_string_field(j, "recovery", lhp_recovery_name(p->recovery));
	lh_json_string_field(j, "family", pt->family == AF_INET6 ? "ipv6" : "ipv4");
	lh_json_string_field(j, "device", pt->ifname);
	lh_json_uint_field(j, "qps", p->qps);
	lh_json_uint_field(j, "size", p->size);
	lh_json_uint_field(j, "mtu", p->mtu);
	lh_json_uint_field(j, "window", p->window);
	json_qp_list(j, p, client);
	lh_json_uint_field(j, "bytes", bytes);
	lh_json_uint_field(j, "messages", msgs);
	lh_json_double_field(j, "elapsed_s", s->elapsed_s);
	lh_json_double_field(j, "goodput_gbps", gbps(bytes, s->elapsed_s));
}

static void report_json(FILE *out, const struct lhp_opts *o, const struct lhp_params *p,
			const struct lhp_port *pt, struct lhp_summary *s,
			const struct lhp_events *naks, const struct lhp_events *rewinds)
{
	struct lh_json *j = lh_json_new(out, o->pretty);
	bool client = !o->server;
	uint64_t bytes = client ? s->bytes : s->r_bytes;
	uint64_t msgs = client ? s->messages : s->r_messages;

	lh_json_start_object(j);
	json_run(j, p, pt, s, client, bytes, msgs);
	if (client)
		json_client(j, s, msgs);
	/* responder counters: the server's own, or as the server reported them */
	lh_json_uint_field(j, "naks_sent", s->naks_sent);
	lh_json_uint_field(j, "out_of_sequence_drops", s->oos_drops);
	lh_json_uint_field(j, "icrc_errors", s->resp_drops.icrc_errors + s->req_drops.icrc_errors);
	lh_json_uint_field(j, "duplicate_packets", s->dups);
	lh_json_double_field(j, "cpu_s", s->cpu_s);
	if (client) {
		lh_json_double_field(j, "pps", s->elapsed_s > 0 ?
							(double)s->packets_sent / s->elapsed_s :
							0);
		lh_json_double_field(j, "pps_per_core",
				     s->cpu_s > 0 ? (double)s->packets_sent / s->cpu_s : 0);
		json_requester(j, pt, s, rewinds);
	}
	json_responder(j, s, naks);
	lh_json_end_object(j);
	lh_json_free(j);
}

/* The perftest-style head: the run's parameters */
static void text_params(FILE *out, const struct lhp_opts *o, const struct lhp_params *p,
			const struct lhp_port *pt, bool client)
{
	fprintf(out, LINE);
	fprintf(out, "                    %s BW Test (lhperf %s, RoCEv2 RC, rxe rules)\n",
		p->op == LHP_OP_WRITE ? "RDMA_Write" : "Send", client ? "client" : "server");
	fprintf(out, " Number of qps   : %-10u Transport type : RoCEv2 (UDP %d)\n", p->qps,
		ROCEV2_UDP_PORT);
	fprintf(out, " Connection type : RC         Recovery       : %s\n",
		p->recovery == LHP_GB0 ? "go-back-0" : "go-back-N");
	fprintf(out, " Window          : %-4u PSNs   ACK request    : every %u packets\n",
		p->window, p->ackreq_every);
	fprintf(out, " Mtu             : %u[B]    Device         : %s (%s)\n", p->mtu, pt->ifname,
		pt->family == AF_INET6 ? "IPv6" : "IPv4");
	if (client)
		fprintf(out, " TX depth        : %-10u Timeout        : %u (%.3f ms), retry %u%s\n",
			o->tx_depth, o->timeout,
			o->timeout ? (double)(4096ull << o->timeout) / 1e6 : 0.0, o->retry,
			o->retry == LHP_RETRY_INFINITE ? " (infinite)" : "");
}

/* The first 4 QPs' numbers, PSNs and WRITE targets, both ends */
static void text_qps(FILE *out, const struct lhp_params *p, const struct lhp_port *pt,
		     bool client)
{
	char local[INET6_ADDRSTRLEN] = "?", peer[INET6_ADDRSTRLEN] = "?";
	uint32_t i;

	if (pt->io) {
		inet_ntop(pt->family, &pt->local, local, sizeof(local));
		inet_ntop(pt->family, &pt->peer, peer, sizeof(peer));
	}
	fprintf(out, LINE);
	for (i = 0; i < p->qps && i < 4; i++) {
		uint32_t lq = client ? p->client_qpn_base + i : p->server_qpn_base + i;
		uint32_t rq = client ? p->server_qpn_base + i : p->client_qpn_base + i;

		fprintf(out, " local address:  QPN 0x%06x PSN 0x%06x %s\n", lq,
			client ? p->client_psn[i] : p->server_psn[i], local);
		fprintf(out, " remote address: QPN 0x%06x PSN 0x%06x RKey 0x%08x VAddr 0x%016llx %s\n",
			rq, client ? p->server_psn[i] : p->client_psn[i],
			p->server_rkey ? p->server_rkey[i] : 0,
			p->server_va ? (unsigned long long)p->server_va[i] : 0ull, peer);
	}
	if (p->qps > 4)
		fprintf(out, " ... %u QPs in all\n", p->qps);
}

/* The status, completion times and both ends' counters */
static void text_results(FILE *out, const struct lhp_params *p, struct lhp_summary *s,
			 bool client)
{
	fprintf(out, " status          : %s%s%s\n", lhp_status_name(s->status),
		s->error[0] ? " - " : "", s->error);
	fprintf(out, " verified        : %s\n", s->verified ? "yes" : "no");
	if (client) {
		fprintf(out, " FCT[usec]       : mean %.1f  p50 %.0f  p99 %.0f  max %.1f\n",
			s->fct.n ? s->fct.sum_us / (double)s->fct.n : 0, lhp_fct_pct(&s->fct, 50),
			lhp_fct_pct(&s->fct, 99), s->fct.max_us);
		fprintf(out,
			" requester       : packets %llu  retransmitted %llu  NAKs received %llu "
			"(ignored %llu)  timeouts %llu\n",
			(unsigned long long)s->packets_sent, (unsigned long long)s->retransmitted,
			(unsigned long long)s->naks_received, (unsigned long long)s->naks_ignored,
			(unsigned long long)s->timeouts);
	}
	fprintf(out,
		" responder       : packets %llu  NAKs sent %llu  out-of-sequence drops %llu  "
		"duplicates %llu  ICRC errors %llu  receive buffer drops %llu\n",
		(unsigned long long)s->r_packets, (unsigned long long)s->naks_sent,
		(unsigned long long)s->oos_drops, (unsigned long long)s->dups,
		(unsigned long long)s->resp_drops.icrc_errors,
		(unsigned long long)s->resp_drops.socket_drops);
	if (p->recovery == LHP_GB0)
		fprintf(out, " go-back-0       : %llu partial messages (%llu packets) discarded\n",
			(unsigned long long)s->discarded_msgs,
			(unsigned long long)s->discarded_pkts);
	fprintf(out, LINE);
}


static void report_text(FILE *out, const struct lhp_opts *o, const struct lhp_params *p,
			const struct lhp_port *pt, struct lhp_summary *s)
{
	bool client = !o->server;
	uint64_t bytes = client ? s->bytes : s->r_bytes;
	uint64_t msgs = client ? s->messages : s->r_messages;

	text_params(out, o, p, pt, client);
	text_qps(out, p, pt, client);
	fprintf(out, LINE);
	fprintf(out, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
	fprintf(out, " %-10llu %-14llu %-18.2f %-20.2f %.6f\n", (unsigned long long)p->size,
		(unsigned long long)(p->qps ? msgs / p->qps : 0),
		client ? s->peak_gbps : gbps(bytes, s->elapsed_s), gbps(bytes, s->elapsed_s),
		s->elapsed_s > 0 ? (double)msgs / s->elapsed_s / 1e6 : 0);
	fprintf(out, LINE);
	text_results(out, p, s, client);
}

void lhp_report(FILE *out, const struct lhp_opts *o, const struct lhp_params *p,
		const struct lhp_port *pt, struct lhp_summary *s, const struct lhp_events *naks,
		const struct lhp_events *rewinds)
{
	if (o->json)
		report_json(out, o, p, pt, s, naks, rewinds);
	else
		report_text(out, o, p, pt, s);
	fflush(out);
}

void lhp_report_setup_error(FILE *out, const struct lhp_opts *o, const char *what)
{
	struct lh_json *j;

	if (!o->json)
		return;
	j = lh_json_new(out, o->pretty);
	lh_json_start_object(j);
	lh_json_string_field(j, "role", o->server ? "server" : "client");
	lh_json_string_field(j, "status", lhp_status_name(LHP_ST_ERROR));
	lh_json_int_field(j, "exit_code", LHP_EXIT_ERROR);
	lh_json_bool_field(j, "verified", false);
	lh_json_string_field(j, "error", what);
	lh_json_end_object(j);
	lh_json_free(j);
	fflush(out);
}
