/* SPDX-License-Identifier: BSD-2-Clause */
/* The calling thread's CPU (util/cpu.h): the rseq offset's copy and the
 * fallback. */
#define _GNU_SOURCE
#include <sched.h>

#include <bpfmap.h>

#include "util/cpu.h"

#ifdef CPU_HAVE_RSEQ
ptrdiff_t cpu_rseq_offset;

__attribute__((constructor)) static void cpu_rseq_offset_init(void)
{
	cpu_rseq_offset = __rseq_offset;
}
#endif

uint32_t cpu_current_slow(void)
{
	return (uint32_t)sched_getcpu();
}

uint32_t cpu_shards(void)
{
	int cpus = bpfmap_num_possible_cpus();
	uint32_t n = 1;

	if (cpus < 2)
		return 0;
	while (n < (uint32_t)cpus && n < 64)
		n *= 2;
	return n;
}
