// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * RFC 2747 around the codec: the --rsvp-key-file format and the receiver's
 * per-sender, per-key last Sequence Number (section 2.2's receiving-side
 * security association, with an authentication window of RSVP_REPLAY_WINDOW
 * numbers for reordered messages: docs/rsvp.md).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bytes.h"
#include "md5.h"
#include "rsvp_key.h"

/* A Key Identifier: decimal, or hex after 0x; at most 48 bits */
static int parse_key_id(const char *s, size_t n, uint64_t *id)
{
	unsigned int base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		int d = base == 16 ? lh_hex_nibble(s[i])
				   : (isdigit((unsigned char)s[i]) ? s[i] - '0' : -1);

		if (d < 0)
			return -EINVAL;
		v = v * base + (unsigned int)d;
		if (v > RSVP_KEY_ID_MAX)
			return -ERANGE;
	}
	*id = v;
	return 0;
}

int rsvp_key_line_parse(const char *line, uint64_t *id, uint8_t *secret, size_t *len,
			const char **why)
{
	const char *p = line, *idp, *keyp;
	size_t idn, keyn, i;
	int err;

	while (isspace((unsigned char)*p))
		p++;
	idp = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	idn = (size_t)(p - idp);
	while (isspace((unsigned char)*p))
		p++;
	keyp = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	keyn = (size_t)(p - keyp);
	while (isspace((unsigned char)*p))
		p++;
	if (!idn || !keyn || *p) {
		*why = "want two fields, KEYID HEXKEY";
		return -EINVAL;
	}
	err = parse_key_id(idp, idn, id);
	if (err) {
		*why = err == -ERANGE ? "KEYID above 48 bits (0xffffffffffff)"
				      : "KEYID is not a decimal or 0x-hex number";
		return -EINVAL;
	}
	if (keyn % 2 || keyn < 2 * (size_t)RSVP_KEY_MIN_LEN ||
	    keyn > 2 * (size_t)RSVP_KEY_MAX_LEN) {
		*why = "HEXKEY must be 32 to 128 hex digits (16 to 64 bytes)";
		return -EINVAL;
	}
	for (i = 0; i < keyn / 2; i++) {
		int hi = lh_hex_nibble(keyp[2 * i]), lo = lh_hex_nibble(keyp[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			secret_wipe(secret, i);
			*why = "HEXKEY has a character that is not a hex digit";
			return -EINVAL;
		}
		secret[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = keyn / 2;
	return 0;
}

/* The file's one key line into out; the line buffer is wiped whatever happens */
static int read_key_lines(FILE *f, const char *path, struct rsvp_key_file *out, char *why,
			  size_t why_len)
{
	char line[512];
	int lineno = 0, keys = 0, err = 0;

	while (!err && fgets(line, sizeof(line), f)) {
		const char *problem;
		char *hash = strchr(line, '#'), *s = line;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(why, why_len, "%s:%d: line longer than %zu characters", path,
				 lineno, sizeof(line) - 2);
			err = -EINVAL;
			break;
		}
		if (hash)
			*hash = 0;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		if (keys++) {
			snprintf(why, why_len, "%s:%d: a second key line (the file holds one key)",
				 path, lineno);
			err = -EINVAL;
		} else if (rsvp_key_line_parse(s, &out->id, out->secret, &out->len, &problem)) {
			snprintf(why, why_len, "%s:%d: %s", path, lineno, problem);
			err = -EINVAL;
		}
	}
	secret_wipe(line, sizeof(line));
	if (!err && !keys) {
		snprintf(why, why_len, "%s: no key line (want KEYID HEXKEY)", path);
		err = -EINVAL;
	}
	return err;
}

int rsvp_key_file_read(const char *path, struct rsvp_key_file *out, char *why, size_t why_len)
{
	struct stat st;
	FILE *f;
	int err;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -EINVAL;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s: not a regular file", path);
		fclose(f);
		return -EINVAL;
	}
	out->loose_mode = (st.st_mode & 077) != 0;
	err = read_key_lines(f, path, out, why, why_len);
	fclose(f);
	if (err)
		secret_wipe(out, sizeof(*out));
	return err;
}

/* ---------------------------------------------------------------- replays */

enum rsvp_err rsvp_replay_accept(struct rsvp_replay *r, const union lh_ip_addr *sender,
				 uint64_t key_id, uint64_t seq)
{
	unsigned int i;

	for (i = 0; i < r->used; i++) {
		if (r->slot[i].key_id != key_id ||
		    memcmp(r->slot[i].sender.b, sender->b, sizeof(sender->b)) != 0)
			continue;
		uint64_t last = r->slot[i].last_seq, d;

		if (seq > last) {
			d = seq - last;
			r->slot[i].seen = d >= 64 ? 1 : (r->slot[i].seen << d) | 1;
			r->slot[i].last_seq = seq;
			return RSVP_E_OK;
		}
		/* below the highest: inside the window and not seen, else a replay */
		d = last - seq;
		if (d >= RSVP_REPLAY_WINDOW || (r->slot[i].seen & (1ull << d)))
			return RSVP_E_INTEGRITY_REPLAY;
		r->slot[i].seen |= 1ull << d;
		return RSVP_E_OK;
	}
	if (r->used == RSVP_REPLAY_SLOTS)
		return RSVP_E_INTEGRITY_REPLAY;
	r->slot[i].sender = *sender;
	r->slot[i].key_id = key_id;
	r->slot[i].last_seq = seq;
	r->slot[i].seen = 1;
	r->used++;
	return RSVP_E_OK;
}
