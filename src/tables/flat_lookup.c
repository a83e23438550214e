/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat layout's lookups: copy-out (syscall view), program view
 * specialised per key size, and bulk.  Design notes in tables/flat.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash/sized_hash.h"
#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/flat_lru.h"
#include "tables/value.h"
#include "tables/flat_words.h"
#include "util/cpu_features.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

static enum flat_isa flat_isa_best(void);

int flat_lookup_elem(struct bpfmap *map, const void *key, void *value, uint64_t flags)
{
	struct flat *f = to_flat(map);
	uint32_t ks = map->key_size;

	/* Without flags bpfmap_lookup_elem_flags() calls map->copy, so this
	 * serves BPFMAP_F_LOCK and the maps flat_copy_for() specialised none. */
	if (flags & BPFMAP_F_LOCK)
		return flat_copy_section(f, key, value, true);
	if (ks <= 8)
		return flat_copy_small(f, key, value, ks, f->hash_kind);
	return flat_copy_section(f, key, value, false);
}

/* ---- program view -------------------------------------------------------- */

/*
 * The caller is in a read-side section, so a slot seen live keeps its key
 * until the section ends (unless reused at once, which long-key compares
 * validate).  Specialised per key size at creation (flat_lookup_for): the
 * hash inlines for 4- and 8-byte keys, and hash and compare for 16-256.
 */
static ALWAYS_INLINE void *flat_lookup_ptr(struct bpfmap *map, const void *key, uint32_t ks,
					    enum hash_kind kind)
{
	struct flat *f = to_flat(map);
	uint64_t hash = flat_hash_kind(f, key, kind);
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t pos = flat_find(f, pl.home, pl.tag, key, ks,
				 ks <= 8 ? flat_small_key(key, ks) : 0, true);

	if (unlikely(pos == FLAT_WAIT_SELF))
		return map_lookup_busy();
	return pos != FLAT_NONE ? flat_value_at(f, pos) : map_lookup_miss();
}

/* The general path of the long-key lookups below, out of line so that
 * theirs stays short: a key not the home bucket's first candidate, or
 * absent. */
static __attribute__((noinline)) void *flat_lookup_far(struct flat *f, uint64_t hash,
						       const void *key, uint32_t ks)
{
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t pos = flat_find(f, pl.home, pl.tag, key, ks, 0, true);

	if (unlikely(pos == FLAT_WAIT_SELF))
		return map_lookup_busy();
	return pos != FLAT_NONE ? flat_value_at(f, pos) : map_lookup_miss();
}

/*
 * Word keys in maps that match by key (flat.h): the home bucket's eight keys
 * compared with the key, a match taken as live without the tags; a key away
 * from home or absent takes the general path.
 */
#if FLAT_SIMD
/* Home bucket h's slots holding word key @key (@ks bytes), its eight keys
 * (32 or 64 bytes; 8-byte keys read as two halves) compared at once: slot i
 * is bit i * ks / 4 (0: none). */
static ALWAYS_INLINE uint32_t flat_word_match(const struct flat *f, uint32_t h, const void *key,
					      uint32_t ks)
{
	uint32_t lo, hi;

	if (ks == 4)
		return flat_simd_eq4(f->keys + (size_t)h * 32, load_u32(key));
	load_u32_halves(key, &lo, &hi);
	return flat_simd_eq8(f->keys + (size_t)h * 64, lo, hi);
}

/* The value of the slot in flat_word_match()'s non-zero result @m. */
static ALWAYS_INLINE void *flat_word_value_of(const struct flat *f, uint32_t h, uint32_t m,
					      uint32_t ks)
{
	return flat_value_elem(f, (size_t)h * FLAT_SLOTS + (uint32_t)__builtin_ctz(m) / (ks / 4), 0);
}

/*
 * Copy-out lookup of a word key in a map that matches by key: the home
 * bucket's eight keys compared at once, as the program view does, then the
 * value copied inside the bucket's seq; anything else (no match, a writer
 * busy, the seq moved) takes flat_copy_word_far.  Its slot-by-slot compare
 * mispredicts on the matching slot once the keys' line arrives, and the
 * flush throws away the next lookups' misses already under way.
 */
static ALWAYS_INLINE int flat_copy_word_in(const struct flat *f, const void *key, void *value,
					    uint32_t ks, enum hash_kind kind, bool v8, bool far,
					    bool ver)
{
	uint64_t k = flat_small_key(key, ks);
	uint64_t hash = flat_hash_kind(f, key, kind);
	uint32_t h = flat_home(f, hash);
	const uint32_t *seq = &f->buckets[h].seq;
	uint32_t s1, m;

	flat_copy_prefetch(f, h, far);
	s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
	m = flat_word_match(f, h, key, ks);

	if (likely(m) &&
	    likely(flat_copy_slot(f, (size_t)h * FLAT_SLOTS + (uint32_t)__builtin_ctz(m) / (ks / 4),
				  seq, s1, value, v8, ver)))
		return 0;
	return flat_copy_word_far(f, k, value, ks);
}

/* The copy-outs a map of word keys that matches by key gets at creation
 * (map->copy): the kind, for 8-byte values without a spin lock the value's
 * size, and whether values have a version, constants. */
#define FLAT_COPY_WORD(name, ks, kind, v8, far, ver)                                               \
	static FLAT_WORD_ALIGN int flat_copy_##name(struct bpfmap *map, const void *key,           \
						    void *value)                                   \
	{                                                                                          \
		return flat_copy_word_in(to_flat(map), key, value, ks, kind, v8, far, ver);       \
	}
FLAT_COPY_WORD(k4, 4, HASH_U32, false, false, true)
FLAT_COPY_WORD(k8, 8, HASH_U64, false, false, true)
FLAT_COPY_WORD(k4_v8, 4, HASH_U32, true, false, false)
FLAT_COPY_WORD(k8_v8, 8, HASH_U64, true, false, false)
FLAT_COPY_WORD(k4_v8_far, 4, HASH_U32, true, true, false)
FLAT_COPY_WORD(k8_v8_far, 8, HASH_U64, true, true, false)
FLAT_COPY_WORD(k4_slots, 4, HASH_U32, false, false, false)
FLAT_COPY_WORD(k8_slots, 8, HASH_U64, false, false, false)

map_copy_fn flat_copy_word(enum hash_kind kind, bool v8, bool far, bool ver, enum flat_isa isa)
{
	/* [8-byte keys][flat_copy_word_index] */
	static const map_copy_fn fns[2][4] = {
		{ flat_copy_k4, flat_copy_k4_v8, flat_copy_k4_v8_far, flat_copy_k4_slots },
		{ flat_copy_k8, flat_copy_k8_v8, flat_copy_k8_v8_far, flat_copy_k8_slots },
	};

	if (isa != FLAT_ISA_BASE)
		return flat_copy_word_x86(kind, v8, far, ver, isa);
	return fns[kind != HASH_U32][flat_copy_word_index(v8, far, ver)];
}

static map_copy_fn flat_copy_word_for(const struct flat *f)
{
	if (!f->match_by_key || f->elems ||
	    (f->hash_kind != HASH_U32 && f->hash_kind != HASH_U64))
		return NULL;
	return flat_copy_word(f->hash_kind, f->map.value_size == 8 && !map_has_lock(&f->map),
			      (uint64_t)f->n_homes * FLAT_SLOTS * 8 >= FLAT_COPY_FAR_BYTES,
			      flat_versioned(f), flat_isa_best());
}

/* 4-byte keys: the home bucket, else the general path. */
static ALWAYS_INLINE void *flat_lookup_k4_in(struct flat *f, const void *key)
{
	uint32_t k = load_u32(key), h;
	uint64_t hash = fast_hash_u32(k, f->mul, f->fin);

	h = flat_home(f, hash);
	uint32_t m = flat_word_match(f, h, key, 4);

	if (likely(m))
		return flat_word_value_of(f, h, m, 4);
	return flat_lookup_word_far(f, hash, 4, k);
}

/* 8-byte keys, the same way. */
static ALWAYS_INLINE void *flat_lookup_k8_in(struct flat *f, const void *key)
{
	uint32_t lo, hi, h, m;
	uint64_t hash;

	load_u32_halves(key, &lo, &hi);
	hash = fast_hash_u64_halves(lo, hi, f->mul, f->fin);
	h = flat_home(f, hash);
	m = flat_word_match(f, h, key, 8);
	if (likely(m))
		return flat_word_value_of(f, h, m, 8);
	return flat_lookup_word_far(f, hash, 8, (uint64_t)hi << 32 | lo);
}

static FLAT_WORD_ALIGN void *flat_lookup_k4(struct bpfmap *map, const void *key)
{
	return flat_lookup_k4_in(to_flat(map), key);
}

static FLAT_WORD_ALIGN void *flat_lookup_k8(struct bpfmap *map, const void *key)
{
	return flat_lookup_k8_in(to_flat(map), key);
}
#else
map_copy_fn flat_copy_word(enum hash_kind kind, bool v8, bool far, bool ver, enum flat_isa isa)
{
	(void)kind;
	(void)v8;
	(void)far;
	(void)ver;
	(void)isa;
	return NULL; /* the general copy-out */
}

static map_copy_fn flat_copy_word_for(const struct flat *f)
{
	(void)f;
	return NULL;
}

/* One key word at a time, each an acquire load (TSan builds: it sees the
 * fill's release store of the key after the value). */
static ALWAYS_INLINE void *flat_lookup_word_scalar(struct flat *f, const void *key, uint32_t ks,
						   enum hash_kind kind)
{
	uint64_t hash = flat_hash_kind(f, key, kind);
	uint32_t h = flat_home(f, hash);
	uint64_t small = flat_small_key(key, ks);

	for (uint32_t pos = h * FLAT_SLOTS; pos < (h + 1) * FLAT_SLOTS; pos++)
		if (flat_small_at(f, pos, ks) == small)
			return flat_value_at(f, pos);
	return flat_lookup_word_far(f, hash, ks, small);
}

static void *flat_lookup_k4(struct bpfmap *map, const void *key)
{
	return flat_lookup_word_scalar(to_flat(map), key, 4, HASH_U32);
}

static void *flat_lookup_k8(struct bpfmap *map, const void *key)
{
	return flat_lookup_word_scalar(to_flat(map), key, 8, HASH_U64);
}
#endif

/*
 * Longer keys: the home bucket's tags matched, the first candidate's element
 * found by the slot's index (prefetched with the tags), with the bucket's
 * seq read before (no writer busy).  Its key is then compared in place
 * (inline for the sizes specialised below) and the match validated by that
 * seq (see flat_find); anything else takes the general path.  False: no
 * candidate, or a writer busy.
 */
static ALWAYS_INLINE bool flat_long_candidate(const struct flat *f, uint32_t h, uint32_t tag,
					      uint32_t *s1, uint32_t *e)
{
	const struct flat_bucket *bk = &f->buckets[h];
	const uint32_t *elems = f->elems + (size_t)h * FLAT_SLOTS;

	/* The slots' element indices load with the tags, not after them. */
	__builtin_prefetch(elems);
	*s1 = __atomic_load_n(&bk->seq, __ATOMIC_ACQUIRE);
#if FLAT_SIMD
	uint32_t m = flat_simd_tag_bits_at(&bk->tags, tag); /* bit i: slot i */
	uint32_t i = m ? (uint32_t)__builtin_ctz(m) : 0;
#else
	uint64_t m = flat_match(__atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE), tag * FLAT_BYTES_LO);
	uint32_t i = m ? flat_first(m) : 0;
#endif

	if (likely(m && !(*s1 & MWSEQ_WRITERS))) {
		*e = __atomic_load_n(&elems[i], __ATOMIC_RELAXED) - 1;
		return true;
	}
	return false;
}

/* The same steps, written out: through flat_long_candidate the large-map
 * lookups of 32-byte keys measured 3-5% slower (alternating runs).  @view
 * (FLAT_VIEW_*, a constant): an evicting map's program view marks what it
 * finds (flat_lru.h; the element's index is its value's, so the mark needs
 * no division), a per-CPU map's answers the calling CPU's slot. */
static ALWAYS_INLINE void *flat_lookup_long(struct flat *f, const void *key, uint32_t ks,
					    uint64_t hash, uint32_t vs, unsigned int view)
{
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t h = pl.home;
	const struct flat_bucket *bk = &f->buckets[h];
	const uint32_t *elems = f->elems + (size_t)h * FLAT_SLOTS;
	uint32_t s1;

	__builtin_prefetch(elems);
	s1 = __atomic_load_n(&bk->seq, __ATOMIC_ACQUIRE);
#if FLAT_SIMD
	uint32_t m = flat_simd_tag_bits_at(&bk->tags, pl.tag);
	uint32_t i = m ? (uint32_t)__builtin_ctz(m) : 0;
#else
	uint64_t m = flat_match(__atomic_load_n(&bk->tags, __ATOMIC_ACQUIRE),
				pl.tag * FLAT_BYTES_LO);
	uint32_t i = m ? flat_first(m) : 0;
#endif

	if (likely(m && !(s1 & MWSEQ_WRITERS))) {
		/* ROUND_UP(ks, 8) is key_stride: a constant in the sized lookups. */
		uint32_t e = __atomic_load_n(&elems[i], __ATOMIC_RELAXED) - 1, ks8 = ROUND_UP(ks, 8);
		const char *stored = f->keys + (size_t)e * ks8;

		if (likely(key_equal_long(stored, key, ks) && mwseq_read_same(&bk->seq, s1))) {
			char *v = flat_value_elem(f, e, vs);

			if (view & FLAT_VIEW_LRU)
				flat_lru_touch_index(f->lru_state, e);
			return view & FLAT_VIEW_PCPU ? flat_pcpu_here(f, v, view & FLAT_VIEW_RSEQ) : v;
		}
	}
	if (view) {
		char *v = flat_lookup_far(f, hash, key, ks);

		if (!v)
			return NULL;
		if (view & FLAT_VIEW_LRU)
			flat_lru_touch(f->lru, v);
		return view & FLAT_VIEW_PCPU ? flat_pcpu_here(f, v, view & FLAT_VIEW_RSEQ) : v;
	}
	return flat_lookup_far(f, hash, key, ks);
}

/*
 * The copy-out of a long key (map->copy): the same candidate, its key and
 * then its value read under the one seq (and the value's version), outside
 * any read-side section (the table's memory stays while the map lives, and
 * a reuse of the position writes under that seq).  TSan builds take the
 * general path: its plain key compare would race with a refill's stores
 * there.
 */
static ALWAYS_INLINE int flat_copy_long(struct flat *f, const void *key, void *value, uint32_t ks,
					uint64_t hash)
{
	/* Its retries read the key again: not from a buffer the value shares. */
	if (unlikely(map_value_overlaps_key(&f->map, key, value)))
		return map_copy_key_apart(&f->map, key, value);
#ifndef BPFMAP_TSAN
	struct flat_place pl = flat_place_of(f, hash);
	uint32_t s1, e;

	if (likely(flat_long_candidate(f, pl.home, pl.tag, &s1, &e)) &&
	    likely(key_equal_long(f->keys + (size_t)e * ROUND_UP(ks, 8), key, ks))) {
		TEST_HOOK(HOOK_FLAT_COPY_MATCHED, &e);
		if (likely(flat_value_copy(f, e, value) &&
			   mwseq_read_same(&f->buckets[pl.home].seq, s1))) {
			value_clear_lock(&f->map, value);
			return 0;
		}
	}
#else
	(void)hash;
	(void)ks;
#endif
	return map_result(flat_copy_section(f, key, value, false));
}

/* The map's hash inline (hash/sized_hash.h; flat_lookup_for picks these only
 * for maps using it): with the word hash, at 128 bytes 1.4x, at 256 1.1x the
 * lookups of flat_lookup_long_any.  Each view has its own, which
 * flat_lru_lookup and flat_percpu_lookup would otherwise wrap with a second
 * call; the per-CPU ones for any value stride only.
 * flat_lookups_k<n>[view][8-byte values]. */
#define FLAT_LOOKUP_SIZED_ONE(n, suffix, vs, view)                                                 \
	static void *flat_lookup_k##n##suffix(struct bpfmap *map, const void *key)                 \
	{                                                                                          \
		struct flat *f = to_flat(map);                                                     \
                                                                                                   \
		return flat_lookup_long(f, key, n, hash_sized(key, n, &f->hp), vs, view);          \
	}
#define FLAT_LOOKUP_SIZED(n)                                                                       \
	FLAT_LOOKUP_SIZED_ONE(n, _v8, 8, 0)                                                        \
	FLAT_LOOKUP_SIZED_ONE(n, , 0, 0)                                                           \
	FLAT_LOOKUP_SIZED_ONE(n, _v8_lru, 8, FLAT_VIEW_LRU)                                        \
	FLAT_LOOKUP_SIZED_ONE(n, _lru, 0, FLAT_VIEW_LRU)                                           \
	FLAT_LOOKUP_SIZED_ONE(n, _pcpu, 0, FLAT_VIEW_PCPU)                                         \
	FLAT_LOOKUP_SIZED_ONE(n, _lru_pcpu, 0, FLAT_VIEW_LRU | FLAT_VIEW_PCPU)                     \
	FLAT_LOOKUP_SIZED_ONE(n, _pcpu_rseq, 0, FLAT_VIEW_PCPU | FLAT_VIEW_RSEQ)                   \
	FLAT_LOOKUP_SIZED_ONE(n, _lru_pcpu_rseq, 0,                                                \
			      FLAT_VIEW_LRU | FLAT_VIEW_PCPU | FLAT_VIEW_RSEQ)                     \
	static const map_lookup_fn flat_lookups_k##n[8][2] = {                                     \
		[0] = { flat_lookup_k##n, flat_lookup_k##n##_v8 },                                 \
		[FLAT_VIEW_LRU] = { flat_lookup_k##n##_lru, flat_lookup_k##n##_v8_lru },           \
		[FLAT_VIEW_PCPU] = { flat_lookup_k##n##_pcpu, flat_lookup_k##n##_pcpu },           \
		[FLAT_VIEW_LRU | FLAT_VIEW_PCPU] = { flat_lookup_k##n##_lru_pcpu,                  \
						     flat_lookup_k##n##_lru_pcpu },                \
		[FLAT_VIEW_PCPU | FLAT_VIEW_RSEQ] = { flat_lookup_k##n##_pcpu_rseq,                \
						      flat_lookup_k##n##_pcpu_rseq },              \
		[FLAT_VIEW_LRU | FLAT_VIEW_PCPU | FLAT_VIEW_RSEQ] = {                              \
			flat_lookup_k##n##_lru_pcpu_rseq, flat_lookup_k##n##_lru_pcpu_rseq },      \
	};
FLAT_LOOKUP_SIZED(16)
FLAT_LOOKUP_SIZED(32)
FLAT_LOOKUP_SIZED(64)
FLAT_LOOKUP_SIZED(128)
FLAT_LOOKUP_SIZED(256)

#define FLAT_COPY_SIZED(n)                                                                         \
	static int flat_copy_k##n(struct bpfmap *map, const void *key, void *value)                \
	{                                                                                          \
		struct flat *f = to_flat(map);                                                     \
                                                                                                   \
		return flat_copy_long(f, key, value, n, hash_sized(key, n, &f->hp));               \
	}
FLAT_COPY_SIZED(16)
FLAT_COPY_SIZED(32)
FLAT_COPY_SIZED(64)
FLAT_COPY_SIZED(128)
FLAT_COPY_SIZED(256)

static int flat_copy_long_any(struct bpfmap *map, const void *key, void *value)
{
	struct flat *f = to_flat(map);
	uint32_t ks = map->key_size;

	return flat_copy_long(f, key, value, ks, f->hash(key, ks, &f->hp));
}

/* The copy-out of a map of long keys (map->copy): by key size, as
 * flat_lookup_for picks the lookups. */
static map_copy_fn flat_copy_long_for(const struct flat *f)
{
	if (!hash_sized_covers(f->hash_kind))
		return flat_copy_long_any;
	switch (f->map.key_size) {
	case 16:
		return flat_copy_k16;
	case 32:
		return flat_copy_k32;
	case 64:
		return flat_copy_k64;
	case 128:
		return flat_copy_k128;
	case 256:
		return flat_copy_k256;
	default:
		return flat_copy_long_any;
	}
}

map_copy_fn flat_copy_for(const struct flat *f)
{
	if (f->map.key_size > 8)
		return flat_copy_long_for(f);
	return flat_copy_word_for(f);
}

/* Other sizes over 8 bytes: the same, the map's hash out of line. */
static void *flat_lookup_long_any(struct bpfmap *map, const void *key)
{
	struct flat *f = to_flat(map);
	uint32_t ks = map->key_size;

	return flat_lookup_long(f, key, ks, f->hash(key, ks, &f->hp), 0, 0);
}

/* Keys of 1-3 and 5-7 bytes. */
static void *flat_lookup_any(struct bpfmap *map, const void *key)
{
	return flat_lookup_ptr(map, key, map->key_size, to_flat(map)->hash_kind);
}

/* ---- instruction sets for word keys (flat_words.h) ------------------------ */

bool flat_isa_runs(enum flat_isa isa)
{
	if (isa == FLAT_ISA_BASE)
		return true;
	if (!flat_lookup_word_x86(HASH_U32, 0, isa, false))
		return false; /* not built */
#if CPU_X86
	if (!cpu_runs_avx2() || !__builtin_cpu_supports("bmi"))
		return false;
	if (isa == FLAT_ISA_AVX2)
		return true;
	if (isa == FLAT_ISA_AVX512)
		return cpu_runs_avx512bw() && __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512dq");
#endif
	return false;
}

map_lookup_fn flat_lookup_word(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa,
			       unsigned int view)
{
	if (isa != FLAT_ISA_BASE)
		return flat_lookup_word_x86(kind, value_stride, isa, view);
	if (view)
		return NULL;
	return kind == HASH_U32 ? flat_lookup_k4 : flat_lookup_k8;
}

/* The best instruction set the CPU runs for word-key lookups; AVX-512 not
 * on Intel's Skylake-SP generation, which lowers its clock for 512-bit
 * work (the 8-byte keys' compare is one).  BPFMAP_FLAT_ISA=base or avx2 in
 * the environment picks a lower one, for side-by-side measurements. */
static enum flat_isa flat_isa_best(void)
{
	static const char *const names[FLAT_ISA_COUNT] = {"base", "avx2", "avx512"};
	const char *want = getenv("BPFMAP_FLAT_ISA");
	enum flat_isa best = FLAT_ISA_BASE;

	for (int i = FLAT_ISA_COUNT - 1; i > FLAT_ISA_BASE; i--) {
		if (!flat_isa_runs((enum flat_isa)i))
			continue;
#if CPU_X86
		if (i == FLAT_ISA_AVX512 && cpu_avx512_slows_clock())
			continue;
#endif
		best = (enum flat_isa)i;
		break;
	}
	for (int i = 0; want && i < (int)best; i++)
		if (!strcmp(want, names[i]))
			return (enum flat_isa)i;
	return best;
}

map_lookup_fn flat_lookup_for(enum hash_kind kind, uint32_t key_size, uint32_t value_stride,
			      bool match_by_key, unsigned int view)
{
	if ((kind == HASH_U32 || kind == HASH_U64) && match_by_key)
		return flat_lookup_word(kind, value_stride, flat_isa_best(), view);
	if (view && (key_size <= 8 || !hash_sized_covers(kind)))
		return NULL;
	if (key_size <= 8)
		return flat_lookup_any;
	if (!hash_sized_covers(kind))
		return flat_lookup_long_any;
	/* Values of 8 bytes (a counter, a pointer): the stride a constant. */
	switch (key_size) {
	case 16:
		return flat_lookups_k16[view][value_stride == 8];
	case 32:
		return flat_lookups_k32[view][value_stride == 8];
	case 64:
		return flat_lookups_k64[view][value_stride == 8];
	case 128:
		return flat_lookups_k128[view][value_stride == 8];
	case 256:
		return flat_lookups_k256[view][value_stride == 8];
	default:
		return view ? NULL : flat_lookup_long_any;
	}
}

/*
 * Program-view lookups of many keys, their cache misses overlapped: hash a
 * chunk and prefetch the home buckets' metadata and keys, then look each up.
 */
#define FLAT_BULK_CHUNK 16

#if FLAT_SIMD
/*
 * Word keys in maps that match by key: a lookup reads one line, its home
 * bucket's keys, so only that line is prefetched (not the tags), and the
 * homes are kept from the first pass rather than hashed again.
 */
static ALWAYS_INLINE int flat_lookup_bulk_words(struct flat *f, const char *keys, uint32_t n,
						void **values, uint32_t ks)
{
	const size_t line = (size_t)ks * FLAT_SLOTS;
	uint32_t home[FLAT_BULK_CHUNK], away[FLAT_BULK_CHUNK];
	int found = 0;

	for (uint32_t base = 0; base < n; base += FLAT_BULK_CHUNK) {
		uint32_t m = n - base < FLAT_BULK_CHUNK ? n - base : FLAT_BULK_CHUNK;
		const char *k = keys + (size_t)base * ks;
		uint32_t n_away = 0;

		for (uint32_t i = 0; i < m; i++) {
			home[i] = flat_home(f, flat_hash_kind(f, k + (size_t)i * ks,
							      ks == 4 ? HASH_U32 : HASH_U64));
			__builtin_prefetch(f->keys + home[i] * line);
		}

		for (uint32_t i = 0; i < m; i++) {
			uint32_t eq = flat_word_match(f, home[i], k + (size_t)i * ks, ks);

			if (unlikely(!eq)) {
				/* In a chain or absent: the far path reads the
				 * home's filter and chain head; fetch them for
				 * all such keys before any of them waits. */
				__builtin_prefetch(&f->homes[home[i]]);
				away[n_away++] = i;
				continue;
			}
			values[base + i] = flat_word_value_of(f, home[i], eq, ks);
			found++;
		}
		for (uint32_t j = 0; j < n_away; j++) {
			const char *key = k + (size_t)away[j] * ks;
			void *v = ks == 4 ? flat_lookup_k4_in(f, key) : flat_lookup_k8_in(f, key);

			if (unlikely(!v && errno == EBUSY))
				return -EBUSY;
			values[base + away[j]] = v;
			found += v != NULL;
		}
	}
	return found;
}
#endif

static ALWAYS_INLINE int flat_lookup_bulk_sized(struct flat *f, const char *keys, uint32_t n,
						void **values, uint32_t ks, enum hash_kind kind)
{
	uint64_t hash[FLAT_BULK_CHUNK];
	int found = 0;

#if FLAT_SIMD
	if ((kind == HASH_U32 || kind == HASH_U64) && f->match_by_key && !f->elems)
		return flat_lookup_bulk_words(f, keys, n, values, ks);
#endif
	for (uint32_t base = 0; base < n; base += FLAT_BULK_CHUNK) {
		uint32_t m = n - base < FLAT_BULK_CHUNK ? n - base : FLAT_BULK_CHUNK;
		const char *k = keys + (size_t)base * ks;

		for (uint32_t i = 0; i < m; i++) {
			uint32_t h;

			hash[i] = flat_hash_kind(f, k + (size_t)i * ks, kind);
			h = flat_home(f, hash[i]);
			__builtin_prefetch(&f->buckets[h]);
			if (ks > 8) {
				__builtin_prefetch(&f->elems[h * FLAT_SLOTS]);
				continue;
			}
			__builtin_prefetch(flat_key_at(f, h * FLAT_SLOTS));
			if (ks > 4)
				__builtin_prefetch(flat_key_at(f, h * FLAT_SLOTS) + 63);
		}
		if (ks > 8) {
			/* Long keys: the candidate's key once the tags are in. */
			for (uint32_t i = 0; i < m; i++) {
				struct flat_place pl = flat_place_of(f, hash[i]);
				uint32_t h = pl.home;
				uint64_t mt = flat_match(__atomic_load_n(&f->buckets[h].tags,
									 __ATOMIC_RELAXED),
							 pl.tag * FLAT_BYTES_LO);

				if (mt) {
					uint32_t e =
					    flat_elem_of(f, h * FLAT_SLOTS + flat_first(mt));

					if (e != UINT32_MAX) /* not yet filled: a race */
						__builtin_prefetch(f->keys +
								   (size_t)e * f->key_stride);
				}
			}
		}
		for (uint32_t i = 0; i < m; i++) {
			const char *key = k + (size_t)i * ks;
			struct flat_place pl = flat_place_of(f, hash[i]);
			uint32_t pos = flat_find(f, pl.home, pl.tag, key,
						 ks, ks <= 8 ? flat_small_key(key, ks) : 0, true);

			if (unlikely(pos == FLAT_WAIT_SELF))
				return -EBUSY;
			values[base + i] = pos != FLAT_NONE ? flat_value_at(f, pos) : NULL;
			found += pos != FLAT_NONE;
		}
	}
	return found;
}

static int flat_lookup_bulk_kind(struct flat *f, const void *keys, uint32_t n, void **values)
{
	switch (f->hash_kind) {
	case HASH_U32:
		return flat_lookup_bulk_sized(f, keys, n, values, 4, HASH_U32);
	case HASH_U64:
		return flat_lookup_bulk_sized(f, keys, n, values, 8, HASH_U64);
	default:
		return flat_lookup_bulk_sized(f, keys, n, values, f->map.key_size, f->hash_kind);
	}
}

int flat_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	struct flat *f = to_flat(map);
	int found = flat_lookup_bulk_kind(f, keys, n, values);

	/* The program view: an evicting map's elements found are used. */
	for (uint32_t i = 0; f->lru && found >= 0 && i < n; i++)
		if (values[i])
			flat_lru_touch(f->lru, values[i]);
	return found;
}
