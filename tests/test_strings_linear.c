/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The substring searches' linear-time path (src/strings/str_twoway.c)
 * against the byte-at-a-time reference: bpfmap_str_linear() itself over
 * every needle and haystack of small lengths on {a, b} (and with mixed case
 * for the folding pair), from every position it may be asked to resume at;
 * haystacks that end (a NUL or the bound) just past the kernel's 65536
 * candidates, where a partial match running into the end (-ENOENT) must be
 * told from none (-E2BIG); and every implementation table plus the public
 * calls on needles that make the block scans hand over (a^k b, (ab)^k a,
 * Fibonacci words, random periodic ones).  Work is measured, not timed: the
 * library is the test-hooks build, which counts the bytes the searches
 * compare, and adversarial searches must stay within a constant times the
 * bytes they could examine.  BPFMAP_TEST_SEED replays a random run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "strings/str_internal.h"
#include "strings_reference.h"
#include "test_rng.h"
#include "strings_impls.h"

#define M REF_STR_MAX
/* The work allowed per byte the search could examine (haystack + needle). */
#define WORK_PER_BYTE 24


static const struct str_ops *impls[8];
static int n_impls;
static unsigned long n_checks, n_failures;

static int setup_all(void **state)
{
	(void)state;
	n_impls = strings_impls_setup("linear search tests", 0x5851f42d4c957f2dULL, impls,
				      &strings_public_ops);
	print_message("\n");
	return 0;
}

static void show(const char *what, const char *s, size_t n)
{
	size_t i = 0;

	fprintf(stderr, "  %s (%zu bytes): \"", what, n);
	for (; i < n && i < 100; i++)
		fputc(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?', stderr);
	fprintf(stderr, "%s\"\n", i < n ? "..." : "");
}

/* Shows the haystack from byte skip on, hshow bytes. */
static size_t skip;

static void failed(const char *who, const char *h, size_t hshow, const char *x, size_t len,
		   size_t start, bool fold, int got, int want)
{
	if (n_failures++ >= 5)
		return;
	fprintf(stderr, "MISMATCH %s fold=%d len=%zu start=%zu: got %d want %d\n", who, fold,
		len, start, got, want);
	show("hay from skip", h + skip, hshow);
	fprintf(stderr, "  (skip %zu)\n", skip);
	show("needle", x, len < 100 ? len : 100);
}

/* bpfmap_str_linear() from start, against the reference. */
static void check_linear(const char *h, size_t hshow, const char *x, size_t len, size_t start,
			 bool fold)
{
	const int want = ref_search_from(h, x, len, start, fold, NULL);
	const int got = bpfmap_str_linear((const unsigned char *)h, (const unsigned char *)x, len,
					  start, fold);

	n_checks++;
	if (got != want)
		failed("linear", h, hshow, x, len, start, fold, got, want);
}

static int call(const struct str_ops *o, const char *h, const char *x, size_t len, bool fold,
		bool unbounded)
{
	if (unbounded)
		return fold ? o->strcasestr(h, x) : o->strstr(h, x);
	return fold ? o->strncasestr(h, x, len) : o->strnstr(h, x, len);
}

/* Every implementation, bounded by len and (when len is M) unbounded. */
static void check_impls(const char *h, size_t hshow, const char *x, size_t len, bool fold)
{
	const int want = ref_search_from(h, x, len, 0, fold, NULL);

	for (int u = 0; u < (len == M ? 2 : 1); u++) {
		for (int i = 0; i < n_impls; i++) {
			const int got = call(impls[i], h, x, len, fold, u);

			n_checks++;
			if (got != want)
				failed(impls[i]->name, h, hshow, x, len, 0, fold, got, want);
		}
	}
}

static void finish(const char *what)
{
	print_message("%s: %lu checks\n", what, n_checks);
	assert_int_equal(n_failures, 0);
	n_checks = 0;
}

/* c in a case chosen at random (folding searches only). */
static char rnd_case(char c, bool fold)
{
	return fold && (rnd() & 1) ? (char)(c ^ 0x20) : c;
}

/* ---------------------------------------------------------------------- */

/*
 * Every needle of 1-6 bytes and every haystack of 0-12 bytes over {a, b},
 * cases mixed when folding; bounds at random below, at and past the end;
 * resumed from 0 and from a random position that does not decide.
 */
static void test_small_exhaustive(void **state)
{
	(void)state;
	char x[8], h[16];

	for (int fold = 0; fold < 2; fold++) {
		for (size_t nl = 1; nl <= 6; nl++) {
			for (unsigned nb = 0; nb < 1u << nl; nb++) {
				for (size_t k = 0; k < nl; k++)
					x[k] = rnd_case(nb >> k & 1 ? 'b' : 'a', fold);
				x[nl] = 0;
				for (size_t hl = 0; hl <= 12; hl++) {
					for (unsigned hb = 0; hb < 1u << hl; hb++) {
						for (size_t k = 0; k < hl; k++)
							h[k] = rnd_case(hb >> k & 1 ? 'b' : 'a', fold);
						h[hl] = 0;
						const size_t lens[] = {SIZE_MAX, rnd_below(hl + 2)};

						for (int l = 0; l < 2; l++) {
							size_t where;

							ref_search_from(h, x, lens[l], 0, fold, &where);
							check_linear(h, hl, x, lens[l], 0, fold);
							check_linear(h, hl, x, lens[l], rnd_below(where + 1),
								     fold);
						}
					}
				}
			}
		}
	}
	finish("small exhaustive");
}

/* ---------------------------------------------------------------------- */
/* Needles with much structure                                              */

enum shape { SH_RANDOM, SH_AK_B, SH_AB_K_A, SH_FIB, SH_PERIODIC, SH_COUNT };

/* A needle of n bytes (n >= 1) of shape sh over {a, b} (c for variety). */
static void make_needle(char *x, size_t n, enum shape sh)
{
	switch (sh) {
	case SH_RANDOM:
		for (size_t k = 0; k < n; k++)
			x[k] = (char)('a' + rnd_below(2 + (rnd() % 8 == 0)));
		break;
	case SH_AK_B:
		memset(x, 'a', n);
		x[n - 1] = 'b';
		break;
	case SH_AB_K_A:
		for (size_t k = 0; k < n; k++)
			x[k] = k & 1 ? 'b' : 'a';
		x[n - 1] = 'a';
		break;
	case SH_FIB: {
		/* The Fibonacci word: f(k) = f(k-1) f(k-2), built in place. */
		size_t a = 1, b = 2;

		x[0] = 'a';
		if (n > 1)
			x[1] = 'b';
		while (b < n) {
			size_t c = a + b;

			for (size_t k = b; k < c && k < n; k++)
				x[k] = x[k - b];
			a = b;
			b = c;
		}
		break;
	}
	default: {
		const size_t p = 1 + rnd_below(5);

		for (size_t k = 0; k < n; k++)
			x[k] = k < p ? (char)('a' + rnd_below(2)) : x[k - p];
		if (rnd() & 1)
			x[n - 1 - rnd_below(n < 3 ? n : 3)] ^= 3; /* a -> b, b -> a */
		break;
	}
	}
	x[n] = 0;
}

/*
 * n bytes of haystack for needle x of m bytes: pieces of x (prefixes, or x
 * whole now and then) and single random bytes, so that near matches and
 * partial matches abound.
 */
static void make_hay(char *h, size_t n, const char *x, size_t m)
{
	size_t k = 0;

	while (k < n) {
		const size_t r = rnd() % 16;

		if (r == 0) {
			h[k++] = (char)('a' + rnd_below(3));
		} else {
			size_t piece = r == 1 ? m : rnd_below(m + 1);

			if (r == 2 && m > 1) /* x with a byte changed near its end */
				piece = m;
			for (size_t j = 0; j < piece && k < n; j++)
				h[k++] = x[j];
			if (r == 2 && m > 1 && k > 0)
				h[k - 1 - rnd_below(k < 3 ? k : 3)] ^= 3;
		}
	}
}

static void fold_mix(char *p, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = rnd_case(p[k], true);
}

/*
 * Haystacks that end 0-47 bytes past the last candidate (65535): 'c' up to
 * 1-48 bytes before it, needle material after, so the answer hangs on
 * whether a suffix of the haystack is a prefix of the needle.  The end is a
 * NUL (unbounded, or a bound past it) or the bound on a buffer of exactly
 * that many bytes (AddressSanitizer sees any read past it).  Resumed from
 * inside the 'c' run: bpfmap_str_linear() alone, many times; every
 * implementation from 0 now and then.
 */
static void test_tail(void **state)
{
	(void)state;
	char x[128];
	unsigned long rounds = 0, enoent = 0, e2big = 0, found = 0;

	for (int round = 0; round < 200000; round++) {
		const bool fold = round & 1;
		const size_t m = 1 + rnd_below(rnd() % 4 ? 24 : 100);
		const size_t pre = 1 + rnd_below(48), over = rnd_below(48);
		const size_t e = M + over, start = M - pre - rnd_below(3);
		const bool nul = rnd() & 1;
		const size_t len = nul ? (rnd() & 1 ? SIZE_MAX : e + rnd_below(4)) : e;
		char *h = malloc(e + nul);

		assert_non_null(h);
		make_needle(x, m, (enum shape)rnd_below(SH_COUNT));
		memset(h, 'c', M - pre);
		make_hay(h + M - pre, pre + over, x, m);
		if (nul)
			h[e] = 0;
		if (fold) {
			fold_mix(x, m);
			fold_mix(h + M - pre, pre + over);
		}
		const int want = ref_search_from(h, x, len, start, fold, NULL);

		enoent += want == -ENOENT;
		e2big += want == -E2BIG;
		found += want >= 0;
		skip = M - pre - 8;
		check_linear(h, pre + over + 8, x, len, start, fold);
		if (round % 500 == 0) {
			check_impls(h, e, x, len, fold);
			if (len >= M)
				check_impls(h, e, x, M, fold);
		}
		free(h);
		skip = 0;
		rounds++;
	}
	print_message("tail: %lu rounds: %lu found, %lu -ENOENT, %lu -E2BIG\n", rounds, found,
		      enoent, e2big);
	assert_true(enoent > rounds / 10 && e2big > rounds / 10);
	finish("tail");
}

/*
 * Every implementation on needles of 8-200 bytes of each shape in
 * haystacks of their pieces, 1-4000 bytes or around 65536, bounded below,
 * at or past the end, or by a NUL: the block scans compare much there and
 * hand over to the linear search midway.
 */
static void test_impls_hand_over(void **state)
{
	(void)state;
	const size_t cap = M + 4096;
	char *h = malloc(cap + 1), x[256];

	assert_non_null(h);
	for (int round = 0; round < 1000; round++) {
		const bool fold = round & 1;
		const size_t m = 8 + rnd_below(rnd() % 4 ? 40 : 193);
		const bool big = round % 16 == 0;
		const size_t n = big ? M - 2048 + rnd_below(6000) : 1 + rnd_below(4000);
		size_t len;

		make_needle(x, m, (enum shape)(round / 2 % SH_COUNT));
		make_hay(h, n, x, m);
		h[n] = 0;
		switch (rnd() % 4) {
		case 0:
			len = SIZE_MAX;
			break;
		case 1:
			len = M;
			break;
		case 2:
			len = n - rnd_below(n < 64 ? n : 64);
			break;
		default:
			len = n + rnd_below(3);
			break;
		}
		if (fold) {
			fold_mix(x, m);
			fold_mix(h, n);
		}
		check_impls(h, n, x, len, fold);
	}
	free(h);
	finish("hand over");
}

/*
 * The hand-over itself: needles a^k b and (ab)^k c, whose candidates each
 * compare the whole needle, in haystacks that repeat the needle's period
 * and then end it (an occurrence), or stop (a NUL, or the bound): the
 * deciding position moves by one over a range of d, so that some case puts
 * it right at (and right after) the position where the block scans of each
 * implementation hand over.
 */
static void test_hand_over_sweep(void **state)
{
	(void)state;
	char x[300], h[1200];

	for (int fold = 0; fold < 2; fold++) {
		for (int shape = 0; shape < 2; shape++) {
			for (size_t k = 70; k <= 130; k += 60) {
				const size_t m = shape ? 2 * k + 1 : k + 1;

				for (size_t j = 0; j < m; j++)
					x[j] = shape ? (j == m - 1 ? 'c' : j & 1 ? 'b' : 'a')
						     : (j == m - 1 ? 'b' : 'a');
				x[m] = 0;
				for (size_t d = 0; d < 120; d++) {
					const size_t n = (shape ? 2 * d : d) + m;

					for (size_t j = 0; j < n; j++)
						h[j] = x[j < m - 1 ? j : (j - (m - 1)) % (shape ? 2 : 1)];
					for (int end = 0; end < 3; end++) {
						h[n - 1] = end ? 'a' : x[m - 1]; /* a match, or none */
						h[n] = 0;
						if (fold)
							fold_mix(h, n);
						check_impls(h, n, x, end == 2 ? n - 1 : SIZE_MAX, fold);
					}
				}
			}
		}
	}
	finish("hand-over sweep");
}

/*
 * A needle with no NUL in its 65536 bytes, (ab)^32768: a whole match is
 * -E2BIG, a partial one running into the end -ENOENT; after 'c' bytes
 * (resumed from there, or every implementation from 0), a few short runs of
 * ab, each cut by a 'c', then one of any length up to the end: a NUL or the
 * bound.  (Long runs cut short would make the reference quadratic.)
 */
static void test_needle_without_nul(void **state)
{
	(void)state;
	const size_t cap = 2 * M + 64;
	char *x = malloc(M), *h = malloc(cap + 1);

	assert_non_null(x);
	assert_non_null(h);
	for (size_t k = 0; k < M; k++)
		x[k] = k & 1 ? 'b' : 'a';
	for (int round = 0; round < 300; round++) {
		const bool fold = round & 1;
		const size_t pre = rnd_below(M + 16);
		const size_t n = pre + rnd_below(cap - pre);
		size_t k = pre;

		memset(h, 'c', pre);
		for (size_t runs = rnd_below(4); runs; runs--) {
			const size_t run = rnd_below(600);

			for (size_t j = 0; j < run && k + 1 < n; j++, k++)
				h[k] = (char)(j & 1 ? 'b' : 'a');
			if (k < n)
				h[k++] = 'c';
		}
		for (size_t j = 0; k < n; j++, k++)
			h[k] = (char)(j & 1 ? 'b' : 'a');
		h[n] = 0;
		if (fold)
			fold_mix(h + pre, n - pre);
		const size_t len = rnd() % 2 ? SIZE_MAX : pre + rnd_below(n - pre + 2);
		const size_t start = pre < M ? pre - rnd_below(pre < 3 ? pre + 1 : 3) : 0;

		skip = pre > 8 ? pre - 8 : 0;
		check_linear(h, 64, x, len, start, fold);
		if (round % 10 == 0)
			check_impls(h, 64, x, len, fold);
		skip = 0;
	}
	free(x);
	free(h);
	finish("needle without NUL");
}

/* ---------------------------------------------------------------------- */
/* Work                                                                     */

struct adversary {
	const char *name;
	size_t n;     /* haystack bytes ('a') */
	size_t m;     /* needle bytes: a^(m - 1) b, or a^m with no NUL if m == M */
	size_t len;   /* bound */
	int want;
};

/*
 * Searches that make a candidate-by-candidate scan quadratic, through every
 * implementation: the answer, and the bytes compared within WORK_PER_BYTE
 * times the bytes the search could examine.
 */
static void test_work_linear(void **state)
{
	(void)state;
	const struct adversary adv[] = {
		/* partial matches run into the NUL at 65536 from 32769 on */
		{"a^32767 b in a^65536", M, 32768, SIZE_MAX, -ENOENT},
		{"a^63 b in a^65536", M, 64, SIZE_MAX, -ENOENT},
		{"a^63 b in a^70000", 70000, 64, SIZE_MAX, -E2BIG},
		{"a^2047 b in a^66000 bounded", 70000, 2048, 66000, -ENOENT},
		{"a^65535 b in a^65536", M, M, SIZE_MAX, -ENOENT},
		{"a^15 b in a^40000", 40000, 16, SIZE_MAX, -ENOENT},
	};
	char *h = malloc(70001), *x = malloc(M + 1);

	assert_non_null(h);
	assert_non_null(x);
	for (size_t a = 0; a < sizeof(adv) / sizeof(adv[0]); a++) {
		const struct adversary *d = &adv[a];

		memset(h, 'a', d->n);
		h[d->n] = 0;
		memset(x, 'a', d->m - 1);
		x[d->m - 1] = 'b';
		x[d->m] = 0;
		for (int fold = 0; fold < 2; fold++) {
			for (int i = 0; i < n_impls; i++) {
				bpfmap_str_work = 0;
				const int got = call(impls[i], h, x, d->len, fold, false);
				const unsigned long work = bpfmap_str_work;
				const unsigned long bound = WORK_PER_BYTE * (unsigned long)(d->n + d->m);

				print_message("%-28s %-7s fold=%d: %d, %lu bytes compared (%.2f per byte)\n",
					      d->name, impls[i]->name, fold, got, work,
					      (double)work / (double)(d->n + d->m));
				assert_int_equal(got, d->want);
				assert_true(work <= bound);
			}
		}
	}
	free(h);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_exhaustive),
		cmocka_unit_test(test_tail),
		cmocka_unit_test(test_impls_hand_over),
		cmocka_unit_test(test_hand_over_sweep),
		cmocka_unit_test(test_needle_without_nul),
		cmocka_unit_test(test_work_linear),
	};

	return cmocka_run_group_tests(tests, setup_all, NULL);
}
