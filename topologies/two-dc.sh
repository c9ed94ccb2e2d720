#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The two-data-center test world: a sending host, its gateway, the long haul,
# the far gateway and a receiving host, each in a network namespace:
#
#   src ---- gwa ==== wan ==== gwb ---- dst
#   dc    dc    wan  gwa  gwb  wan  dc    dc
#
# gwa and gwb are IP routers and belong to longhaul (XDP/tcx on dc and wan).
# wan is a bump in the wire: lhwan (or a bridge with netem) forwards frames
# unchanged between its ports gwa and gwb, so gwa and gwb share the WAN
# subnet. Loss inside the data centers is done in src and dst (lhwan dcloss).
#
#   node:if   IPv4           IPv6          MAC
#   src:dc    10.1.0.10/24   fd00:1::10    02:4c:48:00:01:01
#   gwa:dc    10.1.0.1/24    fd00:1::1     02:4c:48:00:02:01   (DC side)
#   gwa:wan   10.0.0.1/24    fd00::1       02:4c:48:00:02:02   (WAN side)
#   wan:gwa   -              -             02:4c:48:00:03:01   (lhwan port A)
#   wan:gwb   -              -             02:4c:48:00:03:02   (lhwan port B)
#   gwb:wan   10.0.0.2/24    fd00::2       02:4c:48:00:04:02   (WAN side)
#   gwb:dc    10.2.0.1/24    fd00:2::1     02:4c:48:00:04:01   (DC side)
#   dst:dc    10.2.0.10/24   fd00:2::10    02:4c:48:00:05:01
#
# Namespaces are PREFIX-NODE (--prefix, default lh); interfaces live only
# inside them, so two topologies with different prefixes never clash.
# Direction a2b is src -> dst everywhere (lhwan port A -> port B).

TOPO=two-dc
NODES=(src gwa wan gwb dst)
ROUTERS=(gwa gwb)
HOSTS=(src dst)
LINKS=(
	"src:dc/02:4c:48:00:01:01 gwa:dc/02:4c:48:00:02:01"
	"gwa:wan/02:4c:48:00:02:02 wan:gwa/02:4c:48:00:03:01"
	"wan:gwb/02:4c:48:00:03:02 gwb:wan/02:4c:48:00:04:02"
	"gwb:dc/02:4c:48:00:04:01 dst:dc/02:4c:48:00:05:01"
)
ADDRS=(
	"src:dc 10.1.0.10/24 fd00:1::10/64"
	"gwa:dc 10.1.0.1/24 fd00:1::1/64"
	"gwa:wan 10.0.0.1/24 fd00::1/64"
	"gwb:wan 10.0.0.2/24 fd00::2/64"
	"gwb:dc 10.2.0.1/24 fd00:2::1/64"
	"dst:dc 10.2.0.10/24 fd00:2::10/64"
)
ROUTES=(
	"src default 10.1.0.1 default fd00:1::1"
	"gwa 10.2.0.0/24 10.0.0.2 fd00:2::/64 fd00::2"
	"gwb 10.1.0.0/24 10.0.0.1 fd00:1::/64 fd00::1"
	"dst default 10.2.0.1 default fd00:2::1"
)
SEGMENTS=(
	"src:dc gwa:dc"
	"gwa:wan gwb:wan"
	"gwb:dc dst:dc"
)
BUMPS=("wan gwa gwb")

usage() {
	cat >&2 <<'EOF'
usage: two-dc.sh up [OPTIONS]        build (or converge to) the topology; idempotent
       two-dc.sh down [--prefix P]   remove namespaces, links, processes, state
       two-dc.sh status [--prefix P] [-j]   every option and the live state (JSON with -j)
       two-dc.sh exec NODE [--prefix P] -- CMD...   run CMD in NODE (src gwa wan gwb dst)
       two-dc.sh shell NODE [--prefix P]

options of up:
  --prefix P            namespace prefix (default lh): namespaces P-src ... P-dst
  --impair auto|lhwan|netem   WAN emulator (auto: netem if the kernel has it and the
                        options fit netem, else lhwan)
  --rtt TIME            round-trip time of the long haul (delay TIME/2 each way; default 0)
  --delay-a2b TIME, --delay-b2a TIME   one-way delays (a2b is src -> dst)
  --jitter TIME         +- jitter on each one-way delay (FIFO order kept)
  --rate RATE, --rate-a2b RATE, --rate-b2a RATE   bottleneck rate (100mbit, 1gbit)
  --queue BYTES         bottleneck buffer (lhwan default: 50 ms at the rate)
  --loss SPEC, --loss-a2b SPEC, --loss-b2a SPEC   WAN loss (repeatable):
                          random P% [CORR%] | gemodel P% [R% [1-H% [1-K%]]]
                          state P13% [P31% [P32% [P23% [P14%]]]] | every N [K]
                          psn [QPN:]PSN[-PSN][,...] [times T]   (first transmissions only)
  --duplicate P%[,CORR%]  --reorder P%[,CORR%][,gap N]
  --match all|roce      frames the WAN loss models see (default all)
  --seed N              lhwan PRNG seed (default: random, shown by status)
  --dca-loss SPEC, --dca-loss-a2b SPEC (src->gwa), --dca-loss-b2a SPEC (gwa->src)
  --dcb-loss SPEC, --dcb-loss-a2b SPEC (gwb->dst), --dcb-loss-b2a SPEC (dst->gwb)
                        host-link loss in src / dst: none | random P% | gemodel ... | every N [K]
  --mtu N               MTU of every link (default 1500)
  --lhwan-arg ARG       pass ARG to lhwan (repeatable)
  -j, --json            print the status as JSON after up
  -q, --quiet
EOF
}

# shellcheck source=topologies/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
topo_main "$@"
