/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat layout's program-view lookups of 4- and 8-byte keys (HASH_U32 and
 * HASH_U64 maps that match by key: flat.h), per instruction set: the
 * baseline (SSE2, flat_lookup.c) and AVX2 and AVX-512 variants
 * (flat_words_x86.c), each also specialised for 8-byte values (the value's
 * address is then one lea, not a multiply).
 * flat_lookup_for() picks the best the CPU runs, once, at map creation;
 * tests reach every one through flat_lookup_word().
 */
#ifndef BPFMAP_TABLES_FLAT_WORDS_H
#define BPFMAP_TABLES_FLAT_WORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/flat.h"
#include "tables/value.h"
#include "util/shared_copy.h"

enum flat_isa {
	FLAT_ISA_BASE,	 /* SSE2 (scalar where FLAT_SIMD is 0) */
	FLAT_ISA_AVX2,	 /* one 32-byte compare per 4-byte bucket, two per 8-byte */
	FLAT_ISA_AVX512, /* AVX-512F/BW/VL/DQ: one compare into a mask register, no tags read */
	FLAT_ISA_COUNT
};

/*
 * The word-key lookups start on a 64-byte boundary: they are a few dozen
 * instructions, and measured on the selftest's loop where they fall against
 * the fetch blocks moved their speed by up to 15% from one build to the next.
 */
#define FLAT_WORD_ALIGN __attribute__((aligned(64)))

/* Can this CPU (and OS) run @isa's lookups, and were they built? */
bool flat_isa_runs(enum flat_isa isa);

/* The program-view lookup of a HASH_U32 or HASH_U64 map that matches by key
 * (f->match_by_key) and whose values are @value_stride bytes apart, in @isa
 * (which must run: flat_isa_runs), for @view (FLAT_VIEW_*, flat.h); NULL
 * for the baseline's views other than the plain one, which it has not. */
map_lookup_fn flat_lookup_word(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa,
			       unsigned int view);

/* The AVX2 and AVX-512 ones (flat_words_x86.c); NULL where not built. */
map_lookup_fn flat_lookup_word_x86(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa,
				   unsigned int view);

/* The copy-outs of the same maps (map->copy) per instruction set; @v8:
 * 8-byte values without a spin lock (flat_lookup.c); the AVX2 and AVX-512
 * ones (flat_words_x86.c), NULL where not built.  @far, with @v8: a map too
 * large for its bucket's values to be in cache, whose copy-out prefetches
 * them (the eight values of a home bucket are one line) while it compares
 * the keys, so that the two misses overlap instead of following each other
 * (FLAT_COPY_FAR_BYTES).  @ver, without @v8: flat_versioned(). */
map_copy_fn flat_copy_word(enum hash_kind kind, bool v8, bool far, bool ver, enum flat_isa isa);
/* Home buckets' values from which a map's copy-outs are far: half of this
 * machine's 2 MiB L2.  Below it the value line is mostly in cache, and in
 * alternated pairs the prefetch cost small and medium maps 5-10%. */
#define FLAT_COPY_FAR_BYTES ((uint64_t)512 << 10)
map_copy_fn flat_copy_word_x86(enum hash_kind kind, bool v8, bool far, bool ver,
				enum flat_isa isa);

/* The index of a copy-out in the tables of both: versioned, v8, v8 far,
 * neither (per-CPU slots of at most 8 bytes, which keep the bucket's seq). */
static inline unsigned int flat_copy_word_index(bool v8, bool far, bool ver)
{
	return v8 ? 1 + far : ver ? 0 : 3;
}

/* The general copy-out paths (flat_copy.c): a word key's, out of line with
 * errno set as map->copy sets it (no match in the home bucket, or a writer
 * busy on it), from the key as flat_small_key() read it before the value
 * was written (the caller's buffer may hold value bytes by then); a key of
 * at most 8 bytes in its home bucket, slot by slot, then its chain; and in
 * a read-side section, under the value's spin lock when @with_lock. */
int flat_copy_word_far(const struct flat *f, uint64_t k, void *value, uint32_t ks);
int flat_copy_small(const struct flat *f, const void *key, void *value, uint32_t ks,
		    enum hash_kind kind);
int flat_copy_section(const struct flat *f, const void *key, void *value, bool with_lock);

/* A far copy-out's prefetch of home bucket @h's values (8 bytes each: one
 * line), before its key compare (flat_copy_word). */
static ALWAYS_INLINE void flat_copy_prefetch(const struct flat *f, uint32_t h, bool far)
{
	if (far)
		__builtin_prefetch(flat_value_elem(f, (size_t)h * FLAT_SLOTS, 8));
}

/*
 * The end of a word-key copy-out that matched slot @pos: its value copied
 * out, valid if bucket seq @seq, read as @s1 before the keys were compared,
 * had no writer busy then and still reads @s1, and the value's version held
 * still (flat_value_copy; @ver: flat_versioned()).  @v8: the value is one word
 * and has no spin lock, so the copy is one load.  False: take the general
 * path.
 */
static ALWAYS_INLINE bool flat_copy_slot(const struct flat *f, size_t pos, const uint32_t *seq,
					 uint32_t s1, void *value, bool v8, bool ver)
{
	if (unlikely(s1 & MWSEQ_WRITERS))
		return false;
	TEST_HOOK(HOOK_FLAT_COPY_MATCHED, &(uint32_t){ (uint32_t)pos });
	if (v8) {
		uint64_t w = __atomic_load_n((const uint64_t *)(const void *)
						 flat_value_elem(f, pos, 8),
					     __ATOMIC_ACQUIRE);

		if (unlikely(__atomic_load_n(seq, __ATOMIC_RELAXED) != s1))
			return false;
		memcpy(value, &w, 8);
		return true;
	}
	if (unlikely(!flat_value_copy_as(f, pos, value, ver) ||
		     __atomic_load_n(seq, __ATOMIC_RELAXED) != s1))
		return false;
	value_clear_lock(&f->map, value);
	return true;
}

#endif
