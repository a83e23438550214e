/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A cheap, process-wide clock for ordering events across threads (the LRU
 * lists' ages): 64 bits that never wrap in practice.  On x86 the TSC
 * (invariant and synchronised across CPUs on every machine this targets,
 * one instruction); elsewhere the monotonic clock in nanoseconds.  Only the
 * order matters, never the unit.
 */
#ifndef BPFMAP_UTIL_CLOCK_H
#define BPFMAP_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "util/compiler.h"

static ALWAYS_INLINE uint64_t clock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

#endif
