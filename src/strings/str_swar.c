/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The portable implementation: 8-byte aligned words, "SIMD within a register".
 * A lane test leaves 0x80 in each byte lane where it holds and 0 elsewhere,
 * computed without carries between lanes, so every lane is exact (not only
 * the first), which the reverse search and the substring filter need.
 * Big-endian machines byte-swap each word on load so lane 0 is the lowest
 * address everywhere.
 */
#include <stdint.h>

#define STR_TARGET
#include "strings/str_internal.h"

#define BLK 8
typedef uint64_t blk_t;
typedef uint64_t mask_t;
#define STR_OPS_NAME bpfmap_str_ops_swar
#define STR_ISA_NAME "swar"

#define ONES 0x0101010101010101ULL
#define LOW7 0x7f7f7f7f7f7f7f7fULL
#define HIGH 0x8080808080808080ULL
#define M_TOP (1ULL << 63)
#define M_ALL HIGH

typedef uint64_t __attribute__((may_alias, aligned(8))) word_alias;

/* (AVX-512 keeps such masks out of mask registers; nothing to do here.) */
STR_FN mask_t m_gpr(mask_t m)
{
	return m;
}

STR_FN mask_t m_below(size_t k)
{
	return k >= 8 ? ~0ULL : (1ULL << (8 * k)) - 1;
}

STR_FN blk_t b_load(const unsigned char *p)
{
	blk_t w = *(const word_alias *)(const void *)p;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/*
 * Zero the lanes below k.  Only their masks' bits are ever cleared afterwards,
 * but Valgrind follows carries pessimistically through the word arithmetic,
 * so undefined bytes before a string (in its first word) would otherwise
 * taint the lanes above them.
 */
STR_FN blk_t b_define_from(blk_t v, size_t k)
{
	return v & ~m_below(k);
}

typedef uint64_t __attribute__((may_alias, aligned(1))) uword_alias;

STR_FN blk_t b_loadu(const unsigned char *p)
{
	blk_t w = *(const uword_alias *)(const void *)p;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

STR_FN blk_t b_set1(unsigned char c)
{
	return ONES * c;
}

STR_FN blk_t b_zero(void)
{
	return 0;
}

/* 0x80 in each lane of x that is zero. */
STR_FN blk_t sw_zero(blk_t x)
{
	blk_t t = (x & LOW7) + LOW7;

	return ~(t | x | LOW7);
}

typedef blk_t truth_t; /* 0x80 in the lanes where true */

STR_FN blk_t b_eq(blk_t a, blk_t b)
{
	return sw_zero(a ^ b);
}

STR_FN blk_t b_or(blk_t a, blk_t b)
{
	return a | b;
}

STR_FN blk_t b_ne_or_nul(blk_t a, blk_t b)
{
	return (~sw_zero(a ^ b) & HIGH) | sw_zero(a);
}

/* 0x80 in each lane whose low 7 bits lie in [lo, hi]. */
STR_FN blk_t sw_range7(blk_t low7, unsigned lo, unsigned hi)
{
	blk_t ge = low7 + ONES * (0x80 - lo);
	blk_t gt = low7 + ONES * (0x7f - hi);

	return ge & ~gt & HIGH;
}

/* 'A'-'Z' and Latin-1 0xC0-0xDE except 0xD7 gain 0x20. */
STR_FN blk_t b_fold(blk_t v)
{
	blk_t low7 = v & LOW7;
	blk_t ascii = sw_range7(low7, 0x41, 0x5a) & ~v;
	blk_t latin = sw_range7(low7, 0x40, 0x5e) & v & ~sw_zero(low7 ^ (ONES * 0x57));

	return v + ((ascii | latin) >> 2);
}

/* Keys are the stop masks themselves; they join with OR. */
typedef blk_t skey_t;

STR_FN skey_t b_key_chr(blk_t v, blk_t vc)
{
	return sw_zero(v ^ vc) | sw_zero(v);
}

STR_FN skey_t b_key_chr2(blk_t v, blk_t va, blk_t vb)
{
	return sw_zero(v ^ va) | sw_zero(v ^ vb) | sw_zero(v);
}

STR_FN skey_t b_key_eq(blk_t v, blk_t vc)
{
	return sw_zero(v ^ vc);
}

STR_FN skey_t b_key_nul(blk_t v)
{
	return sw_zero(v);
}

STR_FN skey_t b_key_cmp(blk_t a, blk_t b)
{
	return b_ne_or_nul(a, b);
}

STR_FN skey_t b_key_join(skey_t a, skey_t b)
{
	return a | b;
}

/* Stops where both a and b stop. */
STR_FN skey_t b_key_both(skey_t a, skey_t b)
{
	return a & b;
}

STR_FN mask_t b_key_mask(skey_t k)
{
	return k;
}

STR_FN mask_t b_mask(blk_t v)
{
	return v;
}

STR_FN unsigned m_first(mask_t m)
{
	return (unsigned)__builtin_ctzll(m) >> 3;
}

STR_FN unsigned m_last(mask_t m)
{
	return (63u - (unsigned)__builtin_clzll(m)) >> 3;
}

STR_FN mask_t m_shr1(mask_t m)
{
	return m >> 8;
}

STR_FN blk_t b_window_slow(blk_t lo, blk_t hi, size_t off)
{
	return (lo >> (8 * off)) | (hi << (64 - 8 * off));
}

STR_FN blk_t b_window_fast(uintptr_t addr, blk_t lo, blk_t hi, size_t off)
{
	(void)addr;
	return b_window_slow(lo, hi, off);
}

#include "strings/str_impl.h"
