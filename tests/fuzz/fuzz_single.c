/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz harness's single-element syscall-view operations, get_next_key
 * walks and NULL arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_internal.h"

/* ---- update flags ---- */

#define UPDATE_TAKES (3ULL | BPFMAP_F_LOCK | BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS)

/* Flags for an update: a mode (3 is refused), F_LOCK, now and then an
 * unknown bit (5-26: above them the CPU bits), and the per-CPU flags.
 * Three bytes. */
uint64_t decode_update_flags(const struct fuzz *f, struct input *in)
{
	uint8_t b = u8(in), c = u8(in), d = u8(in);
	uint64_t flags = b & 3;

	if (b & 4)
		flags |= BPFMAP_F_LOCK;
	if ((b & 0xc0) == 0xc0)
		flags |= 1ULL << (5 + (b >> 3 & 7) * 3);
	return flags | gen_cpu_flags(f, c, d);
}

/* The model after an update with @flags of @v (a slot, or the whole value)
 * that returned 0. */
void model_update(struct fuzz *f, unsigned id, uint64_t flags, const uint8_t *v)
{
	if (flags & BPFMAP_F_CPU)
		model_store_slot(f, id, (uint32_t)(flags >> 32), v);
	else if (flags & BPFMAP_F_ALL_CPUS)
		model_store_all_cpus(f, id, v);
	else
		model_store(f, id, v);
}

/* An update's answer from the model, the flags already found valid. */
int update_want(const struct fuzz *f, unsigned id, uint64_t flags)
{
	unsigned mode = flags & 3;

	if (f->m.present[id])
		return mode == BPFMAP_NOEXIST ? -EEXIST : 0;
	if (mode == BPFMAP_EXIST)
		return -ENOENT;
	return !f->lru && f->m.count >= f->max_entries ? -E2BIG : 0;
}

/* ---- single-element operations ---- */

void op_update(struct fuzz *f, struct input *in)
{
	unsigned id = key_id(f, in);
	uint64_t flags = decode_update_flags(f, in);
	/* One slot in a buffer of exactly its size, so ASan sees an overrun. */
	uint8_t *v = one_slot(flags) ? f->sbuf : f->vbuf;
	/* The access check first, then the flags (README, "The API and its errors"). */
	errset errs = can_write(f) ? flags_errs(f, flags, UPDATE_TAKES) : ERR(EPERM);
	int ret, want;

	gen_bytes(v, one_slot(flags) ? f->pvs : f->vs, u16(in));
	trace("update key %u flags %#llx", id, (unsigned long long)flags);
	ret = bpfmap_update_elem(f->map, f->key[id], v, flags);
	int e = errno;

	if (errs) {
		expect_err("update_elem", ret, e, errs);
		return;
	}
	bool was_new = !f->m.present[id];

	want = update_want(f, id, flags);
	expect_ret("update_elem", ret, e, want);
	if (!want) {
		model_update(f, id, flags, v);
		check_lru_update(f, id, was_new);
	}
}

void op_lookup(struct fuzz *f, struct input *in)
{
	unsigned id = key_id(f, in);
	uint8_t b = u8(in), how = b % 4;
	/* 1, 2: with the per-CPU flags, right or wrong; 2 also F_LOCK;
	 * 3: one other flag bit, of the low half (the CPU's above). */
	uint64_t flags = how == 3 ? 1ULL << (b >> 2) % 32 : how == 2 ? BPFMAP_F_LOCK : 0;
	const uint8_t *key = f->key[id];
	uint8_t *out;
	errset errs;
	int ret, e;

	if (how == 1 || how == 2) {
		uint8_t c = u8(in);

		flags |= gen_cpu_flags(f, c, u8(in));
	}
	/* Bits no kernel takes here first (Linux 6.18's order, which looks at
	 * the flags before the access), then the access, then the flags. */
	if (((uint32_t)flags & ~(BPFMAP_F_LOCK | (f->percpu ? BPFMAP_F_CPU : 0))) ||
	    (!(flags & BPFMAP_F_CPU) && (flags >> 32)))
		errs = ERR(EINVAL);
	else if (!can_read(f))
		errs = ERR(EPERM);
	else
		errs = flags_errs(f, flags, BPFMAP_F_LOCK | BPFMAP_F_CPU);
	out = one_slot(flags) ? f->sbuf : f->vbuf;
	/* Bit 2 of the others: the value into a buffer that overlaps the
	 * key, starting from vs - 1 bytes before it to its last byte. */
	if (how < 3 && (b & 4) && !one_slot(flags)) {
		uint32_t d = (uint32_t)(b >> 3) * 2654435761u % (f->ks + f->vs - 1);

		memcpy(f->abuf + f->vs, f->key[id], f->ks);
		key = f->abuf + f->vs;
		out = f->abuf + 1 + d;
	}
	trace("lookup key %u how %u flags %#llx%s", id, how, (unsigned long long)flags,
	      key != f->key[id] ? " overlapping" : "");
	memset(f->vbuf, 0xee, f->vs);
	memset(f->sbuf, 0xee, f->pvs);
	if (how == 0)
		ret = bpfmap_lookup_elem(f->map, key, out);
	else
		ret = bpfmap_lookup_elem_flags(f->map, key, out, flags);
	e = errno;
	if (out != f->vbuf && out != f->sbuf && !ret) /* the whole value */
		memcpy(f->vbuf, out, f->vs);
	if (errs) {
		expect_err("lookup_elem", ret, e, errs);
		return;
	}
	expect_ret("lookup_elem", ret, e, f->m.present[id] ? 0 : -ENOENT);
	if (!ret && (flags & BPFMAP_F_CPU))
		check_slot(f, id, (uint32_t)(flags >> 32), f->sbuf, "lookup_elem F_CPU");
	else if (!ret)
		check_value(f, id, f->vbuf, "lookup_elem");
}

void op_delete(struct fuzz *f, struct input *in, bool with_lookup)
{
	/* how 3-6: a call of lookup_and_delete_elem_flags: flags 0, F_LOCK,
	 * one other bit, or the per-CPU flags (which it never takes). */
	unsigned id = key_id(f, in);
	uint8_t b = u8(in);
	unsigned how = b % 8;
	uint64_t flags = how == 4 ? BPFMAP_F_LOCK : how == 5 ? 1ULL << (b * 7 % 64) : 0;
	const char *what = with_lookup ? "lookup_and_delete_elem" : "delete_elem";
	errset errs = 0;
	int ret, e;

	if (how == 6) {
		uint8_t c = u8(in);

		flags = gen_cpu_flags(f, c, u8(in));
	}
	trace("%s key %u how %u flags %#llx", what, id, how, (unsigned long long)flags);
	if (with_lookup && how >= 3)
		ret = bpfmap_lookup_and_delete_elem_flags(f->map, f->key[id], f->vbuf, flags);
	else if (with_lookup)
		ret = bpfmap_lookup_and_delete_elem(f->map, f->key[id], f->vbuf);
	else
		ret = bpfmap_delete_elem(f->map, f->key[id]);
	e = errno;
	if (!with_lookup || how < 3)
		flags = 0;
	/* lookup_and_delete: any bit but F_LOCK first, then the access,
	 * then F_LOCK without a lock. */
	if (flags & ~(uint64_t)BPFMAP_F_LOCK)
		errs = ERR(EINVAL);
	else if (!can_write(f) || (with_lookup && !can_read(f)))
		errs = ERR(EPERM);
	else
		errs = flags_errs(f, flags, BPFMAP_F_LOCK);
	if (errs) {
		expect_err(what, ret, e, errs);
		return;
	}
	expect_ret(what, ret, e, f->m.present[id] ? 0 : -ENOENT);
	if (ret)
		return;
	if (with_lookup)
		check_value(f, id, f->vbuf, what);
	model_remove(f, id);
}

/* ---- get_next_key ---- */

/* A get_next_key walk from @from (NULL: the start) to -ENOENT: the ids it
 * returned, in order, into @ids; each must be present, none twice. */
static unsigned walk_ids(struct fuzz *f, const void *from, unsigned *ids)
{
	bool seen[MAX_KEYS] = {0};
	const void *cur = from;
	unsigned n = 0;

	for (;;) {
		int ret = bpfmap_get_next_key(f->map, cur, f->kbuf), e = errno;

		if (ret == -ENOENT && e == ENOENT)
			break;
		expect_ret("get_next_key", ret, e, 0);
		unsigned id = id_of_key(f, f->kbuf, "get_next_key");
		if (!f->m.present[id])
			mismatch("get_next_key walk returned absent key %u", id);
		if (seen[id])
			mismatch("get_next_key walk returned key %u twice", id);
		seen[id] = true;
		ids[n++] = id;
		cur = f->key[id];
	}
	return n;
}

/* A full walk from NULL (or from an absent key): every present key once. */
void op_get_next_key(struct fuzz *f, struct input *in)
{
	uint8_t how = u8(in);
	unsigned start = key_id(f, in), ids[MAX_KEYS], found;
	uint8_t *next = f->kbuf;
	const void *cur = NULL;
	int ret, e;

	trace("get_next_key walk how %u start %u", how, start);
	if (!can_read(f)) {
		ret = bpfmap_get_next_key(f->map, NULL, next);
		expect_err("get_next_key", ret, errno, ERR(EPERM));
		return;
	}
	if ((how & 1) && !f->m.present[start] && f->rhash) {
		/* RHASH: an absent key resumes at its place in the map's order
		 * (README): the walk from it is a suffix of the walk from NULL. */
		unsigned suffix[MAX_KEYS], m;

		found = walk_ids(f, NULL, ids);
		m = walk_ids(f, f->key[start], suffix);
		if (m > found || memcmp(ids + found - m, suffix, m * sizeof(*suffix)))
			mismatch("get_next_key from absent key %u: %u keys, not the end of the "
				 "walk from the first key", start, m);
	} else {
		if ((how & 1) && !f->m.present[start]) {
			/* An absent key starts from the first key, as NULL does. */
			uint8_t *first = malloc(f->ks);

			if (!first)
				abort();
			ret = bpfmap_get_next_key(f->map, NULL, first);
			e = errno;
			expect_ret("get_next_key(NULL)", ret, e, f->m.count ? 0 : -ENOENT);
			ret = bpfmap_get_next_key(f->map, f->key[start], next);
			e = errno;
			expect_ret("get_next_key(absent key)", ret, e, f->m.count ? 0 : -ENOENT);
			if (!ret && memcmp(first, next, f->ks))
				mismatch("get_next_key(absent key) did not restart at the first key");
			free(first);
			cur = f->key[start];
		} else if ((how & 2) && f->m.present[start]) {
			/* From a present key: the next one is another present key. */
			ret = bpfmap_get_next_key(f->map, f->key[start], next);
			e = errno;
			if (ret == -ENOENT && e == ENOENT)
				return;
			expect_ret("get_next_key(present key)", ret, e, 0);
			unsigned id = id_of_key(f, next, "get_next_key");
			if (id == start || !f->m.present[id])
				mismatch("get_next_key(key %u) gave key %u (present %d)", start, id,
					 f->m.present[id]);
			return;
		}
		found = walk_ids(f, cur, ids);
	}
	if (found != f->m.count)
		mismatch("get_next_key walk found %u keys, the map holds %u", found, f->m.count);
}


void op_null_args(struct fuzz *f, struct input *in)
{
	uint8_t which = u8(in) % 22;
	const void *k = f->key[key_id(f, in)];
	void *v = f->vbuf;
	uint32_t count = 1, cur = 0;
	/* A NULL map, key, value, next_key or count is -EINVAL before
	 * anything else; a batch's NULL buffers come after the access check
	 * (-EPERM), as the kernel's -EFAULT does (README). */
	errset inval = ERR(EINVAL);
	errset ro = can_read(f) ? inval : ERR(EPERM);
	errset wo = can_write(f) ? inval : ERR(EPERM);
	errset rw = can_read(f) && can_write(f) ? inval : ERR(EPERM);
	void *p;
	int ret;

	trace("NULL argument case %u", which);
	switch (which) {
	case 0:
		ret = bpfmap_lookup_elem(NULL, k, v);
		expect_err("lookup_elem(NULL map)", ret, errno, ERR(EINVAL));
		break;
	case 1:
		ret = bpfmap_lookup_elem(f->map, NULL, v);
		expect_err("lookup_elem(NULL key)", ret, errno, inval);
		break;
	case 2:
		ret = bpfmap_lookup_elem(f->map, k, NULL);
		expect_err("lookup_elem(NULL value)", ret, errno, inval);
		break;
	case 3:
		ret = bpfmap_update_elem(f->map, NULL, v, 0);
		expect_err("update_elem(NULL key)", ret, errno, inval);
		break;
	case 4:
		ret = bpfmap_update_elem(f->map, k, NULL, 0);
		expect_err("update_elem(NULL value)", ret, errno, inval);
		break;
	case 5:
		ret = bpfmap_delete_elem(f->map, NULL);
		expect_err("delete_elem(NULL key)", ret, errno, inval);
		break;
	case 6:
		ret = bpfmap_lookup_and_delete_elem(f->map, k, NULL);
		expect_err("lookup_and_delete_elem(NULL value)", ret, errno, inval);
		break;
	case 7:
		ret = bpfmap_get_next_key(f->map, k, NULL);
		expect_err("get_next_key(NULL next_key)", ret, errno, inval);
		break;
	case 8:
		ret = bpfmap_lookup_batch(f->map, NULL, NULL, f->kbuf, v, &count, NULL);
		expect_err("lookup_batch(NULL out_batch)", ret, errno, ro);
		break;
	case 9:
		ret = bpfmap_lookup_batch(f->map, NULL, &cur, f->kbuf, v, NULL, NULL);
		expect_err("lookup_batch(NULL count)", ret, errno, inval);
		break;
	case 10:
		ret = bpfmap_lookup_and_delete_batch(f->map, NULL, &cur, NULL, v, &count, NULL);
		expect_err("lookup_and_delete_batch(NULL keys)", ret, errno, rw);
		break;
	case 11:
		ret = bpfmap_update_batch(f->map, k, NULL, &count, NULL);
		expect_err("update_batch(NULL values)", ret, errno, wo);
		break;
	case 12:
		ret = bpfmap_delete_batch(f->map, NULL, &count, NULL);
		expect_err("delete_batch(NULL keys)", ret, errno, wo);
		break;
	case 13:
		errno = 0;
		if (bpfmap_lookup(f->map, NULL) || errno != EINVAL)
			mismatch("bpfmap_lookup(NULL key) did not fail with EINVAL");
		break;
	case 14:
		ret = bpfmap_lookup_bulk(f->map, NULL, 1, (void **)&v);
		expect_err("lookup_bulk(NULL keys)", ret, errno, inval);
		break;
	case 15:
		ret = bpfmap_update_batch(f->map, NULL, v, &count, NULL);
		expect_err("update_batch(NULL keys)", ret, errno, wo);
		break;
	case 16:
		ret = bpfmap_update(f->map, NULL, v, 0);
		expect_err("bpfmap_update(NULL key)", ret, errno, inval);
		break;
	case 17:
		ret = bpfmap_update(f->map, k, NULL, 0);
		expect_err("bpfmap_update(NULL value)", ret, errno, inval);
		break;
	case 18:
		ret = bpfmap_delete(f->map, NULL);
		expect_err("bpfmap_delete(NULL key)", ret, errno, inval);
		break;
	case 19:
		ret = bpfmap_percpu_add(f->map, NULL, 1);
		expect_err("bpfmap_percpu_add(NULL key)", ret, errno, inval);
		break;
	case 20:
		ret = bpfmap_percpu_add(NULL, k, 1);
		expect_err("bpfmap_percpu_add(NULL map)", ret, errno, ERR(EINVAL));
		break;
	default: /* EINVAL is the first of its errors */
		errno = 0;
		p = bpfmap_lookup_percpu(which & 1 ? f->map : NULL, which & 1 ? NULL : k, 0);
		if (p || errno != EINVAL)
			mismatch("bpfmap_lookup_percpu with a NULL argument gave %p errno %d", p,
				 errno);
		break;
	}
}

