/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The string kfunc family, internal interface.
 *
 * One template (str_impl.h) holds the kernel's semantics and the scanning
 * algorithms, written against a small "block" vocabulary (aligned load,
 * compare, lane mask).  It is compiled four times: 8-byte words (SWAR, every
 * CPU), SSE2, AVX2 and AVX-512BW (x86), each time producing a complete table
 * of the fifteen functions.  str_dispatch.c picks the best table this CPU
 * runs, once per process, and the public bpfmap_str*() functions go to it.
 * str_twoway.c, compiled once, is where the substring searches go on when
 * trying candidate after candidate grows costly: it takes linear time.
 */
#ifndef BPFMAP_STRINGS_STR_INTERNAL_H
#define BPFMAP_STRINGS_STR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* The kernel's XATTR_SIZE_MAX: no string is examined past this many bytes. */
#define STR_MAX 65536

/* One implementation of the whole family; the signatures of bpfmap.h. */
struct str_ops {
	const char *name; /* "avx512", "avx2", "sse2", "swar" */
	int (*strcmp)(const char *s1, const char *s2);
	int (*strcasecmp)(const char *s1, const char *s2);
	int (*strncasecmp)(const char *s1, const char *s2, size_t len);
	int (*strchr)(const char *s, char c);
	int (*strchrnul)(const char *s, char c);
	int (*strnchr)(const char *s, size_t count, char c);
	int (*strrchr)(const char *s, int c);
	int (*strlen)(const char *s);
	int (*strnlen)(const char *s, size_t count);
	int (*strspn)(const char *s, const char *accept);
	int (*strcspn)(const char *s, const char *reject);
	int (*strstr)(const char *s1, const char *s2);
	int (*strnstr)(const char *s1, const char *s2, size_t len);
	int (*strcasestr)(const char *s1, const char *s2);
	int (*strncasestr)(const char *s1, const char *s2, size_t len);
};

extern const struct str_ops bpfmap_str_ops_swar;
#if defined(__x86_64__) || defined(__i386__)
extern const struct str_ops bpfmap_str_ops_sse2;
extern const struct str_ops bpfmap_str_ops_avx2;
extern const struct str_ops bpfmap_str_ops_avx512;
#endif

/* The table the public functions use (chosen once, on first use). */
const struct str_ops *bpfmap_str_ops(void);

/*
 * Every table this CPU can run, best first, NULL-terminated; tests run each
 * of them against the reference, benchmarks may compare them.
 */
const struct str_ops *const *bpfmap_str_ops_all(void);

/*
 * Functions that read whole aligned blocks (bytes past a string's end but in
 * the same aligned block, hence the same page) are not instrumented by the
 * sanitizers; everything they call is inlined into them.  STR_TARGET is the
 * instruction-set attribute of the including implementation file.
 */
#define STR_NOSAN __attribute__((no_sanitize("address", "thread")))
#define STR_FN static inline __attribute__((always_inline)) STR_TARGET STR_NOSAN

/*
 * Careful mode: scan one block at a time, never loading a block that lies
 * wholly past a terminator (page-safe either way, but Valgrind's
 * --partial-loads-ok only forgives blocks that straddle the end of memory).
 * Set once by the dispatcher when running under Valgrind.
 */
extern bool bpfmap_str_careful;

/* The kernel's tolower() on a byte: ASCII and Latin-1 (0xC0-0xDE but 0xD7). */
extern const unsigned char bpfmap_str_fold[256];

/*
 * The substring search in linear time (str_twoway.c): the kernel's answer for
 * haystack s, bound len and a non-empty needle, given that no position below
 * start (< min(len, STR_MAX); no NUL in s[0, start)) gives one.
 */
int bpfmap_str_linear(const unsigned char *s, const unsigned char *needle, size_t len,
		      size_t start, bool fold);

#ifdef BPFMAP_TEST_HOOKS
/*
 * Test builds: the substring searches' work, in blocks compared by the block
 * scans and bytes examined by the linear search.
 */
extern unsigned long bpfmap_str_work;
#define STR_WORK(n) (bpfmap_str_work += (n))
#else
#define STR_WORK(n) ((void)0)
#endif

#endif
