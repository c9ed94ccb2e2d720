// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reading a pinned map's entries: one lookup (under the value's spin lock
 * when the map has one), or every entry of a hash map, in batches where the
 * kernel has them, else key by key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "log.h"
#include "pins.h"

#define READ_BATCH 256

/* One lookup, under the value's spin lock when asked and the map has one */
int map_lookup(int fd, const void *key, void *val, __u64 elem_flags)
{
	if (!bpf_map_lookup_elem_flags(fd, key, val, elem_flags))
		return 0;
	if (!(elem_flags & BPF_F_LOCK) || errno != EINVAL)
		return -errno;
	/* a map without a spin lock in its BTF: a plain copy */
	return bpf_map_lookup_elem(fd, key, val) ? -errno : 0;
}

struct entry_buf {
	__u8 *keys, *vals;
	__u32 n, cap, ksz, vsz;
};

/* Room for more entries: memory for the entries there are, not for max_entries */
static int buf_grow(struct entry_buf *b, __u32 want)
{
	__u32 cap = b->cap ? b->cap : 64;
	__u8 *k, *v;

	if (want <= b->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	k = realloc(b->keys, (size_t)cap * b->ksz);
	if (!k)
		return -ENOMEM;
	b->keys = k;
	v = realloc(b->vals, (size_t)cap * b->vsz);
	if (!v)
		return -ENOMEM;
	b->vals = v;
	b->cap = cap;
	return 0;
}

/*
 * Batched walk: the kernel hands out whole hash buckets, so an entry deleted
 * or added meanwhile cannot make the walk start over (as get_next_key does
 * when its previous key is gone). With BPF_F_LOCK each value is copied
 * under its spin lock.
 */
static int read_batched(int fd, __u32 max, struct entry_buf *b, __u64 flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o, .elem_flags = flags);
	__u32 chunk = READ_BATCH, count;
	__u8 *in = calloc(2, b->ksz), *outb;
	bool first = true;
	int err = 0;

	if (!in)
		return -ENOMEM;
	outb = in + b->ksz;
	for (;;) {
		count = chunk;
		err = buf_grow(b, b->n + chunk);
		if (err)
			break;
		/* appended after the entries read so far */
		err = bpf_map_lookup_batch(fd, first ? NULL : in, outb,
					   b->keys + (size_t)b->n * b->ksz,
					   b->vals + (size_t)b->n * b->vsz, &count, &o) ?
			      -errno :
			      0;
		if (err == -ENOSPC && chunk < max) {
			/* a bucket larger than the chunk: take it in a bigger one */
			chunk *= 2;
			continue;
		}
		if (err && err != -ENOENT)
			break;
		b->n = b->n + count < max ? b->n + count : max;
		if (err == -ENOENT || !count || b->n >= max) {
			err = 0;
			break;
		}
		memcpy(in, outb, b->ksz);
		first = false;
	}
	free(in);
	return err;
}

/* Key by key (kernels or maps without batch lookups); stops at max entries */
static int read_iter(int fd, __u32 max, struct entry_buf *b, __u64 flags)
{
	__u8 *prev = NULL, *next = malloc(b->ksz);
	int err = 0;

	if (!next)
		return -ENOMEM;
	while (b->n < max && !bpf_map_get_next_key(fd, prev, next)) {
		err = buf_grow(b, b->n + 1);
		if (err)
			break;
		prev = b->keys + (size_t)b->n * b->ksz;
		memcpy(prev, next, b->ksz);
		if (map_lookup(fd, prev, b->vals + (size_t)b->n * b->vsz, flags))
			continue; /* deleted meanwhile: its slot is reused */
		b->n++;
	}
	free(next);
	return err;
}

int map_read_all(const struct pinned_map *pm, __u64 elem_flags, void **keys, void **vals,
		 __u32 *n)
{
	struct entry_buf b = { .ksz = pm->info.key_size, .vsz = pm->info.value_size };
	__u32 max = pm->info.max_entries;
	int err;

	*keys = *vals = NULL;
	*n = 0;
	err = read_batched(pm->fd, max, &b, elem_flags);
	if (err == -EINVAL && (elem_flags & BPF_F_LOCK)) {
		/* a map without a spin lock in its BTF */
		b.n = 0;
		elem_flags &= ~(__u64)BPF_F_LOCK;
		err = read_batched(pm->fd, max, &b, elem_flags);
	}
	if (err && err != -ENOMEM) {
		pr_debug("batched lookup of %s: %s: walking key by key\n", pm->info.name,
			 strerror(-err));
		b.n = 0;
		err = read_iter(pm->fd, max, &b, elem_flags);
	}
	if (err) {
		free(b.keys);
		free(b.vals);
		return err;
	}
	*keys = b.keys;
	*vals = b.vals;
	*n = b.n;
	return 0;
}
