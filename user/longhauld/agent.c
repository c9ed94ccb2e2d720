// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhauld's event loop: one epoll over the ring buffer, a timerfd and the
 * stop flag (the signal handler's). The agent never writes the lh_qp values
 * the programs change under the QP lock: pairing goes through lh_pair and
 * lh_ack, NACKs out of an AF_PACKET socket, continued runs through
 * BPF_PROG_TEST_RUN of lh_dc_kick, GC through deletes. Its roles live beside
 * it (agent_state.h).
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent_state.h"
#include "dc_tc.skel.h"
#include "lh_proto.h"
#include "log.h"
#include "netlink.h"
#include "report.h"

/* ---- the ring buffer ---- */

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *ag = ctx;
	const struct lh_event *ev = data;
	struct lh_qp_key k;
	struct lh_qp qp;

	if (size < sizeof(*ev))
		return 0;
	ag->st.events++;
	memcpy(k.saddr, ev->saddr, 16);
	memcpy(k.daddr, ev->daddr, 16);
	k.dqpn = ev->dqpn;
	switch (ev->type) {
	case LH_EV_QP_NEW:
		pr_debug("new %s QP 0x%x at PSN %u\n", (ev->flags & LH_QPF_DEPOT) ? "Depot" : "Sentry",
			 ev->dqpn, ev->psn);
		break;
	case LH_EV_GAP:
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp)) {
			send_report(ag, &k, &qp, false, false);
			hot_add(ag, &k, &qp);
		}
		break;
	case LH_EV_SACK_DUE:
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			send_sack(ag, &k, &qp, lh_now_ns());
		break;
	case LH_EV_RESEND:
		if (ag->gwq && !bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			gw_collect(ag, &k, &qp);
		break;
	case LH_EV_NAK_DUE:
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			if (!send_to_nic(ag, &k, &qp, ev->psn, AETH_NAK_PSN_SEQ_ERROR))
				ag->st.naks_owed++;
		break;
	case LH_EV_QP_STALE:
		/* a new connection on the key: the next packet learns the QP anew */
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp) && (qp.flags & LH_QPF_STALE)) {
			forget_qp(ag, &k, &qp, false);
			ag->st.qps_stale++;
		}
		break;
	case LH_EV_RELEASE_MORE:
		if (bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			break;
		if (kick(ag, &k, &qp, ev->flags == 1, ev->psn))
			ag->st.kick_fail++;
		hot_add(ag, &k, &qp);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Every QP into tick_keys / tick_qps, a batch per syscall; *n: how many.
 * Returns whether that is all of them (the map may have grown since).
 */
static bool read_qps(struct agent *ag, uint32_t *n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t total = 0, cnt, tok_out = 0;
	uint32_t want = ag->tick_cap < SCAN_PER_TICK ? ag->tick_cap : SCAN_PER_TICK;
	static bool warned;
	int err;

	if (ag->slow_scan) {
		uint64_t qps = ag->qps > ag->pass.qps ? ag->qps : ag->pass.qps;
		uint64_t per = (qps * ag->tick_us + COLD_PASS_US - 1) / COLD_PASS_US;

		if (per < 16)
			per = 16;
		if (per < want)
			want = (uint32_t)per;
	}

	for (;;) {
		cnt = want - total;
		if (!cnt)
			break;
		err = bpf_map_lookup_batch(ag->qp_fd, ag->scan_on ? &ag->scan_tok : NULL, &tok_out,
					   ag->tick_keys + total, ag->tick_qps + total, &cnt, &o);
		total += cnt;
		if (err && errno == ENOSPC && !cnt) {
			/* the next hash bucket is larger than what is left: next tick */
			if (total)
				break;
			/* ... larger than the whole budget: all of it */
			if (want < ag->tick_cap) {
				want = ag->tick_cap;
				continue;
			}
		}
		if (err) {
			ag->scan_on = false; /* the next tick begins a new pass */
			if (errno == ENOENT) {
				*n = total;
				return true;
			}
			if (!warned)
				pr_warn("reading lh_qp: %s\n", strerror(errno));
			warned = true;
			break;
		}
		ag->scan_tok = tok_out;
		ag->scan_on = true;
	}
	*n = total;
	return false;
}

/*
 * The timer's period: the configured tick while any QP needs it, the quiet
 * one (slow pass, hot set empty) while none does. Called after each tick
 * and each batch of events.
 */
/* The tick timer's period set to us, its first expiry one period from now */
static void tick_set(struct agent *ag, uint32_t us)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = us / 1000000;
	its.it_interval.tv_nsec = (long)(us % 1000000) * 1000;
	its.it_value = its.it_interval;
	if (!timerfd_settime(ag->tick_fd, 0, &its, NULL))
		ag->tick_us = us;
}

static void tick_rate(struct agent *ag)
{
	uint32_t want = ag->cfg->tick_us;

	if (ag->slow_scan && !ag->hot_n && want < QUIET_TICK_US)
		want = QUIET_TICK_US;
	if (want != ag->tick_us)
		tick_set(ag, want);
}

static void tick(struct agent *ag)
{
	const struct lhd_config *cfg = ag->cfg;
	uint64_t now = lh_now_ns(), idle = (uint64_t)cfg->qp_idle_s * 1000000000ull;
	uint64_t sack_ns = (uint64_t)cfg->sack_time_us * 1000;
	struct lh_qp_key gone[64];
	int nr_gone = 0, i;
	uint32_t n, j;
	struct lh_qp qp;
	bool pass_end;

	pass_end = read_qps(ag, &n);
	/*
	 * A table half full forgets QPs quiet for LH_IDLE_FULL_S already: QPs
	 * that ended linger for --qp-idle, and a full table learns no new one
	 * (it passes unchanged) and blocks all pairing while it is full (a QP
	 * not learned could take another's ACKs): 20 transfers of 64 QPs one
	 * after another, 1280 QPs in 30 s, livelocked the last ones (2 of 20)
	 */
	if (ag->qps >= cfg->max_qps / 2 && idle > LH_IDLE_FULL_S * 1000000000ull)
		idle = LH_IDLE_FULL_S * 1000000000ull;
	ag->pass.qps += n;
	for (j = 0; j < n; j++) {
		const struct lh_qp_key cur = ag->tick_keys[j];

		qp = ag->tick_qps[j];
		/* idle, or stale and its event lost (ring buffer full) */
		if ((now > qp.last_rx_ns && now - qp.last_rx_ns > idle) || (qp.flags & LH_QPF_STALE)) {
			if (nr_gone < 64)
				gone[nr_gone++] = cur;
			continue;
		}
		if (qp.flags & LH_QPF_SENTRY) {
			struct sentry_est *est = sentry_est_of(ag, &cur);

			if (!qp.s.srtt_us && qp.s.una != qp.s.next)
				ag->pass.unmeasured++;
			/* the path: QPs with data out now (not a finished QP's old estimate) */
			if (qp.s.srtt_us && qp.s.una != qp.s.next) {
				if (est_rto_us(&qp) > ag->pass.rto_max_us)
					ag->pass.rto_max_us = est_rto_us(&qp);
				if (qp.s.srtt_us > ag->pass.srtt_max_us)
					ag->pass.srtt_max_us = qp.s.srtt_us;
			}
			if (qp.s.una != qp.s.next) {
				uint64_t stay = qp.s.stay_us;

				/* one under way for longer says more */
				if (qp.s.stay_tx_ns && now > qp.s.stay_tx_ns &&
				    (now - qp.s.stay_tx_ns) / 1000 > stay)
					stay = (now - qp.s.stay_tx_ns) / 1000;
				if (stay > ag->pass.stay_max_us)
					ag->pass.stay_max_us =
						stay > UINT32_MAX ? UINT32_MAX : (uint32_t)stay;
			}
			if (sack_ns)
				sentry_silence(ag, &cur, &qp, est, now, sack_ns);
		}
		if ((qp.flags & (LH_QPF_SENTRY | LH_QPF_GW_OFF)) == LH_QPF_SENTRY &&
		    psn_diff(qp.s.next, qp.s.una) > 0)
			ag->pass.copies += (uint64_t)psn_diff(qp.s.next, qp.s.una);
		if (!(qp.flags & LH_QPF_DEPOT) || qp.ring >= cfg->rings)
			continue;
		if (!ag->slow_scan)
			depot_timers(ag, &cur, &qp, now);
		else if (depot_hot(ag, &qp))
			hot_add(ag, &cur, &qp); /* its timers below, from a fresh read */
	}
	if (ag->slow_scan)
		hot_tick(ag, now);
	for (i = 0; i < nr_gone; i++)
		if (!bpf_map_lookup_elem(ag->qp_fd, &gone[i], &qp))
			forget_qp(ag, &gone[i], &qp, false);
	if (now - ag->prune_ns >= PRUNE_NS) {
		ag->prune_ns = now;
		prune_hostpairs(ag);
	}
	/* the path's figures: of a whole pass */
	if (pass_end) {
		ag->path_rto_us = ag->pass.rto_max_us;
		ag->path_srtt_us = ag->pass.srtt_max_us;
		ag->path_stay_us = ag->pass.stay_max_us;
		ag->rtt_known = ag->pass.rto_max_us && !ag->pass.unmeasured;
		ag->copies = ag->pass.copies;
		ag->qps = ag->pass.qps;
		memset(&ag->pass, 0, sizeof(ag->pass));
	}
	if (ag->path_rto_us > ag->st.rto_max_us)
		ag->st.rto_max_us = ag->path_rto_us;
	if (ag->gwq)
		gw_bound(ag, ag->copies, now);
	config_sync(ag);
}

static int open_wan_io(struct agent *ag)
{
	int i, err;

	for (i = 0; i < ag->cfg->n_wan; i++) {
		struct lh_pktio_opts o = { .ifname = ag->cfg->wan[i].name, .tx_only = true };

		err = lh_pktio_open(&o, &ag->wan_io[i]);
		if (err)
			return err;
		ag->wan_ifindex[i] = ag->cfg->wan[i].ifindex;
	}
	return 0;
}

static int open_dc_io(struct agent *ag)
{
	struct lh_pktio_opts o = { .ifname = ag->cfg->dc.name, .tx_only = true };
	int err = lh_pktio_open(&o, &ag->dc_io);

	if (err)
		return err;
	memcpy(ag->dc_mac, lh_pktio_mac(ag->dc_io), 6);
	return 0;
}

/* fd of one of the data path's maps into *fd; false (said by lhd_map_fd) when none */
static bool map_of(const struct bpf_map *m, int *fd)
{
	*fd = lhd_map_fd(m);
	return *fd >= 0;
}

/* The agent's maps, memory and sockets; false (said) when one is missing */
static bool agent_open(struct agent *ag)
{
	const struct lhd_config *cfg = ag->cfg;
	const struct dc_tc_bpf *sk = ag->dp->sk.dc_tc; /* it holds every map of LR2 */

	if (!sk || !map_of(sk->maps.lh_qp, &ag->qp_fd) || !map_of(sk->maps.lh_ack, &ag->ack_fd) ||
	    !map_of(sk->maps.lh_pair, &ag->pair_fd) || !map_of(sk->maps.lh_ring, &ag->ring_fd) ||
	    !map_of(sk->maps.lh_pool_free, &ag->pool_free_fd) ||
	    !map_of(sk->maps.lh_ring_free, &ag->ring_free_fd) ||
	    !map_of(sk->maps.lh_hostpair, &ag->hostpair_fd) ||
	    !map_of(sk->maps.lh_config, &ag->config_fd) ||
	    !map_of(sk->maps.lh_events, &ag->events_fd) ||
	    /* the Depot's DC probes and the Sentry's gateway re-sends read pool slots */
	    !map_of(sk->maps.lh_pool, &ag->pool_fd))
		return false;
	ag->guard_ms = lhd_resend_guard_ms(cfg, 0); /* as write_lr2_config() set it */
	ag->rs = calloc(cfg->rings, sizeof(*ag->rs));
	ag->est = calloc(SILENCE_SLOTS, sizeof(*ag->est));
	ag->ring_buf = malloc(sizeof(*ag->ring_buf));
	ag->slot_buf = malloc(sizeof(*ag->slot_buf));
	ag->tick_cap = cfg->max_qps;
	ag->tick_keys = calloc(ag->tick_cap, sizeof(*ag->tick_keys));
	ag->tick_qps = calloc(ag->tick_cap, sizeof(*ag->tick_qps));
	ag->slow_scan = !cfg->sack_time_us && !cfg->gateway;
	ag->hot = calloc(cfg->rings, sizeof(*ag->hot));
	if (!ag->rs || !ag->est || !ag->ring_buf || !ag->slot_buf || !ag->tick_keys ||
	    !ag->tick_qps || !ag->hot) {
		pr_warn("agent: out of memory\n");
		return false;
	}
	if (cfg->gateway) {
		ag->gwq_cap = cfg->gw_bound_pkts;
		ag->gwq = calloc(ag->gwq_cap, sizeof(*ag->gwq));
		ag->gw_marks = calloc((size_t)cfg->rings * LH_RING_SIZE, sizeof(*ag->gw_marks));
		ag->pace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (!ag->gwq || !ag->gw_marks || ag->pace_fd < 0) {
			pr_warn("agent: gateway recovery's queue: %s\n", strerror(errno));
			return false;
		}
	}
	if (open_wan_io(ag) || open_dc_io(ag)) {
		pr_warn("raw sockets on the WAN interfaces and %s for NACKs and kicks failed\n",
			cfg->dc.name);
		return false;
	}
	return true;
}

static void agent_close(struct agent *ag)
{
	for (int i = 0; i < LHD_MAX_WAN; i++)
		lh_pktio_close(ag->wan_io[i]);
	lh_pktio_close(ag->dc_io);
	if (ag->pace_fd >= 0)
		close(ag->pace_fd);
	free(ag->gwq);
	free(ag->gw_marks);
	free(ag->slot_buf);
	free(ag->ring_buf);
	free(ag->tick_keys);
	free(ag->tick_qps);
	free(ag->hot);
	free(ag->rs);
	free(ag->est);
}

/* What the agent did, at its stop */
static void agent_summary(const struct agent *ag)
{
	const struct lhd_agent_stats *st = &ag->st;
	const struct lhd_config *cfg = ag->cfg;

	pr_info("agent: %llu events, %llu reports (%llu T/C-SACK), "
		"%llu NACK retries, %llu silence NAKs, %llu silence ACKs, %llu runs continued, "
		"%llu QPs forgotten (%llu new connections on their keys), %llu DC probes, "
		"%llu gone from the pairing lists\n",
		(unsigned long long)st->events,
		(unsigned long long)st->reports, (unsigned long long)st->sack_reports,
		(unsigned long long)st->nack_retries, (unsigned long long)st->sack_naks,
		(unsigned long long)st->sack_acks,
		(unsigned long long)st->kicks, (unsigned long long)st->qps_forgotten,
		(unsigned long long)st->qps_stale,
		(unsigned long long)st->dc_probes, (unsigned long long)st->hostpair_pruned);
	if (st->cmd_errors)
		pr_warn("agent: %llu commands to the data path failed (QP counts of --host-qps not given back)\n",
			(unsigned long long)st->cmd_errors);
	if (cfg->sentry)
		pr_info("agent: Sentry round trips (RTO: srtt + 4 rttvar, at most 2 srtt): largest %u us, last %u us "
			"(--wan-rtt %u us)\n",
			st->rto_max_us, ag->path_rto_us, cfg->wan_rtt_us);
	if (cfg->gateway)
		pr_info("agent: gateway recovery: %llu re-sends queued, %llu sent, %llu stale, "
			"%llu sent by the data path already, %llu not queued (queue full), "
			"%llu tail re-sends, %llu ticks over the bound (most over it: %llu copies, "
			"bound %llu of a %u us RTT)\n",
			(unsigned long long)st->gw_queued, (unsigned long long)st->gw_resent,
			(unsigned long long)st->gw_stale, (unsigned long long)st->gw_dp_sent,
			(unsigned long long)st->gw_queue_full,
			(unsigned long long)st->gw_tail_resends,
			(unsigned long long)st->gw_full_ticks,
			(unsigned long long)st->gw_over_copies,
			(unsigned long long)st->gw_over_bound, st->gw_over_rtt_us);
}

/* Until *stop: the timer, the pacer and the ring buffer, as they wake (epoll ep) */
static void agent_loop(struct agent *ag, struct ring_buffer *rb, int ep, volatile int *stop)
{
	uint64_t ticks;

	while (!*stop) {
		struct epoll_event out[4];
		int n = epoll_wait(ep, out, 4, 200), i;

		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (out[i].data.fd == ag->tick_fd) {
				if (read(ag->tick_fd, &ticks, sizeof(ticks)) > 0) {
					ag->tick_late = ticks > 1;
					tick(ag);
				}
				/* the events that wake nobody (LH_EV_QP_NEW) */
				ring_buffer__consume(rb);
				tick_rate(ag);
			} else if (out[i].data.fd == ag->pace_fd) {
				if (read(ag->pace_fd, &ticks, sizeof(ticks)) > 0)
					gw_pace(ag);
			} else {
				ring_buffer__consume(rb);
				tick_rate(ag);
			}
		}
	}
}

int lhd_agent_run(const struct lhd_config *cfg, struct lhd_datapath *dp, volatile int *stop)
{
	struct ring_buffer *rb = NULL;
	struct agent ag = { .cfg = cfg, .dp = dp, .pace_fd = -1, .tick_fd = -1 };
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = -1, rc = EXIT_KERNEL;

	if (cfg->mode != MODE_LR2) {
		while (!*stop)
			pause();
		return EXIT_OK;
	}
	/*
	 * QPs may be mid-flight now: their ACKs can name PSNs from before the
	 * programs saw them, which pairing must count in (LH_QPF_WIDE); from
	 * the attach on (datapath_modes.c), and from here. Not so in an adopted data
	 * path: it saw every packet meanwhile.
	 */
	if (!agent_open(&ag) || lhd_datapath_relearn(dp, cfg))
		goto out;
	if (dp->stale)
		forget_all(&ag);
	/* reports are ordered by seq; a restarted agent starts somewhere else */
	ag.report_seq = (uint32_t)(lh_now_ns() >> 10) | 1;
	rb = ring_buffer__new(ag.events_fd, on_event, &ag, NULL);
	if (!rb) {
		pr_warn("ring buffer lh_events: %s\n", strerror(errno));
		goto out;
	}
	ag.tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ag.tick_fd < 0 || ep < 0)
		goto out;
	tick_set(&ag, cfg->tick_us);
	ev.data.fd = ag.tick_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, ag.tick_fd, &ev);
	ev.data.fd = ring_buffer__epoll_fd(rb);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	if (ag.pace_fd >= 0) {
		ev.data.fd = ag.pace_fd;
		epoll_ctl(ep, EPOLL_CTL_ADD, ag.pace_fd, &ev);
		pr_debug("agent: gateway recovery, re-sends paced at %llu bit/s, copies bound %u\n",
			 (unsigned long long)cfg->resend_rate_bps, cfg->gw_bound_pkts);
	}
	pr_debug("agent: tick %u us, Depot-NACK retry after %u us\n", cfg->tick_us,
		 cfg->nack_timeout_us);
	agent_loop(&ag, rb, ep, stop);
	agent_summary(&ag);
	rc = EXIT_OK;
out:
	if (ep >= 0)
		close(ep);
	if (ag.tick_fd >= 0)
		close(ag.tick_fd);
	ring_buffer__free(rb);
	agent_close(&ag);
	return rc;
}
