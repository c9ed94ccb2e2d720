/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lhwan: the WAN emulator of longhaul's test world, and its two helpers.
 *   lhwan [run] ...      forward frames between two interfaces with delay,
 *                        rate, loss, duplication and reordering (emulator*.c,
 *                        their map in emulator_int.h)
 *   lhwan probe ...      send / receive numbered RoCEv2-shaped test packets
 *                        and measure delay, rate and loss patterns (probe*.c,
 *                        probe_int.h)
 *   lhwan dcloss ...     attach a tiny XDP + tcx loss program to a host
 *                        interface for loss inside a data center (dcloss*.c)
 * main.c picks one. This header holds their entry points, the XDP pass
 * program the emulator puts on its ports (xdp_pass.c) and the option
 * callbacks the tables share (lhwan_opts.c).
 */
#ifndef LH_LHWAN_H
#define LH_LHWAN_H

int emulator_main(int argc, char **argv);
int probe_main(int argc, char **argv);
int dcloss_main(int argc, char **argv);

/*
 * Attach an XDP program that passes everything to ifindex unless one is
 * attached already: a veth receives XDP_TX / XDP_REDIRECT frames from its
 * peer only when it runs XDP itself, and with XDP it also stops getting GSO
 * super-frames. Returns the program fd (>= 0), 0 if something was attached
 * already, or -errno.
 */
int xdp_pass_attach(int ifindex);
void xdp_pass_detach(int ifindex, int prog_fd);

struct lh_opt;
struct lh_opt_ctx;

/*
 * lhwan_opts.c: an LH_OPT_FUNC parse callback for a rate in bit/s into the
 * uint64_t field its entry names (LH_FIELD); as tc, a bare number other than 0
 * is refused (100 could mean anything), where LH_OPT_RATE takes it as bit/s
 */
int lhwan_opt_rate(void *cfg, const char *arg, const struct lh_opt *o,
		   const struct lh_opt_ctx *ctx);

#endif /* LH_LHWAN_H */
