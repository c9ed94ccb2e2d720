// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The forwarding loop of a worker: read a batch of each direction into free
 * slots, send what is due, and sleep until the next departure or frame.
 */
#include <poll.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <time.h>

#include "clock.h"
#include "emulator_int.h"

/* Receive one batch straight into free slots; returns frames received */
static int dir_rx(struct emu *e, struct dir *d)
{
	struct lh_frame f[RX_BATCH];
	struct tpacket_auxdata aux[RX_BATCH];
	uint32_t ids[RX_BATCH];
	unsigned int want = RX_BATCH, i;
	uint64_t now;
	int n;

	if (d->nr_free < want)
		want = d->nr_free;
	if (!want) {
		/* out of slots: take one frame into scratch space and count it */
		static __thread uint8_t scratch[65536];
		struct lh_frame s = {.data = scratch, .cap = sizeof(scratch)};

		n = lh_pktio_recv(d->rx->io, &s, 1, 0);
		if (n > 0) {
			STAT_ADD(d->st.rx_packets, 1);
			STAT_ADD(d->st.rx_bytes, s.len);
			STAT_ADD(d->st.drop_pool, 1);
		}
		return n > 0 ? n : 0;
	}
	for (i = 0; i < want; i++) {
		ids[i] = d->free_stack[d->nr_free - 1 - i];
		f[i].data = slot_data(d, ids[i]);
		/* room to put a VLAN tag back */
		f[i].cap = (uint32_t)d->slot_size - 4;
		f[i].len = 0;
	}
	n = port_recv(d->rx, f, aux, want);
	if (n <= 0)
		return 0;
	if ((unsigned int)n > want) /* recvmmsg's bound, which this file cannot see */
		n = (int)want;
	/*
	 * The time a frame is taken to arrive: after the read, never before.
	 * The caller's time, read before, is earlier by whatever preempted
	 * this thread between the two (a loaded 2-core host): frames that came
	 * meanwhile left up to 0.5 ms before their delay (21-lhwan: 2.50 ms
	 * measured for 5 +- 2 ms).
	 */
	now = lh_now_ns();
	d->nr_free -= (uint32_t)n;
	for (i = 0; i < (unsigned int)n; i++) {
		if (f[i].len < f[i].cap)
			f[i].len = fix_frame(f[i].data, f[i].len, (uint32_t)d->slot_size, &aux[i]);
		else
			f[i].len = (uint32_t)d->slot_size; /* truncated: handle_frame drops it */
		handle_frame(e, d, ids[i], f[i].len, now);
	}
	return n;
}

/* Send everything due; returns true if the kernel refused some (retry later) */
static bool dir_tx(struct dir *d, uint64_t now)
{
	struct lh_frame f[TX_BATCH];
	uint32_t i, n, id;
	int sent;

	for (;;) {
		if (d->pend_off == d->nr_pend) {
			d->pend_off = d->nr_pend = 0;
			d->nr_pend = lh_tw_pop_due(&d->tw, now + EARLY_NS, d->pend, TX_BATCH);
			if (!d->nr_pend)
				return false;
		}
		n = d->nr_pend - d->pend_off;
		for (i = 0; i < n; i++) {
			id = d->pend[d->pend_off + i];
			f[i].data = slot_data(d, id);
			f[i].len = d->len[id];
			f[i].cap = f[i].len;
		}
		sent = lh_pktio_send(d->tx->io, f, n);
		if (sent > 0) {
			uint64_t t = lh_now_ns(), when, late;

			for (i = 0; i < (uint32_t)sent; i++) {
				when = d->tw.when[d->pend[d->pend_off + i]];
				late = t > when ? t - when : 0;
				STAT_ADD(d->st.late_sum_ns, late);
				if (late > d->st.late_max_ns)
					STAT_ADD(d->st.late_max_ns, late - d->st.late_max_ns);
			}
		}
		if (sent < 0) {
			/* a hard error (link down...): these frames are lost on the wire */
			STAT_ADD(d->st.drop_tx, n);
			sent = (int)n;
		} else {
			for (i = 0; i < (uint32_t)sent; i++) {
				STAT_ADD(d->st.tx_packets, 1);
				STAT_ADD(d->st.tx_bytes, d->len[d->pend[d->pend_off + i]]);
			}
		}
		for (i = 0; i < (uint32_t)sent; i++)
			slot_put(d, d->pend[d->pend_off + i]);
		STAT_ADD(d->st.inflight, -(uint64_t)sent);
		d->pend_off += (uint32_t)sent;
		if ((uint32_t)sent < n)
			return true;
	}
}

void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct pollfd pfd[NR_DIRS * 2];
	uint64_t now, next, due, wait;
	struct timespec ts;
	bool blocked[NR_DIRS];
	int i, got, np;

	/* precise sleeps: the default 50 us timer slack would add to every delay */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!stop_flag) {
		got = 0;
		for (i = 0; i < w->nr; i++)
			got += dir_rx(w->e, w->dirs[i]);
		now = lh_now_ns();
		next = UINT64_MAX;
		for (i = 0; i < w->nr; i++) {
			blocked[i] = dir_tx(w->dirs[i], now);
			due = lh_tw_next_due(&w->dirs[i]->tw);
			if (due < next)
				next = due;
		}
		if (got)
			continue; /* more may be waiting: read again before sleeping */
		np = 0;
		for (i = 0; i < w->nr; i++) {
			pfd[np].fd = lh_pktio_fd(w->dirs[i]->rx->io);
			pfd[np++].events = POLLIN;
			if (blocked[i]) {
				pfd[np].fd = lh_pktio_fd(w->dirs[i]->tx->io);
				pfd[np++].events = POLLOUT;
			}
		}
		now = lh_now_ns();
		wait = next > now ? next - now : 0;
		if (wait > MAX_SLEEP_NS)
			wait = MAX_SLEEP_NS;
		if (wait < SPIN_NS + EARLY_NS)
			continue;
		wait -= SPIN_NS;
		ts.tv_sec = (time_t)(wait / 1000000000ULL);
		ts.tv_nsec = (long)(wait % 1000000000ULL);
		ppoll(pfd, (nfds_t)np, &ts, NULL);
	}
	return NULL;
}
