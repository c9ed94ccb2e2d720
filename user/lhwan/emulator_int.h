/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the WAN emulator's files share (`lhwan run`): emulator.c (start, the
 * workers, signals, stop), emulator_options.c (the option table and usage),
 * emulator_dir.c (a direction's frame slots, timing wheel and model states),
 * emulator_ports.c (the AF_PACKET ports and frames back as the wire had them),
 * emulator_forward.c (the forwarding loop: read, decide, send what is due),
 * emulator_impair.c (loss, duplication and stalls decided on arrival),
 * emulator_shape.c (when a frame leaves: rate, buffer, delay, jitter,
 * reordering) and emulator_stats.c (the JSON statistics).
 */
#ifndef LH_LHWAN_EMULATOR_INT_H
#define LH_LHWAN_EMULATOR_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/if_packet.h>

#include "lossmodel.h"
#include "pktio.h"
#include "twheel.h"

#define MAX_RULES 8
#define RX_BATCH 64
#define TX_BATCH 256
#define DEFAULT_POOL 131072
#define DEFAULT_QUEUE_TIME_NS 50000000ULL /* bottleneck buffer: 50 ms at the rate */
#define MIN_QUEUE_BYTES (256ULL * 1024)
#define TICK_NS 16384 /* wheel slot: 16.4 us */
#define EARLY_NS 2000 /* send what is due within 2 us with this batch */
/*
 * A timed sleep in this VM wakes 50-100 us late; sleep until SPIN_NS before
 * the next departure and poll the rest of the way, so the delay a frame sees
 * is the one configured, not that plus a scheduler's wake-up latency.
 */
#define SPIN_NS 40000
#define MAX_SLEEP_NS 50000000ULL

#define STAT_ADD(x, v) __atomic_store_n(&(x), (x) + (v), __ATOMIC_RELAXED)
#define STAT_GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

enum { DIR_A2B, DIR_B2A, NR_DIRS };
extern const char *const dir_names[NR_DIRS];

enum jitter_dist { JITTER_UNIFORM, JITTER_NORMAL };

struct dir_cfg {
	uint64_t delay_ns;
	uint64_t jitter_ns;
	enum jitter_dist jitter_dist;
	bool jitter_reorder; /* let jitter reorder packets (netem without rate) */
	uint64_t rate_bps; /* 0: unlimited */
	uint64_t queue_bytes; /* bottleneck buffer; 0: DEFAULT_QUEUE_TIME_NS at the rate */
	int32_t overhead; /* bytes added to each frame for the rate */
	struct lh_loss_spec loss[MAX_RULES];
	unsigned int nr_loss;
	/* --stall: a frame a rule picks waits stall_ns more (head of line) */
	struct lh_loss_spec stall[MAX_RULES];
	uint64_t stall_ns[MAX_RULES];
	unsigned int nr_stall;
	uint32_t dup_p, dup_corr;
	uint32_t reorder_p, reorder_corr, reorder_gap;
};

struct dir_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t matched; /* frames the loss / dup / reorder models saw */
	uint64_t drop_loss; /* frames the loss models dropped */
	uint64_t drop_queue; /* bottleneck buffer full */
	uint64_t drop_pool; /* no free slot */
	uint64_t drop_oversize; /* larger than a slot */
	uint64_t drop_tx; /* sendmmsg refused */
	uint64_t duplicated, reordered;
	uint64_t stalled; /* frames a --stall rule held back */
	uint64_t loss_bursts; /* runs of consecutive dropped matched frames */
	uint64_t inflight, inflight_max;
	uint64_t late_sum_ns, late_max_ns; /* how much after its due time a frame left */
	uint64_t backlog_max_ns; /* longest wait in the bottleneck buffer */
};

struct port {
	const char *name;
	struct lh_pktio *io;
	int ifindex;
	int xdp_fd;
	unsigned int mtu;
};

struct dir {
	int id;
	struct dir_cfg cfg;
	struct port *rx, *tx;
	/* pool of frame slots */
	uint8_t *slots;
	size_t slot_size;
	uint32_t nr_slots;
	uint32_t *len;
	uint32_t *free_stack;
	uint32_t nr_free;
	struct lh_twheel tw;
	/* models */
	struct lh_loss_state loss[MAX_RULES];
	struct lh_loss_state stall[MAX_RULES];
	struct lh_prng prng;
	struct lh_crandom dup_c, reorder_c;
	bool need_parse;
	uint64_t link_free_at, last_deliver;
	uint32_t reorder_counter;
	bool last_lost;
	/* due frames not yet taken by the kernel */
	uint32_t pend[TX_BATCH];
	uint32_t nr_pend, pend_off;
	struct dir_stats st;
	pthread_t thread;
};

struct emu {
	struct port port[2];
	struct dir dir[NR_DIRS];
	bool match_roce;
	uint64_t seed;
	int threads;
	const char *stats_file;
	uint64_t stats_interval_ns;
	uint64_t duration_ns;
	bool json, pretty, no_xdp;
	bool check; /* only validate the options */
	bool verbose;
	uint32_t pool;
	uint64_t started_ns;
};

/* emulator.c: set by the signal handler, read by the workers */
extern volatile sig_atomic_t stop_flag, stats_flag;
/*
 * SIGUSR2 pauses the loss rules and the next one resumes them: a test can
 * keep loss to the moments its fault needs (a gateway killed under loss)
 * while the rest of the run samples nothing of the NICs' own luck
 */
extern volatile sig_atomic_t loss_paused;

/* emulator_options.c: argv into e (defaults first); 0, or -EINVAL after saying why */
int emu_parse_args(struct emu *e, int argc, char **argv);

/* emulator_dir.c */
/* A direction's slots, timing wheel and model states, from its cfg; 0 or -errno */
int dir_init(struct emu *e, struct dir *d, int id, uint64_t now);
void dir_free(struct dir *d);

static inline uint8_t *slot_data(struct dir *d, uint32_t i)
{
	return d->slots + (size_t)i * d->slot_size;
}

static inline void slot_put(struct dir *d, uint32_t i)
{
	d->free_stack[d->nr_free++] = i;
}

/* emulator_ports.c */
/* Both ports opened (XDP pass program unless --no-xdp); 0, or -errno said why */
int open_ports(struct emu *e);
void close_ports(struct emu *e);
int port_recv(struct port *p, struct lh_frame *f, struct tpacket_auxdata *aux, unsigned int n);
uint32_t fix_frame(uint8_t *f, uint32_t len, uint32_t cap, const struct tpacket_auxdata *aux);

/* emulator_forward.c: one worker thread's loop over its directions */
struct worker {
	struct emu *e;
	struct dir *dirs[NR_DIRS];
	int nr;
};

void *worker_run(void *arg);

/* emulator_impair.c */
void handle_frame(struct emu *e, struct dir *d, uint32_t slot, uint32_t len, uint64_t now);

/* emulator_shape.c */
uint64_t queue_limit(const struct dir_cfg *c);
bool schedule(struct dir *d, uint32_t slot, uint32_t len, uint64_t now, bool matched,
	      uint64_t stall_ns);

/* emulator_stats.c */
void write_stats(struct emu *e, FILE *out, bool pretty, const char *state);
void write_stats_file(struct emu *e, const char *state);

#endif /* LH_LHWAN_EMULATOR_INT_H */
