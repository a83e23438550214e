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
 * (which must run: flat_isa_runs). */
map_lookup_fn flat_lookup_word(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa);

/* The AVX2 and AVX-512 ones (flat_words_x86.c); NULL where not built. */
map_lookup_fn flat_lookup_word_x86(enum hash_kind kind, uint32_t value_stride, enum flat_isa isa);

#endif
