/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 Invariant CRC (IBTA Annex A17.8) in user space.
 *
 * The ICRC is CRC-32 (IEEE 802.3) over: 8 bytes of 0xff (the pseudo LRH), the
 * IP header with the variant fields set to all ones (IPv4: TOS, TTL, header
 * checksum; IPv6: traffic class, flow label, hop limit), the UDP header with
 * its checksum set to all ones, the BTH with byte 4 set to all ones, and the
 * rest of the packet up to the ICRC field. Real NICs put the CRC register on
 * the wire least significant byte first: use lh_icrc_store()/lh_icrc_load().
 */
#ifndef LH_USER_ICRC_H
#define LH_USER_ICRC_H

#include <stddef.h>
#include <stdint.h>

/* Plain CRC-32 register update (no pre/post inversion): crc = crc32(crc, buf) */
uint32_t lh_crc32_update(uint32_t crc, const void *buf, size_t len);

/* zlib-compatible CRC-32 of a buffer (init and final inversion included) */
uint32_t lh_crc32(const void *buf, size_t len);

/*
 * ICRC of the RoCEv2 packet whose IP header starts at l3. udp_off is the offset
 * of the UDP header from l3 (20 for IPv4 without options, 40 for IPv6 without
 * extension headers); icrc_off the offset of the ICRC field from l3, i.e. the
 * number of covered bytes. Returns 0 and sets *icrc, or -EINVAL when the
 * offsets cannot describe an IP/UDP/BTH packet.
 */
int lh_icrc_calc(const void *l3, size_t udp_off, size_t icrc_off, uint32_t *icrc);

/* Write/read the ICRC in wire byte order */
void lh_icrc_store(void *dst, uint32_t icrc);
uint32_t lh_icrc_load(const void *src);

#endif /* LH_USER_ICRC_H */
