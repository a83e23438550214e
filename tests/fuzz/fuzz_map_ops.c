/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: operation sequences on one BPFMAP_TYPE_HASH map (one in
 * eight PERCPU_HASH, one in eight RHASH, one in eight LRU_HASH, and of the
 * per-CPU ones one in two LRU_PERCPU_HASH; of the LRU maps one in two
 * with per-CPU lists) against a reference model.
 *
 * The input's first bytes choose a map (key size, value size with or without a
 * struct bpfmap_spin_lock, max_entries 1..64 or now and then 16384-20000,
 * preallocated or NO_PREALLOC, ZERO_SEED or not, now and then an access flag)
 * and a set of 40 possible keys; the rest is a sequence of operations on those
 * keys: every syscall-view call, the four batch operations with cursor walks,
 * get_next_key walks, the program view inside read-side sections (with writes
 * through the pointer and deletes under it), mem_usage, NULL arguments and bad
 * flags, and invalid creations.  The model (which keys are present, their
 * values) predicts every return code, errno, copied value and iteration result
 * from the contract in include/bpfmap.h and the README (the kernel's
 * semantics): iteration results are compared as sets (the order is the
 * library's), batch walks are checked against the cursor protocol (whole
 * buckets: -ENOSPC only when nothing was copied and more elements than the
 * capacity remain; 0 only with more to come; -ENOENT once every element was
 * returned; RHASH's element by element: 0 exactly when the room is full,
 * never -ENOSPC, its cursor key_size bytes).  LRU maps evict where the
 * others answer -E2BIG: an insert of a new key into a full map (with
 * per-CPU lists, a full list of this thread's CPU)
 * takes out exactly one other key, which the model learns by looking up
 * every key it holds (the victim is the map's choice); nothing else ever
 * goes, and an update of a present key evicts nothing.  Where the contract leaves the choice between two errors open
 * (e.g. a bad flag on a read-only map), any applicable one is accepted.  A
 * disagreement prints what differed and traps.
 *
 * The same file builds as a libFuzzer target (scripts/fuzz.sh) and, with
 * tests/fuzz/replay.c, as a ctest that replays tests/fuzz/corpus/.
 * FUZZ_TRACE=1 in the environment prints every operation (for reproducers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_map_ops.h"

/* Preallocated HASH maps get the flat layout (src/tables/flat.c) from
 * bpfmap_create(); some inputs also make one directly with flat_create(), as
 * tests/test_flat.c does, which the committed corpus was generated with. */
#if __has_include("tables/flat.h")
#include "tables/flat.h"
#define FUZZ_FLAT 1
#endif

#define NKEYS 40
#define MAX_OPS 400
#define MAX_BATCH 20 /* elements per update/delete batch and bulk lookup */

static const uint32_t key_sizes[] = {1, 3, 4, 8, 13, 16, 64, 2, 12, 32, 100};

struct value_cfg {
	uint32_t size;
	int32_t lock_off;
};

static const struct value_cfg value_cfgs[] = {
	{8, -1}, {24, -1}, {1, -1}, {5, -1}, {13, -1}, {64, -1},
	{8, 0},  {8, 4},   {24, 8}, {16, 12}, {4, 0},  {28, 20},
};

/*
 * Preallocated maps of keys over 8 bytes take the chained table below
 * HASH_FLAT_LONG_MIN_ENTRIES (16384, src/maps/hash.c) elements, the flat table with
 * element-index slots from there on.  One such map in 64 (b2 >= BIG_MAP_B2,
 * which would mean 61-64 entries, more than the NKEYS keys: never full either
 * way) gets 16384-20000 entries and so the flat table, still with NKEYS keys.
 * Only those: creating and freeing one costs about 4 ms under ASan (1 ms for
 * a small map), and big word-key or NO_PREALLOC maps would add nothing new.
 */
#define BIG_MAP_B2 0xfc
static const uint32_t big_max_entries[] = {16384, 16385, 20000, 16384};

static const char *const map_names[] = {NULL, "", "fuzz", "a.b_C9", "fifteen_chars_x"};

/* Access flags a map may get (rarely); the rest of the time none. */
static const uint32_t access_flags[] = {
	BPFMAP_F_RDONLY, BPFMAP_F_WRONLY, BPFMAP_F_WRONLY_PROG,
	BPFMAP_F_RDONLY_PROG | BPFMAP_F_NUMA_NODE,
};

struct input {
	const uint8_t *p;
	size_t n, i;
};

struct model {
	bool present[NKEYS];
	uint8_t *val[NKEYS]; /* value_size bytes each, lock word zero */
	uint32_t count;
};

struct fuzz {
	struct bpfmap *map;
	/* vs: the syscall view's bytes per value; pvs: the program view's
	 * (PERCPU_HASH maps: one slot of the ncpus; the fuzzer runs on CPU 0,
	 * so its program view is slot 0, the model's first pvs bytes). */
	uint32_t ks, vs, pvs, max_entries, flags;
	bool percpu;
	bool rhash; /* BPFMAP_TYPE_RHASH */
	bool lru;   /* LRU_HASH, or LRU_PERCPU_HASH with percpu */
	uint32_t lru_cap; /* LRU: elements before inserts evict (per-CPU lists: CPU 0's) */
	uint32_t cs; /* a batch cursor's bytes: 4, RHASH's key_size */
	int32_t lock_off;
	uint8_t *key[NKEYS]; /* ks bytes each, separately allocated (ASan bounds) */
	uint8_t *vbuf;       /* value_size bytes */
	uint8_t *kbuf;       /* key_size bytes */
	uint8_t *abuf;       /* 2 * vs + ks bytes: a key and a value that overlap it */
	struct model m;
	unsigned op_index;
	bool flat; /* made with flat_create() */
};

static bool trace_on;
static struct fuzz *cur_fuzz;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!trace_on)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *type_name(const struct fuzz *f)
{
	if (f->percpu)
		return f->lru ? "LRU_PERCPU_HASH" : "PERCPU_HASH";
	return f->lru ? "LRU_HASH" : f->rhash ? "RHASH" : "HASH";
}

static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void mismatch(const char *fmt, ...)
{
	va_list ap;
	struct fuzz *f = cur_fuzz;

	fprintf(stderr, "fuzz_map_ops: MISMATCH: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (f)
		fprintf(stderr,
			"\n  map: %s%s key_size %u value_size %u lock_off %d max_entries %u "
			"map_flags %#x; model holds %u; operation #%u\n"
			"  (rerun the input with FUZZ_TRACE=1 for the operation log)\n",
			type_name(f), f->flat ? " (flat layout)" : "", f->ks,
			f->pvs, f->lock_off,
			f->max_entries, f->flags, f->m.count, f->op_index);
	else
		fputc('\n', stderr);
	__builtin_trap();
}

/* ---- input decoding ---- */

static bool more(const struct input *in)
{
	return in->i < in->n;
}

static uint8_t u8(struct input *in)
{
	return in->i < in->n ? in->p[in->i++] : 0;
}

static uint16_t u16(struct input *in)
{
	uint16_t lo = u8(in);

	return (uint16_t)(lo | (uint16_t)u8(in) << 8);
}

static unsigned key_id(struct input *in)
{
	return u8(in) % NKEYS;
}

/* ---- errno expectations ---- */

/* A set of acceptable errnos, as bits. */
typedef uint32_t errset;

enum { B_EINVAL, B_EPERM, B_ENOENT, B_EEXIST, B_E2BIG, B_ENOSPC, B_ENOMEM, B_OTHER };

static unsigned err_bit(int err)
{
	switch (err) {
	case EINVAL: return B_EINVAL;
	case EPERM: return B_EPERM;
	case ENOENT: return B_ENOENT;
	case EEXIST: return B_EEXIST;
	case E2BIG: return B_E2BIG;
	case ENOSPC: return B_ENOSPC;
	case ENOMEM: return B_ENOMEM;
	default: return B_OTHER;
	}
}

#define ERR(e) ((errset)1 << err_bit(e))

/* A failing call must return -errno and leave errno set to match. */
static void check_errno_matches(const char *what, int ret, int saved_errno)
{
	if (ret < 0 && saved_errno != -ret)
		mismatch("%s returned %d but errno is %d", what, ret, saved_errno);
}

/* ret must be 0 or (when errs is not empty) one of errs, negated. */
static void expect_err(const char *what, int ret, int saved_errno, errset errs)
{
	check_errno_matches(what, ret, saved_errno);
	if (ret >= 0 || !(errs & ERR(-ret)) || err_bit(-ret) == B_OTHER)
		mismatch("%s returned %d, expected an error from set %#x", what, ret, errs);
}

static void expect_ret(const char *what, int ret, int saved_errno, int want)
{
	check_errno_matches(what, ret, saved_errno);
	if (ret != want)
		mismatch("%s returned %d, expected %d", what, ret, want);
}

/* ---- keys, values, model ---- */

static bool has_lock(const struct fuzz *f)
{
	return f->lock_off >= 0;
}

static bool can_read(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_WRONLY);
}

static bool can_write(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_RDONLY);
}

static bool prog_can_read(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_WRONLY_PROG);
}

static void make_keys(struct fuzz *f, unsigned style)
{
	for (unsigned id = 0; id < NKEYS; id++) {
		uint8_t *k = f->key[id];

		for (uint32_t i = 0; i < f->ks; i++) {
			switch (style) {
			case 0: /* every byte differs */
				k[i] = (uint8_t)(id * 37 + i * 101 + (id >> 3) * i);
				break;
			case 1: /* a shared prefix, the difference in the last byte */
				k[i] = 0xa5;
				break;
			case 2: /* zeros but the first byte: key 0 is all zero */
				k[i] = 0;
				break;
			default: /* ones but the first byte */
				k[i] = 0xff;
				break;
			}
		}
		if (style == 1)
			k[f->ks - 1] = (uint8_t)(id * 37);
		else if (style >= 2)
			k[0] = (uint8_t)(style == 2 ? id : id * 37);
		else
			k[0] = (uint8_t)(id * 37);
	}
}

/* The id of a key the map handed back, or a mismatch if it is none of ours. */
static unsigned id_of_key(const struct fuzz *f, const void *key, const char *what)
{
	for (unsigned id = 0; id < NKEYS; id++)
		if (!memcmp(f->key[id], key, f->ks))
			return id;
	mismatch("%s returned a key that was never inserted", what);
}

static void gen_value(const struct fuzz *f, uint8_t *out, uint16_t seed)
{
	for (uint32_t i = 0; i < f->vs; i++)
		out[i] = (uint8_t)(seed * 131u + i * 17u + (seed >> 8) * i + 1);
}

/* What a copy-out of a stored value @v gives: the lock word reads as zero. */
static void clear_lock(const struct fuzz *f, uint8_t *v)
{
	if (has_lock(f))
		memset(v + f->lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

static void model_store(struct fuzz *f, unsigned id, const uint8_t *value)
{
	if (!f->m.present[id]) {
		f->m.present[id] = true;
		f->m.count++;
	}
	memcpy(f->m.val[id], value, f->vs);
	clear_lock(f, f->m.val[id]);
}

/* A per-CPU value's CPU 0 slot (pvs bytes) from @v; an element it creates
 * has every other byte zero. */
static void model_store_slot0(struct fuzz *f, unsigned id, const uint8_t *v)
{
	if (!f->m.present[id]) {
		f->m.present[id] = true;
		f->m.count++;
		memset(f->m.val[id], 0, f->vs);
	}
	memcpy(f->m.val[id], v, f->pvs);
}

static void model_remove(struct fuzz *f, unsigned id)
{
	if (f->m.present[id]) {
		f->m.present[id] = false;
		f->m.count--;
	}
}

static void check_value(const struct fuzz *f, unsigned id, const uint8_t *got,
			const char *what);

/* An LRU map after updates that the model applied as if it had room: the
 * keys the map evicted instead, learned by looking up every key the model
 * holds, checked (values included) and dropped.  The map then holds
 * exactly what the model does; @keep, the key written last, must be
 * there.  Returns how many went. */
static unsigned learn_evictions(struct fuzz *f, unsigned keep)
{
	unsigned gone = 0;

	for (unsigned id = 0; id < NKEYS; id++) {
		int ret;

		if (!f->m.present[id])
			continue;
		ret = bpfmap_lookup_elem(f->map, f->key[id], f->vbuf);
		if (ret == -ENOENT && id != keep) {
			model_remove(f, id);
			gone++;
			continue;
		}
		expect_ret("lookup_elem (after an LRU update)", ret, errno, 0);
		check_value(f, id, f->vbuf, "lookup_elem (after an LRU update)");
	}
	if (gone)
		trace("  LRU: %u evicted", gone);
	return gone;
}

/* After an LRU map's update of one key that the model applied: a new key
 * into a full map evicted exactly one other, anything else none. */
static void check_lru_update(struct fuzz *f, unsigned id, bool was_new)
{
	bool evicts = was_new && f->m.count > f->lru_cap;
	unsigned gone;

	if (!f->lru || f->m.count < f->lru_cap)
		return;
	gone = learn_evictions(f, id);
	if (gone != (evicts ? 1u : 0u))
		mismatch("LRU update of key %u (%s) evicted %u keys", id,
			 was_new ? "new, map full" : "present", gone);
}

static void check_value(const struct fuzz *f, unsigned id, const uint8_t *got,
			const char *what)
{
	if (memcmp(got, f->m.val[id], f->vs)) {
		for (uint32_t i = 0; i < f->vs; i++)
			if (got[i] != f->m.val[id][i])
				mismatch("%s: key %u value byte %u is %#x, expected %#x", what, id,
					 i, got[i], f->m.val[id][i]);
	}
}

/* A program-view value: as check_value() but the lock word is the map's own
 * (left alone: it may be anything a lock implementation keeps there). */
static void check_value_in_place(const struct fuzz *f, unsigned id, const uint8_t *p,
				 const char *what)
{
	uint8_t *copy = f->vbuf;

	if ((uintptr_t)p % 8)
		mismatch("%s: value of key %u at %p is not 8-byte aligned", what, id, (void *)p);
	memcpy(copy, f->m.val[id], f->vs); /* per-CPU: the other slots as the model's */
	memcpy(copy, p, f->pvs);
	clear_lock(f, copy);
	check_value(f, id, copy, what);
}

/* ---- update flags ---- */

struct upd_flags {
	uint64_t flags;
	bool cpu_slot; /* BPFMAP_F_CPU, CPU 0: the value is one slot */
	bool bad;  /* EINVAL by the flags alone */
	unsigned mode;
};

static struct upd_flags decode_update_flags(const struct fuzz *f, uint8_t b)
{
	struct upd_flags u = {.mode = b & 3};

	u.flags = u.mode;
	if (b & 4)
		u.flags |= BPFMAP_F_LOCK;
	if ((b & 0xc0) == 0xc0) /* an unknown bit: F_CPU, F_ALL_CPUS, ... bit 63 */
		u.flags |= 1ULL << (3 + (b >> 3 & 7) * 8 % 61);
	u.bad = (u.flags & ~BPFMAP_F_LOCK) > BPFMAP_EXIST;
	/* Per-CPU maps take BPFMAP_F_CPU: here CPU 0's slot (no CPU bits). */
	if (f->percpu && (u.flags & ~(BPFMAP_F_LOCK | 3ULL)) == BPFMAP_F_CPU &&
	    u.mode <= BPFMAP_EXIST) {
		u.bad = false;
		u.cpu_slot = true;
	}
	if ((u.flags & BPFMAP_F_LOCK) && !has_lock(f))
		u.bad = true;
	return u;
}

/* ---- single-element operations ---- */

static void op_update(struct fuzz *f, struct input *in)
{
	unsigned id = key_id(in);
	struct upd_flags u = decode_update_flags(f, u8(in));
	uint8_t *v = f->vbuf;
	errset errs = 0;
	int ret, want;

	gen_value(f, v, u16(in));
	trace("update key %u flags %#llx", id, (unsigned long long)u.flags);
	ret = bpfmap_update_elem(f->map, f->key[id], v, u.flags);
	int e = errno;

	if (!can_write(f))
		errs |= ERR(EPERM);
	if (u.bad)
		errs |= ERR(EINVAL);
	if (errs) {
		expect_err("update_elem", ret, e, errs);
		return;
	}
	bool was_new = !f->m.present[id];

	if (f->m.present[id])
		want = u.mode == BPFMAP_NOEXIST ? -EEXIST : 0;
	else if (u.mode == BPFMAP_EXIST)
		want = -ENOENT;
	else
		want = !f->lru && f->m.count >= f->max_entries ? -E2BIG : 0;
	expect_ret("update_elem", ret, e, want);
	if (!want && u.cpu_slot) /* CPU 0's slot; a new element's others zero */
		model_store_slot0(f, id, v);
	else if (!want)
		model_store(f, id, v);
	if (!want)
		check_lru_update(f, id, was_new);
}

static void op_lookup(struct fuzz *f, struct input *in)
{
	unsigned id = key_id(in);
	uint8_t b = u8(in), how = b % 4;
	/* 3: one flag bit, BPFMAP_F_LOCK (bit 2) or one lookups refuse */
	uint64_t flags = how == 2 ? BPFMAP_F_LOCK : how == 3 ? 1ULL << (b >> 2) % 64 : 0;
	const uint8_t *key = f->key[id];
	uint8_t *out = f->vbuf;
	errset errs = 0;
	int ret, e;

	/* Bit 2 of the others: the value into a buffer that overlaps the
	 * key, starting from vs - 1 bytes before it to its last byte. */
	if (how < 3 && (b & 4)) {
		uint32_t d = (uint32_t)(b >> 3) * 2654435761u % (f->ks + f->vs - 1);

		memcpy(f->abuf + f->vs, f->key[id], f->ks);
		key = f->abuf + f->vs;
		out = f->abuf + 1 + d;
	}
	trace("lookup key %u how %u%s", id, how, key != f->key[id] ? " overlapping" : "");
	memset(f->vbuf, 0xee, f->vs);
	if (how == 0)
		ret = bpfmap_lookup_elem(f->map, key, out);
	else
		ret = bpfmap_lookup_elem_flags(f->map, key, out, flags);
	e = errno;
	if (out != f->vbuf && !ret) /* flags 0 or F_LOCK: the whole value */
		memcpy(f->vbuf, out, f->vs);
	if (flags & ~BPFMAP_F_LOCK && !(f->percpu && flags == BPFMAP_F_CPU))
		errs |= ERR(EINVAL);
	if ((flags & BPFMAP_F_LOCK) && !has_lock(f))
		errs |= ERR(EINVAL);
	if (!can_read(f))
		errs |= ERR(EPERM);
	if (errs) {
		expect_err("lookup_elem", ret, e, errs);
		return;
	}
	expect_ret("lookup_elem", ret, e, f->m.present[id] ? 0 : -ENOENT);
	if (!ret && flags == BPFMAP_F_CPU) { /* CPU 0's slot only */
		if (memcmp(f->vbuf, f->m.val[id], f->pvs))
			mismatch("lookup_elem F_CPU: key %u's slot 0 differs", id);
	} else if (!ret) {
		check_value(f, id, f->vbuf, "lookup_elem");
	}
}

static void op_delete(struct fuzz *f, struct input *in, bool with_lookup)
{
	/* The key's byte: its id, and in the upper values (how 3-6) a call of
	 * lookup_and_delete_elem_flags: flags 0, F_LOCK, or one other bit. */
	uint8_t b = u8(in);
	unsigned id = b % NKEYS, how = b / NKEYS;
	uint64_t flags = how == 4 ? BPFMAP_F_LOCK : how >= 5 ? 1ULL << (b * 7 % 64) : 0;
	const char *what = with_lookup ? "lookup_and_delete_elem" : "delete_elem";
	errset errs = 0;
	int ret, e;

	trace("%s key %u how %u", what, id, how);
	if (with_lookup && how >= 3)
		ret = bpfmap_lookup_and_delete_elem_flags(f->map, f->key[id], f->vbuf, flags);
	else if (with_lookup)
		ret = bpfmap_lookup_and_delete_elem(f->map, f->key[id], f->vbuf);
	else
		ret = bpfmap_delete_elem(f->map, f->key[id]);
	e = errno;
	if (!with_lookup || how < 3)
		flags = 0;
	if (flags & ~BPFMAP_F_LOCK)
		errs |= ERR(EINVAL);
	if ((flags & BPFMAP_F_LOCK) && !has_lock(f))
		errs |= ERR(EINVAL);
	if (!can_write(f) || (with_lookup && !can_read(f)))
		errs |= ERR(EPERM);
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
	bool seen[NKEYS] = {0};
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
static void op_get_next_key(struct fuzz *f, struct input *in)
{
	uint8_t how = u8(in);
	unsigned start = key_id(in), ids[NKEYS], found;
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
		unsigned suffix[NKEYS], m;

		found = walk_ids(f, NULL, ids);
		m = walk_ids(f, f->key[start], suffix);
		if (m > found || memcmp(ids + found - m, suffix, m * sizeof(*suffix)))
			mismatch("get_next_key from absent key %u: %u keys, not the end of the "
				 "walk from the first key", start, m);
	} else {
		if ((how & 1) && !f->m.present[start]) {
			/* An absent key starts from the first key, as NULL does. */
			uint8_t first[128];

			ret = bpfmap_get_next_key(f->map, NULL, first);
			e = errno;
			expect_ret("get_next_key(NULL)", ret, e, f->m.count ? 0 : -ENOENT);
			ret = bpfmap_get_next_key(f->map, f->key[start], next);
			e = errno;
			expect_ret("get_next_key(absent key)", ret, e, f->m.count ? 0 : -ENOENT);
			if (!ret && memcmp(first, next, f->ks))
				mismatch("get_next_key(absent key) did not restart at the first key");
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

/* ---- batch operations ---- */

/* Batch options as a caller may pass them: NULL, ours, or a struct from an
 * older (shorter) or newer (longer) header, well-formed or not. */
struct batch_opts_choice {
	struct {
		struct bpfmap_batch_opts opts;
		uint64_t newer_field; /* a field from a newer header */
	} buf;
	const struct bpfmap_batch_opts *p; /* NULL or &buf.opts */
	bool bad;     /* EINVAL by the options alone */
	bool lock;    /* elem_flags asks for BPFMAP_F_LOCK */
	bool exist;   /* elem_flags is update_batch's BPFMAP_EXIST */
};

/* @writes: update_batch or delete_batch, which ignore opts.flags as the
 * kernel's generic batch code does (the lookup batches refuse it);
 * @update: update_batch, which takes EXIST (bpf-next's BPF_F_CPU series). */
static void decode_batch_opts(const struct fuzz *f, uint8_t b, bool writes, bool update,
			      struct batch_opts_choice *c)
{
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
		c->lock = true;
		c->bad = !has_lock(f);
		break;
	case 4: /* the update modes: only update_batch's EXIST */
		c->buf.opts.elem_flags = (b >> 3 & 1) ? BPFMAP_NOEXIST : BPFMAP_EXIST;
		c->exist = update && c->buf.opts.elem_flags == BPFMAP_EXIST;
		c->bad = !c->exist;
		break;
	case 5:
		c->buf.opts.flags = 1ULL << (b >> 3 & 63);
		c->bad = !writes;
		break;
	case 6: /* an older header's struct: sz ends before elem_flags, whose
		 * bytes here must not be read; or a sz too small to hold sz */
		c->buf.opts.sz = offsetof(struct bpfmap_batch_opts, elem_flags);
		c->buf.opts.elem_flags = BPFMAP_EXIST;
		if (b & 0x10) {
			c->buf.opts.sz = 4;
			c->bad = true;
		}
		break;
	default: /* a newer header's struct: unknown trailing bytes must be 0 */
		c->buf.opts.sz = sizeof(c->buf);
		c->buf.newer_field = b >> 3 & 1;
		c->bad = c->buf.newer_field != 0;
		break;
	}
}

/* Check the elements one batch call returned and update the model. */
static void check_batch_elems(struct fuzz *f, const uint8_t *keys, const uint8_t *vals,
			      uint32_t n, bool *returned, bool do_delete, const char *what)
{
	for (uint32_t i = 0; i < n; i++) {
		unsigned id = id_of_key(f, keys + (size_t)i * f->ks, what);

		if (!f->m.present[id])
			mismatch("%s returned absent key %u", what, id);
		if (returned[id])
			mismatch("%s returned key %u twice in one walk", what, id);
		returned[id] = true;
		check_value(f, id, vals + (size_t)i * f->vs, what);
		if (do_delete)
			model_remove(f, id);
	}
}

/* Present keys not yet returned by this walk. */
static uint32_t remaining(const struct fuzz *f, const bool *returned)
{
	uint32_t n = 0;

	for (unsigned id = 0; id < NKEYS; id++)
		n += f->m.present[id] && !returned[id];
	return n;
}

static uint32_t batch_capacity(struct input *in, unsigned call)
{
	uint8_t c;

	if (!more(in) || call > 60)
		return 128; /* holds everything: ends the walk */
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
	uint8_t *vals = malloc(cap ? (size_t)cap * f->vs : 1);
	uint32_t count = cap, before = remaining(f, returned);
	uint8_t out_before[sizeof(uint32_t) + 100]; /* the largest key */
	bool over = false;
	int ret, e;

	if (!keys || !vals || f->cs > sizeof(out_before))
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
	check_batch_elems(f, keys, vals, count, returned, do_delete, what);
	if (ret == -ENOENT && remaining(f, returned))
		mismatch("%s reached the end (-ENOENT) with %u elements never returned", what,
			 remaining(f, returned));
out:
	free(keys);
	free(vals);
	return over && ret == -ENOENT;
}

/* One lookup(_and_delete)_batch call with room for *count elements (in
 * buffers of exactly that size, so that ASan sees any overrun); errno of
 * the call in *err. */
static int batch_call_once(struct fuzz *f, bool do_delete, const struct batch_opts_choice *c,
			   uint8_t *in_cur, uint8_t *out_cur, uint32_t *count, int *err)
{
	uint8_t *keys = malloc((size_t)*count * f->ks), *vals = malloc((size_t)*count * f->vs);
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

static void op_lookup_batch(struct fuzz *f, struct input *in, bool do_delete)
{
	const char *what = do_delete ? "lookup_and_delete_batch" : "lookup_batch";
	uint8_t how = u8(in);
	uint8_t stop_after = u8(in);
	struct batch_opts_choice c;
	bool returned[NKEYS] = {0};
	/* Cursors in buffers of exactly the documented size. */
	uint8_t *in_cur = malloc(f->cs), *out_cur = malloc(f->cs);
	errset errs = 0;

	if (!in_cur || !out_cur)
		abort();
	decode_batch_opts(f, how, false, false, &c);
	trace("%s walk opts %u%s", what, how & 7, how & 0x40 ? " (bogus cursor)" : "");
	if (!can_read(f) || (do_delete && !can_write(f)))
		errs |= ERR(EPERM);
	if (c.bad)
		errs |= ERR(EINVAL);
	if (errs) {
		uint32_t count = 1 + stop_after % 8;
		int err, ret = batch_call_once(f, do_delete, &c, NULL, out_cur, &count, &err);

		expect_err(what, ret, err, errs);
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
			cap = 128;
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

static void op_update_batch(struct fuzz *f, struct input *in)
{
	uint32_t n = u8(in) % (MAX_BATCH + 1), count = n, done = 0;
	struct batch_opts_choice c;
	unsigned ids[MAX_BATCH];
	uint8_t *keys = malloc(n ? (size_t)n * f->ks : 1);
	uint8_t *vals = malloc(n ? (size_t)n * f->vs : 1);
	errset errs = 0;
	int ret, e, want = 0;

	if (!keys || !vals)
		abort();
	decode_batch_opts(f, u8(in), true, true, &c);
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = key_id(in);
		memcpy(keys + (size_t)i * f->ks, f->key[ids[i]], f->ks);
		gen_value(f, vals + (size_t)i * f->vs, u16(in));
	}
	trace("update_batch n %u opts bad %d", n, c.bad);
	ret = bpfmap_update_batch(f->map, keys, vals, &count, c.p);
	e = errno;
	if (!can_write(f))
		errs |= ERR(EPERM);
	if (c.bad)
		errs |= ERR(EINVAL);
	if (errs) {
		if (!(n == 0 && ret == 0))
			expect_err("update_batch", ret, e, errs);
		goto out;
	}
	/* Each element as update_elem(ANY, or EXIST), in order, up to the
	 * first error; an LRU map evicts instead of -E2BIG, its victims
	 * learned after. */
	bool evicted = false;

	for (; done < n; done++) {
		unsigned id = ids[done];

		if (c.exist && !f->m.present[id]) {
			want = -ENOENT;
			break;
		}
		if (!f->m.present[id] && f->m.count >= (f->lru ? f->lru_cap : f->max_entries)) {
			if (!f->lru) {
				want = -E2BIG;
				break;
			}
			evicted = true;
		}
		model_store(f, id, vals + (size_t)done * f->vs);
	}
	expect_ret("update_batch", ret, e, want);
	if (count != done)
		mismatch("update_batch reported count %u, expected %u", count, done);
	/* Full once it evicted, and full it stays: the model then holds the
	 * keys it wrote (a later write's value) and the others that stayed. */
	if (f->lru && done && f->m.count >= f->lru_cap) {
		unsigned gone = learn_evictions(f, ids[done - 1]);

		if (f->m.count != f->lru_cap || (!evicted && gone))
			mismatch("LRU update_batch left %u keys of %u (%u evicted)", f->m.count,
				 f->lru_cap, gone);
	}
out:
	free(keys);
	free(vals);
}

static void op_delete_batch(struct fuzz *f, struct input *in)
{
	uint32_t n = u8(in) % (MAX_BATCH + 1), count = n, done = 0;
	struct batch_opts_choice c;
	unsigned ids[MAX_BATCH];
	uint8_t *keys = malloc(n ? (size_t)n * f->ks : 1);
	bool gone[NKEYS] = {0};
	errset errs = 0;
	int ret, e, want = 0;

	if (!keys)
		abort();
	decode_batch_opts(f, u8(in), true, false, &c);
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = key_id(in);
		memcpy(keys + (size_t)i * f->ks, f->key[ids[i]], f->ks);
	}
	trace("delete_batch n %u opts bad %d", n, c.bad);
	ret = bpfmap_delete_batch(f->map, keys, &count, c.p);
	e = errno;
	if (!can_write(f))
		errs |= ERR(EPERM);
	/* BPFMAP_F_LOCK is "accepted" for deletes; on a map without a lock
	 * the kernel refuses it (-EINVAL) and so may bpfmap, or ignore it. */
	if (c.bad && !(c.lock && ret != -EINVAL))
		errs |= ERR(EINVAL);
	if (errs) {
		if (!(n == 0 && ret == 0))
			expect_err("delete_batch", ret, e, errs);
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
	for (unsigned id = 0; id < NKEYS; id++)
		if (gone[id])
			model_remove(f, id);
out:
	free(keys);
}

/* ---- program view ---- */

/* bpfmap_lookup() of one key, checked; returns the pointer (NULL if absent). */
static uint8_t *prog_lookup(struct fuzz *f, unsigned id)
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
		model_store_slot0(f, id, v);
	else
		model_store(f, id, v);
}

static void op_prog_view(struct fuzz *f, struct input *in)
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
		ids[i] = key_id(in);
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
				unsigned nid = k == tries ? id : key_id(in);

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

/* ---- whole-map checks ---- */

static void op_check_all(struct fuzz *f)
{
	size_t mem = bpfmap_mem_usage(f->map);

	trace("check all (mem_usage %zu)", mem);
	if (mem < (size_t)f->m.count * (f->ks + f->vs) || mem > (1u << 30))
		mismatch("mem_usage %zu bytes for %u elements of %u + %u bytes", mem, f->m.count,
			 f->ks, f->vs);
	if (bpfmap_mem_usage(NULL) != 0)
		mismatch("mem_usage(NULL) is not 0");
	for (unsigned id = 0; id < NKEYS; id++) {
		if (can_read(f)) {
			int ret = bpfmap_lookup_elem(f->map, f->key[id], f->vbuf);

			expect_ret("lookup_elem (check)", ret, errno, f->m.present[id] ? 0 : -ENOENT);
			if (!ret)
				check_value(f, id, f->vbuf, "lookup_elem (check)");
		}
		bpfmap_read_lock();
		prog_lookup(f, id); /* EPERM on a WRONLY_PROG map */
		bpfmap_read_unlock();
	}
}

/* NULL arguments: -EINVAL (or -EPERM where the map's access flags also
 * refuse), and nothing changes. */
static void op_null_args(struct fuzz *f, struct input *in)
{
	uint8_t which = u8(in) % 16;
	const void *k = f->key[key_id(in)];
	void *v = f->vbuf;
	uint32_t count = 1, cur = 0;
	errset ro = ERR(EINVAL) | (can_read(f) ? 0 : ERR(EPERM));
	errset wo = ERR(EINVAL) | (can_write(f) ? 0 : ERR(EPERM));
	errset rw = ro | wo;
	int ret;

	trace("NULL argument case %u", which);
	switch (which) {
	case 0:
		ret = bpfmap_lookup_elem(NULL, k, v);
		expect_err("lookup_elem(NULL map)", ret, errno, ERR(EINVAL));
		break;
	case 1:
		ret = bpfmap_lookup_elem(f->map, NULL, v);
		expect_err("lookup_elem(NULL key)", ret, errno, ro);
		break;
	case 2:
		ret = bpfmap_lookup_elem(f->map, k, NULL);
		expect_err("lookup_elem(NULL value)", ret, errno, ro);
		break;
	case 3:
		ret = bpfmap_update_elem(f->map, NULL, v, 0);
		expect_err("update_elem(NULL key)", ret, errno, wo);
		break;
	case 4:
		ret = bpfmap_update_elem(f->map, k, NULL, 0);
		expect_err("update_elem(NULL value)", ret, errno, wo);
		break;
	case 5:
		ret = bpfmap_delete_elem(f->map, NULL);
		expect_err("delete_elem(NULL key)", ret, errno, wo);
		break;
	case 6:
		ret = bpfmap_lookup_and_delete_elem(f->map, k, NULL);
		expect_err("lookup_and_delete_elem(NULL value)", ret, errno, rw);
		break;
	case 7:
		ret = bpfmap_get_next_key(f->map, k, NULL);
		expect_err("get_next_key(NULL next_key)", ret, errno, ro);
		break;
	case 8:
		ret = bpfmap_lookup_batch(f->map, NULL, NULL, f->kbuf, v, &count, NULL);
		expect_err("lookup_batch(NULL out_batch)", ret, errno, ro);
		break;
	case 9:
		ret = bpfmap_lookup_batch(f->map, NULL, &cur, f->kbuf, v, NULL, NULL);
		expect_err("lookup_batch(NULL count)", ret, errno, ro);
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
		expect_err("lookup_bulk(NULL keys)", ret, errno,
			   ERR(EINVAL) | (prog_can_read(f) ? 0 : ERR(EPERM)));
		break;
	default:
		ret = bpfmap_update_batch(f->map, NULL, v, &count, NULL);
		expect_err("update_batch(NULL keys)", ret, errno, wo);
		break;
	}
}

/* ---- creation ---- */

/* One invalid creation; it must fail with the documented errno. */
static void try_bad_create(const struct fuzz *f, uint8_t which)
{
	/* A HASH map like the input's (an LRU one's per-CPU lists aside). */
	BPFMAP_CREATE_OPTS(o, .map_flags = f->flags & ~BPFMAP_F_NO_COMMON_LRU,
			   .lock_off = f->lock_off);
	enum bpfmap_type type = BPFMAP_TYPE_HASH;
	uint32_t ks = f->ks, vs = f->vs, me = f->max_entries;
	const char *name = NULL;
	int want = EINVAL;
	struct bpfmap *m;

	switch (which % 16) {
	case 0: ks = 0; break;
	case 1: vs = 0; break;
	case 2: me = 0; break;
	case 3: o.map_flags |= 1U << 5; break;
	case 4: o.map_flags |= 1U << (9 + which / 16); break;
	case 5: o.map_flags = (o.map_flags & ~BPFMAP_F_WRONLY) | BPFMAP_F_RDONLY | BPFMAP_F_WRONLY; break;
	case 6: o.map_flags |= BPFMAP_F_NO_COMMON_LRU; break;
	case 7: o.map_extra = 1; break;
	case 8: o.lock_off = (int32_t)(vs >= 8 ? 2 : 1); break;
	case 9: o.lock_off = (int32_t)((vs + 3) & ~3u); break; /* no room for the lock */
	case 10: o.lock_off = -2; break;
	case 11: o.sz = 4; break;
	/* Only the first 15 bytes count (as libbpf keeps them): a bad byte
	 * among them. */
	case 12: name = which & 0x10 ? "bad-name" : "fifteen_chars-x_more"; break;
	case 13: me = BPFMAP_HTAB_MAX_ENTRIES + 1; want = E2BIG; break;
	case 14: vs = BPFMAP_MAX_ELEM_BYTES - ks; o.lock_off = -1; want = E2BIG; break;
	default:
		if (!(which & 0x10)) {
			type = (enum bpfmap_type)(which & 0x20 ? 2 : 0);
			break;
		}
		/* Checked after the name and max_entries, as the kernel. */
		o.lock_off = 0;
		o.map_flags |= which & 0x20 ? BPFMAP_F_RDONLY_PROG : BPFMAP_F_WRONLY_PROG;
		o.map_flags &= ~(which & 0x20 ? BPFMAP_F_WRONLY_PROG : BPFMAP_F_RDONLY_PROG);
		want = vs >= sizeof(struct bpfmap_spin_lock) ? EACCES : EINVAL;
		break;
	}
	errno = 0;
	m = bpfmap_create(type, name, ks, vs, me, &o);
	if (m || errno != want)
		mismatch("bpfmap_create invalid case %u gave %p errno %d, expected errno %d",
			 which % 16, (void *)m, errno, want);
}

/*
 * Maps are freed by worker threads.  bpfmap_free() waits for the reclamation
 * queued so far, which costs a period of liburcu's callback thread (~10 ms)
 * whatever the map; freeing inline would cap the harness near 100 inputs/s.
 * Waits that overlap end together, so a pool of threads frees many maps per
 * period.  A map handed over is never touched again by the harness (the
 * contract of bpfmap_free() is met from another thread).
 */
#define FREE_THREADS 16
#define FREE_QUEUE 256

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, space;
	struct bpfmap *queue[FREE_QUEUE];
	unsigned head, len, busy;
	bool started, failed;
} freeq = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.space = PTHREAD_COND_INITIALIZER,
};

static void *free_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&freeq.lock);
	for (;;) {
		while (!freeq.len)
			pthread_cond_wait(&freeq.work, &freeq.lock);
		struct bpfmap *map = freeq.queue[freeq.head];

		freeq.head = (freeq.head + 1) % FREE_QUEUE;
		freeq.len--;
		freeq.busy++;
		pthread_mutex_unlock(&freeq.lock);
		bpfmap_free(map);
		pthread_mutex_lock(&freeq.lock);
		freeq.busy--;
		pthread_cond_broadcast(&freeq.space);
	}
	return NULL;
}

/* Called with freeq.lock held. */
static void start_free_workers(void)
{
	pthread_attr_t attr;

	freeq.started = true;
	if (pthread_attr_init(&attr)) {
		freeq.failed = true;
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (unsigned i = 0; i < FREE_THREADS; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, free_worker, NULL)) {
			freeq.failed = i == 0;
			break;
		}
	}
	pthread_attr_destroy(&attr);
}

static void free_later(struct bpfmap *map)
{
	pthread_mutex_lock(&freeq.lock);
	if (!freeq.started)
		start_free_workers();
	if (freeq.failed) {
		pthread_mutex_unlock(&freeq.lock);
		bpfmap_free(map);
		return;
	}
	while (freeq.len == FREE_QUEUE)
		pthread_cond_wait(&freeq.space, &freeq.lock);
	freeq.queue[(freeq.head + freeq.len) % FREE_QUEUE] = map;
	freeq.len++;
	pthread_cond_signal(&freeq.work);
	pthread_mutex_unlock(&freeq.lock);
}

void fuzz_map_ops_flush(void)
{
	pthread_mutex_lock(&freeq.lock);
	while (freeq.len || freeq.busy)
		pthread_cond_wait(&freeq.space, &freeq.lock);
	pthread_mutex_unlock(&freeq.lock);
}

/* This thread on CPU 0, so that its program view is CPU 0's slot. */
static bool pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return !sched_setaffinity(0, sizeof(set), &set) && sched_getcpu() == 0;
}

static bool setup(struct fuzz *f, struct input *in)
{
	uint8_t b0 = u8(in), b1 = u8(in), b2 = u8(in), b3 = u8(in), b4 = u8(in);
	const struct value_cfg *vc = &value_cfgs[b1 % (sizeof(value_cfgs) / sizeof(*value_cfgs))];

	f->ks = key_sizes[b0 % (sizeof(key_sizes) / sizeof(*key_sizes))];
	f->vs = f->pvs = vc->size;
	f->lock_off = vc->lock_off;
	/* One map in eight without a spin lock: PERCPU_HASH, its syscall
	 * values a slot per CPU, this thread pinned to CPU 0. */
	f->percpu = (b3 & 0x1c) == 0x0c && f->lock_off < 0 && pin_cpu0();
	if (f->percpu)
		f->vs = (f->pvs + 7) / 8 * 8 * (uint32_t)bpfmap_num_possible_cpus();
	/* One map in eight RHASH (always NO_PREALLOC, never ZERO_SEED). */
	f->rhash = !f->percpu && (b3 & 0x1c) == 0x10;
	/* One in eight LRU_HASH without a spin lock, and one per-CPU map in
	 * two LRU_PERCPU_HASH: preallocated, common lists, no access flag. */
	f->lru = f->percpu ? (b3 & 0x20) != 0 : (b3 & 0x1c) == 0x14 && f->lock_off < 0;
	f->cs = f->rhash ? f->ks : 4;
	f->max_entries = 1 + b2 % 64;
	f->flags = 0;
	if (((b3 & 1) && !f->lru) || f->rhash)
		f->flags |= BPFMAP_F_NO_PREALLOC;
	else if (b2 >= BIG_MAP_B2 && f->ks > 8)
		f->max_entries = big_max_entries[b2 - BIG_MAP_B2];
	if ((b3 & 2) && !f->rhash)
		f->flags |= BPFMAP_F_ZERO_SEED;
	if ((b3 & 0x1c) == 0x1c) { /* one map in eight: an access flag */
		f->flags |= access_flags[(b3 >> 5) % 4];
		/* Programs' access restricted beside a spin lock: the
		 * kernel's EACCES (try_bad_create). */
		if (f->lock_off >= 0)
			f->flags &= ~(BPFMAP_F_RDONLY_PROG | BPFMAP_F_WRONLY_PROG);
	}
	/* One LRU map in two with per-CPU lists: this thread, on CPU 0, fills
	 * CPU 0's, of max_entries / ncpus (max_entries rounded up to a
	 * multiple of the CPUs), which evicts from itself once full. */
	f->lru_cap = f->max_entries;
	if (f->lru && (b3 & 0x40) && pin_cpu0()) {
		uint32_t ncpus = (uint32_t)bpfmap_num_possible_cpus();

		f->flags |= BPFMAP_F_NO_COMMON_LRU;
		f->lru_cap = (f->max_entries + ncpus - 1) / ncpus;
	}
	for (unsigned id = 0; id < NKEYS; id++) {
		f->key[id] = malloc(f->ks);
		f->m.val[id] = malloc(f->vs);
		if (!f->key[id] || !f->m.val[id])
			abort();
	}
	f->vbuf = malloc(f->vs);
	f->kbuf = malloc(f->ks);
	f->abuf = malloc(2 * (size_t)f->vs + f->ks);
	if (!f->vbuf || !f->kbuf || !f->abuf)
		abort();
	make_keys(f, b4 & 3);
	if (b4 & 0x80)
		try_bad_create(f, b4 >> 2);

	BPFMAP_CREATE_OPTS(o, .map_flags = f->flags, .lock_off = f->lock_off);
	const char *name = map_names[(b4 >> 2) % (sizeof(map_names) / sizeof(*map_names))];

#ifdef FUZZ_FLAT
	f->flat = (b3 & 0x80) && !(f->flags & BPFMAP_F_NO_PREALLOC) && !f->percpu && !f->lru;
#endif
	trace("create %s%s key_size %u value_size %u lock_off %d max_entries %u flags %#x",
	      type_name(f), f->flat ? " (flat layout)" : "", f->ks, f->pvs,
	      f->lock_off, f->max_entries, f->flags);
#ifdef FUZZ_FLAT
	if (f->flat) {
		struct map_params p = {
			.type = BPFMAP_TYPE_HASH,
			.key_size = f->ks,
			.value_size = f->vs,
			.max_entries = f->max_entries,
			.map_flags = f->flags,
			.lock_off = f->lock_off,
		};
		int err = 0;

		f->map = flat_create(&p, &err);
		errno = -err;
	} else
#endif
		f->map = bpfmap_create(f->percpu ? (f->lru ? BPFMAP_TYPE_LRU_PERCPU_HASH
							   : BPFMAP_TYPE_PERCPU_HASH)
				       : f->lru	  ? BPFMAP_TYPE_LRU_HASH
				       : f->rhash ? BPFMAP_TYPE_RHASH
						  : BPFMAP_TYPE_HASH,
				       name, f->ks, f->pvs, f->max_entries, &o);
	if (!f->map)
		mismatch("bpfmap_create of a valid map failed: errno %d", errno);
#ifdef FUZZ_FLAT
	trace("  layout: %s", f->map->ops == &flat_ops ? "flat" : "chained");
#endif
	return true;
}

static void teardown(struct fuzz *f)
{
	if (f->map)
		free_later(f->map);
	for (unsigned id = 0; id < NKEYS; id++) {
		free(f->key[id]);
		free(f->m.val[id]);
	}
	free(f->vbuf);
	free(f->kbuf);
	free(f->abuf);
}

enum op {
	OP_UPDATE,
	OP_UPDATE2, /* updates twice as often: maps fill up */
	OP_LOOKUP,
	OP_DELETE,
	OP_LOOKUP_AND_DELETE,
	OP_GET_NEXT_KEY,
	OP_LOOKUP_BATCH,
	OP_LOOKUP_AND_DELETE_BATCH,
	OP_UPDATE_BATCH,
	OP_DELETE_BATCH,
	OP_PROG_VIEW,
	OP_CHECK_ALL,
	OP_NULL_ARGS,
	OP_COUNT
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {.p = data, .n = size};
	struct fuzz f = {0};
	static int trace_checked;

	if (!trace_checked) {
		const char *t = getenv("FUZZ_TRACE");

		trace_on = t && *t && *t != '0';
		trace_checked = 1;
	}
	if (size < 5)
		return 0;
	cur_fuzz = &f;
	setup(&f, &in);
	while (more(&in) && f.op_index < MAX_OPS) {
		f.op_index++;
		switch ((enum op)(u8(&in) % OP_COUNT)) {
		case OP_UPDATE:
		case OP_UPDATE2:
			op_update(&f, &in);
			break;
		case OP_LOOKUP:
			op_lookup(&f, &in);
			break;
		case OP_DELETE:
			op_delete(&f, &in, false);
			break;
		case OP_LOOKUP_AND_DELETE:
			op_delete(&f, &in, true);
			break;
		case OP_GET_NEXT_KEY:
			op_get_next_key(&f, &in);
			break;
		case OP_LOOKUP_BATCH:
			op_lookup_batch(&f, &in, false);
			break;
		case OP_LOOKUP_AND_DELETE_BATCH:
			op_lookup_batch(&f, &in, true);
			break;
		case OP_UPDATE_BATCH:
			op_update_batch(&f, &in);
			break;
		case OP_DELETE_BATCH:
			op_delete_batch(&f, &in);
			break;
		case OP_PROG_VIEW:
			op_prog_view(&f, &in);
			break;
		case OP_CHECK_ALL:
			op_check_all(&f);
			break;
		default:
			op_null_args(&f, &in);
			break;
		}
	}
	op_check_all(&f);
	teardown(&f);
	cur_fuzz = NULL;
	return 0;
}
