/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lhperf internals: options, the run parameters the client hands the server
 * over the TCP side channel, the frame port both roles send and receive
 * through, the requester (client) and responder (server) QP state, counters
 * and the run summary that the report prints.
 *
 * Packet sequence numbers are tracked as 64-bit counts from each QP's start
 * PSN ("seq"); the 24-bit wire PSN is (start + seq) mod 2^24. Windows are far
 * below 2^23, so a wire PSN maps back to a seq unambiguously around a known
 * seq with psn_diff().
 *
 * The files, one behaviour each:
 *   main.c         the program's entry
 *   options.c      the command line: the option table, usage, role checks
 *   ctrl.c         the TCP side channel and its messages (parameters, results)
 *   port.c         the interface: next hop, packet socket, frames out, rxe_recv's checks
 *   requester*.c   the client's QPs (requester_int.h says which file holds what)
 *   responder.c    the server's QPs
 *   pattern.c      the payload every byte is checked against
 *   report.c       completion times, the text table and the JSON object, exit codes
 *   util.c         randomness, CPU time, names, the event logs
 */
#ifndef LHPERF_H
#define LHPERF_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "opts.h"
#include "pkt.h"
#include "pktio.h"

#define LHP_VERSION 1
#define LHP_DEFAULT_PORT 18515 /* perftest's default */
#define LHP_MAX_QPS 4096
#define LHP_MAX_BATCH 256
#define LHP_FRAME_CAP (4096 + 256)
#define LHP_PKEY ROCE_DEFAULT_PKEY
#define LHP_EVENTS_MAX 1024 /* NAK and rewind events kept for the report */
#define LHP_FCT_SAMPLES (1u << 20)
#define LHP_RETRY_INFINITE 7 /* as rxe: a retry count of 7 never runs out */
#define LHP_PING_NS (500ull * 1000 * 1000) /* the side channel's heartbeat during a run */
#define LHP_CTRL_WAIT_MS 10000 /* the most a side-channel answer may take (setup, results) */

/* Exit codes: each failure class has its own */
enum lhp_exit {
	LHP_EXIT_OK = 0,
	LHP_EXIT_ERROR = 1, /* setup failure, peer lost, I/O error */
	LHP_EXIT_USAGE = 2,
	LHP_EXIT_LIVELOCK = 3,
	LHP_EXIT_QP_ERROR = 4,
	LHP_EXIT_TIMEOUT = 5,
	LHP_EXIT_VERIFY = 6, /* the transfer ended but the receiver's check failed */
};

enum lhp_status {
	LHP_ST_OK,
	LHP_ST_LIVELOCK, /* packets keep flowing, nothing completes */
	LHP_ST_QP_ERROR, /* retries ran out or the responder refused a request */
	LHP_ST_TIMEOUT, /* nothing heard from the peer for the stall time */
	LHP_ST_PEER_LOST, /* the side channel closed or failed mid-run */
	LHP_ST_ERROR, /* local failure (interface gone, I/O error) */
	LHP_ST_MAX,
};

enum lhp_op {
	LHP_OP_WRITE,
	LHP_OP_SEND,
};

enum lhp_recovery {
	LHP_GBN, /* go-back-N as rxe */
	LHP_GB0, /* go-back-0: a gap restarts the whole message */
};

/* The command line (options.c) */
struct lhp_opts {
	bool server;
	const char *peer; /* client: server address */
	const char *bind; /* server: listen address */
	const char *dev;
	uint16_t port;
	bool json, pretty;
	int verbose;
	uint64_t listen_timeout_ns; /* server: 0 forever */
	uint64_t connect_timeout_ns; /* client */

	/* run parameters, client side */
	enum lhp_op op;
	enum lhp_recovery recovery;
	unsigned int qps;
	uint64_t size;
	unsigned int mtu;
	uint64_t iters;
	bool iters_given;
	uint64_t duration_ns; /* 0: run --iters messages */
	uint64_t rate_bps; /* 0: unlimited */
	unsigned int window;
	unsigned int timeout; /* 4.096 us * 2^timeout */
	unsigned int retry;
	unsigned int tx_depth;
	unsigned int ackreq_every;
	uint32_t psn; /* start PSN of every QP when psn_given, else random */
	bool psn_given;
	unsigned int stall_ms; /* 0: derived from the timeout */
	unsigned int tos;
	unsigned int bad_frames;
	unsigned int batch;
	bool qdisc_bypass;
	const char *client_opt; /* the first client option given (refused with --server) */
};

/* What the client tells the server (and the server checks) */
struct lhp_params {
	enum lhp_op op;
	enum lhp_recovery recovery;
	uint32_t qps;
	uint64_t size;
	uint32_t mtu;
	uint64_t iters; /* 0 in duration mode */
	uint32_t window;
	uint32_t ackreq_every;
	uint64_t seed; /* payload pattern seed */
	uint32_t client_qpn_base; /* client QP i is base + i */
	uint32_t server_qpn_base;
	uint32_t *client_psn; /* start PSN of each requester (= responder's ePSN) */
	uint32_t *server_psn; /* start PSN of each responder's own send queue */
	uint64_t *server_va; /* WRITE target buffer of each QP */
	uint32_t *server_rkey;
};

/* One interface, raw frames in and out, addresses of both ends */
struct lhp_port {
	struct lh_pktio *io;
	int sink_fd; /* UDP 4791 bound: no ICMP port unreachable */
	int family;
	union lh_ip_addr local, peer;
	uint8_t local_mac[6], hop_mac[6];
	char ifname[IF_NAMESIZE];
	uint16_t ip_id; /* sequential per sender, as NICs number them */
	uint8_t tos;
	unsigned int batch;
	struct lh_frame tx[LHP_MAX_BATCH];
	unsigned int tx_n, tx_done; /* built, handed to the kernel */
	struct lh_frame rx[LHP_MAX_BATCH];
	uint64_t frames_tx, frames_rx;
};

/* A recovery event for the report: a NAK sent, or a requester rewind */
struct lhp_event {
	uint32_t qp;
	uint32_t psn;
	uint32_t got; /* a responder's NAK: the PSN that arrived instead of psn; else LHP_NO_PSN */
	uint8_t cause; /* LHP_EV_* */
};
#define LHP_NO_PSN 0xffffffffu

enum {
	LHP_EV_NAK,
	LHP_EV_TIMEOUT,
};

struct lhp_events {
	struct lhp_event ev[LHP_EVENTS_MAX];
	unsigned int n;
	uint64_t dropped;
};

/* Frames a receiver threw away before the transport saw them (as rxe_recv) */
#define LHP_RX_DROPS(X)                                                                    \
	X(not_roce) X(unknown_qp) X(bad_opcode) X(addr_errors) X(pkey_errors) X(icrc_errors) \
	X(socket_drops)
struct lhp_rx_drops {
	uint64_t not_roce; /* not RoCEv2 to UDP 4791 (ARP, the side channel ...) */
	uint64_t unknown_qp; /* another QP's traffic: not counted as an error */
	uint64_t bad_opcode; /* not an opcode this end expects */
	uint64_t addr_errors; /* IP source/destination not the QP's */
	uint64_t pkey_errors;
	uint64_t icrc_errors;
	uint64_t socket_drops; /* the kernel's: the receive buffer was full (a NIC's rx_discards) */
};
_Static_assert(sizeof(struct lhp_rx_drops) == 7 * sizeof(uint64_t),
	       "LHP_RX_DROPS names each field of struct lhp_rx_drops");

/* Requester (client) side of one RC QP */
struct lhp_req_qp {
	uint32_t idx, qpn, dqpn;
	uint32_t psn0;
	uint16_t sport;
	uint64_t next; /* seq of the next packet to send */
	uint64_t una; /* oldest unacknowledged seq (rxe's comp.psn) */
	uint64_t sent_hi; /* 1 + highest seq ever sent */
	uint64_t acked_hi; /* highest una ever: progress */
	uint64_t total; /* seqs to send in all (UINT64_MAX until a duration ends) */
	uint64_t msgs_done;
	uint32_t noack; /* packets since the last ACK request */
	uint32_t retry_left;
	bool in_retry; /* rxe's started_retry: NAKs ignored until an ACK */
	bool error;
	uint64_t deadline_ns; /* retransmit timer, 0 idle */
	uint64_t *msg_start_ns; /* ring: first transmission of each message */
	uint32_t ring_mask;
	uint64_t remote_va;
	uint32_t rkey;
	/* counters */
	uint64_t pkts_sent, retransmitted, acks_rx, dup_acks_rx, naks_rx, naks_ignored;
	uint64_t timeouts, rewinds;
	/* since when it has data to send and a full window (0: not so), and its sum */
	uint64_t win_full_since, win_full_ns;
};

/* Responder (server) side of one RC QP */
struct lhp_resp_qp {
	uint32_t idx, qpn, dqpn;
	uint32_t psn0;
	uint16_t sport;
	uint64_t eseq; /* expected seq: ePSN = psn0 + eseq */
	uint64_t msg_first; /* seq of the first packet of the message in progress */
	uint64_t msgs; /* messages executed; MSN = msgs mod 2^24 */
	uint64_t offset; /* bytes of the message in progress placed */
	int last_opcode; /* -1 between messages */
	bool nak_sent; /* rxe's sent_psn_nak: one NAK per gap */
	bool error;
	uint64_t va;
	uint32_t rkey;
	/* counters */
	uint64_t pkts_rx, bytes_ok, oos_drops, dups, naks_sent, acks_sent;
	uint64_t verify_errors, protocol_errors, discarded_msgs, discarded_pkts;
};

/* Message completion times: exact count, sum and max; a reservoir for percentiles */
struct lhp_fct {
	uint64_t n;
	double sum_us, max_us;
	uint32_t *sample; /* microseconds */
	uint32_t nsample;
	uint64_t rng;
};

/* What a side knows at the end of a run (the client merges the server's) */
struct lhp_summary {
	enum lhp_status status;
	bool verified;
	char error[160];
	double elapsed_s; /* first packet sent to last completion */
	double cpu_s;
	/* requester */
	uint64_t messages, bytes, messages_started;
	uint64_t packets_sent, retransmitted, naks_received, naks_ignored, acks_received;
	uint64_t timeouts, rewinds, qp_errors;
	double window_full_s; /* QP-seconds with data to send and a full window */
	struct lhp_rx_drops req_drops;
	double peak_gbps;
	struct lhp_fct fct;
	/* responder */
	uint64_t r_packets, r_messages, r_bytes, naks_sent, acks_sent, oos_drops, dups;
	uint64_t verify_errors, protocol_errors, discarded_msgs, discarded_pkts;
	struct lhp_rx_drops resp_drops;
	double r_cpu_s;
	bool have_server;
};

/* ---- ctrl.c: the TCP side channel ---- */
struct lhp_ctrl {
	int fd;
	int family;
	union lh_ip_addr local, peer;
	char buf[65536];
	size_t len;
	bool eof;
};

int lhp_ctrl_connect(const struct lhp_opts *o, struct lhp_ctrl *c);
int lhp_ctrl_listen(const struct lhp_opts *o, struct lhp_ctrl *c);
void lhp_ctrl_close(struct lhp_ctrl *c);
int lhp_ctrl_printf(struct lhp_ctrl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Next line (without newline) into line; waits up to timeout_ms (-1 forever, 0 poll).
 * Returns 1 with a line, 0 when none yet, -EPIPE on EOF, -errno on error. */
int lhp_ctrl_getline(struct lhp_ctrl *c, char *line, size_t cap, int timeout_ms);
/* key=value lookups in a line of space separated words */
bool lhp_kv_str(const char *line, const char *key, char *out, size_t cap);
bool lhp_kv_u64(const char *line, const char *key, uint64_t *v);
bool lhp_kv_dbl(const char *line, const char *key, double *v);

int lhp_params_send(struct lhp_ctrl *c, const struct lhp_params *p);
int lhp_params_recv(struct lhp_ctrl *c, struct lhp_params *p, char *err, size_t errcap);
/* The server's RESULT line: its responders' counters, CPU time and receive drops */
int lhp_result_send(struct lhp_ctrl *c, const struct lhp_summary *s);
/* A RESULT line into the responder's fields of s; *verified the server's verdict */
void lhp_result_parse(const char *line, struct lhp_summary *s, uint64_t *verified);
/* The server's NAK events as NAK lines, and how many were not listed */
int lhp_naks_send(struct lhp_ctrl *c, const struct lhp_events *e);
/* A NAK line into e */
void lhp_nak_parse(const char *line, struct lhp_events *e);
int lhp_params_alloc(struct lhp_params *p, uint32_t qps);
void lhp_params_free(struct lhp_params *p);

/* ---- port.c: addressing and frames ---- */
int lhp_port_open(struct lhp_port *pt, const struct lhp_opts *o, const struct lhp_ctrl *c,
		  unsigned int mtu, unsigned int nqps, unsigned int window);
void lhp_port_close(struct lhp_port *pt);
/* A spec with this port's addresses and the QP's ports, ready for lh_pkt_build */
void lhp_port_spec(const struct lhp_port *pt, struct lh_pkt_spec *s, uint16_t sport,
		   uint32_t dqpn);
/* A free frame of the current tx batch, or NULL when it is full and unsent */
struct lh_frame *lhp_port_tx_slot(struct lhp_port *pt);
/* Hand built frames to the kernel; returns 0 or -errno (interface gone ...) */
int lhp_port_flush(struct lhp_port *pt);
/* A free frame into *f, a full batch flushed first; 0 or -errno (-EAGAIN: none taken) */
int lhp_port_tx_slot_flushed(struct lhp_port *pt, struct lh_frame **f);
static inline bool lhp_port_tx_pending(const struct lhp_port *pt)
{
	return pt->tx_done < pt->tx_n;
}
/*
 * A received frame checked as rxe_recv does: RoCEv2, for one of nqps QPs
 * numbered from qpn_base, an opcode this end takes (opcode_ok), the QP's
 * addresses, P_Key and a good ICRC. Returns the QP's index with the frame
 * parsed into p, or -1 with the reason counted in d.
 */
int lhp_port_rx_check(const struct lhp_port *pt, const struct lh_frame *f, uint32_t qpn_base,
		      uint32_t nqps, bool (*opcode_ok)(const struct lh_pkt *p),
		      struct lhp_rx_drops *d, struct lh_pkt *p);

/* ---- pattern.c: the payload every byte is checked against ---- */
uint64_t lhp_pattern_base(uint64_t seed, uint32_t qp, uint64_t msg);
void lhp_pattern_fill(uint8_t *dst, uint64_t base, uint64_t off, size_t len);
/* -1 when src matches, else the index of the first differing byte */
long lhp_pattern_check(const uint8_t *src, uint64_t base, uint64_t off, size_t len);

/* ---- options.c: the command line ---- */
void lhp_usage(FILE *f);
/* argv into o; 0, or nonzero after a usage error (said on stderr) */
int lhp_options_parse(int argc, char **argv, struct lhp_opts *o);

/* ---- requester*.c (requester_int.h) / responder.c: the two data paths ---- */
int lhp_client(const struct lhp_opts *o);
int lhp_server(const struct lhp_opts *o);

/* ---- report.c ---- */
void lhp_fct_init(struct lhp_fct *f);
void lhp_fct_add(struct lhp_fct *f, double us);
void lhp_fct_free(struct lhp_fct *f);
double lhp_fct_pct(struct lhp_fct *f, double pct);
const char *lhp_status_name(enum lhp_status s);
int lhp_status_from_name(const char *s);
int lhp_exit_code(const struct lhp_summary *s);
void lhp_report(FILE *out, const struct lhp_opts *o, const struct lhp_params *p,
		const struct lhp_port *pt, struct lhp_summary *s, const struct lhp_events *naks,
		const struct lhp_events *rewinds);
/* --json: the object of a run that failed before it started (status "error") */
void lhp_report_setup_error(FILE *out, const struct lhp_opts *o, const char *what);

/* ---- util.c: what the other files share ---- */
uint64_t lhp_random64(void);
double lhp_cpu_seconds(void);
/* The names of the operations, recoveries and path MTUs (command line, side channel, report) */
extern const struct lh_opt_choice lhp_op_choices[], lhp_recovery_choices[], lhp_mtu_choices[];
/* The value named in choices, or -1; the name of a value, or NULL */
int lhp_choice_value(const struct lh_opt_choice *choices, const char *name);
const char *lhp_choice_name(const struct lh_opt_choice *choices, int value);
const char *lhp_op_name(enum lhp_op op);
const char *lhp_recovery_name(enum lhp_recovery r);
/* The first of n QP numbers, at random (0, 1 and 0xffffff are SMI, GSI, multicast) */
uint32_t lhp_random_qpn_base(uint32_t n);
void lhp_event_add(struct lhp_events *e, uint32_t qp, uint32_t psn, uint8_t cause);
void lhp_event_add_got(struct lhp_events *e, uint32_t qp, uint32_t psn, uint32_t got,
		       uint8_t cause);
/* A side-channel line that starts with prefix ("RESULT ", "QP ") */
static inline bool lhp_starts_with(const char *line, const char *prefix)
{
	return strncmp(line, prefix, strlen(prefix)) == 0;
}
/* The UDP source port of a QP: rxe derives it from the QP numbers, for ECMP entropy */
static inline uint16_t lhp_rxe_sport(uint32_t qpn, uint32_t dqpn)
{
	return (uint16_t)(0xc000 | ((qpn ^ dqpn) & 0x3fff));
}
/* Packets per message of size bytes at this MTU (a zero-byte message is one packet) */
static inline uint64_t lhp_pkts_per_msg(uint64_t size, unsigned int mtu)
{
	return size ? (size + mtu - 1) / mtu : 1;
}

#endif /* LHPERF_H */
