/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the probe's files share (`lhwan probe`): probe.c (the entry point),
 * probe_options.c (the option table and usage), probe_send.c (the paced
 * sender), probe_recv.c (the receiver's sockets and loop) and probe_report.c
 * (what the receiver counts per packet and its JSON report).
 */
#ifndef LH_LHWAN_PROBE_INT_H
#define LH_LHWAN_PROBE_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "pkt.h"

#define PROBE_MAGIC 0x4c485052U /* "LHPR" */
#define PROBE_BTH_LEN ((size_t)sizeof(struct roce_bth))
#define PROBE_BATCH 32
#define PROBE_BUF 9216 /* bytes of one packet's buffer: a jumbo frame */
#define MAX_SEQS (1U << 26)
#define MAX_DELAYS (1U << 22)

/* After the BTH, network order */
struct probe_hdr {
	uint32_t magic;
	uint32_t stream;
	uint64_t seq;
	uint64_t count;
	uint64_t tx_ns; /* CLOCK_REALTIME */
} __attribute__((packed));

struct probe_opts {
	bool send;
	bool raw;
	const char *dev;
	int family;
	union lh_ip_addr src, dst;
	bool have_src;
	uint8_t dst_mac[6];
	bool have_dst_mac;
	uint16_t port;
	uint32_t size; /* frame bytes on the wire, Ethernet header included */
	uint64_t count;
	double pps;
	uint64_t rate_bps; /* --rate: pps from it and the size, once all is read */
	uint32_t burst;
	uint32_t qpn;
	uint32_t psn_start;
	const char *psn_list; /* explicit PSN sequence: 0-999,100-109 */
	uint32_t stream;
	bool no_icrc;
	/* receiver */
	uint64_t timeout_ns, idle_ns;
	const char *ready_file;
	bool list_lost;
	bool pretty;
};

/* What the receiver counts */
struct rx_state {
	uint64_t count; /* expected, from the packets */
	uint8_t *seen; /* times each sequence number arrived (saturating) */
	uint32_t *psn; /* PSN of each sequence number */
	uint64_t received, duplicates, reordered, foreign, max_seq;
	bool any;
	uint64_t first_ns, last_ns, bytes, last_bytes;
	double *delays;
	uint64_t nr_delays;
	double dmin, dmax, dsum;
};

/* probe.c: set by SIGINT and SIGTERM */
extern volatile sig_atomic_t probe_stop;

/*
 * Now, in ns of CLOCK_REALTIME: the clock of the kernel's receive time stamps
 * (SO_TIMESTAMPNS), which the one-way delay is measured against
 */
static inline uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* probe_options.c */
void probe_usage(void);
int probe_parse_args(struct probe_opts *o, int argc, char **argv);

/* probe_send.c, probe_recv.c: the exit status */
int probe_send(const struct probe_opts *o);
int probe_recv(const struct probe_opts *o);

/* probe_report.c */
int rx_account(struct rx_state *s, const struct probe_opts *o, const uint8_t *bth, size_t len,
	       size_t wire_len, uint64_t rx_ns);
void rx_report(struct rx_state *s, const struct probe_opts *o);

#endif /* LH_LHWAN_PROBE_INT_H */
