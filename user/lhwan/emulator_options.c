// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* lhwan run's options: the usage text and argv into struct emu */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "emulator_int.h"
#include "log.h"
#include "lossmodel.h"
#include "units.h"

static void emu_usage(void)
{
	fprintf(stderr,
		"usage: lhwan [run] [OPTIONS] PORT_A PORT_B\n"
		"Forward frames between PORT_A and PORT_B (both ways, unchanged) emulating a WAN.\n"
		"Direction a2b: in on PORT_A, out on PORT_B; b2a the reverse. Every impairment\n"
		"option applies to both directions unless its value starts with a2b: or b2a:.\n"
		"  -d, --delay TIME        one-way propagation delay (10ms, 250us)\n"
		"  -J, --jitter TIME       +- jitter added to the delay (uniform)\n"
		"      --jitter-dist uniform|normal   (normal: TIME is the standard deviation)\n"
		"      --jitter-reorder    let jitter reorder frames (default: keep FIFO order)\n"
		"  -r, --rate RATE         bottleneck rate (100mbit, 1gbit; tc units), 0 = none\n"
		"      --queue BYTES       bottleneck buffer (default: 50 ms at the rate)\n"
		"      --overhead BYTES    added to each frame's length for the rate\n"
		"  -l, --loss SPEC         loss rule (repeatable, any rule drops):\n"
		"                            random P%% [CORR%%] | gemodel P%% [R%% [1-H%% "
		"[1-K%%]]]\n"
		"                            state P13%% [P31%% [P32%% [P23%% [P14%%]]]]\n"
		"                            every N [K] | psn [QPN:]PSN[-PSN][,...] [times T]\n"
		"      --duplicate P%%[,CORR%%]\n"
		"      --reorder P%%[,CORR%%][,gap N]   a chosen frame skips the delay (netem)\n"
		"      --stall 'SPEC for TIME'   a frame the loss SPEC picks waits TIME more;\n"
		"                          frames behind it keep their order (a link that\n"
		"                          stalls), unless --jitter-reorder (repeatable)\n"
		"      --match all|roce    frames the models see (default all); others only\n"
		"                          get rate and delay\n"
		"  -s, --seed N            PRNG seed (default: from the clock, printed in stats)\n"
		"      --pool N            frame slots per direction (default %u)\n"
		"      --threads 1|2       worker threads (default 2: one per direction)\n"
		"      --stats-file PATH   write JSON stats there (atomically) at start, on\n"
		"                          SIGUSR1, every --stats-interval and at exit\n"
		"                          (SIGUSR2 pauses the loss rules, the next resumes)\n"
		"      --stats-interval TIME\n"
		"      --duration TIME     exit after TIME\n"
		"      --no-xdp            do not attach the XDP pass program to the ports\n"
		"      --check             validate the options and exit\n"
		"  -j, --json              print the final stats as JSON on stdout; -p pretty\n"
		"  -v, --verbose\n"
		"Only the first transmission(s) of a listed psn are dropped: retransmissions\n"
		"pass, else the QP could never recover.\n",
		(unsigned int)DEFAULT_POOL);
}

/* "a2b:VALUE" -> mask 1, "b2a:VALUE" -> 2, else 3; *val points after the prefix */
static unsigned int dir_prefix(const char *arg, const char **val)
{
	if (!strncmp(arg, "a2b:", 4)) {
		*val = arg + 4;
		return 1;
	}
	if (!strncmp(arg, "b2a:", 4)) {
		*val = arg + 4;
		return 2;
	}
	*val = arg;
	return 3;
}

/* "P%[,CORR%][,gap N]" */
static int parse_prob_corr(const char *s, uint32_t *p, uint32_t *corr, uint32_t *gap)
{
	char buf[128], *save = NULL, *tok;
	double v;
	int i = 0;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*corr = 0;
	if (gap)
		*gap = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
		if (gap && !strncmp(tok, "gap ", 4)) {
			*gap = (uint32_t)strtoul(tok + 4, NULL, 0);
			continue;
		}
		if (lh_parse_percent(tok, &v) || i > 1)
			return -EINVAL;
		if (i == 0)
			*p = lh_prob_to_u32(v);
		else
			*corr = lh_prob_to_u32(v);
	}
	return i ? 0 : -EINVAL;
}

/* "SPEC for TIME": a loss SPEC picks the frames, each waits TIME more */
static int parse_stall(const char *val, struct lh_loss_spec *spec, uint64_t *ns, char *err,
		       size_t errlen)
{
	const char *sep = NULL, *q;
	char buf[1024];
	size_t n;

	for (q = strstr(val, " for "); q; q = strstr(q + 1, " for "))
		sep = q;
	if (!sep) {
		snprintf(err, errlen, "want 'SPEC for TIME' (psn 1000 for 2ms)");
		return -EINVAL;
	}
	n = (size_t)(sep - val);
	if (n >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	memcpy(buf, val, n);
	buf[n] = 0;
	if (lh_parse_time_ns(sep + 5, NULL, ns) || !*ns || *ns > 10000000000ULL) {
		snprintf(err, errlen, "TIME '%s': want 1us to 10s", sep + 5);
		return -EINVAL;
	}
	return lh_loss_parse(buf, spec, err, errlen);
}

int emu_parse_args(struct emu *e, int argc, char **argv)
{
	enum {
		OPT_JITTER_DIST = 256,
		OPT_JITTER_REORDER,
		OPT_QUEUE,
		OPT_OVERHEAD,
		OPT_DUP,
		OPT_REORDER,
		OPT_STALL,
		OPT_MATCH,
		OPT_POOL,
		OPT_THREADS,
		OPT_STATS_FILE,
		OPT_STATS_INTERVAL,
		OPT_DURATION,
		OPT_NO_XDP,
		OPT_CHECK,
	};
	static const struct option opts[] = {
		{"delay", required_argument, NULL, 'd'},
		{"jitter", required_argument, NULL, 'J'},
		{"jitter-dist", required_argument, NULL, OPT_JITTER_DIST},
		{"jitter-reorder", no_argument, NULL, OPT_JITTER_REORDER},
		{"rate", required_argument, NULL, 'r'},
		{"queue", required_argument, NULL, OPT_QUEUE},
		{"overhead", required_argument, NULL, OPT_OVERHEAD},
		{"loss", required_argument, NULL, 'l'},
		{"duplicate", required_argument, NULL, OPT_DUP},
		{"reorder", required_argument, NULL, OPT_REORDER},
		{"stall", required_argument, NULL, OPT_STALL},
		{"match", required_argument, NULL, OPT_MATCH},
		{"seed", required_argument, NULL, 's'},
		{"pool", required_argument, NULL, OPT_POOL},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"stats-file", required_argument, NULL, OPT_STATS_FILE},
		{"stats-interval", required_argument, NULL, OPT_STATS_INTERVAL},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"no-xdp", no_argument, NULL, OPT_NO_XDP},
		{"check", no_argument, NULL, OPT_CHECK},
		{"json", no_argument, NULL, 'j'},
		{"pretty", no_argument, NULL, 'p'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct lh_loss_spec spec;
	char err[256];
	const char *val;
	unsigned int mask, d;
	uint64_t v;
	uint32_t p, corr, gap;
	int c;

	e->seed = lh_now_ns() ^ ((uint64_t)getpid() << 32);
	e->threads = 2;
	e->pool = DEFAULT_POOL;
	while ((c = getopt_long(argc, argv, "d:J:r:l:s:jpvh", opts, NULL)) != -1) {
		mask = 3;
		val = optarg;
		if (optarg && c != 's' && c != OPT_MATCH && c != OPT_POOL && c != OPT_THREADS &&
		    c != OPT_STATS_FILE && c != OPT_STATS_INTERVAL && c != OPT_DURATION)
			mask = dir_prefix(optarg, &val);
		for (d = 0; d < NR_DIRS; d++) {
			struct dir_cfg *cfg = &e->dir[d].cfg;

			if (!(mask & (1U << d)))
				continue;
			switch (c) {
			case 'd':
				if (lh_parse_time_ns(val, NULL, &cfg->delay_ns))
					goto bad;
				break;
			case 'J':
				if (lh_parse_time_ns(val, NULL, &cfg->jitter_ns))
					goto bad;
				break;
			case OPT_JITTER_DIST:
				if (!strcmp(val, "uniform"))
					cfg->jitter_dist = JITTER_UNIFORM;
				else if (!strcmp(val, "normal"))
					cfg->jitter_dist = JITTER_NORMAL;
				else
					goto bad;
				break;
			case OPT_JITTER_REORDER:
				cfg->jitter_reorder = true;
				break;
			case 'r':
				if (lh_parse_rate_bps(val, false, &cfg->rate_bps))
					goto bad;
				break;
			case OPT_QUEUE:
				if (lh_parse_bytes(val, &cfg->queue_bytes))
					goto bad;
				break;
			case OPT_OVERHEAD:
				cfg->overhead = (int32_t)strtol(val, NULL, 0);
				break;
			case 'l':
				if (cfg->nr_loss == MAX_RULES) {
					pr_warn("at most %d loss rules per direction\n", MAX_RULES);
					return -EINVAL;
				}
				if (lh_loss_parse(val, &spec, err, sizeof(err))) {
					pr_warn("--loss '%s': %s\n", val, err);
					return -EINVAL;
				}
				/* parsed once per direction: each owns its psn list */
				if (spec.kind == LH_LOSS_NONE)
					break;
				cfg->loss[cfg->nr_loss++] = spec;
				break;
			case OPT_STALL:
				if (cfg->nr_stall == MAX_RULES) {
					pr_warn("at most %d stall rules per direction\n", MAX_RULES);
					return -EINVAL;
				}
				if (parse_stall(val, &spec, &v, err, sizeof(err))) {
					pr_warn("--stall '%s': %s\n", val, err);
					return -EINVAL;
				}
				if (spec.kind == LH_LOSS_NONE)
					break;
				cfg->stall[cfg->nr_stall] = spec;
				cfg->stall_ns[cfg->nr_stall++] = v;
				break;
			case OPT_DUP:
				if (parse_prob_corr(val, &p, &corr, NULL))
					goto bad;
				cfg->dup_p = p;
				cfg->dup_corr = corr;
				break;
			case OPT_REORDER:
				if (parse_prob_corr(val, &p, &corr, &gap))
					goto bad;
				cfg->reorder_p = p;
				cfg->reorder_corr = corr;
				cfg->reorder_gap = gap ? gap : 1;
				break;
			}
		}
		switch (c) {
		case 'd':
		case 'J':
		case OPT_JITTER_DIST:
		case OPT_JITTER_REORDER:
		case 'r':
		case OPT_QUEUE:
		case OPT_OVERHEAD:
		case 'l':
		case OPT_DUP:
		case OPT_REORDER:
		case OPT_STALL:
			break;
		case OPT_MATCH:
			if (!strcmp(optarg, "roce"))
				e->match_roce = true;
			else if (strcmp(optarg, "all"))
				goto bad;
			break;
		case 's': {
			char *end;

			errno = 0;
			e->seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end)
				goto bad;
			break;
		}
		case OPT_POOL:
			e->pool = (uint32_t)strtoul(optarg, NULL, 0);
			if (e->pool < 1024)
				goto bad;
			break;
		case OPT_THREADS:
			e->threads = atoi(optarg);
			if (e->threads != 1 && e->threads != 2)
				goto bad;
			break;
		case OPT_STATS_FILE:
			e->stats_file = optarg;
			break;
		case OPT_STATS_INTERVAL:
			if (lh_parse_time_ns(optarg, NULL, &e->stats_interval_ns))
				goto bad;
			break;
		case OPT_DURATION:
			if (lh_parse_time_ns(optarg, NULL, &v))
				goto bad;
			e->duration_ns = v;
			break;
		case OPT_NO_XDP:
			e->no_xdp = true;
			break;
		case OPT_CHECK:
			e->check = true;
			break;
		case 'j':
			e->json = true;
			break;
		case 'p':
			e->json = e->pretty = true;
			break;
		case 'v':
			lh_log_set_level(LH_LOG_DEBUG);
			break;
		case 'h':
			emu_usage();
			exit(0);
		default:
			emu_usage();
			return -EINVAL;
		}
	}
	if (argc - optind != 2) {
		pr_warn("need two ports (PORT_A PORT_B)\n");
		emu_usage();
		return -EINVAL;
	}
	e->port[0].name = argv[optind];
	e->port[1].name = argv[optind + 1];
	if (!strcmp(e->port[0].name, e->port[1].name)) {
		pr_warn("PORT_A and PORT_B must differ\n");
		return -EINVAL;
	}
	return 0;
bad:
	pr_warn("bad value for option: '%s'\n", optarg ? optarg : "");
	return -EINVAL;
}
