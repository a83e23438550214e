/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH, preallocated: buckets of eight slots, one per home, and
 * overflow chains.  bpfmap_create() chooses it for keys of at most 8 bytes
 * and for maps of HASH_FLAT_LONG_MIN_ENTRIES elements and more (maps/hash.c says
 * why); it works for every key size and map size, and tests/test_flat.c
 * covers them all.  docs/ARCHITECTURE.md has the design at length; the
 * invariants:
 *
 * Layout.  A hash maps to its home by fastrange (flat_place_of).  Each home
 * has a bucket: eight slots with a tag byte each (struct flat_bucket: tags,
 * a seqcount, the lock-free store switch) and, in struct flat_home, a lock
 * word and the head of its overflow chain.  Keys of a home that find its
 * bucket full go to nodes: the slots of the pool buckets after the homes,
 * linked through node_next.  A position (bucket * 8 + slot) names a slot or
 * a node alike: its key, value, tag and seq are found the same way.  Keys
 * never move, so a program-view pointer stays valid; no key lives outside
 * its home's bucket and chain, so nothing a delete leaves behind lengthens
 * another home's lookups (linear probing did: issue 14, a full map 20x slower
 * after churn).  Keys of at most 8 bytes are stored in slot order (a
 * bucket's keys are contiguous, compared at once by SIMD); longer keys, and
 * values of FLAT_VALUE_ELEM_MIN bytes and more, go through a 4-byte element
 * index per position (elems), elements handed out in insertion order and
 * kept for ever.
 *
 * Tags.  EMPTY (free), BUSY (claimed by an inserter), WAIT (deleted; readers
 * may still hold it), QUEUED or SYNCQ (deleted; a grace period runs for it),
 * or a live tag 0x80..0xff (0x80 | 7 bits of the fastrange below the home).
 *
 * Writers.  Every insert and delete holds its home's lock, so keys are unique
 * and NOEXIST/EXIST exact.  An insert takes the first EMPTY slot of its home
 * bucket, else a node (the pool's free list, else a never used one), fills
 * it (a home slot inside the seq of its bucket: flat_fill says why a fresh
 * node needs none) and publishes it: a slot by its tag, a node by linking
 * it at the chain's head (release) and then its tag.  Tags change by one
 * byte store where their writer owns the slot (flat_set_tag).  A
 * delete turns the tag to WAIT (a node is unlinked first); the position is
 * reused only after a grace period (reclamation: WAIT -> QUEUED -> EMPTY,
 * batched, flat.c), except by an insert inside a read-side section that finds
 * nothing else (flat_reuse_dead), which rewrites a dead position at once
 * inside its bucket's seq: copy-out lookups and chain walks validate against
 * it; a program-view pointer to the deleted element may then read the new
 * key's value.  The element count (sync/count.h) brackets each insert and
 * delete, so -E2BIG is exact.  Overwrites of word values without a spin lock
 * may store without the lock in a per-thread window (flat_update.c).  Other
 * overwrites write inside their value's own version (flat_value_version),
 * not their bucket's seq: a bucket's seq changes only with its keys.
 *
 * Readers.  Lookups of 4- and 8-byte keys compare the home bucket's eight
 * keys with the key and read no tags ("matching by key": a home slot that
 * is not live holds its bucket's dead word, flat_dead_word, which no key of
 * that home equals); a miss walks the chain.  Longer keys match tags, then
 * compare candidates, validated by the bucket's seq.  A chain walk reads each
 * node's key and next inside that node's bucket seq and starts over if a
 * reuse rewrote the node meanwhile.  Copy-out lookups of word keys take no
 * read-side section for the home bucket (seq-validated) and one for a
 * chain; everything else that reads keys in place runs in one.  A value
 * copied out counts if its bucket's seq (its key) and its version (its
 * bytes) held still around the copy.
 *
 * Batch operations take up to an eighth of a home at a time (by tag bits),
 * under the home's lock; the cursor counts those units (flat_iter.c).
 */
#ifndef BPFMAP_TABLES_FLAT_H
#define BPFMAP_TABLES_FLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/map.h"
#include "sync/rcu.h"
#include "sync/seqcount.h"
#include "sync/spin_lock.h"
#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "sync/count.h"
#include "sync/handoff.h"
#include "sync/store_switch.h"
#include "tables/flat_group.h"
#include "tables/value.h"
#include "util/compiler.h"
#include "util/cpu.h"
#include "util/freelist.h"
#include "util/key_equal.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

#define FLAT_SLOTS 8
#define FLAT_BATCH_SUB_BITS 3 /* at most 8 batch units a home (flat_iter.c) */

/* Values of this stride and more live in elements (an index per position,
 * as long keys do): a full 8 B + 256 B map in 274 bytes an element rather
 * than 306, since the home slots and nodes no key uses hold no value. */
#define FLAT_VALUE_ELEM_MIN 128

struct flat_bucket {
	uint64_t tags; /* atomic */
	uint32_t seq;  /* atomic */
	uint32_t stores; /* atomic: STORES_ON while lock-free overwrites may
			  * store into its slots (beside the tags they check) */
};

/* Per home, apart from the buckets' tags: a writer taking a lock would
 * otherwise steal the line that lookups of four buckets read. */
struct flat_home {
	uint32_t lock;	 /* sync/spin_lock.h: seq_spin_lock, versions the home */
	uint32_t chain;	 /* atomic: the first node of the overflow chain, or FLAT_NONE */
	uint64_t filter; /* atomic: flat_filter_bit() of each linked node's tag */
};

struct flat_lru;

struct flat {
	struct bpfmap map; /* 72 bytes: the fields below fill its second line */
	/* Hot: what every lookup and copy-out reads, in one cache line (the
	 * struct is allocated line-aligned; the assertion below checks it). */
	struct flat_bucket *buckets; /* n_homes homes, then the pool's buckets */
	char *keys;   /* element e's key at e * key_stride */
	char *values; /* element e's value at e * value_stride */
	/* Keys longer than 8 bytes: position -> element index + 1 (0 until the
	 * position's first fill; atomic), NULL for shorter (element == position). */
	uint32_t *elems;
	uint64_t mul, fin; /* the hash's parameters for word keys (hp's) */
	uint32_t n_homes;      /* buckets a hash maps to: 0 .. n_homes - 1 */
	uint32_t value_stride; /* value_size padded to 8 */
	/* The rest: chains, writers, walks. */
	struct flat_home *homes;
	uint32_t moved;	       /* atomic, a seq (mwseq_*): nodes relinked at once (flat_chain_find) */
	uint32_t key_stride;   /* 4 for keys of at most 4 bytes, else key_size padded to 8 */
	uint32_t n_buckets;    /* n_homes, then the pool's */
	hash_fn hash;
	uint32_t cursor_end; /* batch cursor after the last unit: the kernel's bucket count */
	uint32_t batch_sub_bits; /* batch units per home: 1 << this (flat_iter.c) */
	/* Per node (position - pool_base), atomic: the chain's next, or the free
	 * list's while the node is on it (node_free's links). */
	uint32_t *node_next;
	uint32_t pool_base;  /* the first node's position: n_homes * 8 */
	uint32_t n_nodes;    /* the pool's nodes: max_entries + pool_slack() */
	uint32_t node_soft_cap; /* nodes handed out before a reclamation is preferred */
	char *values_mem;	/* values' allocation (their versions before them) */
	size_t fixed_bytes;	/* mem_usage: held from creation on */
	uint32_t node_bytes;	/* mem_usage: per node handed out */
	uint32_t elem_bytes;	/* mem_usage: per element handed out (long keys) */
	/* What the lookups of per-CPU and evicting maps read beside the hot
	 * line, on this line that no writer touches (the next ones' counters
	 * and free lists would drag it between cores). */
	uint8_t *lru_state;   /* lru->state, for the marking lookups (one load fewer) */
	/* Per-CPU maps (tables/flat_percpu.c): CPU c's slot of an element at
	 * its value (the values array holds CPU 0's) + c * cpu_region, so
	 * that two CPUs' slots never share a line; 0 for one shared value.
	 * pcpu_inner: the lookup of CPU 0's slot that the program view wraps. */
	size_t cpu_region;
	map_lookup_fn pcpu_inner;
	/* The counts, on a cache line of their own (the struct is allocated
	 * line-aligned): writers on other cores must not also steal the line
	 * of the fields every operation reads.  Dead slots (WAIT + QUEUED) are
	 * counted in dead plus dead_shards' aux deltas (flushed at
	 * +-FLAT_DEAD_FLUSH): two CPUs deleting must not pass one counter's
	 * line to and fro. */
	struct count count __attribute__((aligned(64))); /* sync/count.h */
	int32_t dead; /* atomic */
	/* What writers read, never write (the next lines' fields they do). */
	uint32_t kick_at __attribute__((aligned(64))); /* dead slots that start a reclamation */
	uint32_t sync_at;    /* dead slots from which an insert reclaims first (flat_update.c) */
	/* Large elements (sync_at bounded in bytes): an insert reclaims first
	 * even where its home has a free slot (flat_update.c). */
	bool reclaim_first;
	struct flat_lru *lru; /* evicting maps (LRU_HASH): tables/flat_lru.h; else NULL */
	struct count_shard *dead_shards; /* per CPU (count's if sharded); NULL: 1 CPU,
					  * or reclaim_first */
	uint32_t dead_mask; /* dead_shards has dead_mask + 1 */
	uint32_t bits_words; /* words of queued_bits and sync_bits */
	enum hash_kind hash_kind;
	bool match_by_key; /* see "Matching by key" above */
	uint32_t dead_home;	/* home of dead_word[0] */
	uint64_t dead_word[2];	/* flat_dead_word */
	uint8_t *wait_marks; /* atomic: a byte per FLAT_MARK_SPAN buckets (flat_reclaim.c) */
	uint64_t *queued_bits; /* atomic words: buckets with QUEUED slots; owner: rq */
	uint64_t *sync_bits;   /* buckets with SYNCQ slots; owner: sync_busy */
	uint32_t stores; /* sync/store_switch.h, ON (0) at first: flat_stores.c */
	/* The allocators of positions and elements. */
	uint32_t node_hwm __attribute__((aligned(64))); /* atomic: nodes ever handed out (0 .. n_nodes) */
	uint32_t next_elem;  /* atomic: elements handed out to slots (long keys) */
	struct freelist node_free; /* nodes reclaimed, by node index */
	/* The reclaimers'. */
	uint64_t rq __attribute__((aligned(64))); /* sync/handoff.h: the reclamation callback (flat_reclaim.c) */
	uint32_t sync_busy;  /* atomic: 1 while an inserter reclaims synchronously */
	struct rcu_head rcu;
	struct hash_params hp; /* last: 1 KiB, its coefficients at a constant offset */
};

_Static_assert(offsetof(struct flat, buckets) >= 64 &&
		       offsetof(struct flat, value_stride) + sizeof(uint32_t) <= 128,
	       "struct flat's hot fields must share the line after the map's first");

#define FLAT_NONE UINT32_MAX /* no slot */
#define FLAT_MARK_SPAN 8     /* buckets per wait mark: as many bytes as a bitmap */

/* What a program-view lookup does beside finding the value: mark it (an
 * evicting map's, tables/flat_lru.h), return the calling CPU's slot (a
 * per-CPU map's, flat_percpu.c), by rseq's CPU number unchecked (RSEQ). */
#define FLAT_VIEW_LRU 1u
#define FLAT_VIEW_PCPU 2u
#define FLAT_VIEW_RSEQ 4u

static ALWAYS_INLINE struct flat *to_flat(const struct bpfmap *map)
{
	return container_of(map, struct flat, map);
}

/* ---- dead slots: approximate counts that start reclamation ---- */

#define FLAT_DEAD_FLUSH 16 /* dead slots a shard counts before f->dead hears */

int32_t flat_dead_flush(struct flat *f, struct count_shard *s);

/* A slot turned dead (deleted): returns f->dead when it just grew (a shard
 * flushed, or at once in unsharded maps), else INT32_MIN. */
static ALWAYS_INLINE int32_t flat_dead_inc(struct flat *f)
{
	struct count_shard *s;

	if (!f->dead_shards)
		return __atomic_add_fetch(&f->dead, 1, __ATOMIC_RELAXED);
	s = &f->dead_shards[cpu_current() & f->dead_mask];
	if (__atomic_add_fetch(&s->aux, 1, __ATOMIC_RELAXED) < FLAT_DEAD_FLUSH)
		return INT32_MIN;
	return flat_dead_flush(f, s);
}

/* A dead slot taken back (the in-section reuse).  A shard flushes either
 * way, so that f->dead also hears of reuses on other CPUs than the deletes. */
static ALWAYS_INLINE void flat_dead_dec(struct flat *f)
{
	struct count_shard *s;

	if (!f->dead_shards) {
		__atomic_fetch_sub(&f->dead, 1, __ATOMIC_RELAXED);
		return;
	}
	s = &f->dead_shards[cpu_current() & f->dead_mask];
	if (__atomic_sub_fetch(&s->aux, 1, __ATOMIC_RELAXED) <= -FLAT_DEAD_FLUSH)
		(void)flat_dead_flush(f, s);
}

/* Dead slots as the counters see them (tests, single-threaded checks). */
int32_t flat_dead_total(const struct flat *f);

/* The map's hash of @key; @kind is a constant in specialised paths, so the
 * word-sized hashes inline there. */
static ALWAYS_INLINE uint64_t flat_hash_kind(const struct flat *f, const void *key,
					     enum hash_kind kind)
{
	if (kind == HASH_U32)
		return fast_hash_u32(load_u32(key), f->mul, f->fin);
	if (kind == HASH_U64)
		return fast_hash_u64_mem(key, f->mul, f->fin);
	return f->hash(key, f->map.key_size, &f->hp);
}

static ALWAYS_INLINE uint64_t flat_hash(const struct flat *f, const void *key)
{
	return flat_hash_kind(f, key, f->hash_kind);
}

/*
 * Where a hash lives: its home bucket, (hash * n_homes) >> 64 (fastrange:
 * the hash's top bits, where every hash here is universal), and its tag,
 * the next 7 bits of that product.  Together they are the fastrange of the
 * hash onto 128 * n_homes cells, so a pair of keys shares home and tag about
 * as often as it would share a cell of a table 128 times larger
 * (hash/hash_finish.h).  The compiler computes the product once for both.
 */
struct flat_place {
	uint32_t home, tag;
};

/* Both from one multiply (the compiler does not merge two). */
static ALWAYS_INLINE struct flat_place flat_place_of(const struct flat *f, uint64_t hash)
{
	unsigned __int128 m = (unsigned __int128)hash * f->n_homes;

	return (struct flat_place){ (uint32_t)(m >> 64), FLAT_TAG_MIN | (uint32_t)((uint64_t)m >> 57) };
}

static ALWAYS_INLINE uint32_t flat_home(const struct flat *f, uint64_t hash)
{
	return (uint32_t)(((unsigned __int128)hash * f->n_homes) >> 64);
}

/* The element of position pos (one that is or was live: its first fill
 * assigned it before publishing it, and it never changes).  Stored + 1, so
 * that the pool's never used positions need no initialising store. */
static ALWAYS_INLINE uint32_t flat_elem_of(const struct flat *f, uint32_t pos)
{
	return f->elems ? __atomic_load_n(&f->elems[pos], __ATOMIC_RELAXED) - 1 : pos;
}

/* Slot pos's key and value.  Keys of at most 8 bytes are indexed by
 * position, so a bucket's keys are contiguous (a lookup of a small key reads
 * one or two cache lines of keys, compared together); longer keys, and the
 * values of maps with elems, by the position's element (see "Layout" at the
 * top).  A program-view lookup never touches the value it returns. */
static ALWAYS_INLINE char *flat_key_at(const struct flat *f, uint32_t pos)
{
	return f->keys + (size_t)(f->key_stride > 8 ? flat_elem_of(f, pos) : pos) * f->key_stride;
}

/* The value of element @e: every value address is computed here.  @vs: the
 * value stride when the caller knows it as a constant (8), else 0. */
static ALWAYS_INLINE char *flat_value_elem(const struct flat *f, size_t e, uint32_t vs)
{
	return f->values + e * (vs ? vs : f->value_stride);
}

/*
 * Values that one store cannot replace (over 8 bytes a slot, or holding a
 * spin lock) are overwritten inside a seqcount of their own, per element,
 * in an array before the values (element e's the (e + 1)-th word back: no
 * other field needed).  With the bucket's seq, overwrites of one key
 * spoiled the copy-outs of the seven others, and one preempted held off
 * every long-key lookup of the bucket.  Apart from the values, it costs 4
 * bytes an element, not 8, and a 64-byte value stays on one line.  Per-CPU
 * values of at most 8 bytes a slot without a lock keep the bucket's seq:
 * their 32 bytes an element (8 + 8) leave no room for it.
 */
#define FLAT_VERSION_BYTES 4

static ALWAYS_INLINE bool flat_params_versioned(const struct map_params *p)
{
	return p->value_size > 8 || p->lock_off >= 0;
}

static ALWAYS_INLINE bool flat_versioned(const struct flat *f)
{
	return f->map.prog_value_size > 8 || map_has_lock(&f->map);
}

static ALWAYS_INLINE uint32_t *flat_value_version(const struct flat *f, size_t e)
{
	return (uint32_t *)(void *)f->values - 1 - e;
}

static ALWAYS_INLINE char *flat_value_at(const struct flat *f, uint32_t pos)
{
	return flat_value_elem(f, flat_elem_of(f, pos), 0);
}

/* The calling CPU's slot of the per-CPU value whose CPU 0 slot is @v. */
static ALWAYS_INLINE char *flat_pcpu_here(const struct flat *f, char *v, bool rseq)
{
	return map_pcpu_here(&f->map, v, f->cpu_region, rseq);
}

/* Element @e's value out to @dst as the syscall view lays it out (per-CPU
 * maps: every CPU's slot); the caller validates the copy. */
static ALWAYS_INLINE void flat_value_out(const struct flat *f, size_t e, void *dst)
{
	if (f->cpu_region)
		value_pcpu_out(&f->map, dst, flat_value_elem(f, e, 0), f->cpu_region);
	else
		shared_copy_out(dst, flat_value_elem(f, e, 0), f->map.value_size);
}

/* The same, without a lock: false when an overwrite was busy on the value or
 * ran during the copy (its version; @versioned: flat_versioned(f), which
 * callers specialised per map pass as a constant).  The caller validates
 * the key, by its bucket's seq, around this. */
static ALWAYS_INLINE bool flat_value_copy_as(const struct flat *f, size_t e, void *dst,
					     bool versioned)
{
	/* Read before the version's acquire, lest the compiler read them again. */
	const char *v = flat_value_elem(f, e, 0);
	const uint32_t *ver = flat_value_version(f, e);
	size_t region = f->cpu_region;
	uint32_t size = f->map.value_size;
	uint32_t s = 0;

	if (versioned) {
		s = __atomic_load_n(ver, __ATOMIC_ACQUIRE);
		if (unlikely(s & SEQCOUNT_WRITING))
			return false;
	}
	if (region)
		value_pcpu_out(&f->map, dst, v, region);
	else
		shared_copy_out(dst, v, size);
	return !versioned || !seqcount_read_retry(ver, s);
}

static ALWAYS_INLINE bool flat_value_copy(const struct flat *f, size_t e, void *dst)
{
	return flat_value_copy_as(f, e, dst, flat_versioned(f));
}

/* Is @pos a node of the pool (else a home bucket's slot)? */
static ALWAYS_INLINE bool flat_is_node(const struct flat *f, uint32_t pos)
{
	return pos >= f->pool_base;
}

/* The chain's next of node @pos (in a read-side section, or the home's lock
 * held: a node is not reused before a grace period but by the in-section
 * reuse, which the walks detect by the seq). */
static ALWAYS_INLINE uint32_t flat_node_next(const struct flat *f, uint32_t pos)
{
	return __atomic_load_n(&f->node_next[pos - f->pool_base], __ATOMIC_ACQUIRE);
}

static ALWAYS_INLINE uint32_t flat_chain(const struct flat *f, uint32_t h)
{
	return __atomic_load_n(&f->homes[h].chain, __ATOMIC_ACQUIRE);
}

/*
 * A home's chain filter: one bit per linked node, chosen by 6 bits of its
 * tag.  A key whose bit is clear is not in the chain, so a miss reads the
 * home's filter and not its nodes, unless a node shares the bit (about one
 * chance in 64 per node).  Writers hold the home's lock: an insert sets its
 * bit before it links the node, a delete recomputes the filter from the
 * nodes left after it unlinked its own.  A reader that finds the bit clear
 * read the filter before the key's node went live (its tag's store comes
 * after the bit) or after it was hidden: absent either way.
 */
static ALWAYS_INLINE uint64_t flat_filter_bit(uint32_t tag)
{
	return 1ULL << (tag & 63);
}

static ALWAYS_INLINE bool flat_chain_may_hold(const struct flat *f, uint32_t h, uint32_t tag)
{
	return __atomic_load_n(&f->homes[h].filter, __ATOMIC_ACQUIRE) & flat_filter_bit(tag);
}

/* A key of at most 8 bytes as the slot stores it: zero-padded, one word (of
 * 4 bytes when key_stride is 4). */
static ALWAYS_INLINE uint64_t flat_small_key(const void *key, uint32_t ks)
{
	uint64_t k = 0;

	if (ks == 8) {
		/* Two halves: callers often write keys with 4-byte stores, and an
		 * 8-byte load of them would stall on store forwarding. */
		uint32_t lo, hi;

		load_u32_halves(key, &lo, &hi);
		k = lo | (uint64_t)hi << 32;
	} else if (ks == 4) {
		k = load_u32(key);
	} else {
		memcpy(&k, key, ks < 8 ? ks : 8); /* ks < 8 here */
	}
	return k;
}

/* flat_small_key()'s inverse: the key's @ks bytes back at @dst.  A word
 * key's copy-out keeps its key so for its retries, which must not read the
 * caller's buffer again once the value may have overwritten it
 * (map_value_overlaps_key). */
static ALWAYS_INLINE void flat_small_key_put(uint64_t k, void *dst, uint32_t ks)
{
	uint32_t lo = (uint32_t)k, hi = (uint32_t)(k >> 32);

	if (ks == 8) {
		memcpy(dst, &lo, 4);
		memcpy((char *)dst + 4, &hi, 4);
	} else if (ks == 4) {
		memcpy(dst, &lo, 4);
	} else {
		memcpy(dst, &k, ks < 8 ? ks : 8);
	}
}

/* The stored word of a small key (one atomic load: writers store it whole). */
static ALWAYS_INLINE uint64_t flat_small_at(const struct flat *f, uint32_t pos, uint32_t ks)
{
	const char *p = f->keys + (size_t)pos * (ks <= 4 ? 4 : 8);

	if (ks <= 4)
		return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);
	return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_ACQUIRE);
}

/* Store slot pos's key word (release: a fill stores the value first). */
static ALWAYS_INLINE void flat_store_small(const struct flat *f, uint32_t pos, uint32_t ks,
					   uint64_t w)
{
	char *p = f->keys + (size_t)pos * (ks <= 4 ? 4 : 8);

	if (ks <= 4)
		__atomic_store_n((uint32_t *)(void *)p, (uint32_t)w, __ATOMIC_RELEASE);
	else
		__atomic_store_n((uint64_t *)(void *)p, w, __ATOMIC_RELEASE);
}

#define FLAT_MATCH_BY_KEY_MIN 2 /* homes: two dead words of distinct homes */

/*
 * The word that every slot of home bucket b holds unless it is live (see
 * "Matching by key"): dead_word[0], whose home is dead_home, in every bucket
 * but that one, which gets dead_word[1], of another home.  No key whose home
 * is b can equal it, so the lookups that compare b's keys without the tags
 * never match a dead slot.
 */
static ALWAYS_INLINE uint64_t flat_dead_word(const struct flat *f, uint32_t b)
{
	return f->dead_word[b == f->dead_home];
}

/* Copy slot pos's key out (whole words: it may be rewritten meanwhile). */
static ALWAYS_INLINE void flat_copy_key_out(const struct flat *f, uint32_t pos, void *dst)
{
	uint32_t ks = f->map.key_size;

	if (ks <= 8) {
		uint64_t w = flat_small_at(f, pos, ks); /* little-endian: the key's bytes */

		memcpy(dst, &w, ks);
	} else {
		shared_copy_out(dst, flat_key_at(f, pos), ks);
	}
}

/* Compare a slot's key (longer than 8 bytes) with @key.  Under the key's
 * home lock the bytes are stable.  Elsewhere a reuse of the position may
 * rewrite them during the compare (an insert into a deleted slot writes
 * under the bucket's seq), so lock-free callers validate the answer by that
 * seq.  The compare is util/key_equal.h's. */

static ALWAYS_INLINE bool flat_key_eq(const struct flat *f, uint32_t pos, const void *key,
				      uint32_t ks, uint64_t small)
{
	if (ks <= 8)
		return flat_small_at(f, pos, ks) == small;
	return key_equal_long(flat_key_at(f, pos), key, ks);
}

/* The tag byte of position pos. */
static ALWAYS_INLINE uint32_t flat_tag_at(const struct flat *f, uint32_t pos)
{
	uint64_t tags = __atomic_load_n(&f->buckets[pos / FLAT_SLOTS].tags, __ATOMIC_ACQUIRE);

	return (uint32_t)(tags >> (8 * (pos % FLAT_SLOTS))) & 0xff;
}

/* Copy the value of slot pos out to @dst; the spin lock field reads as zero.
 * @with_lock (a lookup's F_LOCK copy): false, nothing copied, when the
 * thread is marked and the lock held (value_copy_out_locked). */
bool flat_copy_value_locked_out(const struct flat *f, uint32_t pos, void *dst, bool with_lock);

/* What an eviction hands its insert (flat_kill_locked, flat_lru_evict). */
#define FLAT_EVICT_ROOM 1u  /* the victim's room in the count */
#define FLAT_EVICT_SMALL 2u /* its count among the small queue's elements */

/* Delete the element at @pos, home h's (locked; the caller in a read-side
 * section if keys are longer than 8 bytes); @prev: for a node, the node
 * before it in the chain (FLAT_NONE: it is the head); @evicted, NULL for a
 * delete: an eviction's, for the insert it makes room for, which takes over
 * the victim's room in the count (COUNT_CREDIT) and, when the victim was
 * small, its place in the small queue's count (FLAT_EVICT_SMALL, set in
 * *@evicted).  Returns true when reclamation should be started (flat_kick)
 * after unlocking. */
bool flat_kill_locked(struct flat *f, uint32_t h, uint32_t pos, uint32_t prev,
		      uint32_t *evicted);

/* The node before node @pos in home h's chain (locked), FLAT_NONE for the head. */
uint32_t flat_chain_prev(const struct flat *f, uint32_t h, uint32_t pos);

/* Start reclaiming deleted slots if no reclamation is under way. */
void flat_kick(struct flat *f);

/* Byte i of a bucket's tag word, in memory. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FLAT_TAG_BYTE(i) (i)
#else
#define FLAT_TAG_BYTE(i) (7 - (i))
#endif

/*
 * Replace tag byte i of bucket bk's tag word, whose writer owns the slot
 * (its home's lock holder, or the claimer of a BUSY position): one byte
 * store.  Other bytes of the word change meanwhile, but only by whole-word
 * CASes (the reclaimers', the claims of deleted slots), which fail and
 * retry over a byte that changed under them, so no update is lost; a CAS
 * here cost an evicting insert of an LRU map four locked instructions.
 */
static ALWAYS_INLINE void flat_set_tag(struct flat_bucket *bk, uint32_t i, uint32_t tag)
{
	__atomic_store_n((uint8_t *)&bk->tags + FLAT_TAG_BYTE(i), (uint8_t)tag, __ATOMIC_RELEASE);
}

/* Store @value, or @part of it (per-CPU maps; NULL: all of @value), into
 * slot pos (the caller keeps readers out: seq or a one-word store); @fresh:
 * a new element, whose per-CPU slots outside @part are zeroed. */
void flat_store_value(const struct flat *f, uint32_t pos, const void *value,
		      const struct value_part *part, bool fresh);

/* Fill claimed (BUSY) position pos with key and value (or @part, as
 * flat_store_value) inside its bucket's seq and publish @tag there;
 * FLAT_BUSY leaves it claimed (a node, which its inserter links first).
 * @unseen: no reader can be in the position, so the seq is left alone (a
 * node off the free list or never used: nodes are read only in read-side
 * sections, by way of a chain, and a grace period passed since it left
 * one; a home slot, by contrast, is read by copy-outs outside any). */
void flat_fill(struct flat *f, uint32_t pos, uint32_t tag, const void *key, uint64_t small,
	       const void *value, const struct value_part *part, bool unseen);

/* Reclaim every deleted slot now (outside read-side sections only); false,
 * at once, when another thread is at it. */
bool flat_reclaim_try(struct flat *f);
/* The same, waiting for that other thread instead (its grace period serves
 * the caller too). */
void flat_reclaim_sync(struct flat *f);

/* Release f and everything it holds: no one uses it, no callback touches it. */
void flat_release(struct flat *f);

/* A word key (of hash @hash) not in its home bucket: in the home's chain, or
 * absent; out of line (flat.c, for the lookups of flat_lookup.c and
 * flat_words_x86.c). */
void *flat_lookup_word_far(struct flat *f, uint64_t hash, uint32_t ks, uint64_t small);
/* The same, marking what it finds (an evicting map's: tables/flat_lru.h). */
void *flat_lookup_word_far_lru(struct flat *f, uint64_t hash, uint32_t ks, uint64_t small);
/* The same for a per-CPU map: the calling CPU's slot (marked when @lru). */
void *flat_lookup_word_far_pcpu(struct flat *f, uint64_t hash, uint32_t ks, uint64_t small,
				bool lru);

/* The far path for @view (FLAT_VIEW_* bits, a constant where it is called). */
static ALWAYS_INLINE void *flat_lookup_word_far_view(struct flat *f, uint64_t hash, uint32_t ks,
						     uint64_t small, unsigned int view)
{
	if (view & FLAT_VIEW_PCPU)
		return flat_lookup_word_far_pcpu(f, hash, ks, small, view & FLAT_VIEW_LRU);
	if (view & FLAT_VIEW_LRU)
		return flat_lookup_word_far_lru(f, hash, ks, small);
	return flat_lookup_word_far(f, hash, ks, small);
}

/* Turn lock-free overwrites off for good and wait until none is in flight;
 * cheap once done.  Anything that rewrites a deleted slot before a grace
 * period or returns a deleted value calls it first (flat_update.c says why).
 * Callable anywhere, read-side sections and home locks included. */
void flat_stores_off(struct flat *f);

/* Wait until no lock-free overwrite that may have seen a slot live before
 * now is in flight (unless they are off).  The reclaimers call it before
 * they turn deleted slots EMPTY: such a store checks its slot outside any
 * read-side section, so a grace period does not cover it.  Callable anywhere. */
void flat_stores_settle(struct flat *f);

/* The per-key operations (flat_update.c). */
int flat_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags);
int flat_delete_elem(struct bpfmap *map, const void *key);
int flat_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags);
int flat_update_part(struct bpfmap *map, const void *key, const void *src, uint32_t len,
		     uint32_t off, uint32_t step, uint32_t n, uint64_t mode);
/* Under @key's home lock: its value copied to @value if not NULL (@lockf:
 * under the value's spin lock too), then the key deleted unless @keep.  0,
 * or -ENOENT.  With @keep, the copy-out that no stream of in-place writes
 * can hold off (SEQ_READ_PATIENCE): every writer of a value holds its home's
 * lock, or stores one word at once. */
int flat_take(struct flat *f, const void *key, void *value, bool lockf, bool keep);

/* Per-CPU maps' program view (flat_percpu.c): the lookup of the calling
 * CPU's slot around f->pcpu_inner, the slot of a given CPU, an add into the
 * calling CPU's, and the bulk lookup. */
void *flat_percpu_lookup(struct bpfmap *map, const void *key);
void *flat_percpu_lookup_rseq(struct bpfmap *map, const void *key);
void *flat_lookup_percpu(struct bpfmap *map, const void *key, uint32_t cpu);
int flat_percpu_add(struct bpfmap *map, const void *key, uint64_t delta);
int flat_percpu_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values);

/* The lookups (flat_lookup.c); flat_lookup_for picks the program-view lookup
 * specialised for a key size and @view (FLAT_VIEW_* bits), or NULL where
 * there is none for the view: the map then wraps the plain one
 * (flat_lru_lookup, flat_percpu_lookup). */
int flat_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags);
int flat_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values);
map_lookup_fn flat_lookup_for(enum hash_kind kind, uint32_t key_size, uint32_t value_stride,
			      bool match_by_key, unsigned int view);
/* The copy-out specialised for f's keys and values (map->copy), or NULL
 * for the general one. */
map_copy_fn flat_copy_for(const struct flat *f);

/* A map on the flat table (p checked by its type); NULL, *err = -errno. */
struct bpfmap *flat_create(const struct map_params *p, int *err);

int flat_get_next_key(struct bpfmap *map, const void *key, void *next_key);
int flat_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch,
		      void *keys, void *values, uint32_t *count, uint64_t elem_flags,
		      bool do_delete);

extern const struct map_ops flat_ops, flat_percpu_ops;

#endif
