/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The string kfunc family, written once for every block width.
 *
 * Included by str_swar.c, str_sse2.c, str_avx2.c and str_avx512.c after each
 * has defined its block vocabulary (below); produces the table STR_OPS_NAME.
 * The kernel's semantics live in the entry points at the end; the scans above
 * them return plain positions.  Each entry settles short inputs inline (a few
 * unaligned blocks, no stack frame) and tail-calls a noinline *_rest()
 * function for the long scan.
 *
 * Memory safety.  Scans read whole aligned blocks: an aligned block never
 * straddles a page, so a block holding one byte the kernel would read is safe
 * to load, and lanes outside the string are masked before they matter.  The
 * unrolled loops load four blocks that lie in one page before looking for the
 * terminator.  Unaligned loads are made only where they cannot leave the page
 * of a byte the kernel would read (same_page()): the heads of the entries, a
 * short needle, a candidate match, a comparison window known to hold no NUL.
 * None of this is visible to AddressSanitizer or ThreadSanitizer (STR_NOSAN).
 * Under Valgrind the dispatcher sets careful mode, which turns off the
 * unrolled loops and every unaligned load that could reach past a terminator,
 * leaving only aligned blocks that straddle the end of the string, which
 * --partial-loads-ok=yes accepts.
 *
 * The block vocabulary each includer defines:
 *   BLK            bytes per block (8, 16, 32, 64); blk_t the block, mask_t a lane mask
 *   STR_TARGET     function attribute enabling the instruction set
 *   STR_OPS_NAME, STR_ISA_NAME
 *   b_load(p), b_loadu(p)  aligned and unaligned loads; b_set1(c); b_zero()
 *   b_define_from(v, k)    v with lanes below k zeroed where Valgrind needs it
 *   truth_t, b_eq(a, b)  lanes where equal; b_or(t1, t2); b_mask(t) -> mask_t
 *   b_fold(v)      the kernel's tolower() on every lane
 *   m_below(k)     lanes [0, k); m_first(m),
 *                  m_last(m) lane numbers; m_shr1(m) lane k+1 -> lane k;
 *                  M_TOP the last lane; M_ALL every lane; m_gpr(m) a mask to be
 *                  combined with scalar masks
 *   skey_t, b_key_*()  "keys": block summaries that several blocks' worth can be
 *                  joined cheaply before one test: b_key_eq(v, vc) (v == c),
 *                  b_key_chr(v, vc) (v == c or 0), b_key_chr2(v, va, vb),
 *                  b_key_nul(v), b_key_cmp(a, b)
 *                  (a != b or a == 0), b_key_join(k1, k2) (either stops),
 *                  b_key_both(k1, k2) (both stop), b_key_mask(k) the
 *                  stop lanes
 *   b_window_fast(addr, lo, hi, off), b_window_slow(lo, hi, off): the BLK bytes
 *                  starting at lane off of block lo and running into block hi
 *                  (fast: addr is that window's address and may be loaded)
 *   optionally STR_HAVE_LUT with lut_t, lut_make(rows), b_member(v, lut).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <bpfmap.h>

typedef unsigned char uchar;

/*
 * The entries are short paths to an early answer, whose speed hung on where
 * the code before them happened to end (a few ns either way); each starts a
 * cache line instead.
 */
#define STR_ENTRY static __attribute__((aligned(64))) STR_TARGET STR_NOSAN
#define STR_NOINLINE static __attribute__((noinline)) STR_TARGET STR_NOSAN

#define STR_MIN(a, b) ((a) < (b) ? (a) : (b))

/* The aligned block holding p. */
STR_FN const uchar *blk_of(const void *p)
{
	return (const uchar *)((uintptr_t)p & ~(uintptr_t)(BLK - 1));
}

/* Pages are at least this large; a load inside one such unit stays in one page. */
#define STR_PAGE 4096

/* May n bytes be loaded from p, unaligned (not in careful mode)? */
STR_FN bool same_page(const void *p, size_t n)
{
	return !bpfmap_str_careful && ((uintptr_t)p & (STR_PAGE - 1)) <= STR_PAGE - n;
}

/*
 * How far (in bytes) groups of blocks may run from the block at p: to the end
 * of its page (a multiple of BLK), or nowhere in careful mode.
 */
STR_FN size_t group_run(const void *p)
{
	return bpfmap_str_careful ? 0 : STR_PAGE - ((uintptr_t)p & (STR_PAGE - 1));
}

/* The lanes of the block at offset x that hold offsets [from, end). */
STR_FN mask_t valid_lanes(size_t x, size_t from, size_t end)
{
	mask_t v = M_ALL & ~m_below(from > x ? from - x : 0);

	return x + BLK > end ? v & m_below(end - x) : v;
}

/* ---------------------------------------------------------------------- */
/* Scans                                                                     */

/*
 * The aligned scan of t_chr(): from the block at offset x of p = blk_of(s)
 * (offsets below from are done), to end = limit + off.
 */
STR_FN size_t chr_scan(const uchar *s, uchar c, size_t limit, size_t x, const bool nul_only)
{
	const size_t off = (uintptr_t)s & (BLK - 1);
	const uchar *p = blk_of(s);
	const size_t end = limit + off; /* offsets from p */
	const blk_t vc = b_set1(c);
#define CHR_KEY(v) (nul_only ? b_key_nul(v) : b_key_chr(v, vc))
	mask_t m;

	/* A bounded string may end inside a block whose other bytes are
	 * nobody's, undefined to Valgrind: the first block, and every single
	 * block in careful mode (Valgrind's), drop their lanes at or past end
	 * before the test, not only after. */
	if (!x) {
		m = b_key_mask(CHR_KEY(b_define_from(b_load(p), off))) & ~m_below(off);
		if (end < BLK)
			m &= m_below(end);
		if (m)
			goto found;
		x = BLK;
	}
	while (x < end) {
		/* Four blocks at a time up to the end of the page, then one. */
		const size_t gend = STR_MIN(end, x + group_run(p + x));

		if (x + 4 * BLK <= gend) {
			for (; x + 4 * BLK <= gend; x += 4 * BLK) {
				skey_t k0 = CHR_KEY(b_load(p + x));
				skey_t k1 = CHR_KEY(b_load(p + x + BLK));
				skey_t k2 = CHR_KEY(b_load(p + x + 2 * BLK));
				skey_t k3 = CHR_KEY(b_load(p + x + 3 * BLK));

				if (!b_key_mask(b_key_join(b_key_join(k0, k1), b_key_join(k2, k3))))
					continue;
				if ((m = b_key_mask(k0)))
					goto found;
				x += BLK;
				if ((m = b_key_mask(k1)))
					goto found;
				x += BLK;
				if ((m = b_key_mask(k2)))
					goto found;
				x += BLK;
				m = b_key_mask(k3);
				goto found;
			}
			if (x >= end)
				break;
		}
		m = b_key_mask(CHR_KEY(b_load(p + x)));
		if (bpfmap_str_careful)
			m &= m_below(end - x);
		if (m)
			goto found;
		x += BLK;
	}
	return limit;
found:
	x = x + m_first(m) - off;
	return x < limit ? x : limit;
#undef CHR_KEY
}

STR_NOINLINE size_t chr_scan_nul(const uchar *s, size_t limit, size_t x)
{
	return chr_scan(s, 0, limit, x, true);
}

STR_NOINLINE size_t chr_scan_c(const uchar *s, uchar c, size_t limit, size_t x)
{
	return chr_scan(s, c, limit, x, false);
}

/*
 * Index of the first byte of s[0, limit) that is c or 0 (only 0 if nul_only);
 * limit if none.  limit == 0 reads nothing.  The first BLK bytes are one
 * unaligned load where that stays in the page; the rest is chr_scan().
 */
STR_FN size_t t_chr(const uchar *s, uchar c, size_t limit, const bool nul_only)
{
	size_t x = 0;

	if (!limit)
		return 0;
	if (same_page(s, BLK)) {
		blk_t v = b_loadu(s);
		mask_t m = b_key_mask(nul_only ? b_key_nul(v) : b_key_chr(v, b_set1(c)));

		if (m) {
			x = m_first(m);
			return x < limit ? x : limit;
		}
		if (limit <= BLK)
			return limit;
		x = BLK; /* the aligned block holding s + BLK */
	}
	return nul_only ? chr_scan_nul(s, limit, x) : chr_scan_c(s, c, limit, x);
}

/*
 * Index of the first NUL of s[0, limit) (limit if none); *last receives the
 * index of the last c before it (SIZE_MAX if none).  c != 0, limit > 0.
 */
STR_FN size_t t_rchr(const uchar *s, uchar c, size_t limit, size_t *last)
{
	const size_t off = (uintptr_t)s & (BLK - 1);
	const uchar *p = blk_of(s);
	const size_t end = limit + off;
	const blk_t vc = b_set1(c);
	size_t x = 0, last_x = 0;
	mask_t last_m = 0;

	for (;;) {
		blk_t v = x ? b_load(p + x) : b_define_from(b_load(p), off);
		mask_t valid = valid_lanes(x, off, end);
		mask_t mz = b_key_mask(b_key_nul(v)) & valid;
		mask_t mc = b_mask(b_eq(v, vc)) & valid;

		if (mz)
			mc &= m_below(m_first(mz));
		if (mc) {
			last_x = x;
			last_m = mc;
		}
		if (mz) {
			*last = last_m ? last_x + m_last(last_m) - off : SIZE_MAX;
			return x + m_first(mz) - off;
		}
		x += BLK;
		if (x >= end) {
			*last = last_m ? last_x + m_last(last_m) - off : SIZE_MAX;
			return limit;
		}
		/* Four blocks at a time while none holds a NUL, remembering the
		 * last block that holds c. */
		const size_t gend = STR_MIN(end, x + group_run(p + x));

		for (; x + 4 * BLK <= gend; x += 4 * BLK) {
			blk_t v0 = b_load(p + x), v1 = b_load(p + x + BLK);
			blk_t v2 = b_load(p + x + 2 * BLK), v3 = b_load(p + x + 3 * BLK);

			if (b_key_mask(b_key_join(b_key_join(b_key_nul(v0), b_key_nul(v1)),
						  b_key_join(b_key_nul(v2), b_key_nul(v3)))))
				break;
			mask_t c3 = b_mask(b_eq(v3, vc)), c2 = b_mask(b_eq(v2, vc));
			mask_t c1 = b_mask(b_eq(v1, vc)), c0 = b_mask(b_eq(v0, vc));

			if (c0 | c1 | c2 | c3) {
				last_x = x + (c3 ? 3 * BLK : c2 ? 2 * BLK : c1 ? BLK : 0);
				last_m = c3 ? c3 : c2 ? c2 : c1 ? c1 : c0;
			}
		}
		if (x >= end) {
			*last = last_m ? last_x + m_last(last_m) - off : SIZE_MAX;
			return limit;
		}
	}
}

/*
 * The valid lanes that end a comparison: a != b (folded when fold), or
 * a == 0.  (Masking before testing keeps lanes past a bound, which may be
 * uninitialised memory, out of every branch.)
 */
STR_FN mask_t cmp_stop(blk_t va, blk_t vb, const bool fold, mask_t valid)
{
	mask_t m = b_key_mask(b_key_cmp(va, vb)) & valid;

	if (!fold || !m)
		return m;
	return b_key_mask(b_key_cmp(b_fold(va), b_fold(vb))) & valid;
}

/* Any stop among four block pairs (the unrolled loops' test). */
STR_FN bool cmp_stop4(blk_t a0, blk_t b0, blk_t a1, blk_t b1, blk_t a2, blk_t b2, blk_t a3,
		      blk_t b3, const bool fold)
{
	skey_t k = b_key_join(b_key_join(b_key_cmp(a0, b0), b_key_cmp(a1, b1)),
			     b_key_join(b_key_cmp(a2, b2), b_key_cmp(a3, b3)));

	if (!b_key_mask(k))
		return false;
	if (!fold)
		return true;
	k = b_key_join(b_key_join(b_key_cmp(b_fold(a0), b_fold(b0)),
				  b_key_cmp(b_fold(a1), b_fold(b1))),
		       b_key_join(b_key_cmp(b_fold(a2), b_fold(b2)),
				  b_key_cmp(b_fold(a3), b_fold(b3))));
	return b_key_mask(k) != 0;
}

/*
 * cmp_blocks(): the index of the first i < limit where a[i] != b[i]
 * (compared folded when fold) or a[i] == 0; limit if none (limit > 0).
 *
 * a is read in aligned blocks; b too when it has
 * the same alignment.  When it has not, b is still read in aligned blocks,
 * and each of its windows (the bytes facing one block of a) is loaded
 * unaligned only once the aligned blocks it straddles are known to hold no
 * NUL and the window ends within the bound; elsewhere the window is
 * assembled from the blocks.
 */
STR_FN size_t cmp_blocks(const uchar *a, const uchar *b, size_t limit, const bool fold)
{
	const size_t offa = (uintptr_t)a & (BLK - 1);
	const uchar *pa = blk_of(a);
	const size_t end = limit + offa;          /* offsets from pa */
	const uintptr_t wb = (uintptr_t)b - offa; /* b's window for pa's block */
	const size_t offb = wb & (BLK - 1);
	size_t x = 0;
	mask_t m;

	if (offb == 0) {
		const uchar *pb = (const uchar *)wb;

		m = cmp_stop(b_define_from(b_load(pa), offa), b_define_from(b_load(pb), offa), fold,
			     valid_lanes(0, offa, end));
		for (;;) {
			if (m)
				return x + m_first(m) - offa;
			x += BLK;
			if (x >= end)
				return limit;
			const size_t gend = STR_MIN(end, x + STR_MIN(group_run(pa + x), group_run(pb + x)));

			if (x + 4 * BLK <= gend) {
				for (; x + 4 * BLK <= gend; x += 4 * BLK) {
					const uchar *qa = pa + x, *qb = pb + x;

					if (!cmp_stop4(b_load(qa), b_load(qb), b_load(qa + BLK),
						       b_load(qb + BLK), b_load(qa + 2 * BLK),
						       b_load(qb + 2 * BLK), b_load(qa + 3 * BLK),
						       b_load(qb + 3 * BLK), fold))
						continue;
					/* The stop is in this group: find its block. */
					for (int k = 0; k < 4; k++, x += BLK) {
						m = cmp_stop(b_load(pa + x), b_load(pb + x), fold, M_ALL);
						if (m)
							return x + m_first(m) - offa;
					}
					x -= 4 * BLK;
				}
				if (x >= end)
					return limit;
			}
			m = cmp_stop(b_load(pa + x), b_load(pb + x), fold, valid_lanes(x, offa, end));
		}
	}

	/*
	 * b's window for pa + x straddles b's aligned blocks lo = lo0 + x and
	 * hi = lo + BLK.  cont: b's string runs on past lo, so hi may be read
	 * (if it starts before the bound).
	 */
	const uintptr_t lo0 = wb - offb;
	const uintptr_t bend = (uintptr_t)b + limit;
	blk_t lo, hi;
	bool cont;

	if (lo0 + BLK <= (uintptr_t)b) {
		lo = b_zero(); /* wholly before b: only masked lanes come from it */
		cont = true;
	} else {
		lo = b_define_from(b_load((const uchar *)lo0), (uintptr_t)b - lo0);
		cont = !(b_key_mask(b_key_nul(lo)) & ~m_below((uintptr_t)b - lo0));
	}
	for (;;) {
		const uintptr_t hi_addr = lo0 + x + BLK;
		blk_t w;

		if (cont && hi_addr < bend) {
			hi = b_load((const uchar *)hi_addr);
			if (hi_addr < (uintptr_t)b) /* the first window, lo wholly before b */
				hi = b_define_from(hi, (uintptr_t)b - hi_addr);
			mask_t hz = b_key_mask(b_key_nul(hi));

			/* Unaligned only if the window starts at or after b, holds
			 * no NUL of b and ends within the bound. */
			if ((x || !offa) && !(hz & m_below(offb)) && wb + x + BLK <= bend)
				w = b_window_fast(wb + x, lo, hi, offb);
			else
				w = b_window_slow(lo, hi, offb);
			cont = !(hz & ~m_below(offb));
		} else {
			/* The window runs past b's NUL or the bound: a stop or
			 * the mask below ends the comparison in it. */
			hi = b_zero();
			w = b_window_slow(lo, hi, offb);
			cont = false;
		}
		if (x)
			m = cmp_stop(b_load(pa + x), w, fold, valid_lanes(x, offa, end));
		else
			m = cmp_stop(b_define_from(b_load(pa), offa), b_define_from(w, offa), fold,
				     valid_lanes(0, offa, end));
		if (m)
			return x + m_first(m) - offa;
		x += BLK;
		if (x >= end)
			return limit;
		lo = hi;
		/*
		 * Four windows at a time, loaded unaligned, while all of them and
		 * the four blocks of a lie in one page each: b's string reaches the
		 * first window byte, so its page may be read.  (Careful mode has
		 * no groups.)  The windows end at or before b + limit.
		 */
		const size_t gend = STR_MIN(end, x + STR_MIN(group_run(pa + x),
							 group_run((const void *)(wb + x))));

		if (x + 4 * BLK <= gend) {
			for (; x + 4 * BLK <= gend; x += 4 * BLK) {
				const uchar *qa = pa + x, *qw = (const uchar *)(wb + x);
				blk_t a0 = b_load(qa), a1 = b_load(qa + BLK);
				blk_t a2 = b_load(qa + 2 * BLK), a3 = b_load(qa + 3 * BLK);
				blk_t w0 = b_loadu(qw), w1 = b_loadu(qw + BLK);
				blk_t w2 = b_loadu(qw + 2 * BLK), w3 = b_loadu(qw + 3 * BLK);

				if (!cmp_stop4(a0, w0, a1, w1, a2, w2, a3, w3, fold))
					continue;
				/* The stop is in this group: find its block. */
				if ((m = cmp_stop(a0, w0, fold, M_ALL)))
					return x + m_first(m) - offa;
				if ((m = cmp_stop(a1, w1, fold, M_ALL)))
					return x + BLK + m_first(m) - offa;
				if ((m = cmp_stop(a2, w2, fold, M_ALL)))
					return x + 2 * BLK + m_first(m) - offa;
				m = cmp_stop(a3, w3, fold, M_ALL);
				return x + 3 * BLK + m_first(m) - offa;
			}
			if (x >= end)
				return limit;
			/* Back to block-by-block: b's block holding the next window. */
			lo = b_load((const uchar *)(lo0 + x));
			cont = !(b_key_mask(b_key_nul(lo)) & ~m_below(offb));
		}
	}
}

STR_NOINLINE size_t cmp_blocks_raw(const uchar *a, const uchar *b, size_t limit)
{
	return cmp_blocks(a, b, limit, false);
}

STR_NOINLINE size_t cmp_blocks_fold(const uchar *a, const uchar *b, size_t limit)
{
	return cmp_blocks(a, b, limit, true);
}

/*
 * Index of the first i < limit where a[i] != b[i] (compared folded when
 * fold) or a[i] == 0; limit if none.  The first blocks are unaligned loads of
 * both strings while those stay in their pages (each starts at a byte both
 * strings are known to reach); the rest is cmp_blocks().
 */
STR_FN size_t t_cmp(const uchar *a, const uchar *b, size_t limit, const bool fold)
{
	size_t i = 0;

	if (!limit)
		return 0;
	while (same_page(a + i, BLK) && same_page(b + i, BLK)) {
		mask_t m = cmp_stop(b_loadu(a + i), b_loadu(b + i), fold,
				    limit - i < BLK ? m_below(limit - i) : M_ALL);

		if (m)
			return i + m_first(m);
		i += BLK;
		if (i >= limit)
			return limit;
		if (i == 2 * BLK)
			break; /* longer strings: the aligned loops are faster */
	}
	return i + (fold ? cmp_blocks_fold(a + i, b + i, limit - i)
			 : cmp_blocks_raw(a + i, b + i, limit - i));
}

/* ---------------------------------------------------------------------- */
/* Character sets (strspn, strcspn)                                          */

#define SET_CHAIN 8   /* sets of up to this many bytes: compare with each */
#define HEAD_CHAIN 16 /* the same in the first-block head (no table to build) */

/*
 * A set for strspn (stop at bytes outside it: invert) or strcspn (stop at
 * bytes in it, and at the NUL).  Small sets are a chain of compares with
 * the set string's bytes (repeats are harmless); larger ones a 256-bit
 * two-nibble table (AVX2) or a byte table.
 */
struct set {
	bool invert;
	size_t nch;             /* chain length, 0 for a table */
	const uchar *chain;     /* nch bytes (the NUL among them for strcspn) */
	uint64_t lut[4];        /* lo rows 0-7, 8-15, hi rows 0-7, 8-15 */
	uchar stop[256];        /* byte table: 1 = stop here */
};

/* Table forms, built from the len bytes of chars. */
STR_FN void set_build_table(struct set *st, const uchar *chars, size_t len)
{
	st->nch = 0;
#ifdef STR_HAVE_LUT
	uint64_t w0 = 0, w1 = 0, w2 = 0, w3 = 0;

	/* Bit (b >> 4 & 7) of row (b & 15) of table (b >> 7), in four
	 * independent registers (a word array would chain every update
	 * through store forwarding). */
	for (size_t i = 0; i < len; i++) {
		const unsigned b = chars[i];
		const uint64_t bit = (uint64_t)1 << ((b >> 4 & 7) + 8 * (b & 7));

		w0 |= (b & 0x88) == 0x00 ? bit : 0;
		w1 |= (b & 0x88) == 0x08 ? bit : 0;
		w2 |= (b & 0x88) == 0x80 ? bit : 0;
		w3 |= (b & 0x88) == 0x88 ? bit : 0;
	}
	if (!st->invert)
		w0 |= 1; /* the NUL */
	else
		w0 &= ~(uint64_t)1; /* a set byte turned NUL meanwhile: still a stop */
	st->lut[0] = w0;
	st->lut[1] = w1;
	st->lut[2] = w2;
	st->lut[3] = w3;
#else
	memset(st->stop, st->invert, sizeof(st->stop));
	for (size_t i = 0; i < len; i++)
		st->stop[chars[i]] = !st->invert;
	st->stop[0] = 1;
#endif
}

/*
 * set_span() for one block form: a chain of nch compares (a constant; the
 * chain is padded with its first byte), or the lookup table (nch == 0).
 * head_done: s's first BLK bytes lie in one page and hold no stop (the
 * caller's head looked).
 */
STR_FN size_t set_span_blk(const uchar *s, const struct set *st, const int nch, bool head_done)
{
	const size_t off = (uintptr_t)s & (BLK - 1);
	const uchar *p = blk_of(s);
	const size_t end = STR_MAX + off;
	const mask_t flip = st->invert ? M_ALL : 0;
	blk_t cv[SET_CHAIN];

	/* The set's bytes are read again here, after its length, and another
	 * thread may have changed them meanwhile: whatever they hold now, a
	 * NUL must stop the scan, or it would read past s's end.  So strcspn's
	 * chain ends with a NUL whatever the byte after the set holds now, and
	 * strspn's never holds one.  (The table forms are built that way:
	 * set_build_table.) */
#pragma GCC unroll 8
	for (int j = 0; j < nch; j++) {
		const size_t i = (size_t)j < st->nch ? (size_t)j : 0;
		uchar c = st->chain[i];

		if (!st->invert && i == st->nch - 1)
			c = 0;
		else if (st->invert && !c)
			c = 1;
		cv[j] = b_set1(c);
	}
#ifdef STR_HAVE_LUT
	lut_t lut;

	if (!nch)
		lut = lut_make(st->lut);
#define SET_LUT(v) b_member(v, &lut)
#else
#define SET_LUT(v) b_eq(v, v)
#endif
#define SET_STOP(v)                                                                    \
	({                                                                             \
		blk_t v_ = (v);                                                        \
		mask_t mm_;                                                            \
		if (nch) {                                                             \
			skey_t k_ = b_key_eq(v_, cv[0]);                               \
			_Pragma("GCC unroll 8")                                        \
			for (int j_ = 1; j_ < nch; j_++)                               \
				k_ = b_key_join(k_, b_key_eq(v_, cv[j_]));             \
			mm_ = b_key_mask(k_);                                          \
		} else {                                                               \
			mm_ = b_mask(SET_LUT(v_));                                     \
		}                                                                      \
		mm_ ^ flip;                                                            \
	})
	size_t x = 0;
	mask_t m;

	if (head_done) {
		m = 0;
	} else if (same_page(s, BLK)) {
		m = SET_STOP(b_loadu(s));
		if (m)
			return m_first(m);
	} else {
		m = SET_STOP(b_define_from(b_load(p), off)) & ~m_below(off);
	}
	while (!m) {
		x += BLK;
		while (x + 2 * BLK <= end && same_page(p + x, 2 * BLK)) {
			mask_t m0 = SET_STOP(b_load(p + x));
			mask_t m1 = SET_STOP(b_load(p + x + BLK));

			if (m0 | m1) {
				if (!m0) {
					x += BLK;
					m0 = m1;
				}
				m = m0;
				goto found;
			}
			x += 2 * BLK;
		}
		if (x >= end)
			return STR_MAX;
		m = SET_STOP(b_load(p + x));
		/* The found: clamp gives the same answer, but Valgrind wants no
		 * branch on the lanes past the reach (chr_scan's mask). */
		if (bpfmap_str_careful)
			m &= m_below(end - x);
	}
found:
	x = x + m_first(m) - off;
	return x < STR_MAX ? x : STR_MAX;
#undef SET_STOP
#undef SET_LUT
}

/* Index of the first byte of s[0, STR_MAX) at which the set says stop. */
STR_FN size_t set_span(const uchar *s, const struct set *st, bool head_done)
{
	if (st->nch > 4)
		return set_span_blk(s, st, SET_CHAIN, head_done);
	if (st->nch > 2)
		return set_span_blk(s, st, 4, head_done);
	if (st->nch)
		return set_span_blk(s, st, 2, head_done);
#ifdef STR_HAVE_LUT
	return set_span_blk(s, st, 0, head_done);
#else
	(void)head_done;
	/* Byte by byte: reads nothing past the stop. */
	for (size_t i = 0; i + 4 <= STR_MAX; i += 4) {
		if (st->stop[s[i]])
			return i;
		if (st->stop[s[i + 1]])
			return i + 1;
		if (st->stop[s[i + 2]])
			return i + 2;
		if (st->stop[s[i + 3]])
			return i + 3;
	}
	return STR_MAX;
#endif
}

/*
 * strspn (reject false) and strcspn (reject true) with the kernel's codes.
 * The set string is read once for its length (it is what the kernel would
 * read in full for a byte missing from it).  head_n: SIZE_MAX, or the set
 * string's length when span_impl()'s head found it and looked at s's first
 * block without a stop.
 */
STR_FN int span_all(const uchar *s, const uchar *chars, const bool reject, size_t head_n)
{
	size_t n;

	if (head_n != SIZE_MAX) {
		n = head_n;
	} else if (same_page(chars, BLK)) {
		mask_t z = b_key_mask(b_key_nul(b_loadu(chars)));

		n = z ? m_first(z) : t_chr(chars, 0, STR_MAX, true);
	} else {
		n = t_chr(chars, 0, STR_MAX, true);
	}
	const bool too_long = n == STR_MAX;

	if (reject && too_long) {
		/* The kernel scans the set string for s[0] and gives up if it
		 * is not there: only an empty s or s[0] in the set get an answer. */
		const uchar c = s[0];

		if (!c)
			return 0;
		return t_chr(chars, c, STR_MAX, false) < STR_MAX ? 0 : -E2BIG;
	}
	if (!reject && !n)
		return 0; /* empty accept: every byte, the NUL too, ends the span */

	struct set st;
	/* The chain: the set's bytes and, for strcspn, a NUL after them. */
	const size_t nch = n + reject;

	st.invert = !reject;
	st.lut[0] = st.lut[1] = st.lut[2] = st.lut[3] = 0;
	if (nch <= SET_CHAIN) {
		st.nch = nch;
		st.chain = chars;
	} else {
		set_build_table(&st, chars, n);
	}
	const size_t i = set_span(s, &st, head_n != SIZE_MAX);

	if (i == STR_MAX)
		return -E2BIG;
	/* strspn stopped at a byte outside the set: the kernel scans the
	 * whole set string for it first, and fails if that has no NUL. */
	if (!reject && s[i] && too_long)
		return -E2BIG;
	return (int)i;
}

STR_NOINLINE int span_rest_accept(const uchar *s, const uchar *chars, size_t head_n)
{
	return span_all(s, chars, false, head_n);
}

STR_NOINLINE int span_rest_reject(const uchar *s, const uchar *chars, size_t head_n)
{
	return span_all(s, chars, true, head_n);
}

/*
 * The span entries: a set string shorter than a block, and an answer within
 * the first block of s, are settled here by compares with each set byte;
 * anything else is span_all() as a tail call (told what the head saw).
 */
STR_FN int span_impl(const uchar *s, const uchar *chars, const bool reject)
{
	if (same_page(chars, BLK) && same_page(s, BLK)) {
		mask_t z = b_key_mask(b_key_nul(b_loadu(chars)));
		const size_t nch = z ? m_first(z) + reject : SIZE_MAX;

		if (nch <= HEAD_CHAIN) {
			if (!nch)
				return 0; /* empty accept */
			/* The set's bytes are read again, and s's NUL must
			 * stop whatever they hold now (set_span_blk): strcspn
			 * compares with the NUL itself, not with the byte after
			 * the set, and strspn takes no NUL into its set. */
			blk_t v = b_loadu(s);
			skey_t k = reject ? b_key_nul(v)
					  : b_key_eq(v, b_set1(chars[0] ? chars[0] : 1));

			for (size_t j = !reject; j < nch - reject; j++) {
				const uchar c = chars[j];

				k = b_key_join(k, b_key_eq(v, b_set1(reject || c ? c : 1)));
			}
			mask_t stop = b_key_mask(k) ^ (reject ? 0 : M_ALL);

			if (stop)
				return (int)m_first(stop);
			/* No stop in s's first block: the rest need not look again. */
			const size_t n = nch - reject;

			return reject ? span_rest_reject(s, chars, n) : span_rest_accept(s, chars, n);
		}
	}
	return reject ? span_rest_reject(s, chars, SIZE_MAX) : span_rest_accept(s, chars, SIZE_MAX);
}

/* ---------------------------------------------------------------------- */
/* Substring search                                                          */

/* The other byte the kernel's tolower() maps to f (f itself if none). */
STR_FN uchar upper_of(uchar f)
{
	if ((f >= 'a' && f <= 'z') || (f >= 0xE0 && f <= 0xFE && f != 0xF7))
		return (uchar)(f - 0x20);
	return f;
}

/* The needle, prepared once per call. */
struct needle {
	const uchar *p;
	size_t n;            /* its length, STR_MAX if it has no NUL that early */
	bool have_v;         /* v holds it (n < BLK; folded for a folding search) */
	bool two;            /* n >= 2: candidates are filtered on two bytes */
	blk_t v;
	blk_t a0, b0, a1, b1; /* its first and second byte, both cases */
	size_t fo;           /* the bulk filter's second byte: needle[fo] */
	blk_t af, bf;        /* that byte, both cases */
	size_t work;         /* blocks compared by t_cmp() so far (see STR_LIN) */
};

/* The bulk filter's second byte is needle[min(n - 1, STR_FO_MAX)]. */
#define STR_FO_MAX 64

#define STR_CONT INT_MIN /* strstr_block(): no answer in this block (no result is this) */

/*
 * Trying each candidate costs up to the needle's length, quadratic in all.
 * Once the blocks compared exceed STR_LIN_RATE per position passed, plus
 * twice the needle's blocks and STR_LIN_SLACK, the search goes on in linear
 * time (bpfmap_str_linear()) from the next position, and its answer is the
 * check's: the whole stays linear, and needles that do not make the scans
 * work hard never get there.  Counted in blocks, as a block costs about
 * what the linear search spends on a byte, and only where a check may cost
 * more than one block (count: see strstr_rest_raw()).
 */
#define STR_LIN_RATE 4
#define STR_LIN_SLACK 1024

/*
 * The kernel's check of the needle at position i of s: the answer, or
 * STR_CONT if it goes on to the next position.
 */
STR_FN int strstr_check(struct needle *nd, const uchar *s, size_t len, size_t i,
			const bool fold, const bool count)
{
	const size_t cl = STR_MIN(len - i, nd->n);
	size_t k;

	if (nd->have_v && same_page(s + i, BLK)) {
		blk_t h = b_loadu(s + i);
		mask_t st = m_gpr(b_key_mask(b_key_cmp(fold ? b_fold(h) : h, nd->v))) & m_below(cl);

		k = st ? m_first(st) : cl;
		STR_WORK(1);
	} else {
		k = t_cmp(s + i, nd->p, cl, fold);
		STR_WORK(k / BLK + 1);
		if (count) {
			nd->work += k / BLK + 1;
			if (k < cl && s[i + k] &&
			    __builtin_expect(nd->work > STR_LIN_RATE * i + 2 * nd->n / BLK +
								STR_LIN_SLACK,
					     0))
				return bpfmap_str_linear(s, nd->p, len, i + 1, fold);
		}
	}
	if (k == nd->n)
		return nd->n == STR_MAX ? -E2BIG : (int)i;
	if (k == cl || !s[i + k])
		return -ENOENT;
	return STR_CONT;
}

/*
 * The candidates of one block v of the haystack s: lane k is position
 * base + k (mod 2^64), valid the lanes to consider, lim the end of the
 * positions scanned.  Returns the answer, or STR_CONT.
 */
STR_FN int strstr_block(struct needle *nd, const uchar *s, size_t len, size_t lim,
			blk_t v, size_t base, mask_t valid, const bool fold, const bool count)
{
	mask_t z = m_gpr(b_key_mask(b_key_nul(v))) & valid;
	mask_t cand = valid & m_gpr(b_mask(fold ? b_or(b_eq(v, nd->a0), b_eq(v, nd->b0))
						 : b_eq(v, nd->a0)));

	if (nd->two) {
		/* The second byte of the last lane, and of the last position
		 * scanned, lies outside: let the check decide. */
		mask_t pair = fold ? b_mask(b_or(b_eq(v, nd->a1), b_eq(v, nd->b1)))
				   : b_mask(b_eq(v, nd->a1));

		pair = m_shr1(pair) | M_TOP;
		if (lim - 1 - base < BLK)
			pair |= m_below(lim - base) & ~m_below(lim - 1 - base);
		cand &= pair;
	}
	if (z)
		cand &= m_below(m_first(z));
	while (cand) {
		const int r = strstr_check(nd, s, len, base + m_first(cand), fold, count);

		if (r != STR_CONT)
			return r;
		cand &= cand - 1;
	}
	return z ? -ENOENT : STR_CONT;
}

/*
 * The bulk filter's key for the block v at position i and the block w at
 * position i + fo: lanes where both the first byte and needle[fo] match
 * (both cases when folding).  No NUL test.
 */
STR_FN skey_t pair_key_of(blk_t v, blk_t a0, blk_t b0, blk_t w, blk_t af, blk_t bf,
			  const bool fold)
{
	skey_t kf = fold ? b_key_join(b_key_eq(v, a0), b_key_eq(v, b0)) : b_key_eq(v, a0);
	skey_t kl = fold ? b_key_join(b_key_eq(w, af), b_key_eq(w, bf)) : b_key_eq(w, af);

	return b_key_both(kf, kl);
}

STR_FN skey_t pair_key(const struct needle *nd, blk_t v, blk_t w, const bool fold)
{
	return pair_key_of(v, nd->a0, nd->b0, w, nd->af, nd->bf, fold);
}

/* pair_key() or a NUL, for the aligned block at q. */
STR_FN skey_t pair_nul_key(const struct needle *nd, const uchar *q, const bool fold)
{
	const blk_t v = b_load(q);

	return b_key_join(pair_key(nd, v, b_loadu(q + nd->fo), fold), b_key_nul(v));
}

/*
 * A block of the bulk loop with a stop: v at position base (its lanes all
 * before the bound, the needle's window of each within the page, see
 * t_strnstr()), valid the lanes not yet done.  Candidates are the positions
 * whose first byte and byte fo match; the others cannot give an answer.
 */
STR_FN int strstr_pair_block(struct needle *nd, const uchar *s, size_t len,
			     const uchar *q, size_t base, mask_t valid, const bool fold,
			     const bool count)
{
	const blk_t v = b_load(q);
	mask_t z = m_gpr(b_key_mask(b_key_nul(v))) & valid;
	mask_t cand = m_gpr(b_key_mask(pair_key(nd, v, b_loadu(q + nd->fo), fold))) & valid;

	if (z)
		cand &= m_below(m_first(z));
	while (cand) {
		const int r = strstr_check(nd, s, len, base + m_first(cand), fold, count);

		if (r != STR_CONT)
			return r;
		cand &= cand - 1;
	}
	return z ? -ENOENT : STR_CONT;
}
/*
 * The blocks [x, x + nb * BLK) of the bulk loop (offsets from p, see
 * t_strnstr()), one of which has a stop.
 */
STR_FN int strstr_pair_blocks(struct needle *nd, const uchar *s, size_t len,
			      const uchar *p, size_t x, size_t nb, size_t off, size_t from,
			      size_t end, const bool fold, const bool count)
{
	for (size_t j = 0; j < nb; j++, x += BLK) {
		const int r = strstr_pair_block(nd, s, len, p + x, x - off,
						valid_lanes(x, from, end), fold, count);

		if (r != STR_CONT)
			return r;
	}
	return STR_CONT;
}

/*
 * The kernel's strnstr: the first i < min(len, STR_MAX) where the needle
 * either occurs whole within the first len bytes of s (-> i; -E2BIG for a
 * needle without a NUL in STR_MAX bytes), or runs into the end of s or the
 * bound while still matching (-> -ENOENT).  Nothing found: -E2BIG if the scan
 * covered STR_MAX positions, else -ENOENT.  An empty needle matches at 0.
 * The positions below start (0, or a block boundary < lim that
 * strstr_impl() reached) are known to hold no answer and are skipped; nk is
 * the needle's length when strstr_impl() found it (else 0).
 *
 * Candidates are the positions whose first two bytes match the needle's
 * (the last lane of a block, and the last position, by their first byte
 * only); each is checked with one unaligned block when the needle is shorter
 * than a block and the load stays in its page, else with t_cmp(), and the
 * check also tells the kernel's -ENOENT cases apart.
 *
 * The bulk of the scan filters on the first byte and on needle[fo]
 * (fo = min(n - 1, STR_FO_MAX)), loaded unaligned fo bytes further on, and
 * skips blocks with neither such a pair nor a NUL four at a time.  Dropping
 * a position i whose byte i + fo differs is exact: the kernel's check stops
 * at or before fo on a mismatch (goes on) or on a NUL, which the scan then
 * finds first and answers -ENOENT alike, unless the NUL or byte i + fo lies
 * past the positions scanned.  With len < STR_MAX that is harmless: every
 * position from there on runs into the bound and the answer is -ENOENT
 * whatever.  With lim == STR_MAX (-E2BIG at the end), the bulk loop stops
 * fo bytes early (fend) and the last positions take the two-byte path.  The
 * loads at +fo stay in the page of their block (pend); careful mode has no
 * bulk loop.
 */
STR_FN int t_strnstr(const uchar *s, const uchar *needle, size_t len, size_t start, size_t nk,
		     const bool fold, const bool count)
{
	struct needle nd = {.p = needle, .have_v = false, .v = b_zero(), .work = 0};

	if (nk) {
		/* The caller found the needle's length, nk < BLK, in its page. */
		nd.v = b_loadu(needle);
		nd.have_v = true;
		nd.n = nk;
	} else if (same_page(needle, BLK)) {
		nd.v = b_loadu(needle);
		mask_t z = b_key_mask(b_key_nul(nd.v));

		nd.have_v = z != 0;
		nd.n = z ? m_first(z) : t_chr(needle, 0, STR_MAX, true);
	} else {
		nd.n = t_chr(needle, 0, STR_MAX, true);
	}
	if (!nd.n)
		return 0;
	const size_t lim = STR_MIN(len, (size_t)STR_MAX);

	if (!lim)
		return -ENOENT;
	if (fold)
		nd.v = b_fold(nd.v);
	nd.two = nd.n >= 2;
	const uchar f0 = fold ? bpfmap_str_fold[needle[0]] : needle[0];
	const uchar f1 = nd.two ? (fold ? bpfmap_str_fold[needle[1]] : needle[1]) : 0;

	nd.a0 = b_set1(f0);
	nd.b0 = b_set1(fold ? upper_of(f0) : f0);
	nd.a1 = b_set1(f1);
	nd.b1 = b_set1(fold ? upper_of(f1) : f1);
	nd.fo = STR_MIN(nd.n - 1, (size_t)STR_FO_MAX);
	const uchar ff = fold ? bpfmap_str_fold[needle[nd.fo]] : needle[nd.fo];

	nd.af = b_set1(ff);
	nd.bf = b_set1(fold ? upper_of(ff) : ff);

	const size_t off = (uintptr_t)s & (BLK - 1);
	const uchar *p = blk_of(s);
	const size_t end = lim + off; /* offsets from p */
	/* The bulk loop's blocks end by here (see above). */
	const size_t fend = lim < STR_MAX ? end : end > nd.fo ? end - nd.fo : 0;
	/* ... and its single blocks may run past a bound below STR_MAX. */
	const size_t send = lim < STR_MAX ? end + BLK - 1 : fend;
	size_t x = 0, from = off;     /* offsets below from are done */
	int r;
#define FIRST_KEY(v) (fold ? b_key_chr2(v, nd.a0, nd.b0) : b_key_chr(v, nd.a0))
#define PAIR_KEY(q) pair_nul_key(&nd, q, fold)

	if (start) {
		/* The caller ruled out the positions below start (< lim). */
		from = off + start;
		x = from & ~(size_t)(BLK - 1);
		goto scan;
	} else if (same_page(s, BLK)) {
		r = strstr_block(&nd, s, len, lim, b_loadu(s), 0, lim < BLK ? m_below(lim) : M_ALL,
				 fold, count);
		if (r != STR_CONT)
			return r;
		if (lim <= BLK)
			return -ENOENT;
		from = off + BLK;
		x = BLK;
	}
	for (;;) {
		blk_t v = x ? b_load(p + x) : b_define_from(b_load(p), off);

		r = strstr_block(&nd, s, len, lim, v, x - off, valid_lanes(x, from, end), fold,
				 count);
		if (r != STR_CONT)
			return r;
		/* On to the next block holding the first byte or a NUL. */
		x += BLK;
scan:
		for (; x < end; x += BLK) {
			const size_t run = group_run(p + x);
			const size_t gend = STR_MIN(end, x + run);
			/* The bulk loop: blocks whose bytes at +fo lie in the page too. */
			const size_t pg = run > nd.fo ? x + run - nd.fo : 0;
			const size_t pend = STR_MIN(fend, pg);

			for (; x + 4 * BLK <= pend; x += 4 * BLK) {
				const uchar *q = p + x;
				skey_t k0 = PAIR_KEY(q);
				skey_t k1 = PAIR_KEY(q + BLK);
				skey_t k2 = PAIR_KEY(q + 2 * BLK);
				skey_t k3 = PAIR_KEY(q + 3 * BLK);

				if (!b_key_mask(b_key_join(b_key_join(k0, k1), b_key_join(k2, k3))))
					continue;
				r = strstr_pair_blocks(&nd, s, len, p, x, 4, off, from, end, fold,
						       count);
				if (r != STR_CONT)
					return r;
			}
			for (; x + BLK <= STR_MIN(send, pg); x += BLK) {
				if (!b_key_mask(PAIR_KEY(p + x)))
					continue;
				r = strstr_pair_blocks(&nd, s, len, p, x, 1, off, from, end, fold,
						       count);
				if (r != STR_CONT)
					return r;
			}
			if (x >= end)
				break;

			if (x + 4 * BLK <= gend) {
				for (; x + 4 * BLK <= gend; x += 4 * BLK) {
					skey_t k0 = FIRST_KEY(b_load(p + x));
					skey_t k1 = FIRST_KEY(b_load(p + x + BLK));
					skey_t k2 = FIRST_KEY(b_load(p + x + 2 * BLK));
					skey_t k3 = FIRST_KEY(b_load(p + x + 3 * BLK));

					if (!b_key_mask(b_key_join(b_key_join(k0, k1), b_key_join(k2, k3))))
						continue;
					/* The first block of the group with a hit. */
					x += b_key_mask(k0)	 ? 0
					     : b_key_mask(k1) ? BLK
					     : b_key_mask(k2) ? 2 * BLK
							      : 3 * BLK;
					goto hit;
				}
				if (x >= end)
					break;
			}
			/* lanes at or past the bound dropped before the test, as
			 * in chr_scan */
			if (b_key_mask(FIRST_KEY(b_load(p + x))) & m_below(end - x))
				break;
		}
		if (x >= end)
			return lim == STR_MAX ? -E2BIG : -ENOENT;
hit:;
	}
#undef FIRST_KEY
#undef PAIR_KEY
}

/*
 * With nk (the needle shorter than a block, found in its page), candidate
 * checks are single block compares and cost nothing to count: those
 * searches keep the scans' code as it is without the hand-over.
 */
STR_NOINLINE int strstr_rest_raw_count(const uchar *s, const uchar *needle, size_t len,
				       size_t start)
{
	return t_strnstr(s, needle, len, start, 0, false, true);
}

STR_NOINLINE int strstr_rest_fold_count(const uchar *s, const uchar *needle, size_t len,
					size_t start)
{
	return t_strnstr(s, needle, len, start, 0, true, true);
}

STR_NOINLINE int strstr_rest_raw(const uchar *s, const uchar *needle, size_t len, size_t start,
				 size_t nk)
{
	if (!nk)
		return strstr_rest_raw_count(s, needle, len, start);
	return t_strnstr(s, needle, len, start, nk, false, false);
}

STR_NOINLINE int strstr_rest_fold(const uchar *s, const uchar *needle, size_t len,
				  size_t start, size_t nk)
{
	if (!nk)
		return strstr_rest_fold_count(s, needle, len, start);
	return t_strnstr(s, needle, len, start, nk, true, false);
}

/* strstr_short(): give up on the short path, t_strnstr() from position 0. */
#define STR_TAIL (INT_MIN + 1)

/* The candidates cand of a block of the short path (see strstr_short()). */
STR_FN int strstr_short_check(const uchar *s, size_t len, size_t lim, size_t n, blk_t nv,
			      size_t base, mask_t cand, mask_t zs, const bool fold)
{
	if (zs)
		cand &= m_below(m_first(zs));
	for (; cand; cand &= cand - 1) {
		const size_t i = base + m_first(cand);
		const size_t cl = STR_MIN(len - i, n);

		if (!same_page(s + i, BLK))
			return STR_TAIL;
		STR_WORK(1);
		blk_t h = b_loadu(s + i);
		mask_t st = m_gpr(b_key_mask(b_key_cmp(fold ? b_fold(h) : h, nv))) & m_below(cl);
		size_t k = st ? m_first(st) : cl;

		if (k == n)
			return (int)i;
		if (k == cl || !s[i + k])
			return -ENOENT;
	}
	if (zs || lim <= base + BLK)
		return -ENOENT;
	return STR_CONT;
}

/*
 * One block of the short path: the positions [base, base + BLK) of s (in
 * its page, base < lim), the needle nv of n < BLK bytes (folded when fold).
 * With second, candidates are filtered on the needle's second byte too
 * (n >= 2), except in the block's last lane: exact as in t_strnstr() with
 * fo = 1, these positions lying far below STR_MAX.  Returns the answer,
 * STR_CONT (none of these positions) or STR_TAIL.
 */
STR_FN int strstr_short(const uchar *s, size_t len, size_t lim, size_t n, blk_t nv,
			blk_t va, blk_t vb, blk_t la, blk_t lb, size_t base, const bool second,
			const bool fold)
{
	const blk_t v = b_loadu(s + base);
	const mask_t valid = lim - base < BLK ? m_below(lim - base) : M_ALL;
	const mask_t zs = m_gpr(b_key_mask(b_key_nul(v))) & valid;
	mask_t cand = m_gpr(b_mask(fold ? b_or(b_eq(v, va), b_eq(v, vb)) : b_eq(v, va))) & valid;

	if (second && n >= 2)
		cand &= m_shr1(m_gpr(b_mask(fold ? b_or(b_eq(v, la), b_eq(v, lb)) : b_eq(v, la)))) |
			M_TOP;
	return strstr_short_check(s, len, lim, n, nv, base, cand, zs, fold);
}

/*
 * strstr_short() with second when the byte after the block is in the page
 * too: the second bytes are loaded unaligned, which keeps the filter off the
 * path to an early answer.  (n >= 2.)
 */
STR_FN int strstr_short0(const uchar *s, size_t len, size_t lim, size_t n, blk_t nv,
			 blk_t va, blk_t vb, blk_t la, blk_t lb, size_t base, const bool fold)
{
	const blk_t v = b_loadu(s + base);
	const mask_t valid = lim - base < BLK ? m_below(lim - base) : M_ALL;
	const mask_t zs = m_gpr(b_key_mask(b_key_nul(v))) & valid;
	const mask_t cand =
		m_gpr(b_key_mask(pair_key_of(v, va, vb, b_loadu(s + base + 1), la, lb, fold))) &
		valid;

	return strstr_short_check(s, len, lim, n, nv, base, cand, zs, fold);
}

/* The needle's byte needle[k] folded when fold, as a block: both cases. */
#define STR_NEEDLE_BYTE(a, b, k)                                                       \
	const uchar a##_c = fold ? bpfmap_str_fold[needle[k]] : needle[k];             \
	const blk_t a = b_set1(a##_c), b = b_set1(fold ? upper_of(a##_c) : a##_c)

/*
 * The short path's blocks 1 to 3 (s, its first four blocks and the needle's
 * block in their pages, the needle n < BLK bytes, n >= 1, and position BLK
 * below the bound), or 1 to 7 when s's first eight blocks lie in its page
 * too, then t_strnstr() from where they left off.  Out of line, which keeps
 * the entries' path to an early answer short (no stack frame).  Called for
 * bounds up to 8 * BLK: over longer haystacks t_strnstr()'s set-up pays.
 */
STR_FN int strstr_more(const uchar *s, const uchar *needle, size_t len, const bool fold)
{
	blk_t nv = b_loadu(needle);
	const size_t n = m_first(b_key_mask(b_key_nul(nv)));
	const size_t lim = STR_MIN(len, (size_t)STR_MAX);
	STR_NEEDLE_BYTE(va, vb, 0);
	STR_NEEDLE_BYTE(la, lb, 1); /* needle[1] is its NUL when n == 1 (then unused) */

	const bool after = n >= 2 && same_page(s, 4 * BLK + 1);
	size_t stop = 4 * BLK;

	if (fold)
		nv = b_fold(nv);
	/* Each block gives its answer or STR_CONT; the one that reaches lim
	 * ends the search (strstr_short_check()).  Constant trip counts: the
	 * compiler unrolls both loops. */
	for (size_t base = BLK; base < 4 * BLK; base += BLK) {
		const int r = after ? strstr_short0(s, len, lim, n, nv, va, vb, la, lb, base, fold)
				    : strstr_short(s, len, lim, n, nv, va, vb, la, lb, base, true,
						   fold);

		if (r == STR_TAIL)
			return fold ? strstr_rest_fold(s, needle, len, 0, n)
				    : strstr_rest_raw(s, needle, len, 0, n);
		if (r != STR_CONT)
			return r;
	}
	if (n >= 2 && same_page(s, 8 * BLK + 1)) {
		for (size_t base = 4 * BLK; base < 8 * BLK; base += BLK) {
			const int r =
				strstr_short0(s, len, lim, n, nv, va, vb, la, lb, base, fold);

			if (r == STR_TAIL)
				return fold ? strstr_rest_fold(s, needle, len, 0, n)
					    : strstr_rest_raw(s, needle, len, 0, n);
			if (r != STR_CONT)
				return r;
		}
		stop = 8 * BLK;
	}
	/* The positions below stop (< lim) hold no answer. */
	return fold ? strstr_rest_fold(s, needle, len, stop, n)
		    : strstr_rest_raw(s, needle, len, stop, n);
}

STR_NOINLINE int strstr_more_raw(const uchar *s, const uchar *needle, size_t len)
{
	return strstr_more(s, needle, len, false);
}

STR_NOINLINE int strstr_more_fold(const uchar *s, const uchar *needle, size_t len)
{
	return strstr_more(s, needle, len, true);
}

#define STR_SHORT0(s, len, lim, n, nv, va, vb, la, lb, fold)                                  \
	((n) >= 2 && same_page(s, BLK + 1)                                                     \
		 ? strstr_short0(s, len, lim, n, nv, va, vb, la, lb, 0, fold)                 \
		 : strstr_short(s, len, lim, n, nv, va, vb, la, lb, 0, true, fold))

/*
 * The substring entries: a needle shorter than a block, matched (or ruled
 * out) within the first blocks of the haystack, is settled with unaligned
 * in-page loads, the first block here; anything else is t_strnstr() (from
 * where this left off) as a tail call.
 */
STR_FN int strstr_impl(const uchar *s, const uchar *needle, size_t len, const bool fold)
{
	size_t start = 0, nk = 0;

	if (same_page(needle, BLK) && same_page(s, BLK)) {
		blk_t nv = b_loadu(needle);
		mask_t z = b_key_mask(b_key_nul(nv));

		if (z) {
			const size_t n = m_first(z);
			const size_t lim = STR_MIN(len, (size_t)STR_MAX);

			if (!n)
				return 0;
			if (!lim)
				return -ENOENT;
			STR_NEEDLE_BYTE(va, vb, 0);
			STR_NEEDLE_BYTE(la, lb, 1); /* needle[1]: as in strstr_more() */

			if (fold)
				nv = b_fold(nv);
			const int r = STR_SHORT0(s, len, lim, n, nv, va, vb, la, lb, fold);

			if (r != STR_CONT) {
				if (r != STR_TAIL)
					return r;
			} else if (lim <= 8 * BLK && same_page(s, 4 * BLK)) {
				return fold ? strstr_more_fold(s, needle, len)
					    : strstr_more_raw(s, needle, len);
			} else {
				start = BLK; /* below lim */
			}
			nk = n;
		}
	}
	return fold ? strstr_rest_fold(s, needle, len, start, nk)
		    : strstr_rest_raw(s, needle, len, start, nk);
}
#undef STR_NEEDLE_BYTE
#undef STR_SHORT0

/* ---------------------------------------------------------------------- */
/* The fifteen functions: the kernel's argument checks and return codes.     */

#define U(p) ((const uchar *)(p))

/*
 * Heads of the scanning entries: the stop lanes of blocks 1-3 after s (block
 * 0 was tested alone), loaded unaligned as one group in s's page; returns
 * the index of the first stop, or SIZE_MAX.
 */
#define HEAD3(s, KEY)                                                                  \
	({                                                                             \
		skey_t k1_ = KEY(b_loadu((s) + BLK)), k2_ = KEY(b_loadu((s) + 2 * BLK)); \
		skey_t k3_ = KEY(b_loadu((s) + 3 * BLK));                              \
		mask_t m_;                                                             \
		size_t r_ = SIZE_MAX;                                                  \
		if (b_key_mask(b_key_join(b_key_join(k1_, k2_), k3_))) {               \
			if ((m_ = b_key_mask(k1_)))                                    \
				r_ = BLK + m_first(m_);                                \
			else if ((m_ = b_key_mask(k2_)))                               \
				r_ = 2 * BLK + m_first(m_);                            \
			else                                                           \
				r_ = 3 * BLK + m_first(b_key_mask(k3_));               \
		}                                                                      \
		r_;                                                                    \
	})

/* The kernel's result once the comparison stopped at i < lim. */
STR_FN int cmp_result(const uchar *s1, const uchar *s2, size_t i, const bool fold)
{
	uchar c1 = s1[i], c2 = s2[i];

	if (fold) {
		c1 = bpfmap_str_fold[c1];
		c2 = bpfmap_str_fold[c2];
	}
	if (c1 == c2)
		return 0;
	return c1 < c2 ? -1 : 1;
}

/* strcmp/strncasecmp from offset i on (tail-called by the entries). */
STR_FN int cmp_rest(const uchar *s1, const uchar *s2, size_t lim, size_t i, const bool fold)
{
	i += cmp_blocks(s1 + i, s2 + i, lim - i, fold);
	if (i == lim)
		return lim == STR_MAX ? -E2BIG : 0;
	return cmp_result(s1, s2, i, fold);
}

STR_NOINLINE int cmp_rest_raw(const uchar *s1, const uchar *s2, size_t lim, size_t i)
{
	return cmp_rest(s1, s2, lim, i, false);
}

STR_NOINLINE int cmp_rest_fold(const uchar *s1, const uchar *s2, size_t lim, size_t i)
{
	return cmp_rest(s1, s2, lim, i, true);
}

/*
 * The comparison entries: up to four unaligned blocks of both strings where
 * they stay in their pages, then cmp_rest() as a tail call, so this part
 * needs no stack frame.
 */
STR_FN int strncasecmp_impl(const char *s1, const char *s2, size_t len, const bool fold)
{
	if (!s1 || !s2)
		return -ERANGE;
	const uchar *a = U(s1), *b = U(s2);
	const size_t lim = STR_MIN(len, (size_t)STR_MAX);
	size_t i = 0;

	if (!lim)
		return 0;
	while (same_page(a + i, BLK) && same_page(b + i, BLK)) {
		mask_t m = cmp_stop(b_loadu(a + i), b_loadu(b + i), fold,
				    lim - i < BLK ? m_below(lim - i) : M_ALL);

		if (m)
			return cmp_result(a, b, i + m_first(m), fold);
		i += BLK;
		if (i >= lim)
			return lim == STR_MAX ? -E2BIG : 0;
		if (i == 4 * BLK)
			break;
	}
	return fold ? cmp_rest_fold(a, b, lim, i) : cmp_rest_raw(a, b, lim, i);
}

STR_ENTRY int f_strcmp(const char *s1, const char *s2)
{
	return strncasecmp_impl(s1, s2, STR_MAX, false);
}

STR_ENTRY int f_strcasecmp(const char *s1, const char *s2)
{
	return strncasecmp_impl(s1, s2, STR_MAX, true);
}

STR_ENTRY int f_strncasecmp(const char *s1, const char *s2, size_t len)
{
	return strncasecmp_impl(s1, s2, len, true);
}

/* The kernel's strnchr result for a scan that stopped at i (of lim). */
STR_FN int nchr_result(const uchar *s, size_t i, size_t lim, uchar c)
{
	if (i < lim)
		return s[i] == c ? (int)i : -ENOENT;
	return lim == STR_MAX ? -E2BIG : -ENOENT;
}

/* From the aligned block at offset x of blk_of(s) on (0: the start). */
STR_NOINLINE int nchr_rest(const uchar *s, size_t lim, uchar c, size_t x)
{
	return nchr_result(s, chr_scan_c(s, c, lim, x), lim, c);
}

STR_FN int strnchr_impl(const char *s, size_t count, char c)
{
	if (!s)
		return -ERANGE;
	const size_t lim = STR_MIN(count, (size_t)STR_MAX);

	if (!lim)
		return -ENOENT;
	if (!same_page(s, BLK))
		return nchr_rest(U(s), lim, (uchar)c, 0);
	/* The first block unaligned; the rest from the aligned block holding
	 * s + BLK, as a tail call. */
	const blk_t vc = b_set1((uchar)c);
	mask_t m = b_key_mask(b_key_chr(b_loadu(U(s)), vc));

	if (m)
		return nchr_result(U(s), STR_MIN((size_t)m_first(m), lim), lim, (uchar)c);
	if (lim <= BLK)
		return -ENOENT;
	if (!same_page(s, 4 * BLK))
		return nchr_rest(U(s), lim, (uchar)c, BLK);
#define NCHR_KEY(v) b_key_chr(v, vc)
	const size_t i = HEAD3(U(s), NCHR_KEY);
#undef NCHR_KEY

	if (i != SIZE_MAX)
		return nchr_result(U(s), STR_MIN(i, lim), lim, (uchar)c);
	if (lim <= 4 * BLK)
		return -ENOENT;
	return nchr_rest(U(s), lim, (uchar)c, 4 * BLK);
}

STR_ENTRY int f_strnchr(const char *s, size_t count, char c)
{
	return strnchr_impl(s, count, c);
}

STR_ENTRY int f_strchr(const char *s, char c)
{
	return strnchr_impl(s, STR_MAX, c);
}

STR_NOINLINE int chrnul_rest(const uchar *s, uchar c, size_t x)
{
	const size_t i = chr_scan_c(s, c, STR_MAX, x);

	return i < STR_MAX ? (int)i : -E2BIG;
}

STR_ENTRY int f_strchrnul(const char *s, char c)
{
	if (!s)
		return -ERANGE;
	if (!same_page(s, BLK))
		return chrnul_rest(U(s), (uchar)c, 0);
	const blk_t vc = b_set1((uchar)c);
	mask_t m = b_key_mask(b_key_chr(b_loadu(U(s)), vc));

	if (m)
		return (int)m_first(m);
	if (!same_page(s, 4 * BLK))
		return chrnul_rest(U(s), (uchar)c, BLK);
#define CHRNUL_KEY(v) b_key_chr(v, vc)
	const size_t i = HEAD3(U(s), CHRNUL_KEY);
#undef CHRNUL_KEY

	return i != SIZE_MAX ? (int)i : chrnul_rest(U(s), (uchar)c, 4 * BLK);
}

/* The kernel's strnlen result for a scan that stopped at i (of lim). */
STR_FN int nlen_result(size_t i, size_t lim)
{
	if (i < lim)
		return (int)i;
	return lim == STR_MAX ? -E2BIG : (int)lim;
}

/* From the aligned block at offset x of blk_of(s) on (0: the start). */
STR_NOINLINE int nlen_rest(const uchar *s, size_t lim, size_t x)
{
	return nlen_result(chr_scan_nul(s, lim, x), lim);
}

STR_FN int strnlen_impl(const char *s, size_t count)
{
	if (!s)
		return -ERANGE;
	const size_t lim = STR_MIN(count, (size_t)STR_MAX);

	if (!lim)
		return 0;
	if (!same_page(s, BLK))
		return nlen_rest(U(s), lim, 0);
	mask_t m = b_key_mask(b_key_nul(b_loadu(U(s))));

	if (m)
		return nlen_result(STR_MIN((size_t)m_first(m), lim), lim);
	if (lim <= BLK)
		return (int)lim;
	if (!same_page(s, 4 * BLK))
		return nlen_rest(U(s), lim, BLK);
	const size_t i = HEAD3(U(s), b_key_nul);

	if (i != SIZE_MAX)
		return nlen_result(STR_MIN(i, lim), lim);
	if (lim <= 4 * BLK)
		return (int)lim;
	return nlen_rest(U(s), lim, 4 * BLK);
}

STR_ENTRY int f_strnlen(const char *s, size_t count)
{
	return strnlen_impl(s, count);
}

STR_ENTRY int f_strlen(const char *s)
{
	return strnlen_impl(s, STR_MAX);
}

STR_NOINLINE int rchr_rest(const uchar *s, uchar c)
{
	size_t last;
	const size_t n = t_rchr(s, c, STR_MAX, &last);

	if (n == STR_MAX)
		return -E2BIG;
	return last == SIZE_MAX ? -ENOENT : (int)last;
}

STR_ENTRY int f_strrchr(const char *s, int c)
{
	if (!s)
		return -ERANGE;
	if (c <= 0 || c > 255) {
		/* 0 finds the NUL; a value no byte can hold finds nothing. */
		const size_t n = t_chr(U(s), 0, STR_MAX, true);

		if (n == STR_MAX)
			return -E2BIG;
		return c ? -ENOENT : (int)n;
	}
	if (same_page(s, BLK)) {
		/* A string ending in its first block: settled here. */
		const blk_t v = b_loadu(U(s));
		const mask_t z = b_key_mask(b_key_nul(v));

		if (z) {
			const mask_t mc = b_mask(b_eq(v, b_set1((uchar)c))) & m_below(m_first(z));

			return mc ? (int)m_last(mc) : -ENOENT;
		}
	}
	return rchr_rest(U(s), (uchar)c);
}

STR_ENTRY int f_strspn(const char *s, const char *accept)
{
	if (!s || !accept)
		return -ERANGE;
	return span_impl(U(s), U(accept), false);
}

STR_ENTRY int f_strcspn(const char *s, const char *reject)
{
	if (!s || !reject)
		return -ERANGE;
	return span_impl(U(s), U(reject), true);
}

STR_ENTRY int f_strnstr(const char *s1, const char *s2, size_t len)
{
	if (!s1 || !s2)
		return -ERANGE;
	return strstr_impl(U(s1), U(s2), len, false);
}

STR_ENTRY int f_strstr(const char *s1, const char *s2)
{
	if (!s1 || !s2)
		return -ERANGE;
	return strstr_impl(U(s1), U(s2), STR_MAX, false);
}

STR_ENTRY int f_strncasestr(const char *s1, const char *s2, size_t len)
{
	if (!s1 || !s2)
		return -ERANGE;
	return strstr_impl(U(s1), U(s2), len, true);
}

STR_ENTRY int f_strcasestr(const char *s1, const char *s2)
{
	if (!s1 || !s2)
		return -ERANGE;
	return strstr_impl(U(s1), U(s2), STR_MAX, true);
}

#undef U

const struct str_ops STR_OPS_NAME = {
	.name = STR_ISA_NAME,
	.strcmp = f_strcmp,
	.strcasecmp = f_strcasecmp,
	.strncasecmp = f_strncasecmp,
	.strchr = f_strchr,
	.strchrnul = f_strchrnul,
	.strnchr = f_strnchr,
	.strrchr = f_strrchr,
	.strlen = f_strlen,
	.strnlen = f_strnlen,
	.strspn = f_strspn,
	.strcspn = f_strcspn,
	.strstr = f_strstr,
	.strnstr = f_strnstr,
	.strcasestr = f_strcasestr,
	.strncasestr = f_strncasestr,
};
