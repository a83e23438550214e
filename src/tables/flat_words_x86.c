/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Program-view lookups and copy-outs of 4- and 8-byte keys with AVX2 and
 * AVX-512 (flat_words.h; the SSE2 ones are in flat_lookup.c, the layout in flat.h).
 * A home bucket's eight keys are 32 or 64 contiguous, aligned bytes: AVX2
 * compares them with the key in one instruction (4-byte keys) or two
 * (8-byte), AVX-512 in one.  Against SSE2, which compares 8-byte keys as
 * 32-bit halves and packs the results, the 8-byte lookup loses half its
 * instructions.  No tags: these maps match by key (flat.h), and a match is
 * the key's live slot.
 *
 * The keys are read with plain vector loads: x86 keeps loads in order, so
 * the caller's reads of the value come after the key that a fill stored
 * after it (release); the call keeps the compiler from moving them.  Vector
 * loads of slots being written race like the SSE2 ones; TSan builds, which
 * would see them, use the scalar lookups instead (FLAT_SIMD).
 */
#include "tables/flat_lru.h"
#include "tables/flat_words.h"

#if FLAT_SIMD && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#define FLAT_AVX2 __attribute__((target("avx2,bmi")))
#define FLAT_AVX512 __attribute__((target("avx2,bmi,avx512f,avx512bw,avx512vl,avx512dq")))

/*
 * The end of each lookup: the value of bucket h's first slot in match mask
 * @m (bit i: slot i), else the general path.  tzcnt answers 64 for an empty
 * mask, so its result is the test (one instruction fewer than testing m
 * first; 64-bit, so that the index needs no zero extension).  @vs: the value
 * stride if known (8), else 0.
 */
#define FLAT_WORD_END(f, h, m, vs, far_call, view)                                               \
	do {                                                                                       \
		uint64_t i_ = _tzcnt_u64(m);                                                       \
                                                                                                   \
		if (likely(i_ < FLAT_SLOTS)) {                                                     \
			char *v_ = flat_value_elem((f), (size_t)(h) * FLAT_SLOTS + i_, (vs));     \
                                                                                                   \
			if ((view) & FLAT_VIEW_LRU)                                                \
				flat_lru_touch_home((f)->lru_state, (h), i_);                      \
			return (view) & FLAT_VIEW_PCPU ? flat_pcpu_here((f), v_, (view) & FLAT_VIEW_RSEQ) \
							: v_;                                      \
		}                                                                                  \
		return far_call;                                                                   \
	} while (0)

/* A 4-byte key, its hash and home. */
static ALWAYS_INLINE uint32_t flat_k4_home(const struct flat *f, const void *key, uint64_t *k,
					   uint64_t *hash)
{
	*k = load_u32(key);
	*hash = fast_hash_u32((uint32_t)*k, f->mul, f->fin);
	return flat_home(f, *hash);
}

/* An 8-byte key (read by halves: see load_u32_halves), its hash and home. */
static ALWAYS_INLINE uint32_t flat_k8_home(const struct flat *f, const void *key, uint64_t *k,
					   uint64_t *hash)
{
	uint32_t lo, hi;

	load_u32_halves(key, &lo, &hi);
	*k = (uint64_t)hi << 32 | lo;
	*hash = fast_hash_u64_halves(lo, hi, f->mul, f->fin);
	return flat_home(f, *hash);
}

/* Home bucket h's slots holding key k (bit i: slot i), per key size and
 * instruction set: the one compare each lookup and copy-out makes. */
static ALWAYS_INLINE FLAT_AVX2 uint32_t flat_k4_avx2_eq(const struct flat *f, uint32_t h,
							 uint64_t k)
{
	__m256i keys = _mm256_load_si256((const __m256i *)(const void *)(f->keys + (size_t)h * 32));
	__m256i eq = _mm256_cmpeq_epi32(keys, _mm256_set1_epi32((int)k));

	return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
}

static ALWAYS_INLINE FLAT_AVX2 uint32_t flat_k8_avx2_eq(const struct flat *f, uint32_t h,
							 uint64_t k)
{
	const __m256i *keys = (const __m256i *)(const void *)(f->keys + (size_t)h * 64);
	__m256i kv = _mm256_set1_epi64x((long long)k);

	return (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(keys[0], kv))) |
	       (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(keys[1], kv)))
		   << 4;
}

static ALWAYS_INLINE FLAT_AVX512 uint32_t flat_k4_avx512_eq(const struct flat *f, uint32_t h,
							     uint64_t k)
{
	__m256i keys = _mm256_load_si256((const __m256i *)(const void *)(f->keys + (size_t)h * 32));

	return _cvtmask8_u32(_mm256_cmpeq_epi32_mask(_mm256_set1_epi32((int)k), keys));
}

static ALWAYS_INLINE FLAT_AVX512 uint32_t flat_k8_avx512_eq(const struct flat *f, uint32_t h,
							     uint64_t k)
{
	__m512i keys = _mm512_load_si512((const void *)(f->keys + (size_t)h * 64));

	return _cvtmask8_u32(_mm512_cmpeq_epi64_mask(_mm512_set1_epi64((long long)k), keys));
}

/* The lookup of a @ks-byte key with @name's home and compare; @vs: the value
 * stride if known (8), else 0; @view: FLAT_VIEW_* (flat.h). */
#define FLAT_WORD_LOOKUP(name, ks, attrs)                                                          \
	static ALWAYS_INLINE attrs void *flat_##name(struct bpfmap *map, const void *key,          \
						     uint32_t vs, unsigned int view)               \
	{                                                                                          \
		struct flat *f = to_flat(map);                                                     \
		uint64_t hash, k;                                                                  \
		uint32_t h = flat_k##ks##_home(f, key, &k, &hash);                                 \
		uint32_t m = flat_##name##_eq(f, h, k);                                            \
                                                                                                   \
		FLAT_WORD_END(f, h, m, vs, flat_lookup_word_far_view(f, hash, ks, k, view), view); \
	}
FLAT_WORD_LOOKUP(k4_avx2, 4, FLAT_AVX2)
FLAT_WORD_LOOKUP(k8_avx2, 8, FLAT_AVX2)
FLAT_WORD_LOOKUP(k4_avx512, 4, FLAT_AVX512)
FLAT_WORD_LOOKUP(k8_avx512, 8, FLAT_AVX512)

/* Each lookup for 8-byte values (v8) and for any value stride, per view:
 * plain, evicting (lru), per-CPU (pcpu) and both. */
#define FLAT_WORD_LOOKUP_VIEW(name, suffix, view, attrs)                                           \
	static FLAT_WORD_ALIGN attrs void *flat_lookup_##name##suffix##_v8(struct bpfmap *map,     \
									   const void *key)        \
	{                                                                                          \
		return flat_##name(map, key, 8, (view));                                           \
	}                                                                                          \
	static FLAT_WORD_ALIGN attrs void *flat_lookup_##name##suffix(struct bpfmap *map,          \
								      const void *key)             \
	{                                                                                          \
		return flat_##name(map, key, 0, (view));                                           \
	}
#define FLAT_WORD_LOOKUPS(name, attrs)                                                             \
	FLAT_WORD_LOOKUP_VIEW(name, , 0, attrs)                                                    \
	FLAT_WORD_LOOKUP_VIEW(name, _lru, FLAT_VIEW_LRU, attrs)                                    \
	FLAT_WORD_LOOKUP_VIEW(name, _pcpu, FLAT_VIEW_PCPU, attrs)                                  \
	FLAT_WORD_LOOKUP_VIEW(name, _lru_pcpu, FLAT_VIEW_LRU | FLAT_VIEW_PCPU, attrs)             \
	FLAT_WORD_LOOKUP_VIEW(name, _pcpu_rseq, FLAT_VIEW_PCPU | FLAT_VIEW_RSEQ, attrs)           \
	FLAT_WORD_LOOKUP_VIEW(name, _lru_pcpu_rseq, FLAT_VIEW_LRU | FLAT_VIEW_PCPU | FLAT_VIEW_RSEQ, attrs)
FLAT_WORD_LOOKUPS(k4_avx2, FLAT_AVX2)
FLAT_WORD_LOOKUPS(k8_avx2, FLAT_AVX2)
FLAT_WORD_LOOKUPS(k4_avx512, FLAT_AVX512)
FLAT_WORD_LOOKUPS(k8_avx512, FLAT_AVX512)

/*
 * The copy-outs (map->copy): the same compares, the bucket's seq read
 * before them, the value copied by flat_copy_slot.
 */
#define FLAT_COPY_END(f, h, m, seq, s1, value, v8, ver, ks)                                       \
	do {                                                                                       \
		uint64_t i_ = _tzcnt_u64(m);                                                       \
                                                                                                   \
		if (likely(i_ < FLAT_SLOTS) &&                                                     \
		    likely(flat_copy_slot((f), (size_t)(h) * FLAT_SLOTS + i_, (seq), (s1), (value), \
					  (v8), (ver))))                                           \
			return 0;                                                                  \
		return flat_copy_word_far((f), k, (value), (ks));                                 \
	} while (0)

/* The copy-out of a @ks-byte key: the bucket's seq read before the same
 * compare; @v8 and @ver as flat_copy_slot's; @far (with v8) as
 * flat_copy_word's. */
#define FLAT_WORD_COPY(name, ks, attrs)                                                            \
	static ALWAYS_INLINE attrs int flat_copy_##name(struct bpfmap *map, const void *key,       \
							void *value, bool v8, bool far, bool ver)  \
	{                                                                                          \
		struct flat *f = to_flat(map);                                                     \
		uint64_t hash, k;                                                                  \
		uint32_t h = flat_k##ks##_home(f, key, &k, &hash);                                 \
		const uint32_t *seq = &f->buckets[h].seq;                                          \
		uint32_t s1, m;                                                                    \
                                                                                                   \
		flat_copy_prefetch(f, h, far);                                                     \
		s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);                                       \
		m = flat_##name##_eq(f, h, k);                                                     \
                                                                                                   \
		FLAT_COPY_END(f, h, m, seq, s1, value, v8, ver, ks);                               \
	}
FLAT_WORD_COPY(k4_avx2, 4, FLAT_AVX2)
FLAT_WORD_COPY(k8_avx2, 8, FLAT_AVX2)
FLAT_WORD_COPY(k4_avx512, 4, FLAT_AVX512)
FLAT_WORD_COPY(k8_avx512, 8, FLAT_AVX512)

/* Each copy-out for 8-byte values without a spin lock (v8; far: the value
 * line fetched beside the keys'), for versioned values, and for per-CPU
 * slots of at most 8 bytes (flat_copy_word_index). */
#define FLAT_WORD_COPY_ONE(name, suffix, attrs, v8, far, ver)                                      \
	static FLAT_WORD_ALIGN attrs int flat_copy_##name##suffix(struct bpfmap *map,              \
								  const void *key, void *value)    \
	{                                                                                          \
		return flat_copy_##name(map, key, value, v8, far, ver);                            \
	}
#define FLAT_WORD_COPIES(name, attrs)                                                              \
	FLAT_WORD_COPY_ONE(name, _v8, attrs, true, false, false)                                   \
	FLAT_WORD_COPY_ONE(name, _v8_far, attrs, true, true, false)                                \
	FLAT_WORD_COPY_ONE(name, _any, attrs, false, false, true)                                  \
	FLAT_WORD_COPY_ONE(name, _slots, attrs, false, false, false)
FLAT_WORD_COPIES(k4_avx2, FLAT_AVX2)
FLAT_WORD_COPIES(k8_avx2, FLAT_AVX2)
FLAT_WORD_COPIES(k4_avx512, FLAT_AVX512)
FLAT_WORD_COPIES(k8_avx512, FLAT_AVX512)

#define FLAT_WORD_COPY_ROW(name)                                                                   \
	{ flat_copy_##name##_any, flat_copy_##name##_v8, flat_copy_##name##_v8_far,                \
	  flat_copy_##name##_slots }

map_copy_fn flat_copy_word_x86(enum hash_kind kind, bool v8, bool far, bool ver,
				enum flat_isa isa)
{
	/* [isa - AVX2][8-byte keys][flat_copy_word_index] */
	static const map_copy_fn fns[2][2][4] = {
		{ FLAT_WORD_COPY_ROW(k4_avx2), FLAT_WORD_COPY_ROW(k8_avx2) },
		{ FLAT_WORD_COPY_ROW(k4_avx512), FLAT_WORD_COPY_ROW(k8_avx512) },
	};

	if (isa != FLAT_ISA_AVX2 && isa != FLAT_ISA_AVX512)
		return NULL;
	return fns[isa - FLAT_ISA_AVX2][kind != HASH_U32][flat_copy_word_index(v8, far, ver)];
}

/* Both value strides of one lookup, as fns[][][][] lists them. */
#define FLAT_WORD_PAIR(name) { flat_lookup_##name, flat_lookup_##name##_v8 }
#define FLAT_WORD_VIEWS(name)                                                                      \
	{ FLAT_WORD_PAIR(name),		    FLAT_WORD_PAIR(name##_lru),                            \
	  FLAT_WORD_PAIR(name##_pcpu),	    FLAT_WORD_PAIR(name##_lru_pcpu),                       \
	  { NULL, NULL },		    { NULL, NULL },                                        \
	  FLAT_WORD_PAIR(name##_pcpu_rseq), FLAT_WORD_PAIR(name##_lru_pcpu_rseq) }

map_lookup_fn flat_lookup_word_x86(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa,
				    unsigned int view)
{
	/* [isa - AVX2][8-byte keys][view][8-byte values] */
	static const map_lookup_fn fns[2][2][FLAT_VIEW_RSEQ * 2][2] = {
		{ FLAT_WORD_VIEWS(k4_avx2), FLAT_WORD_VIEWS(k8_avx2) },
		{ FLAT_WORD_VIEWS(k4_avx512), FLAT_WORD_VIEWS(k8_avx512) },
	};

	if (isa != FLAT_ISA_AVX2 && isa != FLAT_ISA_AVX512)
		return NULL;
	return fns[isa - FLAT_ISA_AVX2][kind != HASH_U32][view][value_stride == 8];
}
#else
map_copy_fn flat_copy_word_x86(enum hash_kind kind, bool v8, bool far, bool ver,
				enum flat_isa isa)
{
	(void)kind;
	(void)v8;
	(void)far;
	(void)ver;
	(void)isa;
	return NULL;
}

map_lookup_fn flat_lookup_word_x86(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa,
				    unsigned int view)
{
	(void)kind;
	(void)value_stride;
	(void)isa;
	(void)view;
	return NULL;
}
#endif
