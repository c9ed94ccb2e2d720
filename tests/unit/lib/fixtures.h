/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Packet fixtures shared by the unit tests: build, edit and describe packets. */
#ifndef LH_TEST_FIXTURES_H
#define LH_TEST_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

#include "bpf_harness.h"
#include "pkt.h"

#define FX_MAX_PKT 9216

/* A packet under test: bytes plus the layout the builder put them in */
struct fx_pkt {
	uint8_t b[FX_MAX_PKT];
	size_t len;
	size_t l3_off; /* IP header */
	size_t ext_end; /* end of IPv6 extension headers (== l3_off + 40 when none) */
	size_t udp_off;
	size_t bth_off;
	size_t roce_need; /* UDP payload bytes the opcode needs: BTH, ext, pad, ICRC */
	int family;
	unsigned int nr_vlans;
	uint8_t ext_ends_nr;
	size_t ext_ends[8]; /* end offset of each IPv6 extension header */
};

/* Build s into p (exits the test on failure: a fixture bug) */
void fx_build(struct fx_pkt *p, const struct lh_pkt_spec *s);

/*
 * Insert IPv6 extension headers after the fixed header: types[] in order
 * (0 HBH, 43 routing, 44 fragment, 51 AH, 60 dest opts), each 8 bytes (AH 12).
 * frag_off_m is written into the fragment header's offset/M field. Fixes
 * lengths, next-header chain and the ICRC.
 */
void fx_ipv6_add_ext(struct fx_pkt *p, const uint8_t *types, int n, uint16_t frag_off_m);

/* Insert 'words' 32-bit NOP option words into an IPv4 header; fixes lengths, checksum, ICRC */
void fx_ipv4_add_options(struct fx_pkt *p, int words);

/* Set IPv4 total length / IPv6 payload length and the UDP length for a packet cut at len */
void fx_fix_lengths(struct fx_pkt *p, size_t len);

/* Fill the fixture's counter deltas for a gateway verdict on p's bytes */
void fx_expect_observe(struct lh_fixture *f, const char *reason_field, const char *opcode_field);

/* A random well-formed RoCEv2 packet (family, VLANs, opcode, sizes from rnd) */
void fx_random_roce(struct fx_pkt *p, unsigned int *seed, size_t max_payload);

uint32_t fx_rand(unsigned int *seed);

/* The lh_qp key of p as the programs build it: addresses IPv6 or IPv4 mapped, BTH dest QP */
struct lh_qp_key;
void fx_qp_key(const struct fx_pkt *p, struct lh_qp_key *k);

#endif /* LH_TEST_FIXTURES_H */
