#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Independent RoCEv2 check of pcap captures: every ICRC recomputed.

Usage: roce-pcap.py [--self-test] [--bad-max N] FILE.pcap...

Reads classic pcap files (Ethernet, Linux cooked v1/v2; micro- or
nanosecond; either byte order), takes each IPv4 or IPv6 UDP packet to port
4791 and recomputes its ICRC from the IBTA rules (IBA spec. annex A17,
RoCEv2, section A17.3.3), without any of longhaul's code:

  8 bytes of 0xff stand for the LRH a RoCEv2 packet does not carry; then
  the IP header with its variant fields set to all ones (IPv4: TOS, TTL and
  header checksum; IPv6: traffic class, flow label and hop limit), the UDP
  header with its checksum set to ones, the BTH with byte 4 (FECN, BECN and
  the six reserved bits) set to ones, and everything after it up to the
  ICRC. CRC-32 (zlib's: reflected 0x04c11db7, init and final xor ones) of
  that, sent least significant byte first.

Prints one JSON object: per file and in total the RoCEv2 packets, how many
ICRCs were right and wrong, the count of each BTH opcode, the NAKs (AETH
syndrome 0x60, PSN sequence error), other NAKs (RNR, errors), ACKs and
Depot-NACK marks (a NAK with bit 0x20 of BTH byte 4 set, include/lh_maps.h),
and the first bad packets. Exit status 0 all ICRCs right, 1 some wrong,
2 bad usage or a file that is not a pcap.

--self-test checks the computation against the two vectors of scapy's RoCE
tests (also in tests/unit/scapy_icrc_gen.py) and exits.
"""
import json
import struct
import sys
import zlib

ROCE_PORT = 4791
DNACK_MARK = 0x20  # include/lh_maps.h LH_DNACK_MARK

# RC opcodes (IBTA table 38); others are shown as their number
OPCODES = {
    0x00: 'SEND_FIRST', 0x01: 'SEND_MIDDLE', 0x02: 'SEND_LAST',
    0x03: 'SEND_LAST_IMM', 0x04: 'SEND_ONLY', 0x05: 'SEND_ONLY_IMM',
    0x06: 'WRITE_FIRST', 0x07: 'WRITE_MIDDLE', 0x08: 'WRITE_LAST',
    0x09: 'WRITE_LAST_IMM', 0x0a: 'WRITE_ONLY', 0x0b: 'WRITE_ONLY_IMM',
    0x0c: 'READ_REQUEST', 0x0d: 'READ_RESPONSE_FIRST',
    0x0e: 'READ_RESPONSE_MIDDLE', 0x0f: 'READ_RESPONSE_LAST',
    0x10: 'READ_RESPONSE_ONLY', 0x11: 'ACKNOWLEDGE', 0x12: 'ATOMIC_ACKNOWLEDGE',
    0x13: 'CMP_SWAP', 0x14: 'FETCH_ADD', 0x16: 'SEND_LAST_INV',
    0x17: 'SEND_ONLY_INV', 0x81: 'CNP',
}
# RC opcodes that carry an AETH right after the BTH
AETH_OPCODES = {0x0d, 0x0f, 0x10, 0x11, 0x12}


def icrc(l3, v6):
    """The ICRC of one RoCEv2 packet: l3 is the IP packet without the ICRC."""
    b = bytearray(l3)
    if v6:
        b[0] |= 0x0f  # traffic class (high nibble) ...
        b[1:4] = b'\xff\xff\xff'  # ... its low nibble and the flow label
        b[7] = 0xff  # hop limit
        ihl = 40
    else:
        ihl = (b[0] & 0x0f) * 4
        b[1] = 0xff  # TOS (DSCP, ECN)
        b[8] = 0xff  # TTL
        b[10:12] = b'\xff\xff'  # header checksum
    b[ihl + 6:ihl + 8] = b'\xff\xff'  # UDP checksum
    b[ihl + 8 + 4] = 0xff  # BTH byte 4: FECN, BECN, resv6
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(b)) & 0xffffffff)


def l3_of(linktype, frame):
    """(ethertype, offset of the IP header) of a captured frame, or None."""
    if linktype == 1:  # Ethernet
        off, et = 14, None
        if len(frame) < 14:
            return None
        et = struct.unpack_from('!H', frame, 12)[0]
        while et in (0x8100, 0x88a8) and len(frame) >= off + 4:
            et = struct.unpack_from('!H', frame, off + 2)[0]
            off += 4
        return et, off
    if linktype == 113 and len(frame) >= 16:  # Linux cooked v1
        return struct.unpack_from('!H', frame, 14)[0], 16
    if linktype == 276 and len(frame) >= 20:  # Linux cooked v2
        return struct.unpack_from('!H', frame, 0)[0], 20
    if linktype == 101:  # raw IP
        return (0x86dd if frame and frame[0] >> 4 == 6 else 0x0800), 0
    return None


def read_pcap(path):
    """(linktype, [(frame, truncated)]) of a classic pcap file."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError('%s: too short for a pcap header' % path)
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        e = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        e = '>'
    else:
        raise ValueError('%s: not a classic pcap file (pcapng? write with tcpdump -w)' % path)
    linktype = struct.unpack_from(e + 'I', data, 20)[0] & 0x0fffffff
    frames, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, wirelen = struct.unpack_from(e + 'IIII', data, off)
        off += 16
        frames.append((data[off:off + caplen], caplen < wirelen))
        off += caplen
    return linktype, frames


def new_report():
    return {'frames': 0, 'packets': 0, 'ipv4': 0, 'ipv6': 0, 'icrc_ok': 0,
            'icrc_bad': 0, 'truncated': 0, 'opcodes': {}, 'acks': 0, 'naks': 0,
            'naks_other': 0, 'depot_nack_marks': 0, 'bad': []}


def check_packet(rep, frame, linktype, where, bad_max):
    rep['frames'] += 1
    l = l3_of(linktype, frame)
    if l is None:
        return
    et, off = l
    if et == 0x0800 and len(frame) >= off + 20 and frame[off] >> 4 == 4:
        v6 = False
        ihl = (frame[off] & 0x0f) * 4
        if frame[off + 9] != 17 or struct.unpack_from('!H', frame, off + 6)[0] & 0x3fff:
            return  # not UDP, or a fragment
        iplen = struct.unpack_from('!H', frame, off + 2)[0]
    elif et == 0x86dd and len(frame) >= off + 40 and frame[off] >> 4 == 6:
        v6 = True
        ihl = 40
        if frame[off + 6] != 17:
            return  # UDP right after the fixed header only: RoCEv2 uses no extension headers
        iplen = 40 + struct.unpack_from('!H', frame, off + 4)[0]
    else:
        return
    u = off + ihl
    if len(frame) < u + 8 or struct.unpack_from('!H', frame, u + 2)[0] != ROCE_PORT:
        return
    rep['packets'] += 1
    rep['ipv6' if v6 else 'ipv4'] += 1
    # the IP length, not the frame's: Ethernet pads short frames
    end = off + iplen
    bth = u + 8
    if len(frame) < end or end < bth + 12 + 4:
        rep['truncated'] += 1
        return
    op = frame[bth]
    name = OPCODES.get(op, '0x%02x' % op)
    rep['opcodes'][name] = rep['opcodes'].get(name, 0) + 1
    if op in AETH_OPCODES and end >= bth + 12 + 4 + 4:
        syn = frame[bth + 12]
        kind = syn & 0xe0
        if kind == 0x00:
            rep['acks'] += 1 if op == 0x11 else 0
        elif syn == 0x60:
            rep['naks'] += 1
            if frame[bth + 4] & DNACK_MARK:
                rep['depot_nack_marks'] += 1
        elif kind in (0x20, 0x60):
            rep['naks_other'] += 1
    want = icrc(frame[off:end - 4], v6)
    if want == frame[end - 4:end]:
        rep['icrc_ok'] += 1
    else:
        rep['icrc_bad'] += 1
        if len(rep['bad']) < bad_max:
            rep['bad'].append({'where': where, 'opcode': name,
                               'psn': struct.unpack_from('!I', frame, bth + 8)[0] & 0xffffff,
                               'dqpn': struct.unpack_from('!I', frame, bth + 4)[0] & 0xffffff,
                               'icrc': frame[end - 4:end].hex(), 'expected': want.hex()})


def add(total, rep):
    for k, v in rep.items():
        if k == 'opcodes':
            for o, n in v.items():
                total[k][o] = total[k].get(o, 0) + n
        elif k == 'bad':
            total[k].extend(v)
        else:
            total[k] += v


def self_test():
    # scapy test/contrib/roce.uts: UC SEND_ONLY over IPv4, ICRC 0x78f353f3
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0x01, 64, 1144, 0x4000, 64, 17, 0,
                               bytes([192, 168, 0, 7]), bytes([192, 168, 0, 7])))
    s = 0
    for i in range(0, 20, 2):
        s += (ip[i] << 8) | ip[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    ip[10:12] = struct.pack('!H', ~s & 0xffff)
    udp = struct.pack('!HHHH', 49152, 4791, 44, 0)
    # opcode UC SEND_ONLY 0x24; SE 0, M 1, pad 2, tver 0; pkey ffff; dqpn 211; psn 13571856
    bth = struct.pack('!BBHII', 0x24, 0x40 | (2 << 4), 0xffff, 211, 13571856)
    payload = b'F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00'
    got = icrc(bytes(ip) + udp + bth + payload, False)
    ok1 = got == struct.pack('!I', 0x78f353f3)
    # scapy test/contrib/roce.uts: a ConnectX-4 Lx CNP, ICRC 0x82fd002a on the wire
    cnp = bytes.fromhex(''.join(''.join(l.split()[1:]) for l in '''
        0x0000:  e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
        0x0010:  003c 718c 4000 4011 9161 0a00 1101 0a00
        0x0020:  1201 0000 12b7 0028 0000 8100 ffff 4000
        0x0030:  0118 0000 0000 0000 0000 0000 0000 0000
        0x0040:  0000 0000 0000 82fd 002a'''.strip().splitlines()))
    got2 = icrc(cnp[14:-4], False)
    ok2 = got2 == cnp[-4:]
    print(json.dumps({'uc_send_only': {'ok': ok1, 'icrc': got.hex()},
                      'cnp': {'ok': ok2, 'icrc': got2.hex()}}))
    return 0 if ok1 and ok2 else 1


def main(argv):
    bad_max, files = 10, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == '--self-test':
            return self_test()
        if a == '--bad-max' and i + 1 < len(argv) and argv[i + 1].isdigit():
            bad_max = int(argv[i + 1])
            i += 2
            continue
        if a in ('-h', '--help'):
            sys.stderr.write(__doc__)
            return 0
        if a.startswith('-'):
            sys.stderr.write('roce-pcap: unknown option %s\n' % a)
            return 2
        files.append(a)
        i += 1
    if not files:
        sys.stderr.write('usage: roce-pcap.py [--self-test] [--bad-max N] FILE.pcap...\n')
        return 2
    total = new_report()
    out = {'files': {}}
    for path in files:
        try:
            linktype, frames = read_pcap(path)
        except (OSError, ValueError) as e:
            sys.stderr.write('roce-pcap: %s\n' % e)
            return 2
        rep = new_report()
        for n, (frame, _) in enumerate(frames):
            check_packet(rep, frame, linktype, '%s#%d' % (path, n + 1), bad_max)
        out['files'][path] = rep
        add(total, rep)
    total['bad'] = total['bad'][:bad_max]
    out['total'] = total
    print(json.dumps(out, sort_keys=True))
    return 1 if total['icrc_bad'] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
