/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CPU the calling thread runs on, for per-CPU shards: glibc registers
 * each thread's rseq area, where the kernel keeps it current (one load,
 * against sched_getcpu()'s ~2 ns here).  Any CPU is a correct answer: a
 * thread that moves on only shares a line it should not.
 */
#ifndef BPFMAP_UTIL_CPU_H
#define BPFMAP_UTIL_CPU_H

#include <stdint.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
#define CPU_HAVE_RSEQ 1
#endif

#include "util/compiler.h"

uint32_t cpu_current_slow(void);

static ALWAYS_INLINE uint32_t cpu_current(void)
{
#ifdef CPU_HAVE_RSEQ
	if (likely(__rseq_size)) {
		const struct rseq *rs =
			(const struct rseq *)(const void *)((const char *)__builtin_thread_pointer() +
							    __rseq_offset);
		int32_t cpu = (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);

		if (likely(cpu >= 0))
			return (uint32_t)cpu;
	}
#endif
	return cpu_current_slow();
}

#endif
