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
 * main.c picks one. This header holds their entry points and the XDP pass
 * program the emulator puts on its ports (xdp_pass.c).
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

#endif /* LH_LHWAN_H */
