/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CPU the calling thread runs on, for per-CPU shards: glibc registers
 * each thread's rseq area, where the kernel keeps it current (one load,
 * against sched_getcpu()'s ~2 ns here).  Any CPU is a correct answer: a
 * thread that moves on only shares a line it should not.
 */
#ifndef BPFMAP_UTIL_CPU_H
#define BPFMAP_UTIL_CPU_H

#include <stdbool.h>
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
						    __atomic_load_n(&cpu_rseq_offset,
								    __ATOMIC_RELAXED));

	return (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
#else
	return -1;
#endif
}

/* Beyond any CPU number a kernel gives (its NR_CPUS is at most 8192), and
 * within struct bpfmap's 16-bit count of slots: a list naming CPU 65535
 * made 65536 slots, which wrapped to 0, "not per-CPU". */
#define CPU_SLOTS_MAX 65535

/* The possible CPUs, read once from the kernel's list (or sysconf where
 * sysfs has none); -errno if neither says.  cpu_possible(): their count,
 * libbpf's, which sizes the syscall view's per-CPU buffers; cpu_slots():
 * the highest one's number + 1, the slots of a per-CPU value, indexed by
 * CPU number.  The two differ only where the list has gaps ("0-3,8"). */
int cpu_possible(void);
int cpu_slots(void);

/* Where the list has gaps, the CPU of each rank in it (the syscall view's
 * per-CPU layout, the kernel's for_each_possible_cpu order); NULL where
 * it has none, rank r being CPU r. */
const uint32_t *cpu_ranked(void);

/* Possible CPU @cpu's rank in the list, UINT32_MAX for a CPU number that
 * is not possible. */
uint32_t cpu_rank_of(uint32_t cpu);

/*
 * Whether rseq's CPU numbers may index a per-CPU map's slots unchecked:
 * glibc registered rseq in this process, and the possible CPUs (every
 * per-CPU map's slot count) were read from the kernel's own mask, above
 * every CPU number the kernel writes into an rseq area.  Set once, when
 * cpu_possible() first reads that mask, so before any per-CPU map exists;
 * false where the count came from sysconf (no sysfs), which promises no
 * such bound.
 */
extern bool cpu_rseq_indexes;

static inline bool cpu_rseq_usable(void)
{
	return __atomic_load_n(&cpu_rseq_indexes, __ATOMIC_ACQUIRE);
}

/*
 * The calling thread's CPU for a per-CPU map's slot where cpu_rseq_indexes
 * held at the map's creation: rseq's cpu_id_start, which the kernel keeps
 * a valid CPU number, with no check.  A thread whose registration failed
 * reads 0, or a number a thread before it left there (glibc reuses thread
 * descriptors): a valid CPU either way, and any CPU is a correct answer.
 */
static ALWAYS_INLINE uint32_t cpu_current_rseq(void)
{
#ifdef CPU_HAVE_RSEQ
	const struct rseq *rs =
		(const struct rseq *)(const void *)((const char *)__builtin_thread_pointer() +
						    __atomic_load_n(&cpu_rseq_offset,
								    __ATOMIC_RELAXED));

	return __atomic_load_n(&rs->cpu_id_start, __ATOMIC_RELAXED);
#else
	return 0; /* never chosen: cpu_rseq_indexes stays false */
#endif
}

static ALWAYS_INLINE uint32_t cpu_current(void)
{
	int32_t cpu = cpu_current_raw();

	return likely(cpu >= 0) ? (uint32_t)cpu : cpu_current_slow();
}

#endif
