#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Two data centers joined by two disjoint long-haul paths, each through a
# router: path 1 (primary, via rt1) and path 2 (backup, via rt2). For credit
# flow control hop by hop and for failover.
#
#                  wan1 (lhwan)          rt1
#            .-- wan1 ==== gwa | rt1 -- gwa  gwb -- wan1 --.
#   src -- gwa                                             gwb -- dst
#            '-- wan2 ==== gwa | rt2 -- gwa  gwb -- wan2 --'
#                  wan2 (lhwan)          rt2
#
# Each path: gwa:wanN -[emulator wanN: ports gwa, rtN]- rtN:gwa ; rtN:gwb - gwb:wanN.
# The emulator namespace is a bump in the wire (gwa and rtN share a subnet);
# rtN and the gateways are IP routers. gwa and gwb prefer path 1 (metric 10)
# over path 2 (metric 20); nothing fails over by itself when a path is cut
# beyond a gateway's own link: that is the credit agent's job.
#
#   node:if     IPv4            IPv6            MAC
#   src:dc      10.1.0.10/24    fd00:1::10      02:4c:48:00:01:01
#   gwa:dc      10.1.0.1/24     fd00:1::1       02:4c:48:00:02:01   (DC side)
#   gwa:wan1    10.0.1.1/24     fd00:0:1::1     02:4c:48:00:02:02   (WAN side, path 1)
#   gwa:wan2    10.0.2.1/24     fd00:0:2::1     02:4c:48:00:02:03   (WAN side, path 2)
#   rt1:gwa     10.0.1.2/24     fd00:0:1::2     02:4c:48:00:06:01
#   rt1:gwb     10.0.11.1/24    fd00:0:11::1    02:4c:48:00:06:02
#   rt2:gwa     10.0.2.2/24     fd00:0:2::2     02:4c:48:00:07:01
#   rt2:gwb     10.0.12.1/24    fd00:0:12::1    02:4c:48:00:07:02
#   gwb:wan1    10.0.11.2/24    fd00:0:11::2    02:4c:48:00:04:02   (WAN side, path 1)
#   gwb:wan2    10.0.12.2/24    fd00:0:12::2    02:4c:48:00:04:03   (WAN side, path 2)
#   gwb:dc      10.2.0.1/24     fd00:2::1       02:4c:48:00:04:01   (DC side)
#   dst:dc      10.2.0.10/24    fd00:2::10      02:4c:48:00:05:01
#   wan1:gwa / wan1:rt1, wan2:gwa / wan2:rt2: emulator ports, no addresses
#
# Options as two-dc.sh; every WAN option applies to both paths, and
# --path1-OPTION / --path2-OPTION (e.g. --path2-rtt 40ms, --path1-loss-a2b ...)
# to one path only.

TOPO=dual-path
NODES=(src gwa wan1 rt1 wan2 rt2 gwb dst)
ROUTERS=(gwa rt1 rt2 gwb)
HOSTS=(src dst)
LINKS=(
	"src:dc/02:4c:48:00:01:01 gwa:dc/02:4c:48:00:02:01"
	"gwa:wan1/02:4c:48:00:02:02 wan1:gwa/02:4c:48:00:08:01"
	"wan1:rt1/02:4c:48:00:08:02 rt1:gwa/02:4c:48:00:06:01"
	"rt1:gwb/02:4c:48:00:06:02 gwb:wan1/02:4c:48:00:04:02"
	"gwa:wan2/02:4c:48:00:02:03 wan2:gwa/02:4c:48:00:09:01"
	"wan2:rt2/02:4c:48:00:09:02 rt2:gwa/02:4c:48:00:07:01"
	"rt2:gwb/02:4c:48:00:07:02 gwb:wan2/02:4c:48:00:04:03"
	"gwb:dc/02:4c:48:00:04:01 dst:dc/02:4c:48:00:05:01"
)
ADDRS=(
	"src:dc 10.1.0.10/24 fd00:1::10/64"
	"gwa:dc 10.1.0.1/24 fd00:1::1/64"
	"gwa:wan1 10.0.1.1/24 fd00:0:1::1/64"
	"gwa:wan2 10.0.2.1/24 fd00:0:2::1/64"
	"rt1:gwa 10.0.1.2/24 fd00:0:1::2/64"
	"rt1:gwb 10.0.11.1/24 fd00:0:11::1/64"
	"rt2:gwa 10.0.2.2/24 fd00:0:2::2/64"
	"rt2:gwb 10.0.12.1/24 fd00:0:12::1/64"
	"gwb:wan1 10.0.11.2/24 fd00:0:11::2/64"
	"gwb:wan2 10.0.12.2/24 fd00:0:12::2/64"
	"gwb:dc 10.2.0.1/24 fd00:2::1/64"
	"dst:dc 10.2.0.10/24 fd00:2::10/64"
)
ROUTES=(
	"src default 10.1.0.1 default fd00:1::1"
	"dst default 10.2.0.1 default fd00:2::1"
	"gwa 10.2.0.0/24 10.0.1.2 fd00:2::/64 fd00:0:1::2 10"
	"gwa 10.2.0.0/24 10.0.2.2 fd00:2::/64 fd00:0:2::2 20"
	"gwa 10.0.11.0/24 10.0.1.2 fd00:0:11::/64 fd00:0:1::2"
	"gwa 10.0.12.0/24 10.0.2.2 fd00:0:12::/64 fd00:0:2::2"
	"gwb 10.1.0.0/24 10.0.11.1 fd00:1::/64 fd00:0:11::1 10"
	"gwb 10.1.0.0/24 10.0.12.1 fd00:1::/64 fd00:0:12::1 20"
	"gwb 10.0.1.0/24 10.0.11.1 fd00:0:1::/64 fd00:0:11::1"
	"gwb 10.0.2.0/24 10.0.12.1 fd00:0:2::/64 fd00:0:12::1"
	"rt1 10.1.0.0/24 10.0.1.1 fd00:1::/64 fd00:0:1::1"
	"rt1 10.2.0.0/24 10.0.11.2 fd00:2::/64 fd00:0:11::2"
	"rt2 10.1.0.0/24 10.0.2.1 fd00:1::/64 fd00:0:2::1"
	"rt2 10.2.0.0/24 10.0.12.2 fd00:2::/64 fd00:0:12::2"
)
SEGMENTS=(
	"src:dc gwa:dc"
	"gwa:wan1 rt1:gwa"
	"rt1:gwb gwb:wan1"
	"gwa:wan2 rt2:gwa"
	"rt2:gwb gwb:wan2"
	"gwb:dc dst:dc"
)
BUMPS=("wan1 gwa rt1" "wan2 gwa rt2")

usage() {
	cat >&2 <<'EOF'
usage: dual-path.sh up [OPTIONS]      build (or converge to) the topology; idempotent
       dual-path.sh down [--prefix P]
       dual-path.sh status [--prefix P] [-j]
       dual-path.sh exec NODE [--prefix P] -- CMD...   (src gwa wan1 rt1 wan2 rt2 gwb dst)
       dual-path.sh shell NODE [--prefix P]

Options of up are those of two-dc.sh (see two-dc.sh --help). WAN options apply
to both paths; prefix one with path1- or path2- for one path only, e.g.
  dual-path.sh up --rtt 20ms --path2-rtt 40ms --path1-loss-a2b 'random 1%'
Path 1 (via rt1) is the primary route of both gateways, path 2 (via rt2) the backup.
EOF
}

# shellcheck source=topologies/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
topo_main "$@"
