// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* RoCEv2 ICRC in user space: slicing-by-8 CRC-32 plus the A17.8 masking. */
#include <errno.h>
#include <string.h>
#include <linux/types.h>

#include "icrc.h"
#include "lh_crc32_table.h" /* generated into $(O)/gen */
#include "rocev2.h"

#define IPV4_HDR_MIN 20
#define IPV6_HDR_LEN 40
#define UDP_HDR_LEN 8
/* Longest IP header plus UDP plus BTH we mask: IPv6 with a few extension headers */
#define ICRC_MASKED_MAX 512

uint32_t lh_crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ lh_crc32_tab[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo = le32toh(lo) ^ crc;
		hi = le32toh(hi);
		crc = lh_crc32_tab[7][lo & 0xff] ^ lh_crc32_tab[6][(lo >> 8) & 0xff] ^
		      lh_crc32_tab[5][(lo >> 16) & 0xff] ^ lh_crc32_tab[4][lo >> 24] ^
		      lh_crc32_tab[3][hi & 0xff] ^ lh_crc32_tab[2][(hi >> 8) & 0xff] ^
		      lh_crc32_tab[1][(hi >> 16) & 0xff] ^ lh_crc32_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ lh_crc32_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

uint32_t lh_crc32(const void *buf, size_t len)
{
	return ~lh_crc32_update(0xffffffffu, buf, len);
}

int lh_icrc_calc(const void *l3, size_t udp_off, size_t icrc_off, uint32_t *icrc)
{
	static const uint8_t pseudo_lrh[ROCE_ICRC_PSEUDO_LRH_LEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	const uint8_t *pkt = l3;
	size_t hdr_len = udp_off + UDP_HDR_LEN + sizeof(struct roce_bth);
	uint8_t hdr[ICRC_MASKED_MAX];
	uint32_t crc;

	if (hdr_len > sizeof(hdr) || icrc_off < hdr_len)
		return -EINVAL;
	memcpy(hdr, pkt, hdr_len);
	switch (hdr[0] >> 4) {
	case 4:
		if (udp_off < IPV4_HDR_MIN)
			return -EINVAL;
		hdr[1] = 0xff; /* TOS (DSCP/ECN) */
		hdr[8] = 0xff; /* TTL */
		hdr[10] = 0xff; /* header checksum */
		hdr[11] = 0xff;
		break;
	case 6:
		if (udp_off < IPV6_HDR_LEN)
			return -EINVAL;
		hdr[0] |= 0x0f; /* traffic class and flow label */
		hdr[1] = 0xff;
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff; /* hop limit */
		break;
	default:
		return -EINVAL;
	}
	hdr[udp_off + 6] = 0xff; /* UDP checksum */
	hdr[udp_off + 7] = 0xff;
	hdr[udp_off + UDP_HDR_LEN + BTH_BYTE4_OFF] = 0xff; /* FECN, BECN, resv6 */

	crc = lh_crc32_update(0xffffffffu, pseudo_lrh, sizeof(pseudo_lrh));
	crc = lh_crc32_update(crc, hdr, hdr_len);
	crc = lh_crc32_update(crc, pkt + hdr_len, icrc_off - hdr_len);
	*icrc = ~crc;
	return 0;
}

void lh_icrc_store(void *dst, uint32_t icrc)
{
	uint32_t le = htole32(icrc);

	memcpy(dst, &le, sizeof(le));
}

uint32_t lh_icrc_load(const void *src)
{
	uint32_t le;

	memcpy(&le, src, sizeof(le));
	return le32toh(le);
}
