// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The two ICRC implementations (user/lib/icrc.c and bpf/lib/icrc.h, the
 * latter through the gateway's verification mode) against scapy: its RoCE
 * test vectors and 1000 random IPv4 + 1000 random IPv6 packets (payloads of
 * 0..4096 bytes) whose ICRC scapy computed (tests/unit/scapy_icrc_gen.py);
 * and against each other on mutated packets, where exactly the masked fields
 * may change without invalidating the ICRC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf_harness.h"
#include "fixtures.h"
#include "icrc.h"
#include "pcap.h"
#include "pkt.h"
#include "tap.h"

#define N_PER_FAMILY 1000
#define MAX_PKTS (2 + 2 * N_PER_FAMILY)
#define PROG "lh_observe"

struct capture {
	uint8_t *b;
	size_t len;
};

static struct capture pkts[MAX_PKTS];
static int nr_pkts;
static struct lh_harness *h;

static int enable_icrc(struct bpf_object *obj, void *ctx)
{
	__u8 on = 1;

	(void)ctx;
	return lh_obj_set_rodata(obj, "lh_verify_icrc", &on, sizeof(on));
}

static int load_scapy_packets(void)
{
	const char *root = getenv("LH_ROOT") ? getenv("LH_ROOT") : ".";
	char path[512], cmd[1200];
	static uint8_t buf[16384];
	struct lh_pcap pc;
	size_t len;

	snprintf(path, sizeof(path), "%s/tests/scapy-icrc.pcap", LH_BUILD_DIR);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/tests/unit/scapy_icrc_gen.py %s %d 4791",
		 root, path, N_PER_FAMILY);
	if (system(cmd)) {
		tap_diag("'%s' failed: is python3-scapy installed (make deps)?", cmd);
		return -1;
	}
	if (lh_pcap_open(&pc, path))
		return -1;
	while (nr_pkts < MAX_PKTS && lh_pcap_next(&pc, buf, sizeof(buf), &len, NULL, NULL) == 1) {
		pkts[nr_pkts].b = malloc(len);
		memcpy(pkts[nr_pkts].b, buf, len);
		pkts[nr_pkts++].len = len;
	}
	lh_pcap_close(&pc);
	return nr_pkts == MAX_PKTS ? 0 : -1;
}

/* Gateway verdict on the ICRC of b: "icrc_ok", "icrc_bad" or NULL when it did not say */
static const char *bpf_icrc_verdict(const uint8_t *b, size_t len)
{
	int64_t ok0 = lh_counter_read(h, "lh_stats.icrc_ok");
	int64_t bad0 = lh_counter_read(h, "lh_stats.icrc_bad");
	static uint8_t out[16384];
	size_t out_len = sizeof(out);
	uint32_t verdict;

	if (lh_harness_run(h, PROG, b, len, &verdict, out, &out_len))
		return NULL;
	if (lh_counter_read(h, "lh_stats.icrc_ok") == ok0 + 1)
		return "icrc_ok";
	if (lh_counter_read(h, "lh_stats.icrc_bad") == bad0 + 1)
		return "icrc_bad";
	return NULL;
}

static void test_vectors(void)
{
	struct lh_pkt p;

	tap_eq_int(lh_pkt_parse(pkts[0].b, pkts[0].len, true, &p), LH_STAT_ROCE,
		   "scapy vector UC SEND_ONLY/IPv4: parsed as RoCE");
	tap_eq_mem(pkts[0].b + p.icrc_off, "\x78\xf3\x53\xf3", 4,
		   "scapy vector UC SEND_ONLY/IPv4: ICRC field 0x78f353f3");
	tap_true(lh_pkt_icrc_ok(pkts[0].b, &p),
		 "scapy vector UC SEND_ONLY/IPv4 0x78f353f3: user space agrees");
	tap_eq_int(lh_pkt_parse(pkts[1].b, pkts[1].len, true, &p), LH_STAT_ROCE,
		   "scapy vector ConnectX-4 Lx CNP: parsed as RoCE");
	tap_eq_mem(pkts[1].b + p.icrc_off, "\x82\xfd\x00\x2a", 4,
		   "scapy vector ConnectX-4 Lx CNP: ICRC field 0x82fd002a");
	tap_true(lh_pkt_icrc_ok(pkts[1].b, &p),
		 "scapy vector ConnectX-4 Lx CNP 0x82fd002a: user space agrees");
	tap_eq_str(bpf_icrc_verdict(pkts[0].b, pkts[0].len), "icrc_ok",
		   "scapy vector UC SEND_ONLY: BPF agrees");
	tap_eq_str(bpf_icrc_verdict(pkts[1].b, pkts[1].len), "icrc_ok",
		   "scapy vector CNP: BPF agrees");
}

static void test_random(int family)
{
	int i, first = family == AF_INET ? 2 : 2 + N_PER_FAMILY;
	int user_bad = 0, bpf_bad = 0, big = 0;

	for (i = first; i < first + N_PER_FAMILY; i++) {
		const char *v;
		struct lh_pkt p;

		if (lh_pkt_parse(pkts[i].b, pkts[i].len, true, &p) != LH_STAT_ROCE ||
		    p.family != family || !lh_pkt_icrc_ok(pkts[i].b, &p)) {
			if (user_bad++ < 3)
				tap_diag("  packet %d: user space disagrees with scapy", i);
		}
		big += p.payload_len > 3000;
		v = bpf_icrc_verdict(pkts[i].b, pkts[i].len);
		if (!v || strcmp(v, "icrc_ok")) {
			if (bpf_bad++ < 3)
				tap_diag("  packet %d (%zu bytes): BPF says %s", i, pkts[i].len,
					 v ? v : "nothing");
		}
	}
	tap_eq_int(user_bad, 0,
		   "%d random IPv%d packets (payload 0..4096, %d over 3000): user-space ICRC "
		   "equals scapy's",
		   N_PER_FAMILY, family == AF_INET6 ? 6 : 4, big);
	tap_eq_int(bpf_bad, 0,
		   "the same %d IPv%d packets: BPF ICRC equals scapy's (jumbo ones in XDP frags)",
		   N_PER_FAMILY, family == AF_INET6 ? 6 : 4);
}

/* Byte offsets the ICRC does not cover, for a parsed packet */
static bool masked_byte(const struct lh_pkt *p, size_t off)
{
	size_t l3 = p->l3_off;

	if (p->family == AF_INET6) {
		if (off == l3 + 7 || (off >= l3 + 1 && off <= l3 + 3))
			return true;
	} else if (off == l3 + 1 || off == l3 + 8 || off == l3 + 10 || off == l3 + 11) {
		return true;
	}
	return off == p->l4_off + 6 || off == p->l4_off + 7 || off == p->bth_off + 4;
}

static void test_mutations(void)
{
	static uint8_t b[16384];
	unsigned int seed = 7;
	int i, tried = 0, user_wrong = 0, bpf_wrong = 0, masked = 0;

	for (i = 2; i < nr_pkts; i += 4) {
		struct lh_pkt p;
		size_t off;
		bool want_ok;
		const char *v;

		memcpy(b, pkts[i].b, pkts[i].len);
		lh_pkt_parse(b, pkts[i].len, true, &p);
		/* any byte from the IP header to the ICRC, or the IPv6 traffic class nibble */
		off = p.l3_off + fx_rand(&seed) % (p.icrc_off - p.l3_off);
		b[off] ^= (uint8_t)(1u << (fx_rand(&seed) % 8));
		if (off == p.l3_off && p.family == AF_INET6 && (b[off] >> 4) != 6)
			b[off] ^= 0xf0; /* keep the version: flip the traffic class instead */
		want_ok = masked_byte(&p, off);
		/* a flipped length/version byte may stop it from parsing: skip those */
		if (lh_pkt_parse(b, pkts[i].len, true, &p) != LH_STAT_ROCE)
			continue;
		tried++;
		masked += want_ok;
		if (lh_pkt_icrc_ok(b, &p) != want_ok && user_wrong++ < 3)
			tap_diag("  packet %d byte %zu: user space says %s", i, off,
				 want_ok ? "bad" : "ok");
		v = bpf_icrc_verdict(b, pkts[i].len);
		if ((!v || strcmp(v, want_ok ? "icrc_ok" : "icrc_bad")) && bpf_wrong++ < 3)
			tap_diag("  packet %d byte %zu: BPF says %s", i, off, v ? v : "nothing");
	}
	tap_ge_int(tried, 301, "one-bit mutations tried (%d in masked fields)", masked);
	tap_eq_int(user_wrong, 0,
		   "%d one-bit mutations (%d in masked fields): user space flags exactly the covered ones",
		   tried, masked);
	tap_eq_int(bpf_wrong, 0, "the same mutations: BPF flags exactly the covered ones");
}

/* Every masked byte rewritten at once: both must still accept the ICRC */
static void test_masked_fields(void)
{
	static uint8_t b[16384];
	unsigned int seed = 11;
	int i, user_wrong = 0, bpf_wrong = 0, n = 0;

	for (i = 2; i < nr_pkts; i += 5) {
		struct lh_pkt p;
		size_t off;
		const char *v;

		memcpy(b, pkts[i].b, pkts[i].len);
		lh_pkt_parse(b, pkts[i].len, true, &p);
		for (off = p.l3_off; off < p.bth_off + 12; off++)
			if (masked_byte(&p, off))
				b[off] = (uint8_t)fx_rand(&seed);
		if (p.family == AF_INET6)
			b[p.l3_off] = (uint8_t)(0x60 | (fx_rand(&seed) & 0x0f));
		n++;
		if (!lh_pkt_icrc_ok(b, &p) && user_wrong++ < 3)
			tap_diag("  packet %d: user space rejects masked-field changes", i);
		v = bpf_icrc_verdict(b, pkts[i].len);
		if ((!v || strcmp(v, "icrc_ok")) && bpf_wrong++ < 3)
			tap_diag("  packet %d: BPF says %s", i, v ? v : "nothing");
	}
	tap_eq_int(user_wrong, 0,
		   "%d packets with TOS/TC, TTL/hop limit, flow label, checksums and BTH byte 4 "
		   "rewritten: user space still valid",
		   n);
	tap_eq_int(bpf_wrong, 0, "the same %d packets: BPF still valid", n);
}

/* Our own builder's packets: the two implementations agree with each other */
static void test_builder_agreement(void)
{
	static struct fx_pkt p;
	unsigned int seed = 99;
	int i, bad = 0;

	for (i = 0; i < 1000; i++) {
		const char *v;

		fx_random_roce(&p, &seed, 4096);
		v = bpf_icrc_verdict(p.b, p.len);
		if ((!v || strcmp(v, "icrc_ok")) && bad++ < 3)
			tap_diag("  builder packet %d (%zu bytes): BPF says %s", i, p.len,
				 v ? v : "nothing");
	}
	tap_eq_int(bad, 0,
		   "1000 packets of the user-space builder (VLANs, all families): BPF ICRC agrees");
}

int main(void)
{
	int ok_load = load_scapy_packets();

	if (!tap_eq_int(ok_load, 0, "scapy wrote %d oracle packets", MAX_PKTS))
		return tap_done();
	h = lh_harness_open("observe", enable_icrc, NULL);
	if (!tap_true(h != NULL, "gateway with ICRC verification loads"))
		return tap_done();
	test_vectors();
	test_random(AF_INET);
	test_random(AF_INET6);
	test_mutations();
	test_masked_fields();
	test_builder_agreement();
	lh_harness_close(h);
	return tap_done();
}
