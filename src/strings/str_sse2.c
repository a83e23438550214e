/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SSE2 implementation: 16-byte aligned blocks, lane masks from
 * pmovmskb.  Every x86-64 CPU has it; no set lookup table (that needs
 * pshufb), so sets of more than four bytes use the byte table.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <stdint.h>
#include <emmintrin.h>

#define STR_TARGET __attribute__((target("sse2")))
#include "strings/str_internal.h"

#define BLK 16
typedef __m128i blk_t;
typedef uint32_t mask_t;
#define STR_OPS_NAME bpfmap_str_ops_sse2
#define STR_ISA_NAME "sse2"
#define M_TOP (1u << 15)
#define M_ALL 0xffffu

/*
 * The empty asm keeps each block in a register: left alone, the compiler
 * folds the same load into every instruction that uses the block, and the
 * loops become bound by load throughput.
 */
STR_FN blk_t b_load(const unsigned char *p)
{
	blk_t v = _mm_load_si128((const __m128i *)(const void *)p);

	__asm__("" : "+x"(v));
	return v;
}

/* Lanes are tracked one by one by Valgrind: nothing to do (see str_swar.c). */
STR_FN blk_t b_define_from(blk_t v, size_t k)
{
	(void)k;
	return v;
}

STR_FN blk_t b_loadu(const unsigned char *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

STR_FN blk_t b_set1(unsigned char c)
{
	return _mm_set1_epi8((char)c);
}

STR_FN blk_t b_zero(void)
{
	return _mm_setzero_si128();
}

typedef blk_t truth_t; /* lanes all-ones where true */

STR_FN blk_t b_eq(blk_t a, blk_t b)
{
	return _mm_cmpeq_epi8(a, b);
}

STR_FN blk_t b_or(blk_t a, blk_t b)
{
	return _mm_or_si128(a, b);
}

STR_FN blk_t b_fold(blk_t v)
{
	/* Shift each range to start at -128 and compare signed. */
	blk_t ascii = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(0x80 - 'A')),
				     _mm_set1_epi8((char)(0x80 + 26)));
	blk_t latin = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - 0xc0))),
				     _mm_set1_epi8((char)(0x80 + 31)));

	latin = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xd7)), latin);
	return _mm_add_epi8(v, _mm_and_si128(_mm_or_si128(ascii, latin), _mm_set1_epi8(0x20)));
}

/*
 * Keys: a zero lane marks a stop, so blocks join with an unsigned min and one
 * compare with zero tests them all.
 */
typedef blk_t skey_t;

STR_FN skey_t b_key_chr(blk_t v, blk_t vc)
{
	return _mm_min_epu8(_mm_xor_si128(v, vc), v);
}

STR_FN skey_t b_key_chr2(blk_t v, blk_t va, blk_t vb)
{
	return _mm_min_epu8(_mm_min_epu8(_mm_xor_si128(v, va), _mm_xor_si128(v, vb)), v);
}

/* Zero where v == c. */
STR_FN skey_t b_key_eq(blk_t v, blk_t vc)
{
	return _mm_xor_si128(v, vc);
}

STR_FN skey_t b_key_nul(blk_t v)
{
	return v;
}

STR_FN skey_t b_key_cmp(blk_t a, blk_t b)
{
	return _mm_min_epu8(_mm_cmpeq_epi8(a, b), a);
}

STR_FN skey_t b_key_join(skey_t a, skey_t b)
{
	return _mm_min_epu8(a, b);
}

/* Stops where both a and b stop (a zero lane only if both are zero). */
STR_FN skey_t b_key_both(skey_t a, skey_t b)
{
	return _mm_or_si128(a, b);
}

STR_FN mask_t b_key_mask(skey_t k)
{
	return (mask_t)_mm_movemask_epi8(_mm_cmpeq_epi8(k, _mm_setzero_si128()));
}

STR_FN mask_t b_mask(blk_t v)
{
	return (mask_t)_mm_movemask_epi8(v);
}

/* (AVX-512 keeps such masks out of mask registers; nothing to do here.) */
STR_FN mask_t m_gpr(mask_t m)
{
	return m;
}

STR_FN mask_t m_below(size_t k)
{
	return k >= 32 ? ~0u : (1u << k) - 1;
}

STR_FN unsigned m_first(mask_t m)
{
	return (unsigned)__builtin_ctz(m);
}

STR_FN unsigned m_last(mask_t m)
{
	return 31u - (unsigned)__builtin_clz(m);
}

STR_FN mask_t m_shr1(mask_t m)
{
	return m >> 1;
}

STR_FN blk_t b_window_fast(uintptr_t addr, blk_t lo, blk_t hi, size_t off)
{
	(void)lo;
	(void)hi;
	(void)off;
	return _mm_loadu_si128((const __m128i *)addr);
}

STR_FN blk_t b_window_slow(blk_t lo, blk_t hi, size_t off)
{
	unsigned char buf[2 * BLK] __attribute__((aligned(BLK)));

	_mm_store_si128((__m128i *)(void *)buf, lo);
	_mm_store_si128((__m128i *)(void *)(buf + BLK), hi);
	return _mm_loadu_si128((const __m128i *)(const void *)(buf + off));
}

#include "strings/str_impl.h"

#endif
