// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhauld settings. The config file has one `key = value` per line, the
 * keys being the long options without "--" (`dc = eth1`, `wan-rtt = 20ms`,
 * `verify-icrc = yes`); `#` starts a comment. The command line wins.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"
#include "log.h"
#include "opts.h"
#include "pkt.h"
#include "report.h"
#include "rsvp_key.h"
#include "units.h"

static int set_iface(struct lh_iface *ifc, const char *name, const char *opt)
{
	if (!*name || strlen(name) >= IF_NAMESIZE) {
		pr_warn("--%s: '%s' is not an interface name\n", opt, name);
		return -EBADMSG;
	}
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	return 0;
}

/* "10.2.0.0/24,10.0.1.2,wan1" */
static int parse_cr_route(const char *arg, struct lhd_cr_route *r)
{
	char buf[128], *pfx, *nh, *ifn, *slash, *save;
	unsigned long plen = 32;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	pfx = strtok_r(buf, ",", &save);
	nh = strtok_r(NULL, ",", &save);
	ifn = strtok_r(NULL, ",", &save);
	if (!pfx || !nh || !ifn || strtok_r(NULL, ",", &save))
		return -EINVAL;
	slash = strchr(pfx, '/');
	if (slash) {
		char *end;

		*slash = 0;
		plen = strtoul(slash + 1, &end, 10);
		if (end == slash + 1 || *end || plen > 32)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, pfx, &r->prefix) != 1 || inet_pton(AF_INET, nh, &r->nexthop) != 1 ||
	    set_iface(&r->ifc, ifn, "credit-route"))
		return -EBADMSG;
	r->plen = (uint8_t)plen;
	r->mask = plen ? htonl(~0u << (32 - plen)) : 0;
	r->prefix &= r->mask;
	return 0;
}

/* "10.2.0.0/24" or "fd00:2::/64" (no length: the one host) into a 128-bit prefix */
static int parse_peer(const char *arg, struct lhd_peer *pe)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long plen;
	uint32_t a4;
	bool v4;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	memset(pe, 0, sizeof(*pe));
	v4 = inet_pton(AF_INET, buf, &a4) == 1;
	if (v4)
		lh_addr16_from_v4(pe->addr, a4);
	else if (inet_pton(AF_INET6, buf, pe->addr) != 1)
		return -EINVAL;
	plen = v4 ? 32 : 128;
	if (slash) {
		plen = strtoul(slash + 1, &end, 10);
		if (end == slash + 1 || *end || plen > (v4 ? 32ul : 128ul))
			return -EINVAL;
	}
	pe->prefixlen = (uint32_t)plen + (v4 ? 96 : 0);
	return 0;
}

/* --rsvp-key-file: the key read now, so that a bad file stops the start (EXIT_USAGE) */
static int opt_rsvp_key_file(void *cfg, const char *path, const struct lh_opt *o,
			     const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;
	struct rsvp_key_file kf;
	char why[PATH_MAX + 128];

	_Static_assert(sizeof(c->rsvp_key) == RSVP_KEY_MAX_LEN, "rsvp_key: RSVP_KEY_MAX_LEN bytes");
	(void)ctx;
	if (rsvp_key_file_read(path, &kf, why, sizeof(why))) {
		pr_warn("--%s: %s\n", o->name, why);
		return -EBADMSG;
	}
	if (kf.loose_mode)
		pr_warn("--%s %s: group or others may access the key: chmod 600 it\n", o->name,
			path);
	c->rsvp_key_id = kf.id;
	c->rsvp_key_len = (uint8_t)kf.len;
	memcpy(c->rsvp_key, kf.secret, kf.len);
	secret_wipe(&kf, sizeof(kf));
	return 0;
}

static int opt_dc(void *cfg, const char *arg, const struct lh_opt *o, const struct lh_opt_ctx *ctx)
{
	(void)ctx;
	return set_iface(&((struct lhd_config *)cfg)->dc, arg, o->name);
}

/* --wan on the command line replaces the config file's list; repeated, it adds */
static int opt_wan(void *cfg, const char *arg, const struct lh_opt *o, const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;
	int i;

	if (!ctx->from_file && !c->wan_from_cli) {
		c->n_wan = 0;
		c->wan_from_cli = true;
	}
	if (c->n_wan >= LHD_MAX_WAN) {
		pr_warn("--%s %s: at most %d WAN interfaces\n", o->name, arg, LHD_MAX_WAN);
		return -EBADMSG;
	}
	for (i = 0; i < c->n_wan; i++) {
		if (!strcmp(c->wan[i].name, arg)) {
			pr_warn("--%s %s: given twice\n", o->name, arg);
			return -EBADMSG;
		}
	}
	if (set_iface(&c->wan[c->n_wan], arg, o->name))
		return -EBADMSG;
	c->n_wan++;
	return 0;
}

/* "depot,sentry", "depot", "sentry" */
static int opt_roles(void *cfg, const char *arg, const struct lh_opt *o,
		     const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;
	char buf[64], *tok, *save;

	(void)o;
	(void)ctx;
	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	c->depot = c->sentry = false;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "depot"))
			c->depot = true;
		else if (!strcmp(tok, "sentry"))
			c->sentry = true;
		else
			return -EINVAL;
	}
	return c->depot || c->sentry ? 0 : -EINVAL;
}

/* a name for a directory under DEFAULT_PIN_ROOT: no '/', no leading '.' */
static int opt_instance(void *cfg, const char *arg, const struct lh_opt *o,
			const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;

	(void)o;
	(void)ctx;
	if (!lh_instance_name_ok(arg))
		return -EINVAL;
	snprintf(c->instance, sizeof(c->instance), "%s", arg);
	return 0;
}

/* in ms, rounded up; 0 never */
static int opt_sentry_watchdog(void *cfg, const char *arg, const struct lh_opt *o,
			       const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;
	uint64_t ns;

	(void)o;
	(void)ctx;
	if (lh_parse_time_ns(arg, "ms", &ns) || ns / 1000 > UINT32_MAX)
		return -EINVAL;
	c->sentry_watchdog_ms = (uint32_t)((ns / 1000 + 999) / 1000);
	return 0;
}

static int opt_credit_route(void *cfg, const char *arg, const struct lh_opt *o,
			    const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;
	int err;

	(void)o;
	(void)ctx;
	if (c->n_cr_routes >= LHD_MAX_CR_ROUTES)
		return -EINVAL;
	err = parse_cr_route(arg, &c->cr_routes[c->n_cr_routes]);
	if (!err)
		c->n_cr_routes++;
	return err;
}

static int opt_peer(void *cfg, const char *arg, const struct lh_opt *o, const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;

	(void)o;
	(void)ctx;
	if (c->n_peers >= LHD_MAX_PEERS || parse_peer(arg, &c->peers[c->n_peers]))
		return -EINVAL;
	c->n_peers++;
	return 0;
}

static int opt_report_key_file(void *cfg, const char *arg, const struct lh_opt *o,
			       const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;
	char why[300];

	(void)ctx;
	if (lh_report_key_load(arg, c->report_key, why, sizeof(why))) {
		pr_warn("--%s: %s\n", o->name, why);
		return -EBADMSG;
	}
	c->report_key_set = true;
	return 0;
}

static int opt_rsvp_neighbor(void *cfg, const char *arg, const struct lh_opt *o,
			     const struct lh_opt_ctx *ctx)
{
	struct lhd_config *c = cfg;

	(void)o;
	(void)ctx;
	if (c->n_rsvp_neighbors >= LHD_MAX_NEIGHBORS ||
	    inet_pton(AF_INET, arg, &c->rsvp_neighbors[c->n_rsvp_neighbors]) != 1)
		return -EINVAL;
	c->n_rsvp_neighbors++;
	return 0;
}

static void defaults(struct lhd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = MODE_LR2;
	c->depot = c->sentry = true;
	c->max_qps = 1024;
	c->max_hostpairs = 256;
	c->wan_rtt_us = 10000;
	c->wan_rate_bps = 1000000000ull;
	c->qp_idle_s = 30;
	c->cr_buffer = 256 * 1024;
	c->heartbeat_ms = 50;
	c->cr_idle_ms = 2000;
	c->load_nice = 10;
}

/* Each mode's own options, and the interfaces it needs */
static int check_modes(const struct lhd_config *c)
{
	int i;

	if (c->mode == MODE_CREDIT) {
		if (!c->n_cr_routes) {
			pr_warn("credit mode needs at least one --credit-route PREFIX,NEXTHOP,IFACE\n");
			return -EINVAL;
		}
		if (c->n_wan) {
			pr_warn("--wan is not used in credit mode: the --credit-route interfaces are\n");
			return -EINVAL;
		}
	} else if (c->n_cr_routes || c->n_rsvp_neighbors) {
		pr_warn("--credit-route and --rsvp-neighbor are for --mode credit\n");
		return -EINVAL;
	}
	if (!c->dc.name[0] && !c->n_wan && c->mode != MODE_CREDIT) {
		pr_warn("no interface: give --dc IFACE and --wan IFACE\n");
		return -EINVAL;
	}
	if (c->mode == MODE_LR2 && (!c->dc.name[0] || !c->n_wan)) {
		pr_warn("lr2 mode needs both --dc and --wan (observe mode takes one)\n");
		return -EINVAL;
	}
	for (i = 0; i < c->n_wan; i++) {
		if (c->dc.name[0] && !strcmp(c->dc.name, c->wan[i].name)) {
			pr_warn("--dc and --wan are the same interface (%s)\n", c->dc.name);
			return -EINVAL;
		}
	}
	if (c->verify_icrc && c->mode != MODE_OBSERVE) {
		pr_warn("--verify-icrc is for --mode observe\n");
		return -EINVAL;
	}
	if ((c->host_qps || c->hostpair_qps) && c->mode != MODE_LR2) {
		pr_warn("--host-qps and --hostpair-qps are for lr2 mode\n");
		return -EINVAL;
	}
	if (c->report_key_set && c->mode != MODE_LR2) {
		pr_warn("--report-key-file is for lr2 mode (the Depot's reports)\n");
		return -EINVAL;
	}
	if (c->rsvp_key_len && c->mode != MODE_CREDIT) {
		pr_warn("--rsvp-key-file is for --mode credit (it signs RSVP)\n");
		return -EINVAL;
	}
	if (c->gateway && (c->mode != MODE_LR2 || !c->sentry)) {
		pr_warn("--recovery gateway is the Sentry's: it needs lr2 mode and the sentry role\n");
		return -EINVAL;
	}
	return 0;
}

/* Rings, pools and the credit quantum, from the rates and the round trip */
static int derive_sizes(struct lhd_config *c)
{
	uint64_t bdp_pkts, gw_pkts;

	if (c->mode == MODE_CREDIT) {
		if (!c->cr_quantum)
			c->cr_quantum = c->cr_buffer / 4 < 65536 ? c->cr_buffer / 4 : 65536;
		if (c->cr_quantum > c->cr_buffer / 2) {
			pr_warn("--credit-quantum %u: at most half the buffer (%u)\n", c->cr_quantum,
				c->cr_buffer);
			return -EINVAL;
		}
	}
	if (!c->rings || c->rings > c->max_qps)
		c->rings = c->max_qps;
	if (!c->resend_rate_bps)
		c->resend_rate_bps = c->wan_rate_bps;
	/* gateway recovery: the copies of all QPs, at most rate x RTT (in 1 KiB packets), and
	 * at least one NIC's window (128 PSNs): below that a lone QP would fall back */
	gw_pkts = c->resend_rate_bps / 8 * c->wan_rtt_us / 1000000 / 1024;
	if (gw_pkts < 128)
		gw_pkts = 128;
	if (!c->pool_slots) {
		/*
		 * held + backup packets in flight: twice the long haul's BDP in 1 KiB packets,
		 * and the gateway copies on top; at least LH_POOL_MIN_DEFAULT. A backup
		 * waits for the receiver's ACK, which a busy receiver sends late: what
		 * is in flight is then the NICs' windows, not rate x RTT (16 go-back-0
		 * QPs of 128 PSNs at 2 ms filled 1024 slots, and each packet the Depot
		 * could not hold made the receiver drop a whole 4 MB message)
		 */
		bdp_pkts = c->wan_rate_bps / 8 * c->wan_rtt_us / 1000000 / 1024;
		c->pool_slots = (uint32_t)(2 * bdp_pkts + (c->gateway ? gw_pkts : 0));
		if (c->pool_slots < LH_POOL_MIN_DEFAULT)
			c->pool_slots = LH_POOL_MIN_DEFAULT;
		if (c->pool_slots > 262144)
			c->pool_slots = 262144;
	}
	c->gw_bound_pkts = gw_pkts > c->pool_slots ? c->pool_slots : (uint32_t)gw_pkts;
	return 0;
}

/* The agent's timers, from the round trip unless given */
static void derive_timers(struct lhd_config *c)
{
	if (!c->nack_timeout_us)
		c->nack_timeout_us = c->wan_rtt_us * 3 / 2 + 1000;
	c->release_watchdog_us = 2000;
	if (!c->dc_timeout_set)
		c->dc_timeout_us = 5000;
	if (!c->sentry_watchdog_set)
		c->sentry_watchdog_ms = (uint32_t)((4ull * c->wan_rtt_us + 999) / 1000) + 50;
	/* T/C-SACK is off unless --sack-time turns it on: its NAKs are not yet safe for
	 * go-back-0 NICs, nor while a NIC waits on a receiver-DC recovery */
	if (c->sack_time_us && !c->sack_count_set)
		c->sack_count = 64;
	c->tick_us = c->nack_timeout_us / 4;
	if (c->sack_time_us && c->tick_us > c->sack_time_us / 2)
		c->tick_us = c->sack_time_us / 2; /* T's resolution */
	if (c->tick_us < 500)
		c->tick_us = 500;
	if (c->tick_us > 10000)
		c->tick_us = 10000;
}

/* What follows from the others: pin directory, pool size, timers */
static int derive(struct lhd_config *c)
{
	if (c->pin_dir[0] && c->instance[0]) {
		pr_warn("--pin-dir and --instance both name the pin directory: give one\n");
		return -EINVAL;
	}
	if (!c->pin_dir[0])
		lh_instance_pin_dir(c->pin_dir, sizeof(c->pin_dir), c->instance);
	if (check_modes(c) || derive_sizes(c))
		return -EINVAL;
	derive_timers(c);
	return 0;
}

#define CF(field) LH_FIELD(struct lhd_config, field)
#define TIME_US .type = LH_OPT_TIME, .metavar = "TIME", .unit = "ms", .scale = 1000

static const struct lh_opt_choice mode_choices[] = {
	{ "lr2", MODE_LR2 }, { "observe", MODE_OBSERVE }, { "credit", MODE_CREDIT }, { NULL, 0 },
};

static const struct lh_opt_choice xdp_mode_choices[] = {
	{ "auto", XDPM_AUTO }, { "native", XDPM_NATIVE }, { "generic", XDPM_GENERIC }, { NULL, 0 },
};

static const struct lh_opt_choice recovery_choices[] = {
	{ "lr2", false }, { "gateway", true }, { NULL, 0 },
};

/* The options, in the order of the usage text; the config keys are their long names */
static const struct lh_opt opts[] = {
	{ .type = LH_OPT_FUNC, .name = "dc", .parse = opt_dc, .metavar = "IFACE",
	  .help = "interface toward the local data center" },
	{ .type = LH_OPT_FUNC, .name = "wan", .parse = opt_wan, .metavar = "IFACE",
	  .help = "interface toward the long haul; repeat for each path\n"
		  "(up to 4): XDP and TC on each, the agent sends by the\n"
		  "one each QP's traffic uses" },
	{ .type = LH_OPT_CHOICE, .name = "mode", CF(mode), .choices = mode_choices,
	  .metavar = "MODE",
	  .help = "lr2 (default): Depot and Sentry; observe: parse, count, pass;\n"
		  "credit: a hop of credit-based flow control over RSVP" },
	{ .type = LH_OPT_FUNC, .name = "roles", .parse = opt_roles, .metavar = "LIST",
	  .help = "depot,sentry (default both)" },
	{ .type = LH_OPT_FUNC, .name = "peer", .parse = opt_peer, .metavar = "PREFIX",
	  .help = "a DC prefix behind a peer gateway (IPv4 or IPv6, e.g.\n"
		  "10.2.0.0/24); repeat, up to 64. Given: QPs only with far\n"
		  "hosts inside one are learned, any other passes unchanged,\n"
		  "counted (not_peer). None: every far host is taken" },
	{ .type = LH_OPT_FUNC, .name = "report-key-file", .parse = opt_report_key_file,
	  .metavar = "FILE",
	  .help = "the peers' shared report key (32 hex digits): the\n"
		  "Depot signs its reports, the Sentry refuses any report\n"
		  "without a valid tag (sentry_report_nomac, _mac)" },
	{ .type = LH_OPT_FUNC, .name = "instance", .parse = opt_instance, .metavar = "NAME",
	  .help = "pin under " DEFAULT_PIN_ROOT "/NAME (several gateways on a host)" },
	{ .type = LH_OPT_BUF, .name = "pin-dir", CF(pin_dir), .metavar = "DIR",
	  .help = "pin maps under DIR instead (on a bpf filesystem)" },
	{ .type = LH_OPT_CHOICE, .name = "xdp-mode", CF(xdp_mode), .choices = xdp_mode_choices,
	  .metavar = "MODE", .help = "auto (native where the driver has it), native, generic" },
	{ TIME_US, .name = "wan-rtt", CF(wan_rtt_us),
	  .help = "round-trip time of the long haul (default 10ms): timers" },
	{ .type = LH_OPT_RATE, .name = "wan-rate", CF(wan_rate_bps), .metavar = "RATE",
	  .flags = LH_OPTF_NONZERO,
	  .help = "long-haul rate (default 1gbit): pool size = 2 x rate x RTT" },
	{ .type = LH_OPT_UINT, .name = "pool-slots", CF(pool_slots), .metavar = "N", .min = 1,
	  .max = 1 << 22, .help = "packets the reorder and backup pools hold (overrides the above)" },
	{ .type = LH_OPT_UINT, .name = "max-qps", CF(max_qps), .metavar = "N", .min = 1,
	  .max = 1 << 20, .help = "connections tracked (default 1024)" },
	{ .type = LH_OPT_UINT, .name = "max-hostpairs", CF(max_hostpairs), .metavar = "N",
	  .min = 1, .max = 65536,
	  .help = "pairs of hosts with connections being paired at once\n"
		  "(16 KiB each, default 256)" },
	{ .type = LH_OPT_UINT, .name = "rings", CF(rings), .metavar = "N", .min = 1,
	  .max = 1 << 20, .help = "connections that can hold packets at once (default max-qps)" },
	{ .type = LH_OPT_UINT, .name = "host-qps", CF(host_qps), .metavar = "N", .max = 1 << 20,
	  .help = "connections learned at most with one far host; past it a\n"
		  "new one passes unchanged, counted (qp_host_limit); 0 none\n"
		  "(the default)" },
	{ .type = LH_OPT_UINT, .name = "hostpair-qps", CF(hostpair_qps), .metavar = "N",
	  .max = 1 << 20, .help = "the same for one pair of hosts (qp_hostpair_limit)" },
	{ TIME_US, .name = "nack-timeout", CF(nack_timeout_us), .flags = LH_OPTF_NONZERO,
	  .help = "re-send a Depot-NACK for a gap still open after TIME\n"
		  "(default 1.5 x wan-rtt + 1ms)" },
	{ .type = LH_OPT_FUNC, .name = "sentry-watchdog", .parse = opt_sentry_watchdog,
	  .metavar = "TIME", LH_GIVEN(struct lhd_config, sentry_watchdog_set),
	  .help = "a Sentry recovery that has not moved the receiver's\n"
		  "ACK point for TIME, or for 4 round-trip timeouts of\n"
		  "the QP when longer (doubled for each one given up\n"
		  "since the last that ended), is given up, nothing filtered\n"
		  "(default 4 x wan-rtt + 50ms; 0: never)" },
	{ TIME_US, .name = "nic-timeout", CF(nic_timeout_us), .flags = LH_OPTF_NONZERO,
	  .help = "the NICs' retransmit timeout (4.096 us x 2^timeout; rxe\n"
		  "and perftest's default 14: 67ms): a stuck recovery is\n"
		  "given up after it (or --sentry-watchdog if shorter),\n"
		  "never later, whatever the round trip (default: none)" },
	{ TIME_US, .name = "dc-timeout", CF(dc_timeout_us),
	  LH_GIVEN(struct lhd_config, dc_timeout_set),
	  .help = "the receiving NIC has not ACKed, TIME after it went\n"
		  "out, a packet that asks for an ACK: the Depot replays\n"
		  "from the NIC's ACK point (loss in the receiver's DC no\n"
		  "NAK reported); doubled per try (default 5ms; 0: never)" },
	{ .type = LH_OPT_TIME, .name = "qp-idle", CF(qp_idle_s), .metavar = "TIME", .unit = "ms",
	  .scale = 1000000000, .min = 1, .help = "forget connections quiet for TIME (default 30s)" },
	{ TIME_US, .name = "sack-time", CF(sack_time_us),
	  .help = "T/C-SACK: the Depot reports each QP receiving data every\n"
		  "TIME; the Sentry NAKs data outstanding with no report\n"
		  "for 2 x TIME (default 0: off; try wan-rtt / 2)" },
	{ .type = LH_OPT_UINT, .name = "sack-count", CF(sack_count), .metavar = "N",
	  .max = 1 << 20, LH_GIVEN(struct lhd_config, sack_count_set),
	  .help = "... and every N data packets (default 64 with --sack-time)" },
	{ .type = LH_OPT_CHOICE, .name = "recovery", CF(gateway), .choices = recovery_choices,
	  .metavar = "MODE",
	  .help = "Sentry's recovery of WAN loss: lr2 (default): the NIC\n"
		  "rewinds and the Sentry filters its replay; gateway: the\n"
		  "Sentry keeps a copy of each packet until it is ACKed and\n"
		  "re-sends what the Depot misses itself, paced, no NIC NAK\n"
		  "(copies bounded by resend-rate x wan-rtt; over it, or with\n"
		  "the pool empty, a QP falls back to lr2 until all is ACKed)" },
	{ .type = LH_OPT_RATE, .name = "resend-rate", CF(resend_rate_bps), .metavar = "RATE",
	  .flags = LH_OPTF_NONZERO, .help = "gateway recovery: pace of the re-sends (default wan-rate)" },
	{ .type = LH_OPT_FLAG, .name = "verify-icrc", CF(verify_icrc),
	  .help = "observe mode: recompute every ICRC, count bad ones" },
	{ .type = LH_OPT_FLAG, .name = "keep-pins", CF(keep_pins),
	  .help = "leave the pinned maps and the lock file after exit\n"
		  "(post-mortem reading with longhaul status/stats)" },
	{ .type = LH_OPT_FLAG, .name = "keep", CF(keep_running),
	  .help = "on SIGTERM/SIGINT leave the data path running (programs\n"
		  "attached, maps and links pinned) for the next longhauld\n"
		  "of this instance, which adopts it (SIGUSR2 does so\n"
		  "without --keep); alone longer than 4 x wan-rtt + 50 ms\n"
		  "(at least 100 ms) it lets every packet pass and is not\n"
		  "adopted: restart with --takeover" },
	{ .type = LH_OPT_FLAG, .name = "takeover", CF(takeover),
	  .help = "replace the instance's running longhauld without a\n"
		  "pause: load this build's programs beside it, then have\n"
		  "it stop keeping its data path (SIGUSR2) and adopt that\n"
		  "(an upgrade or a restart; alone when none runs). When\n"
		  "it runs this very build, its programs are reused as\n"
		  "they are: no load, no verifier" },
	{ .type = LH_OPT_FLAG, .name = "reload", CF(reload),
	  .help = "load and verify this build's programs even when the\n"
		  "running or kept data path runs this very build" },
	{ .type = LH_OPT_UINT, .name = "load-nice", CF(load_nice), .metavar = "N", .max = 19,
	  .help = "nice value (0-19, default 10) of the thread that loads\n"
		  "the programs: the verifier takes a core for about a\n"
		  "second, which a running data path and its peers need\n"
		  "more (a takeover loads beside the running agent)" },
	{ .type = LH_OPT_CONFIG, .name = "config", .metavar = "FILE",
	  .help = "read `key = value` lines (long options without --)" },
	{ .type = LH_OPT_FLAG, .name = "verbose", .short_opt = 'v', CF(verbose),
	  .help = "debug messages, libbpf's included" },
	{ .type = LH_OPT_HELP, .name = "help", .short_opt = 'h' },
	{ .type = LH_OPT_HEADING,
	  .help = "Credit mode (docs/rsvp.md, docs/operations.md): --dc is optional (the side flows\n"
		  "start from), --wan unused; a router between two credit hops runs it without --dc." },
	{ .type = LH_OPT_FUNC, .name = "credit-route", .parse = opt_credit_route,
	  .metavar = "PREFIX,NEXTHOP,IFACE",
	  .help = "a path toward PREFIX (IPv4) via the RSVP\n"
		  "hop NEXTHOP on IFACE; repeat, most preferred first" },
	{ .type = LH_OPT_FUNC, .name = "rsvp-neighbor", .parse = opt_rsvp_neighbor,
	  .metavar = "ADDR",
	  .help = "accept RSVP from ADDR too (the routes' next hops are\n"
		  "accepted); repeat" },
	{ .type = LH_OPT_SIZE, .name = "credit-buffer", CF(cr_buffer), .metavar = "SIZE",
	  .min = 4096, .max = 1u << 30,
	  .help = "bytes reserved per flow: the credit granted upstream\n"
		  "and the most held here (default 256k)" },
	{ .type = LH_OPT_SIZE, .name = "credit-quantum", CF(cr_quantum), .metavar = "SIZE",
	  .min = 1, .max = 1u << 30,
	  .help = "return credit upstream per SIZE forwarded (default\n"
		  "buffer / 4, at most 64k)" },
	{ .type = LH_OPT_TIME, .name = "heartbeat", CF(heartbeat_ms), .metavar = "TIME",
	  .unit = "ms", .scale = 1000000, .min = 1, .max = 60000,
	  .help = "R: a Reserve upstream at least every R; none for 3R and\n"
		  "a path counts as failed (default 50ms)" },
	{ .type = LH_OPT_TIME, .name = "credit-idle", CF(cr_idle_ms), .metavar = "TIME",
	  .unit = "ms", .scale = 1000000, .min = 10,
	  .help = "a first hop ends a flow quiet for TIME (default 2s)" },
	{ .type = LH_OPT_FUNC, .name = "rsvp-key-file", .parse = opt_rsvp_key_file,
	  .metavar = "FILE",
	  .help = "one line KEYID HEXKEY (key id of up to 48 bits, 16 to\n"
		  "64 bytes of hex): every RSVP message sent carries an\n"
		  "INTEGRITY object (RFC 2747, HMAC-MD5), every one received\n"
		  "must verify (refused, counted: integrity_*); the file\n"
		  "readable by root only (chmod 600)" },
	{ .type = LH_OPT_END },
};

void lhd_usage(FILE *f)
{
	fprintf(f, "Usage: longhauld --dc IFACE --wan IFACE [OPTIONS]\n"
		   "Run longhaul on a gateway until SIGINT/SIGTERM: Depot for RoCEv2 arriving from the\n"
		   "WAN, Sentry for RoCEv2 leaving toward it. Programs are detached and pins removed\n"
		   "on exit.\n\n");
	lh_opts_print(f, opts);
	fprintf(f,
		"TIME: 250us, 20ms, 1s (bare numbers are ms); RATE: 100mbit, 10gbit, 1g;\n"
		"SIZE: 65536, 64k, 4m.\n"
		"\n"
		"Exit status: 0 stopped cleanly, %d bad usage or config, %d no such interface,\n"
		"%d interface or pin directory in use, %d kernel refused (feature, verifier).\n",
		EXIT_USAGE, EXIT_NO_IFACE, EXIT_BUSY, EXIT_KERNEL);
}

static const struct lh_opts lhd_opts = { .opts = opts, .usage = lhd_usage };

int lhd_config_parse(int argc, char **argv, struct lhd_config *cfg)
{
	int first;

	defaults(cfg);
	first = lh_opts_parse(&lhd_opts, argc, argv, cfg);
	if (first < 0)
		return EXIT_USAGE;
	if (first < argc) {
		pr_warn("unexpected argument '%s'\n", argv[first]);
		return EXIT_USAGE;
	}
	return derive(cfg) ? EXIT_USAGE : 0;
}
