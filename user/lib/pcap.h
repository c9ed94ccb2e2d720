/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Classic libpcap capture files (what `tcpdump -w` writes), read and
 * written without libpcap: microsecond and nanosecond timestamps, either byte
 * order. pcapng (tshark's default) is not supported: capture with tcpdump or
 * `tshark -F pcap`.
 */
#ifndef LH_USER_PCAP_H
#define LH_USER_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LH_PCAP_LINKTYPE_ETHERNET 1
#define LH_PCAP_LINKTYPE_RAW 101 /* packets start at the IP header */

struct lh_pcap {
	FILE *f;
	uint32_t linktype;
	uint32_t snaplen;
	int swapped; /* file byte order differs from ours */
	int nsec; /* timestamps in nanoseconds */
	int writing;
};

/* Open for writing (truncates); 0 or -errno */
int lh_pcap_create(struct lh_pcap *p, const char *path, uint32_t linktype);
int lh_pcap_write(struct lh_pcap *p, const void *data, size_t len, uint64_t ts_ns);

/* Open for reading; 0, -errno, or -EPROTO for a file that is not classic pcap */
int lh_pcap_open(struct lh_pcap *p, const char *path);
/*
 * Next record into buf (at most cap bytes kept; *len the bytes kept,
 * *orig_len the length on the wire). 1 for a record, 0 at the end, -errno.
 */
int lh_pcap_next(struct lh_pcap *p, void *buf, size_t cap, size_t *len, size_t *orig_len,
		 uint64_t *ts_ns);

void lh_pcap_close(struct lh_pcap *p);

#endif /* LH_USER_PCAP_H */
