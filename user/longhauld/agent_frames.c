// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent's frames: NAKs and ACKs to a sending NIC, Depot-NACKs and
 * reports out of the QP's WAN interface, and kicks of lh_dc_kick that go on
 * with a release or a replay run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent_state.h"
#include "lh_proto.h"
#include "log.h"
#include "netlink.h"
#include "pkt.h"
#include "report.h"

static void addr_from_key(union lh_ip_addr *dst, const uint8_t *a)
{
	memset(dst, 0, sizeof(*dst));
	if (lh_addr16_is_v4(a))
		memcpy(&dst->v4, a + 12, 4);
	else
		memcpy(&dst->v6, a, 16);
}

/* The MAC of a host in the DC (a key's address) from the neighbour table */
int dc_host_mac(const struct agent *ag, const uint8_t *key_addr, uint8_t mac[6])
{
	union lh_ip_addr a;

	addr_from_key(&a, key_addr);
	return lh_nl_neigh_get(lh_addr16_is_v4(key_addr) ? AF_INET : AF_INET6, ag->cfg->dc.ifindex,
			       lh_addr16_is_v4(key_addr) ? (void *)&a.v4 : (void *)&a.v6, mac);
}

/* A frame from the responder to the requester of a Depot QP, out of the WAN interface */
void spec_to_requester(struct lh_pkt_spec *s, const struct lh_qp_key *k,
		       const struct lh_qp *qp)
{
	lh_pkt_spec_init(s, (qp->flags & LH_QPF_IPV6) ? AF_INET6 : AF_INET);
	memcpy(s->dst_mac, qp->wan_peer_mac, 6);
	memcpy(s->src_mac, qp->wan_mac, 6);
	addr_from_key(&s->src, k->daddr); /* from the responder ... */
	addr_from_key(&s->dst, k->saddr); /* ... to the requester */
	s->sport = qp->sport;
}

/*
 * The WAN interface a QP's frames leave by: the one its traffic uses (lh_qp
 * wan_ifindex, recorded in XDP with the MACs the frames carry), else the
 * first --wan (a Sentry QP no ACK has come for yet).
 */
static struct lh_pktio *wan_io_of(const struct agent *ag, const struct lh_qp *qp)
{
	int i;

	for (i = 0; i < ag->cfg->n_wan; i++)
		if (ag->wan_io[i] && (uint32_t)ag->wan_ifindex[i] == qp->wan_ifindex)
			return ag->wan_io[i];
	return ag->wan_io[0];
}

int send_frame(struct agent *ag, const struct lh_qp *qp, uint8_t *buf, size_t len)
{
	struct lh_frame f = { .data = buf, .len = (uint32_t)len, .cap = (uint32_t)len };

	if (lh_pktio_send(wan_io_of(ag, qp), &f, 1) != 1) {
		ag->st.send_fail++;
		return -EIO;
	}
	return 0;
}

/*
 * Sentry: an ACK or NAK (syndrome) at psn to the NIC, from the responder to
 * the requester, out of the DC interface: the NAK it was owed once its
 * retry ended (the ACK just passed), or the silence rule's.
 */
int send_to_nic(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		uint32_t psn, uint8_t syndrome)
{
	uint8_t buf[256], nic_mac[6];
	struct lh_pkt_spec s;
	struct lh_frame f;
	ssize_t sz;
	int err;

	if (!ag->dc_io)
		return -ENODEV;
	err = dc_host_mac(ag, k->saddr, nic_mac);
	if (err)
		return err;
	lh_pkt_spec_init(&s, (qp->flags & LH_QPF_IPV6) ? AF_INET6 : AF_INET);
	memcpy(s.dst_mac, nic_mac, 6);
	memcpy(s.src_mac, ag->dc_mac, 6);
	addr_from_key(&s.src, k->daddr);
	addr_from_key(&s.dst, k->saddr);
	s.sport = qp->sport;
	s.roce.opcode = ROCE_RC_ACKNOWLEDGE;
	s.roce.pkey = qp->pkey;
	s.roce.dqpn = qp->peer_qpn;
	s.roce.psn = psn;
	s.roce.aeth.syndrome = syndrome;
	s.roce.aeth.msn = qp->msn;
	sz = lh_pkt_build(&s, buf, sizeof(buf));
	if (sz < 0)
		return (int)sz;
	f = (struct lh_frame){ .data = buf, .len = (uint32_t)sz, .cap = sizeof(buf) };
	if (lh_pktio_send(ag->dc_io, &f, 1) != 1) {
		ag->st.send_fail++;
		return -EIO;
	}
	return 0;
}

int kick(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp, bool replay,
	 uint32_t psn)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	struct __sk_buff skb = { .ifindex = (uint32_t)ag->cfg->dc.ifindex };
	uint8_t buf[256], nic_mac[6];
	struct lh_pkt_spec s;
	ssize_t sz;
	int err;

	/* the frames the kick emits carry this one's link header: the NIC's MAC */
	err = dc_host_mac(ag, k->daddr, nic_mac);
	if (err)
		return err;
	lh_pkt_spec_init(&s, (qp->flags & LH_QPF_IPV6) ? AF_INET6 : AF_INET);
	s.roce.pkey = qp->pkey;
	if (replay) {
		/* as the NIC's NAK: from it, to us; the program swaps the MACs */
		memcpy(s.src_mac, nic_mac, 6);
		memcpy(s.dst_mac, ag->dc_mac, 6);
		addr_from_key(&s.src, k->daddr);
		addr_from_key(&s.dst, k->saddr);
		s.roce.opcode = ROCE_RC_ACKNOWLEDGE;
		s.roce.dqpn = qp->peer_qpn;
		s.roce.aeth.syndrome = AETH_NAK_PSN_SEQ_ERROR;
	} else {
		memcpy(s.dst_mac, nic_mac, 6);
		memcpy(s.src_mac, ag->dc_mac, 6);
		addr_from_key(&s.src, k->saddr);
		addr_from_key(&s.dst, k->daddr);
		s.roce.opcode = ROCE_RC_RDMA_WRITE_MIDDLE;
		s.roce.dqpn = k->dqpn;
	}
	s.roce.psn = psn;
	sz = lh_pkt_build(&s, buf, sizeof(buf));
	if (sz < 0)
		return (int)sz;
	o.data_in = buf;
	o.data_size_in = (uint32_t)sz;
	o.ctx_in = &skb;
	o.ctx_size_in = sizeof(skb);
	err = bpf_prog_test_run_opts(ag->dp->kick_fd, &o);
	if (err)
		return -errno;
	ag->st.kicks++;
	return 0;
}
