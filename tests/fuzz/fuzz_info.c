/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fuzz harness's bpfmap_get_info() calls: every kind of *info_len (0, a
 * part of the struct, the struct, a newer caller's larger one with its tail
 * zero or not, over a page) against what the map was created as, in a
 * buffer of *info_len bytes followed by a canary: nothing past *info_len
 * is written, nothing at all on -E2BIG.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_internal.h"

#define CANARY 64
#define PAGE_LIMIT 4096u /* the largest struct the call accepts */

static void expected_info(const struct fuzz *f, struct bpfmap_info *i)
{
	memset(i, 0, sizeof(*i));
	i->type = f->type;
	i->key_size = f->ks;
	i->value_size = f->pvs;
	/* NO_COMMON_LRU rounds max_entries up to a multiple of the CPUs. */
	i->max_entries = f->flags & BPFMAP_F_NO_COMMON_LRU
				 ? (f->max_entries + f->ncpus - 1) / f->ncpus * f->ncpus
				 : f->max_entries;
	/* The fd's access flags are not the map's (as the kernel). */
	i->map_flags = f->flags & ~(BPFMAP_F_RDONLY | BPFMAP_F_WRONLY);
	/* The first 15 bytes, NUL-padded (bpfmap_create keeps no more). */
	if (f->name)
		strncpy(i->name, f->name, sizeof(i->name) - 1);
}

static void info_nulls(struct fuzz *f, uint8_t which)
{
	struct bpfmap_info info;
	uint32_t len = sizeof(info);
	int ret;

	switch (which % 3) {
	case 0:
		ret = bpfmap_get_info(NULL, &info, &len);
		break;
	case 1:
		ret = bpfmap_get_info(f->map, NULL, &len);
		break;
	default:
		ret = bpfmap_get_info(f->map, &info, NULL);
		break;
	}
	expect_err("get_info (a NULL argument)", ret, errno, ERR(EINVAL));
	if (len != sizeof(info))
		mismatch("get_info with a NULL argument changed *info_len to %u", len);
}

void op_get_info(struct fuzz *f, struct input *in)
{
	const uint32_t sz = sizeof(struct bpfmap_info);
	uint8_t b = u8(in), c = u8(in);
	struct bpfmap_info want;
	uint32_t len, len_io, room, filled;
	bool tail_dirty = false;
	uint8_t *buf, *before;
	int ret, e;

	switch (b % 8) {
	case 0:
		len = sz;
		break;
	case 1:
		len = 0;
		break;
	case 2: /* an older caller's smaller struct */
		len = 1 + c % (sz - 1);
		break;
	case 3: /* a newer caller's larger one, its tail zero, or not */
	case 4:
		len = sz + 1 + (uint32_t)c * 13u % (PAGE_LIMIT - sz);
		tail_dirty = b % 8 == 4;
		break;
	case 5: /* over a page */
		len = c & 1 ? PAGE_LIMIT + 1 + c : UINT32_MAX - c;
		break;
	case 6:
		len = PAGE_LIMIT;
		break;
	default:
		info_nulls(f, c);
		return;
	}
	/* A length over the page gets no buffer that long: the call must
	 * refuse it before it reads a byte of the tail. */
	room = (len > PAGE_LIMIT ? sz : len) + CANARY;
	buf = malloc(room);
	before = malloc(room);
	if (!buf || !before)
		abort();
	for (uint32_t i = 0; i < room; i++)
		buf[i] = i < sz ? (uint8_t)(0xa5 ^ i) : i < len ? 0 : 0x5a;
	if (tail_dirty)
		buf[sz + (uint32_t)c * 7u % (len - sz)] = (uint8_t)(1 + (b >> 3));
	memcpy(before, buf, room);
	len_io = len;
	ret = bpfmap_get_info(f->map, (struct bpfmap_info *)(void *)buf, &len_io);
	e = errno;
	trace("get_info info_len %u%s -> %d, info_len %u", len, tail_dirty ? " (tail dirty)" : "",
	      ret, len_io);
	if (len > PAGE_LIMIT || tail_dirty) {
		expect_ret("get_info", ret, e, -E2BIG);
		if (len_io != len || memcmp(buf, before, room))
			mismatch("get_info refused info_len %u but wrote (info_len now %u)", len,
				 len_io);
		goto out;
	}
	expect_ret("get_info", ret, e, 0);
	filled = len < sz ? len : sz;
	if (len_io != filled)
		mismatch("get_info set info_len %u for a struct of %u, expected %u", len_io, len,
			 filled);
	expected_info(f, &want);
	for (uint32_t i = 0; i < room; i++) {
		uint8_t w = i < filled ? ((const uint8_t *)&want)[i] : before[i];

		if (buf[i] != w)
			mismatch("get_info (info_len %u): byte %u is %#x, expected %#x%s", len, i,
				 buf[i], w, i >= len ? " (past info_len)" : "");
	}
out:
	free(buf);
	free(before);
}
