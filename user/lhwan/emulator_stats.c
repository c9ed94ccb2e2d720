// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The emulator's statistics as JSON: on stdout at exit, and the --stats-file */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "emulator_int.h"
#include "json.h"
#include "log.h"

static void json_dir_cfg(struct lh_json *j, const struct dir_cfg *c)
{
	char buf[4096];
	unsigned int i;

	lh_json_start_object(j);
	lh_json_uint_field(j, "delay_ns", c->delay_ns);
	lh_json_uint_field(j, "jitter_ns", c->jitter_ns);
	lh_json_string_field(j, "jitter_dist",
			     c->jitter_dist == JITTER_NORMAL ? "normal" : "uniform");
	lh_json_bool_field(j, "jitter_reorder", c->jitter_reorder);
	lh_json_uint_field(j, "rate_bps", c->rate_bps);
	lh_json_uint_field(j, "queue_bytes", c->rate_bps ? queue_limit(c) : 0);
	lh_json_int_field(j, "overhead", c->overhead);
	lh_json_name(j, "loss");
	lh_json_start_array(j);
	for (i = 0; i < c->nr_loss; i++) {
		lh_loss_format(&c->loss[i], buf, sizeof(buf));
		lh_json_start_object(j);
		lh_json_string_field(j, "spec", buf);
		lh_json_double_field(j, "expected_rate", lh_loss_expected_rate(&c->loss[i]));
		lh_json_double_field(j, "expected_burst", lh_loss_expected_burst(&c->loss[i]));
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
	lh_json_name(j, "stall");
	lh_json_start_array(j);
	for (i = 0; i < c->nr_stall; i++) {
		lh_loss_format(&c->stall[i], buf, sizeof(buf));
		lh_json_start_object(j);
		lh_json_string_field(j, "spec", buf);
		lh_json_uint_field(j, "for_ns", c->stall_ns[i]);
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
	lh_json_double_field(j, "duplicate", lh_u32_to_prob(c->dup_p));
	lh_json_double_field(j, "reorder", lh_u32_to_prob(c->reorder_p));
	lh_json_uint_field(j, "reorder_gap", c->reorder_gap);
	lh_json_end_object(j);
}

static void json_dir_stats(struct lh_json *j, struct dir *d)
{
	struct dir_stats *s = &d->st;
	uint64_t matched = STAT_GET(s->matched), lost = STAT_GET(s->drop_loss);
	uint64_t bursts = STAT_GET(s->loss_bursts);
	unsigned int i;

	lh_json_start_object(j);
	lh_json_string_field(j, "in", d->rx->name);
	lh_json_string_field(j, "out", d->tx->name);
	lh_json_uint_field(j, "rx_packets", STAT_GET(s->rx_packets));
	lh_json_uint_field(j, "rx_bytes", STAT_GET(s->rx_bytes));
	lh_json_uint_field(j, "tx_packets", STAT_GET(s->tx_packets));
	lh_json_uint_field(j, "tx_bytes", STAT_GET(s->tx_bytes));
	lh_json_uint_field(j, "matched", matched);
	lh_json_uint_field(j, "drop_loss", lost);
	lh_json_uint_field(j, "drop_queue", STAT_GET(s->drop_queue));
	lh_json_uint_field(j, "drop_pool", STAT_GET(s->drop_pool));
	lh_json_uint_field(j, "drop_oversize", STAT_GET(s->drop_oversize));
	lh_json_uint_field(j, "drop_tx", STAT_GET(s->drop_tx));
	/* frames the kernel dropped before lhwan read them: its receive buffer was full */
	lh_json_uint_field(j, "drop_rx_socket", lh_pktio_drops(d->rx->io));
	lh_json_uint_field(j, "duplicated", STAT_GET(s->duplicated));
	lh_json_uint_field(j, "reordered", STAT_GET(s->reordered));
	lh_json_uint_field(j, "stalled", STAT_GET(s->stalled));
	lh_json_uint_field(j, "loss_bursts", bursts);
	lh_json_double_field(j, "loss_rate", matched ? (double)lost / (double)matched : 0);
	lh_json_double_field(j, "mean_burst", bursts ? (double)lost / (double)bursts : 0);
	lh_json_uint_field(j, "inflight", STAT_GET(s->inflight));
	lh_json_uint_field(j, "inflight_max", STAT_GET(s->inflight_max));
	lh_json_uint_field(j, "backlog_max_ns", STAT_GET(s->backlog_max_ns));
	lh_json_double_field(j, "late_avg_ns",
			     STAT_GET(s->tx_packets) ? (double)STAT_GET(s->late_sum_ns) /
							       (double)STAT_GET(s->tx_packets)
						     : 0);
	lh_json_uint_field(j, "late_max_ns", STAT_GET(s->late_max_ns));
	lh_json_name(j, "rules");
	lh_json_start_array(j);
	for (i = 0; i < d->cfg.nr_loss; i++) {
		lh_json_start_object(j);
		lh_json_uint_field(j, "seen", STAT_GET(d->loss[i].seen));
		lh_json_uint_field(j, "dropped", STAT_GET(d->loss[i].dropped));
		lh_json_uint_field(j, "bursts", STAT_GET(d->loss[i].bursts));
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
	lh_json_end_object(j);
}

void write_stats(struct emu *e, FILE *out, bool pretty, const char *state)
{
	struct lh_json *j = lh_json_new(out, pretty);
	int d;

	if (!j)
		return;
	lh_json_start_object(j);
	lh_json_string_field(j, "state", state);
	lh_json_int_field(j, "pid", getpid());
	lh_json_uint_field(j, "seed", e->seed);
	lh_json_string_field(j, "match", e->match_roce ? "roce" : "all");
	lh_json_int_field(j, "threads", e->threads);
	lh_json_uint_field(j, "pool", e->pool);
	lh_json_double_field(j, "uptime_s", (double)(lh_now_ns() - e->started_ns) / 1e9);
	lh_json_bool_field(j, "loss_paused", loss_paused);
	lh_json_name(j, "ports");
	lh_json_start_object(j);
	lh_json_string_field(j, "a", e->port[0].name);
	lh_json_string_field(j, "b", e->port[1].name);
	lh_json_end_object(j);
	lh_json_name(j, "config");
	lh_json_start_object(j);
	for (d = 0; d < NR_DIRS; d++) {
		lh_json_name(j, dir_names[d]);
		json_dir_cfg(j, &e->dir[d].cfg);
	}
	lh_json_end_object(j);
	for (d = 0; d < NR_DIRS; d++) {
		lh_json_name(j, dir_names[d]);
		json_dir_stats(j, &e->dir[d]);
	}
	lh_json_end_object(j);
	lh_json_free(j);
}

void write_stats_file(struct emu *e, const char *state)
{
	char tmp[4096];
	FILE *f;

	if (!e->stats_file)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", e->stats_file, getpid());
	f = fopen(tmp, "w");
	if (!f) {
		pr_warn("stats file %s: %s\n", tmp, strerror(errno));
		return;
	}
	write_stats(e, f, true, state);
	if (fclose(f) || rename(tmp, e->stats_file)) {
		pr_warn("stats file %s: %s\n", e->stats_file, strerror(errno));
		unlink(tmp);
	}
}
