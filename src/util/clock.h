/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A coarse, cheap, process-wide clock for ordering events across threads
 * (the LRU lists' ages): 32 bits that wrap after about a day, compared by
 * their signed difference.  On x86 the TSC (invariant on every CPU this
 * runs on, one instruction); elsewhere the monotonic clock.
 */
#ifndef BPFMAP_UTIL_CLOCK_H
#define BPFMAP_UTIL_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "util/compiler.h"

static ALWAYS_INLINE uint32_t coarse_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return (uint32_t)(__rdtsc() >> 16); /* ~20 us steps at 3 GHz */
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) >> 14);
#endif
}

/* True when tick @a is before tick @b (within half the wrap). */
static ALWAYS_INLINE bool coarse_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

#endif
