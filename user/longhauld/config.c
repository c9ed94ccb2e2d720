// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhauld settings. The config file has one `key = value` per line, the
 * keys being the long options without "--" (`dc = eth1`, `wan-rtt = 20ms`,
 * `verify-icrc = yes`); `#` starts a comment. The command line wins.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>

#include "config.h"
#include "log.h"
#include "report.h"
#include "units.h"
#include "rsvp_key.h"

enum {
	OPT_DC = 256,
	OPT_WAN,
	OPT_MODE,
	OPT_ROLES,
	OPT_INSTANCE,
	OPT_PIN_DIR,
	OPT_XDP_MODE,
	OPT_VERIFY_ICRC,
	OPT_KEEP_PINS,
	OPT_KEEP,
	OPT_TAKEOVER,
	OPT_RELOAD,
	OPT_LOAD_NICE,
	OPT_MAX_QPS,
	OPT_MAX_HOSTPAIRS,
	OPT_RINGS,
	OPT_POOL_SLOTS,
	OPT_WAN_RTT,
	OPT_WAN_RATE,
	OPT_NACK_TIMEOUT,
	OPT_SENTRY_WATCHDOG,
	OPT_NIC_TIMEOUT,
	OPT_DC_TIMEOUT,
	OPT_QP_IDLE,
	OPT_SACK_TIME,
	OPT_SACK_COUNT,
	OPT_RECOVERY,
	OPT_RESEND_RATE,
	OPT_CONFIG,
	OPT_CREDIT_ROUTE,
	OPT_RSVP_NEIGHBOR,
	OPT_PEER,
	OPT_REPORT_KEY_FILE,
	OPT_HOST_QPS,
	OPT_HOSTPAIR_QPS,
	OPT_CREDIT_BUFFER,
	OPT_CREDIT_QUANTUM,
	OPT_HEARTBEAT,
	OPT_CREDIT_IDLE,
	OPT_RSVP_KEY_FILE,
};

static const struct option long_opts[] = {
	{ "dc", required_argument, NULL, OPT_DC },
	{ "wan", required_argument, NULL, OPT_WAN },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "roles", required_argument, NULL, OPT_ROLES },
	{ "instance", required_argument, NULL, OPT_INSTANCE },
	{ "pin-dir", required_argument, NULL, OPT_PIN_DIR },
	{ "xdp-mode", required_argument, NULL, OPT_XDP_MODE },
	{ "verify-icrc", no_argument, NULL, OPT_VERIFY_ICRC },
	{ "keep-pins", no_argument, NULL, OPT_KEEP_PINS },
	{ "keep", no_argument, NULL, OPT_KEEP },
	{ "takeover", no_argument, NULL, OPT_TAKEOVER },
	{ "reload", no_argument, NULL, OPT_RELOAD },
	{ "load-nice", required_argument, NULL, OPT_LOAD_NICE },
	{ "max-qps", required_argument, NULL, OPT_MAX_QPS },
	{ "max-hostpairs", required_argument, NULL, OPT_MAX_HOSTPAIRS },
	{ "rings", required_argument, NULL, OPT_RINGS },
	{ "pool-slots", required_argument, NULL, OPT_POOL_SLOTS },
	{ "wan-rtt", required_argument, NULL, OPT_WAN_RTT },
	{ "wan-rate", required_argument, NULL, OPT_WAN_RATE },
	{ "nack-timeout", required_argument, NULL, OPT_NACK_TIMEOUT },
	{ "sentry-watchdog", required_argument, NULL, OPT_SENTRY_WATCHDOG },
	{ "nic-timeout", required_argument, NULL, OPT_NIC_TIMEOUT },
	{ "dc-timeout", required_argument, NULL, OPT_DC_TIMEOUT },
	{ "qp-idle", required_argument, NULL, OPT_QP_IDLE },
	{ "sack-time", required_argument, NULL, OPT_SACK_TIME },
	{ "sack-count", required_argument, NULL, OPT_SACK_COUNT },
	{ "recovery", required_argument, NULL, OPT_RECOVERY },
	{ "resend-rate", required_argument, NULL, OPT_RESEND_RATE },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "credit-route", required_argument, NULL, OPT_CREDIT_ROUTE },
	{ "rsvp-neighbor", required_argument, NULL, OPT_RSVP_NEIGHBOR },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "report-key-file", required_argument, NULL, OPT_REPORT_KEY_FILE },
	{ "host-qps", required_argument, NULL, OPT_HOST_QPS },
	{ "hostpair-qps", required_argument, NULL, OPT_HOSTPAIR_QPS },
	{ "credit-buffer", required_argument, NULL, OPT_CREDIT_BUFFER },
	{ "credit-quantum", required_argument, NULL, OPT_CREDIT_QUANTUM },
	{ "heartbeat", required_argument, NULL, OPT_HEARTBEAT },
	{ "credit-idle", required_argument, NULL, OPT_CREDIT_IDLE },
	{ "rsvp-key-file", required_argument, NULL, OPT_RSVP_KEY_FILE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void lhd_usage(FILE *f)
{
	fprintf(f,
		"Usage: longhauld --dc IFACE --wan IFACE [OPTIONS]\n"
		"Run longhaul on a gateway until SIGINT/SIGTERM: Depot for RoCEv2 arriving from the\n"
		"WAN, Sentry for RoCEv2 leaving toward it. Programs are detached and pins removed\n"
		"on exit.\n"
		"\n"
		"  --dc IFACE          interface toward the local data center\n"
		"  --wan IFACE         interface toward the long haul; repeat for each path\n"
		"                      (up to 4): XDP and TC on each, the agent sends by the\n"
		"                      one each QP's traffic uses\n"
		"  --mode MODE         lr2 (default): Depot and Sentry; observe: parse, count, pass;\n"
		"                      credit: a hop of credit-based flow control over RSVP\n"
		"  --roles LIST        depot,sentry (default both)\n"
		"  --peer PREFIX       a DC prefix behind a peer gateway (IPv4 or IPv6, e.g.\n"
		"                      10.2.0.0/24); repeat, up to 64. Given: QPs only with far\n"
		"                      hosts inside one are learned, any other passes unchanged,\n"
		"                      counted (not_peer). None: every far host is taken\n"
		"  --report-key-file FILE  the peers' shared report key (32 hex digits): the\n"
		"                      Depot signs its reports, the Sentry refuses any report\n"
		"                      without a valid tag (sentry_report_nomac, _mac)\n"
		"  --instance NAME     pin under " DEFAULT_PIN_ROOT "/NAME (several gateways on a host)\n"
		"  --pin-dir DIR       pin maps under DIR instead (on a bpf filesystem)\n"
		"  --xdp-mode MODE     auto (native where the driver has it), native, generic\n"
		"  --wan-rtt TIME      round-trip time of the long haul (default 10ms): timers\n"
		"  --wan-rate RATE     long-haul rate (default 1gbit): pool size = 2 x rate x RTT\n"
		"  --pool-slots N      packets the reorder and backup pools hold (overrides the above)\n"
		"  --max-qps N         connections tracked (default 1024)\n"
		"  --max-hostpairs N   pairs of hosts with connections being paired at once\n"
		"                      (16 KiB each, default 256)\n"
		"  --rings N           connections that can hold packets at once (default max-qps)\n"
		"  --host-qps N        connections learned at most with one far host; past it a\n"
		"                      new one passes unchanged, counted (qp_host_limit); 0 none\n"
		"                      (the default)\n"
		"  --hostpair-qps N    the same for one pair of hosts (qp_hostpair_limit)\n"
		"  --nack-timeout TIME re-send a Depot-NACK for a gap still open after TIME\n"
		"                      (default 1.5 x wan-rtt + 1ms)\n"
		"  --sentry-watchdog TIME  a Sentry recovery that has not moved the receiver's\n"
		"                      ACK point for TIME, or for 4 round-trip timeouts of\n"
		"                      the QP when longer (doubled for each one given up\n"
		"                      since the last that ended), is given up, nothing filtered\n"
		"                      (default 4 x wan-rtt + 50ms; 0: never)\n"
		"  --nic-timeout TIME  the NICs' retransmit timeout (4.096 us x 2^timeout; rxe\n"
		"                      and perftest's default 14: 67ms): a stuck recovery is\n"
		"                      given up after it (or --sentry-watchdog if shorter),\n"
		"                      never later, whatever the round trip (default: none)\n"
		"  --dc-timeout TIME   the receiving NIC has not ACKed, TIME after it went\n"
		"                      out, a packet that asks for an ACK: the Depot replays\n"
		"                      from the NIC's ACK point (loss in the receiver's DC no\n"
		"                      NAK reported); doubled per try (default 5ms; 0: never)\n"
		"  --qp-idle TIME      forget connections quiet for TIME (default 30s)\n"
		"  --sack-time TIME    T/C-SACK: the Depot reports each QP receiving data every\n"
		"                      TIME; the Sentry NAKs data outstanding with no report\n"
		"                      for 2 x TIME (default 0: off; try wan-rtt / 2)\n"
		"  --sack-count N      ... and every N data packets (default 64 with --sack-time)\n"
		"  --recovery MODE     Sentry's recovery of WAN loss: lr2 (default): the NIC\n"
		"                      rewinds and the Sentry filters its replay; gateway: the\n"
		"                      Sentry keeps a copy of each packet until it is ACKed and\n"
		"                      re-sends what the Depot misses itself, paced, no NIC NAK\n"
		"                      (copies bounded by resend-rate x wan-rtt; over it, or with\n"
		"                      the pool empty, a QP falls back to lr2 until all is ACKed)\n"
		"  --resend-rate RATE  gateway recovery: pace of the re-sends (default wan-rate)\n"
		"  --verify-icrc       observe mode: recompute every ICRC, count bad ones\n"
		"Credit mode (docs/rsvp.md, docs/operations.md): --dc is optional (the side flows\n"
		"start from), --wan unused; a router between two credit hops runs it without --dc.\n"
		"  --credit-route PREFIX,NEXTHOP,IFACE  a path toward PREFIX (IPv4) via the RSVP\n"
		"                      hop NEXTHOP on IFACE; repeat, most preferred first\n"
		"  --rsvp-neighbor ADDR  accept RSVP from ADDR too (the routes' next hops are\n"
		"                      accepted); repeat\n"
		"  --credit-buffer SIZE  bytes reserved per flow: the credit granted upstream\n"
		"                      and the most held here (default 256k)\n"
		"  --credit-quantum SIZE  return credit upstream per SIZE forwarded (default\n"
		"                      buffer / 4, at most 64k)\n"
		"  --heartbeat TIME    R: a Reserve upstream at least every R; none for 3R and\n"
		"                      a path counts as failed (default 50ms)\n"
		"  --credit-idle TIME  a first hop ends a flow quiet for TIME (default 2s)\n"
		"  --rsvp-key-file FILE  one line KEYID HEXKEY (key id of up to 48 bits, 16 to\n"
		"                      64 bytes of hex): every RSVP message sent carries an\n"
		"                      INTEGRITY object (RFC 2747, HMAC-MD5), every one received\n"
		"                      must verify (refused, counted: integrity_*); the file\n"
		"                      readable by root only (chmod 600)\n"
		"  --keep-pins         leave the pinned maps and the lock file after exit\n"
		"                      (post-mortem reading with longhaul status/stats)\n"
		"  --keep              on SIGTERM/SIGINT leave the data path running (programs\n"
		"                      attached, maps and links pinned) for the next longhauld\n"
		"                      of this instance, which adopts it (SIGUSR2 does so\n"
		"                      without --keep); alone longer than 4 x wan-rtt + 50 ms\n"
		"                      (at least 100 ms) it lets every packet pass and is not\n"
		"                      adopted: restart with --takeover\n"
		"  --takeover          replace the instance's running longhauld without a\n"
		"                      pause: load this build's programs beside it, then have\n"
		"                      it stop keeping its data path (SIGUSR2) and adopt that\n"
		"                      (an upgrade or a restart; alone when none runs). When\n"
		"                      it runs this very build, its programs are reused as\n"
		"                      they are: no load, no verifier\n"
		"  --reload            load and verify this build's programs even when the\n"
		"                      running or kept data path runs this very build\n"
		"  --load-nice N       nice value (0-19, default 10) of the thread that loads\n"
		"                      the programs: the verifier takes a core for about a\n"
		"                      second, which a running data path and its peers need\n"
		"                      more (a takeover loads beside the running agent)\n"
		"  --config FILE       read `key = value` lines (long options without --)\n"
		"  -v, --verbose       debug messages, libbpf's included\n"
		"  -h, --help\n"
		"TIME: 250us, 20ms, 1s (bare numbers are ms); RATE: 100mbit, 10gbit, 1g;\n"
		"SIZE: 65536, 64k, 4m.\n"
		"\n"
		"Exit status: 0 stopped cleanly, %d bad usage or config, %d no such interface,\n"
		"%d interface or pin directory in use, %d kernel refused (feature, verifier).\n",
		EXIT_USAGE, EXIT_NO_IFACE, EXIT_BUSY, EXIT_KERNEL);
}

/* "250us", "20ms", "1s", "5" (ms) -> microseconds (units.h) */
static int parse_time_us(const char *s, uint32_t *us)
{
	uint64_t ns;

	if (lh_parse_time_ns(s, "ms", &ns))
		return -EINVAL;
	if (ns / 1000 > UINT32_MAX)
		return -ERANGE;
	*us = (uint32_t)(ns / 1000);
	return 0;
}

/* "100mbit", "10gbit", "1g", "500m", "2000000" (bit/s) -> bit/s, not 0 */
static int parse_rate(const char *s, uint64_t *bps)
{
	return lh_parse_rate_bps(s, true, bps) || !*bps ? -EINVAL : 0;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int set_iface(struct lh_iface *ifc, const char *name, const char *opt)
{
	if (!*name || strlen(name) >= IF_NAMESIZE) {
		pr_warn("--%s: '%s' is not an interface name\n", opt, name);
		return -EINVAL;
	}
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	return 0;
}

/* "65536", "64k", "4m" (powers of 1024) -> bytes in [min, max] */
static int parse_size(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (lh_parse_bytes(s, &v) || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
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
		return -EINVAL;
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
	uint8_t a4[4];
	bool v4;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	memset(pe, 0, sizeof(*pe));
	v4 = inet_pton(AF_INET, buf, a4) == 1;
	if (v4) {
		pe->addr[10] = pe->addr[11] = 0xff;
		memcpy(pe->addr + 12, a4, 4);
	} else if (inet_pton(AF_INET6, buf, pe->addr) != 1) {
		return -EINVAL;
	}
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
static int apply_rsvp_key_file(struct lhd_config *c, const char *path, const char *name)
{
	struct rsvp_key_file kf;
	char why[PATH_MAX + 128];

	_Static_assert(sizeof(c->rsvp_key) == RSVP_KEY_MAX_LEN, "rsvp_key: RSVP_KEY_MAX_LEN bytes");
	if (rsvp_key_file_read(path, &kf, why, sizeof(why))) {
		pr_warn("--%s: %s\n", name, why);
		return -EINVAL;
	}
	if (kf.loose_mode)
		pr_warn("--%s %s: group or others may access the key: chmod 600 it\n", name, path);
	c->rsvp_key_id = kf.id;
	c->rsvp_key_len = (uint8_t)kf.len;
	memcpy(c->rsvp_key, kf.secret, kf.len);
	secret_wipe(&kf, sizeof(kf));
	return 0;
}

/* One option, from the command line or the config file */
static int apply(struct lhd_config *c, int opt, const char *arg, const char *name)
{
	uint32_t t;

	switch (opt) {
	case OPT_DC:
		return set_iface(&c->dc, arg, name);
	case OPT_WAN: {
		int i;

		if (c->n_wan >= LHD_MAX_WAN) {
			pr_warn("--%s %s: at most %d WAN interfaces\n", name, arg, LHD_MAX_WAN);
			return -EINVAL;
		}
		for (i = 0; i < c->n_wan; i++) {
			if (!strcmp(c->wan[i].name, arg)) {
				pr_warn("--%s %s: given twice\n", name, arg);
				return -EINVAL;
			}
		}
		if (set_iface(&c->wan[c->n_wan], arg, name))
			return -EINVAL;
		c->n_wan++;
		return 0;
	}
	case OPT_MODE:
		if (!strcmp(arg, "lr2"))
			c->mode = MODE_LR2;
		else if (!strcmp(arg, "observe"))
			c->mode = MODE_OBSERVE;
		else if (!strcmp(arg, "credit"))
			c->mode = MODE_CREDIT;
		else
			goto bad;
		return 0;
	case OPT_ROLES: {
		char buf[64], *tok, *save;

		if (strlen(arg) >= sizeof(buf))
			goto bad;
		snprintf(buf, sizeof(buf), "%s", arg);
		c->depot = c->sentry = false;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "depot"))
				c->depot = true;
			else if (!strcmp(tok, "sentry"))
				c->sentry = true;
			else
				goto bad;
		}
		if (!c->depot && !c->sentry)
			goto bad;
		return 0;
	}
	case OPT_INSTANCE:
		if (!*arg || strchr(arg, '/') || strlen(arg) >= sizeof(c->instance) || arg[0] == '.')
			goto bad;
		snprintf(c->instance, sizeof(c->instance), "%s", arg);
		return 0;
	case OPT_PIN_DIR:
		if (!*arg || strlen(arg) >= sizeof(c->pin_dir))
			goto bad;
		snprintf(c->pin_dir, sizeof(c->pin_dir), "%s", arg);
		return 0;
	case OPT_XDP_MODE:
		if (!strcmp(arg, "auto"))
			c->xdp_mode = XDPM_AUTO;
		else if (!strcmp(arg, "native"))
			c->xdp_mode = XDPM_NATIVE;
		else if (!strcmp(arg, "generic"))
			c->xdp_mode = XDPM_GENERIC;
		else
			goto bad;
		return 0;
	case OPT_VERIFY_ICRC:
		c->verify_icrc = true;
		return 0;
	case OPT_KEEP_PINS:
		c->keep_pins = true;
		return 0;
	case OPT_KEEP:
		c->keep_running = true;
		return 0;
	case OPT_TAKEOVER:
		c->takeover = true;
		return 0;
	case OPT_RELOAD:
		c->reload = true;
		return 0;
	case OPT_LOAD_NICE:
		if (parse_u32(arg, 0, 19, &c->load_nice))
			goto bad;
		return 0;
	case OPT_MAX_QPS:
		if (parse_u32(arg, 1, 1 << 20, &c->max_qps))
			goto bad;
		return 0;
	case OPT_MAX_HOSTPAIRS:
		if (parse_u32(arg, 1, 65536, &c->max_hostpairs))
			goto bad;
		return 0;
	case OPT_RINGS:
		if (parse_u32(arg, 1, 1 << 20, &c->rings))
			goto bad;
		return 0;
	case OPT_HOST_QPS:
		if (parse_u32(arg, 0, 1 << 20, &c->host_qps))
			goto bad;
		return 0;
	case OPT_HOSTPAIR_QPS:
		if (parse_u32(arg, 0, 1 << 20, &c->hostpair_qps))
			goto bad;
		return 0;
	case OPT_POOL_SLOTS:
		if (parse_u32(arg, 1, 1 << 22, &c->pool_slots))
			goto bad;
		return 0;
	case OPT_WAN_RTT:
		if (parse_time_us(arg, &c->wan_rtt_us))
			goto bad;
		return 0;
	case OPT_WAN_RATE:
		if (parse_rate(arg, &c->wan_rate_bps))
			goto bad;
		return 0;
	case OPT_NACK_TIMEOUT:
		if (parse_time_us(arg, &c->nack_timeout_us) || !c->nack_timeout_us)
			goto bad;
		return 0;
	case OPT_SENTRY_WATCHDOG:
		if (parse_time_us(arg, &t))
			goto bad;
		c->sentry_watchdog_ms = t ? (uint32_t)((t + 999) / 1000) : 0;
		c->sentry_watchdog_set = true;
		return 0;
	case OPT_NIC_TIMEOUT:
		if (parse_time_us(arg, &c->nic_timeout_us) || !c->nic_timeout_us)
			goto bad;
		return 0;
	case OPT_DC_TIMEOUT:
		if (parse_time_us(arg, &c->dc_timeout_us))
			goto bad;
		c->dc_timeout_set = true;
		return 0;
	case OPT_SACK_TIME:
		if (parse_time_us(arg, &c->sack_time_us))
			goto bad;
		return 0;
	case OPT_SACK_COUNT:
		if (parse_u32(arg, 0, 1 << 20, &c->sack_count))
			goto bad;
		c->sack_count_set = true;
		return 0;
	case OPT_RECOVERY:
		if (!strcmp(arg, "lr2"))
			c->gateway = false;
		else if (!strcmp(arg, "gateway"))
			c->gateway = true;
		else
			goto bad;
		return 0;
	case OPT_RESEND_RATE:
		if (parse_rate(arg, &c->resend_rate_bps) || !c->resend_rate_bps)
			goto bad;
		return 0;
	case OPT_QP_IDLE:
		if (parse_time_us(arg, &t) || t < 1000000)
			goto bad;
		c->qp_idle_s = t / 1000000;
		return 0;
	case OPT_CREDIT_ROUTE:
		if (c->n_cr_routes >= LHD_MAX_CR_ROUTES || parse_cr_route(arg, &c->cr_routes[c->n_cr_routes]))
			goto bad;
		c->n_cr_routes++;
		return 0;
	case OPT_PEER:
		if (c->n_peers >= LHD_MAX_PEERS || parse_peer(arg, &c->peers[c->n_peers]))
			goto bad;
		c->n_peers++;
		return 0;
	case OPT_REPORT_KEY_FILE: {
		char why[300];

		if (lh_report_key_load(arg, c->report_key, why, sizeof(why))) {
			pr_warn("--%s: %s\n", name, why);
			return -EINVAL;
		}
		c->report_key_set = true;
		return 0;
	}
	case OPT_RSVP_NEIGHBOR:
		if (c->n_rsvp_neighbors >= LHD_MAX_NEIGHBORS ||
		    inet_pton(AF_INET, arg, &c->rsvp_neighbors[c->n_rsvp_neighbors]) != 1)
			goto bad;
		c->n_rsvp_neighbors++;
		return 0;
	case OPT_CREDIT_BUFFER:
		if (parse_size(arg, 4096, 1u << 30, &c->cr_buffer))
			goto bad;
		return 0;
	case OPT_CREDIT_QUANTUM:
		if (parse_size(arg, 1, 1u << 30, &c->cr_quantum))
			goto bad;
		return 0;
	case OPT_HEARTBEAT:
		if (parse_time_us(arg, &t) || t < 1000 || t > 60000000)
			goto bad;
		c->heartbeat_ms = t / 1000;
		return 0;
	case OPT_CREDIT_IDLE:
		if (parse_time_us(arg, &t) || t < 10000)
			goto bad;
		c->cr_idle_ms = t / 1000;
		return 0;
	case OPT_RSVP_KEY_FILE:
		return apply_rsvp_key_file(c, arg, name);
	case 'v':
		c->verbose = true;
		return 0;
	default:
		return -EINVAL;
	}
bad:
	pr_warn("--%s: '%s' is not valid (see --help)\n", name, arg);
	return -EINVAL;
}

static const struct option *find_opt(const char *name)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int read_config_file(struct lhd_config *c, const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	if (!f) {
		pr_warn("--config %s: %s\n", path, strerror(errno));
		return -EINVAL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val, *hash;
		const struct option *o;

		lineno++;
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		s = trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		key = trim(eq ? (*eq = 0, s) : s);
		val = eq ? trim(eq + 1) : "";
		o = find_opt(key);
		if (!o || o->val == OPT_CONFIG || o->val == 'h') {
			pr_warn("%s:%d: unknown key '%s'\n", path, lineno, key);
			goto fail;
		}
		if (o->has_arg == no_argument) {
			if (*val && strcmp(val, "yes") != 0 && strcmp(val, "true") != 0 &&
			    strcmp(val, "1") != 0) {
				if (!strcmp(val, "no") || !strcmp(val, "false") || !strcmp(val, "0"))
					continue;
				pr_warn("%s:%d: %s takes yes or no\n", path, lineno, key);
				goto fail;
			}
		} else if (!*val) {
			pr_warn("%s:%d: %s needs a value\n", path, lineno, key);
			goto fail;
		}
		if (apply(c, o->val, val, key)) {
			pr_warn("%s:%d: in the config file\n", path, lineno);
			goto fail;
		}
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	return -EINVAL;
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

/* What follows from the others: pin directory, pool size, timers */
static int derive(struct lhd_config *c)
{
	uint64_t bdp_pkts, gw_pkts;
	int i;

	if (c->pin_dir[0] && c->instance[0]) {
		pr_warn("--pin-dir and --instance both name the pin directory: give one\n");
		return -EINVAL;
	}
	if (!c->pin_dir[0]) {
		if (c->instance[0])
			snprintf(c->pin_dir, sizeof(c->pin_dir), DEFAULT_PIN_ROOT "/%s", c->instance);
		else
			snprintf(c->pin_dir, sizeof(c->pin_dir), DEFAULT_PIN_ROOT);
	}
	if (c->mode == MODE_CREDIT) {
		if (!c->n_cr_routes) {
			pr_warn("credit mode needs at least one --credit-route PREFIX,NEXTHOP,IFACE\n");
			return -EINVAL;
		}
		if (c->n_wan) {
			pr_warn("--wan is not used in credit mode: the --credit-route interfaces are\n");
			return -EINVAL;
		}
		if (!c->cr_quantum)
			c->cr_quantum = c->cr_buffer / 4 < 65536 ? c->cr_buffer / 4 : 65536;
		if (c->cr_quantum > c->cr_buffer / 2) {
			pr_warn("--credit-quantum %u: at most half the buffer (%u)\n", c->cr_quantum,
				c->cr_buffer);
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
	if (!c->rings || c->rings > c->max_qps)
		c->rings = c->max_qps;
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
	if (!c->nack_timeout_us)
		c->nack_timeout_us = c->wan_rtt_us * 3 / 2 + 1000;
	c->release_watchdog_us = 2000;
	if (!c->dc_timeout_set)
		c->dc_timeout_us = 5000;
	if (!c->sentry_watchdog_set)
		c->sentry_watchdog_ms = (uint32_t)((4ull * c->wan_rtt_us + 999) / 1000) + 50;
	/* T/C-SACK is off unless --sack-time turns it on (see the issue note: not yet safe
	 * for go-back-0 NICs nor while a NIC waits on a receiver-DC recovery) */
	if (c->sack_time_us && !c->sack_count_set)
		c->sack_count = 64;
	c->tick_us = c->nack_timeout_us / 4;
	if (c->sack_time_us && c->tick_us > c->sack_time_us / 2)
		c->tick_us = c->sack_time_us / 2; /* T's resolution */
	if (c->tick_us < 500)
		c->tick_us = 500;
	if (c->tick_us > 10000)
		c->tick_us = 10000;
	return 0;
}

int lhd_config_parse(int argc, char **argv, struct lhd_config *cfg)
{
	const char *config_path = NULL;
	bool cli_wan = false;
	int c;

	defaults(cfg);
	/*
	 * The config file first, whatever its place on the command line and
	 * however the option is spelled (getopt takes --conf too): a quiet
	 * first pass of getopt finds it, the second applies the flags.
	 */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1)
		if (c == OPT_CONFIG)
			config_path = optarg;
	opterr = 1;
	if (config_path && read_config_file(cfg, config_path))
		return EXIT_USAGE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1) {
		const struct option *o;

		/* --wan on the command line replaces the file's list; repeated, it adds */
		if (c == OPT_WAN && !cli_wan) {
			cfg->n_wan = 0;
			cli_wan = true;
		}

		if (c == 'h') {
			lhd_usage(stdout);
			exit(EXIT_OK);
		}
		if (c == OPT_CONFIG)
			continue;
		if (c == '?') {
			lhd_usage(stderr);
			return EXIT_USAGE;
		}
		for (o = long_opts; o->name && o->val != c; o++)
			;
		if (apply(cfg, c, optarg ? optarg : "", o->name ? o->name : "?"))
			return EXIT_USAGE;
	}
	if (optind < argc) {
		pr_warn("unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	return derive(cfg) ? EXIT_USAGE : 0;
}
