/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz harness's batch operations: cursor walks, update and delete
 * batches. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_internal.h"

/* ---- batch operations ---- */

/* Batch options as a caller may pass them: NULL, ours, or a struct from an
 * older (shorter) or newer (longer) header, well-formed or not. */
struct batch_opts_choice {
	struct {
		struct bpfmap_batch_opts opts;
		uint64_t newer_field; /* a field from a newer header */
	} buf;
	const struct bpfmap_batch_opts *p; /* NULL or &buf.opts */
	uint64_t ef;  /* elem_flags as the library reads them (0 past sz) */
	errset errs;  /* what the options alone make the call answer: one errno */
	uint32_t vstride; /* bytes per value: one slot with the per-CPU flags */
};

/* Batch options from two bytes (@b, and @cpu_b with @cpu_byte for the
 * per-CPU flags).  @writes: update_batch or delete_batch, which ignore
 * opts.flags as the kernel's generic batch code does (the lookup batches
 * refuse it); @takes: the elem_flags bits the call takes (update_batch:
 * EXIST, as bpf-next's BPF_F_CPU series; F_CPU for lookup_batch, F_CPU
 * and F_ALL_CPUS for update_batch). */
static void decode_batch_opts(const struct fuzz *f, uint8_t b, uint8_t cpu_b, uint8_t cpu_byte,
			      bool writes, uint64_t takes, struct batch_opts_choice *c)
{
	errset errs = 0, flags_bad = 0;

	memset(c, 0, sizeof(*c));
	c->buf.opts.sz = sizeof(c->buf.opts);
	c->p = &c->buf.opts;
	switch (b & 7) {
	case 0:
		c->p = NULL;
		break;
	case 1:
		break;
	case 2:
	case 3:
		c->buf.opts.elem_flags = BPFMAP_F_LOCK;
		break;
	case 4: /* the update modes: only update_batch's EXIST */
		c->buf.opts.elem_flags = (b >> 3 & 1) ? BPFMAP_NOEXIST : BPFMAP_EXIST;
		break;
	case 5:
		c->buf.opts.flags = 1ULL << (b >> 3 & 63);
		if (!writes)
			flags_bad = ERR(EINVAL);
		break;
	case 6: /* an older header's struct: sz ends before elem_flags, whose
		 * bytes here must not be read; or a sz too small to hold sz */
		c->buf.opts.sz = offsetof(struct bpfmap_batch_opts, elem_flags);
		c->buf.opts.elem_flags = BPFMAP_EXIST;
		if (b & 0x10) {
			c->buf.opts.sz = 4;
			errs |= ERR(EINVAL);
		}
		break;
	default: /* a newer header's struct: unknown trailing bytes must be 0 */
		c->buf.opts.sz = sizeof(c->buf);
		c->buf.newer_field = b >> 3 & 1;
		if (c->buf.newer_field)
			errs |= ERR(EINVAL);
		break;
	}
	if (c->p && (b & 7) != 6) {
		c->buf.opts.elem_flags |= gen_cpu_flags(f, cpu_b, cpu_byte);
		c->ef = c->buf.opts.elem_flags;
	}
	/* The options' form, then elem_flags, then flags (the kernel checks
	 * elem_flags first: -ERANGE before flags' -EINVAL). */
	c->errs = errs ? errs : flags_errs(f, c->ef, takes);
	if (!c->errs)
		c->errs = flags_bad;
	c->vstride = one_slot(c->ef) ? f->pvs : f->vs;
}

/* Check the elements one batch call returned and update the model. */
static void check_batch_elems(struct fuzz *f, const struct batch_opts_choice *c,
			      const uint8_t *keys, const uint8_t *vals, uint32_t n, bool *returned,
			      bool do_delete, const char *what)
{
	for (uint32_t i = 0; i < n; i++) {
		unsigned id = id_of_key(f, keys + (size_t)i * f->ks, what);

		if (!f->m.present[id])
			mismatch("%s returned absent key %u", what, id);
		if (returned[id])
			mismatch("%s returned key %u twice in one walk", what, id);
		returned[id] = true;
		if (one_slot(c->ef))
			check_slot(f, id, (uint32_t)(c->ef >> 32), vals + (size_t)i * c->vstride,
				   what);
		else
			check_value(f, id, vals + (size_t)i * f->vs, what);
		if (do_delete)
			model_remove(f, id);
	}
}

/* Present keys not yet returned by this walk. */
static uint32_t remaining(const struct fuzz *f, const bool *returned)
{
	uint32_t n = 0;

	for (unsigned id = 0; id < f->nkeys; id++)
		n += f->m.present[id] && !returned[id];
	return n;
}

static uint32_t batch_capacity(struct input *in, unsigned call)
{
	uint8_t c;

	if (!more(in) || call > 60)
		return BIG_CAP; /* holds everything: ends the walk */
	c = u8(in);
	return c & 0x80 ? (c & 0x7f) % 72 : c & 7;
}

/* One call of a batch walk; returns true when the walk is over. */
static bool batch_call(struct fuzz *f, bool do_delete, const struct batch_opts_choice *c,
		       uint8_t *in_cur, bool first, uint8_t *out_cur, uint32_t cap,
		       bool *returned, int *ret_out)
{
	const char *what = do_delete ? "lookup_and_delete_batch" : "lookup_batch";
	uint8_t *keys = malloc(cap ? (size_t)cap * f->ks : 1);
	uint8_t *vals = malloc(cap ? (size_t)cap * c->vstride : 1);
	uint32_t count = cap, before = remaining(f, returned);
	uint8_t *out_before = malloc(f->cs);
	bool over = false;
	int ret, e;

	if (!keys || !vals || !out_before)
		abort();
	memset(out_cur, 0xde, f->cs);
	memcpy(out_before, out_cur, f->cs);
	if (do_delete)
		ret = bpfmap_lookup_and_delete_batch(f->map, first ? NULL : in_cur, out_cur, keys,
						     vals, &count, c->p);
	else
		ret = bpfmap_lookup_batch(f->map, first ? NULL : in_cur, out_cur, keys, vals,
					  &count, c->p);
	e = errno;
	*ret_out = ret;
	trace("  %s cap %u -> %d count %u (remaining %u)", what, cap, ret, count, before);
	check_errno_matches(what, ret, e);
	if (cap == 0) {
		/* Nothing to do, nothing touched. */
		expect_ret(what, ret, e, 0);
		if (count || memcmp(out_cur, out_before, f->cs))
			mismatch("%s with count 0 changed count (%u) or the cursor", what, count);
		over = true; /* the caller decides whether to go on */
		goto out;
	}
	if (count > cap)
		mismatch("%s copied %u elements into room for %u", what, count, cap);
	if (f->rhash) {
		/* Element by element: 0 when the room is full, whatever
		 * follows; else the end, with the last elements. */
		if (ret == 0 && count != cap)
			mismatch("%s returned 0 with %u elements in room for %u", what, count, cap);
		if (ret != 0 && ret != -ENOENT)
			mismatch("%s returned %d", what, ret);
		over = ret == -ENOENT;
	} else switch (ret) {
	case 0:
		/* More follows: the next bucket did not fit in what was left. */
		if (count == 0)
			mismatch("%s returned 0 having copied nothing (ENOSPC expected)", what);
		if (before < cap + 1)
			mismatch("%s stopped at %u of room %u with only %u elements left", what,
				 count, cap, before);
		break;
	case -ENOSPC:
		if (count)
			mismatch("%s returned -ENOSPC with count %u", what, count);
		if (before < cap + 1)
			mismatch("%s returned -ENOSPC for room %u with %u elements left", what,
				 cap, before);
		break;
	case -ENOENT:
		over = true;
		break;
	default:
		mismatch("%s returned %d", what, ret);
	}
	check_batch_elems(f, c, keys, vals, count, returned, do_delete, what);
	if (ret == -ENOENT && remaining(f, returned))
		mismatch("%s reached the end (-ENOENT) with %u elements never returned", what,
			 remaining(f, returned));
out:
	free(keys);
	free(vals);
	free(out_before);
	return over && ret == -ENOENT;
}

/* One lookup(_and_delete)_batch call with room for *count elements (in
 * buffers of exactly that size, so that ASan sees any overrun); errno of
 * the call in *err. */
static int batch_call_once(struct fuzz *f, bool do_delete, const struct batch_opts_choice *c,
			   uint8_t *in_cur, uint8_t *out_cur, uint32_t *count, int *err)
{
	uint8_t *keys = malloc((size_t)*count * f->ks);
	uint8_t *vals = malloc((size_t)*count * c->vstride);
	int ret;

	if (!keys || !vals)
		abort();
	if (do_delete)
		ret = bpfmap_lookup_and_delete_batch(f->map, in_cur, out_cur, keys, vals, count,
						     c->p);
	else
		ret = bpfmap_lookup_batch(f->map, in_cur, out_cur, keys, vals, count, c->p);
	*err = errno;
	free(keys);
	free(vals);
	return ret;
}

void op_lookup_batch(struct fuzz *f, struct input *in, bool do_delete)
{
	const char *what = do_delete ? "lookup_and_delete_batch" : "lookup_batch";
	uint8_t how = u8(in);
	uint8_t stop_after = u8(in);
	uint8_t cpu_b = u8(in), cpu_byte = u8(in);
	struct batch_opts_choice c;
	bool returned[MAX_KEYS] = {0};
	/* Cursors in buffers of exactly the documented size. */
	uint8_t *in_cur = malloc(f->cs), *out_cur = malloc(f->cs);
	errset errs = 0;

	if (!in_cur || !out_cur)
		abort();
	decode_batch_opts(f, how, cpu_b, cpu_byte, false,
			  BPFMAP_F_LOCK | (do_delete ? 0 : BPFMAP_F_CPU), &c);
	trace("%s walk opts %u elem_flags %#llx%s", what, how & 7, (unsigned long long)c.ef,
	      how & 0x40 ? " (bogus cursor)" : "");
	/* The access check before the options. */
	errs = !can_read(f) || (do_delete && !can_write(f)) ? ERR(EPERM) : c.errs;
	if (errs) {
		uint32_t count = 1 + stop_after % 8, was = count;
		int err, ret = batch_call_once(f, do_delete, &c, NULL, out_cur, &count, &err);

		expect_err(what, ret, err, errs);
		/* Refused for its options or access: *count as it was. */
		if (count != was)
			mismatch("%s refused (%d) but set count %u of %u", what, ret, count, was);
		goto out;
	}
	if ((how & 0x40) && !f->rhash) { /* (an RHASH cursor is a key: none is past the end) */
		/* A cursor past the last bucket: -ENOENT, nothing copied. */
		uint32_t count = 4, past = 0xffffffffu - (how & 0x3f);
		int err, ret;

		memcpy(in_cur, &past, sizeof(past));
		ret = batch_call_once(f, do_delete, &c, in_cur, out_cur, &count, &err);
		expect_ret(what, ret, err, -ENOENT);
		if (count)
			mismatch("%s from a cursor past the end copied %u elements", what, count);
		goto out;
	}
	bool first = true;
	unsigned calls = 0, zero_calls = 0;
	int last_ret = 0;

	for (;;) {
		uint32_t cap = batch_capacity(in, calls);

		if (cap == 0 && ++zero_calls > 4)
			cap = BIG_CAP;
		if (batch_call(f, do_delete, &c, in_cur, first, out_cur, cap, returned,
			       &last_ret))
			break;
		calls++;
		if (cap == 0 || last_ret == -ENOSPC)
			continue; /* retry from the same cursor (ENOSPC may or
				   * may not have written out_batch) */
		memcpy(in_cur, out_cur, f->cs);
		first = false;
		/* Partial walks are fine: lookup_and_delete_batch deleted only
		 * what it returned. */
		if ((how & 0x80) && calls >= (unsigned)(stop_after % 8) + 1)
			goto out;
		if (calls > 200)
			mismatch("%s walk does not end", what);
	}
	if ((how & 0x20) && !f->rhash) { /* (RHASH writes no cursor when it copies none) */
		/* The cursor the last call left is past the end: -ENOENT again. */
		uint32_t count = 8;
		int err, ret;

		memcpy(in_cur, out_cur, f->cs);
		ret = batch_call_once(f, do_delete, &c, in_cur, out_cur, &count, &err);
		expect_ret(what, ret, err, -ENOENT);
		if (count)
			mismatch("%s from the end cursor copied %u elements", what, count);
	}
out:
	free(in_cur);
	free(out_cur);
}

/* A one-slot write (F_CPU, F_ALL_CPUS) of @src into the syscall-layout
 * value @v. */
static void apply_slot_write(const struct fuzz *f, uint8_t *v, uint64_t ef, const uint8_t *src)
{
	for (uint32_t cpu = 0; cpu < f->ncpus; cpu++)
		if ((ef & BPFMAP_F_ALL_CPUS) || cpu == (uint32_t)(ef >> 32))
			memcpy(v + (size_t)cpu * f->slot, src, f->pvs);
}

/* Do two per-CPU values agree in every slot's value_size bytes (their
 * padding is open after a one-slot creation: model_create_zeroed)? */
static bool same_value(const struct fuzz *f, const uint8_t *a, const uint8_t *b)
{
	for (uint32_t cpu = 0; cpu < f->ncpus; cpu++)
		if (memcmp(a + (size_t)cpu * f->slot, b + (size_t)cpu * f->slot, f->pvs))
			return false;
	return true;
}

/* @id's value as the map holds it, into @out; false if it is absent. */
static bool fetch_value(struct fuzz *f, unsigned id, uint8_t *out)
{
	bool there = true;

	memset(out, 0, f->vs);
	if (can_read(f))
		return !bpfmap_lookup_elem(f->map, f->key[id], out);
	bpfmap_read_lock();
	for (uint32_t cpu = 0; there && cpu < f->ncpus; cpu++) {
		const uint8_t *p = bpfmap_lookup_percpu(f->map, f->key[id], cpu);

		there = p != NULL;
		if (p)
			memcpy(out + (size_t)cpu * f->slot, p, f->pvs);
	}
	bpfmap_read_unlock();
	return there;
}

/*
 * An LRU update_batch that evicts may take a key that it writes again
 * later in the same batch (the victims are the map's choice): that write
 * then creates the key afresh, so with one slot written (F_CPU, or
 * F_ALL_CPUS) the other slots are zero, not what they were, and the
 * padding open (model_create_zeroed).  For each key written after the
 * first eviction (element @first), every such history is accepted: the
 * model's (never evicted meanwhile), or zero plus the writes from any
 * later element of that key on.  Keys gone are left to learn_evictions().
 */
static void resolve_refills(struct fuzz *f, const struct batch_opts_choice *c,
			    const unsigned *ids, const uint8_t *vals, uint32_t done, unsigned first)
{
	uint8_t *got = malloc(f->vs), *cand = malloc(f->vs);
	bool seen[MAX_KEYS] = {0};

	if (!got || !cand)
		abort();
	for (uint32_t i = first + 1; i < done; i++) {
		unsigned id = ids[i];

		if (seen[id] || !fetch_value(f, id, got))
			continue;
		seen[id] = true;
		/* Maybe created afresh: its padding is open whichever way. */
		f->m.pad_open[id] = f->slot != f->pvs;
		if (same_value(f, got, f->m.val[id]))
			continue;
		for (uint32_t w = first + 1; w < done; w++) {
			if (ids[w] != id)
				continue;
			memset(cand, 0, f->vs);
			for (uint32_t x = w; x < done; x++)
				if (ids[x] == id)
					apply_slot_write(f, cand, c->ef, vals + (size_t)x * c->vstride);
			if (same_value(f, got, cand)) {
				trace("  key %u evicted and written afresh from element %u", id, w);
				memcpy(f->m.val[id], cand, f->vs);
				break;
			}
		}
	}
	free(got);
	free(cand);
}

void op_update_batch(struct fuzz *f, struct input *in)
{
	uint32_t n = u8(in) % (MAX_BATCH + 1), count = n, done = 0;
	struct batch_opts_choice c;
	unsigned ids[MAX_BATCH];
	uint8_t *keys, *vals;
	errset errs;
	int ret, e, want = 0;
	uint8_t b = u8(in), cpu_b = u8(in);

	decode_batch_opts(f, b, cpu_b, u8(in), true,
			  BPFMAP_EXIST | BPFMAP_F_LOCK | BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS, &c);
	keys = malloc(n ? (size_t)n * f->ks : 1);
	vals = malloc(n ? (size_t)n * c.vstride : 1);
	if (!keys || !vals)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = key_id(f, in);
		memcpy(keys + (size_t)i * f->ks, f->key[ids[i]], f->ks);
		gen_bytes(vals + (size_t)i * c.vstride, c.vstride, u16(in));
	}
	trace("update_batch n %u elem_flags %#llx errs %#x", n, (unsigned long long)c.ef,
	      c.errs);
	ret = bpfmap_update_batch(f->map, keys, vals, &count, c.p);
	e = errno;
	errs = can_write(f) ? c.errs : ERR(EPERM);
	if (errs) {
		/* even with *count 0: the checks come first */
		expect_err("update_batch", ret, e, errs);
		/* Refused before any element: *count as it was. */
		if (count != n)
			mismatch("update_batch refused (%d) but set count %u of %u", ret, count, n);
		goto out;
	}
	/* Each element as update_elem(ANY, or EXIST), in order, up to the
	 * first error; an LRU map evicts instead of -E2BIG, its victims
	 * learned after. */
	bool evicted = false;
	int first_evict = -1;

	for (; done < n; done++) {
		unsigned id = ids[done];

		if ((c.ef & BPFMAP_EXIST) && !f->m.present[id]) {
			want = -ENOENT;
			break;
		}
		if (!f->m.present[id] && f->m.count >= (f->lru ? f->lru_cap : f->max_entries)) {
			if (!f->lru) {
				want = -E2BIG;
				break;
			}
			if (!evicted)
				first_evict = (int)done;
			evicted = true;
		}
		model_update(f, id, c.ef, vals + (size_t)done * c.vstride);
	}
	expect_ret("update_batch", ret, e, want);
	if (count != done)
		mismatch("update_batch reported count %u, expected %u", count, done);
	/* Full once it evicted, and full it stays: the model then holds the
	 * keys it wrote (a later write's value) and the others that stayed. */
	if (f->lru && done && f->m.count >= f->lru_cap) {
		unsigned gone;

		if (first_evict >= 0 && one_slot(c.ef))
			resolve_refills(f, &c, ids, vals, done, (unsigned)first_evict);
		gone = learn_evictions(f, ids[done - 1]);

		if (f->m.count != f->lru_cap || (!evicted && gone))
			mismatch("LRU update_batch left %u keys of %u (%u evicted)", f->m.count,
				 f->lru_cap, gone);
	}
out:
	free(keys);
	free(vals);
}

void op_delete_batch(struct fuzz *f, struct input *in)
{
	uint32_t n = u8(in) % (MAX_BATCH + 1), count = n, done = 0;
	struct batch_opts_choice c;
	unsigned ids[MAX_BATCH];
	uint8_t *keys = malloc(n ? (size_t)n * f->ks : 1);
	bool gone[MAX_KEYS] = {0};
	errset errs;
	int ret, e, want = 0;
	uint8_t b = u8(in), cpu_b = u8(in);

	if (!keys)
		abort();
	decode_batch_opts(f, b, cpu_b, u8(in), true, BPFMAP_F_LOCK, &c);
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = key_id(f, in);
		memcpy(keys + (size_t)i * f->ks, f->key[ids[i]], f->ks);
	}
	trace("delete_batch n %u elem_flags %#llx errs %#x", n, (unsigned long long)c.ef,
	      c.errs);
	ret = bpfmap_delete_batch(f->map, keys, &count, c.p);
	e = errno;
	/* F_LOCK on a map without a lock: -EINVAL, as the kernel's
	 * generic_map_delete_batch() answers. */
	errs = can_write(f) ? c.errs : ERR(EPERM);
	if (errs) {
		/* even with *count 0: the checks come first */
		expect_err("delete_batch", ret, e, errs);
		if (count != n)
			mismatch("delete_batch refused (%d) but set count %u of %u", ret, count, n);
		goto out;
	}
	for (; done < n; done++) {
		if (!f->m.present[ids[done]] || gone[ids[done]]) {
			want = -ENOENT;
			break;
		}
		gone[ids[done]] = true;
	}
	expect_ret("delete_batch", ret, e, want);
	if (count != done)
		mismatch("delete_batch reported count %u, expected %u", count, done);
	for (unsigned id = 0; id < f->nkeys; id++)
		if (gone[id])
			model_remove(f, id);
out:
	free(keys);
}

