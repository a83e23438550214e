/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_HASH, preallocated: a flat table of slots in buckets of eight.
 * bpfmap_create() chooses it for keys of at most 8 bytes and for maps of
 * FLAT_LONG_MIN_ENTRIES elements and more (core/map.c says why); it works for
 * every key size and map size, and tests/test_flat.c covers them all.
 *
 * Layout.  n_buckets buckets (not a power of two: a hash maps to its "home"
 * bucket by fastrange, (hash * n_homes) >> 32; n_homes == n_buckets except in
 * small maps, which get overflow buckets after the homes, see below).  Each
 * bucket has 16 bytes of metadata, and a 4-byte lock word in an array of
 * its own (writers' locking must not touch the lines lookups read):
 *  - tags: one byte per slot.  EMPTY (free), BUSY (claimed by an inserter, or
 *    a slot past the end of a short last bucket), WAIT (deleted; readers may
 *    still hold it), QUEUED or SYNCQ (deleted; a grace period is running for
 *    it), or a live tag 0x80..0xff (0x80 | 7 bits of the key's hash);
 *  - seq: low 8 bits count the writers busy on the bucket's slots, the high
 *    24 bits are a version bumped when each finishes (a seqcount that
 *    tolerates several writers, who hold different home locks);
 *  - lock: bit 0 is the spin lock of the bucket *as a home*; bits 1..15 count
 *    its unlocks (flat_unlock); bits 16..31 are the home's max displacement
 *    (FLAT_DIST_ANY: unbounded).
 * Keys and values live in two arrays indexed by element: keys of at most 4
 * bytes in 4 bytes, others padded to 8; values padded to 8.  For keys of at
 * most 8 bytes the element is the slot (b * 8 + i for slot i of bucket b):
 * a bucket's keys are contiguous, so a lookup of a 4- or 8-byte key compares
 * all eight at once (SSE2, AVX2 or AVX-512, the best the CPU runs, chosen at
 * creation: maps/flat_words.h; 32 or 64 bytes) and, in all but the tiniest
 * maps, takes a match as live without reading the tags ("Matching by key"
 * below), and a program-view lookup computes the value's address without
 * touching it: one cache line of keys.
 * Elements.  Longer keys are compared one candidate at a time anyway, so they
 * go through a 4-byte element index per slot (elems[]): a slot takes the next
 * unused element at its first fill and keeps it for ever (there are as many
 * elements as slots), so keys inserted in some order lie in that order, as
 * the chained table's preallocated elements do.  Maps filled and then read in
 * related orders (the lookup benchmark: sequential keys) find the next key on
 * the next cache line instead of anywhere in the key array: at 128-byte keys
 * in a 100000-entry map, about 6x the lookups per second of slot-indexed
 * keys (27 against 4.0-4.5 M/s, bpfmap-bench bpf-hashmap-lookup).  The
 * index is written before the slot's first tag is published (release) and
 * never changes, so readers that saw a live tag read it with a plain
 * (relaxed) load; lookups prefetch the home's eight indices with its tags.
 * Sizing.  There are about 8/7 as many slots as max_entries (fewer for large
 * elements, to stay within the memory budget; always at least max_entries +
 * 1).  Small maps get at least FLAT_SPARE_MIN spare slots (fewer for large
 * elements; from 16384 elements on, within the budget) in overflow buckets
 * after the homes, so that deletes and inserts can go on at full speed while
 * deleted slots await a grace period; the homes stay as many as 8/7 x
 * max_entries needs, so batch cursors fit the kernel's bucket count.
 *
 * Placement.  A key lives in its home bucket h or in h + d (cyclically) for
 * d <= max_dist(h); keys never move (nor do slots' elements).  Lookups scan
 * those buckets: word keys by the bucket-wide compare, longer ones by
 * matching the tag bytes (SSE2 or SWAR) and comparing the candidates' keys.
 * Each map gets lookups specialised for its key size at creation (4, 8, 16,
 * 32, 64, 128, 256 bytes, or any), the home bucket inline and the rest out of
 * line.
 * Deleting a home's farthest key lowers its max_dist to the farthest one left.
 *
 * Writers.  Every insert and delete, and every update in place but the
 * lock-free overwrites below, holds the key's home bucket's lock, so keys are
 * unique and NOEXIST/EXIST are exact.  An insert claims an EMPTY slot by CAS
 * of the tag word, writes key and value inside the slot bucket's seq, and
 * publishes the tag with release; max_dist is raised before.  The element
 * count (sync/count.h) brackets each insert and delete, so -E2BIG is exact;
 * with more slots than max_entries an EMPTY or deleted slot always exists
 * below it.  Updates of word keys first probe for the key without the lock:
 * an insert into a full map is refused (-E2BIG) without it when the home's
 * lock word reads unlocked and unchanged around the probe and the count
 * says full and quiescent (see
 * flat_probe_full).  An overwrite of a value of at most 8
 * bytes (no spin lock) takes no lock: in a per-thread "window", it checks
 * that the slot found still holds the key live and stores the word; what
 * would hand a deleted slot's value to someone else while such a store may
 * be in flight waits for the windows (flat_update.c has the design and the
 * proof: reclamation waits each time; the in-section reuse and
 * lookup-and-delete turn lock-free stores off for the map's lifetime).
 * Other overwrites take the lock only to check the slot found and store.
 *
 * Deletion and reuse.  A delete turns the tag to WAIT; the slot becomes
 * EMPTY only after an RCU grace period, so a program-view pointer stays valid
 * (the same key's value) until the read-side section that got it ends, as
 * for the chained table.  Reclamation is batched per map: one rcu_head, a
 * bitmap of buckets with WAIT slots, one of buckets with QUEUED ones and one
 * of buckets with SYNCQ ones.
 * When the deleted slots pile up (kick_at), the deleter moves WAIT to QUEUED
 * and queues the callback, which turns QUEUED into EMPTY.  An insert that
 * finds no EMPTY slot (all spare slots await readers) reclaims them itself:
 * WAIT and QUEUED to SYNCQ, one synchronize_rcu(), SYNCQ to EMPTY (liburcu's
 * callback thread batches grace periods 10 ms apart: too slow to wait for).
 * Inside a read-side section it cannot wait for readers (itself among them):
 * it reuses a deleted slot at once instead (flat_reuse_dead), as the kernel
 * reuses preallocated elements, so an insert never fails while the map has
 * room.  The reuse rewrites key and value inside the bucket's seq: copy-out
 * lookups and long-key compares validate against it; a program-view pointer
 * to the deleted element may then read the new key's value.  Outside that
 * case no slot changes key before a grace period, not even for the key it
 * held (a program-view pointer to a deleted key never shows a later
 * insert's value).
 *
 * Readers.  Copy-out lookups of keys up to 8 bytes take no lock and enter no
 * read-side section: they validate a match and its value copy with the slot
 * bucket's seq.  Everything else that compares or reads keys in place (the
 * program view, copy-outs of longer keys, writers of longer keys, iteration)
 * runs in a read-side section: a slot seen live (or WAIT) there is not reused
 * before it ends, except by the in-section reuse above, which compares of
 * keys longer than a word detect by the seq (flat_find).  Updates in place
 * of values of at most 8 bytes (without a spin lock) are one atomic store
 * and skip the seq.
 * Matching by key (f->match_by_key: word keys, at least
 * FLAT_MATCH_BY_KEY_MIN homes).  The program-view lookups of 4- and 8-byte
 * keys compare the home bucket's keys and read no tags, so no slot of a
 * bucket may hold, unless live, a key whose home that bucket is:
 *  - creation fills every home slot with its bucket's dead word
 *    (flat_dead_word: one of two per-map words of different homes);
 *  - a delete from the key's home bucket replaces the key with that word
 *    (a displaced key keeps its word: its home is another bucket), which
 *    stays until the slot is filled again; the walks that copy keys out read
 *    the tag again after the key and take a changed tag as gone;
 *  - a fill stores the value before the key (release), so a reader that
 *    sees the key sees the value.
 * Copy-out lookups compare the home bucket's keys the same way, so both
 * views see an insert from its key's store on; writers and iteration go by
 * the tags.  Measured against the tag-masked compare (bpfmap-bench, pinned,
 * medians of 5): 8-byte keys +10% in the small map, +8% in the medium one,
 * 0-5% in the large one; 4-byte keys +9%, +16%, +13%.
 *
 * Batch operations use the home bucket as their unit, under its lock, so a
 * home's membership is one consistent snapshot (values of at most 8 bytes
 * may be stored without the lock, as in the chained table: each is read
 * whole), and the cursor is a home
 * index (the walk ends at roundup_pow_of_two(max_entries), the kernel's bucket
 * count, so cursors behave as the kernel's).  Walk order is slot order, not
 * the kernel's bucket order.
 */
#ifndef BPFMAP_MAPS_FLAT_H
#define BPFMAP_MAPS_FLAT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/map.h"
#include "core/rcu.h"
#include "hash/fast_hash.h"
#include "hash/hash_select.h"
#include "sync/count.h"
#include "util/compiler.h"
#include "util/cpu.h"
#include "util/key_equal.h"
#include "util/shared_copy.h"

#if defined(__SSE2__) && !defined(BPFMAP_TSAN)
/* Small keys compared a bucket at a time (SSE2 is part of x86-64).  TSan
 * builds use the scalar path: the vector loads read slots being filled. */
#include <emmintrin.h>
#define FLAT_SIMD 1
#else
#define FLAT_SIMD 0
#endif

#define FLAT_SLOTS 8

/* Tag bytes. */
#define FLAT_EMPTY 0
#define FLAT_BUSY 1
#define FLAT_WAIT 2
#define FLAT_QUEUED 3
#define FLAT_SYNCQ 4 /* deleted; an inserter's own grace period covers it */
#define FLAT_TAG_MIN 0x80 /* live tags: 0x80 | 7 bits of the hash */

#define FLAT_SEQ_WRITERS 0xffu /* writers busy on the bucket */
#define FLAT_SEQ_DONE 0xffu    /* added when a writer ends: +0x100 - 1 */

#define FLAT_LOCK_BIT 1u
#define FLAT_LOCK_VER 0xfffeu /* bits 1..15: bumped by each unlock */
#define FLAT_DIST_SHIFT 16
#define FLAT_DIST_ANY 0xffffu

#define FLAT_BYTES_LO 0x0101010101010101ULL
#define FLAT_BYTES_7F 0x7f7f7f7f7f7f7f7fULL
#define FLAT_BYTES_HI 0x8080808080808080ULL

struct flat_bucket {
	uint64_t tags; /* atomic */
	uint32_t seq;  /* atomic */
	uint32_t stores; /* atomic: FLAT_STORES_ON while lock-free overwrites may
			  * store into its slots (beside the tags they check) */
};

struct flat {
	struct bpfmap map;
	/* Hot: what every lookup reads, in one cache line. */
	struct flat_bucket *buckets;
	/* Per home: lock bit, unlock count, max displacement (atomic).  Apart
	 * from the buckets' tags, on their own cache lines: a writer taking a
	 * lock would otherwise steal the line that lookups of four buckets
	 * read, from every other core, on each update. */
	uint32_t *locks;
	char *keys;   /* element e's key at e * key_stride */
	char *values; /* element e's value at e * value_stride */
	/* Keys longer than 8 bytes: slot -> element index (FLAT_NONE until the
	 * slot's first fill; atomic), NULL for shorter keys (element == slot). */
	uint32_t *elems;
	uint64_t mul, fin; /* the hash's parameters for word keys (hp's) */
	const struct hash_params *hp;
	uint32_t n_homes;      /* buckets a hash maps to: 0 .. n_homes - 1 */
	uint32_t key_stride;   /* 4 for keys of at most 4 bytes, else key_size padded to 8 */
	uint32_t value_stride; /* value_size padded to 8 */
	uint32_t n_buckets;    /* n_homes, then overflow buckets (small maps) */
	hash_fn hash;
	uint32_t n_slots;    /* real slots; n_buckets * 8 minus a short last bucket */
	uint32_t cursor_end; /* batch cursor after the last home */
	/* The counts, on a cache line of their own (the struct is allocated
	 * line-aligned): writers on other cores must not also steal the line
	 * of the fields every operation reads.  Dead slots (WAIT + QUEUED) are
	 * counted in dead, in sharded maps dead plus the shards' aux deltas
	 * (flushed at +-FLAT_DEAD_FLUSH). */
	struct count count __attribute__((aligned(64))); /* sync/count.h */
	int32_t dead; /* atomic */
	uint32_t kick_at __attribute__((aligned(64))); /* dead slots that start a reclamation */
	uint32_t rq;         /* atomic: FLAT_RQ_* (flat.c), reclamation queued or running */
	uint32_t sync_busy;  /* atomic: 1 while an inserter reclaims synchronously */
	uint32_t bits_words; /* words of each bucket bitmap */
	uint32_t next_elem;  /* atomic: elements handed out to slots (long keys) */
	enum hash_kind hash_kind;
	bool match_by_key; /* see "Matching by key" above */
	uint32_t dead_home;	/* home of dead_word[0] */
	uint64_t dead_word[2];	/* flat_dead_word */
	uint32_t stores; /* atomic: FLAT_STORES_*, lock-free overwrites (flat_update.c) */
	uint64_t *wait_bits;   /* atomic words: buckets with WAIT slots */
	uint64_t *queued_bits; /* atomic words: buckets with QUEUED slots; owner: rq */
	uint64_t *sync_bits;   /* buckets with SYNCQ slots; owner: sync_busy */
	struct rcu_head rcu;
	size_t mem_bytes;
};

#define FLAT_NONE UINT32_MAX /* no slot */

/* struct flat's stores (and each bucket's copy, which the stores read): may
 * an overwrite store a word value without the home's lock?  ON (0, as calloc
 * leaves it) until something needs every store under the lock; then OFF for
 * good (flat_stores_off, flat_update.c). */
#define FLAT_STORES_ON 0
#define FLAT_STORES_STOPPING 1
#define FLAT_STORES_OFF 2

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

	if (!f->count.shards)
		return __atomic_add_fetch(&f->dead, 1, __ATOMIC_RELAXED);
	s = &f->count.shards[cpu_current() & f->count.shard_mask];
	if (__atomic_add_fetch(&s->aux, 1, __ATOMIC_RELAXED) < FLAT_DEAD_FLUSH)
		return INT32_MIN;
	return flat_dead_flush(f, s);
}

/* A dead slot taken back (the in-section reuse).  A shard flushes either
 * way, so that f->dead also hears of reuses on other CPUs than the deletes. */
static ALWAYS_INLINE void flat_dead_dec(struct flat *f)
{
	struct count_shard *s;

	if (!f->count.shards) {
		__atomic_fetch_sub(&f->dead, 1, __ATOMIC_RELAXED);
		return;
	}
	s = &f->count.shards[cpu_current() & f->count.shard_mask];
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
	return f->hash(key, f->map.key_size, f->hp);
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

/* 0x80 in each byte of tags equal to the byte broadcast in bcast, else 0
 * (exact: no false positives). */
static ALWAYS_INLINE uint64_t flat_match(uint64_t tags, uint64_t bcast)
{
	uint64_t x = tags ^ bcast;

	return ~(((x & FLAT_BYTES_7F) + FLAT_BYTES_7F) | x) & FLAT_BYTES_HI;
}

/* 0x80 in each byte holding a live tag (>= FLAT_TAG_MIN). */
static ALWAYS_INLINE uint64_t flat_live(uint64_t tags)
{
	return tags & FLAT_BYTES_HI;
}

/* The slot of a match mask's lowest byte. */
static ALWAYS_INLINE uint32_t flat_first(uint64_t mask)
{
	return (uint32_t)__builtin_ctzll(mask) >> 3;
}

/* The element of slot pos (a slot that is or was live: its first fill
 * assigned it before publishing its tag, and it never changes). */
static ALWAYS_INLINE uint32_t flat_elem_of(const struct flat *f, uint32_t pos)
{
	return f->elems ? __atomic_load_n(&f->elems[pos], __ATOMIC_RELAXED) : pos;
}

/* Slot pos's key and value.  Keys and values live in two arrays indexed by
 * element: for keys of at most 8 bytes the element is the slot, so a
 * bucket's keys are contiguous (a lookup of a small key reads one or two
 * cache lines of keys, compared together); longer keys go through the slot's
 * element index (see "Elements" in the comment at the top).  A program-view
 * lookup never touches the value it returns. */
static ALWAYS_INLINE char *flat_key_at(const struct flat *f, uint32_t pos)
{
	return f->keys + (size_t)flat_elem_of(f, pos) * f->key_stride;
}

static ALWAYS_INLINE char *flat_value_at(const struct flat *f, uint32_t pos)
{
	return f->values + (size_t)flat_elem_of(f, pos) * f->value_stride;
}

static ALWAYS_INLINE uint32_t flat_next_bucket(const struct flat *f, uint32_t b)
{
	return ++b == f->n_buckets ? 0 : b;
}

/* How far past home h its keys may lie (buckets), from the lock word. */
static ALWAYS_INLINE uint32_t flat_dist_of(const struct flat *f, uint32_t lockword)
{
	uint32_t d = lockword >> FLAT_DIST_SHIFT;

	return d == FLAT_DIST_ANY ? f->n_buckets - 1 : d;
}

static ALWAYS_INLINE uint32_t flat_max_dist(const struct flat *f, uint32_t h)
{
	return flat_dist_of(f, __atomic_load_n(&f->locks[h], __ATOMIC_ACQUIRE));
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

/* Compare a slot's key (longer than 8 bytes) with @key.  Every path that
 * compares long keys runs in a read-side section (or holds the key's home
 * lock): a slot whose tag was seen live or WAIT there is not reused before
 * the section ends, so its key bytes are stable and plain loads are
 * race-free (the key's stores happen before the tag's release store that the
 * caller's acquire load saw).  The compare is util/key_equal.h's. */

static ALWAYS_INLINE bool flat_key_eq(const struct flat *f, uint32_t pos, const void *key,
				      uint32_t ks, uint64_t small)
{
	if (ks <= 8)
		return flat_small_at(f, pos, ks) == small;
	return key_equal_long(flat_key_at(f, pos), key, ks);
}

#if FLAT_SIMD
/*
 * One bit per slot of @bk whose tag is @tag (a live tag: >= FLAT_TAG_MIN),
 * the tags read as an acquire load would: one vector load (x86 keeps loads
 * in order, and the fence keeps the compiler from moving later loads above
 * it; TSan builds have no FLAT_SIMD), no move from a general register.  The
 * tag is broadcast by a multiply: fewer instructions than SSE2's shuffles.
 */
static ALWAYS_INLINE uint32_t flat_simd_tag_bits_at(const struct flat_bucket *bk, uint32_t tag)
{
	__m128i t = _mm_loadl_epi64((const __m128i *)(const void *)&bk->tags);
	__m128i b;

	__atomic_signal_fence(__ATOMIC_ACQUIRE);
	b = _mm_cvtsi64_si128((long long)(tag * FLAT_BYTES_LO));
	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(t, b)) & 0xffu;
}

/* One bit per slot whose 4-byte key (of a bucket's eight, 32-byte aligned)
 * equals k. */
static ALWAYS_INLINE uint32_t flat_simd_eq4(const char *keys, uint32_t k)
{
	const __m128i *p = (const __m128i *)(const void *)keys;
	__m128i kv = _mm_set1_epi32((int)k);
	uint32_t a = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(p[0], kv)));
	uint32_t b = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(p[1], kv)));

	return a | b << 4;
}

/* The same for 8-byte keys (64 bytes, aligned), given as two halves: SSE2
 * compares 32-bit lanes, so the eight keys' sixteen lane results are packed
 * to bytes (lane 2i: key i's low half, 2i + 1 its high half) and a key
 * matches where both of its lanes do.  Bit 2i of the result stands for slot
 * i. */
static ALWAYS_INLINE uint32_t flat_simd_eq8(const char *keys, uint32_t lo, uint32_t hi)
{
	const __m128i *p = (const __m128i *)(const void *)keys;
	__m128i kv = _mm_set_epi32((int)hi, (int)lo, (int)hi, (int)lo);
	__m128i w01 = _mm_packs_epi32(_mm_cmpeq_epi32(p[0], kv), _mm_cmpeq_epi32(p[1], kv));
	__m128i w23 = _mm_packs_epi32(_mm_cmpeq_epi32(p[2], kv), _mm_cmpeq_epi32(p[3], kv));
	uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(w01, w23));

	return eq & (eq >> 1) & 0x5555u;
}
#endif

/* Bucket seq, reader side: a value with no writer busy (waits them out). */
static ALWAYS_INLINE uint32_t flat_seq_begin(const uint32_t *seq)
{
	uint32_t s;

	while (unlikely((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & FLAT_SEQ_WRITERS))
		cpu_relax();
	return s;
}

/* Did no writer touch the bucket since flat_seq_begin() returned s?  The
 * reads in between may be plain (memcmp of a long key): the fence orders
 * them before the seq's reload (TSan, which has no fences, sees the acquire
 * loads of the writers' release stores instead). */
static ALWAYS_INLINE bool flat_seq_same(const uint32_t *seq, uint32_t s)
{
#ifndef BPFMAP_TSAN
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
	return __atomic_load_n(seq, __ATOMIC_ACQUIRE) == s;
}

/*
 * The slot (bucket * 8 + index) holding @key among home h's buckets, or
 * FLAT_NONE.  Exact when the caller holds h's lock or is in a read-side
 * section (or the key fits a word); otherwise a match must be validated by
 * the seq.  Long keys are compared in place, and a deleted slot may be
 * reused at once (flat_reuse_dead) while the compare reads it: a match
 * counts only if no writer touched its bucket meanwhile.
 */
static ALWAYS_INLINE uint32_t flat_find(const struct flat *f, uint32_t h, uint32_t tag,
					const void *key, uint32_t ks, uint64_t small)
{
	const struct flat_bucket *bk = f->buckets;
	uint64_t bcast = tag * FLAT_BYTES_LO;
	uint32_t md = 0, b = h;

	for (uint32_t d = 0;; d++) {
		uint32_t s1;
		uint64_t m;
rescan:
		s1 = ks > 8 ? flat_seq_begin(&bk[b].seq) : 0;
		m = flat_match(__atomic_load_n(&bk[b].tags, __ATOMIC_ACQUIRE), bcast);
		for (; m; m &= m - 1) {
			uint32_t pos = b * FLAT_SLOTS + flat_first(m);

			if (!flat_key_eq(f, pos, key, ks, small))
				continue;
			if (ks <= 8 || flat_seq_same(&bk[b].seq, s1))
				return pos;
			goto rescan; /* rewritten during the compare */
		}
		if (d == 0) /* most keys are home: the distance only after a miss */
			md = flat_max_dist(f, h);
		if (d >= md)
			return FLAT_NONE;
		b = flat_next_bucket(f, b);
	}
}

/* Home locks. */
void flat_lock_slow(uint32_t *word);

static ALWAYS_INLINE void flat_lock(uint32_t *word)
{
	if (likely(!(__atomic_fetch_or(word, FLAT_LOCK_BIT, __ATOMIC_ACQUIRE) & FLAT_LOCK_BIT)))
		return;
	flat_lock_slow(word);
}

/* Unlock, bumping the unlock count: a lock-free reader that sees the same
 * unlocked word twice knows no writer of the home ran in between (see
 * flat_probe_full). */
static ALWAYS_INLINE void flat_unlock(uint32_t *word)
{
	/* Only the holder changes the distance bits. */
	uint32_t w = __atomic_load_n(word, __ATOMIC_RELAXED);

	__atomic_store_n(word, (w & ~(FLAT_LOCK_VER | FLAT_LOCK_BIT)) | ((w + 2) & FLAT_LOCK_VER),
			 __ATOMIC_RELEASE);
}

/* A locked home's word with a new max displacement (bits kept). */
static ALWAYS_INLINE void flat_set_dist_locked(uint32_t *word, uint32_t d)
{
	uint32_t w = __atomic_load_n(word, __ATOMIC_RELAXED);

	__atomic_store_n(word, (w & ((1u << FLAT_DIST_SHIFT) - 1)) | d << FLAT_DIST_SHIFT,
			 __ATOMIC_RELEASE);
}

/* Bucket seq, writer side: enter (waits if 255 writers are busy), leave. */
static ALWAYS_INLINE void flat_seq_enter(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	for (;;) {
		if (unlikely((s & FLAT_SEQ_WRITERS) == FLAT_SEQ_WRITERS)) {
			cpu_relax();
			s = __atomic_load_n(seq, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(seq, &s, s + 1, true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
}

static ALWAYS_INLINE void flat_seq_leave(uint32_t *seq)
{
	__atomic_fetch_add(seq, FLAT_SEQ_DONE, __ATOMIC_RELEASE);
}

/* Copy the value of slot pos out to @dst; the spin lock field reads as zero. */
void flat_copy_value_locked_out(const struct flat *f, uint32_t pos, void *dst, bool with_lock);

/* Delete the element in slot i of bucket b; its home h is locked (and the
 * caller in a read-side section if keys are longer than 8 bytes).  Returns
 * true when reclamation should be started (flat_kick) after unlocking. */
bool flat_kill_locked(struct flat *f, uint32_t h, uint32_t b, uint32_t i);

/* Start reclaiming deleted slots if no reclamation is under way. */
void flat_kick(struct flat *f);

/* Replace tag byte i of bucket bk's tag word (other bytes may change meanwhile). */
void flat_set_tag(struct flat_bucket *bk, uint32_t i, uint32_t tag);

/* Store @value into slot pos (the caller keeps readers out: seq or a
 * one-word store). */
void flat_store_value(const struct flat *f, uint32_t pos, const void *value);

/* Fill claimed (BUSY) slot i of bucket b with key and value, publish @tag. */
void flat_fill_slot(struct flat *f, uint32_t b, uint32_t i, uint32_t tag, const void *key,
		    uint64_t small, const void *value);

/* Reclaim every deleted slot now (outside read-side sections only). */
void flat_reclaim_sync(struct flat *f);

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

/* The calling thread's window for lock-free stores, as flat_update.c's
 * overwrites open and close it (NULL: unavailable); for tests that hold one
 * open across what must wait for it. */
struct flat_window;
struct flat_window *flat_window_open(void);
void flat_window_close(struct flat_window *win);

/* The per-key operations (flat_update.c). */
int flat_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags);
int flat_delete_elem(struct bpfmap *map, const void *key);
int flat_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value);

/* The lookups (flat_lookup.c); flat_lookup_for picks the program-view lookup
 * specialised for a key size. */
int flat_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags);
int flat_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values);
map_lookup_fn flat_lookup_for(enum hash_kind kind, uint32_t key_size, uint32_t value_stride,
			      bool match_by_key);

struct bpfmap *flat_alloc(const struct map_params *p, int *err);

int flat_get_next_key(struct bpfmap *map, const void *key, void *next_key);
int flat_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch,
		      void *keys, void *values, uint32_t *count, uint64_t elem_flags,
		      bool do_delete);

extern const struct map_ops flat_ops;

#endif
