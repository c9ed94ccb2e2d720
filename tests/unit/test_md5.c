// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * MD5 and HMAC-MD5 (user/lib/md5.c) against vectors nobody here wrote: RFC
 * 1321's test suite (appendix A.5) and all seven HMAC-MD5 cases of RFC 2202
 * section 2; streaming in odd pieces against the one-shot digest; and the
 * pieces of RFC 2747 around the codec (user/lib/rsvp_key.c): the key file
 * longhauld reads and the receiver's replay memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md5.h"
#include "rsvp_key.h"
#include "tap.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_md5_suite(void)
{
	/* RFC 1321 appendix A.5 */
	static const struct {
		const char *in, *want;
	} v[] = {
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"a", "0cc175b9c0f1b6a831c399e269772661"},
		{"abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
		{"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		 "d174ab98d277d9f5a5611c2c9f419d9f"},
		{"1234567890123456789012345678901234567890123456789012345678901234567890123456"
		 "7890",
		 "57edf4a22be3c955ac49da2e2107b67a"},
	};
	uint8_t d[MD5_DIGEST_LEN];
	char h[2 * MD5_DIGEST_LEN + 1];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		md5(v[i].in, strlen(v[i].in), d);
		hex(d, sizeof(d), h);
		tap_eq_str(h, v[i].want, "MD5 (\"%.20s%s\")", v[i].in,
			   strlen(v[i].in) > 20 ? "..." : "");
	}
}

/* A million 'a's fed in pieces of 1 to 97 bytes: blocks split every way */
static void test_md5_streaming(void)
{
	static uint8_t a[100];
	uint8_t d[MD5_DIGEST_LEN], one[MD5_DIGEST_LEN], buf[300];
	char h[2 * MD5_DIGEST_LEN + 1];
	struct md5_ctx c;
	size_t done = 0, piece = 1;
	bool same = true;

	memset(a, 'a', sizeof(a));
	md5_init(&c);
	while (done < 1000000) {
		size_t n = piece < 1000000 - done ? piece : 1000000 - done;

		md5_update(&c, a, n);
		done += n;
		piece = piece % 97 + 1;
	}
	md5_final(&c, d);
	hex(d, sizeof(d), h);
	tap_eq_str(h, "7707d6ae4e027c70eea2a935c2296f21",
		   "MD5 of a million 'a' in pieces of 1..97 bytes");

	/* every length 0..300 around the 56-byte padding boundary, split at every point of 3 */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(buf) && same; len++) {
		md5(buf, len, one);
		for (size_t cut = 0; cut <= len && same; cut += 3) {
			md5_init(&c);
			md5_update(&c, buf, cut);
			md5_update(&c, buf + cut, len - cut);
			md5_final(&c, d);
			same = !memcmp(d, one, sizeof(d));
			if (!same)
				tap_diag("  length %zu cut at %zu: the two digests differ", len,
					 cut);
		}
	}
	tap_true(same, "MD5 in two pieces equals MD5 in one, lengths 0..300, every cut");
}

static void test_hmac_rfc2202(void)
{
	/* RFC 2202 section 2: test_case 1-7 of HMAC-MD5 */
	static uint8_t k1[16], k3[16], k4[25], k5[16], k67[80], d3[50], d4[50];
	static const struct {
		const uint8_t *key;
		size_t key_len;
		const void *data;
		size_t data_len;
		const char *want;
	} v[] = {
		{k1, 16, "Hi There", 8, "9294727a3638bb1c13f48ef8158bfc9d"},
		{(const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28,
		 "750c783e6ab0b503eaa86e310a5db738"},
		{k3, 16, d3, 50, "56be34521d144c88dbb8c733f0e8b3f6"},
		{k4, 25, d4, 50, "697eaf0aca3a3aea3a75164746ffaa79"},
		{k5, 16, "Test With Truncation", 20, "56461ef2342edc00f9bab995690efd4c"},
		{k67, 80, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		 "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd"},
		{k67, 80,
		 "Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data", 73,
		 "6f630fad67cda0ee1fb1f562db3aa53e"},
	};
	uint8_t d[MD5_DIGEST_LEN];
	char h[2 * MD5_DIGEST_LEN + 1];

	memset(k1, 0x0b, sizeof(k1));
	memset(k3, 0xaa, sizeof(k3));
	memset(d3, 0xdd, sizeof(d3));
	for (size_t i = 0; i < sizeof(k4); i++)
		k4[i] = (uint8_t)(i + 1);
	memset(d4, 0xcd, sizeof(d4));
	memset(k5, 0x0c, sizeof(k5));
	memset(k67, 0xaa, sizeof(k67));
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hmac_md5(v[i].key, v[i].key_len, v[i].data, v[i].data_len, d);
		hex(d, sizeof(d), h);
		tap_eq_str(h, v[i].want, "RFC 2202 HMAC-MD5 test_case %zu (key %zu bytes)", i + 1,
			   v[i].key_len);
	}
	/* the prepared key, streamed: the same digest as case 7 */
	{
		struct hmac_md5_key k;
		struct hmac_md5_ctx c;
		const char *data = v[6].data;

		hmac_md5_key_init(&k, k67, sizeof(k67));
		hmac_md5_init(&c, &k);
		hmac_md5_update(&c, data, 10);
		hmac_md5_update(&c, data + 10, v[6].data_len - 10);
		hmac_md5_final(&c, d);
		hex(d, sizeof(d), h);
		tap_eq_str(h, v[6].want, "HMAC-MD5 from a prepared key, in two pieces");
	}
}

static void test_digest_equal(void)
{
	uint8_t a[16], b[16];

	memset(a, 0x5a, sizeof(a));
	memcpy(b, a, sizeof(b));
	tap_true(digest_equal(a, b, 16), "digest_equal: equal digests");
	b[0] ^= 1;
	tap_true(!digest_equal(a, b, 16), "digest_equal: first byte differs");
	b[0] ^= 1;
	b[15] ^= 0x80;
	tap_true(!digest_equal(a, b, 16), "digest_equal: last bit differs");
}

static void test_key_lines(void)
{
	static const struct {
		const char *line;
		int ok;
		uint64_t id;
		size_t len;
		const char *why;
	} v[] = {
		{"1 000102030405060708090a0b0c0d0e0f", 1, 1, 16, NULL},
		{"  0x1234  00112233445566778899AABBCCDDEEFF0011 \n", 1, 0x1234, 18, NULL},
		{"0xffffffffffff 000102030405060708090a0b0c0d0e0f", 1, 0xffffffffffffull, 16, NULL},
		{"281474976710655 000102030405060708090a0b0c0d0e0f", 1, 0xffffffffffffull, 16,
		 NULL},
		{"281474976710656 000102030405060708090a0b0c0d0e0f", 0, 0, 0, "48 bits"},
		{"0x1000000000000 000102030405060708090a0b0c0d0e0f", 0, 0, 0, "48 bits"},
		{"-1 000102030405060708090a0b0c0d0e0f", 0, 0, 0, "not a decimal"},
		{"0x 000102030405060708090a0b0c0d0e0f", 0, 0, 0, "not a decimal"},
		{"12 000102030405060708090a0b0c0d0e", 0, 0, 0, "32 to 128"},
		{"12 000102030405060708090a0b0c0d0e0f0", 0, 0, 0, "32 to 128"},
		{"12 000102030405060708090a0b0c0d0e0g", 0, 0, 0, "not a hex digit"},
		{"12", 0, 0, 0, "two fields"},
		{"12 000102030405060708090a0b0c0d0e0f extra", 0, 0, 0, "two fields"},
	};
	uint8_t secret[RSVP_KEY_MAX_LEN];
	char big[2 * RSVP_KEY_MAX_LEN + 8];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const char *why = "";
		uint64_t id = 0;
		size_t len = 0;
		int err = rsvp_key_line_parse(v[i].line, &id, secret, &len, &why);

		if (v[i].ok) {
			tap_eq_int(err, 0, "key line '%.40s': taken", v[i].line);
			tap_eq_hex(id, v[i].id, "key line '%.40s': id", v[i].line);
			tap_eq_u64(len, v[i].len, "key line '%.40s': bytes", v[i].line);
		} else {
			tap_eq_int(err, -EINVAL, "key line '%.40s': refused", v[i].line);
			tap_has_str(why, v[i].why, "key line '%.40s': the reason", v[i].line);
		}
	}
	/* 64 bytes is the most, 65 too many */
	snprintf(big, sizeof(big), "7 ");
	for (int i = 0; i < RSVP_KEY_MAX_LEN; i++)
		strcat(big, "ab");
	{
		const char *why = "";
		uint64_t id;
		size_t len = 0;
		int e64 = rsvp_key_line_parse(big, &id, secret, &len, &why);

		strcat(big, "ab");
		tap_eq_int(e64, 0, "a key of 64 bytes is taken");
		tap_eq_u64(len, 64, "a key of 64 bytes: its length");
		tap_eq_hex(secret[63], 0xab, "a key of 64 bytes: its last byte");
		tap_eq_int(rsvp_key_line_parse(big, &id, secret, &len, &why), -EINVAL,
			   "a key of 65 bytes is refused (%s)", why);
	}
}

/* Write text into a fresh file of this mode; its path */
static const char *key_file(const char *text, mode_t mode)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/lh-test-key-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchmod(fd, mode))
		abort();
	close(fd);
	return path;
}

static void test_key_files(void)
{
	struct rsvp_key_file kf;
	char why[256];
	const char *p;
	int err;

	p = key_file("# longhaul RSVP key\n\n0x2a 00112233445566778899aabbccddeeff # lab\n", 0600);
	err = rsvp_key_file_read(p, &kf, why, sizeof(why));
	tap_eq_int(err, 0, "key file with a comment and a blank line: read");
	tap_eq_u64(kf.id, 42, "key file with a comment and a blank line: id");
	tap_eq_u64(kf.len, 16, "key file with a comment and a blank line: bytes");
	tap_eq_hex(kf.secret[15], 0xff, "key file with a comment and a blank line: last byte");
	tap_true(!kf.loose_mode,
		 "key file with a comment and a blank line: mode 0600 kept private");
	unlink(p);

	p = key_file("7 00112233445566778899aabbccddeeff\n", 0644);
	err = rsvp_key_file_read(p, &kf, why, sizeof(why));
	tap_eq_int(err, 0, "a key file others may read is read (0644)");
	tap_true(kf.loose_mode, "a key file others may read is flagged (0644)");
	unlink(p);

	p = key_file("# nothing\n", 0600);
	err = rsvp_key_file_read(p, &kf, why, sizeof(why));
	tap_eq_int(err, -EINVAL, "a key file without a key line: refused");
	tap_has_str(why, p, "a key file without a key line: the reason names the file");
	tap_has_str(why, "no key line", "a key file without a key line: the reason");
	unlink(p);

	p = key_file("7 00112233445566778899aabbccddeeff\n8 00112233445566778899aabbccddeeff\n",
		     0600);
	err = rsvp_key_file_read(p, &kf, why, sizeof(why));
	tap_eq_int(err, -EINVAL, "two key lines: refused");
	tap_has_str(why, ":2: a second key line", "two key lines: the reason");
	unlink(p);

	p = key_file("\n0x1000000000000 00112233445566778899aabbccddeeff\n", 0600);
	err = rsvp_key_file_read(p, &kf, why, sizeof(why));
	tap_eq_int(err, -EINVAL, "a KEYID above 48 bits: refused");
	tap_has_str(why, ":2: KEYID above 48 bits", "the error names file and line");
	unlink(p);

	err = rsvp_key_file_read("/nonexistent/lh-key", &kf, why, sizeof(why));
	tap_eq_int(err, -EINVAL, "a missing key file: refused");
	tap_has_str(why, "/nonexistent/lh-key: No such file", "a missing key file: the reason");
}

static void test_replay(void)
{
	union lh_ip_addr a = {.b = {[15] = 1}}, b = {.b = {[15] = 2}};
	struct rsvp_replay r = {0};
	bool all = true;

	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 100), RSVP_E_OK,
		   "first message of a sender accepted");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 100), RSVP_E_INTEGRITY_REPLAY,
		   "the same sequence number again: integrity_replay");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 99), RSVP_E_OK,
		   "an older one never seen, reordered on the way: accepted");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 99), RSVP_E_INTEGRITY_REPLAY,
		   "... once: integrity_replay the second time");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 100 - RSVP_REPLAY_WINDOW), RSVP_E_INTEGRITY_REPLAY,
		   "%d below the highest: outside the window, integrity_replay",
		   RSVP_REPLAY_WINDOW);
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 100 - RSVP_REPLAY_WINDOW + 1), RSVP_E_OK,
		   "%d below: the window's last, accepted", RSVP_REPLAY_WINDOW - 1);
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 101), RSVP_E_OK, "a higher one accepted");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 99), RSVP_E_INTEGRITY_REPLAY,
		   "the window moved up with it: what was seen stays seen (99)");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 100), RSVP_E_INTEGRITY_REPLAY,
		   "the window moved up with it: what was seen stays seen (100)");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 1101), RSVP_E_OK, "a jump of 1000: accepted");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 1101 - RSVP_REPLAY_WINDOW + 1), RSVP_E_OK,
		   "a jump of 1000: the new window is empty");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 101), RSVP_E_INTEGRITY_REPLAY,
		   "a jump of 1000: the old numbers are outside the window");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 1102), RSVP_E_OK, "a step of 1: accepted");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 1101), RSVP_E_INTEGRITY_REPLAY,
		   "a step of 1: the last highest is remembered below the new one");
	tap_eq_int(rsvp_replay_accept(&r, &b, 1, 50), RSVP_E_OK, "each sender counts apart");
	tap_eq_int(rsvp_replay_accept(&r, &a, 2, 50), RSVP_E_OK, "each key id counts apart");
	tap_eq_int(rsvp_replay_accept(&r, &a, 1, 1102), RSVP_E_INTEGRITY_REPLAY,
		   "... without changing the others' last number");
	for (unsigned int i = r.used; i < RSVP_REPLAY_SLOTS; i++) {
		union lh_ip_addr s = {.b = {[0] = 0xfd, [14] = 1, [15] = (uint8_t)i}};

		if (rsvp_replay_accept(&r, &s, 1, 1) != RSVP_E_OK) {
			if (all)
				tap_diag("  sender %u of %d refused", i, RSVP_REPLAY_SLOTS);
			all = false;
		}
	}
	{
		union lh_ip_addr s = {.b = {[0] = 0xfe}};

		tap_true(all, "%d senders fill the table: each accepted", RSVP_REPLAY_SLOTS);
		tap_eq_int(rsvp_replay_accept(&r, &s, 1, 1), RSVP_E_INTEGRITY_REPLAY,
			   "%d senders fill the table: a new one is refused", RSVP_REPLAY_SLOTS);
		tap_eq_int(rsvp_replay_accept(&r, &a, 1, 1103), RSVP_E_OK,
			   "%d senders fill the table: the known ones go on", RSVP_REPLAY_SLOTS);
	}
}

int main(void)
{
	test_md5_suite();
	test_md5_streaming();
	test_hmac_rfc2202();
	test_digest_equal();
	test_key_lines();
	test_key_files();
	test_replay();
	return tap_done();
}
