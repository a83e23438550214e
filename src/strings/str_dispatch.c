/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The string functions' one run-time dispatch point: str_select() asks the CPU
 * what it runs (__builtin_cpu_supports also checks that the OS saves the
 * vector registers) and names the best implementation table: AVX-512BW
 * (except where 512-bit work slows the clock), AVX2, SSE2, else SWAR.  Under
 * Valgrind it also turns on careful mode (see str_internal.h).  Its answer
 * never changes.
 *
 * On glibc/ELF the public functions are GNU indirect functions: the dynamic
 * linker calls str_select() once per symbol while relocating, and calls then
 * go straight to the chosen code, as with the C library's own string
 * functions.  Elsewhere each public function makes one indirect call through
 * the table, published once (pthread_once) at load time or first use.
 */
#include <pthread.h>
#include <stdatomic.h>

#include <bpfmap.h>

#define STR_TARGET
#include "strings/str_internal.h"
#include "util/cpu_features.h"

/* valgrind.h (BSD-style licence, header only) when installed: its client
 * request costs a few no-op instructions outside Valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define BPFMAP_HAVE_VALGRIND_H 1
#endif
#endif

#if defined(__GLIBC__) && defined(__ELF__) && defined(__GNUC__) && !defined(BPFMAP_NO_IFUNC)
#define STR_IFUNC 1
#endif

/*
 * The choice itself.  Safe to run while the dynamic linker relocates (an
 * ifunc resolver): no locks, no allocation, no sanitizer instrumentation.
 * Racing callers compute and store the same values.
 */
#define STR_SELECT_ATTRS __attribute__((no_sanitize("address", "thread", "undefined")))

enum str_isa { STR_SWAR, STR_SSE2, STR_AVX2, STR_AVX512 };

/* May this CPU (and OS: libgcc checks the saved register state) run isa? */
STR_SELECT_ATTRS static bool str_cpu_runs(enum str_isa isa)
{
#if CPU_X86
	switch (isa) {
	case STR_AVX512:
		/* That table is built for BMI1/2 as well (a mask below a bound
		 * is one bzhi, kept out of the mask registers): every
		 * AVX512BW CPU has them, a VM may hide them. */
		__builtin_cpu_init();
		return cpu_runs_avx512bw() && __builtin_cpu_supports("bmi") &&
		       __builtin_cpu_supports("bmi2");
	case STR_AVX2:
		return cpu_runs_avx2();
	case STR_SSE2:
		__builtin_cpu_init();
		return __builtin_cpu_supports("sse2");
	default:
		return true;
	}
#else
	return isa == STR_SWAR;
#endif
}

STR_SELECT_ATTRS static const struct str_ops *str_select(void)
{
#ifdef BPFMAP_HAVE_VALGRIND_H
	if (RUNNING_ON_VALGRIND)
		__atomic_store_n(&bpfmap_str_careful, true, __ATOMIC_RELAXED);
#endif
#if CPU_X86
	if (str_cpu_runs(STR_AVX512) && !cpu_avx512_slows_clock())
		return &bpfmap_str_ops_avx512;
	if (str_cpu_runs(STR_AVX2))
		return &bpfmap_str_ops_avx2;
	if (str_cpu_runs(STR_SSE2))
		return &bpfmap_str_ops_sse2;
#endif
	return &bpfmap_str_ops_swar;
}

/* The table (also what tests and benchmarks use to reach every variant). */
static pthread_once_t str_once = PTHREAD_ONCE_INIT;
static const struct str_ops *str_list[5]; /* the choice first, NULL-terminated */
static _Atomic(const struct str_ops *) str_chosen;

static void str_init(void)
{
	static const struct {
		enum str_isa isa;
		const struct str_ops *ops;
	} all[] = {
#if CPU_X86
		{STR_AVX512, &bpfmap_str_ops_avx512},
		{STR_AVX2, &bpfmap_str_ops_avx2},
		{STR_SSE2, &bpfmap_str_ops_sse2},
#endif
		{STR_SWAR, &bpfmap_str_ops_swar},
	};
	const struct str_ops *best = str_select();
	int n = 0;

	str_list[n++] = best;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].ops != best && str_cpu_runs(all[i].isa))
			str_list[n++] = all[i].ops;
	atomic_store_explicit(&str_chosen, best, memory_order_release);
}

/* Resolve at load time; the lazy path below covers calls from other
 * constructors that run first. */
__attribute__((constructor)) static void str_ctor(void)
{
	pthread_once(&str_once, str_init);
}

static inline const struct str_ops *str_ops(void)
{
	const struct str_ops *o = atomic_load_explicit(&str_chosen, memory_order_acquire);

	if (__builtin_expect(o == NULL, 0)) {
		pthread_once(&str_once, str_init);
		o = atomic_load_explicit(&str_chosen, memory_order_acquire);
	}
	return o;
}

const struct str_ops *bpfmap_str_ops(void)
{
	return str_ops();
}

const struct str_ops *const *bpfmap_str_ops_all(void)
{
	pthread_once(&str_once, str_init);
	return str_list;
}

/*
 * The public functions.  STR_PUBLIC(name, args, call-args) defines
 * bpfmap_<name> as an ifunc resolved by str_select(), or as a call through
 * the table.
 */
#ifdef STR_IFUNC
#define STR_PUBLIC(name, ret, params, args)                                          \
	STR_SELECT_ATTRS __attribute__((used)) static __typeof__(bpfmap_##name) *str_resolve_##name(void) \
	{                                                                            \
		return str_select()->name;                                           \
	}                                                                            \
	BPFMAP_API ret bpfmap_##name params __attribute__((ifunc("str_resolve_" #name)));
#else
#define STR_PUBLIC(name, ret, params, args)                                          \
	BPFMAP_API ret bpfmap_##name params                                          \
	{                                                                            \
		return str_ops()->name args;                                         \
	}
#endif

STR_PUBLIC(strcmp, int, (const char *s1, const char *s2), (s1, s2))
STR_PUBLIC(strcasecmp, int, (const char *s1, const char *s2), (s1, s2))
STR_PUBLIC(strncasecmp, int, (const char *s1, const char *s2, size_t len), (s1, s2, len))
STR_PUBLIC(strchr, int, (const char *s, char c), (s, c))
STR_PUBLIC(strchrnul, int, (const char *s, char c), (s, c))
STR_PUBLIC(strnchr, int, (const char *s, size_t count, char c), (s, count, c))
STR_PUBLIC(strrchr, int, (const char *s, int c), (s, c))
STR_PUBLIC(strlen, int, (const char *s), (s))
STR_PUBLIC(strnlen, int, (const char *s, size_t count), (s, count))
STR_PUBLIC(strspn, int, (const char *s, const char *accept), (s, accept))
STR_PUBLIC(strcspn, int, (const char *s, const char *reject), (s, reject))
STR_PUBLIC(strstr, int, (const char *s1, const char *s2), (s1, s2))
STR_PUBLIC(strnstr, int, (const char *s1, const char *s2, size_t len), (s1, s2, len))
STR_PUBLIC(strcasestr, int, (const char *s1, const char *s2), (s1, s2))
STR_PUBLIC(strncasestr, int, (const char *s1, const char *s2, size_t len), (s1, s2, len))
