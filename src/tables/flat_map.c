/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat table as a map: creation, freeing, memory use and its operations.
 * The per-key operations are in flat_update.c, the lookups in flat_lookup.c,
 * the walks in flat_iter.c; the invariants in tables/flat.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash/sized_hash.h"
#include "tables/flat.h"
#include "tables/flat_lru.h"
#include "tables/pool_slack.h"
#include "util/big_alloc.h"
#include "util/cpu.h"

/* Hand f to its reclamation callback, if one is queued (sync/handoff.h). */
static void flat_free(struct bpfmap *map)
{
	struct flat *f = to_flat(map);

	if (handoff_free(&f->rq))
		flat_release(f);
}

/*
 * Home buckets.  Keys of at most 8 bytes get one home slot per element: a
 * position holds a key and its value, and every one left empty costs them
 * (a full map's chains hold about 14% of its keys, from its buckets'
 * Poisson spread, so as many home slots stay empty); that keeps 8-byte keys
 * with 8-byte values within 24 bytes an element.  Dearer positions (per-CPU
 * values, the LRU's state byte) tip the balance further, and LRU maps are
 * always full: those maps get 8/9 of a home slot per element, which puts
 * about 5% of the keys more in chains (19%) and saves 1.1 bytes an element
 * in a full 8 + 8 map (a Poisson model; LRU_HASH: 24.3 to 23.2 with its
 * state byte, PERCPU_HASH on 2 CPUs: 32.2 to 30.7).  Longer keys' positions
 * are 6 bytes (an element index and the bucket's share), so they get 8/7
 * of that, and fewer chains (about 9% of the keys).
 */
static uint64_t flat_homes_for(uint32_t max_entries, uint32_t key_size, bool dear_pos)
{
	bool long_keys = key_size > 8;
	uint64_t slots = long_keys  ? ((uint64_t)max_entries * 8 + 6) / 7
			 : dear_pos ? ((uint64_t)max_entries * 8 + 8) / 9
				    : (uint64_t)max_entries;
	uint64_t n = (slots + FLAT_SLOTS - 1) / FLAT_SLOTS;

	/* 4- and 8-byte keys match by key only from two homes on, and a map
	 * of a few counters (a program's statistics) is the one looked up
	 * on every packet: a second home's ~100 bytes buy it the word-key
	 * lookups (docs/PERFORMANCE.md).  Not for one element: the batch
	 * cursor's units stay within the kernel's one bucket. */
	if ((key_size == 4 || key_size == 8) && max_entries >= FLAT_MATCH_BY_KEY_MIN &&
	    n < FLAT_MATCH_BY_KEY_MIN)
		return FLAT_MATCH_BY_KEY_MIN;
	return n ? n : 1;
}

/*
 * Word-key maps of two homes or more match by key (flat.h): pick the dead
 * words, 0 and a word of another home, and store them in every home slot
 * (calloc left 0 everywhere).  A second home is found in one or two tries
 * but for parameters that put all 65 words tried in one home (negligible
 * odds with the hash's random parameters); such a map matches by tags
 * instead.
 */
static void flat_init_dead_words(struct flat *f, uint32_t ks)
{
	uint64_t mask = ks == 4 ? UINT32_MAX : UINT64_MAX;

	f->dead_word[0] = 0;
	f->dead_home = flat_home(f, flat_hash_kind(f, &f->dead_word[0], f->hash_kind));
	for (uint64_t i = 1; i <= 64; i++) {
		uint64_t w = (i * 0x9e3779b97f4a7c15ULL) & mask;

		if (flat_home(f, flat_hash_kind(f, &w, f->hash_kind)) != f->dead_home) {
			f->dead_word[1] = w;
			for (uint32_t s = 0; s < FLAT_SLOTS; s++)
				flat_store_small(f, f->dead_home * FLAT_SLOTS + s, ks, w);
			f->match_by_key = true;
			return;
		}
	}
}

/*
 * A pool array's share of mem_usage: @whole bytes past the homes' (which
 * fixed_bytes counts), @unit of them per node or element handed out.  From
 * mmap its pages cost memory once touched, so per unit handed out; from the
 * heap (arrays under BIG_ALLOC_MMAP_MIN, every one in ASan builds) all of
 * it at once: small maps' figures were 3-16 times too low.
 */
static void flat_count_pool(struct flat *f, const void *array, uint64_t whole, uint64_t unit,
			    bool per_elem)
{
	if (!big_is_mapped(array))
		f->fixed_bytes += whole;
	else if (per_elem)
		f->elem_bytes += (uint32_t)unit;
	else
		f->node_bytes += (uint32_t)unit;
}

static size_t flat_mem_usage(const struct bpfmap *map)
{
	const struct flat *f = to_flat(map);
	uint32_t hwm = __atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED);
	uint32_t elems = __atomic_load_n(&f->next_elem, __ATOMIC_RELAXED);

	/* What the map has touched: the pool is address space until used. */
	return f->fixed_bytes + (size_t)ROUND_UP(hwm, FLAT_SLOTS) * f->node_bytes +
	       (size_t)elems * f->elem_bytes + (f->lru ? flat_lru_mem(f) : 0);
}

/*
 * The program view's lookup for f's view (flat.h, FLAT_VIEW_*): specialised
 * where flat_lookup_for has one, else the plain one wrapped, by the mark
 * and then by the CPU's slot.  f->pcpu_inner gets the lookup of CPU 0's
 * slot (marking, in an evicting map).  0, or flat_lru_init's error.
 */
static int flat_map_lookups(struct flat *f, const struct map_params *p, map_lookup_fn *out)
{
	bool words = f->match_by_key && !f->elems;
	bool rseq = p->cpus && cpu_rseq_usable();
	unsigned int view = (p->evict ? FLAT_VIEW_LRU : 0) | (p->cpus ? FLAT_VIEW_PCPU : 0) |
			    (rseq ? FLAT_VIEW_RSEQ : 0);
	map_lookup_fn lookup = flat_lookup_for(f->hash_kind, p->key_size, f->value_stride, words, 0);
	map_lookup_fn best = flat_lookup_for(f->hash_kind, p->key_size, f->value_stride, words, view);

	if (p->evict) {
		int ret = flat_lru_init(f, p->max_entries, lookup);

		if (ret)
			return ret;
		lookup = flat_lookup_for(f->hash_kind, p->key_size, f->value_stride, words,
					 FLAT_VIEW_LRU);
		if (!lookup)
			lookup = flat_lru_lookup;
	}
	if (p->cpus) {
		f->pcpu_inner = lookup;
		lookup = rseq ? flat_percpu_lookup_rseq : flat_percpu_lookup;
	}
	*out = best ? best : lookup;
	return 0;
}

/*
 * Sizes.  Positions: n_homes * 8 home slots, then the pool's n_nodes (the
 * last pool bucket's slots past them stay BUSY for ever).  Keys of at most 8
 * bytes are stored per position, longer ones per element, of which there
 * are as many as positions; values per element too when keys are long or
 * values FLAT_VALUE_ELEM_MIN bytes and more, else per position.  The pool holds max_entries
 * nodes and spares, so that every element could be a node (a tiny map's
 * few homes); it is address space until used (big_zalloc maps it): nodes
 * are handed out from the free list, else in order.
 */
struct bpfmap *flat_create(const struct map_params *p, int *err)
{
	struct flat *f = big_zalloc(sizeof(*f)); /* 64-byte aligned: aligned members */
	map_lookup_fn lookup;
	map_copy_fn copy;
	int ret;
	uint64_t key_stride = p->key_size <= 4 ? 4 : ROUND_UP((uint64_t)p->key_size, 8);
	/* Per-CPU maps: a slot of value_stride bytes per CPU, each in its
	 * CPU's region (flat.h). */
	uint64_t value_stride = ROUND_UP((uint64_t)p->value_size, 8);
	uint64_t cpus = p->cpus ? p->cpus : 1;
	uint64_t slots = value_stride * cpus; /* an element's value, every CPU's slot */
	uint64_t version = flat_params_versioned(p) ? FLAT_VERSION_BYTES : 0;
	uint64_t value_bytes = slots + version; /* an element's */
	/* ... of which memory: the slots of CPUs in gaps of the possible
	 * list are in regions never touched (mem_usage counted them, 2048
	 * times too much for "0,4095"). */
	uint64_t value_used = (p->cpus ? map_params_value_bytes(p) : slots) + version;
	uint64_t slot_size = key_stride + value_bytes;
	bool long_keys = p->key_size > 8;
	/* Elements: positions (home slots, nodes) that no key uses then cost
	 * 4 bytes of index instead of a value slot each. */
	bool by_elem = long_keys || slots >= FLAT_VALUE_ELEM_MIN;
	uint64_t pos_bytes = long_keys ? sizeof(uint32_t)
				       : key_stride + (by_elem ? sizeof(uint32_t) : value_used);
	uint64_t n_homes, n_nodes, n_buckets, n_pos, home_pos, node_pos, slack, sync_at, versions;

	if (!f || slot_size > UINT32_MAX)
		goto nomem;
	n_homes = flat_homes_for(p->max_entries, p->key_size,
				 !by_elem && (p->cpus > 1 || p->evict));
	slack = pool_slack(p->max_entries, slot_size + 12); /* + node_next, tags, homes */
	n_nodes = (uint64_t)p->max_entries + slack;
	n_buckets = n_homes + (n_nodes + FLAT_SLOTS - 1) / FLAT_SLOTS;
	if (n_buckets >= UINT32_MAX / FLAT_SLOTS || slot_size * n_buckets > SIZE_MAX / 16)
		goto nomem;
	n_pos = n_buckets * FLAT_SLOTS;
	home_pos = n_homes * FLAT_SLOTS;
	f->n_homes = (uint32_t)n_homes;
	f->n_buckets = (uint32_t)n_buckets;
	f->pool_base = (uint32_t)home_pos;
	f->n_nodes = (uint32_t)n_nodes;
	f->node_soft_cap = (uint32_t)(p->max_entries / 4 + slack);
	f->key_stride = (uint32_t)key_stride;
	f->value_stride = (uint32_t)value_stride;
	f->bits_words = (f->n_buckets + 63) / 64;
	f->cursor_end = roundup_pow_of_two_u32(p->max_entries);
	/* Batch units (flat_iter.c): up to 8 a home, no more than the
	 * kernel's buckets. */
	f->batch_sub_bits = FLAT_BATCH_SUB_BITS;
	while (f->batch_sub_bits && (n_homes << f->batch_sub_bits) > f->cursor_end)
		f->batch_sub_bits--;
	/* Reclaim in batches: each costs a scan of the flagged buckets and a
	 * grace period, and what it waits for lengthens the chains. */
	f->kick_at = p->max_entries / 64 > 16 ? p->max_entries / 64 : 16;
	/* Far more than that: the reclamation lags (readers hold grace periods
	 * back), and inserts that would find room at home take it first. */
	sync_at = 4 * f->kick_at > slack ? 4 * f->kick_at : slack;
	f->sync_at = (uint32_t)waiting_bounded(sync_at, slot_size, p->max_entries);
	f->reclaim_first = f->sync_at < sync_at;
	/* Large elements: inserts reclaim first (flat_update.c), and a
	 * reclamation kicked at every delete or two would leave them nothing
	 * to reclaim while it waits out its grace period. */
	if (f->reclaim_first)
		f->kick_at = 2 * f->sync_at;

	f->buckets = big_zalloc((size_t)n_buckets * sizeof(struct flat_bucket));
	f->homes = big_zalloc((size_t)n_homes * sizeof(struct flat_home));
	f->node_next = big_zalloc((size_t)n_nodes * sizeof(uint32_t));
	/* 63 bytes of slack: lookups load a bucket's keys a line at a time. */
	f->keys = big_zalloc((size_t)(n_pos * key_stride) + 63);
	/* The versions (flat_value_version) fill whole lines before the
	 * values, which stay line-aligned. */
	versions = ROUND_UP(n_pos * version, 64);
	/* A gap in the possible CPUs: its slots are never touched. */
	f->values_mem = (value_used < slots + version ? big_zalloc_sparse : big_zalloc)(
		(size_t)(versions + n_pos * slots) + 63);
	if (f->values_mem)
		f->values = f->values_mem + versions;
	if (p->cpus)
		f->cpu_region = (size_t)(n_pos * value_stride);
	if (!f->buckets || !f->homes || !f->node_next || !f->keys || !f->values_mem)
		goto nomem;
	if (by_elem && !(f->elems = big_zalloc((size_t)n_pos * sizeof(uint32_t))))
		goto nomem;
	f->queued_bits = calloc(2 * (size_t)f->bits_words, sizeof(uint64_t));
	f->wait_marks = calloc(f->bits_words, 64 / FLAT_MARK_SPAN);
	if (!f->queued_bits || !f->wait_marks)
		goto nomem;
	freelist_init_on(&f->node_free, f->node_next, f->n_nodes);
	f->sync_bits = f->queued_bits + f->bits_words;
	for (uint32_t h = 0; h < f->n_homes; h++)
		f->homes[h].chain = FLAT_NONE;
	for (uint64_t pos = home_pos + n_nodes; pos < n_pos; pos++)
		f->buckets[pos / FLAT_SLOTS].tags |= (uint64_t)FLAT_BUSY << (8 * (pos % FLAT_SLOTS));
	if (count_init(&f->count, p->max_entries))
		goto nomem;
	/* Large elements count their few dead slots exactly: a shard tells
	 * f->dead every FLAT_DEAD_FLUSH, more than their sync_at. */
	f->dead_shards = f->reclaim_first ? NULL : f->count.shards;
	f->dead_mask = f->count.shard_mask;
	if (!f->dead_shards && !f->reclaim_first && cpu_shards()) {
		f->dead_shards = big_zalloc(cpu_shards() * sizeof(*f->dead_shards));
		if (!f->dead_shards)
			goto nomem;
		f->dead_mask = cpu_shards() - 1;
	}
	hash_params_init(&f->hp, p->map_flags & BPFMAP_F_ZERO_SEED);

	f->fixed_bytes = sizeof(*f) + (size_t)n_homes * (sizeof(struct flat_bucket) +
							 sizeof(struct flat_home)) +
			 (size_t)home_pos * pos_bytes +
			 3 * (size_t)f->bits_words * sizeof(uint64_t) + count_mem(&f->count) +
			 (f->dead_shards && f->dead_shards != f->count.shards
				  ? (f->dead_mask + 1) * sizeof(*f->dead_shards)
				  : 0);
	node_pos = n_pos - home_pos;
	flat_count_pool(f, f->buckets, (n_buckets - n_homes) * sizeof(struct flat_bucket),
			sizeof(struct flat_bucket) / FLAT_SLOTS, false);
	flat_count_pool(f, f->node_next, n_nodes * sizeof(uint32_t), sizeof(uint32_t), false);
	/* Long keys and values of elements: per element, every position's. */
	flat_count_pool(f, f->keys, long_keys ? n_pos * key_stride : node_pos * key_stride,
			key_stride, long_keys);
	flat_count_pool(f, f->values_mem, by_elem ? n_pos * value_used : node_pos * value_used,
			value_used, by_elem);
	if (by_elem)
		flat_count_pool(f, f->elems, node_pos * sizeof(uint32_t), sizeof(uint32_t), false);
	f->mul = f->hp.mul;
	f->fin = f->hp.fin;
	f->hash_kind = hash_kind_for_key_size(p->key_size);
	f->hash = hash_fn_for_kind(f->hash_kind);
	if ((f->hash_kind == HASH_U32 || f->hash_kind == HASH_U64) &&
	    f->n_homes >= FLAT_MATCH_BY_KEY_MIN)
		flat_init_dead_words(f, p->key_size);
	ret = flat_map_lookups(f, p, &lookup);
	if (ret) {
		flat_release(f);
		*err = ret;
		return NULL;
	}
	map_init_common(&f->map, p, p->cpus ? &flat_percpu_ops : &flat_ops, lookup);
	copy = flat_copy_for(f);
	if (copy)
		map_set_copy(&f->map, copy);
	return &f->map;

nomem:
	if (f)
		flat_release(f);
	*err = -ENOMEM;
	return NULL;
}

/* What every flat map does the same way. */
#define FLAT_OPS_COMMON                                                                            \
	.free = flat_free, .lookup_elem = flat_lookup_elem, .update_elem = flat_update_elem,       \
	.delete_elem = flat_delete_elem, .lookup_and_delete_elem = flat_lookup_and_delete_elem,    \
	.get_next_key = flat_get_next_key, .lookup_batch = flat_lookup_batch,                      \
	.mem_usage = flat_mem_usage

const struct map_ops flat_ops = {
	FLAT_OPS_COMMON,
	.lookup_bulk = flat_lookup_bulk,
};

/* Per-CPU maps: the program view of a CPU's slot, and parts of values. */
const struct map_ops flat_percpu_ops = {
	FLAT_OPS_COMMON,
	.lookup_bulk = flat_percpu_lookup_bulk,
	.update_part = flat_update_part,
	.lookup_percpu = flat_lookup_percpu,
	.percpu_add = flat_percpu_add,
};
