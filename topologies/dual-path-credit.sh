# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Credit flow control in the dual-path topology (dual-path.sh), for the tests
# and benches that run it (tests/integ/70-credit.bats, 71-credit-lr2.bats,
# tests/bench/credit-e2e.bench.sh). Sourced: defines functions, runs nothing.

# dual_path_credit_routes NODE: longhauld --mode credit's options for the hop
# NODE (gwa, rt1, rt2, gwb): both paths toward the far DC, the primary first;
# the gateways' DC side
dual_path_credit_routes() {
	case $1 in
	gwa) echo --dc dc --credit-route 10.2.0.0/24,10.0.1.2,wan1 --credit-route 10.2.0.0/24,10.0.2.2,wan2 ;;
	gwb) echo --dc dc --credit-route 10.1.0.0/24,10.0.11.1,wan1 --credit-route 10.1.0.0/24,10.0.12.1,wan2 ;;
	rt1) echo --credit-route 10.2.0.0/24,10.0.11.2,gwb --credit-route 10.1.0.0/24,10.0.1.1,gwa ;;
	rt2) echo --credit-route 10.2.0.0/24,10.0.12.2,gwb --credit-route 10.1.0.0/24,10.0.2.1,gwa ;;
	esac
}

# dual_path_rt1_loss TABLE: an nftables ruleset (for `nft -f -` in rt1) that
# drops 1 % of the RoCEv2 packets coming in from gwa, counted, in table inet
# TABLE: loss on the link between the first two credit hops
dual_path_rt1_loss() {
	cat <<NFT
table inet $1 {
	chain in {
		type filter hook prerouting priority -300;
		iifname "gwa" udp dport 4791 numgen random mod 100 == 0 counter drop
	}
}
NFT
}
