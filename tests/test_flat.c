/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * White-box tests of the flat layout of preallocated HASH maps (tables/flat.h):
 * the tag arithmetic, geometry (homes, the node pool and its BUSY tail) and
 * the memory figure, keys past a full home bucket going to its overflow
 * chain (walk order, deletes of head, middle and tail nodes, iteration and
 * batches), every key in one home, deferred reuse of deleted positions
 * (inside and outside read-side sections, a dead node of one home's chain
 * reused by another's), chain lengths after churn, batch cursors by home, a
 * small concurrent run where few homes hold long chains, the lock-free
 * overwrites of word values (when they are used, what turns them off, and a
 * race with positions changing keys), element indices of long keys, an
 * insert that goes on while another thread reclaims, and bpfmap_free with
 * reclamation queued or running.  Maps are made with
 * flat_create() directly, so these tests do not depend on how bpfmap_create()
 * routes preallocated maps, except test_routing, which checks that.
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_rng.h"
#include "test_util.h"
#include "hash/hash_select.h"
#include "hash/word_hash.h"
#include "sync/store_window.h"
#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/pool_slack.h"
#include "util/big_alloc.h"

static struct bpfmap *flat_make(uint32_t ks, uint32_t vs, uint32_t me, uint32_t flags,
				int32_t lock_off)
{
	struct map_params p = {
		.type = BPFMAP_TYPE_HASH,
		.key_size = ks,
		.value_size = vs,
		.max_entries = me,
		.map_flags = flags,
		.lock_off = lock_off,
	};
	int err = 0;
	struct bpfmap *m = flat_create(&p, &err);

	assert_non_null(m);
	assert_ptr_equal(m->ops, &flat_ops);
	return m;
}

/* The map's hash of a u32 key (in a wider buffer: the compiler sees the
 * 8-byte hash path too, dead for 4-byte keys). */
static uint64_t hash_u32_key(const struct flat *f, uint32_t k)
{
	uint64_t buf = k;

	return flat_hash(f, &buf);
}

/* The next u32 key from *next on whose home bucket is h. */
static uint32_t key_with_home(const struct flat *f, uint32_t h, uint32_t *next)
{
	for (;; (*next)++)
		if (flat_home(f, hash_u32_key(f, *next)) == h)
			return (*next)++;
}

/* Where key k (u32) is stored: its position, or FLAT_NONE. */
static uint32_t pos_of(const struct flat *f, uint32_t k)
{
	uint64_t hash = hash_u32_key(f, k);

	return flat_find(f, flat_home(f, hash), flat_place_of(f, hash).tag, &k, 4, k, true);
}

static uint64_t tag_byte(const struct flat *f, uint32_t pos)
{
	return (__atomic_load_n(&f->buckets[pos / 8].tags, __ATOMIC_RELAXED) >> (8 * (pos % 8))) &
	       0xff;
}

static bool tag_is_dead(uint64_t t)
{
	return t == FLAT_WAIT || t == FLAT_QUEUED || t == FLAT_SYNCQ;
}

/* Positions of the table: home slots, then the pool's buckets. */
static uint32_t n_positions(const struct flat *f)
{
	return f->n_buckets * FLAT_SLOTS;
}

/* Positions in [from, to) whose tag is @tag. */
static uint32_t count_tags(const struct flat *f, uint32_t from, uint32_t to, uint64_t tag)
{
	uint32_t n = 0;

	for (uint32_t pos = from; pos < to; pos++)
		n += tag_byte(f, pos) == tag;
	return n;
}

/* Live positions in [from, to). */
static uint32_t count_live(const struct flat *f, uint32_t from, uint32_t to)
{
	uint32_t n = 0;

	for (uint32_t pos = from; pos < to; pos++)
		n += tag_byte(f, pos) >= FLAT_TAG_MIN;
	return n;
}

/* Dead positions (deleted, awaiting reclamation) in [from, to). */
static uint32_t count_dead(const struct flat *f, uint32_t from, uint32_t to)
{
	uint32_t n = 0;

	for (uint32_t pos = from; pos < to; pos++)
		n += tag_is_dead(tag_byte(f, pos));
	return n;
}

/* The pool's EMPTY nodes: never used, or reclaimed. */
static uint32_t free_nodes(const struct flat *f)
{
	return count_tags(f, f->pool_base, f->pool_base + f->n_nodes, FLAT_EMPTY);
}

/* Positions an insert into home h may take without reusing a deleted one:
 * its bucket's EMPTY slots and the pool's EMPTY nodes. */
static uint32_t free_for(const struct flat *f, uint32_t h)
{
	return count_tags(f, h * FLAT_SLOTS, (h + 1) * FLAT_SLOTS, FLAT_EMPTY) + free_nodes(f);
}

/* Home h's chain, head first: its nodes into out[] (up to max), and its
 * length.  Every node is a live node of the pool whose key (word keys) has
 * home h. */
static uint32_t chain_walk(const struct flat *f, uint32_t h, uint32_t *out, uint32_t max)
{
	uint32_t n = 0, ks = f->map.key_size;

	for (uint32_t pos = flat_chain(f, h); pos != FLAT_NONE; pos = flat_node_next(f, pos)) {
		assert_true(flat_is_node(f, pos));
		assert_true(pos < f->pool_base + f->n_nodes);
		assert_true(pos - f->pool_base < __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED));
		assert_true(tag_byte(f, pos) >= FLAT_TAG_MIN);
		if (ks <= 8) {
			uint64_t w = flat_small_at(f, pos, ks);

			assert_int_equal(flat_home(f, flat_hash(f, &w)), h);
		}
		if (out && n < max)
			out[n] = pos;
		n++;
		assert_true(n <= f->n_nodes); /* no cycle */
	}
	return n;
}

static uint32_t chain_len(const struct flat *f, uint32_t h)
{
	return chain_walk(f, h, NULL, 0);
}

/* The positions past the pool's last node (in its last bucket) are BUSY,
 * never handed out. */
static void check_pool_tail(const struct flat *f)
{
	assert_int_equal(f->n_buckets, f->n_homes + (f->n_nodes + FLAT_SLOTS - 1) / FLAT_SLOTS);
	assert_true(__atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED) <= f->n_nodes);
	for (uint32_t pos = f->pool_base + f->n_nodes; pos < n_positions(f); pos++)
		assert_int_equal(tag_byte(f, pos), FLAT_BUSY);
}

/* Every home's bucket and chain well formed, and the pool's live nodes
 * exactly those in chains: returns the live elements. */
static uint32_t check_homes(const struct flat *f)
{
	uint32_t n = 0, nodes = 0;

	for (uint32_t h = 0; h < f->n_homes; h++) {
		uint32_t c = chain_len(f, h);

		n += count_live(f, h * FLAT_SLOTS, (h + 1) * FLAT_SLOTS) + c;
		nodes += c;
	}
	assert_int_equal(nodes, count_live(f, f->pool_base, n_positions(f)));
	check_pool_tail(f);
	return n;
}

/* Generic keys of @ks bytes: id in the first (up to) 4, a pattern after. */
static void mk_key(unsigned char *key, uint32_t ks, uint32_t id)
{
	memset(key, 0x5a, ks);
	memcpy(key, &id, ks < 4 ? ks : 4);
}

/* Out of line: inlined where the key is a uint32_t, -O3 (Release) warns
 * that the 8-byte keys' branch of the hash, never taken there, would read
 * past it. */
static __attribute__((noinline)) uint32_t home_of_key(const struct flat *f, const void *key)
{
	return flat_home(f, flat_hash(f, key));
}

/* Where @key is: its position, or FLAT_NONE (any key size). */
static uint32_t pos_find(const struct flat *f, const void *key)
{
	uint32_t ks = f->map.key_size, pos;
	uint64_t hash = flat_hash(f, key);

	bpfmap_read_lock(); /* long keys are compared in one (sections nest) */
	pos = flat_find(f, flat_home(f, hash), flat_place_of(f, hash).tag, key, ks,
			ks <= 8 ? flat_small_key(key, ks) : 0, true);
	bpfmap_read_unlock();
	return pos;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The two key sets (u32) are equal, and neither holds a key twice. */
static void assert_same_keys(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
	uint32_t *x = malloc((na + 1) * sizeof(*x)), *y = malloc((nb + 1) * sizeof(*y));

	assert_non_null(x);
	assert_non_null(y);
	memcpy(x, a, na * sizeof(*x));
	memcpy(y, b, nb * sizeof(*y));
	qsort(x, na, sizeof(*x), cmp_u32);
	qsort(y, nb, sizeof(*y), cmp_u32);
	for (uint32_t i = 1; i < na; i++)
		assert_int_not_equal(x[i - 1], x[i]);
	for (uint32_t i = 1; i < nb; i++)
		assert_int_not_equal(y[i - 1], y[i]);
	assert_int_equal(na, nb);
	for (uint32_t i = 0; i < na; i++)
		assert_int_equal(x[i], y[i]);
	free(x);
	free(y);
}

/* The keys (u32) of a whole get_next_key walk, in walk order; their number. */
static uint32_t walk_keys(struct bpfmap *m, uint32_t *out, uint32_t max)
{
	uint32_t n = 0, k;
	const uint32_t *prev = NULL;

	while (bpfmap_get_next_key(m, prev, &k) == 0) {
		assert_true(n < max);
		out[n] = k;
		prev = &out[n++];
	}
	return n;
}

/* The keys (u32) of a whole lookup_batch pass in calls of up to @chunk
 * elements (at least any home's); their number.  Values are checked to be
 * @vmul * key + 1 (u64 values) unless vmul is 0. */
static uint32_t batch_keys(struct bpfmap *m, uint32_t *out, uint32_t max, uint32_t chunk,
			   uint64_t vmul)
{
	uint64_t *vals = malloc((size_t)chunk * m->value_size);
	uint32_t total = 0, cursor = 0;
	void *in = NULL;

	assert_non_null(vals);
	for (;;) {
		uint32_t count = chunk;
		int ret;

		assert_true(total + chunk <= max);
		errno = 0;
		ret = bpfmap_lookup_batch(m, in, &cursor, out + total, vals, &count, NULL);
		if (vmul && m->value_size == 8)
			for (uint32_t i = 0; i < count; i++)
				assert_int_equal(vals[i], vmul * out[total + i] + 1);
		total += count;
		if (ret) {
			assert_int_equal(ret, -ENOENT);
			assert_int_equal(cursor, to_flat(m)->cursor_end);
			break;
		}
		in = &cursor;
	}
	free(vals);
	return total;
}

/* The batch unit of the element at @pos of home h (flat_iter.c: the home,
 * then the top batch_sub_bits bits of the tag). */
static uint32_t unit_of(const struct flat *f, uint32_t h, uint32_t pos)
{
	uint32_t tag = (uint32_t)tag_byte(f, pos);

	return (h << f->batch_sub_bits) + ((tag & 0x7f) >> (7 - f->batch_sub_bits));
}

/* The 4-byte keys of batch unit @u, from the tables (single-threaded). */
static uint32_t unit_keys(const struct flat *f, uint32_t u, uint32_t *out)
{
	uint32_t h = u >> f->batch_sub_bits, n = 0;

	for (uint32_t pos = h * 8; pos < h * 8 + 8; pos++)
		if (tag_byte(f, pos) >= FLAT_TAG_MIN && unit_of(f, h, pos) == u)
			memcpy(&out[n++], flat_key_at(f, pos), 4);
	for (uint32_t pos = flat_chain(f, h); pos != FLAT_NONE; pos = flat_node_next(f, pos))
		if (unit_of(f, h, pos) == u)
			memcpy(&out[n++], flat_key_at(f, pos), 4);
	return n;
}

/*
 * One lookup_batch call of 4-byte keys from @cursor (UINT32_MAX: NULL) with
 * room for @cap, against the model: the whole units from the cursor's on,
 * in order, up to the first that does not fit; the cursor after them (or
 * the end); -ENOSPC when not even the first fits.  Returns the cursor out,
 * and the keys in @got (room for the map's max_entries).
 */
static uint32_t check_batch_call(struct bpfmap *m, uint32_t cursor, uint32_t cap, uint32_t *got,
				 uint32_t *n_got)
{
	struct flat *f = to_flat(m);
	uint32_t units = f->n_homes << f->batch_sub_bits, u = cursor == UINT32_MAX ? 0 : cursor;
	uint32_t *want = malloc((m->max_entries + 1) * sizeof(*want)), nw = 0, out = 0xdead;
	uint32_t count = cap, *unit = malloc((m->max_entries + 1) * sizeof(*unit));
	uint64_t *vals = malloc(((size_t)cap + 1) * 8);
	int want_ret = -ENOENT, ret;

	assert_non_null(want);
	assert_non_null(unit);
	assert_non_null(vals);
	for (; u < units; u++) {
		uint32_t n = unit_keys(f, u, unit);

		if (n > cap - nw) {
			want_ret = nw ? 0 : -ENOSPC;
			break;
		}
		memcpy(want + nw, unit, n * sizeof(*unit));
		nw += n;
	}
	if (u >= units)
		u = f->cursor_end;
	ret = bpfmap_lookup_batch(m, cursor == UINT32_MAX ? NULL : &cursor, &out, got, vals, &count,
				  NULL);
	assert_int_equal(ret, want_ret);
	assert_int_equal(count, want_ret == -ENOSPC ? 0 : nw);
	if (want_ret != -ENOSPC)
		assert_int_equal(out, u);
	assert_same_keys(got, count, want, nw);
	*n_got = count;
	free(want);
	free(unit);
	free(vals);
	return want_ret == -ENOSPC ? cursor : u;
}

/* A whole batch walk with room for @cap a call, each call checked; the
 * keys seen (all of the map's unless a unit holds more than @cap). */
static uint32_t check_batch_walk(struct bpfmap *m, uint32_t cap, uint32_t *got)
{
	uint32_t cursor = UINT32_MAX, total = 0, n;

	for (;;) {
		uint32_t next = check_batch_call(m, cursor, cap, got + total, &n);

		total += n;
		if (next == cursor || next == to_flat(m)->cursor_end)
			return total;
		cursor = next;
	}
}

static void test_swar(void **state)
{
	(void)state;
	uint64_t x = 0x243f6a8885a308d3ULL;

	for (int n = 0; n < 200000; n++) {
		uint64_t tags = rng_next(&x);
		unsigned t = (unsigned)(x >> 40) & 0xff;

		/* Sprinkle the special values in. */
		if (n & 1)
			tags &= 0x03ff03ff03ff03ffULL | (n & 2 ? 0xff00ff00ff00ff00ULL : 0);
		if (n & 4)
			t |= FLAT_TAG_MIN;
		uint64_t m = flat_match(tags, t * FLAT_BYTES_LO), live = flat_live(tags);

		for (int i = 0; i < 8; i++) {
			unsigned byte = (unsigned)(tags >> (8 * i)) & 0xff;

			assert_int_equal(!!(m & (0x80ULL << (8 * i))), byte == t);
			assert_int_equal(!!(live & (0x80ULL << (8 * i))), byte >= FLAT_TAG_MIN);
			assert_int_equal(m & ~FLAT_BYTES_HI, 0);
		}
	}
	/* Tags are live tags, and home and tag are the fastrange of the hash
	 * onto 128 cells per home. */
	struct flat f;

	memset(&f, 0, sizeof(f));
	for (uint32_t n = 1; n < 5000; n += n < 64 ? 1 : 97) {
		f.n_homes = n;
		for (uint32_t i = 0; i < 4096; i++) {
			uint64_t h = rng_next(&x);
			uint32_t t = flat_place_of(&f, h).tag;
			uint64_t cell = (uint64_t)(((unsigned __int128)h * (128ULL * n)) >> 64);

			assert_true(t >= FLAT_TAG_MIN && t <= 255);
			assert_true(flat_home(&f, h) < n);
			assert_true(cell == (uint64_t)flat_home(&f, h) * 128 + (t - FLAT_TAG_MIN));
		}
	}
}


/* An element's value bytes: its value (not per-CPU here), and the
 * version of a value over 8 bytes or with a lock (flat_value_version). */
static uint32_t value_bytes(const struct flat *f)
{
	return f->value_stride + (flat_versioned(f) ? FLAT_VERSION_BYTES : 0);
}

/* A pool array's share (as flat_count_pool): all @whole bytes of it from
 * the heap, or @unit per node or element handed out from mmap. */
static void pool_share(const void *array, size_t whole, size_t unit, bool per_elem,
		       size_t *fixed, size_t *node, size_t *elem)
{
	if (!big_is_mapped(array))
		*fixed += whole;
	else
		*(per_elem ? elem : node) += unit;
}

/* Did every pool array come from mmap (big_alloc.h)?  Then the figure
 * counts what was touched; else some of the pool whole. */
static bool pool_mapped(const struct flat *f)
{
	return big_is_mapped(f->buckets) && big_is_mapped(f->node_next) &&
	       big_is_mapped(f->keys) && big_is_mapped(f->values_mem) &&
	       (!f->elems || big_is_mapped(f->elems));
}

/* mem_usage as tables/flat.h specifies it: what creation touched
 * (fixed_bytes), plus the pool's buckets that nodes were handed out from
 * (whole buckets of node_bytes each), plus the elements handed out (keys
 * over 8 bytes, elem_bytes each); an array from the heap (a small map's)
 * counts whole from the start. */
static size_t mem_want(const struct flat *f)
{
	bool long_keys = f->map.key_size > 8;
	bool by_elem = long_keys || f->value_stride >= FLAT_VALUE_ELEM_MIN;
	size_t value = value_bytes(f);
	size_t n_pos = (size_t)f->n_buckets * FLAT_SLOTS, node_pos = n_pos - f->pool_base;
	/* Per position: an element index (long keys), a key and an index (big
	 * values), or a key and a value. */
	size_t pos = long_keys ? sizeof(uint32_t)
			       : f->key_stride + (by_elem ? sizeof(uint32_t) : value);
	size_t fixed = sizeof(*f) +
		       (size_t)f->n_homes * (sizeof(struct flat_bucket) + sizeof(struct flat_home)) +
		       (size_t)f->n_homes * FLAT_SLOTS * pos +
		       3 * sizeof(uint64_t) * (size_t)f->bits_words + count_mem(&f->count) +
		       (f->dead_shards != f->count.shards ? (f->dead_mask + 1) * 64 : 0);
	/* Per node: its share of its bucket's tags and seq, its position's
	 * bytes, and its link (chain, free list). */
	size_t node = 0, elem = 0;
	uint32_t hwm = __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
	uint32_t elems = __atomic_load_n(&f->next_elem, __ATOMIC_RELAXED);

	pool_share(f->buckets, (size_t)(f->n_buckets - f->n_homes) * sizeof(struct flat_bucket),
		   sizeof(struct flat_bucket) / FLAT_SLOTS, false, &fixed, &node, &elem);
	pool_share(f->node_next, (size_t)f->n_nodes * sizeof(uint32_t), sizeof(uint32_t), false,
		   &fixed, &node, &elem);
	pool_share(f->keys, (long_keys ? n_pos : node_pos) * f->key_stride, f->key_stride,
		   long_keys, &fixed, &node, &elem);
	pool_share(f->values_mem, (by_elem ? n_pos : node_pos) * value, value, by_elem, &fixed,
		   &node, &elem);
	if (by_elem)
		pool_share(f->elems, node_pos * sizeof(uint32_t), sizeof(uint32_t), false, &fixed,
			   &node, &elem);
	assert_int_equal(f->fixed_bytes, fixed);
	assert_int_equal(f->node_bytes, node);
	assert_int_equal(f->elem_bytes, elem);
	if (!by_elem)
		assert_int_equal(elems, 0);
	return fixed + ROUND_UP((size_t)hwm, FLAT_SLOTS) * f->node_bytes +
	       (size_t)elems * f->elem_bytes;
}

/* The pool's nodes for max_entries elements of @slot bytes: max_entries,
 * POOL_SLACK of them (a node costs slot + 12 bytes) within
 * POOL_SLACK_BYTES, at least POOL_SLACK_MIN, and max_entries / 32. */
static uint32_t nodes_for(uint32_t me, uint32_t slot)
{
	uint64_t slack = POOL_SLACK_BYTES / (slot + 12);

	slack = slack > POOL_SLACK ? POOL_SLACK : slack;
	slack = slack < POOL_SLACK_MIN ? POOL_SLACK_MIN : slack;
	return (uint32_t)(me + slack + me / 32);
}

/* Homes for max_entries elements: one home slot per element (dense), or
 * 8/7 of that. */
static uint32_t homes_of(uint32_t me, bool dense)
{
	uint64_t slots = dense ? me : ((uint64_t)me * 8 + 6) / 7;
	uint64_t n = (slots + 7) / 8;

	return n ? (uint32_t)n : 1;
}

/* Is @n_homes what flat_homes_for gives a map of @me elements, @ks-byte keys
 * and @slot-byte elements (key and value strides)?  Dense for elements of
 * at most 24 bytes, as specified; flat.c was seen switching to dense for
 * keys of at most 8 bytes while these tests were written: either rule (the
 * one place these tests encode it).  Word keys of maps of two elements or
 * more get at least two homes, to match by key. */
static bool homes_ok(uint32_t n_homes, uint32_t me, uint32_t ks, uint32_t slot)
{
	uint32_t least = (ks == 4 || ks == 8) && me >= 2 ? 2 : 1;
	uint32_t a = homes_of(me, slot <= 24), b = homes_of(me, ks <= 8);

	return n_homes == (a < least ? least : a) || n_homes == (b < least ? least : b);
}

/* Geometry as specified, for a fresh map: homes, the pool after them, its
 * BUSY tail, nothing else touched, and the memory figure. */
static void check_fresh_geometry(const struct flat *f)
{
	uint32_t me = f->map.max_entries, ks = f->map.key_size, vs = f->map.value_size;
	uint32_t kstride = ks <= 4 ? 4 : ROUND_UP(ks, 8);
	uint32_t vstride = ROUND_UP(vs, 8);
	/* Values over 8 bytes have a version, apart from them. */
	uint32_t vbytes = vstride + (vs > 8 || map_has_lock(&f->map) ? FLAT_VERSION_BYTES : 0);
	uint32_t nodes = nodes_for(me, kstride + vbytes);

	assert_int_equal(f->key_stride, kstride);
	assert_int_equal(f->value_stride, vstride);
	assert_int_equal(value_bytes(f), vbytes);
	assert_true(homes_ok(f->n_homes, me, ks, kstride + vbytes));
	assert_int_equal(f->n_nodes, nodes);
	assert_int_equal(f->pool_base, f->n_homes * FLAT_SLOTS);
	assert_int_equal(f->n_buckets, f->n_homes + (nodes + 7) / 8);
	assert_int_equal(f->bits_words, (f->n_buckets + 63) / 64);
	assert_int_equal(f->cursor_end, roundup_pow_of_two_u32(me));
	assert_true(f->node_soft_cap >= nodes - me && f->node_soft_cap <= nodes);
	assert_int_equal(f->elems != NULL, ks > 8 || vstride >= FLAT_VALUE_ELEM_MIN);
	assert_int_equal(f->node_hwm, 0);
	assert_int_equal(f->next_elem, 0);
	for (uint32_t h = 0; h < f->n_homes; h++)
		assert_int_equal(f->homes[h].chain, FLAT_NONE);
	check_pool_tail(f);
	assert_int_equal(count_tags(f, 0, n_positions(f), FLAT_EMPTY), f->pool_base + nodes);
	assert_int_equal(bpfmap_mem_usage(&f->map), mem_want(f));
	assert_int_equal(bpfmap_mem_usage(&f->map), f->fixed_bytes);
}

static void test_geometry(void **state)
{
	(void)state;
	static const uint32_t sizes[][2] = { { 8, 8 }, { 4, 8 }, { 4, 4 }, { 1, 1 }, { 16, 8 },
					     { 16, 16 }, { 32, 8 }, { 64, 8 }, { 4, 100 },
					     { 100, 4 }, { 128, 128 }, { 1024, 8 }, { 8, 1000 } };
	static const uint32_t small_me[] = { 1, 7, 8, 9, 63, 64, 65, 1000 };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t ks = sizes[i][0], vs = sizes[i][1], me = 20000;
		struct bpfmap *m = flat_make(ks, vs, me, 0, -1);
		struct flat *f = to_flat(m);
		uint32_t slot = f->key_stride + value_bytes(f);
		/* A 1-byte key has 256 values: fill what there is. */
		uint32_t n = ks >= 3 ? me : 1u << (8 * ks);
		unsigned char key[1024];
		char *v = calloc(1, vs);

		assert_non_null(v);
		check_fresh_geometry(f);
		assert_int_equal(f->cursor_end, 32768);
		for (uint32_t k = 0; k < n; k++) {
			mk_key(key, ks, k);
			assert_int_equal(bpfmap_update_elem(m, key, v, BPFMAP_NOEXIST), 0);
		}
		assert_int_equal(check_homes(f), n);
		/* Nodes handed out in order; one element per position filled. */
		assert_int_equal(f->node_hwm, count_live(f, f->pool_base, n_positions(f)));
		if (ks > 8)
			assert_int_equal(f->next_elem, n);
		assert_int_equal(bpfmap_mem_usage(m), mem_want(f));
		double per = (double)bpfmap_mem_usage(m) / n;
		/* Budget: a full map touches at most 1/3 more than the ideal
		 * (key and value strides per element; long keys their index per
		 * position), plus 24 bytes an element of tags, locks, chains. */
		double ideal = ks > 8 ? slot + 4.0 : slot;

		print_message("  key %4u value %4u: %u homes, %u nodes (%u used: %.1f%% of %u "
			      "keys), %.2f B/elem (ideal %.0f)\n",
			      ks, vs, f->n_homes, f->n_nodes, f->node_hwm,
			      100.0 * f->node_hwm / n, n, per, ideal);
		/* (not a 1-byte key's 256: the fixed part is for 20000; nor a
		 * pool held whole from the heap) */
		if (n == me && pool_mapped(f))
			assert_true(per <= ideal * 4 / 3 + 24);
		free(v);
		bpfmap_free(m);
	}
	/* Small maps, down to one home. */
	for (size_t i = 0; i < ARRAY_SIZE(small_me); i++)
		for (uint32_t ks = 4; ks <= 64; ks *= 4) {
			struct bpfmap *m = flat_make(ks, 8, small_me[i], 0, -1);

			check_fresh_geometry(to_flat(m));
			if (small_me[i] <= 8 && ks == 4)
				assert_int_equal(to_flat(m)->n_homes, small_me[i] >= 2 ? 2 : 1);
			if (small_me[i] <= 7 && ks == 16) /* long keys: 8/7 of a slot */
				assert_int_equal(to_flat(m)->n_homes, 1);
			bpfmap_free(m);
		}
}

/*
 * The memory figure of full maps of 8-byte keys and values: at most 24
 * bytes an element; it grows as nodes are first used and never shrinks.
 * Arrays from the heap (under BIG_ALLOC_MMAP_MIN, as all of a 1000-entry
 * map's and some of a 16384-entry map's; every one in ASan builds) are
 * held whole from the start, the pool's 1024 spare nodes and more with
 * them, and count so; the bound is for maps whose pool is address space
 * until used.
 */
static void test_mem_usage(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 1000, 16384, 100000 };
	double per[ARRAY_SIZE(sizes)], per_scaled[ARRAY_SIZE(sizes)];
	bool heap[ARRAY_SIZE(sizes)];

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t me = sizes[i];
		struct bpfmap *m = flat_make(8, 8, me, 0, -1);
		struct flat *f = to_flat(m);
		size_t fresh = bpfmap_mem_usage(m), full, prev;
		uint64_t k, v;

		check_fresh_geometry(f);
		prev = fresh;
		for (k = 0; k < me; k++) {
			v = k;
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
			if (k % 97 == 0 || k == me - 1) {
				size_t now = bpfmap_mem_usage(m);

				assert_true(now >= prev);
				assert_int_equal(now, mem_want(f));
				prev = now;
			}
		}
		full = bpfmap_mem_usage(m);
		heap[i] = !pool_mapped(f);
		/* Chains took nodes, which count as touched, but in a map whose
		 * pool came from the heap and counted whole from the start. */
		assert_true(f->node_bytes ? full > fresh : full == fresh);
		assert_int_equal(full, mem_want(f));
		per[i] = (double)full / me;
		per_scaled[i] = (double)(full - sizeof(*f)) / me;
		print_message("  %6u x (8 + 8): %.2f B/elem (%.2f without the per-map constants), "
			      "%u of %u nodes used (%.1f%% of keys in chains)\n",
			      me, per[i], per_scaled[i], f->node_hwm, f->n_nodes,
			      100.0 * f->node_hwm / me);
		/* Emptied and reclaimed: the figure stays. */
		for (k = 0; k < me; k++)
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		rcu_wait_deferred();
		flat_reclaim_sync(f);
		rcu_wait_deferred();
		assert_int_equal(flat_dead_total(f), 0);
		assert_int_equal(bpfmap_mem_usage(m), full);
		assert_int_equal(bpfmap_mem_usage(m), mem_want(f));
		bpfmap_free(m);
	}
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		assert_true(per[i] <= 24.0 || heap[i]);
}

/*
 * Tiny maps, down to one home (up to 8 elements of 4-byte keys): every size
 * works up to max_entries, then -E2BIG.  Inside a read-side section, churn uses up every node of the
 * pool (and then reuses dead ones); the positions past the pool's last node
 * stay BUSY throughout, and no key ever lands there.
 */
static void test_tiny_maps(void **state)
{
	(void)state;
	for (uint32_t ks = 4; ks <= 16; ks += 12)
		for (uint32_t me = 1; me <= 20; me++) {
			struct bpfmap *m = flat_make(ks, 8, me, BPFMAP_F_ZERO_SEED, -1);
			struct flat *f = to_flat(m);
			uint32_t steps = 2 * (f->n_nodes + f->pool_base), id;
			unsigned char key[16];
			uint64_t v;

			assert_true(homes_ok(f->n_homes, me, ks, f->key_stride + value_bytes(f)));
			check_pool_tail(f);
			for (id = 0; id < me; id++) {
				mk_key(key, ks, id);
				v = id * 10;
				assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
			}
			mk_key(key, ks, me);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), E2BIG);
			assert_int_equal(walk_count(m, ks), me);
			assert_int_equal(check_homes(f), me);
			for (id = 0; id < me; id++) {
				mk_key(key, ks, id);
				assert_true(pos_find(f, key) < f->pool_base + f->node_hwm);
				assert_int_equal(bpfmap_lookup_elem(m, key, &v), 0);
				assert_int_equal(v, id * 10);
			}
			bpfmap_read_lock();
			for (uint32_t s = 0; s < steps; s++) {
				mk_key(key, ks, s);
				assert_int_equal(bpfmap_delete_elem(m, key), 0);
				mk_key(key, ks, s + me);
				v = (s + me) * 10;
				assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
				assert_true(pos_find(f, key) < f->pool_base + f->n_nodes);
				mk_key(key, ks, s + 2 * me);
				assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), E2BIG);
			}
			/* Every node went (the pool ran out: reuses came after). */
			assert_int_equal(f->node_hwm, f->n_nodes);
			assert_int_equal(free_nodes(f), 0);
			assert_int_equal(check_homes(f), me);
			bpfmap_read_unlock();
			rcu_wait_deferred();
			flat_reclaim_sync(f);
			rcu_wait_deferred();
			assert_int_equal(flat_dead_total(f), 0);
			assert_int_equal(check_homes(f), me);
			assert_int_equal(walk_count(m, ks), me);
			for (id = 0; id < steps + me; id++) {
				mk_key(key, ks, id);
				if (id < steps) {
					assert_errno(bpfmap_lookup_elem(m, key, &v), ENOENT);
					continue;
				}
				assert_int_equal(bpfmap_lookup_elem(m, key, &v), 0);
				assert_int_equal(v, id * 10);
			}
			bpfmap_free(m);
		}
}

/* Check home h's chain against @keys (u32), head first. */
static void check_chain_keys(const struct flat *f, uint32_t h, const uint32_t *keys, uint32_t n)
{
	uint32_t pos[64];

	assert_true(n <= 64);
	assert_int_equal(chain_walk(f, h, pos, 64), n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(flat_small_at(f, pos[i], 4), keys[i]);
		assert_int_equal(pos_of(f, keys[i]), pos[i]);
	}
}

/*
 * Fill home 0 past its bucket: the first eight keys take its slots in
 * order, the rest nodes linked at the chain's head (nodes handed out in
 * order), so the chain walks newest first; other homes' keys stay in their
 * own buckets.  All are found by lookups, walked (home slots, then nodes,
 * by position) and batched (the home's bucket, then its chain, in one call
 * or none).  Deleting the chain's head, a middle node and its tail unlinks
 * each; a deleted home slot or node waits for a grace period, and then goes
 * back (nodes to the free list, reused before new ones).
 */
static void test_chain(void **state)
{
	(void)state;
	const uint32_t me = 200;
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t next = 0, keys[20], expect[32], got[32];
	uint64_t v;

	assert_int_equal(f->n_homes, 25);
	for (uint32_t i = 0; i < 20; i++) {
		keys[i] = key_with_home(f, 0, &next);
		v = keys[i] + 1;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		uint32_t pos = pos_of(f, keys[i]);
		if (i < 8) {
			assert_int_equal(pos, i); /* the home bucket's first EMPTY slot */
			assert_int_equal(flat_chain(f, 0), FLAT_NONE);
		} else {
			assert_int_equal(pos, f->pool_base + i - 8);
			assert_int_equal(flat_chain(f, 0), pos); /* linked at the head */
			assert_int_equal(chain_len(f, 0), i - 7);
			assert_int_equal(f->node_hwm, i - 7);
		}
	}
	for (uint32_t i = 0; i < 12; i++)
		expect[i] = keys[19 - i];
	check_chain_keys(f, 0, expect, 12);
	bpfmap_read_lock();
	for (uint32_t i = 0; i < 20; i++) {
		uint64_t *p = bpfmap_lookup(m, &keys[i]);
		void *vp;

		assert_non_null(p);
		assert_ptr_equal(p, flat_value_at(f, pos_of(f, keys[i])));
		assert_int_equal(*p, keys[i] + 1);
		assert_int_equal(bpfmap_lookup_bulk(m, &keys[i], 1, &vp), 1);
		assert_ptr_equal(vp, p);
	}
	bpfmap_read_unlock();
	for (uint32_t i = 0; i < 20; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, keys[i] + 1);
	}
	/* Other homes' keys: their own buckets, no chain. */
	uint32_t k1 = key_with_home(f, 1, &next), k2 = key_with_home(f, 2, &next);
	v = k1 + 1;
	assert_int_equal(bpfmap_update_elem(m, &k1, &v, 0), 0);
	v = k2 + 1;
	assert_int_equal(bpfmap_update_elem(m, &k2, &v, 0), 0);
	assert_int_equal(pos_of(f, k1), 8);
	assert_int_equal(pos_of(f, k2), 16);
	assert_int_equal(flat_chain(f, 1), FLAT_NONE);
	assert_int_equal(flat_chain(f, 2), FLAT_NONE);
	assert_int_equal(check_homes(f), 22);
	/* The walk: every key once (home by home, chains included). */
	for (uint32_t i = 0; i < 8; i++)
		expect[i] = keys[i];
	expect[8] = k1;
	expect[9] = k2;
	for (uint32_t i = 8; i < 20; i++)
		expect[i + 2] = keys[i];
	assert_int_equal(walk_keys(m, got, 32), 22);
	assert_same_keys(got, 22, expect, 22);
	assert_int_equal(batch_keys(m, got, 32, 32, 1), 22);
	assert_same_keys(got, 22, expect, 22);

	/* Batches by unit (an eighth of a home, by tag bits): every call
	 * returns whole units in order, whatever the room. */
	uint32_t bk[32], n_bk;
	static const uint32_t caps[] = { 1, 2, 3, 5, 8, 19, 20, 21, 32 };
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++) {
		(void)check_batch_call(m, UINT32_MAX, caps[c], bk, &n_bk);
		if (check_batch_walk(m, caps[c], got) == 22)
			assert_same_keys(got, 22, expect, 22);
	}

	/* Deletes of the chain's head, a middle node and its tail, and of a
	 * home slot: each position waits for a grace period. */
	static const uint32_t gone[] = { 19, 14, 8, 3 };
	uint32_t gone_pos[4], live[20], nlive;
	for (uint32_t g = 0; g < 4; g++) {
		uint32_t pos = pos_of(f, keys[gone[g]]);

		gone_pos[g] = pos;
		assert_int_equal(flat_is_node(f, pos), gone[g] >= 8);
		assert_int_equal(bpfmap_delete_elem(m, &keys[gone[g]]), 0);
		assert_true(tag_is_dead(tag_byte(f, pos)));
		assert_errno(bpfmap_lookup_elem(m, &keys[gone[g]], &v), ENOENT);
		/* The chain without it, the others in order. */
		nlive = 0;
		for (uint32_t i = 19; i >= 8; i--) {
			bool del = false;

			for (uint32_t j = 0; j <= g; j++)
				del |= gone[j] == i;
			if (!del)
				live[nlive++] = keys[i];
		}
		check_chain_keys(f, 0, live, nlive);
		assert_int_equal(check_homes(f), 21 - g);
		assert_int_equal(walk_count(m, 4), 21 - g);
	}
	for (uint32_t i = 0; i < 20; i++) {
		bool del = i == 19 || i == 14 || i == 8 || i == 3;

		if (del)
			continue;
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, keys[i] + 1);
	}
	/* A new key of home 0 while slot 3 waits: a new node, at the head. */
	uint32_t x1 = key_with_home(f, 0, &next);
	v = x1 + 1;
	assert_int_equal(bpfmap_update_elem(m, &x1, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(pos_of(f, x1), f->pool_base + 12);
	assert_int_equal(flat_chain(f, 0), pos_of(f, x1));
	/* Home 0's 17 elements, batch walks checked unit by unit. */
	nlive = 0;
	for (uint32_t i = 0; i < 8; i++)
		if (i != 3)
			expect[nlive++] = keys[i];
	expect[nlive++] = x1;
	for (uint32_t i = 18; i >= 9; i--)
		if (i != 14)
			expect[nlive++] = keys[i];
	assert_int_equal(nlive, 17);
	assert_int_equal(check_batch_walk(m, 32, got), 17 + 2);
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++)
		(void)check_batch_walk(m, caps[c], got);
	/* Reclaimed: EMPTY again, nodes on the free list. */
	flat_reclaim_sync(f);
	rcu_wait_deferred();
	for (uint32_t g = 0; g < 4; g++)
		assert_int_equal(tag_byte(f, gone_pos[g]), FLAT_EMPTY);
	assert_int_equal(flat_dead_total(f), 0);
	/* Back again: the slot first, then the freed nodes before new ones. */
	uint32_t hwm = f->node_hwm, taken[4];
	for (uint32_t g = 0; g < 4; g++) {
		uint32_t k = keys[gone[3 - g]], pos;

		v = k + 1;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		pos = pos_of(f, k);
		taken[g] = pos;
		assert_int_equal(flat_chain(f, 0) == pos, g > 0);
		if (g == 0) {
			assert_int_equal(pos, 3); /* the EMPTY slot of its home bucket */
			continue;
		}
		assert_true(pos == gone_pos[0] || pos == gone_pos[1] || pos == gone_pos[2]);
		for (uint32_t j = 1; j < g; j++)
			assert_int_not_equal(taken[j], pos);
	}
	assert_int_equal(f->node_hwm, hwm);
	uint32_t x2 = key_with_home(f, 0, &next);
	assert_int_equal(bpfmap_update_elem(m, &x2, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(f->node_hwm, hwm + 1);
	assert_int_equal(pos_of(f, x2), f->pool_base + hwm);
	assert_int_equal(chain_len(f, 0), 14);
	assert_int_equal(check_homes(f), 24);

	/* lookup_and_delete_batch of home 0 (room for its 22 exactly): its
	 * units, bucket and chain emptied, the cursor at the next unit that
	 * holds a key. */
	uint32_t dk[32], cursor, count = 22, n_u;
	uint64_t dv[32];
	assert_int_equal(bpfmap_lookup_and_delete_batch(m, NULL, &cursor, dk, dv, &count, NULL), 0);
	assert_int_equal(count, 22);
	assert_true(cursor >= 1u << f->batch_sub_bits);
	n_u = unit_keys(f, cursor, dk + 22);
	assert_true(n_u > 0 && n_u <= 2);
	for (uint32_t i = 0; i < 22; i++)
		assert_int_equal(home_of_key(f, &dk[i]), 0);
	assert_int_equal(flat_chain(f, 0), FLAT_NONE);
	assert_int_equal(count_live(f, 0, 8), 0);
	assert_int_equal(count_live(f, f->pool_base, n_positions(f)), 0);
	assert_int_equal(walk_count(m, 4), 2);
	bpfmap_free(m);
}

/*
 * The last home's keys past its bucket go to nodes of the pool (after the
 * homes), not to bucket 0 or any other home's bucket: nothing wraps round.
 * The walk finds its bucket's keys, then the nodes; one batch from the last
 * home holds them all and ends at the kernel's bucket count.
 */
static void test_last_home(void **state)
{
	(void)state;
	const uint32_t me = 8000;
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t last = f->n_homes - 1, next = 0, keys[11], got[16];
	uint64_t v = 1;

	assert_int_equal(f->n_homes, 1000);
	for (uint32_t i = 0; i < 11; i++) {
		keys[i] = key_with_home(f, last, &next);
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(pos_of(f, keys[i]),
				 i < 8 ? last * 8 + i : f->pool_base + i - 8);
	}
	assert_int_equal(f->pool_base / 8, last + 1); /* the pool's first bucket */
	assert_int_equal(count_live(f, 0, last * 8), 0); /* no other bucket took one */
	assert_int_equal(chain_len(f, last), 3);
	for (uint32_t i = 0; i < 11; i++)
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
	assert_int_equal(walk_keys(m, got, 16), 11);
	assert_same_keys(got, 11, keys, 11);
	uint32_t bk[32], cursor = last, count = 32;
	uint64_t bv[32];
	assert_errno(bpfmap_lookup_batch(m, &cursor, &cursor, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, 11);
	assert_int_equal(cursor, f->cursor_end);
	/* From the start: the empty homes are passed over. */
	count = 11;
	assert_errno(bpfmap_lookup_batch(m, NULL, &cursor, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, 11);
	assert_int_equal(cursor, f->cursor_end);
	assert_same_keys(bk, 11, keys, 11);
	bpfmap_free(m);
}

/*
 * Every key in one home: 8 in its bucket, the rest (up to max_entries - 8)
 * in its chain, newest first; -E2BIG at max_entries, for that home and any
 * other.  Delete and re-insert over and over outside sections: no spurious
 * E2BIG (an insert that finds no free position waits for a reclamation).
 * One batch holds the home's elements (or none), and lookup_and_delete_batch
 * empties bucket and chain.  Maps of 3, 5 and 125 homes, and one of 1 home
 * whose keys are any.
 */
static void check_one_home(uint32_t me, uint32_t home)
{
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t next = 0, *keys = calloc(me, 4), *got = calloc(me + 1, 4);
	uint64_t *bv = calloc(me + 1, 8), v = 0;

	assert_non_null(keys);
	assert_non_null(got);
	assert_non_null(bv);
	assert_true(home < f->n_homes);
	for (uint32_t i = 0; i < me; i++) {
		keys[i] = key_with_home(f, home, &next);
		v = i;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		if (i >= 8)
			assert_int_equal(flat_chain(f, home), pos_of(f, keys[i]));
	}
	uint32_t extra = key_with_home(f, home, &next);
	assert_errno(bpfmap_update_elem(m, &extra, &v, BPFMAP_NOEXIST), E2BIG);
	if (f->n_homes > 1) {
		uint32_t other = key_with_home(f, (home + 1) % f->n_homes, &next);

		assert_errno(bpfmap_update_elem(m, &other, &v, BPFMAP_ANY), E2BIG);
	}
	assert_int_equal(count_live(f, home * 8, home * 8 + 8), me < 8 ? me : 8);
	uint32_t clen = me > 8 ? me - 8 : 0, *cpos = calloc(clen + 1, 4);
	assert_non_null(cpos);
	assert_int_equal(chain_walk(f, home, cpos, clen), clen);
	for (uint32_t i = 0; i < clen; i++)
		assert_int_equal(flat_small_at(f, cpos[i], 4), keys[me - 1 - i]);
	free(cpos);
	assert_int_equal(check_homes(f), me);
	for (uint32_t i = 0; i < me; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(walk_keys(m, got, me + 1), me);
	assert_same_keys(got, me, keys, me);
	/* Delete and re-insert, alternating. */
	for (uint32_t r = 0; r < 400; r++) {
		uint32_t i = (r * 7) % me;

		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
		v = i;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		assert_errno(bpfmap_update_elem(m, &extra, &v, BPFMAP_NOEXIST), E2BIG);
	}
	assert_int_equal(check_homes(f), me);
	assert_true(chain_len(f, home) >= clen);
	for (uint32_t i = 0; i < me; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &keys[i], &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(walk_keys(m, got, me + 1), me);
	assert_same_keys(got, me, keys, me);
	/* Batches by unit: each call's whole units, checked against the
	 * model; then all of them, deleted, in one call from the home's first
	 * unit. */
	uint32_t cursor = home << f->batch_sub_bits, count, n_got;
	if (me > 1)
		(void)check_batch_call(m, cursor, me - 1, got, &n_got);
	count = me;
	assert_errno(bpfmap_lookup_and_delete_batch(m, &cursor, &cursor, got, bv, &count, NULL),
		     ENOENT);
	assert_int_equal(count, me);
	assert_int_equal(cursor, f->cursor_end);
	assert_same_keys(got, me, keys, me);
	for (uint32_t i = 0; i < me; i++) { /* keys[] ascends: each value its key's index */
		uint32_t *at = bsearch(&got[i], keys, me, 4, cmp_u32);

		assert_non_null(at);
		assert_int_equal(bv[i], at - keys);
	}
	assert_int_equal(flat_chain(f, home), FLAT_NONE);
	assert_int_equal(walk_count(m, 4), 0);
	assert_int_equal(check_homes(f), 0);
	free(keys);
	free(got);
	free(bv);
	bpfmap_free(m);
}

static void test_one_home(void **state)
{
	(void)state;
	check_one_home(20, 2);   /* 3 homes: the last one */
	check_one_home(40, 3);   /* 5 homes */
	check_one_home(1000, 0); /* 125 homes: a chain of 992 */
	check_one_home(8, 0);    /* 1 home */
}

/*
 * Inside a read-side section a deleted position is not reused while the
 * inserting key's home has a free position (an EMPTY slot of its bucket, or
 * an EMPTY node of the pool): a program-view pointer to a deleted element
 * keeps its value.  Once there is none (every node used, the dead ones
 * awaiting readers, the section itself among them), an insert reuses a dead
 * position at once rather than fail: its own home's dead slot if there is
 * one, else a dead node; the map has room.  A pointer to the reused
 * position then shows the new key's value (as in the kernel); every other
 * one keeps its own.  Step s deletes key s and inserts key s + me.
 */
static void check_reuse_in_section(uint32_t ks, uint32_t me, uint32_t flags)
{
	struct bpfmap *m = flat_make(ks, 8, me, flags, -1);
	struct flat *f = to_flat(m);
	uint32_t npos = n_positions(f), reuses = 0, steps, done = 0, first_reuse = UINT32_MAX;
	uint8_t *dead = calloc(npos, 1);
	uint64_t *posval = calloc(npos, 8), **ptr, v;
	uint32_t *ptr_pos;
	unsigned char key[32];

	assert_true(ks <= sizeof(key));
	assert_non_null(dead);
	assert_non_null(posval);
	/* Enough steps to use up every free position, and 12 reuses after. */
	steps = f->pool_base + f->n_nodes + 12;
	ptr = calloc(steps, sizeof(*ptr));
	ptr_pos = calloc(steps, sizeof(*ptr_pos));
	assert_non_null(ptr);
	assert_non_null(ptr_pos);
	for (uint32_t id = 0; id < me; id++) {
		mk_key(key, ks, id);
		v = id * 10 + 1;
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		posval[pos_find(f, key)] = v;
	}
	bpfmap_read_lock();
	for (uint32_t s = 0; s < steps && reuses < 12; s++, done++) {
		uint32_t pos, h, avail, home_dead;

		mk_key(key, ks, s);
		ptr[s] = bpfmap_lookup(m, key);
		assert_non_null(ptr[s]);
		pos = pos_find(f, key);
		assert_ptr_equal(ptr[s], flat_value_at(f, pos));
		ptr_pos[s] = pos;
		assert_int_equal(bpfmap_delete_elem(m, key), 0);
		assert_true(tag_is_dead(tag_byte(f, pos)));
		dead[pos] = 1;

		mk_key(key, ks, s + me);
		h = home_of_key(f, key);
		avail = free_for(f, h);
		home_dead = count_dead(f, h * 8, h * 8 + 8);
		v = (uint64_t)(s + me) * 10 + 1;
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		pos = pos_find(f, key);
		assert_true(pos < f->pool_base + f->n_nodes);
		assert_true(pos / 8 == h || flat_is_node(f, pos));
		if (avail) {
			assert_false(dead[pos]); /* an EMPTY one */
		} else {
			/* No free position: a dead one, reused at once. */
			assert_true(dead[pos]);
			assert_int_equal(free_nodes(f), 0);
			assert_int_equal(f->node_hwm, f->n_nodes);
			if (home_dead)
				assert_int_equal(pos / 8, h); /* its own home's slot first */
			else
				assert_true(flat_is_node(f, pos));
			dead[pos] = 0;
			if (!reuses++)
				first_reuse = s;
		}
		posval[pos] = v;
		assert_int_equal(*(uint64_t *)bpfmap_lookup(m, key), v);
		/* The map is full: room for nobody else. */
		mk_key(key, ks, s + 2 * me + steps);
		assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), E2BIG);
		/* Every pointer to a deleted element: its own value until its
		 * position is reused, then the new key's. */
		for (uint32_t t = 0; t <= s; t++)
			assert_int_equal(*ptr[t], posval[ptr_pos[t]]);
		if (!reuses)
			for (uint32_t t = 0; t <= s; t++)
				assert_int_equal(*ptr[t], (uint64_t)t * 10 + 1);
	}
	assert_int_equal(reuses, 12);
	assert_true(first_reuse >= f->n_nodes - me); /* the spare nodes went first */
	assert_int_equal(check_homes(f), me);
	check_pool_tail(f);
	bpfmap_read_unlock();
	print_message("  key %2u, %3u entries, %u homes: first reuse at step %u of %u nodes\n", ks,
		      me, f->n_homes, first_reuse, f->n_nodes);
	assert_int_equal(walk_count(m, ks), me);
	/* A sliding window: the last me keys are left, with their values. */
	uint32_t end = done;
	for (uint32_t id = 0; id < end + me; id++) {
		mk_key(key, ks, id);
		if (id < end) {
			assert_errno(bpfmap_lookup_elem(m, key, &v), ENOENT);
			continue;
		}
		assert_int_equal(bpfmap_lookup_elem(m, key, &v), 0);
		assert_int_equal(v, (uint64_t)id * 10 + 1);
	}
	free(ptr);
	free(ptr_pos);
	free(dead);
	free(posval);
	bpfmap_free(m);
}

static void test_reuse_in_section(void **state)
{
	(void)state;
	check_reuse_in_section(4, 8, 0);		     /* one home */
	check_reuse_in_section(16, 8, 0);		     /* long keys, one or two homes */
	check_reuse_in_section(4, 20, BPFMAP_F_ZERO_SEED); /* three homes */
	check_reuse_in_section(8, 64, 0);		     /* eight homes */
	check_reuse_in_section(32, 64, 0);		     /* long keys, 8/7 homes */
}

/*
 * The in-section reuse of a dead node of another home's chain.  Home A has
 * a full bucket and a chain; home B a full bucket of live keys.  Inside a
 * section, A's chain is churned (its head, middle and tail nodes deleted in
 * turn, fresh keys of A inserted) until the pool has no EMPTY node: every
 * dead position is then a node that was in A's chain.  A key of B then
 * reuses one at once, linked as the head of B's chain; A's remaining chain
 * keys, its bucket's and B's are all still found, and iteration and batches
 * see each live key exactly once, in the section and after it.  A third
 * home's EMPTY slot still takes its own key; the map full, E2BIG.
 */
static void test_reuse_node_other_home(void **state)
{
	(void)state;
	const uint32_t me = 24, A = 0, B = 1, C = 2;
	struct bpfmap *m = flat_make(4, 8, me, BPFMAP_F_ZERO_SEED, -1);
	struct flat *f = to_flat(m);
	uint32_t next = 0, all[64], nall = 0, chain[64], nchain = 0, got[64], pos[64];
	uint8_t *was_a_node = calloc(n_positions(f), 1);
	uint64_t v;

	assert_non_null(was_a_node);
	assert_int_equal(f->n_homes, 3);
	/* A: 8 in its bucket and 5 in its chain; B: 8 in its bucket. */
	for (uint32_t i = 0; i < 21; i++) {
		uint32_t k = key_with_home(f, i < 13 ? A : B, &next);

		v = (uint64_t)k * 3 + 1;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		all[nall++] = k;
		if (i >= 8 && i < 13)
			chain[nchain++] = k;
	}
	assert_int_equal(chain_len(f, A), 5);
	assert_int_equal(chain_len(f, B), 0);
	assert_int_equal(count_live(f, B * 8, B * 8 + 8), 8);

	bpfmap_read_lock();
	for (uint32_t step = 0; free_nodes(f); step++) {
		uint32_t n = chain_walk(f, A, pos, 64), victim = pos[step % n], k, p;

		assert_int_equal(n, nchain);
		k = (uint32_t)flat_small_at(f, victim, 4);
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		assert_true(tag_is_dead(tag_byte(f, victim)));
		was_a_node[victim] = 1;
		for (uint32_t i = 0; i < nchain; i++)
			if (chain[i] == k)
				chain[i] = chain[--nchain];
		for (uint32_t i = 0; i < nall; i++)
			if (all[i] == k)
				all[i] = all[--nall];
		assert_int_equal(chain_walk(f, A, pos, 64), n - 1);
		for (uint32_t i = 0; i < n - 1; i++)
			assert_int_not_equal(pos[i], victim);
		/* A fresh key of A: an EMPTY node, at the head. */
		k = key_with_home(f, A, &next);
		v = (uint64_t)k * 3 + 1;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		p = pos_of(f, k);
		assert_true(flat_is_node(f, p));
		assert_false(was_a_node[p]);
		assert_int_equal(flat_chain(f, A), p);
		chain[nchain++] = k;
		all[nall++] = k;
	}
	assert_int_equal(f->node_hwm, f->n_nodes);
	assert_int_equal(count_dead(f, 0, f->pool_base), 0); /* only nodes are dead */
	assert_int_equal(count_dead(f, f->pool_base, n_positions(f)),
			 f->n_nodes - nchain);

	/* A key of B: no free position for it; a dead node of A's, reused. */
	uint32_t kb = key_with_home(f, B, &next), pb;
	assert_int_equal(free_for(f, B), 0);
	v = (uint64_t)kb * 3 + 1;
	assert_int_equal(bpfmap_update_elem(m, &kb, &v, BPFMAP_NOEXIST), 0);
	all[nall++] = kb;
	pb = pos_of(f, kb);
	assert_true(flat_is_node(f, pb));
	assert_true(was_a_node[pb]);
	assert_int_equal(flat_chain(f, B), pb);
	assert_int_equal(flat_node_next(f, pb), FLAT_NONE);
	assert_int_equal(chain_len(f, B), 1);
	/* A's chain: as it was, without the reused node. */
	assert_int_equal(chain_walk(f, A, pos, 64), nchain);
	for (uint32_t i = 0; i < nchain; i++) {
		assert_int_not_equal(pos[i], pb);
		got[i] = (uint32_t)flat_small_at(f, pos[i], 4);
	}
	assert_same_keys(got, nchain, chain, nchain);
	/* Another key of A reuses another dead node; C's key its own slot. */
	uint32_t ka = key_with_home(f, A, &next), kc = key_with_home(f, C, &next), pa;
	v = (uint64_t)ka * 3 + 1;
	assert_int_equal(bpfmap_update_elem(m, &ka, &v, BPFMAP_NOEXIST), 0);
	pa = pos_of(f, ka);
	assert_true(was_a_node[pa] && pa != pb);
	assert_int_equal(flat_chain(f, A), pa);
	chain[nchain++] = ka;
	all[nall++] = ka;
	v = (uint64_t)kc * 3 + 1;
	assert_int_equal(bpfmap_update_elem(m, &kc, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(pos_of(f, kc), C * 8);
	all[nall++] = kc;
	assert_int_equal(nall, me);
	uint32_t kx = key_with_home(f, B, &next);
	assert_errno(bpfmap_update_elem(m, &kx, &v, BPFMAP_NOEXIST), E2BIG);
	/* Everything found, walked and batched once. */
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < nall; i++) {
			uint64_t *p = bpfmap_lookup(m, &all[i]);

			assert_non_null(p);
			assert_int_equal(*p, (uint64_t)all[i] * 3 + 1);
			assert_int_equal(bpfmap_lookup_elem(m, &all[i], &v), 0);
			assert_int_equal(v, (uint64_t)all[i] * 3 + 1);
		}
		assert_int_equal(walk_keys(m, got, 64), nall);
		assert_same_keys(got, nall, all, nall);
		assert_int_equal(batch_keys(m, got, 64, 32, 3), nall);
		assert_same_keys(got, nall, all, nall);
		assert_int_equal(check_homes(f), nall);
		if (round)
			break;
		bpfmap_read_unlock();
		/* Out of the section: reclaimed, the dead nodes are free again,
		 * the reused ones not. */
		rcu_wait_deferred();
		flat_reclaim_sync(f);
		rcu_wait_deferred();
		assert_int_equal(flat_dead_total(f), 0);
		assert_int_equal(count_dead(f, 0, n_positions(f)), 0);
		assert_int_equal(free_nodes(f), f->n_nodes - nchain - 1);
		bpfmap_read_lock();
	}
	bpfmap_read_unlock();
	/* The freed nodes handed out again (from the free list): none of the
	 * live ones among them. */
	for (uint32_t r = 0; r < 40; r++) {
		uint32_t i = (r * 5) % nall, k = all[i];

		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		k = key_with_home(f, r % 2 ? A : B, &next);
		v = (uint64_t)k * 3 + 1;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		all[i] = k;
	}
	assert_int_equal(f->node_hwm, f->n_nodes);
	assert_int_equal(batch_keys(m, got, 64, 32, 3), me);
	assert_same_keys(got, me, all, me);
	for (uint32_t i = 0; i < me; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &all[i], &v), 0);
		assert_int_equal(v, (uint64_t)all[i] * 3 + 1);
	}
	assert_int_equal(check_homes(f), me);
	free(was_a_node);
	bpfmap_free(m);
}

/* Sum and maximum of the homes' chain lengths. */
static void chain_stats(const struct flat *f, uint64_t *sum, uint32_t *max)
{
	*sum = 0;
	*max = 0;
	for (uint32_t h = 0; h < f->n_homes; h++) {
		uint32_t c = chain_len(f, h);

		*sum += c;
		if (c > *max)
			*max = c;
	}
}

/*
 * Churn does not lengthen chains without bound (issue 14: under linear
 * probing, a full map churned was 20x slower).  A full map of 4096 8-byte
 * keys takes 10 x max_entries delete + insert pairs of fresh keys (a random
 * live key deleted each time), outside sections.  Keys of a home whose
 * deleted slots await reclamation go to its chain meanwhile, so chains hold
 * more than in the freshly filled map (measured: 1.6-1.8x with reclamation
 * preferred from kick_at dead positions, 2.1-2.4x with it preferred from
 * the spare's count; reached within the first max_entries pairs), but that
 * level holds: the chains' total stays within 3x of the fresh map's (a
 * bound for gross growth: the fresh figure itself varies by some 5%) and
 * within 1.25x of its level after the first max_entries pairs, and the
 * longest chain stays short.  Dead positions
 * (awaiting a grace period: what the pool's spare nodes, n_nodes -
 * max_entries, are there for) stay within the spares on average and twice
 * them at most (plus what shards hold back), and the nodes handed out near
 * the pool's soft cap.  Reclaimed at rest, none is left.
 */
/*
 * An insert that would reclaim first (its home has a dead slot, and deletes
 * have piled up past sync_at) while another thread is reclaiming goes on
 * with a spare node instead of waiting out that thread's grace period,
 * which liburcu can stretch to 10 ms and more.  The other thread is played
 * by sync_busy set by hand and never cleared while the insert runs: an
 * insert that waited for it would not answer (checked for a second, then
 * released).
 */
struct busy_insert {
	struct bpfmap *m;
	uint32_t key;
	int ret; /* atomic: INT32_MIN until answered */
};

static void *busy_insert_thread(void *arg)
{
	struct busy_insert *b = arg;
	uint64_t v = 7;

	__atomic_store_n(&b->ret, bpfmap_update_elem(b->m, &b->key, &v, BPFMAP_NOEXIST),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_insert_beside_reclaim(void **state)
{
	(void)state;
	struct bpfmap *m = flat_make(4, 8, 256, 0, -1);
	struct flat *f = to_flat(m);
	struct busy_insert b = { m, 0, INT32_MIN };
	uint32_t keys[FLAT_SLOTS], n = 0, k, h;
	uint64_t v = 1;
	pthread_t th;
	int ret = INT32_MIN;

	for (k = 1; n < FLAT_SLOTS; k++) /* home 0's bucket full */
		if (home_of_key(f, &k) == 0) {
			keys[n++] = k;
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		}
	assert_int_equal(bpfmap_delete_elem(m, &keys[0]), 0); /* a dead slot there */
	f->sync_at = 1;
	for (; ; k++)
		if (home_of_key(f, &k) == 0)
			break;
	b.key = k;
	h = __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
	__atomic_store_n(&f->sync_busy, 1, __ATOMIC_SEQ_CST); /* "another thread" */
	assert_int_equal(pthread_create(&th, NULL, busy_insert_thread, &b), 0);
	for (int i = 0; i < 1000 && ret == INT32_MIN; i++) {
		usleep(1000);
		ret = __atomic_load_n(&b.ret, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&f->sync_busy, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(ret, 0); /* answered while the "other thread" reclaimed */
	assert_int_equal(__atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED), h + 1); /* a node */
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 7);
	bpfmap_free(m);
}

static void test_churn(void **state)
{
	(void)state;
	const uint32_t me = 4096, rounds = 10 * me;
	struct bpfmap *m = flat_make(8, 8, me, 0, -1);
	struct flat *f = to_flat(m);
	uint64_t *live = calloc(me, 8), sum0, sum1, sum_first = 0, dead_sum = 0, v;
	uint32_t max0, max1, max_seen = 0, hwm_max = 0;
	int32_t dead_max = 0;

	assert_non_null(live);
	for (uint32_t i = 0; i < me; i++) {
		live[i] = i;
		v = i;
		assert_int_equal(bpfmap_update_elem(m, &live[i], &v, BPFMAP_NOEXIST), 0);
	}
	chain_stats(f, &sum0, &max0);
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t i = (uint32_t)rnd_below(me);
		uint64_t k = me + r;
		int32_t d;

		assert_int_equal(bpfmap_delete_elem(m, &live[i]), 0);
		v = k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		live[i] = k;
		d = flat_dead_total(f);
		dead_sum += (uint64_t)(d > 0 ? d : 0);
		if (d > dead_max)
			dead_max = d;
		if (f->node_hwm > hwm_max)
			hwm_max = f->node_hwm;
		if ((r + 1) % me == 0) {
			chain_stats(f, &sum1, &max1);
			if (r + 1 == me)
				sum_first = sum1;
			if (max1 > max_seen)
				max_seen = max1;
		}
	}
	chain_stats(f, &sum1, &max1);
	int32_t dead_end = flat_dead_total(f);
	uint32_t slack = f->count.shards ? (f->count.shard_mask + 1) * FLAT_DEAD_FLUSH : 0;
	uint32_t spare = f->n_nodes - me;
	print_message("  chains: %llu nodes, longest %u fresh; %llu after %u pairs, %llu, longest "
		      "%u (%u at most) after %u; dead %.1f on average, at most %d, %d at the end "
		      "(kick_at %u, %u spare nodes); nodes handed out at most %u (soft cap %u, %u nodes)\n",
		      (unsigned long long)sum0, max0, (unsigned long long)sum_first, me,
		      (unsigned long long)sum1, max1, max_seen, rounds, (double)dead_sum / rounds,
		      dead_max, dead_end, f->kick_at, spare, hwm_max, f->node_soft_cap, f->n_nodes);
	assert_true(sum1 <= 3 * sum0);
	assert_true(sum1 * 4 <= sum_first * 5);
	assert_true(max_seen <= 2 * max0 + 6);
	assert_true(dead_sum <= (uint64_t)rounds * (spare + slack));
	assert_true(dead_end <= (int32_t)(2 * spare + slack));
	assert_true(dead_max <= (int32_t)(2 * spare + slack));
	assert_true(hwm_max <= f->node_soft_cap + 64);
	assert_int_equal(check_homes(f), me);
	for (uint32_t i = 0; i < me; i++) {
		assert_int_equal(bpfmap_lookup_elem(m, &live[i], &v), 0);
		assert_int_equal(v, live[i]);
	}
	/* Reclaimed at rest: nothing dead. */
	rcu_wait_deferred();
	flat_reclaim_sync(f);
	rcu_wait_deferred();
	assert_int_equal(flat_dead_total(f), 0);
	assert_int_equal(count_dead(f, 0, n_positions(f)), 0);
	free(live);
	bpfmap_free(m);
}

/*
 * A deleted position changes key only after a grace period, even for the
 * key it held: a key deleted and inserted again inside a section while its
 * position awaits reclamation takes another one each time (its home
 * bucket's EMPTY slots, then nodes), and a program-view pointer taken
 * before the delete keeps the deleted value.  Also for the key whose word a delete from the
 * home bucket leaves behind (issue 14, first defect: a key L deleted from
 * its home, then K = the word L's slot then held, inserted: L's pointer
 * showed K's value, and atomics through it changed K).
 */
static void test_no_reuse_under_pointer(void **state)
{
	(void)state;
	struct bpfmap *m = flat_make(4, 8, 100, 0, -1);
	struct flat *f = to_flat(m);
	uint32_t k = 42, used[40], h = flat_home(f, hash_u32_key(f, k));
	uint64_t v = 1, *p;

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	used[0] = pos_of(f, k);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, &k);
	assert_non_null(p);
	for (uint64_t r = 2; r < 40; r++) {
		uint32_t pos, empty = count_tags(f, h * 8, h * 8 + 8, FLAT_EMPTY);

		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		v = r;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		pos = pos_of(f, k);
		for (uint32_t i = 0; i < r - 1; i++)
			assert_int_not_equal(pos, used[i]);
		used[r - 1] = pos;
		assert_int_equal(flat_is_node(f, pos), !empty);
		assert_int_equal(*p, 1); /* the deleted element's value, unchanged */
		assert_int_equal(*(uint64_t *)bpfmap_lookup(m, &k), r);
	}
	bpfmap_read_unlock();
	assert_int_equal(walk_count(m, 4), 1);
	bpfmap_free(m);

	/* Word keys whose home slots take a dead word on delete, the dead
	 * words themselves as keys (a slot left holding them must not be taken
	 * for theirs). */
	for (uint32_t ks = 4; ks <= 8; ks += 4) {
		m = flat_make(ks, 8, 1000, 0, -1);
		f = to_flat(m);
		assert_true(f->match_by_key);
		for (int round = 0; round < 2; round++) {
			uint64_t dead = f->dead_word[round], other = rnd() & (ks == 4 ? ~0U : ~0ULL);
			uint64_t keys[2] = { other, dead }, *ptr[2];

			for (int i = 0; i < 2; i++) {
				v = 100 + i;
				assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_ANY), 0);
			}
			bpfmap_read_lock();
			for (int i = 0; i < 2; i++) {
				ptr[i] = bpfmap_lookup(m, &keys[i]);
				assert_non_null(ptr[i]);
				assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
			}
			/* Insert both again, and every word a delete may have left. */
			uint64_t again[4] = { keys[0], keys[1], f->dead_word[0], f->dead_word[1] };
			for (int i = 0; i < 4; i++) {
				v = 200 + i;
				int ret = bpfmap_update_elem(m, &again[i], &v, BPFMAP_NOEXIST);

				assert_true(ret == 0 || (i >= 2 && ret == -EEXIST));
			}
			for (int i = 0; i < 2; i++) {
				__atomic_fetch_add(ptr[i], 1000, __ATOMIC_RELAXED);
				assert_int_equal(*ptr[i], 1100 + i);
			}
			bpfmap_read_unlock();
			for (int i = 0; i < 4; i++) {
				uint64_t out;
				bool dup = false;

				for (int j = 0; j < i; j++)
					dup |= again[j] == again[i];
				if (dup)
					continue;
				assert_int_equal(bpfmap_lookup_elem(m, &again[i], &out), 0);
				assert_true(out >= 200 && out < 204);
				assert_int_equal(bpfmap_delete_elem(m, &again[i]), 0);
			}
		}
		bpfmap_free(m);
	}
}

/*
 * The dead words of a map that matches by key: dead_word[0]'s home is
 * dead_home, dead_word[1]'s another, and every home slot holds its bucket's
 * dead word at creation; for home counts from the smallest that matches by
 * key on, random parameters and zero-seed ones.
 */
static void test_dead_words(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 7, 8, 9, 15, 16, 17, 100, 1000, 5000, 70000 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (uint32_t ks = 4; ks <= 8; ks += 4) {
			for (int rep = 0; rep < 6; rep++) {
				struct bpfmap *m =
				    flat_make(ks, 8, sizes[i], rep ? 0 : BPFMAP_F_ZERO_SEED, -1);
				struct flat *f = to_flat(m);

				assert_int_equal(f->match_by_key, f->n_homes >= FLAT_MATCH_BY_KEY_MIN);
				if (f->match_by_key) {
					assert_int_equal(
					    flat_home(f, flat_hash(f, &f->dead_word[0])), f->dead_home);
					assert_int_not_equal(
					    flat_home(f, flat_hash(f, &f->dead_word[1])), f->dead_home);
					for (uint32_t pos = 0; pos < f->n_homes * FLAT_SLOTS; pos++)
						assert_true(flat_small_at(f, pos, ks) ==
							    flat_dead_word(f, pos / FLAT_SLOTS));
				}
				bpfmap_free(m);
			}
		}
	}
}

/* Program view and copy-out of word key k (little-endian: its low bytes are
 * the key): present with value v, or absent (v == 0). */
static void check_word(struct bpfmap *m, uint64_t k, uint64_t v)
{
	uint64_t *p, got = 0, out = 0;
	int err;

	/* The section closed before asserting: a failure must not leave it
	 * open for the next test's grace periods to wait on. */
	bpfmap_read_lock();
	errno = 0;
	p = bpfmap_lookup(m, &k);
	err = errno;
	if (p)
		got = *p;
	bpfmap_read_unlock();
	if (!v) {
		assert_null(p);
		assert_int_equal(err, ENOENT);
		assert_int_equal(bpfmap_lookup_elem(m, &k, &out), -ENOENT);
		return;
	}
	assert_non_null(p);
	assert_int_equal(got, v);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, v);
}

/*
 * Matching by key: deleted keys and never-used slots must not match.  Keys,
 * the dead words among them, in the map, deleted (a slot of a key's home
 * bucket gets the bucket's dead word; a node keeps the key or gets its
 * home's dead word), inserted again, deleted again, before and after
 * reclamation; maps too small to match by key.
 */
static void check_match_by_key(uint32_t ks, uint32_t max_entries, uint64_t flags)
{
	struct bpfmap *m = flat_make(ks, 8, max_entries, (uint32_t)flags, -1);
	struct flat *f = to_flat(m);
	uint64_t mask = ks == 4 ? 0xffffffffULL : ~0ULL;
	uint32_t n = max_entries / 2;
	uint64_t keys[64], v;

	assert_int_equal(f->match_by_key, f->n_homes >= FLAT_MATCH_BY_KEY_MIN);
	check_word(m, 0, 0);
	if (f->match_by_key)
		check_word(m, f->dead_word[1], 0);
	if (n < 2)
		n = 2;
	if (n > ARRAY_SIZE(keys))
		n = ARRAY_SIZE(keys);
	for (uint32_t i = 0; i < n; i++) {
		keys[i] = i == 0 ? 0 : i == 1 && f->match_by_key ? f->dead_word[1] : rnd() & mask;
		for (uint32_t j = 0; j < i; j++)
			if (keys[j] == keys[i])
				keys[i] = rnd() & mask, j = UINT32_MAX;
		v = i + 1;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], i + 1);
	/* Delete every other key. */
	for (uint32_t i = 0; i < n; i += 2) {
		uint64_t hash = flat_hash(f, &keys[i]);
		uint32_t h = flat_home(f, hash);
		uint32_t pos = flat_find(f, h, flat_place_of(f, hash).tag, &keys[i], ks, keys[i], true);

		assert_int_not_equal(pos, FLAT_NONE);
		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
		if (f->match_by_key && pos / FLAT_SLOTS == h)
			assert_true(flat_small_at(f, pos, ks) == flat_dead_word(f, h));
		else if (f->match_by_key && flat_is_node(f, pos)) /* either will do */
			assert_true(flat_small_at(f, pos, ks) == keys[i] ||
				    flat_small_at(f, pos, ks) == flat_dead_word(f, h));
		else
			assert_true(flat_small_at(f, pos, ks) == keys[i]);
	}
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], i % 2 ? i + 1 : 0);
	/* Back again, with new values. */
	for (uint32_t i = 0; i < n; i += 2) {
		v = 1000 + i;
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], i % 2 ? i + 1 : 1000 + i);
	assert_int_equal(walk_count(m, ks), n);
	/* Everything out: nothing matches, before and after reclamation. */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], 0);
	flat_reclaim_sync(f);
	for (uint32_t i = 0; i < n; i++)
		check_word(m, keys[i], 0);
	assert_int_equal(walk_count(m, ks), 0);
	bpfmap_free(m);
}

static void test_match_by_key(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 4, 30, 64, 1000 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		for (int rep = 0; rep < 4; rep++) {
			check_match_by_key(4, sizes[i], rep ? 0 : BPFMAP_F_ZERO_SEED);
			check_match_by_key(8, sizes[i], rep ? 0 : BPFMAP_F_ZERO_SEED);
		}
}

/*
 * Cursors: batch units (up to 8 a home), then the kernel's bucket count at
 * the end.  Every call from every unit, with every room from 1 to 8, in a
 * full map (chains included) returns whole units in order and the cursor
 * after them, as the model says.  Tiny maps have fewer units a home, never
 * more than the kernel's buckets.
 */
static void test_cursor(void **state)
{
	(void)state;
	struct bpfmap *m = flat_make(4, 8, 100, 0, -1);
	struct flat *f = to_flat(m);
	uint32_t k = 1, bk[100], cursor, count, n_bk, units;
	uint64_t v = 1, bv[100];

	assert_int_equal(f->cursor_end, 128);
	assert_int_equal(f->n_homes, 13);
	assert_int_equal(f->batch_sub_bits, 3);
	units = f->n_homes << f->batch_sub_bits;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, 0), 0);
	/* Between the last unit and the end: nothing, out = end. */
	cursor = units;
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, &cursor, &cursor, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, 0);
	assert_int_equal(cursor, 128);
	/* At or past the end: ENOENT, out untouched. */
	cursor = 128;
	uint32_t out = 77;
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, &cursor, &out, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(out, 77);
	count = 4;
	assert_errno(bpfmap_lookup_batch(m, NULL, &out, bk, bv, &count, NULL), ENOENT);
	assert_int_equal(count, 1);
	assert_int_equal(out, 128);
	for (k = 2; k <= 100; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	for (uint32_t u = 0; u < units; u++)
		for (uint32_t cap = 1; cap <= 8; cap++)
			(void)check_batch_call(m, u, cap, bk, &n_bk);
	bpfmap_free(m);

	/* Units a home: as many as the kernel's buckets allow. */
	static const uint32_t sizes[][2] = { { 1, 0 }, { 2, 0 }, { 3, 1 }, { 4, 1 }, { 5, 2 },
					     { 8, 2 }, { 10, 3 }, { 1000, 3 } };
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		m = flat_make(4, 8, sizes[i][0], 0, -1);
		f = to_flat(m);
		assert_int_equal(f->batch_sub_bits, sizes[i][1]);
		assert_true((f->n_homes << f->batch_sub_bits) <= f->cursor_end);
		bpfmap_free(m);
	}
}

/*
 * The kernel's own batch test (selftests/bpf map_tests/htab_map_batch_ops):
 * a 10-entry map of 4-byte keys 1..10, lookup_batch in a loop with a
 * capacity of `step` that each call's count then replaces, for steps 1..9;
 * the test fails when -ENOSPC stops every step.  Against the kernel it
 * never fails; with whole homes (two of them) as units it failed on 64 of
 * 200 fresh maps (issue 15).  With eighths of a home it still fails on a
 * few seeds: 2 of 20000 fresh maps (measured, a build of a8830c6), so a
 * run of 200 maps met one about once in 50 runs.  200 fresh maps, at most
 * 2 of them failing (by chance: about one run in a million).
 */
static void test_kernel_batch_pattern(void **state)
{
	int failed_maps = 0;

	(void)state;
	for (int rep = 0; rep < 200; rep++) {
		struct bpfmap *m = flat_make(4, 4, 10, 0, -1);
		uint32_t keys[10], vals[10], successes = 0;

		for (uint32_t i = 0; i < 10; i++) {
			keys[i] = i + 1;
			vals[i] = i + 2;
		}
		for (uint32_t step = 1; step < 10; step++) {
			uint32_t total = 0, count = 10, batch = 0;
			bool nospace = false;

			assert_int_equal(bpfmap_update_batch(m, keys, vals, &count, NULL), 0);
			uint32_t got[10], gv[10];
			count = step;
			for (;;) {
				int ret = bpfmap_lookup_batch(m, total ? &batch : NULL, &batch,
							      got + total, gv + total, &count,
							      NULL);

				if (ret == -ENOSPC) {
					nospace = true;
					break;
				}
				assert_true(ret == 0 || ret == -ENOENT);
				total += count;
				if (ret)
					break;
			}
			if (nospace)
				continue;
			assert_int_equal(total, 10);
			for (uint32_t i = 0; i < 10; i++)
				assert_int_equal(gv[i], got[i] + 1);
			successes++;
		}
		failed_maps += successes == 0;
		bpfmap_free(m);
	}
	assert_true(failed_maps <= 2);
}

/* Long keys (compares word by word) and a spin-locked value. */
struct lval {
	uint64_t a;
	struct bpfmap_spin_lock lock;
	uint32_t b;
};

static void test_long_keys_locked(void **state)
{
	(void)state;
	const uint32_t ks = 20, me = 300;
	struct bpfmap *m = flat_make(ks, sizeof(struct lval), me, 0, offsetof(struct lval, lock));
	unsigned char key[20];
	struct lval v, out;

	for (uint32_t i = 0; i < me; i++) {
		memset(key, (int)i, ks);
		memcpy(key, &i, 4);
		v = (struct lval){ .a = i, .lock = { 0xffffffff }, .b = i * 3 };
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < me; i++) {
		memset(key, (int)i, ks);
		memcpy(key, &i, 4);
		assert_int_equal(bpfmap_lookup_elem_flags(m, key, &out, BPFMAP_F_LOCK), 0);
		assert_int_equal(out.a, i);
		assert_int_equal(out.b, i * 3);
		assert_int_equal(out.lock.val, 0);
		key[ks - 1] ^= 1; /* differs in the last (padded) word only */
		assert_errno(bpfmap_lookup_elem(m, key, &out), ENOENT);
	}
	assert_int_equal(walk_count(m, ks), me);
	bpfmap_free(m);
}

/* ---- element indices (keys over 8 bytes) -------------------------------- */

/* Key i of test_elements: 16 bytes, i in word 0. */
static void elem_key(unsigned char key[16], uint32_t i)
{
	memset(key, 0x5a, 16);
	memcpy(key, &i, 4);
}

/* The element of key i's slot (in a read-side section: the key is long). */
static uint32_t elem_of_key(const struct flat *f, uint32_t i)
{
	unsigned char key[16];
	uint64_t hash;
	uint32_t pos;

	elem_key(key, i);
	hash = flat_hash(f, key);
	bpfmap_read_lock();
	pos = flat_find(f, flat_home(f, hash), flat_place_of(f, hash).tag, key, 16, 0, true);
	bpfmap_read_unlock();
	assert_int_not_equal(pos, FLAT_NONE);
	assert_memory_equal(flat_key_at(f, pos), key, 16);
	return flat_elem_of(f, pos);
}

/*
 * Keys inserted in order get elements in that order (the point of the
 * index); deleted positions keep theirs, and reused ones hand the same
 * element to the next key, so live keys' elements stay distinct.  Each
 * position takes one element on its first fill, never another: elements
 * handed out are exactly the positions ever filled (home slots and the
 * nodes handed out), and distinct positions have distinct elements.
 */
static void check_elements_per_position(const struct flat *f)
{
	uint32_t next_elem = __atomic_load_n(&f->next_elem, __ATOMIC_RELAXED), filled = 0;
	uint8_t *seen = calloc(next_elem + 1, 1);

	assert_non_null(seen);
	for (uint32_t pos = 0; pos < n_positions(f); pos++) {
		uint32_t e = flat_elem_of(f, pos);

		if (e == UINT32_MAX) /* never filled */
			continue;
		assert_true(pos < f->pool_base || pos - f->pool_base < f->node_hwm);
		assert_true(e < next_elem);
		assert_false(seen[e]);
		seen[e] = 1;
		filled++;
	}
	assert_int_equal(filled, next_elem);
	assert_true(next_elem <= f->pool_base + f->node_hwm);
	free(seen);
}

static void test_elements(void **state)
{
	(void)state;
	const uint32_t me = 1000;
	struct bpfmap *m = flat_make(16, 8, me, 0, -1);
	struct flat *f = to_flat(m);
	unsigned char key[16];
	uint8_t *seen = calloc(n_positions(f), 1);
	uint64_t v = 0;

	assert_non_null(f->elems);
	assert_non_null(seen);
	for (uint32_t i = 0; i < me; i++) {
		elem_key(key, i);
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < me; i++)
		assert_int_equal(elem_of_key(f, i), i);
	check_elements_per_position(f);
	/* Churn: replace every key, half after a reclamation, half one by one. */
	for (uint32_t round = 1; round <= 4; round++) {
		for (uint32_t i = 0; i < me; i += 2) {
			elem_key(key, i + (round - 1) * me * 2);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
		}
		flat_reclaim_sync(f);
		for (uint32_t i = 0; i < me; i += 2) {
			elem_key(key, i + round * me * 2);
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		for (uint32_t i = 1; i < me; i += 2) { /* one by one, without reclaiming */
			elem_key(key, i + (round - 1) * me * 2);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
			elem_key(key, i + round * me * 2);
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		flat_reclaim_sync(f);
		memset(seen, 0, n_positions(f));
		for (uint32_t i = 0; i < me; i++) {
			uint32_t e = elem_of_key(f, i + round * me * 2);

			assert_true(e < __atomic_load_n(&f->next_elem, __ATOMIC_RELAXED));
			assert_false(seen[e]);
			seen[e] = 1;
		}
		check_elements_per_position(f);
	}
	free(seen);
	bpfmap_free(m);
}

/* Key i of test_long_lookups: two words set by 4-byte stores, as the
 * benchmark's; the second scatters keys that a sequence in word 0 alone would
 * spread evenly over the homes. */
static void flat_test_key(unsigned char *key, uint32_t i)
{
	uint32_t w1 = i * 0x9e3779b9u;

	memcpy(key, &i, 4);
	memcpy(key + 4, &w1, 4);
}

/*
 * The long-key program-view lookups (specialised for 16, 32, 64, 128 and 256
 * bytes, generic otherwise), their copy-out and bulk forms: hits give the
 * key's own value, absent keys and keys that differ only in their last byte
 * miss, in a full map where twelve keys share home bucket 0 (some past it:
 * the out-of-line path).
 */
static void test_long_lookups(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 12, 16, 24, 32, 64, 100, 128, 256, 600, 1024 };
	const uint32_t me = 600, crowd = 12; /* keys whose home is bucket 0 */
	uint32_t ids[600];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t ks = sizes[s], next = 1u << 20;
		struct bpfmap *m = flat_make(ks, 8, me, 0, -1);
		struct flat *f = to_flat(m);
		unsigned char *key = malloc(ks);
		uint64_t v, out;

		assert_non_null(key);
		memset(key, 0x33, ks);
		for (uint32_t i = 0; i < me; i++) {
			if (i < me - crowd) {
				ids[i] = i;
			} else {
				do
					flat_test_key(key, next++);
				while (flat_home(f, flat_hash(f, key)) != 0);
				ids[i] = next - 1;
			}
			flat_test_key(key, ids[i]);
			v = (uint64_t)ids[i] * 7 + ks;
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		assert_true(chain_len(f, 0) > 0); /* more than 8 homed at 0: a chain */
		bpfmap_read_lock();
		for (uint32_t i = 0; i < me + 50; i++) {
			uint32_t id = i < me ? ids[i] : i - crowd; /* then absent ones */
			uint64_t *p;
			void *vp;

			flat_test_key(key, id);
			p = bpfmap_lookup(m, key);
			if (i >= me) {
				assert_null(p);
				continue;
			}
			assert_non_null(p);
			assert_int_equal(*p, (uint64_t)id * 7 + ks);
			assert_int_equal(bpfmap_lookup_elem(m, key, &out), 0);
			assert_int_equal(out, *p);
			assert_int_equal(bpfmap_lookup_bulk(m, key, 1, &vp), 1);
			assert_ptr_equal(vp, p);
			key[ks - 1] ^= 1; /* the last byte only */
			assert_null(bpfmap_lookup(m, key));
			key[ks - 1] ^= 1;
		}
		bpfmap_read_unlock();
		free(key);
		bpfmap_free(m);
	}
}

/* bpfmap_create(): keys over 8 bytes get the flat table from
 * HASH_FLAT_LONG_MIN_ENTRIES (16384) elements on, word keys always, and
 * NO_PREALLOC maps never. */
static void test_routing(void **state)
{
	(void)state;
	static const struct {
		uint32_t ks, me, flags;
		bool flat;
	} cases[] = {
		{ 4, 512, 0, true },
		{ 8, 10000, 0, true },
		{ 16, 16383, 0, false },
		{ 16, 16384, 0, true },
		{ 1024, 20000, 0, true },
		{ 64, 512, 0, false },
		{ 8, 512, BPFMAP_F_NO_PREALLOC, false },
		{ 16, 100000, BPFMAP_F_NO_PREALLOC, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .map_flags = cases[i].flags);
		struct bpfmap *m =
		    bpfmap_create(BPFMAP_TYPE_HASH, "route", cases[i].ks, 8, cases[i].me, &opts);

		assert_non_null(m);
		assert_int_equal(m->ops == &flat_ops, cases[i].flat);
		bpfmap_free(m);
	}
}

/* ---- concurrency: few homes, long shared chains ------------------------- */

#define C_ME 64
#define C_STABLE 24
#define C_THREADS 4

struct cval {
	uint64_t key, seq, check;
};

struct crun {
	struct bpfmap *m;
	uint32_t stable[C_STABLE]; /* never deleted; values overwritten */
	uint32_t churn[96];        /* inserted and deleted */
	uint32_t nchurn;
	int stop;
	uint64_t bad;
};

static uint64_t cval_check(const struct cval *v)
{
	return (v->key * 0x9e3779b97f4a7c15ULL) ^ v->seq;
}

static void *c_writer(void *arg)
{
	struct crun *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x | 1, seq = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		rng_next(&x);
		if (x & 1) {
			uint32_t k = r->stable[(x >> 8) % C_STABLE];
			struct cval v = { k, ++seq, 0 };

			v.check = cval_check(&v);
			if (bpfmap_update_elem(r->m, &k, &v, BPFMAP_EXIST))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		} else {
			uint32_t k = r->churn[(x >> 8) % r->nchurn];
			struct cval v = { k, ++seq, 0 };

			v.check = cval_check(&v);
			if (x & 2) {
				int rc = bpfmap_update_elem(r->m, &k, &v, BPFMAP_NOEXIST);
				if (rc && rc != -EEXIST && rc != -E2BIG)
					__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			} else {
				int rc = bpfmap_delete_elem(r->m, &k);
				if (rc && rc != -ENOENT)
					__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
		}
	}
	return NULL;
}

static void *c_reader(void *arg)
{
	struct crun *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x | 1;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		rng_next(&x);
		uint32_t k = r->stable[(x >> 8) % C_STABLE];
		struct cval v;

		if (x & 1) {
			if (bpfmap_lookup_elem(r->m, &k, &v) || v.key != k || v.check != cval_check(&v))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		} else {
			bpfmap_read_lock();
			struct cval *p = bpfmap_lookup(r->m, &k);
			if (!p || __atomic_load_n(&p->key, __ATOMIC_RELAXED) != k)
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			/* A churn key, then delete it, in the section: the
			 * pointer keeps the key's value to the end. */
			uint32_t c = r->churn[(x >> 8) % r->nchurn];
			p = bpfmap_lookup(r->m, &c);
			if (p) {
				bpfmap_delete_elem(r->m, &c);
				for (int i = 0; i < 50; i++)
					if (__atomic_load_n(&p->key, __ATOMIC_RELAXED) != c)
						__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
			bpfmap_read_unlock();
		}
	}
	return NULL;
}

static void test_concurrent_shared_buckets(void **state)
{
	(void)state;
	struct crun r = { .m = flat_make(4, sizeof(struct cval), C_ME, BPFMAP_F_ZERO_SEED, -1) };
	struct flat *f = to_flat(r.m);
	uint32_t next = 0;
	pthread_t th[C_THREADS];

	/* Stable keys from homes 0 and 1 only: 12 each, 4 of them in each
	 * chain; churn keys of homes 1..4 come and go in the same chains
	 * (home 1's interleaves both) and buckets, their nodes reclaimed and
	 * handed to other homes' chains while lookups walk them. */
	for (int i = 0; i < C_STABLE; i++) {
		uint32_t k = key_with_home(f, (uint32_t)i % 2, &next);
		struct cval v = { k, 0, 0 };

		v.check = cval_check(&v);
		r.stable[i] = k;
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(chain_len(f, 0), C_STABLE / 2 - 8);
	assert_int_equal(chain_len(f, 1), C_STABLE / 2 - 8);
	for (r.nchurn = 0; r.nchurn < 96; r.nchurn++)
		r.churn[r.nchurn] = key_with_home(f, 1 + r.nchurn % 4, &next);
	for (int i = 0; i < C_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, i < 2 ? c_writer : c_reader, &r), 0);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < C_THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(r.bad, 0);
	/* At rest: every stable key present, the count right. */
	uint32_t n = walk_count(r.m, 4);
	assert_true(n >= C_STABLE && n <= C_ME);
	assert_int_equal(count_elements(&f->count), n);
	assert_int_equal(check_homes(f), n);
	for (int i = 0; i < C_STABLE; i++) {
		struct cval v;

		assert_int_equal(bpfmap_lookup_elem(r.m, &r.stable[i], &v), 0);
		assert_int_equal(v.key, r.stable[i]);
		assert_int_equal(v.check, cval_check(&v));
	}
	bpfmap_free(r.m);
}

/* Run the calling thread on @cpu only; false if it cannot. */
static bool run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

/*
 * Sharded counts (sync/count.h): a full map whose deletes left their
 * credits in another CPU's shard still takes exactly that many inserts from
 * this CPU, then -E2BIG; the lock-free full check says "not full" while
 * credits are out, and the element count stays exact throughout.
 */
static void test_sharded_counts(void **state)
{
	(void)state;
	int cpus = bpfmap_num_possible_cpus();
	uint32_t shards = 1, freed = 3 * COUNT_CHUNK + 5;

	while (shards < (uint32_t)cpus && shards < 64)
		shards *= 2;
	uint32_t me = shards * COUNT_SHARD_MIN;
	cpu_set_t saved;

	if (cpus < 2)
		skip(); /* one CPU: counts are never sharded */
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	if (!run_on_cpu(0) || !CPU_ISSET(1, &saved)) {
		print_message("skipped: needs CPUs 0 and 1 to pin to\n");
		assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
		skip();
	}
	struct bpfmap *m = flat_make(8, 8, me, 0, -1);
	struct flat *f = to_flat(m);
	uint64_t k, v = 1;
	int fails = 0;

	assert_non_null(f->count.shards);
	for (k = 0; k < me; k++)
		fails += bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) != 0;
	k = me;
	fails += bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) != -E2BIG;
	fails += !count_full_quiescent(&f->count);
	/* Deletes on CPU 1: their slots become CPU 1's credits. */
	fails += !run_on_cpu(1);
	for (k = 0; k < freed; k++)
		fails += bpfmap_delete_elem(m, &k) != 0;
	fails += count_elements(&f->count) != me - freed;
	fails += count_full_quiescent(&f->count); /* credits are out */
	/* Inserts on CPU 0 take them back, exactly. */
	fails += !run_on_cpu(0);
	for (k = me; k < me + freed; k++)
		fails += bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) != 0;
	fails += bpfmap_update_elem(m, &k, &v, BPFMAP_ANY) != -E2BIG;
	fails += count_elements(&f->count) != me;
	fails += !count_full_quiescent(&f->count); /* the steal left no credit out */
	fails += flat_dead_total(f) < 0;
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
	assert_int_equal(fails, 0);
	assert_int_equal(walk_count(m, 8), me);
	bpfmap_free(m);
}

/* Updates into a full map: E2BIG for absent keys (decided without the lock
 * for word keys), while present keys are overwritten and NOEXIST/EXIST stay
 * exact; room made by a delete is seen at once. */
static void test_full_map(void **state)
{
	(void)state;
	static const uint32_t key_sizes[] = { 4, 8, 20 };

	for (size_t n = 0; n < ARRAY_SIZE(key_sizes); n++) {
		const uint32_t ks = key_sizes[n], me = 1000;
		struct bpfmap *m = flat_make(ks, 8, me, 0, -1);
		unsigned char key[20] = { 0 };
		uint64_t v, out;

		for (uint32_t i = 0; i < me; i++) {
			memcpy(key, &i, 4);
			v = i;
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
		}
		for (uint32_t i = me; i < 2 * me; i++) {
			memcpy(key, &i, 4);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), E2BIG);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), E2BIG);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_EXIST), ENOENT);
		}
		for (uint32_t i = 0; i < me; i++) {
			memcpy(key, &i, 4);
			v = i + 7;
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), 0);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), EEXIST);
			assert_int_equal(bpfmap_lookup_elem(m, key, &out), 0);
			assert_int_equal(out, i + 7);
		}
		for (uint32_t i = 0; i < 100; i++) {
			uint32_t gone = i, fresh = me + i;

			memcpy(key, &gone, 4);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
			memcpy(key, &fresh, 4);
			assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
			fresh += me;
			memcpy(key, &fresh, 4);
			assert_errno(bpfmap_update_elem(m, key, &v, BPFMAP_ANY), E2BIG);
		}
		assert_int_equal(walk_count(m, ks), me);
		bpfmap_free(m);
	}
}

/* A full map where one thread deletes and re-inserts key X over and over:
 * another thread's BPF_ANY updates of X must never see E2BIG (X is either
 * present, or absent with room for it), whatever the lock-free probe saw. */
struct frun {
	struct bpfmap *m;
	uint32_t x;
	int stop;
	uint64_t e2big, done;
};

static void *full_churn(void *arg)
{
	struct frun *r = arg;
	uint64_t v = 1;

	for (int i = 0; i < 200000; i++) {
		bpfmap_delete_elem(r->m, &r->x);
		bpfmap_update_elem(r->m, &r->x, &v, BPFMAP_ANY);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *full_updater(void *arg)
{
	struct frun *r = arg;
	uint64_t v = 2;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (bpfmap_update_elem(r->m, &r->x, &v, BPFMAP_ANY) == -E2BIG)
			r->e2big++;
		r->done++;
	}
	return NULL;
}

static void test_full_map_concurrent(void **state)
{
	(void)state;
	const uint32_t me = 64;
	struct frun r = { .m = flat_make(4, 8, me, 0, -1), .x = 5 };
	pthread_t a, b;
	uint64_t v = 0;

	for (uint32_t k = 0; k < me; k++)
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(pthread_create(&a, NULL, full_churn, &r), 0);
	assert_int_equal(pthread_create(&b, NULL, full_updater, &r), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	print_message("  %llu updates of a churned key in a full map\n",
		      (unsigned long long)r.done);
	assert_int_equal(r.e2big, 0);
	bpfmap_free(r.m);
}

/* ---- lock-free overwrites (flat_update.c) ------------------------------- */

static uint32_t stores_state(const struct flat *f)
{
	return __atomic_load_n(&f->stores, __ATOMIC_ACQUIRE);
}

/* Can this process use membarrier as the library does?  Without it every
 * overwrite takes the lock. */
static bool membarrier_usable(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/* A u32 -> u64 map of keys 0 .. n - 1, value k + 1000. */
static struct bpfmap *filled_u64_map(uint32_t me, uint32_t n)
{
	struct bpfmap *m = flat_make(4, 8, me, 0, -1);

	for (uint32_t k = 0; k < n; k++) {
		uint64_t v = k + 1000;

		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	return m;
}

struct held_update {
	struct bpfmap *m;
	uint32_t key;
	uint64_t value;
	int ret;
	int ready; /* atomic */
	int go;    /* atomic */
	int done;  /* atomic */
};

static void *held_update_thread(void *arg)
{
	struct held_update *u = arg;
	uint32_t other = u->key + 1;
	uint64_t v = 1;

	/* A thread's first overwrite takes the lock (and opens its window
	 * record for the next ones). */
	u->ret = bpfmap_update_elem(u->m, &other, &v, BPFMAP_EXIST);
	__atomic_store_n(&u->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&u->go, __ATOMIC_ACQUIRE))
		sched_yield();
	if (!u->ret)
		u->ret = bpfmap_update_elem(u->m, &u->key, &u->value, BPFMAP_EXIST);
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* An overwrite of a present key with a word value does not take the home's
 * lock: it completes while the test holds that lock. */
static void test_lockfree_overwrite(void **state)
{
	(void)state;
	struct bpfmap *m = filled_u64_map(100, 100);
	struct flat *f = to_flat(m);
	uint32_t k = 7, h = flat_home(f, hash_u32_key(f, k));
	struct held_update u = { .m = m, .key = k, .value = 77 };
	uint64_t v;
	pthread_t th;

	assert_int_equal(stores_state(f), STORES_ON);
	if (!membarrier_usable()) {
		print_message("  no membarrier: overwrites take the lock\n");
		bpfmap_free(m);
		skip();
	}
	assert_int_equal(pthread_create(&th, NULL, held_update_thread, &u), 0);
	while (!__atomic_load_n(&u.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	seq_spin_lock(&f->homes[h].lock);
	__atomic_store_n(&u.go, 1, __ATOMIC_RELEASE);
	int done = 0;
	for (int i = 0; i < 5000 && !(done = __atomic_load_n(&u.done, __ATOMIC_ACQUIRE)); i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	seq_spin_unlock(&f->homes[h].lock);
	pthread_join(th, NULL);
	assert_int_equal(done, 1); /* it did not wait for the lock */
	assert_int_equal(u.ret, 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 77);
	/* Deletes, fresh inserts and their reclamation leave them on. */
	for (k = 0; k < 50; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	flat_reclaim_sync(f);
	for (k = 1000; k < 1050; k++) {
		v = k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(stores_state(f), STORES_ON);
	for (k = 1000; k < 1050; k++) {
		v = 2 * k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_ANY), 0);
		assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
		assert_int_equal(v, 2 * k);
	}
	bpfmap_free(m);
}

/* What rewrites or returns a deleted slot's value before every lock-free
 * store that checked it could have landed turns them off for good:
 * lookup-and-delete (single and batch), and the reuse of a deleted slot
 * inside a read-side section.  A key deleted and inserted again takes a new
 * slot, which leaves them on. */
static void test_lockfree_stores_off(void **state)
{
	(void)state;
	struct bpfmap *m = filled_u64_map(100, 100);
	struct flat *f = to_flat(m);
	uint32_t k = 42, keys[100], cursor;
	uint64_t v = 5, values[100];

	/* Delete and insert again. */
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	assert_int_equal(stores_state(f), STORES_ON);
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(stores_state(f), STORES_ON);
	v = 6;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0); /* lock-free */
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 6);
	bpfmap_free(m);

	/* Lookup-and-delete. */
	m = filled_u64_map(100, 100);
	f = to_flat(m);
	assert_int_equal(bpfmap_lookup_and_delete_elem(m, &k, &v), 0);
	assert_int_equal(v, k + 1000);
	assert_int_equal(stores_state(f), STORES_OFF);
	bpfmap_free(m);

	/* Its batch form. */
	m = filled_u64_map(100, 100);
	f = to_flat(m);
	uint32_t count = 100;
	int ret = bpfmap_lookup_and_delete_batch(m, NULL, &cursor, keys, values, &count, NULL);
	assert_true(ret == 0 || (ret < 0 && errno == ENOENT));
	assert_int_equal(count, 100);
	assert_int_equal(stores_state(f), STORES_OFF);
	bpfmap_free(m);

	/* The in-section reuse: every free position (the homes' slots and
	 * the pool's nodes) used up, the dead ones awaiting this very
	 * section. */
	const uint32_t me = 8;
	uint32_t spare, free_all = 0;
	m = filled_u64_map(me, me);
	f = to_flat(m);
	assert_int_equal(f->n_homes, 2);
	for (uint32_t h = 0; h < f->n_homes; h++)
		free_all += count_tags(f, h * FLAT_SLOTS, (h + 1) * FLAT_SLOTS, FLAT_EMPTY);
	free_all += free_nodes(f);
	bpfmap_read_lock();
	for (spare = 0; free_for(f, 0) || free_for(f, 1); spare++) {
		k = spare;
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		k = spare + me;
		v = k;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(stores_state(f), STORES_ON); /* EMPTY positions so far */
	}
	assert_int_equal(spare, free_all);
	k = spare;
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	k = spare + me;
	v = k;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(stores_state(f), STORES_OFF);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, k);
	bpfmap_free(m);
}

struct window_waiter {
	struct bpfmap *m;
	bool lookup_and_delete; /* else delete and reclaim */
	int done;               /* atomic */
};

static void *window_waiter_thread(void *arg)
{
	struct window_waiter *w = arg;
	uint32_t k = 3;
	uint64_t v;

	if (w->lookup_and_delete) {
		assert_int_equal(bpfmap_lookup_and_delete_elem(w->m, &k, &v), 0);
	} else {
		assert_int_equal(bpfmap_delete_elem(w->m, &k), 0);
		flat_reclaim_sync(to_flat(w->m)); /* the deleted slot turns EMPTY */
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A lock-free store's window, held open as if its thread were preempted
 * between its check and its store: neither reclamation nor turning the
 * stores off gets past it.  Another map's reclamation and switch do not
 * wait for it (they did: a thread stopped inside an overwrite of one map
 * held up every other map's reclamation, and liburcu's callback thread
 * with it). */
static void test_lockfree_window_waited(void **state)
{
	(void)state;
	if (!membarrier_usable())
		skip();
	for (int i = 0; i < 4; i++) {
		bool same = i < 2;
		struct window_waiter w = { .m = filled_u64_map(100, 100),
					   .lookup_and_delete = i & 1 };
		struct bpfmap *other = filled_u64_map(100, 100);
		struct store_window *win =
			store_window_enter(true, store_window_owner(same ? w.m : other));
		pthread_t th;

		assert_non_null(win);
		assert_int_equal(pthread_create(&th, NULL, window_waiter_thread, &w), 0);
		if (same) {
			for (int n = 0; n < 200; n++) {
				struct timespec ts = { 0, 1000000 };

				nanosleep(&ts, NULL);
				assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
			}
		} else {
			/* the window is @other's: done with it still open */
			for (int n = 0; n < 10000 && !__atomic_load_n(&w.done, __ATOMIC_ACQUIRE);
			     n++) {
				struct timespec ts = { 0, 1000000 };

				nanosleep(&ts, NULL);
			}
			assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 1);
		}
		store_window_leave(win);
		pthread_join(th, NULL);
		assert_int_equal(w.done, 1);
		assert_int_equal(stores_state(to_flat(w.m)),
				 i & 1 ? STORES_OFF : STORES_ON);
		bpfmap_free(w.m);
		bpfmap_free(other);
	}
}

struct window_holder {
	int opened; /* atomic */
	int release; /* atomic */
};

static void *window_holder_thread(void *arg)
{
	struct window_holder *h = arg;
	struct store_window *win = store_window_enter(true, 0); /* any map's */

	assert_non_null(win);
	__atomic_store_n(&h->opened, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE))
		sched_yield();
	store_window_leave(win);
	return NULL;
}

/* A child of fork() does not wait for a window another thread of its parent
 * held at the fork: that thread does not exist in the child. */
static void test_lockfree_window_fork(void **state)
{
	(void)state;
	struct window_holder h = { 0 };
	struct bpfmap *m;
	pthread_t th;
	int status;

	if (!membarrier_usable())
		skip();
	/* The child starts a thread (liburcu's fork handler restarts its
	 * call_rcu worker there), which TSan refuses after a multi-threaded
	 * fork. */
	skip_under_tsan("it cannot follow a child of a multi-threaded fork that starts threads");
	m = filled_u64_map(100, 100);
	assert_int_equal(pthread_create(&th, NULL, window_holder_thread, &h), 0);
	while (!__atomic_load_n(&h.opened, __ATOMIC_ACQUIRE))
		sched_yield();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint32_t k = 3;
		uint64_t v;

		/* Turning the stores off waits for windows: not for that one. */
		_exit(bpfmap_lookup_and_delete_elem(m, &k, &v) == 0 && v == 1003 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	bpfmap_free(m);
}

/*
 * Lock-free overwrites racing deletes whose slots are reclaimed and refilled
 * with other keys: every value stays its own key's.  Values carry their key
 * in the low 32 bits; the overwriters write keys near the inserter's front,
 * which it deletes behind itself, so slots change keys under them all the
 * time (reclaimed after grace periods and refilled, never revived).  A store
 * landing in a slot that changed keys shows up as a value whose low bits name
 * another key.
 */
#define LF_WINDOW 200
#define LF_ME 256
#define LF_WRITERS 2

struct lf_run {
	struct bpfmap *m;
	uint32_t front; /* atomic: keys front - LF_WINDOW .. front - 1 are present */
	int stop;       /* atomic */
	uint64_t bad;   /* atomic */
};

static void *lf_overwriter(void *arg)
{
	struct lf_run *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x, n = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		uint32_t front = __atomic_load_n(&r->front, __ATOMIC_ACQUIRE);
		uint32_t k = front - 1 - (uint32_t)(rng_next(&x) % LF_WINDOW);
		uint64_t v = (++n << 32) | k;

		int ret = bpfmap_update_elem(r->m, &k, &v, BPFMAP_EXIST);
		if (ret && ret != -ENOENT)
			__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_lockfree_overwrite_race(void **state)
{
	(void)state;
	struct lf_run r = { .m = flat_make(4, 8, LF_ME, 0, -1) };
	struct flat *f = to_flat(r.m);
	pthread_t th[LF_WRITERS];
	uint32_t k;
	uint64_t v;

	for (k = 0; k < LF_WINDOW; k++) {
		v = k;
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	r.front = LF_WINDOW;
	for (int i = 0; i < LF_WRITERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, lf_overwriter, &r), 0);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t front = LF_WINDOW;; front++) {
		uint32_t old = front - LF_WINDOW;

		k = front;
		v = k;
		assert_int_equal(bpfmap_delete_elem(r.m, &old), 0);
		assert_int_equal(bpfmap_update_elem(r.m, &k, &v, BPFMAP_NOEXIST), 0);
		__atomic_store_n(&r.front, front + 1, __ATOMIC_RELEASE);
		/* The oldest key left: its value must be its own. */
		old++;
		assert_int_equal(bpfmap_lookup_elem(r.m, &old, &v), 0);
		if ((uint32_t)v != old)
			__atomic_fetch_add(&r.bad, 1, __ATOMIC_RELAXED);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= 1)
			break;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < LF_WRITERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(__atomic_load_n(&r.bad, __ATOMIC_RELAXED), 0);
	assert_int_equal(stores_state(f), STORES_ON); /* nothing turned them off */
	k = __atomic_load_n(&r.front, __ATOMIC_RELAXED);
	for (uint32_t i = k - LF_WINDOW; i < k; i++) {
		assert_int_equal(bpfmap_lookup_elem(r.m, &i, &v), 0);
		assert_int_equal((uint32_t)v, i);
	}
	print_message("  %u keys through %u positions (%u homes, %u nodes)\n", k,
		      f->pool_base + f->n_nodes, f->n_homes, f->n_nodes);
	bpfmap_free(r.m);
}

/* ---- bpfmap_free with reclamation queued -------------------------------- */

/* Fill a map of @ks-byte keys (key i: i in the first 4 bytes) to @me and
 * delete them all: the deletes queue a reclamation callback. */
static struct bpfmap *filled_then_emptied(uint32_t ks, uint32_t me)
{
	struct bpfmap *m = flat_make(ks, 8, me, 0, -1);
	unsigned char key[32] = { 0 };
	uint64_t v = 1;

	for (uint32_t i = 0; i < me; i++) {
		memcpy(key, &i, 4);
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < me; i++) {
		memcpy(key, &i, 4);
		assert_int_equal(bpfmap_delete_elem(m, key), 0);
	}
	return m;
}

/* Free right after a delete-heavy phase, the callback queued (the deletes
 * ran in a read-side section, so its grace period had not ended): the
 * callback, not free, releases the map.  ASan/Valgrind see any access to
 * it after the release, and a map never released as a leak at exit. */
static void test_free_queued(void **state)
{
	(void)state;
	static const uint32_t key_sizes[] = { 4, 8, 20 }; /* 20: element indices */

	for (size_t n = 0; n < ARRAY_SIZE(key_sizes); n++) {
		struct bpfmap *m;

		bpfmap_read_lock();
		m = filled_then_emptied(key_sizes[n], 2000);
		assert_int_not_equal(__atomic_load_n(&to_flat(m)->rq, __ATOMIC_ACQUIRE), 0);
		bpfmap_read_unlock();
		bpfmap_free(m); /* may race the callback, which may be running now */
	}
	rcu_wait_deferred(); /* every callback ran: each map released */
}

/* Another thread is in a read-side section (of no map) while a map with a
 * queued callback is freed: free does not wait for that section (it used to
 * wait for the callback, which waits for the section: with the reader
 * waiting for free in turn, a deadlock).  The reader gives up after
 * FREE_WATCHDOG_S, unlocks, and the test fails; it is a deadlock detector,
 * not a timing. */
#define FREE_WATCHDOG_S 30

struct free_reader {
	int in_section; /* atomic */
	int freed;      /* atomic */
	int gave_up;
};

static void *free_reader_thread(void *arg)
{
	struct free_reader *r = arg;
	struct timespec t0, now, ms = { 0, 1000000 };

	bpfmap_read_lock();
	__atomic_store_n(&r->in_section, 1, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&r->freed, __ATOMIC_ACQUIRE)) {
		nanosleep(&ms, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= FREE_WATCHDOG_S) {
			r->gave_up = 1;
			break;
		}
	}
	bpfmap_read_unlock();
	return NULL;
}

static void test_free_during_reader(void **state)
{
	(void)state;
	struct free_reader r = { 0 };
	struct bpfmap *m;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, free_reader_thread, &r), 0);
	while (!__atomic_load_n(&r.in_section, __ATOMIC_ACQUIRE))
		sched_yield();
	m = filled_then_emptied(8, 2000);
	/* Queued, and it cannot run before the reader leaves its section. */
	assert_int_not_equal(__atomic_load_n(&to_flat(m)->rq, __ATOMIC_ACQUIRE), 0);
	bpfmap_free(m);
	__atomic_store_n(&r.freed, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(r.gave_up, 0);
	rcu_wait_deferred(); /* the callback released the map */
}

/* The lowest bucket holding QUEUED slots, or UINT32_MAX. */
static uint32_t first_queued_bucket(const struct flat *f)
{
	for (uint32_t b = 0; b < f->n_buckets; b++)
		if (flat_match(__atomic_load_n(&f->buckets[b].tags, __ATOMIC_ACQUIRE),
			       FLAT_QUEUED * FLAT_BYTES_LO))
			return b;
	return UINT32_MAX;
}

/* Free racing the callback: at once (usually still queued), or as soon as
 * the callback has begun freeing slots (usually while it runs, or its next
 * round is queued).  ASan/TSan see an access after the release or a race
 * on the release, LSan a map neither released. */
static void test_free_racing_callback(void **state)
{
	(void)state;
	for (int round = 0; round < 40; round++) {
		struct bpfmap *m = filled_then_emptied(8, 4096);
		struct flat *f = to_flat(m);

		if (round % 2) {
			uint32_t b = first_queued_bucket(f);

			while (b != UINT32_MAX &&
			       flat_match(__atomic_load_n(&f->buckets[b].tags, __ATOMIC_ACQUIRE),
					  FLAT_QUEUED * FLAT_BYTES_LO))
				sched_yield();
		}
		bpfmap_free(m);
	}
	rcu_wait_deferred();
}

/* Free while the callback runs: held in its wait for lock-free stores'
 * windows (flat_stores_settle) by a window another thread keeps open across
 * the free (this thread's own would refuse its deletes: sync/reentry.h).
 * With kick_at deletes (and what the shards may hold back) its one
 * round ends clearing rq, where it finds
 * the map handed over; with all deleted it queues itself again, and the next
 * round finds it at its start.  The sleep lets the callback start (if it has
 * not, free hands the map over at its start: as safe, less covered). */
static void test_free_in_running_callback(void **state)
{
	(void)state;
	if (!membarrier_usable())
		skip();
	for (int round = 0; round < 2; round++) {
		const uint32_t me = 4096;
		struct bpfmap *m = flat_make(8, 8, me, 0, -1);
		struct flat *f = to_flat(m);
		/* Sharded counts reach f->dead a flush per shard late. */
		uint32_t n = round ? me
				   : f->kick_at + (f->count.shards ? (f->count.shard_mask + 1) * FLAT_DEAD_FLUSH : 0);
		struct timespec ts = { 0, 50 * 1000000 };
		uint64_t k, v = 1;
		struct window_holder h = { 0 };
		pthread_t holder;

		for (k = 0; k < me; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(pthread_create(&holder, NULL, window_holder_thread, &h), 0);
		while (!__atomic_load_n(&h.opened, __ATOMIC_ACQUIRE))
			sched_yield();
		for (k = 0; k < n; k++)
			assert_int_equal(bpfmap_delete_elem(m, &k), 0);
		assert_int_not_equal(__atomic_load_n(&f->rq, __ATOMIC_ACQUIRE), 0);
		nanosleep(&ts, NULL);
		bpfmap_free(m);
		__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
		assert_int_equal(pthread_join(holder, NULL), 0);
	}
	rcu_wait_deferred();
}

/*
 * Two groups: the single-threaded cases (the test's own thread only; the
 * library's reclamation thread may run beside it), which Valgrind also runs
 * (`test_flat --single-threaded`, tests/CMakeLists.txt), and the cases that
 * start threads or race the reclamation thread on purpose.
 */
int main(int argc, char **argv)
{
	const struct CMUnitTest single_threaded[] = {
		test_entry(test_swar),
		test_entry(test_geometry),
		test_entry(test_mem_usage),
		test_entry(test_tiny_maps),
		test_entry(test_chain),
		test_entry(test_last_home),
		test_entry(test_one_home),
		test_entry(test_reuse_in_section),
		test_entry(test_reuse_node_other_home),
		test_entry(test_churn),
		test_entry(test_no_reuse_under_pointer),
		test_entry(test_dead_words),
		test_entry(test_match_by_key),
		test_entry(test_cursor),
		test_entry(test_kernel_batch_pattern),
		test_entry(test_long_keys_locked),
		test_entry(test_elements),
		test_entry(test_routing),
		test_entry(test_long_lookups),
		test_entry(test_full_map),
		test_entry(test_sharded_counts),
		test_entry(test_lockfree_stores_off),
		test_entry(test_free_queued),
	};
	const struct CMUnitTest threaded[] = {
		test_entry(test_concurrent_shared_buckets),
		test_entry(test_full_map_concurrent),
		test_entry(test_insert_beside_reclaim),
		test_entry(test_lockfree_overwrite),
		test_entry(test_lockfree_window_waited),
		test_entry(test_lockfree_window_fork),
		test_entry(test_lockfree_overwrite_race),
		test_entry(test_free_during_reader),
		test_entry(test_free_racing_callback),
		test_entry(test_free_in_running_callback),
	};
	bool only_single = argc > 1 && !strcmp(argv[1], "--single-threaded");
	int failed;

	if (argc > 2 || (argc == 2 && !only_single)) {
		fprintf(stderr, "usage: %s [--single-threaded]\n", argv[0]);
		return 2;
	}
	if (test_chain_forced())
		return test_chain_forced_skipped("the flat table's own tests");
	failed = run_test_group(single_threaded);
	if (!only_single)
		failed += run_test_group(threaded);
	return failed;
}
