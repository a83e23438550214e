/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz harness's program view: lookups, bulk lookups, writes through
 * the pointer and deletes under it, inside read-side sections. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_internal.h"

/* ---- program view ---- */

/* bpfmap_lookup() of one key, checked; returns the pointer (NULL if absent). */
uint8_t *prog_lookup(struct fuzz *f, unsigned id)
{
	uint8_t *p;
	int e;

	errno = 0;
	p = bpfmap_lookup(f->map, f->key[id]);
	e = errno;
	if (!prog_can_read(f)) {
		if (p || e != EPERM)
			mismatch("bpfmap_lookup on a WRONLY_PROG map gave %p errno %d", (void *)p, e);
		return NULL;
	}
	if (!f->m.present[id]) {
		if (p || e != ENOENT)
			mismatch("bpfmap_lookup of absent key %u gave %p errno %d", id, (void *)p, e);
		return NULL;
	}
	if (!p)
		mismatch("bpfmap_lookup of present key %u gave NULL errno %d", id, e);
	check_value_in_place(f, id, p, "bpfmap_lookup");
	return p;
}

/* Write new bytes through a program-view pointer (the lock word excepted). */
static void prog_write(struct fuzz *f, unsigned id, uint8_t *p, uint16_t seed, bool locked)
{
	uint8_t *v = f->vbuf;
	struct bpfmap_spin_lock *l = has_lock(f) ? (void *)(p + f->lock_off) : NULL;

	gen_value(f, v, seed);
	if (locked && l)
		bpfmap_spin_lock(l);
	for (uint32_t i = 0; i < f->pvs; i++) {
		if (l && i >= (uint32_t)f->lock_off && i < f->lock_off + sizeof(*l))
			continue;
		p[i] = v[i];
	}
	if (locked && l)
		bpfmap_spin_unlock(l);
	if (f->percpu)
		model_store_slot(f, id, THIS_CPU, v);
	else
		model_store(f, id, v);
}

void op_prog_view(struct fuzz *f, struct input *in)
{
	uint8_t how = u8(in);
	uint32_t n = u8(in) % (MAX_BATCH + 1);
	uint8_t *keys = malloc(n ? (size_t)n * f->ks : 1);
	void **vals = malloc(n ? n * sizeof(void *) : 1);
	unsigned ids[MAX_BATCH];
	uint32_t want = 0;
	int ret, e;

	if (!keys || !vals)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = key_id(f, in);
		memcpy(keys + (size_t)i * f->ks, f->key[ids[i]], f->ks);
		want += f->m.present[ids[i]];
	}
	trace("program view: %u keys, how %#x", n, how);
	bpfmap_read_lock();
	if (how & 1)
		bpfmap_read_lock(); /* sections nest */
	ret = bpfmap_lookup_bulk(f->map, keys, n, vals);
	e = errno;
	if (!prog_can_read(f)) {
		if (n || ret)
			expect_err("lookup_bulk", ret, e, ERR(EPERM));
		goto out;
	}
	expect_ret("lookup_bulk", ret, e, (int)want);
	for (uint32_t i = 0; i < n; i++) {
		if (!f->m.present[ids[i]] != !vals[i])
			mismatch("lookup_bulk: key %u (present %d) gave %p", ids[i],
				 f->m.present[ids[i]], vals[i]);
		if (vals[i])
			check_value_in_place(f, ids[i], vals[i], "lookup_bulk");
	}
	if (n && (how & 2)) {
		/* A write through the pointer is seen by every later reader. */
		unsigned i = (how >> 4) % n;
		uint8_t *p = prog_lookup(f, ids[i]);

		if (p)
			prog_write(f, ids[i], p, u16(in), how & 4);
	}
	if (n && (how & 8)) {
		/* Delete a key while holding its pointer, then insert: the
		 * pointer stays readable until the section ends and never
		 * shows another key's data (the memory is not reused for one).
		 * Accepted too: the same key inserted again shows through it
		 * (the flat layout takes a deleted slot back for its own key,
		 * "an update in place as far as readers can tell"; the header
		 * says only "reused only after the section": reported). */
		unsigned i = (how >> 4) % n, id = ids[i];
		uint8_t *p = prog_lookup(f, id);

		if (p && can_write(f)) {
			uint8_t *old = malloc(f->vs);
			uint8_t *v = f->vbuf;

			if (!old)
				abort();
			memcpy(old, f->m.val[id], f->vs);
			trace("  delete key %u under its pointer %p, then insert", id, (void *)p);
			ret = bpfmap_delete_elem(f->map, f->key[id]);
			expect_ret("delete_elem (in a read-side section)", ret, errno, 0);
			model_remove(f, id);
			/* Refill: new keys, and the same key again. */
			for (unsigned k = 0, tries = u8(in) % 4; k <= tries; k++) {
				unsigned nid = k == tries ? id : key_id(f, in);

				bool was_new = !f->m.present[nid];

				gen_value(f, v, u16(in));
				ret = bpfmap_update_elem(f->map, f->key[nid], v, BPFMAP_ANY);
				trace("  update key %u -> %d", nid, ret);
				int want_upd = !f->lru && was_new && f->m.count >= f->max_entries
						       ? -E2BIG : 0;
				expect_ret("update_elem (in a read-side section)", ret, errno,
					   want_upd);
				if (!ret) {
					model_store(f, nid, v);
					check_lru_update(f, nid, was_new);
				}
			}
			uint8_t *copy = malloc(f->vs);

			if (!copy)
				abort();
			memcpy(copy, p, f->pvs);
			clear_lock(f, copy);
			if (memcmp(copy, old, f->pvs) &&
			    !(f->m.present[id] && !memcmp(copy, f->m.val[id], f->pvs)))
				mismatch("a deleted key's program-view value changed inside the "
					 "read-side section (memory reused under a reader)");
			free(copy);
			free(old);
		}
	}
out:
	if (how & 1)
		bpfmap_read_unlock();
	bpfmap_read_unlock();
	free(keys);
	free(vals);
}


/* ---- program-view writes and the per-CPU calls ---- */

/* bpfmap_update() of @id: value_size bytes, the calling CPU's slot of a
 * per-CPU map (an element it creates has the others zeroed); the per-CPU
 * flags are -EINVAL, as for a program; -EPERM by RDONLY_PROG only. */
static void prog_update(struct fuzz *f, struct input *in, unsigned id)
{
	uint64_t flags = decode_update_flags(f, in);
	/* RDONLY_PROG first, then the flags. */
	errset errs = prog_can_write(f) ? flags_errs(f, flags, 3ULL | BPFMAP_F_LOCK) : ERR(EPERM);
	uint8_t *v = f->sbuf; /* exactly value_size bytes */
	bool was_new = !f->m.present[id];
	int ret, e, want;

	gen_bytes(v, f->pvs, u16(in));
	ret = bpfmap_update(f->map, f->key[id], v, flags);
	e = errno;
	trace("  bpfmap_update key %u flags %#llx -> %d", id, (unsigned long long)flags, ret);
	if (errs) {
		expect_err("bpfmap_update", ret, e, errs);
		return;
	}
	want = update_want(f, id, flags);
	expect_ret("bpfmap_update", ret, e, want);
	if (want)
		return;
	if (f->percpu)
		model_store_slot(f, id, THIS_CPU, v);
	else
		model_store(f, id, v);
	check_lru_update(f, id, was_new);
}

static void prog_delete(struct fuzz *f, unsigned id)
{
	int ret = bpfmap_delete(f->map, f->key[id]), e = errno;

	trace("  bpfmap_delete key %u -> %d", id, ret);
	if (!prog_can_write(f)) {
		expect_err("bpfmap_delete", ret, e, ERR(EPERM));
		return;
	}
	expect_ret("bpfmap_delete", ret, e, f->m.present[id] ? 0 : -ENOENT);
	if (!ret)
		model_remove(f, id);
}

/* bpfmap_lookup_percpu(): the first error that applies, in the header's
 * order; else CPU @cpu's slot, which the syscall view shows at its place,
 * and writes through it land there. */
static void prog_lookup_percpu(struct fuzz *f, struct input *in, unsigned id)
{
	uint8_t b = u8(in);
	uint32_t cpu = pick_cpu(f, u8(in));
	int want, e;
	uint8_t *p;

	errno = 0;
	p = bpfmap_lookup_percpu(f->map, f->key[id], cpu);
	e = errno;
	trace("  bpfmap_lookup_percpu key %u cpu %u -> %p", id, cpu, (void *)p);
	want = !f->percpu ? EINVAL
	       : cpu >= f->ncpus ? ERANGE
	       : !prog_can_read(f) ? EPERM
	       : !f->m.present[id] ? ENOENT : 0;
	if (want) {
		if (p || e != want)
			mismatch("bpfmap_lookup_percpu(key %u, cpu %u) gave %p errno %d, expected "
				 "errno %d", id, cpu, (void *)p, e, want);
		return;
	}
	if (!p)
		mismatch("bpfmap_lookup_percpu(key %u, cpu %u) gave NULL errno %d", id, cpu, e);
	if ((uintptr_t)p % 8)
		mismatch("bpfmap_lookup_percpu: slot at %p is not 8-byte aligned", (void *)p);
	check_slot(f, id, cpu, p, "bpfmap_lookup_percpu");
	if (cpu == THIS_CPU && (b & 2)) {
		/* The calling CPU's slot is the one bpfmap_lookup() gives. */
		uint8_t *q = bpfmap_lookup(f->map, f->key[id]);

		if (q != p)
			mismatch("bpfmap_lookup gave %p, bpfmap_lookup_percpu(this CPU) %p",
				 (void *)q, (void *)p);
	}
	if (b & 1) {
		gen_bytes(f->sbuf, f->pvs, u16(in));
		memcpy(p, f->sbuf, f->pvs);
		model_store_slot(f, id, cpu, f->sbuf);
	}
}

/* bpfmap_percpu_add(): the calling CPU's first 8 bytes, as a uint64_t. */
static void prog_percpu_add(struct fuzz *f, struct input *in, unsigned id)
{
	uint64_t delta = u16(in) * 0x9e3779b97f4a7c15ull;
	errset errs = 0;
	int ret, e;

	delta ^= (uint64_t)u8(in) << 56;
	ret = bpfmap_percpu_add(f->map, f->key[id], delta);
	e = errno;
	trace("  bpfmap_percpu_add key %u delta %#llx -> %d", id, (unsigned long long)delta,
	      ret);
	/* The map's kind first, then RDONLY_PROG (the header's order). */
	if (!f->percpu || f->pvs < 8)
		errs = ERR(EINVAL);
	else if (!prog_can_write(f))
		errs = ERR(EPERM);
	if (errs) {
		expect_err("bpfmap_percpu_add", ret, e, errs);
		return;
	}
	expect_ret("bpfmap_percpu_add", ret, e, f->m.present[id] ? 0 : -ENOENT);
	if (!ret) {
		uint8_t *s = model_slot(f, id, THIS_CPU);
		uint64_t c;

		memcpy(&c, s, sizeof(c));
		c += delta;
		memcpy(s, &c, sizeof(c));
	}
}

/* An update of a present key is in place (include/bpfmap.h): a pointer
 * taken before it shows the new bytes, from either view's update. */
static void prog_update_in_place(struct fuzz *f, struct input *in, unsigned id)
{
	uint8_t b = u8(in);
	uint8_t *p = prog_lookup(f, id);

	if (!p)
		return;
	if (b & 1) {
		prog_update(f, in, id);
	} else {
		uint64_t flags = BPFMAP_EXIST;
		uint8_t *v = f->vbuf;
		uint32_t n = f->vs;
		int ret;

		if (f->percpu && (b & 2)) {
			flags |= BPFMAP_F_CPU | (uint64_t)((b >> 2) % f->ncpus) << 32;
			v = f->sbuf;
			n = f->pvs;
		}
		gen_bytes(v, n, u16(in));
		ret = bpfmap_update_elem(f->map, f->key[id], v, flags);
		trace("  update_elem key %u flags %#llx -> %d", id, (unsigned long long)flags, ret);
		expect_ret("update_elem (in place)", ret, errno, can_write(f) ? 0 : -EPERM);
		if (!ret)
			model_update(f, id, flags, v);
	}
	if (f->m.present[id])
		check_value_in_place(f, id, p, "a pointer from before an update");
}

/* The program view's writes and per-CPU calls, as a program makes them:
 * inside a read-side section (one call in eight outside one, which the
 * header allows). */
void op_prog_write(struct fuzz *f, struct input *in)
{
	uint8_t how = u8(in);
	unsigned id = key_id(f, in);
	bool section = (how & 0x38) != 0x38;

	trace("program-view write %u on key %u%s", how % 5, id, section ? "" : " (no section)");
	if (section)
		bpfmap_read_lock();
	switch (how % 5) {
	case 0:
		prog_update(f, in, id);
		break;
	case 1:
		prog_delete(f, id);
		break;
	case 2:
		prog_lookup_percpu(f, in, id);
		break;
	case 3:
		prog_percpu_add(f, in, id);
		break;
	default:
		prog_update_in_place(f, in, id);
		break;
	}
	if (section)
		bpfmap_read_unlock();
}
