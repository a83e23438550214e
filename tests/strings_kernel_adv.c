/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Adversarial inputs for tests/test_strings_kernel.c, every return code
 * compared with the kernel's:
 *
 * - the two-way search's worst cases: a^k b in runs of a, periodic needles
 *   ((ab)^k aa), needles with a long period and a short critical
 *   factorization (b a^k, Fibonacci words), in haystacks built to make the
 *   block scans hand over and to end inside a prefix of the needle around
 *   the last candidate position 65535 (the -ENOENT / -E2BIG question);
 * - needles and haystacks at and across the 65536-byte limit;
 * - the library's copy ending exactly at a guard page (PROT_NONE), with its
 *   NUL, and without one where a bound lets the kernel stop first (the
 *   n-limited functions, down to a string that is the guard page itself with
 *   n = 0); the kernel's copy, in the program's .bss, at a random alignment
 *   or ending at a page boundary;
 * - case differences, ASCII and Latin-1, every byte pair for strcasecmp;
 * - empty strings, and bounds 0, 1, len - 1, len, len + 1 and around the
 *   first match and the limit.
 *
 * The searches that are quadratic for the kernel (and the reference) are
 * kept few: a^32767 b in 65536 a's costs each of them about 2^30 steps.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "strings_kernel.h"
#include "test_rng.h"

static char *hs, *ns;      /* the haystack and the needle being built */
static char *guard_end[3]; /* each zone's PROT_NONE page: its readable bytes end here */
static size_t zone;        /* readable bytes before each guard page */

static void guards_init(void)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	zone = (BIG + 2 + pg - 1) / pg * pg;
	for (int z = 0; z < 3; z++) {
		char *p = mmap(NULL, zone + pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || mprotect(p + zone, pg, PROT_NONE)) {
			perror("guard page");
			exit(1);
		}
		guard_end[z] = p + zone;
	}
	hs = malloc(BIG + 2);
	ns = malloc(BIG + 2);
	if (!hs || !ns) {
		perror("malloc");
		exit(1);
	}
}

/* len bytes of src ending at zone z's guard page, or its NUL there if term. */
static char *at_guard(int z, const char *src, size_t len, bool term)
{
	char *p = guard_end[z] - len - term;

	memcpy(p, src, len);
	if (term)
		p[len] = 0;
	return p;
}

/* s[0, len) into buf at region r (A or B): at a random alignment, or ending
 * at a page boundary (its NUL the page's last byte). */
static char *in_buf(char *r, const char *s, size_t len)
{
	char *p = rnd() & 1 ? r + REGION - len - 1 : r + 64 + rnd_below(64);

	memcpy(p, s, len);
	p[len] = 0;
	return p;
}

/* Steps a case's quadratic calls may take together (kernel and reference
 * cost about a nanosecond a step); calls cheaper than CHEAP always run. */
#define BUDGET (1ul << 24)
#define CHEAP (1ul << 16)

/* At most the kernel's steps for a search of ns[0, nl) under bound n. */
static size_t steps(size_t hl, size_t nl, size_t n)
{
	size_t pos = hl < n ? hl : n;

	return (pos < M ? pos : M) * ((nl < n ? nl : n) + 1);
}

/*
 * The four searches on hs[0, hl) and ns[0, nl), as many bounds as the budget
 * allows, most telling first; then the library on copies against the guard
 * pages (the kernel's answers known: its cost is linear).
 */
static void search_case(size_t hl, size_t nl, const char *ctx)
{
	char *kh = in_buf(A, hs, hl), *kn = in_buf(B, ns, nl);
	size_t spent = 0;
	struct {
		enum str_fn_id fn;
		size_t n;
		int want;
	} calls[24];
	size_t nc = 0;

	ref_too = steps(hl, nl, SIZE_MAX) <= CHEAP;
	calls[nc].fn = STR_FN_STRSTR;
	calls[nc].n = 0;
	calls[nc].want = check(STR_FN_STRSTR, kh, kn, 0, 0, ctx);
	spent += steps(hl, nl, SIZE_MAX);
	nc++;

	const int p = calls[0].want;
	const size_t pe = p >= 0 ? (size_t)p + nl : hl;
	const struct {
		enum str_fn_id fn;
		size_t n;
	} more[] = {
		{STR_FN_STRCASESTR, 0},	{STR_FN_STRNSTR, hl},	   {STR_FN_STRNSTR, pe - 1},
		{STR_FN_STRNSTR, SIZE_MAX}, {STR_FN_STRNCASESTR, hl}, {STR_FN_STRNSTR, hl - 1},
		{STR_FN_STRNSTR, hl + 1},   {STR_FN_STRNSTR, pe},	   {STR_FN_STRNSTR, pe + 1},
		{STR_FN_STRNSTR, 0},	{STR_FN_STRNSTR, 1},	   {STR_FN_STRNCASESTR, 0},
		{STR_FN_STRNCASESTR, 1},	{STR_FN_STRNSTR, M - 1},   {STR_FN_STRNSTR, M},
		{STR_FN_STRNSTR, M + 1},	{STR_FN_STRNCASESTR, pe - 1}, {STR_FN_STRNCASESTR, M},
		{STR_FN_STRNCASESTR, SIZE_MAX},
	};

	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		const size_t c = steps(hl, nl, more[i].fn == STR_FN_STRCASESTR ? SIZE_MAX : more[i].n);

		if (c > CHEAP && spent + c > BUDGET)
			continue;
		spent += c;
		calls[nc].fn = more[i].fn;
		calls[nc].n = more[i].n;
		calls[nc].want = check(more[i].fn, kh, kn, more[i].n, 0, ctx);
		nc++;
	}
	ref_too = true;
	if (hl >= zone || nl >= zone)
		return;
	/* The library's copies against the guard pages: terminated ... */
	char *lh = at_guard(0, hs, hl, true), *ln = at_guard(1, ns, nl, true);

	for (size_t i = 0; i < nc; i++)
		check_known(calls[i].fn, calls[i].want, lh, ln, calls[i].n, 0, ctx);
	/* ... and the haystack without its NUL, under a bound that stops the
	 * kernel before it */
	lh = at_guard(0, hs, hl, false);
	for (size_t i = 0; i < nc; i++)
		if ((calls[i].fn == STR_FN_STRNSTR || calls[i].fn == STR_FN_STRNCASESTR) &&
		    calls[i].n <= hl)
			check_known(calls[i].fn, calls[i].want, lh, ln, calls[i].n, 0, ctx);
}

/* Case variants for the folding searches: each byte of hs[0, hl) in the
 * other case at random; mode 1 maps a/b to Latin-1 letters first (both
 * strings, so raw matches stay matches). */
static void case_mix(char *s, size_t len, int mode)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (mode == 1 && (ch == 'a' || ch == 'b'))
			ch = ch == 'a' ? 0xe0 : 0xfe;
		if (((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') ||
		    (ch >= 0xc0 && ch != 0xd7 && ch != 0xf7 && ch != 0xdf && ch != 0xff))
			if (rnd() & 1)
				ch ^= 0x20;
		s[i] = (char)ch;
	}
}

/* A case and, if cheap, its case-mixed variants (the raw searches then
 * mostly miss). */
static void search_cases(size_t hl, size_t nl, const char *ctx)
{
	search_case(hl, nl, ctx);
	if (steps(hl, nl, SIZE_MAX) > CHEAP)
		return;
	for (int mode = 0; mode < 2; mode++) {
		case_mix(hs, hl, mode);
		case_mix(ns, nl, mode);
		search_case(hl, nl, ctx);
	}
}

static void fill_rep(char *s, size_t len, const char *unit, size_t ul)
{
	for (size_t i = 0; i < len; i++)
		s[i] = unit[i % ul];
}

/* Haystack lengths for needle length k: short ones, and around the limit
 * and the run-in boundary 65535 + k (all of them for short needles). */
static size_t hay_lens(size_t k, size_t *out)
{
	const size_t l[] = {k - 1, k, k + 1, 2 * k + 1, 4099, M - 1, M, M + 1, M + k - 2,
			    M + k - 1, M + k, BIG};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (l[i] <= BIG && (k <= 64 || l[i] == k + 1 || l[i] == 2 * k + 1 ||
				    l[i] == M + k - 1 || l[i] == M + k))
			out[n++] = l[i];
	return n;
}

static void two_way_worst(void)
{
	static const size_t ks[] = {1,   2,   7,   15,  16,  17,  31,  32,  33,   63,
				    64,  65,  127, 128, 129, 200, 255, 256, 300, 1000,
				    4095};
	size_t hl[16], nh;
	char ctx[64];

	/* a^k b in a^N; and with the needle's b at the end of the haystack */
	for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
		const size_t k = ks[ki];

		nh = hay_lens(k, hl);
		for (size_t i = 0; i < nh; i++) {
			snprintf(ctx, sizeof(ctx), "a^%zu b in a^%zu", k, hl[i]);
			memset(ns, 'a', k);
			ns[k] = 'b';
			memset(hs, 'a', hl[i]);
			search_cases(hl[i], k + 1, ctx);
			snprintf(ctx, sizeof(ctx), "a^%zu b in a^%zu b", k, hl[i]);
			memset(ns, 'a', k);
			ns[k] = 'b';
			memset(hs, 'a', hl[i]);
			hs[hl[i]] = 'b';
			search_cases(hl[i] + 1, k + 1, ctx);
		}
	}
	/* periodic: (ab)^k aa in (ab)^*, and ending in a prefix of it */
	static const size_t pk[] = {4, 8, 32, 33, 100, 500};

	for (size_t ki = 0; ki < sizeof(pk) / sizeof(pk[0]); ki++) {
		const size_t k = pk[ki], nl = 2 * k + 2;

		nh = hay_lens(nl, hl);
		for (size_t i = 0; i < nh; i++) {
			snprintf(ctx, sizeof(ctx), "(ab)^%zu aa in (ab)^* of %zu", k, hl[i]);
			fill_rep(ns, 2 * k, "ab", 2);
			ns[2 * k] = ns[2 * k + 1] = 'a';
			fill_rep(hs, hl[i], "ab", 2);
			search_cases(hl[i], nl, ctx);
		}
	}
	/* long period, critical position 1: b a^k among b a^(k-1) */
	static const size_t lk[] = {16, 63, 64, 200, 1000};

	for (size_t ki = 0; ki < sizeof(lk) / sizeof(lk[0]); ki++) {
		const size_t k = lk[ki];

		nh = hay_lens(k + 1, hl);
		for (size_t i = 0; i < nh; i++) {
			snprintf(ctx, sizeof(ctx), "b a^%zu in (b a^%zu)^* of %zu", k, k - 1,
				 hl[i]);
			ns[0] = 'b';
			memset(ns + 1, 'a', k);
			memset(hs, 'a', hl[i]);
			for (size_t j = 0; j < hl[i]; j += k)
				hs[j] = 'b';
			search_cases(hl[i], k + 1, ctx);
		}
	}
	/* Fibonacci words (many critical factorizations): a prefix of length
	 * nl with its last byte changed, in the word */
	static const size_t fl[] = {20, 100, 377, 1000};

	hs[0] = 'a';
	hs[1] = 'b';
	for (size_t a = 1, b = 2; b < BIG;) { /* f(n+1) = f(n) f(n-1) */
		size_t c = b + a < BIG ? a : BIG - b;

		memcpy(hs + b, hs, c);
		a = b;
		b += c;
	}
	for (size_t fi = 0; fi < sizeof(fl) / sizeof(fl[0]); fi++) {
		const size_t nl = fl[fi];

		nh = hay_lens(nl, hl);
		for (size_t i = 0; i < nh; i++) {
			snprintf(ctx, sizeof(ctx), "Fibonacci %zu in one of %zu", nl, hl[i]);
			memcpy(ns, hs, nl);
			ns[nl - 1] ^= 'a' ^ 'b';
			/* search_cases() case-mixes hs: keep a clean copy */
			char *save = malloc(hl[i]);

			memcpy(save, hs, hl[i]);
			search_cases(hl[i], nl, ctx);
			memcpy(hs, save, hl[i]);
			free(save);
		}
	}
	/* the long worst case, once */
	memset(ns, 'a', 32767);
	ns[32767] = 'b';
	memset(hs, 'a', M);
	search_case(M, 32768, "a^32767 b in a^65536");
}

/* Needles and haystacks across the 65536-byte limit. */
static void limits(void)
{
	static const size_t nls[] = {65534, 65535, 65536, 65537, BIG};
	char ctx[64];

	for (size_t i = 0; i < sizeof(nls) / sizeof(nls[0]); i++) {
		const size_t nl = nls[i];
		static const size_t hls[] = {0, 1, 65534, 65535, 65536, 65537, BIG};

		for (size_t j = 0; j < sizeof(hls) / sizeof(hls[0]); j++) {
			/* the needle a^nl: occurs at 0, runs into the end, or is
			 * too long (a mismatch near its end would be quadratic) */
			snprintf(ctx, sizeof(ctx), "a^%zu in a^%zu", nl, hls[j]);
			memset(ns, 'a', nl);
			memset(hs, 'a', hls[j]);
			search_case(hls[j], nl, ctx);
		}
	}
	/* What the kernel answers at the limit, for the log. */
	char *kh = make(A + 64, BIG, 'a'), *kn = make(B + 64, M, 'a');
	int r[5];

	r[0] = check(STR_FN_STRSTR, kh, kn, 0, 0, "limit");
	r[1] = check(STR_FN_STRSTR, kh, kn + 1, 0, 0, "limit");
	make(kh, M, 'a');
	r[2] = check(STR_FN_STRSTR, kh, put(kn, "b"), 0, 0, "limit");
	r[3] = check(STR_FN_STRSTR, kh + 1, kn, 0, 0, "limit");
	r[4] = check(STR_FN_STRSTR, kh, put(kn, "ab"), 0, 0, "limit");
	printf("kernel at the limit: strstr(a^70000, a^65536) %d, (a^70000, a^65535) %d, "
	       "(a^65536, b) %d, (a^65535, b) %d, (a^65536, ab) %d\n",
	       r[0], r[1], r[2], r[3], r[4]);
	/* strspn/strcspn with sets at the limit, the byte at its end */
	for (size_t i = 0; i < sizeof(nls) / sizeof(nls[0]); i++) {
		char *t = B + 64, *s = A + 64;

		make(t, nls[i], 'x');
		t[nls[i] - 1] = 'y';
		snprintf(ctx, sizeof(ctx), "set of %zu, y last", nls[i]);
		check(STR_FN_STRSPN, put(s, "yyz"), t, 0, 0, ctx);
		check(STR_FN_STRCSPN, put(s, "aay"), t, 0, 0, ctx);
		check(STR_FN_STRSPN, put(s, "z"), t, 0, 0, ctx);
		check(STR_FN_STRCSPN, put(s, "z"), t, 0, 0, ctx);
	}
}

/* The n-limited functions at 0, 1, len - 1, len, len + 1, at the guard. */
static void bounds(void)
{
	static const size_t ls[] = {0, 1, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097, 65535, 65536,
				    65537, BIG};
	char ctx[64];

	for (size_t li = 0; li < sizeof(ls) / sizeof(ls[0]); li++) {
		const size_t len = ls[li];
		const size_t n[] = {0, 1, len - 1, len, len + 1, SIZE_MAX};

		for (size_t i = 0; i < len; i++)
			hs[i] = (char)('a' + rnd_below(3));
		memcpy(ns, hs, len);
		case_mix(ns, len, 0);
		char *ka = in_buf(A, hs, len), *kb = in_buf(B, ns, len);
		const int c = len ? (unsigned char)hs[len - 1] : 'a';

		snprintf(ctx, sizeof(ctx), "bounds, len %zu", len);
		/* terminated, at the guard */
		char *la = at_guard(0, hs, len, true), *lb = at_guard(1, ns, len, true);

		check_at(STR_FN_STRCASECMP, ka, kb, la, lb, 0, 0, ctx);
		check_at(STR_FN_STRCMP, ka, ka, la, la, 0, 0, ctx);
		check_at(STR_FN_STRSTR, ka, kb, la, lb, 0, 0, ctx);
		for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
			check_at(STR_FN_STRNLEN, ka, NULL, la, NULL, n[i], 0, ctx);
			check_at(STR_FN_STRNCHR, ka, NULL, la, NULL, n[i], c, ctx);
			check_at(STR_FN_STRNCHR, ka, NULL, la, NULL, n[i], 'z', ctx);
			check_at(STR_FN_STRNCHR, ka, NULL, la, NULL, n[i], 0, ctx);
			check_at(STR_FN_STRNCASECMP, ka, kb, la, lb, n[i], 0, ctx);
		}
		/* no NUL: a bound that stops the kernel first */
		char *ua = at_guard(0, hs, len, false), *ub = at_guard(1, ns, len, false);
		char *kn = put(B + 16, "ab"), *kf = put(B + 32, "Ab");
		char *ln = at_guard(2, "ab", 2, true);

		for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
			if (n[i] > len)
				continue;
			check_at(STR_FN_STRNLEN, ka, NULL, ua, NULL, n[i], 0, ctx);
			check_at(STR_FN_STRNCHR, ka, NULL, ua, NULL, n[i], c, ctx);
			check_at(STR_FN_STRNCHR, ka, NULL, ua, NULL, n[i], 'z', ctx);
			check_at(STR_FN_STRNCASECMP, ka, kb, ua, ub, n[i], 0, ctx);
			check_at(STR_FN_STRNSTR, ka, kn, ua, ln, n[i], 0, ctx);
		}
		ln = at_guard(2, "Ab", 2, true);
		for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
			if (n[i] <= len)
				check_at(STR_FN_STRNCASESTR, ka, kf, ua, ln, n[i], 0, ctx);
	}
}

/* Empty strings, and the guard page itself as a string of bound 0. */
static void empties(void)
{
	static const char *const pairs[][2] = {{"", ""}, {"", "a"}, {"a", ""}, {"ab", "b"}};
	static const size_t n[] = {0, 1, 2, SIZE_MAX};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *s = pairs[i][0], *t = pairs[i][1];
		char *ka = put(A + 64, s), *kb = put(B + 64 + i, t);
		char *la = at_guard(0, s, strlen(s), true), *lb = at_guard(1, t, strlen(t), true);

		for (int fn = 0; fn < STR_FN_COUNT; fn++)
			for (size_t j = 0; j < sizeof(n) / sizeof(n[0]); j++)
				check_at(fn, ka, kb, la, lb, n[j], j ? 'a' : 0, "empty strings");
	}
	/* A string of bound 0 may be unreadable: the kernel reads none of it. */
	char *g = guard_end[0], *k = A + 64, *t = put(B + 64, "a");
	char *lt = at_guard(1, "a", 1, true);

	check_at(STR_FN_STRNLEN, k, NULL, g, NULL, 0, 0, "unreadable, n = 0");
	check_at(STR_FN_STRNCHR, k, NULL, g, NULL, 0, 'a', "unreadable, n = 0");
	check_at(STR_FN_STRNCASECMP, k, k, g, g, 0, 0, "unreadable, n = 0");
	check_at(STR_FN_STRNSTR, k, t, g, lt, 0, 0, "unreadable, n = 0");
	check_at(STR_FN_STRNCASESTR, k, t, g, lt, 0, 0, "unreadable, n = 0");
	t = put(B + 64, "");
	lt = at_guard(1, "", 0, true);
	check_at(STR_FN_STRNSTR, k, t, g, lt, 0, 0, "unreadable, n = 0");
}

/* strcasecmp on every pair of bytes, embedded in case-mixed text. */
static void case_pairs(void)
{
	char *s = A + 64, *t = B + 64 + 5;

	put(s, "xYc?dE");
	put(t, "XyC?De");
	for (int c = 1; c < 256; c++) {
		s[3] = (char)c;
		for (int d = 1; d < 256; d++) {
			t[3] = (char)d;
			check(STR_FN_STRCASECMP, s, t, 0, 0, "byte pair");
			if (d == c || d == (c ^ 0x20))
				check(STR_FN_STRNCASECMP, s, t, 5, 0, "byte pair");
		}
	}
	/* case-only differences all along, to and past the limit */
	static const size_t ls[] = {65535, 65536, 65537};

	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		for (size_t j = 0; j < ls[i]; j++)
			hs[j] = (char)("aB\xe0\xde"[j % 4]);
		memcpy(ns, hs, ls[i]);
		case_mix(ns, ls[i], 0);
		char *ka = in_buf(A, hs, ls[i]), *kb = in_buf(B, ns, ls[i]);

		check(STR_FN_STRCASECMP, ka, kb, 0, 0, "case-only, long");
		check(STR_FN_STRNCASECMP, ka, kb, ls[i], 0, "case-only, long");
		check_at(STR_FN_STRCASECMP, ka, kb, at_guard(0, hs, ls[i], true),
			 at_guard(1, ns, ls[i], true), 0, 0, "case-only, long, at the guard");
	}
}

void adversarial_strings(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} parts[] = {{"empty", empties},	 {"case pairs", case_pairs}, {"bounds", bounds},
		     {"limits", limits},	 {"two-way worst", two_way_worst}};

	guards_init();
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		parts[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("adversarial: %s, %.2f s\n", parts[i].name,
		       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
	}
}
