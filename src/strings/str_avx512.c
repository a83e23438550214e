/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The AVX-512BW implementation: 64-byte aligned blocks, lane masks straight
 * from the compare instructions (mask registers), keys tested with vptestnmb,
 * and the two-nibble vpshufb table for large sets.  str_dispatch.c selects it
 * on CPUs with AVX-512BW whose clock does not drop for 512-bit work (not the
 * Skylake-SP generation of Intel servers); elsewhere AVX2 is used.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <stdint.h>
#include <immintrin.h>

#define STR_TARGET __attribute__((target("avx512f,avx512bw,bmi,bmi2")))
#include "strings/str_internal.h"

#define BLK 64
typedef __m512i blk_t;
typedef uint64_t mask_t;
typedef __mmask64 truth_t; /* one bit per lane */
#define STR_OPS_NAME bpfmap_str_ops_avx512
#define STR_ISA_NAME "avx512"
#define M_TOP (1ULL << 63)
#define M_ALL (~0ULL)

/* The empty asm keeps each block in a register (see str_avx2.c). */
STR_FN blk_t b_load(const unsigned char *p)
{
	blk_t v = _mm512_load_si512((const void *)p);

	__asm__("" : "+v"(v));
	return v;
}

STR_FN blk_t b_loadu(const unsigned char *p)
{
	return _mm512_loadu_si512((const void *)p);
}

/* Lanes are tracked one by one by Valgrind: nothing to do (see str_swar.c). */
STR_FN blk_t b_define_from(blk_t v, size_t k)
{
	(void)k;
	return v;
}

STR_FN blk_t b_set1(unsigned char c)
{
	return _mm512_set1_epi8((char)c);
}

STR_FN blk_t b_zero(void)
{
	return _mm512_setzero_si512();
}

STR_FN truth_t b_eq(blk_t a, blk_t b)
{
	return _mm512_cmpeq_epi8_mask(a, b);
}

STR_FN truth_t b_or(truth_t a, truth_t b)
{
	return a | b;
}

STR_FN blk_t b_fold(blk_t v)
{
	__mmask64 ascii = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('A')),
						 _mm512_set1_epi8(26));
	__mmask64 latin = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8((char)0xc0)),
						 _mm512_set1_epi8(31)) &
			  _mm512_cmpneq_epi8_mask(v, _mm512_set1_epi8((char)0xd7));

	return _mm512_mask_add_epi8(v, ascii | latin, v, _mm512_set1_epi8(0x20));
}

/* Keys: a zero lane marks a stop; blocks join with an unsigned min. */
typedef blk_t skey_t;

STR_FN skey_t b_key_chr(blk_t v, blk_t vc)
{
	return _mm512_min_epu8(_mm512_xor_si512(v, vc), v);
}

STR_FN skey_t b_key_chr2(blk_t v, blk_t va, blk_t vb)
{
	return _mm512_min_epu8(_mm512_min_epu8(_mm512_xor_si512(v, va), _mm512_xor_si512(v, vb)),
			       v);
}

/* Zero where v == c. */
STR_FN skey_t b_key_eq(blk_t v, blk_t vc)
{
	return _mm512_xor_si512(v, vc);
}

STR_FN skey_t b_key_nul(blk_t v)
{
	return v;
}

/* a where a == b, else 0: zero exactly where a != b or a == 0. */
STR_FN skey_t b_key_cmp(blk_t a, blk_t b)
{
	return _mm512_maskz_mov_epi8(_mm512_cmpeq_epi8_mask(a, b), a);
}

STR_FN skey_t b_key_join(skey_t a, skey_t b)
{
	return _mm512_min_epu8(a, b);
}

/* Stops where both a and b stop (a zero lane only if both are zero). */
STR_FN skey_t b_key_both(skey_t a, skey_t b)
{
	return _mm512_or_si512(a, b);
}

STR_FN mask_t b_key_mask(skey_t k)
{
	return _mm512_testn_epi8_mask(k, k);
}

STR_FN mask_t b_mask(truth_t t)
{
	return t;
}

/*
 * A mask about to be combined with scalar masks: keep it in a general
 * register.  Left alone, the compiler moves the scalar masks into mask
 * registers instead (kmov from a general register), which puts a slow
 * transfer on the critical path of a short call.
 */
STR_FN mask_t m_gpr(mask_t m)
{
	__asm__("" : "+r"(m));
	return m;
}

STR_FN mask_t m_below(size_t k)
{
	return k >= 64 ? ~0ULL : (1ULL << k) - 1;
}

STR_FN unsigned m_first(mask_t m)
{
	return (unsigned)__builtin_ctzll(m);
}

STR_FN unsigned m_last(mask_t m)
{
	return 63u - (unsigned)__builtin_clzll(m);
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
	return _mm512_loadu_si512((const void *)addr);
}

STR_FN blk_t b_window_slow(blk_t lo, blk_t hi, size_t off)
{
	unsigned char buf[2 * BLK] __attribute__((aligned(BLK)));

	_mm512_store_si512((void *)buf, lo);
	_mm512_store_si512((void *)(buf + BLK), hi);
	return _mm512_loadu_si512((const void *)(buf + off));
}

/* Set membership by table, as in str_avx2.c, the rows repeated in each
 * 128-bit lane. */
#define STR_HAVE_LUT 1
typedef struct {
	__m512i lo, hi, bits;
} lut_t;

STR_FN lut_t lut_make(const uint64_t *rows)
{
	lut_t l;

	l.lo = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)rows[1], (long long)rows[0]));
	l.hi = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)rows[3], (long long)rows[2]));
	l.bits = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 1, 2, 4,
						      8, 16, 32, 64, (char)128));
	return l;
}

STR_FN truth_t b_member(blk_t v, const lut_t *l)
{
	blk_t rows = _mm512_or_si512(
		_mm512_shuffle_epi8(l->lo, v),
		_mm512_shuffle_epi8(l->hi, _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80))));
	blk_t nib = _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));

	return _mm512_test_epi8_mask(rows, _mm512_shuffle_epi8(l->bits, nib));
}

#include "strings/str_impl.h"

#endif
