/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The substring searches' linear-time fallback: the two-way algorithm of
 * M. Crochemore and D. Perrin, "Two-way string-matching", J. ACM 38(3),
 * 651-675, 1991, written from the paper, on folded bytes for the
 * case-insensitive pair.  The block scans of str_impl.h try each candidate
 * position in turn, as the kernel does; when the blocks they compare outgrow
 * a constant times the positions passed, they hand the rest over to
 * bpfmap_str_linear(), which takes time linear in the needle and the bytes
 * it examines, with a few words of stack and no allocation.  It reads the
 * haystack only below its NUL and the bound, and the needle only up to its
 * NUL (or 65536 bytes: such a needle's whole match is -E2BIG).
 *
 * Which position decides.  Let e be where the haystack ends (its NUL or the
 * bound), m the needle's length and q = STR_MAX - 1 the last candidate.  The
 * kernel answers at the first i <= q where either the needle occurs whole
 * (i + m <= e: the index) or s[i, e) is a proper prefix of the needle
 * (e - i < m, the "run into the end": -ENOENT).  Every occurrence i has
 * i <= e - m and every run-in i has i > e - m, so all occurrences come
 * before all run-ins: the answer is the first occurrence at or below q if
 * there is one.  Otherwise position e is a run-in (the empty prefix), so
 * e <= q means -ENOENT; with e > q the answer is -ENOENT if some i in
 * (e - m, q] is a run-in and -E2BIG if none is.  That last question (is some
 * suffix of s[0, e), at least e - q bytes long, a prefix of the needle?) is
 * answered in linear time by run_in() below without the failure table that
 * Knuth-Morris-Pratt would need.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define STR_TARGET
#include "strings/str_internal.h"

typedef unsigned char uchar;

#define TW_FN static inline __attribute__((always_inline))

#ifdef BPFMAP_TEST_HOOKS
unsigned long bpfmap_str_work;
#endif

/* Byte i of p, folded for a folding search. */
TW_FN uchar at(const uchar *p, size_t i, const bool fold)
{
	STR_WORK(1);
	return fold ? bpfmap_str_fold[p[i]] : p[i];
}

/*
 * The length of the common prefix of a[0, n) and b[0, n) (folded), eight
 * bytes at a time when not folding: the long runs of equal bytes that make
 * the needle's preparation costly (a^32767 b) go by words.
 */
TW_FN size_t common(const uchar *a, const uchar *b, size_t n, const bool fold)
{
	size_t k = 0;

	if (!fold) {
		for (; k + 8 <= n; k += 8) {
			uint64_t u, v;

			memcpy(&u, a + k, 8);
			memcpy(&v, b + k, 8);
			if (u != v) {
				STR_WORK(k + 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				return k + (size_t)__builtin_ctzll(u ^ v) / 8;
#else
				return k + (size_t)__builtin_clzll(u ^ v) / 8;
#endif
			}
		}
		STR_WORK(k);
	}
	while (k < n && at(a, k, fold) == at(b, k, fold))
		k++;
	return k;
}

/* The haystack, examined from left to right as far as the search needs. */
struct text {
	const uchar *s;
	size_t len;   /* the bound */
	size_t known; /* s[0, known) lies below len and holds no NUL */
	bool ended;   /* known is the end: s[known] is NUL or known == len */
};

/* Read ahead of the window by this much: fewer, longer NUL scans. */
#define TW_AHEAD 256

/*
 * Is s[0, need) known to hold no NUL (and to lie below the bound)?  Scans
 * on to the NUL or the bound at the latest, never past them.
 */
TW_FN bool reach(struct text *t, size_t need)
{
	if (t->known >= need)
		return true;
	if (t->ended)
		return false;
	const size_t to = t->len > need && t->len - need > TW_AHEAD ? need + TW_AHEAD : t->len;
	const uchar *z = memchr(t->s + t->known, 0, to - t->known);

	STR_WORK(to - t->known);
	t->known = z ? (size_t)(z - t->s) : to;
	t->ended = z || to == t->len;
	return t->known >= need;
}

/* A needle (or a prefix of one) and its critical factorization. */
struct pat {
	const uchar *x;
	size_t m;     /* its length, >= 1 */
	size_t ell;   /* the critical position: x = x[0, ell) x[ell, m) */
	size_t per;   /* periodic: its period; else the shift after a match of x[ell, m) */
	bool periodic;
};

/*
 * The maximal suffix of x[0, m) for the byte order (rev: the reverse
 * order), as its start, and its period in *per: the paper's Function
 * Maximal-Suffix, at i the suffix so far, j + k the byte under test.
 */
TW_FN size_t max_suffix(const uchar *x, size_t m, const bool rev, size_t *per, const bool fold)
{
	size_t i = 0, j = 1, k = 0, p = 1;

	while (j + k < m) {
		const uchar a = at(x, j + k, fold), b = at(x, i + k, fold);

		if (rev ? a > b : a < b) {
			j += k + 1;
			k = 0;
			p = j - i;
		} else if (a == b) {
			/* x[i, j + k] has period p (j - i a multiple of it):
			 * it goes on as long as x[t] == x[t - p]. */
			const size_t t = j + k + 1;
			const size_t e = t + common(x + t, x + t - p, m - t, fold);

			k = (e - i) % p;
			j = e - k;
		} else {
			i = j++;
			k = 0;
			p = 1;
		}
	}
	*per = p;
	return i;
}

/*
 * The later of the two maximal suffixes is a critical position (the paper's
 * Theorem 4.3).  If x[0, ell) is a suffix of x[ell, ell + p), p is x's
 * period; if not, the period exceeds max(ell, m - ell) and a match of the
 * right part followed by a mismatch in the left moves the window that far.
 */
TW_FN void prepare(struct pat *pt, const uchar *x, size_t m, const bool fold)
{
	size_t p1, p2;
	const size_t i1 = max_suffix(x, m, false, &p1, fold);
	const size_t i2 = max_suffix(x, m, true, &p2, fold);
	const size_t ell = i1 > i2 ? i1 : i2, p = i1 > i2 ? p1 : p2;

	/* The suffix's period p is at most its length: ell + p <= m. */
	const size_t k = common(x, x + p, ell, fold);

	pt->x = x;
	pt->m = m;
	pt->ell = ell;
	pt->periodic = k == ell;
	pt->per = pt->periodic ? p : (ell > m - ell ? ell : m - ell) + 1;
}

/*
 * The first occurrence of the pattern in t starting in [j, jmax], or
 * SIZE_MAX: the paper's two-way search (with its memory of the prefix
 * already matched when the pattern is periodic).  Each window compares the
 * right part from the left, then the left part from the right.
 */
TW_FN size_t find(const struct pat *pt, struct text *t, size_t j, size_t jmax, const bool fold)
{
	const uchar *x = pt->x, *s = t->s;
	const size_t m = pt->m, ell = pt->ell;
	size_t mem = 0;

	while (j <= jmax && reach(t, j + m)) {
		size_t k = ell > mem ? ell : mem;

		while (k < m && at(x, k, fold) == at(s, j + k, fold))
			k++;
		if (k < m) {
			if (k == ell && !fold) {
				/* The windows go on by one, each failing on its
				 * first byte, until byte j + ell is x[ell]: let
				 * memchr find that among the bytes known. */
				const size_t from = j + ell + 1;
				const uchar *z = memchr(s + from, x[ell], t->known - from);
				const size_t to = z ? (size_t)(z - s) : t->known;

				STR_WORK(to - from + 1);
				j = to - ell;
			} else {
				j += k - ell + 1;
			}
			mem = 0;
			continue;
		}
		for (k = ell; k > mem && at(x, k - 1, fold) == at(s, j + k - 1, fold);)
			k--;
		if (k <= mem)
			return j;
		j += pt->per;
		mem = pt->periodic ? m - pt->per : 0;
	}
	return SIZE_MAX;
}

/* Do a[0, n) and b[0, n) agree (folded)? */
TW_FN bool same(const uchar *a, const uchar *b, size_t n, const bool fold)
{
	for (size_t k = 0; k < n; k++)
		if (at(a, k, fold) != at(b, k, fold))
			return false;
	return true;
}

/*
 * Is some i in [e - hi, e - h] a run-in: s[i, e) a prefix of x?  (h <= hi
 * <= h + h / 2, hi < m, s[0, e) known.)  Each such i starts an occurrence of
 * y = x[0, h), and two occurrences d <= h / 2 apart make d a period of y:
 * if y has no period that small, only y's first occurrence j can be one
 * (the non-periodic case has per(y) > h / 2, see prepare()).  If y's
 * period p is, then p + d <= h, so by Fine and Wilf's theorem gcd(p, d) is a
 * period and d a multiple of p: the candidates are j + d, d = p, 2p, ...,
 * as long as s stays p-periodic from j (rt bytes) over the whole of y.  From
 * j + d, s runs on periodically rt - d bytes and x rx bytes from its start:
 * the two agree up to the shorter run and differ just after it, so only the
 * one candidate with rt - d == rx needs comparing further.
 */
TW_FN bool run_in_band(const uchar *x, size_t m, const uchar *s, size_t e, size_t h, size_t hi,
		       const bool fold)
{
	struct text t = {.s = s, .len = e, .known = e, .ended = true};
	struct pat y;

	prepare(&y, x, h, fold);
	const size_t j = find(&y, &t, e - hi, e - h, fold);

	if (j == SIZE_MAX)
		return false;
	const size_t room = e - j; /* the run-in length at j */

	if (same(s + j + h, x + h, room - h, fold))
		return true;
	if (!y.periodic)
		return false;
	const size_t p = y.per;
	size_t rt = h, rx = h;

	while (rt < room && at(s, j + rt, fold) == at(s, j + rt - p, fold))
		rt++;
	while (rx < room && rx < m && at(x, rx, fold) == at(x, rx - p, fold))
		rx++;
	for (size_t d = p; d <= room - h && d + h <= rt; d += p) {
		const size_t len = room - d, a = rt - d;

		if (a >= len ? rx >= len : a == rx && same(s + j + rt, x + a, len - a, fold))
			return true;
	}
	return false;
}

/*
 * Is some i in [lo, q] a run-in?  (e - m < lo <= q < e.)  The run-in
 * lengths e - i, from e - q to e - lo, in bands growing by half each: band
 * [h, h + h / 2] costs O(h), so the whole costs O(e - lo) = O(m).
 */
TW_FN bool run_in(const uchar *x, size_t m, const uchar *s, size_t e, size_t lo, size_t q,
		  const bool fold)
{
	const size_t last = e - lo;

	for (size_t h = e - q; h <= last;) {
		const size_t hi = h + h / 2 < last ? h + h / 2 : last;

		if (run_in_band(x, m, s, e, h, hi, fold))
			return true;
		h = hi + 1;
	}
	return false;
}

TW_FN int linear(const uchar *s, const uchar *x, size_t len, size_t start, const bool fold)
{
	const size_t q = STR_MAX - 1;
	const size_t m = strnlen((const char *)x, STR_MAX);

	STR_WORK(m);
	if (!m)
		return 0;
	/* No NUL below start: those positions would have decided. */
	struct text t = {.s = s, .len = len, .known = start, .ended = false};
	struct pat pt;

	prepare(&pt, x, m, fold);
	const size_t j = find(&pt, &t, start, q, fold);

	if (j != SIZE_MAX)
		return m == STR_MAX ? -E2BIG : (int)j;
	reach(&t, q + m);
	if (!t.ended)
		return -E2BIG; /* e >= q + m: no i <= q runs into the end */
	const size_t e = t.known;

	if (e <= q)
		return -ENOENT;
	const size_t lo = e - m + 1 > start ? e - m + 1 : start;

	return run_in(x, m, s, e, lo, q, fold) ? -ENOENT : -E2BIG;
}

int bpfmap_str_linear(const unsigned char *s, const unsigned char *needle, size_t len,
		      size_t start, bool fold)
{
	return fold ? linear(s, needle, len, start, true) : linear(s, needle, len, start, false);
}
