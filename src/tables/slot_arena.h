/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An arena of fixed-stride slots named by 32-bit indexes (1 .. cap; 0 is
 * the caller's "none"), in address space reserved once, so that a slot
 * never moves.  Pages cost memory from their first use.  A chunk of slots
 * whose every slot is free again goes back to the kernel (MADV_DONTNEED)
 * and is used again before any slot never used, so that the memory of a
 * map that grew and shrank follows what it holds.
 *
 * Why chunks and not pages: a chunk is the unit whose free slots are
 * counted, and a count per 4 KiB page would be one per 256 elements; a
 * chunk of about 64 KiB keeps the bookkeeping to a few hundred counts a
 * million slots, and still leaves a map that shrinks little beyond its
 * live slots' chunks.
 *
 * Slots are handed out first from chunks that have free ones (most
 * recently freed into first), then from released chunks, then from the
 * never-used tail with one compare-and-swap, no lock: the path of a map
 * that only grows.  A chunk becomes released only while the other chunks
 * keep at least a chunk's worth of free slots, so that a map holding
 * steady at a chunk boundary does not give back and fault in the same
 * pages over and over.
 *
 * A growing arena faults its fresh pages in ahead of use, a run at a time
 * (MADV_POPULATE_WRITE, Linux 5.14): one system call for a run instead of
 * a fault per page, which in a virtual machine costs microseconds each.
 * The run is a sixteenth of what is in use (at most a chunk), and only
 * from 256 KiB on, so that a small map's memory still follows its slots
 * to the page; slot_arena_mem counts what was faulted in ahead.
 *
 * A free slot holds its free-list link at link_off (4 bytes, written and
 * read atomically, so that readers who may still look at a slot freed
 * without a grace period can): the caller must not need those bytes of a
 * slot it freed.
 */
#ifndef BPFMAP_TABLES_SLOT_ARENA_H
#define BPFMAP_TABLES_SLOT_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sync/spin_lock.h"

struct slot_chunk;

struct slot_arena {
	char *base;          /* slot i at base + i * stride */
	/* Mirrors (slot_arena_init_at): slot i also at base + m * mirror_step
	 * + i * stride, m < mirrors, paged in and given back with it. */
	size_t mirror_step;
	uint32_t mirrors;
	bool own_base;       /* reserved by slot_arena_init, not given */
	uint32_t stride;
	uint32_t cap;        /* the last slot's index */
	uint32_t link_off;
	uint32_t chunk_shift; /* slots per chunk: 1 << chunk_shift */
	uint32_t n_chunks;
	uint32_t fresh;      /* atomic: the first slot never handed out */
	size_t ahead;        /* atomic: bytes from base faulted in (or being) */
	uint32_t avail;      /* atomic: slots the chunks can hand out again */
	uint32_t giving;     /* atomic: of those, a giving chunk's: none to be had now */
	uint32_t released_n; /* atomic: chunks given back, not yet reused */
	uint32_t lock;       /* spin_lock_word: the chunks' lists and counts */
	uint32_t partial;    /* the chunks with free slots, a list */
	uint32_t released;   /* the chunks given back, a stack */
	struct slot_chunk *chunks;
};

/* Reserve slots 1 .. @cap of @stride bytes (a multiple of 8), a free one
 * linked through its 4 bytes at @link_off.  0 or -ENOMEM. */
int slot_arena_init(struct slot_arena *a, uint32_t cap, uint32_t stride, uint32_t link_off);
/* The same in address space the caller reserved (big_reserve), or with a
 * NULL @base its own, as slot_arena_init: slot i at @base + i * @stride,
 * @base page-aligned, and @mirrors - 1 more arrays of slots @mirror_step
 * bytes apart (a multiple of the page) whose slot i is handed out, paged in
 * and given back with slot i: a per-CPU map's regions, one a CPU.  The
 * caller frees its address space after slot_arena_destroy. */
int slot_arena_init_at(struct slot_arena *a, uint32_t cap, uint32_t stride, uint32_t link_off,
		       char *base, uint32_t mirrors, size_t mirror_step);
void slot_arena_destroy(struct slot_arena *a);

static inline char *slot_arena_at(const struct slot_arena *a, uint32_t idx)
{
	return a->base + (size_t)idx * a->stride;
}

/* A slot's index, or 0 when every slot is in use.  Its bytes are not
 * cleared: zeros if never used or given back, else what its last owner
 * and the free-list link left there. */
uint32_t slot_arena_alloc(struct slot_arena *a);
/* @idx back: nothing may reach it any more.  Any thread. */
void slot_arena_free(struct slot_arena *a, uint32_t idx);
/* Slots that slot_arena_alloc can hand out now (a snapshot: other
 * threads may take or give back any at once). */
static inline uint32_t slot_arena_room(const struct slot_arena *a)
{
	uint32_t avail = __atomic_load_n(&a->avail, __ATOMIC_RELAXED);
	uint32_t giving = __atomic_load_n(&a->giving, __ATOMIC_RELAXED);

	/* Two loads, no lock: giving may count frees avail was read before. */
	return (avail > giving ? avail - giving : 0) + a->cap + 1 -
	       __atomic_load_n(&a->fresh, __ATOMIC_RELAXED);
}
/* Whether a chunk is being given back: its slots are room again soon. */
static inline bool slot_arena_giving(const struct slot_arena *a)
{
	return __atomic_load_n(&a->giving, __ATOMIC_ACQUIRE);
}
/*
 * The same, for waiters: a chunk being given back by another thread.  One
 * this thread is giving back itself, which only its signal handler could
 * meet, would be waited for for ever.
 */
bool slot_arena_giving_elsewhere(const struct slot_arena *a);
/* Wait while another thread gives a chunk back (a system call, no grace
 * period: callers inside read-side sections may wait for it), and say
 * whether there was one. */
bool slot_arena_wait_given(const struct slot_arena *a);

/* fork(): hold the arena's lock, and give it back (sync/fork_guard.h). */
static inline void slot_arena_hold(struct slot_arena *a)
{
	spin_lock_word(&a->lock);
}

static inline void slot_arena_release(struct slot_arena *a)
{
	spin_unlock_word(&a->lock);
}

/* The memory the slots take now: the pages used, less those given back. */
size_t slot_arena_mem(const struct slot_arena *a);

#endif
