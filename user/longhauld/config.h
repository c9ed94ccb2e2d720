/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* longhauld's settings: command line and config file (docs/operations.md). */
#ifndef LONGHAULD_CONFIG_H
#define LONGHAULD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include "instance.h"

/* the least --pool-slots by default: a window of 128 PSNs (rxe) for each of 32 QPs, 17 MiB */
#define LH_POOL_MIN_DEFAULT 4096

/* Exit statuses: one per failure class */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 2, /* bad flags or config */
	EXIT_NO_IFACE = 3, /* an interface does not exist */
	EXIT_BUSY = 4, /* another instance holds the interface or the pin directory */
	EXIT_KERNEL = 5, /* the kernel refused: missing feature, verifier */
};

enum lh_mode {
	MODE_LR2, /* Depot and Sentry */
	MODE_OBSERVE, /* the gateway pass-through: parse, count, pass */
	MODE_CREDIT, /* credit-based flow control over RSVP, a hop of it (docs/rsvp.md) */
};


enum lh_xdp_mode { XDPM_AUTO, XDPM_NATIVE, XDPM_GENERIC };

struct lh_iface {
	char name[IF_NAMESIZE];
	int ifindex;
};

#define LHD_MAX_CR_ROUTES 8
/* --wan interfaces of one gateway (one per long-haul path; credit keeps 4 paths a flow) */
#define LHD_MAX_WAN 4
#define LHD_MAX_NEIGHBORS 16
#define LHD_MAX_PEERS 64 /* as lh_peer holds (include/lh_maps.h LH_MAX_PEERS) */

/* --peer: a DC prefix behind a peer gateway, as a 128-bit prefix (IPv4 mapped) */
struct lhd_peer {
	uint8_t addr[16];
	uint32_t prefixlen;
};

/* --credit-route PREFIX,NEXTHOP,IFACE: a path toward PREFIX (IPv4, network order) */
struct lhd_cr_route {
	uint32_t prefix;
	uint32_t mask;
	uint8_t plen;
	uint32_t nexthop;
	struct lh_iface ifc;
};

struct lhd_config {
	struct lh_iface dc;
	struct lh_iface wan[LHD_MAX_WAN]; /* --wan, in the order given; LR2 runs on each */
	int n_wan;
	bool wan_from_cli; /* parsing: --wan on the command line replaces the file's list */
	enum lh_mode mode;
	bool depot, sentry; /* roles (LR2 mode) */
	char pin_dir[PIN_DIR_MAX];
	char instance[LH_INSTANCE_MAX];
	enum lh_xdp_mode xdp_mode;
	bool verify_icrc;
	bool keep_pins;
	bool keep_running; /* --keep: a stop leaves the data path for the next agent */
	bool takeover; /* --takeover: replace the running agent, adopting its data path */
	bool reload; /* --reload: load this build's programs even when the kept ones are its own */
	uint32_t load_nice; /* --load-nice: nice value of the loading thread (the verifier's CPU) */
	bool verbose;
	/* sizes */
	uint32_t max_qps; /* lh_qp, lh_ack, lh_pair entries */
	uint32_t max_hostpairs; /* lh_hostpair entries */
	uint32_t rings; /* Depot QPs that can hold packets at once */
	uint32_t host_qps; /* QPs learned at most with one far host, 0 none */
	uint32_t hostpair_qps; /* ... between one pair of hosts, 0 none */
	uint32_t pool_slots; /* packets the reorder + backup pools hold */
	/* timing, from the configured RTTs unless given */
	uint32_t wan_rtt_us;
	uint64_t wan_rate_bps;
	uint32_t nack_timeout_us; /* a gap not filled by then is NACKed again */
	uint32_t release_watchdog_us; /* a release stuck that long is kicked */
	uint32_t sentry_watchdog_ms; /* a Sentry recovery stuck that long is given up, 0 never */
	uint32_t nic_timeout_us; /* --nic-timeout: the watchdog's bound; 0 none */
	bool sentry_watchdog_set;
	uint32_t dc_timeout_us; /* Depot: a NIC that has not ACKed an AckReq that long, replayed; 0 never */
	bool dc_timeout_set;
	uint32_t tick_us; /* the agent's timer */
	uint32_t qp_idle_s; /* QPs quiet that long are forgotten */
	/* T/C-SACK (draft-chen-tsvwg-updated-ack): report every T or N packets, 0 off */
	uint32_t sack_time_us;
	uint32_t sack_count;
	bool sack_count_set;
	/* Sentry recovery of WAN loss: LR2 (the NIC rewinds) or gateway (paced re-sends) */
	bool gateway;
	uint64_t resend_rate_bps; /* gateway: the re-sends' pace (default wan_rate_bps) */
	uint32_t gw_bound_pkts; /* gateway: copies of all QPs at most rate x RTT, in 1 KiB packets */
	/* credit-based flow control (--mode credit) */
	struct lhd_cr_route cr_routes[LHD_MAX_CR_ROUTES]; /* in order of preference */
	int n_cr_routes;
	uint32_t rsvp_neighbors[LHD_MAX_NEIGHBORS]; /* IPv4, network order; the routes' next hops too */
	struct lhd_peer peers[LHD_MAX_PEERS]; /* --peer: none, every far host is taken */
	int n_peers;
	/* --report-key-file: Depot reports signed, and required signed (LH_CFG_REPORT_MAC) */
	uint8_t report_key[16];
	bool report_key_set;
	int n_rsvp_neighbors;
	uint32_t cr_buffer; /* bytes a hop reserves per flow: its initial credit and hold limit */
	uint32_t cr_quantum; /* credit returned upstream once this many bytes were forwarded */
	uint32_t heartbeat_ms; /* R: a Reserve at least this often; H = 3R without one: failed */
	uint32_t cr_idle_ms; /* a first hop ends a flow quiet this long */
	/* --rsvp-key-file: RSVP signed and verified (RFC 2747 INTEGRITY, docs/rsvp.md) */
	uint64_t rsvp_key_id; /* 48 bits */
	uint8_t rsvp_key[64]; /* RSVP_KEY_MAX_LEN (user/lib/rsvp_key.h) */
	uint8_t rsvp_key_len; /* 0: no key */
};

/* Defaults, then the config file (--config), then the command line; 0 or EXIT_USAGE */
int lhd_config_parse(int argc, char **argv, struct lhd_config *cfg);
void lhd_usage(FILE *f);

#endif /* LONGHAULD_CONFIG_H */
