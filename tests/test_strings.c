/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The string functions against the byte-at-a-time reference
 * (strings_reference.c), for every implementation this CPU runs (AVX2, SSE2,
 * SWAR) and for the public, dispatched entry points: known answers and the
 * kernel's edge cases, random strings of every length 0-300 at every
 * alignment, pairs of alignments for the two-string functions, strings
 * beyond 65536 bytes, substring searches around that bound, and strings that
 * end (or whose bound ends) right before a PROT_NONE page, or start right
 * after one, so any read outside what the string reaches faults.  Set
 * BPFMAP_TEST_SEED to replay a random run, and BPFMAP_TEST_FILTER (a cmocka
 * pattern, e.g. "*bound*") to run only some of the tests.
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
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "strings/str_internal.h"
#include "strings_reference.h"
#include "test_rng.h"
#include "strings_impls.h"

#define BIG 70000 /* a length past the kernel's 65536-byte limit */
#define STR_MIN(a, b) ((a) < (b) ? (a) : (b))

/* ---------------------------------------------------------------------- */
/* The implementations under test                                           */


static const struct str_ops *impls[8];
static int n_impls;

enum fn {
	F_STRCMP,
	F_STRCASECMP,
	F_STRNCASECMP,
	F_STRCHR,
	F_STRCHRNUL,
	F_STRNCHR,
	F_STRRCHR,
	F_STRLEN,
	F_STRNLEN,
	F_STRSPN,
	F_STRCSPN,
	F_STRSTR,
	F_STRNSTR,
	F_STRCASESTR,
	F_STRNCASESTR,
	F_COUNT
};

static const char *const fn_names[F_COUNT] = {
	"strcmp",  "strcasecmp", "strncasecmp", "strchr", "strchrnul",
	"strnchr", "strrchr",    "strlen",      "strnlen", "strspn",
	"strcspn", "strstr",     "strnstr",     "strcasestr", "strncasestr",
};

/* One call: a and b are the string arguments, n the size_t, c the char/int. */
struct call {
	enum fn fn;
	const char *a, *b;
	size_t n;
	int c;
};

static int run(const struct str_ops *o, const struct call *k)
{
	switch (k->fn) {
	case F_STRCMP:
		return o->strcmp(k->a, k->b);
	case F_STRCASECMP:
		return o->strcasecmp(k->a, k->b);
	case F_STRNCASECMP:
		return o->strncasecmp(k->a, k->b, k->n);
	case F_STRCHR:
		return o->strchr(k->a, (char)k->c);
	case F_STRCHRNUL:
		return o->strchrnul(k->a, (char)k->c);
	case F_STRNCHR:
		return o->strnchr(k->a, k->n, (char)k->c);
	case F_STRRCHR:
		return o->strrchr(k->a, k->c);
	case F_STRLEN:
		return o->strlen(k->a);
	case F_STRNLEN:
		return o->strnlen(k->a, k->n);
	case F_STRSPN:
		return o->strspn(k->a, k->b);
	case F_STRCSPN:
		return o->strcspn(k->a, k->b);
	case F_STRSTR:
		return o->strstr(k->a, k->b);
	case F_STRNSTR:
		return o->strnstr(k->a, k->b, k->n);
	case F_STRCASESTR:
		return o->strcasestr(k->a, k->b);
	case F_STRNCASESTR:
		return o->strncasestr(k->a, k->b, k->n);
	default:
		abort();
	}
}

static int run_ref(const struct call *k)
{
	static const struct str_ops ref_ops = {
		.name = "reference",
		.strcmp = ref_strcmp,
		.strcasecmp = ref_strcasecmp,
		.strncasecmp = ref_strncasecmp,
		.strchr = ref_strchr,
		.strchrnul = ref_strchrnul,
		.strnchr = ref_strnchr,
		.strrchr = ref_strrchr,
		.strlen = ref_strlen,
		.strnlen = ref_strnlen,
		.strspn = ref_strspn,
		.strcspn = ref_strcspn,
		.strstr = ref_strstr,
		.strnstr = ref_strnstr,
		.strcasestr = ref_strcasestr,
		.strncasestr = ref_strncasestr,
	};

	return run(&ref_ops, k);
}

/* ---------------------------------------------------------------------- */
/* Checking                                                                 */

static unsigned long n_failures, n_checks;

static void show_string(char *out, size_t size, const char *s)
{
	size_t o = 0, i;

	if (!s) {
		snprintf(out, size, "NULL");
		return;
	}
	for (i = 0; i < 48 && s[i] && o + 5 < size; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
	}
	out[o] = 0;
	if (i == 48 && s[i])
		snprintf(out + o, size - o, "...");
}

static size_t shown_len(const char *s)
{
	return s ? strnlen(s, BIG + 10) : 0;
}

static void report(const char *impl, const struct call *k, int got, int want, const char *ctx)
{
	char sa[256], sb[256];

	if (++n_failures > 25)
		return;
	show_string(sa, sizeof(sa), k->a);
	show_string(sb, sizeof(sb), k->b);
	print_error("%s/%s: got %d, want %d  [%s] a=\"%s\" (len %zu, addr%%64=%u) "
		    "b=\"%s\" (len %zu, addr%%64=%u) n=%zu c=%d\n",
		    impl, fn_names[k->fn], got, want, ctx, sa, shown_len(k->a),
		    (unsigned)((uintptr_t)k->a & 63), sb, shown_len(k->b),
		    (unsigned)((uintptr_t)k->b & 63), k->n, k->c);
}

/* Every implementation must give the reference's answer. */
static int check(const struct call *k, const char *ctx)
{
	int want = run_ref(k);

	for (int i = 0; i < n_impls; i++) {
		int got = run(impls[i], k);

		n_checks++;
		if (got != want)
			report(impls[i]->name, k, got, want, ctx);
	}
	return want;
}

/* ... and the reference must give the known answer. */
static void check_known(const struct call *k, int expect, const char *ctx)
{
	int want = check(k, ctx);

	if (want != expect) {
		n_failures++;
		print_error("reference/%s: got %d, known answer %d [%s]\n", fn_names[k->fn], want,
			    expect, ctx);
	}
}

#define CALL(f, ...) (&(struct call){.fn = (f), __VA_ARGS__})

static void finish(void)
{
	if (n_failures)
		print_error("%lu of %lu checks failed\n", n_failures, n_checks);
	unsigned long f = n_failures;

	n_failures = 0;
	n_checks = 0;
	assert_int_equal(f, 0);
}

/* ---------------------------------------------------------------------- */
/* Random strings                                                           */

/* rnd(), rnd_below(): test_rng.h, seeded in setup_all(). */

/* Alphabets: tiny (many partial matches), letters, case pairs with Latin-1,
 * and every non-zero byte. */
static const char *const alphabets[] = {
	"ab",
	"abcdefghijklmnopqrstuvwxyz",
	"aAbB\xc0\xe0\xd7\xf7\xde\xfe\xdf\xff",
	NULL,
};
#define N_ALPHABETS 4

static char rnd_char(int alpha)
{
	if (!alphabets[alpha])
		return (char)(1 + rnd_below(255));
	return alphabets[alpha][rnd_below(strlen(alphabets[alpha]))];
}

static void fill(char *p, size_t len, int alpha)
{
	for (size_t i = 0; i < len; i++)
		p[i] = rnd_char(alpha);
}

/* Random bytes, NULs and likely search targets included: the surroundings
 * of a string, which must never change an answer. */
static void fill_noise(char *p, size_t len)
{
	static const char likely[] = "aAbB\xc0\xe0\x80 ";

	for (size_t i = 0; i < len; i++) {
		uint64_t r = rnd();

		p[i] = (r & 3) == 0 ? 0 : (r & 3) == 1 ? likely[(r >> 8) % 8] : (char)(r >> 16);
	}
}

static unsigned char swap_case(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return c ^ 0x20;
	if (c >= 0xc0 && c != 0xd7 && c != 0xf7 && c != 0xdf && c != 0xff)
		return c ^ 0x20;
	return c;
}

/* Copy len bytes of src, swapping the case of some letters. */
static void copy_swapped(char *dst, const char *src, size_t len, bool swap)
{
	for (size_t i = 0; i < len; i++)
		dst[i] = swap && (rnd() & 1) ? (char)swap_case((unsigned char)src[i]) : src[i];
}

/* 64-byte aligned scratch buffers. */
#define BUF_SIZE (BIG + 4096 - BIG % 64) /* a multiple of 64 */
static char *buf1, *buf2, *buf3;

static int setup_all(void **state)
{
	(void)state;
	n_impls = strings_impls_setup("string tests", 0x9e3779b97f4a7c15ULL, impls,
				      &strings_public_ops);
	print_message(" (public calls %s)\n", bpfmap_str_ops()->name);
	buf1 = aligned_alloc(64, BUF_SIZE);
	buf2 = aligned_alloc(64, BUF_SIZE);
	buf3 = aligned_alloc(64, BUF_SIZE);
	return buf1 && buf2 && buf3 ? 0 : -1;
}

static int teardown_all(void **state)
{
	(void)state;
	free(buf1);
	free(buf2);
	free(buf3);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Known answers and the kernel's edge cases                                */

static void test_fold_table(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++)
		assert_int_equal(bpfmap_str_fold[c], ref_fold((unsigned char)c));
	assert_int_equal(ref_fold('A'), 'a');
	assert_int_equal(ref_fold('Z'), 'z');
	assert_int_equal(ref_fold('@'), '@');
	assert_int_equal(ref_fold('['), '[');
	assert_int_equal(ref_fold(0xc0), 0xe0);
	assert_int_equal(ref_fold(0xde), 0xfe);
	assert_int_equal(ref_fold(0xd7), 0xd7); /* multiplication sign */
	assert_int_equal(ref_fold(0xdf), 0xdf); /* sharp s: lower case already */
	assert_int_equal(ref_fold(0xbf), 0xbf);

	/* Every pair of one-byte strings, folded and not. */
	char a[2] = {0}, b[2] = {0};

	for (int x = 1; x < 256; x++) {
		for (int y = 0; y < 256; y++) {
			a[0] = (char)x;
			b[0] = (char)y;
			check(CALL(F_STRCASECMP, .a = a, .b = b), "byte pair");
			check(CALL(F_STRCMP, .a = a, .b = b), "byte pair");
			check(CALL(F_STRNCASECMP, .a = a, .b = b, .n = 1), "byte pair");
			check(CALL(F_STRCASESTR, .a = a, .b = b), "byte pair");
		}
	}
	finish();
}

static void test_known_answers(void **state)
{
	(void)state;
	const char *const N = NULL;

	/* Comparisons: -1/0/1, unsigned bytes, folding. */
	check_known(CALL(F_STRCMP, .a = "a", .b = "b"), -1, "kat");
	check_known(CALL(F_STRCMP, .a = "b", .b = "a"), 1, "kat");
	check_known(CALL(F_STRCMP, .a = "abc", .b = "abc"), 0, "kat");
	check_known(CALL(F_STRCMP, .a = "", .b = ""), 0, "kat");
	check_known(CALL(F_STRCMP, .a = "", .b = "a"), -1, "kat");
	check_known(CALL(F_STRCMP, .a = "abc", .b = "ab"), 1, "kat");
	check_known(CALL(F_STRCMP, .a = "\x80", .b = "\x7f"), 1, "kat: unsigned");
	check_known(CALL(F_STRCMP, .a = "a", .b = "A"), 1, "kat");
	check_known(CALL(F_STRCASECMP, .a = "HeLLo", .b = "hello"), 0, "kat");
	check_known(CALL(F_STRCASECMP, .a = "A", .b = "_"), 1, "kat: 'a' > '_'");
	check_known(CALL(F_STRCASECMP, .a = "\xc0\xde", .b = "\xe0\xfe"), 0, "kat: Latin-1");
	check_known(CALL(F_STRCASECMP, .a = "\xd7", .b = "\xf7"), -1, "kat: 0xd7 not a letter");
	check_known(CALL(F_STRCASECMP, .a = "\xdf", .b = "\xff"), -1, "kat");
	check_known(CALL(F_STRNCASECMP, .a = "abcX", .b = "ABCy", .n = 3), 0, "kat");
	check_known(CALL(F_STRNCASECMP, .a = "abcX", .b = "ABCy", .n = 4), -1, "kat");
	check_known(CALL(F_STRNCASECMP, .a = "a", .b = "b", .n = 0), 0, "kat: len 0");
	check_known(CALL(F_STRNCASECMP, .a = "ab", .b = "AB", .n = 100), 0, "kat");

	/* Character searches: the NUL is part of the string. */
	check_known(CALL(F_STRCHR, .a = "hello", .c = 'l'), 2, "kat");
	check_known(CALL(F_STRCHR, .a = "hello", .c = 0), 5, "kat: finds the NUL");
	check_known(CALL(F_STRCHR, .a = "hello", .c = 'z'), -ENOENT, "kat");
	check_known(CALL(F_STRCHR, .a = "a\x80", .c = (char)0x80), 1, "kat: high byte");
	check_known(CALL(F_STRCHRNUL, .a = "hello", .c = 'z'), 5, "kat");
	check_known(CALL(F_STRCHRNUL, .a = "hello", .c = 'e'), 1, "kat");
	check_known(CALL(F_STRNCHR, .a = "hello", .n = 2, .c = 'l'), -ENOENT, "kat");
	check_known(CALL(F_STRNCHR, .a = "hello", .n = 3, .c = 'l'), 2, "kat");
	check_known(CALL(F_STRNCHR, .a = "hello", .n = 0, .c = 'h'), -ENOENT, "kat: count 0");
	check_known(CALL(F_STRNCHR, .a = "hi", .n = 10, .c = 0), 2, "kat");
	check_known(CALL(F_STRNCHR, .a = "hi", .n = 2, .c = 0), -ENOENT, "kat");
	check_known(CALL(F_STRNCHR, .a = "hi", .n = 10, .c = 'x'), -ENOENT, "kat");
	check_known(CALL(F_STRRCHR, .a = "hello", .c = 'l'), 3, "kat");
	check_known(CALL(F_STRRCHR, .a = "hello", .c = 0), 5, "kat");
	check_known(CALL(F_STRRCHR, .a = "hello", .c = 'z'), -ENOENT, "kat");
	check_known(CALL(F_STRRCHR, .a = "a\x80", .c = 0x80), 1, "kat: int 0x80");
	check_known(CALL(F_STRRCHR, .a = "a\x80", .c = -128), -ENOENT, "kat: int -128");
	check_known(CALL(F_STRRCHR, .a = "abc", .c = 256 + 'a'), -ENOENT, "kat: int > 255");

	/* Lengths. */
	check_known(CALL(F_STRLEN, .a = ""), 0, "kat");
	check_known(CALL(F_STRLEN, .a = "abc"), 3, "kat");
	check_known(CALL(F_STRNLEN, .a = "hello", .n = 3), 3, "kat");
	check_known(CALL(F_STRNLEN, .a = "hello", .n = 10), 5, "kat");
	check_known(CALL(F_STRNLEN, .a = "hello", .n = 0), 0, "kat");
	check_known(CALL(F_STRNLEN, .a = "hello", .n = SIZE_MAX), 5, "kat");

	/* Spans. */
	check_known(CALL(F_STRSPN, .a = "aabbc", .b = "ab"), 4, "kat");
	check_known(CALL(F_STRSPN, .a = "", .b = "ab"), 0, "kat");
	check_known(CALL(F_STRSPN, .a = "abc", .b = ""), 0, "kat: empty accept");
	check_known(CALL(F_STRSPN, .a = "abcdefghij", .b = "jihgfedcba"), 10, "kat: big set");
	check_known(CALL(F_STRSPN, .a = "\xff\x80\x01x", .b = "\x01\x80\xff"), 3, "kat");
	check_known(CALL(F_STRCSPN, .a = "hello world", .b = " "), 5, "kat");
	check_known(CALL(F_STRCSPN, .a = "abc", .b = ""), 3, "kat: empty reject");
	check_known(CALL(F_STRCSPN, .a = "hello world", .b = "0123456789w"), 6, "kat: big set");
	check_known(CALL(F_STRCSPN, .a = "", .b = "x"), 0, "kat");

	/* Substrings. */
	check_known(CALL(F_STRSTR, .a = "hello world", .b = "o w"), 4, "kat");
	check_known(CALL(F_STRSTR, .a = "abc", .b = ""), 0, "kat: empty needle");
	check_known(CALL(F_STRSTR, .a = "", .b = ""), 0, "kat");
	check_known(CALL(F_STRSTR, .a = "", .b = "a"), -ENOENT, "kat");
	check_known(CALL(F_STRSTR, .a = "abc", .b = "abcd"), -ENOENT, "kat");
	check_known(CALL(F_STRSTR, .a = "aab", .b = "ab"), 1, "kat");
	check_known(CALL(F_STRSTR, .a = "abab\xe9", .b = "b\xe9"), 3, "kat");
	check_known(CALL(F_STRNSTR, .a = "hello", .b = "llo", .n = 5), 2, "kat: ends at the bound");
	check_known(CALL(F_STRNSTR, .a = "hello", .b = "llo", .n = 4), -ENOENT, "kat");
	check_known(CALL(F_STRNSTR, .a = "hello", .b = "", .n = 0), 0, "kat: empty needle, len 0");
	check_known(CALL(F_STRNSTR, .a = "hello", .b = "h", .n = 0), -ENOENT, "kat: len 0");
	check_known(CALL(F_STRNSTR, .a = "hello", .b = "hello", .n = 5), 0, "kat");
	check_known(CALL(F_STRNSTR, .a = "hello", .b = "hello!", .n = 100), -ENOENT, "kat");
	check_known(CALL(F_STRCASESTR, .a = "Hello World", .b = "WORLD"), 6, "kat");
	check_known(CALL(F_STRCASESTR, .a = "x\xc9t\xc9", .b = "\xe9T\xe9"), 1, "kat: Latin-1");
	check_known(CALL(F_STRCASESTR, .a = "a\xd7", .b = "\xf7"), -ENOENT, "kat");
	check_known(CALL(F_STRNCASESTR, .a = "Hello World", .b = "WORLD", .n = 10), -ENOENT, "kat");
	check_known(CALL(F_STRNCASESTR, .a = "Hello World", .b = "WORLD", .n = 11), 6, "kat");
	check_known(CALL(F_STRNCASESTR, .a = "Hello World", .b = "", .n = 0), 0, "kat");

	/* NULL anywhere: -ERANGE before anything else. */
	check_known(CALL(F_STRCMP, .a = N, .b = "a"), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCMP, .a = "a", .b = N), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCASECMP, .a = N, .b = N), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRNCASECMP, .a = N, .b = "a", .n = 0), -ERANGE, "kat: NULL, len 0");
	check_known(CALL(F_STRNCASECMP, .a = "a", .b = N, .n = 5), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCHR, .a = N, .c = 'a'), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCHRNUL, .a = N, .c = 'a'), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRNCHR, .a = N, .n = 0, .c = 'a'), -ERANGE, "kat: NULL, count 0");
	check_known(CALL(F_STRRCHR, .a = N, .c = 'a'), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRLEN, .a = N), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRNLEN, .a = N, .n = 0), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRSPN, .a = N, .b = "a"), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRSPN, .a = "a", .b = N), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCSPN, .a = N, .b = "a"), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCSPN, .a = "", .b = N), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRSTR, .a = N, .b = ""), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRSTR, .a = "a", .b = N), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRNSTR, .a = N, .b = "", .n = 0), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRNSTR, .a = "", .b = N, .n = 0), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRCASESTR, .a = N, .b = "a"), -ERANGE, "kat: NULL");
	check_known(CALL(F_STRNCASESTR, .a = "a", .b = N, .n = 1), -ERANGE, "kat: NULL");
	finish();
}

/* Fill p[0, len) with c and terminate it. */
static char *make(char *p, size_t len, char c)
{
	memset(p, c, len);
	p[len] = 0;
	return p;
}

static void test_long_strings(void **state)
{
	(void)state;
	char *a = buf1, *b = buf2, *n = buf3;
	const size_t M = REF_STR_MAX;

	/* Lengths at the limit. */
	check_known(CALL(F_STRLEN, .a = make(a, M - 1, 'a')), (int)M - 1, "65535 chars");
	check_known(CALL(F_STRLEN, .a = make(a, M, 'a')), -E2BIG, "65536 chars");
	check_known(CALL(F_STRLEN, .a = make(a, BIG, 'a')), -E2BIG, "long");
	check_known(CALL(F_STRNLEN, .a = a, .n = M), -E2BIG, "long, count 65536");
	check_known(CALL(F_STRNLEN, .a = a, .n = M - 1), (int)M - 1, "long, count 65535");
	check_known(CALL(F_STRNLEN, .a = a, .n = SIZE_MAX), -E2BIG, "long, count max");
	check_known(CALL(F_STRNLEN, .a = make(a, M - 1, 'a'), .n = SIZE_MAX), (int)M - 1, "65535");

	/* Character searches. */
	make(a, BIG, 'a');
	check_known(CALL(F_STRNCHR, .a = a, .n = M, .c = 'b'), -E2BIG, "long, count 65536");
	check_known(CALL(F_STRNCHR, .a = a, .n = M - 1, .c = 'b'), -ENOENT, "long, count 65535");
	check_known(CALL(F_STRNCHR, .a = a, .n = SIZE_MAX, .c = 'b'), -E2BIG, "long");
	check_known(CALL(F_STRCHR, .a = a, .c = 'b'), -E2BIG, "long");
	check_known(CALL(F_STRCHRNUL, .a = a, .c = 'b'), -E2BIG, "long");
	check_known(CALL(F_STRRCHR, .a = a, .c = 'a'), -E2BIG, "long");
	a[M - 1] = 'b';
	check_known(CALL(F_STRCHR, .a = a, .c = 'b'), (int)M - 1, "long, found last");
	check_known(CALL(F_STRCHRNUL, .a = a, .c = 'b'), (int)M - 1, "long, found last");
	check_known(CALL(F_STRNCHR, .a = a, .n = M, .c = 'b'), (int)M - 1, "found last");
	check_known(CALL(F_STRNCHR, .a = a, .n = M - 1, .c = 'b'), -ENOENT, "just past count");
	a[M - 1] = 'a';
	a[M] = 'b';
	check_known(CALL(F_STRCHR, .a = a, .c = 'b'), -E2BIG, "long, past the limit");
	make(a, M - 1, 'a');
	check_known(CALL(F_STRRCHR, .a = a, .c = 'a'), (int)M - 2, "65535 chars");
	check_known(CALL(F_STRRCHR, .a = a, .c = 0), (int)M - 1, "65535 chars");

	/* Comparisons. */
	make(a, BIG, 'x');
	make(b, BIG, 'x');
	check_known(CALL(F_STRCMP, .a = a, .b = b), -E2BIG, "long equal");
	check_known(CALL(F_STRCASECMP, .a = a, .b = b), -E2BIG, "long equal");
	check_known(CALL(F_STRNCASECMP, .a = a, .b = b, .n = M - 1), 0, "long, len 65535");
	check_known(CALL(F_STRNCASECMP, .a = a, .b = b, .n = M), -E2BIG, "long, len 65536");
	check_known(CALL(F_STRNCASECMP, .a = a, .b = b, .n = SIZE_MAX), -E2BIG, "long, len max");
	b[M - 1] = 'y';
	check_known(CALL(F_STRCMP, .a = a, .b = b), -1, "long, differ at 65535");
	check_known(CALL(F_STRNCASECMP, .a = a, .b = b, .n = M - 1), 0, "differ at 65535");
	b[M - 1] = 'x';
	b[M] = 'y';
	check_known(CALL(F_STRCMP, .a = a, .b = b), -E2BIG, "long, differ at 65536");
	check_known(CALL(F_STRCMP, .a = a, .b = "xx"), 1, "long vs short");
	check_known(CALL(F_STRCMP, .a = make(a, M - 1, 'x'), .b = make(b, M - 1, 'x')), 0,
		    "65535 equal");

	/* Spans: the string's limit, and a set string without a NUL in range. */
	make(a, BIG, 'a');
	check_known(CALL(F_STRSPN, .a = a, .b = "a"), -E2BIG, "long span");
	check_known(CALL(F_STRCSPN, .a = a, .b = "b"), -E2BIG, "long span");
	check_known(CALL(F_STRSPN, .a = "aab", .b = a), -E2BIG, "long accept, 'b' absent");
	check_known(CALL(F_STRSPN, .a = "aa", .b = a), 2, "long accept, s ends");
	check_known(CALL(F_STRCSPN, .a = "bcd", .b = a), -E2BIG, "long reject, s[0] absent");
	check_known(CALL(F_STRCSPN, .a = "abc", .b = a), 0, "long reject, s[0] present");
	check_known(CALL(F_STRCSPN, .a = "", .b = a), 0, "long reject, empty s");
	check_known(CALL(F_STRSPN, .a = "", .b = a), 0, "long accept, empty s");
	a[M - 1] = 'b';
	check_known(CALL(F_STRSPN, .a = "aabz", .b = a), -E2BIG, "long accept");
	check_known(CALL(F_STRCSPN, .a = "zzb", .b = a), -E2BIG, "long reject");
	check_known(CALL(F_STRCSPN, .a = "b", .b = a), 0, "long reject, found last");
	make(a, M - 1, 'a');
	check_known(CALL(F_STRSPN, .a = "aab", .b = a), 2, "65535-byte accept");
	make(b, BIG, 'a');
	b[M - 2] = 'c';
	check_known(CALL(F_STRSPN, .a = b, .b = "a"), (int)M - 2, "span to 65534");
	check_known(CALL(F_STRCSPN, .a = b, .b = "c"), (int)M - 2, "span to 65534");

	/* Substrings: a match must end within the first 65536 bytes. */
	make(a, BIG, 'a');
	memcpy(a + M - 3, "xyz", 3);
	check_known(CALL(F_STRSTR, .a = a, .b = "xyz"), (int)M - 3, "match ends at 65536");
	check_known(CALL(F_STRNSTR, .a = a, .b = "xyz", .n = M), (int)M - 3, "ends at len");
	check_known(CALL(F_STRNSTR, .a = a, .b = "xyz", .n = M - 1), -ENOENT, "past len");
	check_known(CALL(F_STRNSTR, .a = a, .b = "xyz", .n = BIG), (int)M - 3, "len > 65536");
	memcpy(a + M - 3, "axyz", 4);
	check_known(CALL(F_STRSTR, .a = a, .b = "xyz"), -ENOENT, "match ends at 65537");
	check_known(CALL(F_STRNSTR, .a = a, .b = "xyz", .n = BIG), (int)M - 2, "len > 65536");
	make(a, BIG, 'a');
	check_known(CALL(F_STRSTR, .a = a, .b = "b"), -E2BIG, "long haystack, absent");
	check_known(CALL(F_STRSTR, .a = a, .b = "ab"), -ENOENT, "partial match at 65536");
	check_known(CALL(F_STRNSTR, .a = a, .b = "ab", .n = BIG), -E2BIG, "len > 65536");
	check_known(CALL(F_STRNSTR, .a = a, .b = "ab", .n = M), -ENOENT, "partial at len");
	check_known(CALL(F_STRNSTR, .a = a, .b = "ab", .n = M + 1), -E2BIG, "partial past 65536");
	check_known(CALL(F_STRSTR, .a = a, .b = ""), 0, "long haystack, empty needle");
	check_known(CALL(F_STRCASESTR, .a = a, .b = "AB"), -ENOENT, "partial match at 65536");
	make(a, M, 'a');
	check_known(CALL(F_STRSTR, .a = a, .b = "b"), -E2BIG, "65536-byte haystack");
	check_known(CALL(F_STRSTR, .a = a, .b = "ab"), -ENOENT, "65536-byte haystack");
	make(a, M - 1, 'a');
	check_known(CALL(F_STRSTR, .a = a, .b = "b"), -ENOENT, "65535-byte haystack");
	make(n, BIG, 'a');
	check_known(CALL(F_STRSTR, .a = make(a, BIG, 'a'), .b = n), -E2BIG, "long needle matches");
	check_known(CALL(F_STRSTR, .a = "b", .b = n), -ENOENT, "long needle, mismatch");
	check_known(CALL(F_STRSTR, .a = make(a, 100, 'a'), .b = n), -ENOENT,
		    "long needle, haystack ends");
	check_known(CALL(F_STRNSTR, .a = make(a, BIG, 'a'), .b = n, .n = M - 1), -ENOENT,
		    "long needle, bound");
	check_known(CALL(F_STRCASESTR, .a = make(a, BIG, 'A'), .b = n), -E2BIG, "long needle");
	finish();
}

/* ---------------------------------------------------------------------- */
/* Random differential tests                                                */

/* Calls on one string s (len bytes) and a second buffer for s2. */
static void random_single(const char *s, size_t len, int alpha, const char *ctx)
{
	size_t pos = rnd_below(len + 1);
	char present = len ? s[rnd_below(len)] : 'a';
	char absent = alpha == 0 ? 'z' : (char)0xfe;
	const int chars[] = {present, absent, 0, (char)0x80, 'a', 'A'};
	const size_t counts[] = {0, pos, len, len + 1, REF_STR_MAX, SIZE_MAX};

	check(CALL(F_STRLEN, .a = s), ctx);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		check(CALL(F_STRNLEN, .a = s, .n = counts[i]), ctx);
	for (size_t i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
		check(CALL(F_STRCHR, .a = s, .c = chars[i]), ctx);
		check(CALL(F_STRCHRNUL, .a = s, .c = chars[i]), ctx);
		check(CALL(F_STRRCHR, .a = s, .c = (unsigned char)chars[i]), ctx);
		check(CALL(F_STRRCHR, .a = s, .c = (signed char)chars[i]), ctx);
		check(CALL(F_STRNCHR, .a = s, .n = counts[rnd_below(6)], .c = chars[i]), ctx);
		check(CALL(F_STRNCHR, .a = s, .n = pos, .c = chars[i]), ctx);
	}
}

/* Calls on s and a second string t. */
static void random_pair(const char *s, size_t slen, const char *t, size_t tlen, const char *ctx)
{
	const size_t ns[] = {0, rnd_below(slen + 2), slen, slen + 1, REF_STR_MAX, SIZE_MAX};
	size_t n = ns[rnd_below(6)];

	check(CALL(F_STRCMP, .a = s, .b = t), ctx);
	check(CALL(F_STRCMP, .a = t, .b = s), ctx);
	check(CALL(F_STRCASECMP, .a = s, .b = t), ctx);
	check(CALL(F_STRNCASECMP, .a = s, .b = t, .n = n), ctx);
	check(CALL(F_STRNCASECMP, .a = t, .b = s, .n = rnd_below(slen + 2)), ctx);
	if (tlen <= 40) {
		check(CALL(F_STRSTR, .a = s, .b = t), ctx);
		check(CALL(F_STRCASESTR, .a = s, .b = t), ctx);
		check(CALL(F_STRNSTR, .a = s, .b = t, .n = n), ctx);
		check(CALL(F_STRNSTR, .a = s, .b = t, .n = rnd_below(slen + 2)), ctx);
		check(CALL(F_STRNCASESTR, .a = s, .b = t, .n = n), ctx);
		check(CALL(F_STRNCASESTR, .a = s, .b = t, .n = rnd_below(slen + 2)), ctx);
		check(CALL(F_STRSPN, .a = s, .b = t), ctx);
		check(CALL(F_STRCSPN, .a = s, .b = t), ctx);
	}
}

/*
 * Make t (at tp) a relative of s: equal, equal but case-swapped, differing
 * at one place, a prefix or an extension, a piece of s (a needle that
 * occurs), or unrelated; returns its length.
 */
static size_t relative(char *tp, const char *s, size_t slen, int alpha)
{
	size_t tlen, at;

	switch (rnd_below(8)) {
	case 0:
		tlen = slen;
		memcpy(tp, s, slen);
		break;
	case 1:
		tlen = slen;
		copy_swapped(tp, s, slen, true);
		break;
	case 2:
		tlen = slen;
		memcpy(tp, s, slen);
		if (slen) {
			at = rnd_below(slen);
			tp[at] = rnd_char(N_ALPHABETS - 1);
		}
		break;
	case 3:
		tlen = rnd_below(slen + 1);
		memcpy(tp, s, tlen);
		break;
	case 4:
		tlen = slen + 1 + rnd_below(8);
		memcpy(tp, s, slen);
		fill(tp + slen, tlen - slen, alpha);
		break;
	case 5:
	case 6: /* a needle taken from s, often its tail */
		tlen = rnd_below(STR_MIN(slen, 30) + 1);
		at = rnd() & 1 ? slen - tlen : rnd_below(slen - tlen + 1);
		copy_swapped(tp, s + at, tlen, rnd() & 1);
		break;
	default:
		tlen = rnd_below(12);
		fill(tp, tlen, rnd_below(N_ALPHABETS));
		break;
	}
	tp[tlen] = 0;
	return tlen;
}

static void test_random_lengths_alignments(void **state)
{
	(void)state;
	char ctx[64];

	for (size_t len = 0; len <= 300; len++) {
		for (size_t al = 0; al < 64; al++) {
			int alpha = (int)rnd_below(N_ALPHABETS);
			char *s = buf1 + 64 + al;
			size_t tal = rnd_below(64);
			char *t = buf2 + 64 + tal;

			/* Noise around both strings, then the strings. */
			fill_noise(buf1, 512);
			fill_noise(buf2, 512);
			fill(s, len, alpha);
			s[len] = 0;
			snprintf(ctx, sizeof(ctx), "random len %zu align %zu", len, al);
			random_single(s, len, alpha, ctx);
			size_t tlen = relative(t, s, len, alpha);

			random_pair(s, len, t, tlen, ctx);
		}
	}
	finish();
}

/* Every pair of alignments for the two-string functions, at lengths around
 * the block sizes. */
static void test_alignment_pairs(void **state)
{
	(void)state;
	static const size_t lens[] = {0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 257};
	char ctx[64];

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t len = lens[li];

		for (size_t a1 = 0; a1 < 64; a1++) {
			for (size_t a2 = 0; a2 < 64; a2++) {
				char *s = buf1 + 64 + a1, *t = buf2 + 64 + a2;
				int alpha = (int)rnd_below(N_ALPHABETS);

				fill_noise(buf1, 448);
				fill_noise(buf2, 448);
				fill(s, len, alpha);
				s[len] = 0;
				snprintf(ctx, sizeof(ctx), "len %zu align %zu/%zu", len, a1, a2);
				/* equal, one difference late, case-swapped */
				memcpy(t, s, len + 1);
				check(CALL(F_STRCMP, .a = s, .b = t), ctx);
				check(CALL(F_STRNCASECMP, .a = s, .b = t, .n = len), ctx);
				if (len) {
					t[len - 1 - rnd_below(STR_MIN(len, 4))] ^= 0x01;
					check(CALL(F_STRCMP, .a = s, .b = t), ctx);
					check(CALL(F_STRCASECMP, .a = t, .b = s), ctx);
				}
				copy_swapped(t, s, len, true);
				t[len] = 0;
				check(CALL(F_STRCASECMP, .a = s, .b = t), ctx);
				/* a needle from the end of s */
				size_t nl = STR_MIN(len, 1 + rnd_below(20));
				memcpy(t, s + len - nl, nl);
				t[nl] = 0;
				check(CALL(F_STRSTR, .a = s, .b = t), ctx);
				check(CALL(F_STRNCASESTR, .a = s, .b = t, .n = len - rnd_below(2)), ctx);
				check(CALL(F_STRSPN, .a = s, .b = t), ctx);
				check(CALL(F_STRCSPN, .a = s, .b = t), ctx);
			}
		}
	}
	finish();
}

/* A needle cut from every position of haystacks of every length up to 80,
 * at several alignments: every answer index, every partial match at the end. */
static void test_every_needle_position(void **state)
{
	(void)state;
	char ctx[64];

	for (size_t len = 0; len <= 80; len++) {
		for (size_t al = 0; al < 64; al += 7) {
			char *s = buf1 + 64 + al, *t = buf2 + 64 + (al * 5) % 64;
			int alpha = (int)(len % N_ALPHABETS);

			fill_noise(buf1, 256);
			fill_noise(buf2, 256);
			fill(s, len, alpha);
			s[len] = 0;
			for (size_t pos = 0; pos <= len; pos++) {
				for (size_t nl = 1; nl <= 9 && pos + nl <= len + 2; nl++) {
					size_t have = STR_MIN(nl, len - pos);

					memcpy(t, s + pos, have);
					fill(t + have, nl - have, alpha); /* runs past the end */
					t[nl] = 0;
					snprintf(ctx, sizeof(ctx), "needle at %zu/%zu, len %zu", pos, len, nl);
					check(CALL(F_STRSTR, .a = s, .b = t), ctx);
					check(CALL(F_STRNSTR, .a = s, .b = t, .n = pos + nl - 1), ctx);
					check(CALL(F_STRNSTR, .a = s, .b = t, .n = pos + nl), ctx);
					copy_swapped(t, t, nl, true);
					check(CALL(F_STRCASESTR, .a = s, .b = t), ctx);
					check(CALL(F_STRNCASESTR, .a = s, .b = t, .n = pos + nl), ctx);
				}
			}
		}
	}
	finish();
}

/* Sets of every size against strings over the same bytes. */
static void test_sets(void **state)
{
	(void)state;
	char ctx[64];

	for (int round = 0; round < 3000; round++) {
		size_t k = rnd_below(20), len = rnd_below(200), al = rnd_below(64);
		char *set = buf2 + 64 + rnd_below(64), *s = buf1 + 64 + al;
		int alpha = (int)rnd_below(N_ALPHABETS);

		fill_noise(buf1, 512);
		fill(set, k, alpha);
		set[k] = 0;
		fill(s, len, alpha);
		s[len] = 0;
		snprintf(ctx, sizeof(ctx), "set of %zu, len %zu", k, len);
		check(CALL(F_STRSPN, .a = s, .b = set), ctx);
		check(CALL(F_STRCSPN, .a = s, .b = set), ctx);
		/* a long span: s made only of set bytes, then one outside */
		if (k) {
			for (size_t i = 0; i < len; i++)
				s[i] = set[rnd_below(k)];
			check(CALL(F_STRSPN, .a = s, .b = set), ctx);
			s[rnd_below(len + 1)] = (char)0xfd;
			check(CALL(F_STRSPN, .a = s, .b = set), ctx);
			check(CALL(F_STRCSPN, .a = s, .b = "\xfd"), ctx);
		}
	}
	finish();
}

/* Strings around and beyond the 65536-byte limit, at a few alignments. */
static void test_random_long(void **state)
{
	(void)state;
	static const size_t lens[] = {65534, 65535, 65536, 65537, 65540, BIG};
	static const size_t aligns[] = {0, 1, 17, 31, 32, 63};
	char ctx[64];

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (size_t ai = 0; ai < sizeof(aligns) / sizeof(aligns[0]); ai++) {
			size_t len = lens[li];
			int alpha = (int)rnd_below(N_ALPHABETS);
			char *s = buf1 + 64 + aligns[ai], *t = buf2 + 64 + aligns[(ai + 1) % 6];

			fill(s, len, alpha);
			s[len] = 0;
			snprintf(ctx, sizeof(ctx), "long %zu align %zu", len, aligns[ai]);
			random_single(s, len, alpha, ctx);
			check(CALL(F_STRRCHR, .a = s, .c = (unsigned char)s[len - 1]), ctx);
			memcpy(t, s, len + 1);
			check(CALL(F_STRCMP, .a = s, .b = t), ctx);
			t[len - 1] ^= 1;
			check(CALL(F_STRCMP, .a = s, .b = t), ctx);
			check(CALL(F_STRNCASECMP, .a = s, .b = t, .n = len - 1), ctx);
			/* needles from the tail, across the limit */
			for (size_t nl = 1; nl <= 8; nl++) {
				memcpy(t, s + len - nl, nl);
				t[nl] = 0;
				check(CALL(F_STRSTR, .a = s, .b = t), ctx);
				check(CALL(F_STRCASESTR, .a = s, .b = t), ctx);
				check(CALL(F_STRNSTR, .a = s, .b = t, .n = len - 1), ctx);
				memcpy(t, s + REF_STR_MAX - nl / 2 - 1, nl);
				t[nl] = 0;
				check(CALL(F_STRSTR, .a = s, .b = t), ctx);
				check(CALL(F_STRNSTR, .a = s, .b = t, .n = SIZE_MAX), ctx);
			}
			check(CALL(F_STRSPN, .a = s, .b = alphabets[alpha] ? alphabets[alpha] : "ab"),
			      ctx);
			check(CALL(F_STRCSPN, .a = s, .b = "\xfd"), ctx);
		}
	}
	finish();
}

/*
 * Strings in fresh, uninitialised heap blocks, with uninitialised bytes
 * before and after them: under Valgrind (--partial-loads-ok=yes) no answer
 * may depend on those bytes.
 */
static void test_uninitialised_neighbours(void **state)
{
	(void)state;
	char ctx[64];

	for (size_t off = 0; off < 64; off++) {
		for (size_t len = 0; len < 48; len += 1 + len / 8) {
			char *x = malloc(160), *y = malloc(160);
			size_t yoff = rnd_below(64);
			char *s = x + off, *t = y + yoff;
			int alpha = (int)rnd_below(N_ALPHABETS);

			assert_non_null(x);
			assert_non_null(y);
			fill(s, len, alpha);
			s[len] = 0;
			size_t tlen = relative(t, s, len, alpha);

			snprintf(ctx, sizeof(ctx), "uninitialised around, off %zu len %zu", off, len);
			random_single(s, len, alpha, ctx);
			random_pair(s, len, t, tlen, ctx);
			random_pair(t, tlen, s, len, ctx);
			free(x);
			free(y);
		}
	}
	finish();
}

/*
 * Bounded calls on heap blocks of exactly the bound's bytes and no NUL, the
 * fixed-size buffer case: the blocks read around the last bytes reach past
 * the heap block, which Valgrind (--partial-loads-ok=yes) reports as
 * undefined, so no branch may depend on the lanes past the bound.  It did
 * in the scans' first and last blocks (strnlen, strnchr, strnstr,
 * strncasestr), which the answers did not show.
 */
static void test_bounded_heap_blocks(void **state)
{
	(void)state;

	for (size_t n = 1; n <= 300; n += 1 + n / 16) {
		char *s = malloc(n), *t = malloc(n);

		assert_non_null(s);
		assert_non_null(t);
		memset(s, 'a', n);
		memset(t, 'a', n);
		t[n - 1] = 'B';
		for (int i = 0; i < n_impls; i++) {
			const struct str_ops *o = impls[i];

			assert_int_equal(o->strnlen(s, n), ref_strnlen(s, n));
			assert_int_equal(o->strnchr(s, n, 'b'), ref_strnchr(s, n, 'b'));
			assert_int_equal(o->strnchr(t, n, 'B'), ref_strnchr(t, n, 'B'));
			assert_int_equal(o->strnstr(s, "ab", n), ref_strnstr(s, "ab", n));
			assert_int_equal(o->strnstr(t, "aB", n), ref_strnstr(t, "aB", n));
			assert_int_equal(o->strncasestr(s, "Ab", n), ref_strncasestr(s, "Ab", n));
			assert_int_equal(o->strncasestr(t, "ab", n), ref_strncasestr(t, "ab", n));
			assert_int_equal(o->strncasecmp(s, t, n), ref_strncasecmp(s, t, n));
		}
		free(s);
		free(t);
	}
}

/*
 * The unbounded calls on heap blocks of exactly the kernel's 65536 bytes
 * and no NUL, ending at unaligned offsets: every answer is -E2BIG (or, for
 * the searches, -E2BIG / -ENOENT as the reference says), and no branch may
 * depend on the lanes past the block's end.  strspn and strcspn's last
 * block did, with AVX2 under Valgrind (an adversarial helper's finding).
 */
static void test_unbounded_heap_blocks(void **state)
{
	static const size_t tails[] = { 0, 1, 7, 13, 31, 63 };
	const size_t m = 65536;

	(void)state;
	for (size_t j = 0; j < sizeof(tails) / sizeof(tails[0]); j++) {
		char *blk = malloc(m + tails[j]), *s;

		assert_non_null(blk);
		s = blk + tails[j];
		memset(s, 'a', m);
		for (int i = 0; i < n_impls; i++) {
			const struct str_ops *o = impls[i];

			assert_int_equal(o->strlen(s), -E2BIG);
			assert_int_equal(o->strchr(s, 'b'), -E2BIG);
			assert_int_equal(o->strchrnul(s, 'b'), -E2BIG);
			assert_int_equal(o->strrchr(s, 'a'), -E2BIG);
			assert_int_equal(o->strspn(s, "a"), ref_strspn(s, "a"));
			assert_int_equal(o->strspn(s, "abcdefgh"), ref_strspn(s, "abcdefgh"));
			assert_int_equal(o->strcspn(s, "b"), ref_strcspn(s, "b"));
			assert_int_equal(o->strcspn(s, "bcdefghij"), ref_strcspn(s, "bcdefghij"));
			assert_int_equal(o->strstr(s, "b"), ref_strstr(s, "b"));
			assert_int_equal(o->strcasestr(s, "B"), ref_strcasestr(s, "B"));
		}
		free(blk);
	}
}

/* ---------------------------------------------------------------------- */
/* Guard pages: strings and bounds that end right before, or start right   */
/* after, a PROT_NONE page.                                                 */

struct guarded {
	char *map;   /* [guard page][rw bytes][guard page] */
	char *rw;    /* first readable byte */
	size_t size; /* readable bytes */
};

static struct guarded guarded_new(size_t min_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (min_size + page - 1) / page * page;
	struct guarded g;

	g.map = mmap(NULL, size + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		     0);
	assert_true(g.map != MAP_FAILED);
	assert_int_equal(mprotect(g.map, page, PROT_NONE), 0);
	assert_int_equal(mprotect(g.map + page + size, page, PROT_NONE), 0);
	g.rw = g.map + page;
	g.size = size;
	return g;
}

static void guarded_free(struct guarded *g)
{
	munmap(g->map, g->size + 2 * (size_t)sysconf(_SC_PAGESIZE));
}

/* A string of len bytes whose NUL is the last readable byte. */
static char *at_end(struct guarded *g, size_t len)
{
	return g->rw + g->size - len - 1;
}

static void test_guard_pages(void **state)
{
	(void)state;
	struct guarded g1 = guarded_new(BIG + 4096), g2 = guarded_new(BIG + 4096);
	char ctx[80];

	/* Every length 0-300, then long ones: NUL at the page end. */
	static const size_t longs[] = {1000, 4095, 4096, 65535, 65536, BIG};

	for (size_t li = 0; li <= 300 + sizeof(longs) / sizeof(longs[0]); li++) {
		size_t len = li <= 300 ? li : longs[li - 301];
		int alpha = (int)rnd_below(N_ALPHABETS);
		char *s = at_end(&g1, len);

		fill(s, len, alpha);
		s[len] = 0;
		snprintf(ctx, sizeof(ctx), "guard: NUL at page end, len %zu", len);
		random_single(s, len, alpha, ctx);
		/* The other string at every alignment, and at a page end too. */
		for (size_t al = 0; al < 64; al += (len > 300 ? 21 : 1)) {
			char *t = g2.rw + 64 + al;
			size_t tlen = relative(t, s, len, alpha);

			random_pair(s, len, t, tlen, ctx);
			random_pair(t, tlen, s, len, ctx);
			char *te = at_end(&g2, tlen);

			memmove(te, t, tlen + 1);
			random_pair(s, len, te, tlen, ctx);
			random_pair(te, tlen, s, len, ctx);
		}
		/* A needle or a set string that ends at the page end. */
		if (len <= 300) {
			size_t nl = rnd_below(STR_MIN(len, 30) + 1);
			char *nd = at_end(&g2, nl);
			char *h = g1.rw + rnd_below(64);

			memcpy(nd, s + len - nl, nl);
			nd[nl] = 0;
			memmove(h, s, len + 1);
			check(CALL(F_STRSTR, .a = h, .b = nd), ctx);
			check(CALL(F_STRCASESTR, .a = h, .b = nd), ctx);
			check(CALL(F_STRNSTR, .a = h, .b = nd, .n = len), ctx);
			check(CALL(F_STRSPN, .a = h, .b = nd), ctx);
			check(CALL(F_STRCSPN, .a = h, .b = nd), ctx);
		}
	}

	/* Bounds ending at the page end, no NUL anywhere in reach. */
	for (size_t n = 0; n <= 300; n++) {
		int alpha = (int)rnd_below(N_ALPHABETS);
		char *s = g1.rw + g1.size - n, *t = g2.rw + g2.size - n;

		fill(s, n, alpha);
		memcpy(t, s, n);
		snprintf(ctx, sizeof(ctx), "guard: bound %zu at page end", n);
		check(CALL(F_STRNLEN, .a = s, .n = n), ctx);
		check(CALL(F_STRNCHR, .a = s, .n = n, .c = 0), ctx);
		check(CALL(F_STRNCHR, .a = s, .n = n, .c = (char)0xfe), ctx);
		if (n)
			check(CALL(F_STRNCHR, .a = s, .n = n, .c = s[n - 1]), ctx);
		check(CALL(F_STRNCASECMP, .a = s, .b = t, .n = n), ctx);
		copy_swapped(t, s, n, true);
		check(CALL(F_STRNCASECMP, .a = t, .b = s, .n = n), ctx);
		if (n)
			t[rnd_below(n)] ^= 1;
		check(CALL(F_STRNCASECMP, .a = s, .b = t, .n = n), ctx);
		/* the other string elsewhere (NUL-terminated), at any alignment */
		char *u = g2.rw + rnd_below(64);

		memcpy(u, s, n);
		u[n] = 0;
		check(CALL(F_STRNCASECMP, .a = s, .b = u, .n = n), ctx);
		check(CALL(F_STRNCASECMP, .a = u, .b = s, .n = n), ctx);
		/* needles: the tail of the bounded range, absent ones, empty */
		for (size_t nl = 0; nl <= STR_MIN(n, 12); nl += 3) {
			memcpy(u, s + n - nl, nl);
			u[nl] = 0;
			check(CALL(F_STRNSTR, .a = s, .b = u, .n = n), ctx);
			check(CALL(F_STRNCASESTR, .a = s, .b = u, .n = n), ctx);
			u[0] = (char)0xfe;
			check(CALL(F_STRNSTR, .a = s, .b = u, .n = n), ctx);
		}
	}

	/* Strings that start right after the leading guard page (a read before
	 * the string's first block would fault). */
	for (size_t off = 0; off < 64; off++) {
		for (size_t al = 0; al < 64; al++) {
			size_t len = rnd_below(100);
			int alpha = (int)rnd_below(N_ALPHABETS);
			char *b = g2.rw + off, *a = g1.rw + 128 + al;

			fill(a, len, alpha);
			a[len] = 0;
			memcpy(b, a, len + 1);
			snprintf(ctx, sizeof(ctx), "guard: start %zu after a guard, other %zu", off,
				 al);
			check(CALL(F_STRCMP, .a = a, .b = b), ctx);
			check(CALL(F_STRCASECMP, .a = b, .b = a), ctx);
			check(CALL(F_STRNCASECMP, .a = a, .b = b, .n = len), ctx);
			check(CALL(F_STRLEN, .a = b), ctx);
			check(CALL(F_STRRCHR, .a = b, .c = 'a'), ctx);
			size_t nl = STR_MIN(len, rnd_below(10));

			memmove(b, a + len - nl, nl);
			b[nl] = 0;
			check(CALL(F_STRSTR, .a = a, .b = b), ctx);
			check(CALL(F_STRNCASESTR, .a = a, .b = b, .n = len), ctx);
			check(CALL(F_STRSPN, .a = a, .b = b), ctx);
		}
	}
	guarded_free(&g1);
	guarded_free(&g2);
	finish();
}

/* ---------------------------------------------------------------------- */
/* Substring search at the 65536-byte bound                                 */

/*
 * The bulk loop of the substring search (t_strnstr() in str_impl.h) keeps a
 * position only if its first byte and its byte fo = min(needle length - 1,
 * 64) further on match the needle's.  Where that second byte lies at or past
 * the bound the loop must leave the position to the exact path, or a partial
 * match running into the bound (-ENOENT) turns into -E2BIG; and no position
 * at or past the bound may be tried.  Here: haystacks of 65536 +- 64 bytes at
 * every alignment (the bound falls on every lane of a block), needles of 1 to
 * 200 bytes whose match ends or starts in the last 64 bytes before the bound,
 * straddles it (whole, or broken at the bound or at byte fo) or starts past
 * it; bounds n around 65536 and around the match; and bounds that end right
 * before a PROT_NONE page.  Before the last NB_WIN bytes the needle does not
 * occur (no byte there folds to its first but in partial copies of it, which
 * keep the bulk loop's candidate path busy all along).
 */

#define NB_WIN 512		      /* the haystack's end, rebuilt for each case */
#define NB_PRE (REF_STR_MAX - NB_WIN) /* its start, built once per needle */

enum nb_place {
	NB_ENDS_BEFORE,	  /* a match ending in the last 64 bytes before the bound */
	NB_STARTS_BEFORE, /* ... starting there */
	NB_STRADDLES,	  /* ... starting before the bound, ending past it */
	NB_BROKEN_AT_FO,  /* straddles, wrong at byte fo, the first past the bound */
	NB_BROKEN,	  /* straddles, wrong at the bound or later */
	NB_BEYOND,	  /* starts at or past the bound */
	NB_NONE,	  /* partial copies only */
	NB_PLACES
};

static const char *const nb_place_names[NB_PLACES] = {
	"ends before", "starts before", "straddles", "broken at fo", "broken", "beyond", "none",
};

struct nb_needle {
	char *t, *tc;  /* the needle, and a case-swapped copy */
	size_t nl, fo; /* its length; the bulk filter's second byte */
	int alpha;     /* the alphabet of needle and haystack */
	char sub;      /* stands in the haystack for bytes folding to t[0] */
};

static bool same_fold(char a, char b)
{
	return ref_fold((unsigned char)a) == ref_fold((unsigned char)b);
}

/* A byte of the alphabet (else a spare one) folding to neither x nor y. */
static char nb_other(int alpha, char x, char y)
{
	static const char spare[] = "-#~";
	const char *a = alphabets[alpha];
	size_t na = a ? strlen(a) : 0, r = rnd_below(na + 1);
	char c;

	if (!a) {
		do
			c = rnd_char(alpha);
		while (same_fold(c, x) || same_fold(c, y));
		return c;
	}
	for (size_t i = 0; i < na; i++) {
		c = a[(r + i) % na];
		if (!same_fold(c, x) && !same_fold(c, y))
			return c;
	}
	for (size_t i = 0;; i++)
		if (!same_fold(spare[i], x) && !same_fold(spare[i], y))
			return spare[i];
}

/* Random bytes of the alphabet, none folding to the needle's first. */
static void nb_fill(char *p, size_t len, const struct nb_needle *nd)
{
	for (size_t i = 0; i < len; i++) {
		char c = rnd_char(nd->alpha);

		p[i] = same_fold(c, nd->t[0]) ? nd->sub : c;
	}
}

/* Where a partial copy goes wrong: at 1, fo, fo + 1, the last byte or any. */
static size_t nb_pick_k(const struct nb_needle *nd)
{
	const size_t ks[] = {1, nd->fo, nd->fo + 1, nd->nl - 1, 1 + rnd_below(nd->nl - 1)};
	size_t k = ks[rnd_below(5)];

	return k < 1 ? 1 : k >= nd->nl ? nd->nl - 1 : k;
}

/* A copy of the needle's first k bytes (some case-swapped), then a byte
 * that differs from t[k] (and from t[0]): k + 1 bytes at p.  (nl >= 2.) */
static void nb_partial(char *p, size_t k, const struct nb_needle *nd)
{
	copy_swapped(p, nd->t, k, rnd() & 1);
	p[k] = nb_other(nd->alpha, nd->t[k], nd->t[0]);
}

/*
 * The haystack's first NB_PRE bytes, with partial copies of the needle: one
 * in each 256-byte slot of the last 8 KiB, in every 16th slot before (apart,
 * since overlapping copies could make a match).
 */
static void nb_prefix(char *pre, const struct nb_needle *nd)
{
	nb_fill(pre, NB_PRE, nd);
	for (size_t slot = 0; nd->nl >= 2 && slot + 256 <= NB_PRE; slot += 256) {
		size_t k = nb_pick_k(nd);

		if (slot % 4096 == 0 || slot + 8192 >= NB_PRE)
			nb_partial(pre + slot + rnd_below(256 - k), k, nd);
	}
}

/*
 * A haystack at s: the prefix, then random bytes up to len with the needle
 * at a place of the given kind relative to bound (65536, or n), and partial
 * copies before it; a NUL at len if nul (random bytes after it), else nothing
 * (the bytes end at a guard page).  Returns the needle's position (also where
 * a broken or cut one starts).
 */
static size_t nb_build(char *s, size_t len, bool nul, size_t bound, const char *pre,
		       const struct nb_needle *nd, enum nb_place kind)
{
	const size_t nl = nd->nl, fo = nd->fo;
	size_t at, m = nl; /* m: the needle's byte made wrong (nl: none) */

	memcpy(s, pre, NB_PRE);
	nb_fill(s + NB_PRE, len - NB_PRE, nd);
	switch (kind) {
	case NB_ENDS_BEFORE:
		at = bound - nl - rnd_below(65);
		break;
	case NB_STARTS_BEFORE:
		at = bound - 1 - rnd_below(64);
		break;
	case NB_STRADDLES:
		at = bound - (nl >= 2 ? nb_pick_k(nd) : 1);
		break;
	case NB_BROKEN_AT_FO:
		at = bound - (fo ? fo : 1);
		m = fo;
		break;
	case NB_BROKEN:
		at = bound - (nl >= 2 ? nb_pick_k(nd) : 1);
		m = bound - at + rnd_below(nl - (bound - at));
		break;
	case NB_BEYOND:
		at = bound + (rnd() & 1 ? 0 : rnd_below(64));
		break;
	default:
		at = bound - rnd_below(nl + 64);
		m = nl >= 2 ? nb_pick_k(nd) : 0;
		break;
	}
	/* Partial copies, one after the other, wholly before the needle and the end. */
	const size_t lim = STR_MIN(at, len);

	for (size_t p = NB_PRE + rnd_below(32), i = 0; i < 6 && nl >= 2; i++) {
		size_t k = nb_pick_k(nd);

		if (p + k + 1 > lim)
			break;
		nb_partial(s + p, k, nd);
		p += k + 1 + rnd_below(64);
	}
	/* (Broken at fo, the copy must match up to there for strstr() too.) */
	const bool swap = kind != NB_BROKEN_AT_FO && (rnd() & 1);

	for (size_t i = 0; i < nl && at + i < len; i++)
		s[at + i] =
		    swap && (rnd() & 1) ? (char)swap_case((unsigned char)nd->t[i]) : nd->t[i];
	if (m < nl && at + m < len)
		s[at + m] = nb_other(nd->alpha, nd->t[m], nd->t[0]);
	if (nul) {
		s[len] = 0;
		fill_noise(s + len + 1, 64);
	}
	return at;
}

/* What strstr() answered, over all cases: see nb_tally(). */
static unsigned long nb_early, nb_late, nb_enoent, nb_e2big;

static void nb_tally(int r)
{
	if (r == -ENOENT)
		nb_enoent++;
	else if (r == -E2BIG)
		nb_e2big++;
	else if (r >= 0 && r < NB_PRE)
		nb_early++;
	else
		nb_late++;
}

/* A bound near 65536 or near the needle at `at`. */
static size_t nb_pick_n(size_t len, size_t at, size_t nl)
{
	const size_t M = REF_STR_MAX;
	const size_t ns[] = {M - 1,   M,	 M + 1,	   at + nl - 1,
			     at + nl, len, len + 1, SIZE_MAX, M - 64 + rnd_below(129)};

	return ns[rnd_below(sizeof(ns) / sizeof(ns[0]))];
}

static void test_search_at_bound(void **state)
{
	(void)state;
	static const size_t nls[] = {1, 2, 3, 16, 27, 64, 200};
	/* Their alphabets: each kind; the tiny one (many partial matches, but
	 * a needle that overlaps itself hides a broken-at-fo miss) twice. */
	static const int alphas[] = {3, 0, 2, 1, 3, 2, 0};
	const size_t M = REF_STR_MAX;
	/* The reference's long scans are most of the time: the sweep over
	 * alignments is whole, the random cases few.  Careful mode (under
	 * Valgrind) has no bulk loop: a sample of either does there. */
	const size_t al_step = bpfmap_str_careful ? 8 : 1;
	const int rounds = bpfmap_str_careful ? NB_PLACES : 4 * NB_PLACES;
	struct guarded g = guarded_new(M + 4096);
	char *pre = malloc(NB_PRE);
	char ctx[128];

	assert_non_null(pre);
	nb_early = nb_late = nb_enoent = nb_e2big = 0;
	for (size_t li = 0; li < sizeof(nls) / sizeof(nls[0]); li++) {
		const size_t nl = nls[li];
		struct nb_needle nd = {
			.t = buf2 + 64 + rnd_below(64),
			.tc = buf3 + 64 + rnd_below(64),
			.nl = nl,
			.fo = STR_MIN(nl - 1, 64),
			.alpha = alphas[li],
		};

		fill(nd.t, nl, nd.alpha);
		nd.t[nl] = 0;
		copy_swapped(nd.tc, nd.t, nl, true);
		nd.tc[nl] = 0;
		nd.sub = nb_other(nd.alpha, nd.t[0], nd.t[0]);
		nb_prefix(pre, &nd);

		/* Every alignment: the needle's byte fo the first past the
		 * bound, and wrong (the haystack goes on). */
		for (size_t al = 0; al < 64; al += al_step) {
			char *s = buf1 + 64 + al;
			size_t len = M + rnd_below(65);
			size_t at = nb_build(s, len, true, M, pre, &nd, NB_BROKEN_AT_FO);
			size_t n = nb_pick_n(len, at, nl);

			snprintf(ctx, sizeof(ctx),
				 "bound: needle %zu broken at fo, at %zu, len %zu, align %zu", nl,
				 at, len, al);
			if (al & 1) {
				check(CALL(F_STRCASESTR, .a = s, .b = nd.tc), ctx);
				check(CALL(F_STRNSTR, .a = s, .b = nd.t, .n = n), ctx);
			} else {
				nb_tally(check(CALL(F_STRSTR, .a = s, .b = nd.t), ctx));
				check(CALL(F_STRNCASESTR, .a = s, .b = nd.tc, .n = n), ctx);
			}
		}
		/* Every kind of place, at random alignments, ends and bounds. */
		for (int r = 0; r < rounds; r++) {
			enum nb_place kind = (enum nb_place)(r % NB_PLACES);
			size_t al = rnd_below(64), len = M - 64 + rnd_below(129);
			char *s = buf1 + 64 + al;
			size_t at = nb_build(s, len, true, M, pre, &nd, kind);

			snprintf(ctx, sizeof(ctx),
				 "bound: needle %zu %s at %zu, len %zu, align %zu", nl,
				 nb_place_names[kind], at, len, al);
			nb_tally(check(CALL(F_STRSTR, .a = s, .b = nd.t), ctx));
			check(CALL(F_STRCASESTR, .a = s, .b = nd.tc), ctx);
			check(CALL(F_STRNSTR, .a = s, .b = nd.t, .n = nb_pick_n(len, at, nl)), ctx);
			check(CALL(F_STRNCASESTR, .a = s, .b = nd.tc, .n = nb_pick_n(len, at, nl)),
			      ctx);
		}
		/* The bound right before a guard page: 65536 bytes without a
		 * NUL for strstr(), n bytes for strnstr(). */
		for (int kind = 0; kind < NB_PLACES; kind++) {
			char *s = g.rw + g.size - M;
			size_t at = nb_build(s, M, false, M, pre, &nd, kind);

			snprintf(ctx, sizeof(ctx), "bound at a guard page: needle %zu %s at %zu",
				 nl, nb_place_names[kind], at);
			nb_tally(check(CALL(F_STRSTR, .a = s, .b = nd.t), ctx));
			check(CALL(F_STRCASESTR, .a = s, .b = nd.tc), ctx);

			size_t n = M - rnd_below(65);

			s = g.rw + g.size - n;
			at = nb_build(s, n, false, n, pre, &nd, kind);
			snprintf(ctx, sizeof(ctx), "n %zu at a guard page: needle %zu %s at %zu", n,
				 nl, nb_place_names[kind], at);
			check(CALL(F_STRNSTR, .a = s, .b = nd.t, .n = n), ctx);
			check(CALL(F_STRNCASESTR, .a = s, .b = nd.tc, .n = n), ctx);
		}
	}
	print_message("search at the bound: strstr() found %lu near the bound, %lu early; "
		      "%lu -ENOENT, %lu -E2BIG\n",
		      nb_late, nb_early, nb_enoent, nb_e2big);
	free(pre);
	guarded_free(&g);
	/* The cases are what they claim: matches near the bound, partial
	 * matches running into it, nothing found; hardly anything early. */
	assert_true(nb_late && nb_enoent && nb_e2big);
	assert_true(nb_early * 50 <= nb_late + nb_enoent + nb_e2big);
	finish();
}

/*
 * Needles of 65536 bytes and more: -E2BIG where the first 65536 bytes match,
 * else what the mismatch (at the bound's edge here) leaves; haystacks that
 * hold the needle at a random place, whole or wrong at one byte around
 * 65536; bounds n around the needle's end.  Then a needle of 65536 bytes
 * without a NUL that ends right before a guard page: no byte past them may be
 * read.
 */
static void test_search_long_needle(void **state)
{
	(void)state;
	static const size_t nls[] = {65535, 65536, 65537, BIG - 128};
	const size_t M = REF_STR_MAX;
	char *t = buf2 + 64 + rnd_below(64), *tc = buf3 + 64 + rnd_below(64);
	char ctx[96];

	for (size_t li = 0; li < sizeof(nls) / sizeof(nls[0]); li++) {
		const size_t nl = nls[li];

		/* Letters: the other positions fail at once. */
		fill(t, nl, 1);
		t[nl] = 0;
		for (int r = 0; r < 8; r++) {
			const size_t ms[] = {M - 2, M - 1, M, 1 + rnd_below(nl - 1), SIZE_MAX};
			size_t m = ms[r % 5], at = rnd_below(64);
			size_t len = STR_MIN(at + nl + rnd_below(4) - 1, (size_t)BIG);
			char *s = buf1 + 64 + rnd_below(64);

			fill(s, at, 1);
			memcpy(s + at, t, STR_MIN(nl, len - at));
			if (m < nl && at + m < len)
				s[at + m] = '-'; /* wrong, folded or not */
			s[len] = 0;
			copy_swapped(tc, t, nl + 1, true);
			snprintf(ctx, sizeof(ctx), "needle %zu at %zu, wrong at %zu, len %zu", nl,
				 at, m, len);
			check(CALL(F_STRSTR, .a = s, .b = t), ctx);
			check(CALL(F_STRCASESTR, .a = s, .b = tc), ctx);
			check(CALL(F_STRNSTR, .a = s, .b = t, .n = at + M - rnd_below(2)), ctx);
			check(CALL(F_STRNCASESTR, .a = s, .b = tc, .n = SIZE_MAX), ctx);
		}
	}

	struct guarded g = guarded_new(M);
	char *gt = g.rw + g.size - M, *s = buf1 + 64 + rnd_below(64);

	fill(gt, M, 1);
	for (int r = 0; r < 4; r++) {
		memcpy(s, gt, M);
		s[M] = 0;
		if (r)
			s[M - r] = '-';
		snprintf(ctx, sizeof(ctx), "needle of 65536 bytes at a guard page, wrong at %d",
			 r ? (int)M - r : -1);
		check(CALL(F_STRSTR, .a = s, .b = gt), ctx);
		check(CALL(F_STRCASESTR, .a = s, .b = gt), ctx);
		check(CALL(F_STRNSTR, .a = s, .b = gt, .n = M), ctx);
		check(CALL(F_STRNCASESTR, .a = s, .b = gt, .n = SIZE_MAX), ctx);
	}
	guarded_free(&g);
	finish();
}

/* ---------------------------------------------------------------------- */
/* Sets that change while strspn and strcspn read them                      */

/*
 * A set string changed by another thread while it is read gives an
 * unspecified answer, but the scan must still stop at s's NUL.  The
 * functions read the set's length first and its bytes again later: a byte
 * that turns NUL in between put the NUL into strspn's accept set, and one
 * that stops being NUL took it out of strcspn's, and either then read past
 * s into the next page.  s here ends right before a guard page; a writer
 * flips the set's last byte (strspn: 'a' <-> NUL, strcspn: the byte after
 * the set, NUL <-> 'r'), for set lengths that take each form (the head's
 * compares, chains of 2, 4 and 8, the table).  The rest of a scan reads
 * the set again after a call, and there it faulted within a few thousand
 * calls before the fix; the head's window is a few instructions wide, so a
 * regression there would show only by chance.
 */
struct set_flipper {
	char *set;
	size_t at;
	char a, b;
	int stop; /* atomic */
};

static void *set_flip(void *arg)
{
	struct set_flipper *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		__atomic_store_n(&f->set[f->at], f->a, __ATOMIC_RELAXED);
		__atomic_store_n(&f->set[f->at], f->b, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_set_changing(void **state)
{
	(void)state;
	static const size_t lens[] = { 1, 2, 3, 4, 7, 8, 15, 16, 20, 40 };
	struct guarded g = guarded_new(4096);
	char *shrt = at_end(&g, 199), *s = shrt + 99;
	char set[64];

	for (int reject = 0; reject < 2; reject++) {
		/* s: 100 bytes, its NUL the page's last byte.  shrt: its NUL at
		 * 10, in the first block, then more bytes of the same kind, s
		 * among them. */
		memset(shrt, reject ? 'x' : 'a', 199);
		shrt[199] = 0;
		shrt[10] = 0;
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			size_t len = lens[li];
			struct set_flipper f = { .set = set };
			pthread_t t;

			memset(set, 0, sizeof(set));
			memset(set, reject ? 'q' : 'a', len);
			f.at = reject ? len : len - 1;
			f.a = reject ? 'r' : 0;
			f.b = reject ? 0 : 'a';
			assert_int_equal(pthread_create(&t, NULL, set_flip, &f), 0);
			for (int i = 0; i < n_impls; i++) {
				for (int k = 0; k < 20000; k++) {
					const char *str = k & 1 ? shrt : s;
					const int end = k & 1 ? 10 : 100;
					int r = reject ? impls[i]->strcspn(str, set)
						       : impls[i]->strspn(str, set);

					/* A one-byte accept set turns empty now and
					 * then: any answer up to the string's end.
					 * Else its bytes are always in (strspn) or out
					 * of (strcspn) the set. */
					if (!reject && len == 1)
						assert_true(r >= 0 && r <= end);
					else
						assert_int_equal(r, end);
				}
			}
			__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
			assert_int_equal(pthread_join(t, NULL), 0);
		}
	}
	guarded_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_table),
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_random_lengths_alignments),
		cmocka_unit_test(test_alignment_pairs),
		cmocka_unit_test(test_every_needle_position),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_random_long),
		cmocka_unit_test(test_uninitialised_neighbours),
		cmocka_unit_test(test_bounded_heap_blocks),
		cmocka_unit_test(test_unbounded_heap_blocks),
		cmocka_unit_test(test_guard_pages),
		cmocka_unit_test(test_search_at_bound),
		cmocka_unit_test(test_search_long_needle),
		cmocka_unit_test(test_set_changing),
	};
	const char *only = getenv("BPFMAP_TEST_FILTER");

	if (only)
		cmocka_set_test_filter(only);

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
