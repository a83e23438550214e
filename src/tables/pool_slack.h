/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How many elements a preallocated table keeps beyond max_entries.  A
 * deleted element waits for a grace period before it is free again; the
 * slack lets inserts go on meanwhile without waiting for one, and, inside
 * a read-side section, without reusing a deleted element at once, which is
 * what a table does once its slack is used up too (the README's one
 * exception to "a pointer never shows another key's data").
 */
#ifndef BPFMAP_TABLES_POOL_SLACK_H
#define BPFMAP_TABLES_POOL_SLACK_H

#include <stdint.h>

#define POOL_SLACK 1024
#define POOL_SLACK_MIN 64
#define POOL_SLACK_BYTES (256u << 10)

/* 1024 elements of @elem_bytes each, in at most 256 KiB but at least 64,
 * and max_entries / 32 more. */
static inline uint64_t pool_slack(uint32_t max_entries, uint64_t elem_bytes)
{
	uint64_t n = POOL_SLACK_BYTES / (elem_bytes ? elem_bytes : 1);

	n = n > POOL_SLACK ? POOL_SLACK : n;
	return (n < POOL_SLACK_MIN ? POOL_SLACK_MIN : n) + max_entries / 32;
}

#endif
