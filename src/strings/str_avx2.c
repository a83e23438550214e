/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The AVX2 implementation: 32-byte aligned blocks, lane masks from
 * vpmovmskb, and a two-nibble vpshufb lookup table for sets of more than
 * four bytes (strspn/strcspn).  Compiled with the avx2 target attribute on
 * each function, so the rest of the library stays baseline; str_dispatch.c
 * only selects it on CPUs (and kernels) that run AVX2.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <stdint.h>
#include <immintrin.h>

#define STR_TARGET __attribute__((target("avx2")))
#include "strings/str_internal.h"

#define BLK 32
typedef __m256i blk_t;
typedef uint32_t mask_t;
#define STR_OPS_NAME bpfmap_str_ops_avx2
#define STR_ISA_NAME "avx2"
#define M_TOP (1u << 31)
#define M_ALL 0xffffffffu

/*
 * The empty asm keeps each block in a register: left alone, the compiler
 * folds the same load into every instruction that uses the block, and the
 * loops become bound by load throughput.
 */
STR_FN blk_t b_load(const unsigned char *p)
{
	blk_t v = _mm256_load_si256((const __m256i *)(const void *)p);

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
	return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

STR_FN blk_t b_set1(unsigned char c)
{
	return _mm256_set1_epi8((char)c);
}

STR_FN blk_t b_zero(void)
{
	return _mm256_setzero_si256();
}

typedef blk_t truth_t; /* lanes all-ones where true */

STR_FN blk_t b_eq(blk_t a, blk_t b)
{
	return _mm256_cmpeq_epi8(a, b);
}

STR_FN blk_t b_or(blk_t a, blk_t b)
{
	return _mm256_or_si256(a, b);
}

STR_FN blk_t b_fold(blk_t v)
{
	/* Shift each range to start at -128 and compare signed. */
	blk_t ascii = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 26)),
					_mm256_add_epi8(v, _mm256_set1_epi8(0x80 - 'A')));
	blk_t latin = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 31)),
					_mm256_add_epi8(v, _mm256_set1_epi8((char)(0x80 - 0xc0))));

	latin = _mm256_andnot_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8((char)0xd7)), latin);
	return _mm256_add_epi8(v, _mm256_and_si256(_mm256_or_si256(ascii, latin),
						   _mm256_set1_epi8(0x20)));
}

/*
 * Keys: a zero lane marks a stop, so blocks join with an unsigned min and one
 * compare with zero tests them all.
 */
typedef blk_t skey_t;

STR_FN skey_t b_key_chr(blk_t v, blk_t vc)
{
	return _mm256_min_epu8(_mm256_xor_si256(v, vc), v);
}

STR_FN skey_t b_key_chr2(blk_t v, blk_t va, blk_t vb)
{
	return _mm256_min_epu8(_mm256_min_epu8(_mm256_xor_si256(v, va), _mm256_xor_si256(v, vb)), v);
}

/* Zero where v == c. */
STR_FN skey_t b_key_eq(blk_t v, blk_t vc)
{
	return _mm256_xor_si256(v, vc);
}

STR_FN skey_t b_key_nul(blk_t v)
{
	return v;
}

STR_FN skey_t b_key_cmp(blk_t a, blk_t b)
{
	return _mm256_min_epu8(_mm256_cmpeq_epi8(a, b), a);
}

STR_FN skey_t b_key_join(skey_t a, skey_t b)
{
	return _mm256_min_epu8(a, b);
}

/* Stops where both a and b stop (a zero lane only if both are zero). */
STR_FN skey_t b_key_both(skey_t a, skey_t b)
{
	return _mm256_or_si256(a, b);
}

STR_FN mask_t b_key_mask(skey_t k)
{
	return (mask_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(k, _mm256_setzero_si256()));
}

STR_FN mask_t b_mask(blk_t v)
{
	return (mask_t)_mm256_movemask_epi8(v);
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
	return _mm256_loadu_si256((const __m256i *)addr);
}

STR_FN blk_t b_window_slow(blk_t lo, blk_t hi, size_t off)
{
	unsigned char buf[2 * BLK] __attribute__((aligned(BLK)));

	_mm256_store_si256((__m256i *)(void *)buf, lo);
	_mm256_store_si256((__m256i *)(void *)(buf + BLK), hi);
	return _mm256_loadu_si256((const __m256i *)(const void *)(buf + off));
}

/*
 * Set membership by table: byte b is in the set iff bit (b >> 4) & 7 of
 * row b & 15 is set, in the low table for b < 0x80 and the high one above.
 * vpshufb yields 0 for an index with its top bit set, which picks the row.
 */
#define STR_HAVE_LUT 1
typedef struct {
	__m256i lo, hi, bits;
} lut_t;

/* rows: the low table's rows 0-7 and 8-15, then the high table's. */
STR_FN lut_t lut_make(const uint64_t *rows)
{
	lut_t l;

	l.lo = _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)rows[1], (long long)rows[0]));
	l.hi = _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)rows[3], (long long)rows[2]));
	l.bits = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 1, 2, 4, 8, 16, 32, 64,
				  (char)128, 1, 2, 4, 8, 16, 32, 64, (char)128, 1, 2, 4, 8, 16,
				  32, 64, (char)128);
	return l;
}

STR_FN blk_t b_member(blk_t v, const lut_t *l)
{
	blk_t rows = _mm256_or_si256(
		_mm256_shuffle_epi8(l->lo, v),
		_mm256_shuffle_epi8(l->hi, _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80))));
	blk_t nib = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f));
	blk_t bit = _mm256_shuffle_epi8(l->bits, nib);

	return _mm256_cmpeq_epi8(_mm256_and_si256(rows, bit), bit);
}

#include "strings/str_impl.h"

#endif
