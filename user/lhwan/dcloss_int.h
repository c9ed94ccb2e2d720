/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What lhwan dcloss's two files share: dcloss.c (the commands: attach,
 * stats, detach, check) and dcloss_prog.c (the loss program, assembled
 * at run time, and the model in its map's value).
 */
#ifndef LH_LHWAN_DCLOSS_INT_H
#define LH_LHWAN_DCLOSS_INT_H

#include <stdbool.h>
#include <stdint.h>

#define DCLOSS_NAME_IN "lh_dcloss_in"
#define DCLOSS_NAME_OUT "lh_dcloss_out"

enum dcloss_kind { DC_NONE, DC_RANDOM, DC_EVERY, DC_GEMODEL };

/* The map value, shared with the program (offsets used below) */
struct dcloss_val {
	uint32_t kind;
	uint32_t p; /* random: threshold; gemodel: good -> bad */
	uint32_t r; /* gemodel: bad -> good */
	uint32_t h; /* gemodel: transmission probability in bad */
	uint32_t k1; /* gemodel: loss probability in good */
	uint32_t state; /* gemodel: 1 good, 2 bad */
	uint64_t n, k; /* every */
	uint64_t count; /* every: frames counted */
	uint64_t seen;
	uint64_t dropped;
	uint32_t blackhole; /* egress: ifindex lost frames are redirected to, 0: drop */
	uint32_t pad;
	char spec[128]; /* canonical text, for stats */
};

/* A loss SPEC (none, random, gemodel, every) into the map's value; 0, or -EINVAL said why */
int spec_to_val(const char *text, struct dcloss_val *v);

/*
 * The program for ingress (XDP) or egress (tcx) loaded, reading its model from
 * map_fd; its fd, or -errno after saying why (with the verifier's log)
 */
int dcloss_prog_load(int map_fd, bool ingress);

#endif /* LH_LHWAN_DCLOSS_INT_H */
