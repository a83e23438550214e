/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_RHASH: a table that grows and shrinks online, over elements
 * that never move, whose walks follow the hash order so that they never
 * skip or repeat.  docs/RHASH.md has the design at length; the invariants:
 *
 * Elements.  One arena of fixed-stride slots reserved at creation (virtual
 * memory, touched as it is used, given back by the chunk once free again:
 * tables/slot_arena.h), named by a 32-bit index: the key, padded to 8,
 * then the value.  An element never moves while its key is in the
 * map, so a program-view pointer stays with its key; values change in place.
 *
 * Buckets.  A table of 2^bits buckets puts a key in bucket hash >> (32 -
 * bits), hash being the top 32 bits of its 64-bit keyed hash.  A bucket is
 * a 64-byte group of seven slots, each a (hash, element index) pair, with
 * overflow groups linked from it (an arena of groups, like the elements').
 * A lookup compares the seven hashes at once and reads only the elements
 * whose hash matches: one line and, for a hit, the element.
 *
 * Order.  Every element has one place in a total order, (hash, key bytes).
 * Bucket b holds one contiguous range of it at every table size (b's range
 * in a table twice as large is buckets 2b and 2b + 1), so a walk that
 * resumes "after (hash, key)" finds its place in whichever table is current.
 *
 * Locks.  A bucket's first group holds its seq_spin_lock word
 * (sync/spin_lock.h), odd while a writer holds it: inserts, deletes,
 * in-place value stores, a resize moving the bucket.  Readers take none: a
 * miss, and a copy-out, count only if the word was even and unchanged
 * around them.  A hit needs no check: a slot's element holds that key for
 * as long as a reader can reach it (elements are reused only after a grace
 * period).  A slot is filled element first, then hash; emptied by its link.
 * Copy-outs and updates first go without a read-side section and check
 * more (rtab_bare_find), so retired tables stay mapped until the map goes.
 *
 * Resize.  A table's `next` is the table a resize moves into.  The moving
 * is shared out: each insert and delete that sees one in progress moves a
 * few runs of buckets (tables/rtab_resize.c), each under its lock, building
 * the new buckets and then marking the old one RTAB_MOVED, so that readers
 * and writers there go on to `next`.  A new bucket is reachable only
 * through moved old ones, so nothing else writes it before.  When the last
 * run has moved, `next` becomes the map's table and the old one is freed
 * after a grace period.  Nobody waits for a resize to finish: a miss or a
 * copy-out at worst waits for its bucket's run, whose locked window makes
 * no page fault or system call (rtab_move_prepare).
 */
#ifndef BPFMAP_TABLES_RTAB_H
#define BPFMAP_TABLES_RTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/map.h"
#include "hash/fast_hash.h"
#include "hash/hash_params.h"
#include "hash/hash_select.h"
#include "sync/backoff.h"
#include "sync/count.h"
#include "sync/fork_guard.h"
#include "sync/rcu.h"
#include "sync/reentry.h"
#include "sync/spin_lock.h"
#include "tables/slot_arena.h"
#include "util/compiler.h"
#include "util/key_equal.h"
#include "util/load.h"
#include "util/test_hook.h"

#if defined(__SSE2__) && !defined(BPFMAP_TSAN)
/* TSan builds compare slot by slot: the vector loads read slots being
 * filled, which only atomic loads may. */
#include <emmintrin.h>
#define RTAB_SIMD 1
#else
#define RTAB_SIMD 0
#endif

#define RTAB_SLOTS 7
#define RTAB_NONE 0u          /* a slot's or next link's "nothing" */
#define RTAB_MOVED UINT32_MAX /* a first group's next: the bucket is in the next table */
#define RTAB_MIN_BITS 3       /* the smallest table: one run of buckets */
#define RTAB_MAX_BITS 31
#define RTAB_RUN_SHIFT 3      /* a resize moves runs of 8 buckets */
#define RTAB_RUN (1u << RTAB_RUN_SHIFT)
#define RTAB_RUN_IDLE 0
#define RTAB_RUN_BUSY 1
#define RTAB_RUN_DONE 2
/* A table grows above this many elements a bucket and shrinks below a
 * quarter of it.  A grow holds three tables' worth of groups (the old one,
 * the new one twice its size) while it runs: at 9 that is 21 bytes an
 * element at the peak, against 24 at 8, which keeps a growing 8 + 8 map
 * within 48 bytes an element (docs/RHASH.md).  1M elements need 2^17
 * buckets, 8 MiB, either way. */
#define RTAB_GROW_LOAD 9
#define RTAB_FLOOR_ELEMS 2048

struct rtab_group {
	uint32_t hash[RTAB_SLOTS]; /* atomic */
	uint32_t lock;             /* first groups: the bucket's seq_spin_lock */
	uint32_t link[RTAB_SLOTS]; /* atomic: element index; RTAB_NONE: free */
	uint32_t next;             /* atomic: overflow group index, RTAB_NONE, RTAB_MOVED */
};

_Static_assert(sizeof(struct rtab_group) == 64, "a group is one cache line");

struct rtab;

struct rtab_table {
	uint32_t shift;   /* 32 - bits */
	uint32_t n;       /* buckets: 1 << bits */
	struct rtab_table *next; /* atomic: the table a resize moves into */
	uint32_t claimed; /* atomic: where movers look for the next run */
	uint32_t moved;   /* atomic: runs moved */
	uint8_t *runs;    /* atomic: each run's RTAB_RUN_* (after the groups) */
	union {
		struct rcu_head rcu; /* retiring */
		struct {	     /* retired, in the map's stash */
			struct rtab_table *next;
			size_t resident; /* bytes still in memory */
		} stash;
	};
	struct rtab *owner; /* for its retirement (rtab_table_retire) */
	char pad_[8];
	struct rtab_group groups[]; /* the buckets' first groups */
};

_Static_assert(offsetof(struct rtab_table, groups) == 64, "groups are line-aligned");

struct rtab_retired;

struct rtab {
	struct bpfmap map;
	/* Hot: what lookups read. */
	uintptr_t table;    /* atomic: the current table | its shift (rtab_table_word) */
	uint32_t gen;       /* atomic: resizes started and finished (rtab_bare_find, rtab_resizes) */
	char *arena;        /* element i at i * stride; 0 is never used */
	struct rtab_group *ogroups; /* overflow group i; 0 is never used */
	uint32_t stride;    /* bytes per element */
	uint32_t value_off; /* offset of the value in an element */
	uint64_t mul, fin;  /* the hash's parameters for word keys (hp's) */
	hash_fn hash;
	enum hash_kind hash_kind;
	struct hash_params hp;
	char pad_[64];
	/* Elements and overflow groups, named by index (0: none), with
	 * memory that follows what the map holds (tables/slot_arena.h).
	 * arena and ogroups above copy their bases into the line that
	 * lookups read. */
	struct slot_arena elems, groups;
	struct count count;     /* sync/count.h: exact -E2BIG */
	/* A new key into a map holding all it may: -E2BIG, or -ENOMEM when
	 * the arena's budget holds fewer than max_entries (rtab_arenas_init). */
	int full_err;
	uint64_t map_extra; /* as created: the first table's size hint */
	/* Elements unlinked, waiting for their grace period: the batch being
	 * filled, and full ones (overflow groups are reused at once:
	 * rtab_ogroup_free).  The flush callback, or an insert that finds
	 * the arena dry, waits for one grace period and takes them all back. */
	uint32_t retire_lock;
	struct rtab_retired *retiring;
	struct rtab_retired *ripe; /* full batches, linked by next */
	/* Elements retired when no batch could be allocated (malloc
	 * failed): a list through orphan_next, an array of a link for each
	 * element index reserved beside the arena (address space only; a
	 * page costs memory once an orphan's link is in it), so that no
	 * deleted element is ever kept from the arena for want of memory.
	 * orphan_top: the highest index linked so far (rtab_arenas_mem). */
	uint32_t orphans;       /* the first, RTAB_NONE: none */
	/* Elements retired and not yet back in the arena (batches, orphans,
	 * and those a release is giving back): written under retire_lock,
	 * read without it.  Past settle_at (the arena's spare beyond
	 * max_entries, less RTAB_LOW_ROOM) a delete outside any section
	 * takes them back (rtab_retire_settle). */
	uint32_t retired_out;
	uint32_t settle_at;
	uint32_t orphan_top;    /* atomic */
	uint32_t *orphan_next;
	/* Queued when an element starts a batch or the orphans, so that
	 * retired elements go back within a worker's round even if nobody
	 * inserts. */
	struct rcu_head flush_rcu;
	bool flush_queued; /* atomic: sync/handoff.h's handoff_get_once */
	uint32_t settling; /* atomic: a deleter in rtab_settle_slow */
	uint64_t callbacks;     /* sync/handoff.h: callbacks that touch the map */
	uint32_t resize_lock;   /* trylock only: starting a resize */
	/* Retired tables, cleared, kept mapped until the map goes (probes
	 * outside read-side sections may still read them: rtab_bare_find),
	 * and taken again by resizes to their size. */
	uint32_t stash_lock;
	struct rtab_table *stash;
	/* retire_lock, stash_lock and the arenas' (sync/fork_guard.h) */
	struct fork_guard guard;
	size_t stash_bytes;     /* atomic: what the stash still holds in memory */
	uint32_t min_bits, max_bits;
	/* Values of one word (at most 8 bytes, no spin lock): overwrites of a
	 * present key store it without the bucket lock while this is
	 * STORES_ON (sync/store_switch.h; rtab_stop_lockfree_stores). */
	bool value_word;
	uint32_t lockfree_store; /* atomic */
};

/* Before any operation that returns a value it removes (rtab_ops.c). */
void rtab_stop_lockfree_stores(struct rtab *r);

static ALWAYS_INLINE struct rtab *to_rtab(struct bpfmap *map)
{
	return (struct rtab *)map;
}

/* Resizes started so far (tests, the bench): r->gen counts starts and ends. */
static ALWAYS_INLINE uint32_t rtab_resizes(const struct rtab *r)
{
	return (__atomic_load_n(&r->gen, __ATOMIC_RELAXED) + 1) / 2;
}

static ALWAYS_INLINE char *rtab_elem(const struct rtab *r, uint32_t idx)
{
	return r->arena + (size_t)idx * r->stride;
}

static ALWAYS_INLINE uint32_t rtab_index_of(const struct rtab *r, const char *e)
{
	return (uint32_t)((size_t)(e - r->arena) / r->stride);
}

static ALWAYS_INLINE char *rtab_value(const struct rtab *r, char *e)
{
	return e + r->value_off;
}

static ALWAYS_INLINE struct rtab_group *rtab_ogroup(const struct rtab *r, uint32_t idx)
{
	return &r->ogroups[idx];
}

static ALWAYS_INLINE uint32_t rtab_load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* The map's table and its shift in one word (tables are 64-byte aligned,
 * a shift is below 64): a lookup's bucket then takes one load less. */
static ALWAYS_INLINE uintptr_t rtab_table_word(const struct rtab_table *t)
{
	return (uintptr_t)t | t->shift;
}

static ALWAYS_INLINE struct rtab_table *rtab_word_table(uintptr_t w)
{
	return (struct rtab_table *)(w & ~(uintptr_t)63);
}

static ALWAYS_INLINE struct rtab_table *rtab_table_of(struct rtab *r)
{
	return rtab_word_table(__atomic_load_n(&r->table, __ATOMIC_ACQUIRE));
}

static ALWAYS_INLINE uint32_t rtab_bucket(const struct rtab_table *t, uint32_t hash)
{
	return (uint32_t)((uint64_t)hash >> t->shift);
}

/*
 * The key's hash, specialised by kind (a constant in the callers that
 * specialise): every hash here is (almost) universal over its top bits with
 * the map's random parameters (hash/hash_select.h), and those are the bits
 * both the bucket and the order use.
 */
/* RTAB_GENERIC: the kind of a caller not specialised, read from the map. */
#define RTAB_GENERIC HASH_NH_LONG

static ALWAYS_INLINE uint32_t rtab_hash(const struct rtab *r, const void *key, uint32_t key_size,
					enum hash_kind kind)
{
	if (kind == RTAB_GENERIC)
		kind = r->hash_kind;
	if (kind == HASH_U32)
		return (uint32_t)(fast_hash_u32(load_u32(key), r->mul, r->fin) >> 32);
	if (kind == HASH_U64)
		return (uint32_t)(fast_hash_u64_mem(key, r->mul, r->fin) >> 32);
	return (uint32_t)(r->hash(key, key_size, &r->hp) >> 32);
}

static ALWAYS_INLINE bool rtab_key_equal(const char *e, const void *key, uint32_t key_size,
					 enum hash_kind kind)
{
	if (kind == HASH_U32)
		return load_u32(e) == load_u32(key);
	if (kind == HASH_U64)
		return load_u64(e) == load_u64_by_halves(key);
	if (key_size >= 8 && (!__builtin_constant_p(key_size) || key_size < 64))
		return key_equal_long(e, key, key_size);
	return !memcmp(e, key, key_size);
}

/* The slots of @g whose hash is @hash, as bits 0..6. */
static ALWAYS_INLINE uint32_t rtab_match(const struct rtab_group *g, uint32_t hash)
{
#if RTAB_SIMD
	__m128i h = _mm_set1_epi32((int)hash);
	__m128i lo = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(const void *)g->hash), h);
	__m128i hi = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(const void *)&g->hash[4]), h);

	return (uint32_t)(_mm_movemask_ps(_mm_castsi128_ps(lo)) |
			  _mm_movemask_ps(_mm_castsi128_ps(hi)) << 4) & 0x7f;
#else
	uint32_t m = 0;

	for (int i = 0; i < RTAB_SLOTS; i++)
		m |= (uint32_t)(__atomic_load_n(&g->hash[i], __ATOMIC_RELAXED) == hash) << i;
	return m;
#endif
}

/* A slot, as a scan or the lock holder of its bucket finds it. */
struct rtab_slot {
	struct rtab_group *g;
	int i;
};

/* The element of (hash, key) among a bucket's groups from @g, or NULL; its
 * slot in *@at when asked for (a constant NULL folds away). */
static ALWAYS_INLINE char *rtab_scan_at(const struct rtab *r, const struct rtab_group *g,
					uint32_t hash, const void *key, uint32_t key_size,
					enum hash_kind kind, struct rtab_slot *at)
{
	for (;;) {
		uint32_t m = rtab_match(g, hash), next;

		while (m) {
			uint32_t link;
			char *e;

			TEST_HOOK(HOOK_RTAB_STEP, &g->link[__builtin_ctz(m)]);
			link = rtab_load(&g->link[__builtin_ctz(m)]);
			e = rtab_elem(r, link);
			if (likely(link != RTAB_NONE) && rtab_key_equal(e, key, key_size, kind)) {
				if (at) {
					at->g = (struct rtab_group *)g;
					at->i = __builtin_ctz(m);
				}
				return e;
			}
			m &= m - 1;
		}
		next = rtab_load(&g->next);
		if (next == RTAB_NONE || next == RTAB_MOVED)
			return NULL;
		g = rtab_ogroup(r, next);
	}
}

static ALWAYS_INLINE char *rtab_scan(const struct rtab *r, const struct rtab_group *g,
				     uint32_t hash, const void *key, uint32_t key_size,
				     enum hash_kind kind)
{
	return rtab_scan_at(r, g, hash, key, key_size, kind, NULL);
}

/*
 * The element of (hash, key), lock-free, in a read-side section, with the
 * check a miss needs: NULL only when no writer changed the bucket meanwhile.
 * *lock_out and *seq_out (when asked for) say which lock word validates a
 * copy of the element's value, and its value before the scan.  RTAB_BUSY
 * instead of scanning again while the thread is marked (sync/reentry.h):
 * the writer that holds the bucket may be its own.
 */
#define RTAB_BUSY ((char *)1)

static ALWAYS_INLINE char *rtab_find_checked(struct rtab *r, uint32_t hash, const void *key,
					     uint32_t key_size, enum hash_kind kind,
					     uint32_t **lock_out, uint32_t *seq_out)
{
	struct rtab_table *t = rtab_table_of(r);
	unsigned int spins = 0;

	for (;;) {
		struct rtab_group *g = &t->groups[rtab_bucket(t, hash)];
		uint32_t seq = seq_spin_read_begin(&g->lock);
		char *e;

		if (unlikely(rtab_load(&g->next) == RTAB_MOVED)) {
			t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
			continue;
		}
		e = rtab_scan(r, g, hash, key, key_size, kind);
		if (e) {
			if (lock_out) {
				*lock_out = &g->lock;
				*seq_out = seq;
			}
			return e;
		}
		if (likely(seq_spin_read_valid(&g->lock, seq)))
			return NULL;
		if (reentry_busy())
			return RTAB_BUSY;
		retry_relax(&spins);
	}
}

/* rtab_find_checked inside a section of its own: the program view's
 * lookup may be called outside one (bpfmap.h), and the check reads the
 * table's header, which a table stashed after its grace period no longer
 * has (rtab_table_stash clears it), where the first scan takes the bucket
 * count from the table word.  Sections nest. */
static ALWAYS_INLINE char *rtab_find_sectioned(struct rtab *r, uint32_t hash, const void *key,
					       uint32_t key_size, enum hash_kind kind)
{
	char *e;

	rcu_lock();
	e = rtab_find_checked(r, hash, key, key_size, kind, NULL, NULL);
	rcu_unlock();
	return e;
}

/*
 * The same for the program view, its fast half: a hit needs no check, so
 * the scan reads no lock word.  NULL for a miss and for a hit in a moved
 * bucket (its slots are stale: the hit may be deleted since), both of which
 * rtab_find_sectioned settles.  The caller keeps that call out of line, so
 * that a hit saves no registers.
 */
static ALWAYS_INLINE char *rtab_find_hit(struct rtab *r, uint32_t hash, const void *key,
					 uint32_t key_size, enum hash_kind kind)
{
	uintptr_t w = __atomic_load_n(&r->table, __ATOMIC_ACQUIRE);
	const struct rtab_group *g = &rtab_word_table(w)->groups[(uint64_t)hash >> (w & 63)];
	char *e;

#ifdef BPFMAP_TSAN
	/* A moved bucket's elements may be freed and reused under the scan,
	 * a race whose answer the check below discards but which the tool
	 * would report: TSan builds do not scan one (a bucket seen unmoved in
	 * this section holds no element unlinked before it began). */
	if (rtab_load(&g->next) == RTAB_MOVED)
		return NULL;
#endif
	e = rtab_scan(r, g, hash, key, key_size, kind);
	if (likely(e) && likely(rtab_load(&g->next) != RTAB_MOVED))
		return e;
	return NULL;
}

/*
 * Copy-outs and updates outside any read-side section (rtab_ops.c): a
 * section costs about a sixth of a copy-out of a small map, and kept
 * overwrites and -E2BIG answers well behind HASH's.  What a section
 * otherwise guarantees, the probe checks after the fact:
 *  - the memory stays readable: elements and overflow groups live in
 *    arenas that are never unmapped, and a retired table stays mapped,
 *    cleared, until the map goes (rtab_table_retire);
 *  - the table it read was the map's throughout: r->gen, odd from the
 *    start of a resize to its end, is unchanged (a resize's writes to a
 *    table, its retirement and its reuse all come after the start);
 *  - the bucket did not change: its lock word is unchanged and even, which
 *    also covers a hit, since an element is reused only after its key's
 *    delete, a write under that word.
 * A copy that fails either check is made again in a section; an update
 * goes to the lock.  A lock-free store also needs its element to stay the
 * key's until it lands: it stores in a store window (rtab_update_bare).
 * The price: tables are kept for the map's life (cleared, most of their
 * pages given back), and retiring one is a callback that touches the map.
 * ThreadSanitizer builds copy and update in sections only: a stale probe
 * may read an element's key while its next insert writes it, a race whose
 * result the checks discard but which the tool would report.
 */
#if defined(BPFMAP_TSAN)
#define RTAB_BARE_PROBES 0
#else
#define RTAB_BARE_PROBES 1
#endif

struct rtab_bare {
	struct rtab_group *g; /* the bucket's first group; NULL: the probe gave up */
	uint32_t gen, seq;
};

/* The element of (hash, key) in the current table, or NULL; b->g NULL when
 * a resize is under way, a writer holds the bucket, or the build has no
 * bare probes. */
static ALWAYS_INLINE char *rtab_bare_find(struct rtab *r, uint32_t hash, const void *key,
					  uint32_t key_size, enum hash_kind kind, struct rtab_bare *b)
{
	uintptr_t w;

	b->g = NULL;
	if (!RTAB_BARE_PROBES)
		return NULL;
	b->gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
	if (b->gen & 1)
		return NULL;
	w = __atomic_load_n(&r->table, __ATOMIC_ACQUIRE);
	b->g = &rtab_word_table(w)->groups[(uint64_t)hash >> (w & 63)];
	TEST_HOOK(HOOK_RTAB_BARE, b->g);
	b->seq = seq_spin_read_begin(&b->g->lock);
	if (b->seq & 1) {
		b->g = NULL;
		return NULL;
	}
	return rtab_scan(r, b->g, hash, key, key_size, kind);
}

/* True when what rtab_bare_find saw, and read since, was one state of the
 * map's current table. */
static ALWAYS_INLINE bool rtab_bare_valid(const struct rtab *r, const struct rtab_bare *b)
{
	if (!seq_spin_read_valid(&b->g->lock, b->seq))
		return false;
#if RTAB_BARE_PROBES /* ThreadSanitizer has no fences */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
	return __atomic_load_n(&r->gen, __ATOMIC_RELAXED) == b->gen;
}

/* Before writes to a table that a bare probe may read: one that reads them
 * then sees r->gen moved (rtab_bare_valid's fence). */
static ALWAYS_INLINE void rtab_bare_publish(void)
{
#if RTAB_BARE_PROBES
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

/* A walk step reads its bucket lock-free at most this many times, finding
 * it held or changed, and then locks it (tables/rtab_iter.c): writers that
 * keep changing a bucket would otherwise hold the step off for as long as
 * they go on, the longer the more value bytes it copies.  It locks only
 * where writers are busy, so for fork() it adds no bucket they could not
 * hold locked themselves. */
#define RTAB_WALK_TRIES 3

/* A place in the order: after (hash, key), or with no key, from hash on. */
struct rtab_cursor {
	uint32_t hash;
	const void *key;
};

/* tables/rtab.c: the arenas, reclamation, and a bucket's edits under its
 * lock. */
/*
 * The most address space an element arena reserves: past it a map holds
 * fewer elements than max_entries (rtab_arenas_init).  A terabyte, so
 * that only maps of 2^31 elements of 512 bytes and more are cut, to 2^40
 * bytes of elements, far past any machine's memory, and a process still
 * has room for a hundred such maps.  Test builds may lower it.
 */
#define RTAB_RESERVE_BYTES (1ULL << 40)
/* Where less address space is to be had (RLIMIT_AS, say), the arena takes
 * half as much again and again, down to room for this many elements. */
#define RTAB_RESERVE_MIN 4096u
#ifdef BPFMAP_TEST_HOOKS
extern uint64_t rtab_reserve_bytes;
static inline uint64_t rtab_reserve_budget(void)
{
	return rtab_reserve_bytes;
}
#else
static inline uint64_t rtab_reserve_budget(void)
{
	return RTAB_RESERVE_BYTES;
}
#endif

/* The arenas for up to @max_entries elements: returns how many the map
 * may hold (max_entries, or fewer past RTAB_RESERVE_BYTES or the address
 * space to be had), 0 without memory. */
uint32_t rtab_arenas_init(struct rtab *r, uint32_t max_entries);
size_t rtab_arenas_mem(const struct rtab *r);
struct rtab_table *rtab_table_alloc(struct rtab *r, uint32_t bits);
/* @t is no longer the map's: cleared and stashed once no read-side
 * section can be in it. */
void rtab_table_retire(struct rtab *r, struct rtab_table *t);
size_t rtab_table_mem(struct rtab *r);
/* An unused element's (group's) index, or RTAB_NONE when the arena is
 * exhausted for now (elements: every free one waits for its grace
 * period). */
uint32_t rtab_elem_alloc(struct rtab *r);
uint32_t rtab_ogroup_alloc(struct rtab *r);
/* An element that never became visible, back at once. */
void rtab_elem_unused(struct rtab *r, uint32_t idx);
/* Unlinked: reused once no reader can hold it.  Any context. */
void rtab_elem_retire(struct rtab *r, uint32_t idx);
void rtab_settle_slow(struct rtab *r);

/* Unlinked elements wait for one grace period together. */
#define RTAB_RETIRE_BATCH 254u
/*
 * Room in the element arena below which a delete made outside any read-side
 * section takes retired elements back itself (rtab_retire_settle).  Inserts
 * inside sections cannot wait for a grace period, so without it a map whose
 * deletes all come from outside and whose inserts all come from inside ran
 * dry once its spare room had gone to waiting elements, and answered
 * -ENOMEM, though every one of those elements was free to reuse.  Two
 * batches: the one filling, and one for the inserts meanwhile.
 */
#define RTAB_LOW_ROOM (2 * RTAB_RETIRE_BATCH)

/*
 * Whether deletes outside sections should take retired elements back now.
 * Room alone does not say: a delete turns a live element into a retired
 * one and leaves the room as it was, so a control plane deleting
 * thousands of keys at once left them all waiting, more than the spare,
 * and inserts inside sections met -ENOMEM with the map far from full.
 * Kept under the spare, the retired elements leave max_entries' worth of
 * room to the live ones.
 */
static ALWAYS_INLINE bool rtab_settle_due(struct rtab *r)
{
	return __atomic_load_n(&r->retired_out, __ATOMIC_RELAXED) > r->settle_at ||
	       slot_arena_room(&r->elems) < RTAB_LOW_ROOM;
}

/* After a delete, once outside the section that retired: if a settle is
 * due (rtab_settle_due) and the caller may wait, retired elements back now
 * (one grace period), so that inserts made inside read-side sections,
 * which cannot wait, keep finding room.  Every such delete checks: any of
 * them may be the one whose inserts come next. */
static ALWAYS_INLINE void rtab_retire_settle(struct rtab *r)
{
	if (unlikely(rtab_settle_due(r)))
		rtab_settle_slow(r);
}
/* Unlinked under the lock of the bucket it was in: reused at once. */
void rtab_ogroup_free(struct rtab *r, uint32_t idx);
/* Outside any read-side section: retired elements back to the arena after
 * one grace period (or, if a flush callback holds them, after it ran). */
void rtab_reclaim_now(struct rtab *r);
/* The same, then every callback queued so far (retired tables too). */
void rtab_reclaim_wait(struct rtab *r);
/* Lock the bucket of @hash in the table that holds it now (*t_out, when
 * asked for); @eager: for a reader that writers kept out (SEQ_READ_PATIENCE,
 * RTAB_WALK_TRIES), seq_spin_lock_eager. */
struct rtab_group *rtab_lock_bucket(struct rtab *r, uint32_t hash, struct rtab_table **t_out,
				    bool eager);
static ALWAYS_INLINE void rtab_unlock_bucket(struct rtab_group *g)
{
	seq_spin_unlock(&g->lock);
}
/* The slot of @key in the locked bucket @g, or false. */
bool rtab_find_locked(struct rtab *r, struct rtab_group *g, uint32_t hash, const void *key,
		      struct rtab_slot *out);
/* Overflow groups taken ahead (a resize's run, before it locks). */
#define RTAB_SPARE_GROUPS 32
struct rtab_spare {
	uint32_t n;
	uint32_t og[RTAB_SPARE_GROUPS];
};

/* Put element @idx of @hash in a free slot of the locked bucket @g (an
 * overflow group added if needed, from @spare first if not NULL): false
 * without a group to add. */
bool rtab_add_locked(struct rtab *r, struct rtab_group *g, uint32_t hash, uint32_t idx,
		     struct rtab_spare *spare);
/* Empty @s of the locked bucket @g, the chain's last key moving into it
 * (every group but the last stays full); an overflow group left empty is
 * unlinked and freed.  The caller retires the element. */
void rtab_remove_locked(struct rtab *r, struct rtab_group *g, struct rtab_slot s);
/* The same for a delete: counted (sync/count.h), so -E2BIG stays exact. */
void rtab_delete_locked(struct rtab *r, struct rtab_group *g, struct rtab_slot s);
/* Free the overflow groups chained from group index @og on (the bucket
 * they were in locked). */
void rtab_free_ogroups(struct rtab *r, uint32_t og);
/* Copy out the value of element @e, the lock field zeroed: under its
 * bucket's lock (@bucket_locked), or kept only if the bucket's word is
 * unchanged after.  With @lockf under the value's spin lock, which a
 * caller holding the bucket's takes only if free: false, nothing copied,
 * when it is held; and which a @lookup whose thread is marked does not
 * wait for (value_copy_out_locked): false then too. */
bool rtab_copy_value(struct rtab *r, char *e, void *dst, bool lockf, bool bucket_locked,
		     bool lookup);
/* The last reference: free the map now or when its last callback ends. */
void rtab_guard_fork(struct rtab *r);
void rtab_destroy(struct rtab *r);

/* tables/rtab_resize.c.  After an insert (@crowded: its bucket overflowed)
 * or a delete, in a read-side section: start the resize the element count
 * asks for, and move a few runs of one in progress. */
void rtab_resize_check(struct rtab *r, bool crowded);

/* tables/rtab_ops.c */
map_lookup_fn rtab_lookup_for(enum hash_kind kind, uint32_t key_size);
map_copy_fn rtab_copy_for(enum hash_kind kind, uint32_t key_size);
int rtab_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags);
int rtab_update_elem(struct bpfmap *map, const void *key, const void *value, uint64_t flags);
int rtab_delete_elem(struct bpfmap *map, const void *key);
int rtab_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value,
				uint64_t flags);

/* tables/rtab_iter.c */
int rtab_get_next_key(struct bpfmap *map, const void *key, void *next_key);
int rtab_lookup_batch(struct bpfmap *map, const void *in_batch, void *out_batch, void *keys,
		      void *values, uint32_t *count, uint64_t elem_flags, bool do_delete);

/* tables/rtab_map.c */
struct bpfmap *rtab_create(const struct map_params *p, int *err);

#endif
