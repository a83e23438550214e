/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The string functions against the running kernel's string kfuncs.
 *
 * A syscall BPF program (tests/bpf/strings_kfuncs.bpf.c) calls the kfunc on
 * strings this test writes into the program's .bss, which libbpf maps into
 * our address space; bpfmap_str*() and the byte-at-a-time reference run on
 * the very same bytes, every implementation table and the public calls.
 * Inputs: the known-answer and edge cases of the unit test, random strings
 * of every length 0-300 at random alignments, pairs of alignments, strings
 * around and past the 65536-byte limit, and the adversarial cases of
 * tests/strings_kernel_adv.c.
 *
 * Kfuncs the running kernel lacks (6.18 has twelve of the fifteen) are
 * listed, and the library compared with the reference alone on them; without
 * BPF (no privilege, no BTF, no libbpf support) the test prints why and exits
 * 77.  Exit 1 on any disagreement, listing them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <bpfmap.h>

#include "bpf/strings_kfuncs.h"
#include "strings/str_internal.h"
#include "strings_kernel.h"
#include "strings_public.h"
#include "strings_reference.h"
#include "test_rng.h"

#define SKIP 77

static const char *const fn_names[STR_FN_COUNT] = {
	"strcmp",  "strcasecmp", "strncasecmp", "strchr", "strchrnul",
	"strnchr", "strrchr",    "strlen",      "strnlen", "strspn",
	"strcspn", "strstr",     "strnstr",     "strcasestr", "strncasestr",
};

/* One BPF object and what it can call. */
struct kobj {
	struct bpf_object *obj;
	int prog_fd;
	char *buf; /* the .bss, shared with the kernel */
	size_t buf_size;
};

static void kobj_close(struct kobj *k)
{
	if (k->buf)
		munmap(k->buf, k->buf_size);
	bpf_object__close(k->obj); /* NULL is fine */
	memset(k, 0, sizeof(*k));
}

static struct kobj kobjs[2]; /* the 6.18 kfuncs; the later three */
static struct kobj *fn_obj[STR_FN_COUNT]; /* NULL: the kernel lacks the kfunc */
char *buf;                                 /* the strings, seen from user space */
/* n_ref: calls compared with the reference alone, the kernel lacking the kfunc */
static unsigned long n_calls[STR_FN_COUNT], n_ref[STR_FN_COUNT], n_bad, n_refbad;
/* rnd(), rnd_below(): test_rng.h, from its default seed. */

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("BPFMAP_TEST_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static bool kernel_has(const struct btf *vmlinux, const char *name)
{
	return vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) >= 0;
}

/* Open and load one object; *why gets the reason on failure. */
static int kobj_load(struct kobj *k, const char *path, char *why, size_t why_len)
{
	struct bpf_map *map;
	struct bpf_program *prog;
	size_t size = 0;
	int err;

	k->obj = bpf_object__open_file(path, NULL);
	if (!k->obj) {
		snprintf(why, why_len, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	err = bpf_object__load(k->obj);
	if (err) {
		snprintf(why, why_len, "loading %s failed: %s%s", path, strerror(-err),
			 err == -EPERM ? " (needs CAP_BPF/CAP_SYS_ADMIN)" : "");
		return -1;
	}
	prog = bpf_object__find_program_by_name(k->obj, "str_call");
	k->prog_fd = prog ? bpf_program__fd(prog) : -1;
	bpf_object__for_each_map(map, k->obj) {
		const char *name = bpf_map__name(map);
		size_t len = strlen(name);

		if (len < 4 || strcmp(name + len - 4, ".bss"))
			continue;
		/* Map the kernel's array itself (libbpf 1.1 does that only for
		 * skeletons). */
		size = bpf_map__value_size(map);
		if (bpf_map__map_flags(map) & BPF_F_MMAPABLE) {
			void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				       bpf_map__fd(map), 0);

			if (p != MAP_FAILED) {
				k->buf = p;
				k->buf_size = size;
			}
		}
	}
	if (k->prog_fd < 0 || !k->buf || size < STR_BUF_SIZE) {
		snprintf(why, why_len, "%s: no program, or its .bss cannot be mapped", path);
		return -1;
	}
	return 0;
}

/* Run the kfunc; the strings must already be in k->buf. */
static int kcall(struct kobj *k, enum str_fn_id fn, const char *a, const char *b, size_t n, int c)
{
	struct str_call call = {
		.fn = fn,
		.off_a = a ? (uint32_t)(a - buf) : STR_CALL_NULL,
		.off_b = b ? (uint32_t)(b - buf) : STR_CALL_NULL,
		.c = c,
		.n = n,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &call, .ctx_size_in = sizeof(call));

	if (k->buf != buf) /* the later kfuncs' object has its own copy */
		memcpy(k->buf, buf, STR_BUF_SIZE);
	int err = bpf_prog_test_run_opts(k->prog_fd, &opts);

	if (err || opts.retval) {
		fprintf(stderr, "test run of %s failed: %d/%u\n", fn_names[fn], err, opts.retval);
		exit(1);
	}
	return call.ret;
}

/* The public calls (strings_public.h), then every table the dispatcher
 * offers (NULL-ended). */
static const struct str_ops *impls[8];

/* One call of ops o, or of the reference for NULL. */
static int lib_call(enum str_fn_id fn, const struct str_ops *o, const char *a, const char *b,
		    size_t n, int c)
{
	switch (fn) {
	case STR_FN_STRCMP:
		return o ? o->strcmp(a, b) : ref_strcmp(a, b);
	case STR_FN_STRCASECMP:
		return o ? o->strcasecmp(a, b) : ref_strcasecmp(a, b);
	case STR_FN_STRNCASECMP:
		return o ? o->strncasecmp(a, b, n) : ref_strncasecmp(a, b, n);
	case STR_FN_STRCHR:
		return o ? o->strchr(a, (char)c) : ref_strchr(a, (char)c);
	case STR_FN_STRCHRNUL:
		return o ? o->strchrnul(a, (char)c) : ref_strchrnul(a, (char)c);
	case STR_FN_STRNCHR:
		return o ? o->strnchr(a, n, (char)c) : ref_strnchr(a, n, (char)c);
	case STR_FN_STRRCHR:
		return o ? o->strrchr(a, c) : ref_strrchr(a, c);
	case STR_FN_STRLEN:
		return o ? o->strlen(a) : ref_strlen(a);
	case STR_FN_STRNLEN:
		return o ? o->strnlen(a, n) : ref_strnlen(a, n);
	case STR_FN_STRSPN:
		return o ? o->strspn(a, b) : ref_strspn(a, b);
	case STR_FN_STRCSPN:
		return o ? o->strcspn(a, b) : ref_strcspn(a, b);
	case STR_FN_STRSTR:
		return o ? o->strstr(a, b) : ref_strstr(a, b);
	case STR_FN_STRNSTR:
		return o ? o->strnstr(a, b, n) : ref_strnstr(a, b, n);
	case STR_FN_STRCASESTR:
		return o ? o->strcasestr(a, b) : ref_strcasestr(a, b);
	case STR_FN_STRNCASESTR:
		return o ? o->strncasestr(a, b, n) : ref_strncasestr(a, b, n);
	default:
		abort();
	}
}

static void show(const char *label, const char *s)
{
	fprintf(stderr, "    %s: ", label);
	if (!s) {
		fprintf(stderr, "NULL\n");
		return;
	}
	size_t len = strnlen(s, BIG + 10), i;

	for (i = 0; i < len && i < 40; i++) {
		unsigned char ch = (unsigned char)s[i];

		fprintf(stderr, ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
	}
	fprintf(stderr, "%s (len %zu, offset %u)\n", i < len ? "..." : "", len,
		(unsigned)((s - buf) % 64));
}

/*
 * The library's answers on la, lb against want, the kernel's on ka, kb (in
 * buf); ref: the reference's on la, lb, or want if it was not asked.
 */
static int verdict(enum str_fn_id fn, int want, int ref, const char *ka, const char *kb,
		   const char *la, const char *lb, size_t n, int c, const char *ctx)
{
	const char *bad = NULL;
	int got = want;

	for (int i = 0; impls[i]; i++) {
		int r = lib_call(fn, impls[i], la, lb, n, c);

		if (r != want && !bad) {
			bad = impls[i]->name;
			got = r;
		}
	}
	if (!bad && ref == want)
		return want;
	if (bad)
		n_bad++;
	else
		n_refbad++;
	if (n_bad + n_refbad > 30)
		return want;
	fprintf(stderr, "%s [%s]: %s %d, bpfmap %d (%s), reference %d; n=%zu c=%d\n", fn_names[fn],
		ctx, fn_obj[fn] ? "kernel" : "(no kfunc)", want, got, bad ? bad : "all", ref, n, c);
	show("a", ka);
	show("b", kb);
	return want;
}

bool ref_too = true;

int check_at(enum str_fn_id fn, const char *ka, const char *kb, const char *la, const char *lb,
	     size_t n, int c, const char *ctx)
{
	if (!fn_obj[fn]) {
		const int ref = lib_call(fn, NULL, la, lb, n, c);

		n_ref[fn]++;
		return verdict(fn, ref, ref, ka, kb, la, lb, n, c, ctx);
	}
	const int want = kcall(fn_obj[fn], fn, ka, kb, n, c);

	n_calls[fn]++;
	return verdict(fn, want, ref_too ? lib_call(fn, NULL, la, lb, n, c) : want, ka, kb, la,
		       lb, n, c, ctx);
}

int check(enum str_fn_id fn, const char *a, const char *b, size_t n, int c, const char *ctx)
{
	return check_at(fn, a, b, a, b, n, c, ctx);
}

void check_known(enum str_fn_id fn, int want, const char *la, const char *lb, size_t n, int c,
		 const char *ctx)
{
	if (fn_obj[fn])
		n_calls[fn]++;
	else
		n_ref[fn]++;
	verdict(fn, want, want, la, lb, la, lb, n, c, ctx);
}

char *put(char *at, const char *s)
{
	memcpy(at, s, strlen(s) + 1);
	return at;
}

char *make(char *at, size_t len, char ch)
{
	memset(at, ch, len);
	at[len] = 0;
	return at;
}

static const char *const alphabets[] = {"ab", "abcdefghijklmnopqrstuvwxyz",
					"aAbB\xc0\xe0\xd7\xf7\xde\xfe\xdf\xff", NULL};

static void fill(char *p, size_t len, int alpha)
{
	for (size_t i = 0; i < len; i++)
		p[i] = alphabets[alpha] ? alphabets[alpha][rnd_below(strlen(alphabets[alpha]))]
					: (char)(1 + rnd_below(255));
}

static void known_answers(void)
{
	static const struct {
		enum str_fn_id fn;
		const char *a, *b;
		size_t n;
		int c;
	} kat[] = {
		{STR_FN_STRCMP, "a", "b", 0, 0},           {STR_FN_STRCMP, "abc", "abc", 0, 0},
		{STR_FN_STRCMP, "", "a", 0, 0},            {STR_FN_STRCMP, "\x80", "\x7f", 0, 0},
		{STR_FN_STRCASECMP, "HeLLo", "hello", 0, 0}, {STR_FN_STRCASECMP, "A", "_", 0, 0},
		{STR_FN_STRCASECMP, "\xc0\xde", "\xe0\xfe", 0, 0},
		{STR_FN_STRCASECMP, "\xd7", "\xf7", 0, 0}, {STR_FN_STRCASECMP, "\xdf", "\xff", 0, 0},
		{STR_FN_STRNCASECMP, "abcX", "ABCy", 3, 0}, {STR_FN_STRNCASECMP, "a", "b", 0, 0},
		{STR_FN_STRCHR, "hello", NULL, 0, 'l'},    {STR_FN_STRCHR, "hello", NULL, 0, 0},
		{STR_FN_STRCHR, "a\x80", NULL, 0, (char)0x80}, {STR_FN_STRCHRNUL, "hello", NULL, 0, 'z'},
		{STR_FN_STRNCHR, "hello", NULL, 2, 'l'},   {STR_FN_STRNCHR, "hello", NULL, 0, 'h'},
		{STR_FN_STRNCHR, "hi", NULL, 10, 0},       {STR_FN_STRNCHR, "hi", NULL, 2, 0},
		{STR_FN_STRRCHR, "hello", NULL, 0, 'l'},   {STR_FN_STRRCHR, "hello", NULL, 0, 0},
		{STR_FN_STRRCHR, "a\x80", NULL, 0, 0x80},  {STR_FN_STRRCHR, "a\x80", NULL, 0, -128},
		{STR_FN_STRRCHR, "abc", NULL, 0, 256 + 'a'}, {STR_FN_STRLEN, "", NULL, 0, 0},
		{STR_FN_STRNLEN, "hello", NULL, 3, 0},     {STR_FN_STRNLEN, "hello", NULL, SIZE_MAX, 0},
		{STR_FN_STRSPN, "aabbc", "ab", 0, 0},      {STR_FN_STRSPN, "abc", "", 0, 0},
		{STR_FN_STRCSPN, "hello world", " ", 0, 0}, {STR_FN_STRCSPN, "abc", "", 0, 0},
		{STR_FN_STRCSPN, "hello world", "0123456789w", 0, 0},
		{STR_FN_STRSTR, "hello world", "o w", 0, 0}, {STR_FN_STRSTR, "abc", "", 0, 0},
		{STR_FN_STRSTR, "", "a", 0, 0},            {STR_FN_STRSTR, "aab", "ab", 0, 0},
		{STR_FN_STRNSTR, "hello", "llo", 5, 0},    {STR_FN_STRNSTR, "hello", "llo", 4, 0},
		{STR_FN_STRNSTR, "hello", "", 0, 0},       {STR_FN_STRNSTR, "hello", "h", 0, 0},
		{STR_FN_STRCASESTR, "Hello World", "WORLD", 0, 0},
		{STR_FN_STRCASESTR, "x\xc9t\xc9", "\xe9T\xe9", 0, 0},
		{STR_FN_STRNCASESTR, "Hello World", "WORLD", 10, 0},
		{STR_FN_STRNCASESTR, "Hello World", "WORLD", 11, 0},
	};

	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		const char *a = put(A + 64 + i % 64, kat[i].a);
		const char *b = kat[i].b ? put(B + 64 + (i * 7) % 64, kat[i].b) : NULL;

		check(kat[i].fn, a, b, kat[i].n, kat[i].c, "known answer");
	}
	/* NULL for each string argument: -ERANGE. */
	const char *s = put(A + 64, "abc"), *t = put(B + 64, "b");

	for (int fn = 0; fn < STR_FN_COUNT; fn++) {
		check(fn, NULL, t, 1, 'a', "NULL");
		check(fn, s, NULL, 0, 'a', "NULL");
	}
}

static void long_strings(void)
{
	char *a = A + 64, *b = B + 64;

	check(STR_FN_STRLEN, make(a, M - 1, 'a'), NULL, 0, 0, "65535 chars");
	check(STR_FN_STRLEN, make(a, M, 'a'), NULL, 0, 0, "65536 chars");
	check(STR_FN_STRNLEN, make(a, BIG, 'a'), NULL, M, 0, "long, count 65536");
	check(STR_FN_STRNLEN, a, NULL, M - 1, 0, "long, count 65535");
	check(STR_FN_STRNLEN, a, NULL, SIZE_MAX, 0, "long, count max");
	check(STR_FN_STRNCHR, a, NULL, M, 'b', "long, count 65536");
	check(STR_FN_STRNCHR, a, NULL, M - 1, 'b', "long, count 65535");
	check(STR_FN_STRCHR, a, NULL, 0, 'b', "long");
	check(STR_FN_STRCHRNUL, a, NULL, 0, 'b', "long");
	check(STR_FN_STRRCHR, a, NULL, 0, 'a', "long");
	a[M - 1] = 'b';
	check(STR_FN_STRCHR, a, NULL, 0, 'b', "found last");
	check(STR_FN_STRNCHR, a, NULL, M - 1, 'b', "just past count");
	make(a, BIG, 'x');
	make(b, BIG, 'x');
	check(STR_FN_STRCMP, a, b, 0, 0, "long equal");
	check(STR_FN_STRCASECMP, a, b, 0, 0, "long equal");
	check(STR_FN_STRNCASECMP, a, b, M - 1, 0, "long, len 65535");
	check(STR_FN_STRNCASECMP, a, b, M, 0, "long, len 65536");
	b[M - 1] = 'y';
	check(STR_FN_STRCMP, a, b, 0, 0, "differ at 65535");
	b[M - 1] = 'x';
	b[M] = 'y';
	check(STR_FN_STRCMP, a, b, 0, 0, "differ at 65536");
	make(a, BIG, 'a');
	check(STR_FN_STRSPN, a, put(b, "a"), 0, 0, "long span");
	check(STR_FN_STRCSPN, a, put(b, "b"), 0, 0, "long span");
	make(b, BIG, 'a');
	check(STR_FN_STRSPN, put(a, "aab"), b, 0, 0, "long accept");
	check(STR_FN_STRSPN, put(a, "aa"), b, 0, 0, "long accept, s ends");
	check(STR_FN_STRCSPN, put(a, "bcd"), b, 0, 0, "long reject, s[0] absent");
	check(STR_FN_STRCSPN, put(a, "abc"), b, 0, 0, "long reject, s[0] present");
	check(STR_FN_STRCSPN, put(a, ""), b, 0, 0, "long reject, empty s");
	make(a, BIG, 'a');
	memcpy(a + M - 3, "xyz", 3);
	check(STR_FN_STRSTR, a, put(b, "xyz"), 0, 0, "match ends at 65536");
	check(STR_FN_STRNSTR, a, b, M - 1, 0, "past len");
	check(STR_FN_STRNSTR, a, b, BIG, 0, "len > 65536");
	memcpy(a + M - 3, "axyz", 4);
	check(STR_FN_STRSTR, a, b, 0, 0, "match ends at 65537");
	check(STR_FN_STRNSTR, a, b, BIG, 0, "len > 65536");
	make(a, BIG, 'a');
	check(STR_FN_STRSTR, a, put(b, "b"), 0, 0, "long haystack, absent");
	check(STR_FN_STRSTR, a, put(b, "ab"), 0, 0, "partial match at 65536");
	check(STR_FN_STRNSTR, a, b, M, 0, "partial at len");
	check(STR_FN_STRNSTR, a, b, M + 1, 0, "partial past 65536");
	check(STR_FN_STRCASESTR, a, put(b, "AB"), 0, 0, "partial match at 65536");
	make(b, BIG, 'a');
	check(STR_FN_STRSTR, a, b, 0, 0, "long needle matches");
	check(STR_FN_STRSTR, put(a, "b"), b, 0, 0, "long needle, mismatch");
	check(STR_FN_STRSTR, make(a, 100, 'a'), b, 0, 0, "long needle, haystack ends");
	check(STR_FN_STRNSTR, make(a, BIG, 'a'), b, M - 1, 0, "long needle, bound");
	check(STR_FN_STRCASESTR, make(a, BIG, 'A'), b, 0, 0, "long needle");

	/* Random strings around the limit. */
	static const size_t lens[] = {65534, 65535, 65536, 65537, BIG};

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t len = lens[li];
		int alpha = (int)rnd_below(4);
		char *s = A + 64 + rnd_below(64), *t = B + 64 + rnd_below(64);

		fill(s, len, alpha);
		s[len] = 0;
		check(STR_FN_STRLEN, s, NULL, 0, 0, "random long");
		check(STR_FN_STRRCHR, s, NULL, 0, (unsigned char)s[len - 1], "random long");
		check(STR_FN_STRNCHR, s, NULL, SIZE_MAX, (unsigned char)s[M - 1], "random long");
		memcpy(t, s, len + 1);
		check(STR_FN_STRCMP, s, t, 0, 0, "random long");
		t[len - 1] ^= 1;
		check(STR_FN_STRCMP, s, t, 0, 0, "random long");
		check(STR_FN_STRNCASECMP, s, t, len - 1, 0, "random long");
		for (size_t nl = 1; nl <= 6; nl++) {
			memcpy(t, s + len - nl, nl);
			t[nl] = 0;
			check(STR_FN_STRSTR, s, t, 0, 0, "random long, tail needle");
			check(STR_FN_STRCASESTR, s, t, 0, 0, "random long, tail needle");
			check(STR_FN_STRNSTR, s, t, len - 1, 0, "random long, tail needle");
			memcpy(t, s + M - nl / 2 - 1, nl);
			t[nl] = 0;
			check(STR_FN_STRSTR, s, t, 0, 0, "random long, needle across 65536");
			check(STR_FN_STRNCASESTR, s, t, SIZE_MAX, 0, "random long, needle across 65536");
		}
		check(STR_FN_STRSPN, s, put(t, alphabets[alpha] ? alphabets[alpha] : "ab"), 0, 0,
		      "random long");
		check(STR_FN_STRCSPN, s, put(t, "\xfd"), 0, 0, "random long");
	}
}

/* Every length 0-300 at a random alignment, every call with random arguments. */
static void random_strings(void)
{
	char ctx[48];

	for (size_t len = 0; len <= 300; len++) {
		for (int round = 0; round < 12; round++) {
			int alpha = (int)rnd_below(4);
			char *s = A + 64 + rnd_below(64), *t = B + 64 + rnd_below(64);
			size_t pos = rnd_below(len + 1), tlen, at;

			fill(s, len, alpha);
			s[len] = 0;
			snprintf(ctx, sizeof(ctx), "random len %zu", len);
			int c = len ? (unsigned char)s[rnd_below(len)] : 'a';
			const size_t ns[] = {0, pos, len, len + 1, M, SIZE_MAX};
			size_t n = ns[rnd_below(6)];

			check(STR_FN_STRLEN, s, NULL, 0, 0, ctx);
			check(STR_FN_STRNLEN, s, NULL, n, 0, ctx);
			check(STR_FN_STRCHR, s, NULL, 0, c, ctx);
			check(STR_FN_STRCHR, s, NULL, 0, (char)0xfe, ctx);
			check(STR_FN_STRCHRNUL, s, NULL, 0, c, ctx);
			check(STR_FN_STRNCHR, s, NULL, n, c, ctx);
			check(STR_FN_STRNCHR, s, NULL, pos, 0, ctx);
			check(STR_FN_STRRCHR, s, NULL, 0, c, ctx);
			check(STR_FN_STRRCHR, s, NULL, 0, (signed char)c, ctx);
			/* a relative of s: equal, case-swapped, one byte changed, a
			 * piece of it, or unrelated */
			switch (rnd_below(5)) {
			case 0:
				tlen = len;
				memcpy(t, s, len);
				break;
			case 1:
				tlen = len;
				for (size_t i = 0; i < len; i++)
					t[i] = (char)((unsigned char)s[i] ^
						      ((rnd() & 1) && ((s[i] | 0x20) >= 'a') &&
							       ((s[i] | 0x20) <= 'z')
							   ? 0x20
							   : 0));
				break;
			case 2:
				tlen = len;
				memcpy(t, s, len);
				if (len)
					t[rnd_below(len)] = (char)(1 + rnd_below(255));
				break;
			case 3:
				tlen = rnd_below((len < 20 ? len : 20) + 1);
				at = rnd_below(len - tlen + 1);
				memcpy(t, s + at, tlen);
				break;
			default:
				tlen = rnd_below(10);
				fill(t, tlen, (int)rnd_below(4));
				break;
			}
			t[tlen] = 0;
			check(STR_FN_STRCMP, s, t, 0, 0, ctx);
			check(STR_FN_STRCASECMP, t, s, 0, 0, ctx);
			check(STR_FN_STRNCASECMP, s, t, n, 0, ctx);
			check(STR_FN_STRSTR, s, t, 0, 0, ctx);
			check(STR_FN_STRNSTR, s, t, n, 0, ctx);
			check(STR_FN_STRNSTR, s, t, pos + tlen, 0, ctx);
			check(STR_FN_STRCASESTR, s, t, 0, 0, ctx);
			check(STR_FN_STRNCASESTR, s, t, pos + tlen, 0, ctx);
			if (tlen <= 20) {
				check(STR_FN_STRSPN, s, t, 0, 0, ctx);
				check(STR_FN_STRCSPN, s, t, 0, 0, ctx);
			}
			/* sets of every size (chains and tables) */
			size_t k = rnd_below(20);

			fill(t, k, alpha);
			t[k] = 0;
			check(STR_FN_STRSPN, s, t, 0, 0, ctx);
			check(STR_FN_STRCSPN, s, t, 0, 0, ctx);
		}
	}
}

/* Every pair of alignments at a few lengths, for the two-string functions. */
static void alignment_pairs(void)
{
	static const size_t lens[] = {0, 1, 15, 16, 31, 32, 33, 64, 100};

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (size_t a1 = 0; a1 < 64; a1 += 3) {
			for (size_t a2 = 0; a2 < 64; a2 += 5) {
				size_t len = lens[li];
				char *s = A + 64 + a1, *t = B + 64 + a2;

				fill(s, len, (int)rnd_below(4));
				s[len] = 0;
				memcpy(t, s, len + 1);
				if (len && (rnd() & 1))
					t[len - 1] ^= 1;
				check(STR_FN_STRCMP, s, t, 0, 0, "alignment pair");
				check(STR_FN_STRCASECMP, s, t, 0, 0, "alignment pair");
				size_t nl = len < 5 ? len : 5;

				memmove(t, s + len - nl, nl);
				t[nl] = 0;
				check(STR_FN_STRSTR, s, t, 0, 0, "alignment pair");
				check(STR_FN_STRSPN, s, t, 0, 0, "alignment pair");
			}
		}
	}
}

int main(void)
{
	char why[256];
	struct btf *vmlinux;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(libbpf_quiet);
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		printf("SKIP: no kernel BTF (/sys/kernel/btf/vmlinux): %s\n", strerror(errno));
		return SKIP;
	}
	bool has[STR_FN_COUNT], any = false, any_new = false;

	printf("kernel string kfuncs:");
	for (int fn = 0; fn < STR_FN_COUNT; fn++) {
		char name[32];

		snprintf(name, sizeof(name), "bpf_%s", fn_names[fn]);
		has[fn] = kernel_has(vmlinux, name);
		printf(" %s%s", fn_names[fn], has[fn] ? "" : " (absent)");
		any |= has[fn];
		if (fn == STR_FN_STRNCASECMP || fn == STR_FN_STRCASESTR || fn == STR_FN_STRNCASESTR)
			any_new |= has[fn];
	}
	printf("\n");
	btf__free(vmlinux);
	if (!any) {
		printf("SKIP: this kernel has no string kfuncs\n");
		return SKIP;
	}
	if (kobj_load(&kobjs[0], STR_KFUNCS_OBJ, why, sizeof(why))) {
		printf("SKIP: %s\n", why);
		kobj_close(&kobjs[0]);
		return SKIP;
	}
	buf = kobjs[0].buf;
	for (int fn = 0; fn < STR_FN_COUNT; fn++)
		if (has[fn] && fn != STR_FN_STRNCASECMP && fn != STR_FN_STRCASESTR &&
		    fn != STR_FN_STRNCASESTR)
			fn_obj[fn] = &kobjs[0];
	if (any_new) {
		/* The later kfuncs: only if all three are there (one object). */
		if (has[STR_FN_STRNCASECMP] && has[STR_FN_STRCASESTR] && has[STR_FN_STRNCASESTR] &&
		    !kobj_load(&kobjs[1], STR_KFUNCS_NEW_OBJ, why, sizeof(why))) {
			fn_obj[STR_FN_STRNCASECMP] = &kobjs[1];
			fn_obj[STR_FN_STRCASESTR] = &kobjs[1];
			fn_obj[STR_FN_STRNCASESTR] = &kobjs[1];
		} else {
			printf("note: not comparing the later kfuncs: %s\n",
			       any_new ? why : "not all present");
			kobj_close(&kobjs[1]);
		}
	}
	/* The user-space view must be the kernel's memory. */
	strcpy(buf + 100, "mapped?");
	int probe = kcall(&kobjs[0], STR_FN_STRLEN, buf + 100, NULL, 0, 0);

	if (probe != 7) {
		printf("SKIP: the program's .bss is not shared with user space\n");
		kobj_close(&kobjs[0]);
		kobj_close(&kobjs[1]);
		return SKIP;
	}

	/* The library's answers: the public calls and every table. */
	const struct str_ops *const *all = bpfmap_str_ops_all();

	impls[0] = &strings_public_ops;
	printf("implementations: public");
	for (int i = 0; all[i] && i + 2 < (int)(sizeof(impls) / sizeof(impls[0])); i++) {
		impls[i + 1] = all[i];
		printf(" %s", all[i]->name);
	}
	printf("\n");
	known_answers();
	long_strings();
	random_strings();
	alignment_pairs();
	adversarial_strings();

	unsigned long total = 0;

	printf("compared with the kernel:");
	for (int fn = 0; fn < STR_FN_COUNT; fn++) {
		if (fn_obj[fn])
			printf(" %s %lu", fn_names[fn], n_calls[fn]);
		total += n_calls[fn];
	}
	printf("\n%lu calls, %lu disagreements with bpfmap, %lu with the reference only\n", total,
	       n_bad, n_refbad);
	for (int fn = 0; fn < STR_FN_COUNT; fn++)
		if (!fn_obj[fn])
			printf("not compared with the kernel: %s (no bpf_%s), %lu calls compared "
			       "with the reference instead\n",
			       fn_names[fn], fn_names[fn], n_ref[fn]);
	kobj_close(&kobjs[0]);
	kobj_close(&kobjs[1]);
	return n_bad || n_refbad ? 1 : 0;
}
