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

/*
 * How many deleted elements may wait for reclamation, in a table whose
 * deletes made outside read-side sections reclaim in batches: @n, fewer
 * when they take more than WAITING_BYTES and more than max_entries / 16,
 * but not fewer than WAITING_MIN (nor than @n).  Counted in elements
 * alone, a batch costs as much as its elements are large: a one-entry map
 * of 1 MiB values turned over by delete + insert pairs touched 72 MiB
 * (HASH), 229 MiB (RHASH).  Maps of large elements then wait for a grace
 * period sooner, which costs less than copying one of their values.  The
 * slack stays as it is: inserts inside sections cannot wait, and use it
 * (address space until then).
 */
#define WAITING_BYTES (4u << 20)
#define WAITING_MIN 4

static inline uint64_t waiting_bounded(uint64_t n, uint64_t elem_bytes, uint32_t max_entries)
{
	uint64_t fit = WAITING_BYTES / (elem_bytes ? elem_bytes : 1);

	fit = fit < WAITING_MIN ? WAITING_MIN : fit;
	fit = fit < max_entries / 16 ? max_entries / 16 : fit;
	return n < fit ? n : fit;
}

/* 1024 elements of @elem_bytes each, in at most 256 KiB but at least 64,
 * and max_entries / 32 more. */
static inline uint64_t pool_slack(uint32_t max_entries, uint64_t elem_bytes)
{
	uint64_t n = POOL_SLACK_BYTES / (elem_bytes ? elem_bytes : 1);

	n = n > POOL_SLACK ? POOL_SLACK : n;
	return (n < POOL_SLACK_MIN ? POOL_SLACK_MIN : n) + max_entries / 32;
}

#endif
