/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What RFC 2747's INTEGRITY needs around the codec (user/lib/rsvp.h): the key
 * file longhauld reads (--rsvp-key-file, docs/operations.md) and the
 * receiver's memory of the last Sequence Number it accepted from each sender
 * under each key (RFC 2747 section 2.2), which refuses replays.
 */
#ifndef LH_USER_RSVP_KEY_H
#define LH_USER_RSVP_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkt.h"
#include "rsvp.h"

#define RSVP_KEY_MIN_LEN 16 /* bytes: MD5's output, RFC 2104 section 3's least */
#define RSVP_KEY_MAX_LEN 64 /* HMAC-MD5's block: a longer key is only hashed down */

/* The key file: one line "KEYID HEXKEY" ('#' comments and blank lines aside) */
struct rsvp_key_file {
	uint64_t id; /* at most 48 bits, decimal or 0x hex */
	size_t len;
	uint8_t secret[RSVP_KEY_MAX_LEN];
	bool loose_mode; /* group or others may read or write the file */
};

/*
 * One key line into id and secret (RSVP_KEY_MAX_LEN bytes of room). 0, or
 * -EINVAL with *why saying what is wrong with it.
 */
int rsvp_key_line_parse(const char *line, uint64_t *id, uint8_t *secret, size_t *len,
			const char **why);

/*
 * Read the key file at path. 0, or -EINVAL with why (why_len bytes) saying
 * "PATH: problem" or "PATH:LINE: problem".
 */
int rsvp_key_file_read(const char *path, struct rsvp_key_file *out, char *why, size_t why_len);

/*
 * Senders remembered at most: longhauld takes RSVP from its configured
 * neighbours only (16 and the 8 routes' next hops), each under its one key.
 */
#define RSVP_REPLAY_SLOTS 32
/*
 * Sequence Numbers below the highest accepted that are still taken, once
 * each: messages reordered on the way (a link bundle, ECMP, two paths) are
 * not replays. Routers call it the authentication window (Huawei's
 * `mpls rsvp-te authentication window-size`, 1-64, 32 advised on trunks; a
 * window of 1 is the strict rule). A fresh-clone CI run refused 2 reordered
 * messages of a legitimate neighbour with the strict rule (70-credit #7).
 */
#define RSVP_REPLAY_WINDOW 32

struct rsvp_replay {
	struct {
		union lh_ip_addr sender;
		uint64_t key_id;
		uint64_t last_seq; /* the highest Sequence Number accepted */
		uint64_t seen; /* bit i: last_seq - i accepted (bit 0: last_seq) */
	} slot[RSVP_REPLAY_SLOTS];
	unsigned int used;
};

/*
 * A message from sender whose digest verified under key_id, with Sequence
 * Number seq: RSVP_E_OK and seq remembered when it is above the highest one
 * accepted from that sender under that key (or the first from it), or below
 * it by less than RSVP_REPLAY_WINDOW and not accepted before; else
 * RSVP_E_INTEGRITY_REPLAY, nothing changed. With every slot taken a new
 * sender is refused (RSVP_E_INTEGRITY_REPLAY): forgetting another sender
 * would let its old messages be replayed.
 */
enum rsvp_err rsvp_replay_accept(struct rsvp_replay *r, const union lh_ip_addr *sender,
				 uint64_t key_id, uint64_t seq);

#endif /* LH_USER_RSVP_KEY_H */
