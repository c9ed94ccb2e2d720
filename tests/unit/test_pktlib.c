// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * user/lib packet builder, parser and ICRC against fixed oracles: the CRC-32
 * check value, rxe's pseudo-LRH seed, and the two RoCE packets of scapy's
 * test suite (bytes as scapy builds them, ICRC 0x78f353f3 and 0x82fd002a);
 * SipHash-2-4 against the paper's vectors, and the report key file.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "icrc.h"
#include "lh_siphash.h"
#include "pkt.h"
#include "report.h"
#include "tap.h"

/* scapy test/contrib/roce.uts "RoCE layer": UC SEND_ONLY over IPv4, as scapy builds it */
static const char scapy_uc_send_only[] =
	"248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007"
	"c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401"
	"be885e50000078f353f3";

/* scapy test/contrib/roce.uts "RoCE CNP captured on ConnectX-4 Lx" */
static const char cx4_cnp[] = "e41d2dab2bc27cfe90643b32080045c2003c718c400040119161"
			      "0a0011010a001201000012b700280000"
			      "8100ffff40000118" /* BTH: CNP, P_Key, BECN, QP 0x118 */
			      "00000000" /* PSN 0 */
			      "00000000000000000000000000000000" /* 16 reserved bytes */
			      "82fd002a";

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned int v;

	while (h[0] && h[1] && n < cap) {
		if (sscanf(h, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
		h += 2;
	}
	return n;
}

static void test_crc32(void)
{
	static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	tap_eq_hex(lh_crc32("123456789", 9), 0xcbf43926u, "CRC-32 check value of \"123456789\"");
	tap_eq_hex(lh_crc32_update(0xffffffffu, ff, 8), 0xdebb20e3u,
		   "CRC register after the pseudo LRH is rxe's seed 0xdebb20e3");
}

static void test_scapy_uc_send_only(void)
{
	static const uint8_t payload[18] = { 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9, 0x0e,
					     0x9a, 0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50 };
	static const uint8_t mac[6] = { 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22 };
	uint8_t want[128], got[128];
	size_t wlen = unhex(scapy_uc_send_only, want, sizeof(want));
	struct lh_pkt_spec s;
	struct lh_pkt p;
	ssize_t len;

	lh_pkt_spec_init(&s, AF_INET);
	memcpy(s.dst_mac, mac, 6);
	memcpy(s.src_mac, mac, 6);
	s.tos = 1;
	s.ip_id = 1144;
	s.ttl = 64;
	inet_pton(AF_INET, "192.168.0.7", &s.src.v4);
	inet_pton(AF_INET, "192.168.0.7", &s.dst.v4);
	s.sport = 49152;
	s.udp_csum = true;
	s.roce.opcode = ROCE_UC_SEND_ONLY;
	s.roce.mig = true;
	s.roce.dqpn = 211;
	s.roce.psn = 13571856;
	s.payload = payload;
	s.payload_len = sizeof(payload);
	len = lh_pkt_build(&s, got, sizeof(got));
	tap_eq_int(len, (ssize_t)wlen, "builder reproduces scapy's UC SEND_ONLY: length");
	tap_eq_mem(got, want, wlen,
		   "builder reproduces scapy's UC SEND_ONLY byte for byte (pad, checksums, ICRC)");
	tap_eq_int(lh_pkt_parse(want, wlen, true, &p), LH_STAT_ROCE, "parser accepts it");
	tap_eq_hex(p.icrc, 0xf353f378u, "ICRC parsed is scapy's 0x78f353f3 (little-endian)");
	tap_eq_mem(want + wlen - 4, "\x78\xf3\x53\xf3", 4, "ICRC on the wire is 78 f3 53 f3");
	tap_true(lh_pkt_icrc_ok(want, &p), "user-space ICRC agrees with scapy's vector");
	tap_eq_hex(p.roce.opcode, ROCE_UC_SEND_ONLY, "parser fields: opcode");
	tap_eq_u64(p.roce.dqpn, 211, "parser fields: QPN");
	tap_eq_u64(p.roce.psn, 13571856, "parser fields: PSN");
	tap_eq_u64(p.pad, 2, "parser fields: pad");
	tap_eq_u64(p.payload_len, 18, "parser fields: payload length");
	tap_true(p.roce.mig, "parser fields: MigReq");
}

static void test_cnp_capture(void)
{
	uint8_t pkt[128];
	size_t len = unhex(cx4_cnp, pkt, sizeof(pkt));
	struct lh_pkt p;
	uint32_t icrc = 0;

	tap_eq_int(lh_pkt_parse(pkt, len, true, &p), LH_STAT_ROCE,
		   "ConnectX-4 Lx CNP capture parses as RoCE");
	tap_eq_hex(p.roce.opcode, ROCE_CNP, "ConnectX-4 Lx CNP capture: opcode CNP");
	tap_eq_int(lh_pkt_icrc_calc(pkt, &p, &icrc), 0, "ICRC of the CNP capture computed");
	tap_eq_hex(icrc, 0x2a00fd82u, "ICRC of the CNP capture is scapy's 0x82fd002a");
	tap_eq_mem(pkt + p.icrc_off, "\x82\xfd\x00\x2a", 4,
		   "ICRC field of the CNP capture is 82 fd 00 2a");
	tap_eq_hex(p.roce.byte4, 0x40, "CNP BECN set");
	tap_eq_hex(p.roce.dqpn, 0x118, "CNP dest QP");
}

static void test_masking(void)
{
	uint8_t pkt[128];
	size_t len = unhex(scapy_uc_send_only, pkt, sizeof(pkt));
	struct lh_pkt p;
	uint8_t copy[128];
	/* offsets in the frame: TOS 15, TTL 22, IP csum 24-25, UDP csum 40-41, BTH byte 4 46 */
	static const int masked[] = { 15, 22, 24, 25, 40, 41, 46 };
	static const int covered[] = { 14, 16, 18, 20, 23, 26, 30, 34, 36, 38, 42, 43, 44, 47, 50, 60 };
	size_t i;

	lh_pkt_parse(pkt, len, true, &p);
	for (i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
		memcpy(copy, pkt, len);
		copy[masked[i]] ^= 0x5a;
		tap_true(lh_pkt_icrc_ok(copy, &p),
			 "changing byte %d (TOS, TTL, IP/UDP checksums or BTH byte 4) keeps the "
			 "ICRC valid",
			 masked[i]);
	}
	for (i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
		memcpy(copy, pkt, len);
		copy[covered[i]] ^= 0x01;
		tap_true(!lh_pkt_icrc_ok(copy, &p), "changing covered byte %d invalidates the ICRC",
			 covered[i]);
	}
}

/*
 * SipHash-2-4, key 00 01 .. 0f, message 00 01 .. n-1: the reference
 * implementation's vectors_sip64 for n = 0..16 (n = 15 is the worked example
 * of the paper's appendix A)
 */
static void test_siphash(void)
{
	static const uint64_t want[17] = {
		0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
		0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
		0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
		0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
		0x3f2acc7f57c29bdb,
	};
	uint8_t key[16], msg[17];
	__u64 k[2];
	unsigned int n, bad = 0;

	for (n = 0; n < 17; n++)
		msg[n] = (uint8_t)n;
	memcpy(key, msg, sizeof(key));
	lh_sip_key(key, k);
	for (n = 0; n <= 16; n++)
		if (lh_siphash24(k, msg, n) != want[n]) {
			tap_diag("  n=%u: %016llx, want %016llx", n,
				 (unsigned long long)lh_siphash24(k, msg, n),
				 (unsigned long long)want[n]);
			bad++;
		}
	tap_eq_int(bad, 0, "SipHash-2-4: the reference vectors for messages of 0 to 16 bytes");
}

/* a report key file: 32 hex digits, spaces and newlines allowed, else a clear reason */
static void test_report_key(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "00112233445566778899aabbccddee\n", "30 hex digits" },
		{ "00112233445566778899aabbccddeeff00\n", "more than 32 hex digits" },
		{ "00112233445566778899aabbccddeefg\n", "'g' at byte 32 is no hex digit" },
	};
	char path[] = "/tmp/lh-keyXXXXXX", why[300];
	uint8_t key[16];
	unsigned int i;
	int fd = mkstemp(path);
	FILE *f;

	f = fdopen(fd, "w");
	fputs("0011 2233 4455 6677\n8899 AABB ccdd eeff\n", f);
	fclose(f);
	tap_eq_int(lh_report_key_load(path, key, why, sizeof(why)), 0,
		   "report key file: 32 hex digits in groups and lines read");
	tap_eq_hex(key[0], 0x00, "report key file: byte 0");
	tap_eq_hex(key[5], 0x55, "report key file: byte 5");
	tap_eq_hex(key[10], 0xaa, "report key file: byte 10");
	tap_eq_hex(key[15], 0xff, "report key file: byte 15");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen(path, "w");
		fputs(bad[i].text, f);
		fclose(f);
		tap_true(lh_report_key_load(path, key, why, sizeof(why)) != 0,
			 "report key file refused: %s", bad[i].why);
		tap_has_str(why, bad[i].why, "report key file refused: %s: the reason", bad[i].why);
		tap_has_str(why, path, "report key file refused: %s: the reason names the file",
			    bad[i].why);
	}
	unlink(path);
	tap_true(lh_report_key_load(path, key, why, sizeof(why)) != 0,
		 "report key file missing: refused");
	tap_has_str(why, "No such file", "report key file missing: the reason");
}

int main(void)
{
	test_siphash();
	test_report_key();
	test_crc32();
	test_scapy_uc_send_only();
	test_cnp_capture();
	test_masking();
	return tap_done();
}
