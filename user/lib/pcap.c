// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Classic pcap file reader and writer. */
#include <errno.h>
#include <string.h>

#include "pcap.h"

#define PCAP_MAGIC_USEC 0xa1b2c3d4u
#define PCAP_MAGIC_NSEC 0xa1b23c4du
#define PCAP_SNAPLEN 262144

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t major;
	uint16_t minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct pcap_rec_hdr {
	uint32_t sec;
	uint32_t frac; /* usec or nsec */
	uint32_t caplen;
	uint32_t len;
};

static uint32_t sw32(const struct lh_pcap *p, uint32_t v)
{
	return p->swapped ? __builtin_bswap32(v) : v;
}

int lh_pcap_create(struct lh_pcap *p, const char *path, uint32_t linktype)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_NSEC,
		.major = 2,
		.minor = 4,
		.snaplen = PCAP_SNAPLEN,
		.linktype = linktype,
	};

	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "wb");
	if (!p->f)
		return -errno;
	p->linktype = linktype;
	p->snaplen = PCAP_SNAPLEN;
	p->nsec = 1;
	p->writing = 1;
	if (fwrite(&h, sizeof(h), 1, p->f) != 1) {
		fclose(p->f);
		p->f = NULL;
		return -EIO;
	}
	return 0;
}

int lh_pcap_write(struct lh_pcap *p, const void *data, size_t len, uint64_t ts_ns)
{
	struct pcap_rec_hdr r = {
		.sec = (uint32_t)(ts_ns / 1000000000u),
		.frac = (uint32_t)(ts_ns % 1000000000u),
		.caplen = (uint32_t)len,
		.len = (uint32_t)len,
	};

	if (len > p->snaplen)
		return -EMSGSIZE;
	if (fwrite(&r, sizeof(r), 1, p->f) != 1 || fwrite(data, 1, len, p->f) != len)
		return -EIO;
	return 0;
}

int lh_pcap_open(struct lh_pcap *p, const char *path)
{
	struct pcap_file_hdr h;

	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "rb");
	if (!p->f)
		return -errno;
	if (fread(&h, sizeof(h), 1, p->f) != 1)
		goto bad;
	if (h.magic == PCAP_MAGIC_USEC || h.magic == PCAP_MAGIC_NSEC) {
		p->swapped = 0;
	} else if (__builtin_bswap32(h.magic) == PCAP_MAGIC_USEC ||
		   __builtin_bswap32(h.magic) == PCAP_MAGIC_NSEC) {
		p->swapped = 1;
	} else {
		goto bad;
	}
	p->nsec = sw32(p, h.magic) == PCAP_MAGIC_NSEC;
	p->snaplen = sw32(p, h.snaplen);
	p->linktype = sw32(p, h.linktype) & 0x0fffffff;
	return 0;
bad:
	fclose(p->f);
	p->f = NULL;
	return -EPROTO;
}

int lh_pcap_next(struct lh_pcap *p, void *buf, size_t cap, size_t *len, size_t *orig_len,
		 uint64_t *ts_ns)
{
	struct pcap_rec_hdr r;
	size_t caplen, keep;

	if (fread(&r, sizeof(r), 1, p->f) != 1)
		return feof(p->f) ? 0 : -EIO;
	caplen = sw32(p, r.caplen);
	if (caplen > PCAP_SNAPLEN)
		return -EPROTO;
	keep = caplen < cap ? caplen : cap;
	if (fread(buf, 1, keep, p->f) != keep)
		return -EIO;
	if (caplen > keep && fseek(p->f, (long)(caplen - keep), SEEK_CUR))
		return -EIO;
	*len = keep;
	if (orig_len)
		*orig_len = sw32(p, r.len);
	if (ts_ns)
		*ts_ns = (uint64_t)sw32(p, r.sec) * 1000000000u +
			 (uint64_t)sw32(p, r.frac) * (p->nsec ? 1 : 1000);
	return 1;
}

void lh_pcap_close(struct lh_pcap *p)
{
	if (p->f)
		fclose(p->f);
	p->f = NULL;
}
