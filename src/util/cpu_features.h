/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the CPU (and OS) runs, for the library's two run-time dispatch
 * points: the string functions (strings/str_dispatch.c) and the flat
 * table's word-key lookups (tables/flat_lookup.c).  __builtin_cpu_supports
 * also checks that the OS saves the vector registers.  Inline and without
 * sanitizer instrumentation: the string dispatch runs as an ifunc resolver,
 * while the dynamic linker relocates.
 */
#ifndef BPFMAP_UTIL_CPU_FEATURES_H
#define BPFMAP_UTIL_CPU_FEATURES_H

#include <stdbool.h>

#if defined(__x86_64__) || defined(__i386__)
#define CPU_X86 1
#else
#define CPU_X86 0
#endif

#define CPU_PROBE_ATTRS __attribute__((no_sanitize("address", "thread", "undefined")))

#if CPU_X86
static inline CPU_PROBE_ATTRS bool cpu_runs_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

/* AVX-512 with byte/word instructions (F + BW), what the string code needs. */
static inline CPU_PROBE_ATTRS bool cpu_runs_avx512bw(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

/* Intel's Skylake-SP generation lowers its clock for 512-bit work: both
 * dispatchers skip AVX-512 there. */
static inline CPU_PROBE_ATTRS bool cpu_avx512_slows_clock(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_is("skylake-avx512") || __builtin_cpu_is("cascadelake") ||
	       __builtin_cpu_is("cooperlake");
}
#endif

#endif
