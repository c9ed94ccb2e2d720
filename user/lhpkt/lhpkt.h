/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the parts of lhpkt share: its exit statuses, the packet options of
 * build and send (packet_opts.c), the series of packets they make (build.c)
 * and the subcommands.
 */
#ifndef LHPKT_H
#define LHPKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pkt.h"
#include "report.h"

#define EXIT_BAD_ICRC 1
#define EXIT_USAGE 2
#define EXIT_IO 3

/* The options of build and send: the first packet, the series and where it goes */
struct packet_opts {
	struct lh_pkt_spec spec;
	unsigned long count;
	size_t payload_len;
	bool same_psn; /* else the PSN advances per packet */
	unsigned long qpn_step; /* destination QPN advance per packet */
	bool bad_icrc;
	bool fecn, becn;
	uint8_t resv; /* BTH byte 4's six reserved bits */
	bool udp_csum, udp_csum_set;
	bool have_src, have_dst, have_dmac;
	const char *out; /* build: the capture */
	const char *dev; /* send: the interface */
	unsigned long gap_us; /* send: microseconds a packet */
	unsigned long burst; /* send: frames per wakeup (0: 1) */
	/* --report: a Depot report (include/lh_proto.h) instead of a RoCEv2 packet */
	bool report;
	struct lh_report_info ri;
	uint8_t report_key[LH_SIPHASH_KEY_LEN]; /* --report-key-file: ri.key points here */
};

/* The whole usage text (main.c) */
void lhpkt_usage(FILE *f);

/* argv of build or send (argv[0] the subcommand) into p; 0 or -EINVAL, the reason printed */
int packet_opts_parse(int argc, char **argv, struct packet_opts *p);
/* The option lines of build and send, for the usage text */
void packet_opts_print(FILE *f);
/* The option lines of check, for the usage text */
void check_opts_print(FILE *f);

/* Packet i of the series into buf; its length, or -errno */
ssize_t packet_build(const struct packet_opts *p, unsigned long i, uint8_t *buf, size_t cap);

/* The subcommands: argv[0] is the subcommand's name; each returns the exit status */
int cmd_build(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_check(int argc, char **argv);

#endif /* LHPKT_H */
