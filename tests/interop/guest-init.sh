#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# /init of the interop guest (busybox sh): load the modules in the order the
# image recorded, give eth0 its address, add the Soft-RoCE device rxe0 on it,
# run the one job of /etc/lh-job, print the result on the second serial port
# (ttyS1, nothing else writes there) and power off.
#
# /etc/lh-job (a second cpio the runner appends) sets:
#   LH_NAME LH_IP LH_PLEN LH_GW [LH_GW_MAC] [LH_MTU] LH_CMD LH_TIMEOUT [LH_RETRY_S]
# LH_CMD runs under sh -c with LH_GID set to rxe0's RoCEv2 IPv4 GID index.
# With LH_RETRY_S, a command that failed to connect to its server is run again
# until LH_RETRY_S seconds have passed (the server may still be booting).
#
# Result lines on ttyS1, one per line, parsed by run-pair.sh:
#   LH-BEGIN NAME | LH-BOOT-S S | LH-GID N | LH-ATTEMPTS N | LH-RC N
#   LH-OUT LINE (the command's stdout and stderr) | LH-CTR NAME VALUE
#   LH-NET rx_packets|tx_packets|rx_dropped N | LH-ERROR MSG | LH-END

export PATH=/bin:/usr/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp

RES=/dev/ttyS1
[ -c $RES ] || RES=/dev/console
IB=/sys/class/infiniband/rxe0
ERR=

log() { echo "lh-init: $*"; }
fail() {
	ERR="$*"
	log "error: $*"
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }

report() {
	echo "LH-BEGIN ${LH_NAME:-?}"
	[ -n "$BOOT_S" ] && echo "LH-BOOT-S $BOOT_S"
	[ -n "$GID" ] && echo "LH-GID $GID"
	[ -n "$ATTEMPTS" ] && echo "LH-ATTEMPTS $ATTEMPTS"
	[ -n "$RC" ] && echo "LH-RC $RC"
	[ -f /tmp/out ] && sed 's/^/LH-OUT /' /tmp/out
	d=$IB/ports/1/hw_counters
	[ -d $d ] || d=$IB/hw_counters
	if [ -d $d ]; then
		for f in $d/*; do
			[ -f "$f" ] && echo "LH-CTR ${f##*/} $(cat "$f")"
		done
	fi
	for s in rx_packets tx_packets rx_dropped tx_dropped; do
		[ -f /sys/class/net/eth0/statistics/$s ] &&
			echo "LH-NET $s $(cat /sys/class/net/eth0/statistics/$s)"
	done
	[ -n "$ERR" ] && echo "LH-ERROR $ERR"
	echo "LH-END"
}

finish() {
	# one open of the port: its close waits until the UART has sent everything
	report >$RES 2>&1
	sync
	poweroff -f
	sleep 5
}

BOOT_S= GID= ATTEMPTS= RC=
if [ ! -f /etc/lh-job ]; then
	fail "no /etc/lh-job (the runner appends it as a second cpio)"
	finish
fi
. /etc/lh-job

for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m || { fail "insmod $m failed"; finish; }
done

i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -e /sys/class/net/eth0 ] || { fail "no eth0 (virtio-net did not come up)"; finish; }
ip link set lo up
ip link set eth0 mtu "${LH_MTU:-1500}" || { fail "mtu ${LH_MTU:-1500} refused"; finish; }
ip addr add "$LH_IP/$LH_PLEN" dev eth0 || { fail "address $LH_IP/$LH_PLEN"; finish; }
ip link set eth0 up
ip route add default via "$LH_GW" dev eth0 || { fail "route via $LH_GW"; finish; }
# a permanent neighbour, like the topology's hosts: no ARP across the gateways
[ -z "$LH_GW_MAC" ] || arp -i eth0 -s "$LH_GW" "$LH_GW_MAC" || log "arp -s $LH_GW failed, ARP it is"

# the address first: rxe then gives it a RoCEv2 GID of its own
rdma link add rxe0 type rxe netdev eth0 || { fail "rdma link add rxe0 failed"; finish; }
i=0
while ! grep -q ACTIVE $IB/ports/1/state 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep -q ACTIVE $IB/ports/1/state 2>/dev/null || { fail "rxe0 port 1 not ACTIVE"; finish; }

# the GID index of ::ffff:LH_IP, RoCE v2
want=$(echo "$LH_IP" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
i=0
while [ -z "$GID" ] && [ $i -lt 50 ]; do
	for g in $IB/ports/1/gids/*; do
		n=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] || continue
		[ "$(cat $IB/ports/1/gid_attrs/types/$n 2>/dev/null)" = "RoCE v2" ] || continue
		GID=$n
		break
	done
	[ -n "$GID" ] || sleep 0.1
	i=$((i + 1))
done
[ -n "$GID" ] || { fail "no RoCE v2 GID for $LH_IP"; finish; }
BOOT_S=$(uptime_s)
log "rxe0 up at ${BOOT_S}s, GID index $GID; running: $LH_CMD"

export LH_GID=$GID
start=$(cut -d. -f1 /proc/uptime)
ATTEMPTS=0
while :; do
	ATTEMPTS=$((ATTEMPTS + 1))
	timeout -s KILL "${LH_TIMEOUT:-60}" sh -c "$LH_CMD" >/tmp/out 2>&1 </dev/null
	RC=$?
	[ "$RC" -ne 0 ] && [ -n "$LH_RETRY_S" ] || break
	grep -q -e "Couldn't connect" -e "Unable to init the socket connection" /tmp/out || break
	[ $(($(cut -d. -f1 /proc/uptime) - start)) -lt "$LH_RETRY_S" ] || break
	sleep 0.5
done
log "exit status $RC after $ATTEMPTS attempt(s)"
finish
