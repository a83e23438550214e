/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CPU the calling thread runs on, for per-CPU shards: glibc registers
 * each thread's rseq area, where the kernel keeps it current (one load,
 * against sched_getcpu()'s ~2 ns here).  Any CPU is a correct answer: a
 * thread that moves on only shares a line it should not.
 */
#ifndef BPFMAP_UTIL_CPU_H
#define BPFMAP_UTIL_CPU_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
#define CPU_HAVE_RSEQ 1
#endif

#include "util/compiler.h"

uint32_t cpu_current_slow(void);

/* Shards for per-CPU counters and buffers: the possible CPUs rounded up to
 * a power of two, at most 64 (a thread indexes them by cpu_current() & (n
 * - 1)); 0 on one CPU, where sharding only costs. */
uint32_t cpu_shards(void);

#ifdef CPU_HAVE_RSEQ
/* glibc's __rseq_offset, copied when the library loads (util/cpu.c): one
 * load from this library's data, not two through the GOT. */
extern ptrdiff_t cpu_rseq_offset;
#endif

/* The rseq area's CPU number: negative where there is none (glibc sets -2
 * when it did not register rseq, and __rseq_size is then 0; the offset is
 * valid either way), so the one load and its sign are the whole test.
 * Before the copy of the offset, this reads the upper half of the thread
 * pointer (no CPU number a map has, or any CPU: either is correct). */
static ALWAYS_INLINE int32_t cpu_current_raw(void)
{
#ifdef CPU_HAVE_RSEQ
	const struct rseq *rs =
		(const struct rseq *)(const void *)((const char *)__builtin_thread_pointer() +
						    cpu_rseq_offset);

	return (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
#else
	return -1;
#endif
}

static ALWAYS_INLINE uint32_t cpu_current(void)
{
	int32_t cpu = cpu_current_raw();

	return likely(cpu >= 0) ? (uint32_t)cpu : cpu_current_slow();
}

#endif
