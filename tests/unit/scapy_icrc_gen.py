#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Write RoCEv2 packets whose ICRC scapy computed into a pcap (test oracle).

Usage: scapy_icrc_gen.py OUT.pcap [N_PER_FAMILY] [SEED]

Packet 0 and 1 are the vectors of scapy's own RoCE tests (UC SEND_ONLY over
IPv4 -> 0x78f353f3, the ConnectX-4 Lx CNP capture -> 0x82fd002a), built the
way test/contrib/roce.uts builds them; the script checks scapy still gives
those values. Then N random IPv4 and N random IPv6 packets with payloads of
0..4096 bytes and random variant fields (TOS/traffic class, TTL/hop limit,
flow label, IP ID, UDP checksum, FECN/BECN).

IPv4 ICRCs are scapy's BTH.compute_icrc. Debian's scapy 2.5 does not compute
the IPv6 ICRC (it returns 0); upstream scapy (contrib/roce.py, 2.6) does, by
setting fl, tc and hlim to all ones on a copy of the IPv6 header; ipv6_icrc()
below applies exactly that rule with scapy's own packet classes and zlib's
CRC-32, so nothing of longhaul's code is involved in the expected values.
"""
import random
import struct
import sys
import zlib

from scapy.all import Ether, IP, IPv6, UDP, Raw, wrpcap, import_hexcap, raw
from scapy.contrib.roce import BTH, cnp

# Extension header bytes after the BTH for the opcodes used here (IBTA table 38)
EXT_LEN = {
    0x04: 0, 0x05: 4, 0x06: 16, 0x07: 0, 0x08: 0, 0x0a: 16, 0x0b: 20,
    0x11: 4, 0x0d: 4, 0x0e: 0, 0x10: 4, 0x24: 0, 0x2a: 16, 0x64: 8,
}
NO_PAYLOAD = {0x11}


def vectors():
    uc = Ether(dst='24:8a:07:a8:fa:22', src='24:8a:07:a8:fa:22') / \
        IP(version=4, ihl=5, tos=0x1, id=1144, flags='DF', frag=0, ttl=64,
           src='192.168.0.7', dst='192.168.0.7', len=64) / \
        UDP(sport=49152, dport=4791, len=44) / \
        BTH(opcode='UC_SEND_ONLY', migreq=1, padcount=2, pkey=0xffff, dqpn=211,
            psn=13571856) / \
        Raw(b'F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00')
    uc = Ether(raw(uc))
    assert uc[BTH].icrc == 0x78f353f3, hex(uc[BTH].icrc)
    c = Ether(import_hexcap('''0x0000:  e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
0x0010:  003c 718c 4000 4011 9161 0a00 1101 0a00
0x0020:  1201 0000 12b7 0028 0000 8100 ffff 4000
0x0030:  0118 0000 0000 0000 0000 0000 0000 0000
0x0040:  0000 0000 0000 82fd 002a
'''))
    del c.icrc
    c = Ether(raw(c))
    assert c.icrc == 0x82fd002a, hex(c.icrc)
    return [uc, c]


def ipv6_icrc(pkt):
    """ICRC of an Ether/IPv6/UDP/BTH packet as upstream scapy computes it."""
    ip = pkt[IPv6].copy()
    ip.fl = 0xfffff
    ip.tc = 0xff
    ip.hlim = 0xff
    ip[UDP].chksum = 0xffff
    ip[BTH].fecn = 1
    ip[BTH].becn = 1
    ip[BTH].resv6 = 0xff
    body = raw(ip)[:-4]  # up to the ICRC field
    return struct.pack('!I', zlib.crc32(b'\xff' * 8 + body) & 0xffffffff)[::-1]


def random_packet(rng, v6):
    op = rng.choice(sorted(EXT_LEN))
    ext = bytes(rng.getrandbits(8) for _ in range(EXT_LEN[op]))
    n = 0 if op in NO_PAYLOAD else rng.randint(0, 4096)
    data = bytes(rng.getrandbits(8) for _ in range(n))
    pad = (-n) % 4
    bth = BTH(opcode=op, solicited=rng.getrandbits(1), migreq=rng.getrandbits(1),
              padcount=pad, pkey=rng.getrandbits(16), fecn=rng.getrandbits(1),
              becn=rng.getrandbits(1), dqpn=rng.getrandbits(24),
              ackreq=rng.getrandbits(1), psn=rng.getrandbits(24))
    udp = UDP(sport=rng.getrandbits(16), dport=4791)
    if not v6 and rng.getrandbits(1):
        udp.chksum = 0  # rxe sends IPv4 RoCE without a UDP checksum
    if v6:
        ip = IPv6(src='fd00::%x' % rng.getrandbits(16), dst='fd00:1::%x' % rng.getrandbits(16),
                  tc=rng.getrandbits(8), fl=rng.getrandbits(20), hlim=rng.getrandbits(8))
    else:
        ip = IP(src='10.%d.%d.%d' % tuple(rng.getrandbits(8) for _ in range(3)),
                dst='10.9.%d.%d' % tuple(rng.getrandbits(8) for _ in range(2)),
                tos=rng.getrandbits(8), ttl=rng.getrandbits(8), id=rng.getrandbits(16),
                flags=rng.choice(['DF', 0]))
    pkt = Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / ip / udp / bth / \
        Raw(ext + data + b'\x00' * pad)
    if v6:
        pkt[BTH].icrc = 0
        pkt = Ether(raw(pkt))
        body = raw(pkt)
        pkt = Ether(body[:-4] + ipv6_icrc(pkt))
        pkt[UDP].chksum = None  # the UDP checksum covers the ICRC
        pkt = Ether(raw(pkt))
    return Ether(raw(pkt))


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 4791)
    pkts = vectors()
    pkts += [random_packet(rng, False) for _ in range(n)]
    pkts += [random_packet(rng, True) for _ in range(n)]
    wrpcap(out, pkts)


if __name__ == '__main__':
    main()
