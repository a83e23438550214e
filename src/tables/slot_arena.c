/* SPDX-License-Identifier: BSD-2-Clause */
/* Slots that never move, whose wholly free chunks go back (slot_arena.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sync/backoff.h"
#include "sync/spin_lock.h"
#include "tables/slot_arena.h"
#include "util/big_alloc.h"
#include "util/compiler.h"
#include "util/test_hook.h"

#define CHUNK_NONE UINT32_MAX
/* A chunk's slots, in bytes, about this much (see slot_arena.h). */
#define CHUNK_BYTES_AIM ((size_t)64 << 10)
#define PAGE 4096u
/* Fault pages in ahead from this much in use on (slot_arena.h). */
#define AHEAD_FROM ((size_t)256 << 10)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum chunk_state {
	CHUNK_FULL,     /* on no list: every slot handed out */
	CHUNK_PARTIAL,  /* on the partial list */
	CHUNK_GIVING,   /* all free, being given back outside the lock */
	CHUNK_RELEASED, /* on the released stack */
};

struct slot_chunk {
	uint32_t free_head; /* a free slot's index, 0: none */
	uint32_t nfree;     /* slots on its free list */
	/* A chunk taken back from the released stack hands out its slots in
	 * order from here (an index); 0 for a chunk filled from fresh. */
	uint32_t bump;
	uint32_t prev, next; /* the partial list; next: the released stack */
	uint32_t state;
};

static uint32_t chunk_lo(const struct slot_arena *a, uint32_t c)
{
	return c << a->chunk_shift;
}

/* The chunk's first slot that may be handed out (slot 0 never is). */
static uint32_t chunk_first(const struct slot_arena *a, uint32_t c)
{
	return c ? chunk_lo(a, c) : 1;
}

/* One past the chunk's last slot. */
static uint32_t chunk_hi(const struct slot_arena *a, uint32_t c)
{
	uint64_t hi = ((uint64_t)c + 1) << a->chunk_shift;

	return hi > (uint64_t)a->cap + 1 ? a->cap + 1 : (uint32_t)hi;
}

/* A chunk's bytes (every chunk but a short last one). */
static size_t chunk_bytes(const struct slot_arena *a)
{
	return (size_t)a->stride << a->chunk_shift;
}

static uint32_t *link_of(struct slot_arena *a, uint32_t idx)
{
	return (uint32_t *)(void *)(slot_arena_at(a, idx) + a->link_off);
}

int slot_arena_init_at(struct slot_arena *a, uint32_t cap, uint32_t stride, uint32_t link_off,
		       char *base, uint32_t mirrors, size_t mirror_step)
{
	/* Chunks start on page boundaries: a power of two of slots, at least
	 * PAGE / (stride's largest power-of-two factor), so that a chunk's
	 * bytes are whole pages. */
	uint32_t low = stride & -stride;
	uint32_t shift = 0;

	memset(a, 0, sizeof(*a));
	if (low > PAGE)
		low = PAGE;
	while ((1u << shift) * (size_t)low < PAGE ||
	       ((size_t)2 << shift) * stride <= CHUNK_BYTES_AIM)
		shift++;
	a->stride = stride;
	a->cap = cap;
	a->link_off = link_off;
	a->chunk_shift = shift;
	a->n_chunks = (uint32_t)(((uint64_t)cap + 1 + (1u << shift) - 1) >> shift);
	a->fresh = 1;
	a->partial = CHUNK_NONE;
	a->released = CHUNK_NONE;
	a->mirrors = mirrors;
	a->mirror_step = mirror_step;
	a->own_base = !base;
	a->chunks = calloc(a->n_chunks, sizeof(*a->chunks));
	a->base = base ? base : big_reserve(((size_t)cap + 1) * stride);
	if (!a->chunks || !a->base) {
		slot_arena_destroy(a);
		return -ENOMEM;
	}
	return 0;
}

int slot_arena_init(struct slot_arena *a, uint32_t cap, uint32_t stride, uint32_t link_off)
{
	return slot_arena_init_at(a, cap, stride, link_off, NULL, 1, 0);
}

void slot_arena_destroy(struct slot_arena *a)
{
	if (a->own_base)
		big_unreserve(a->base, ((size_t)a->cap + 1) * a->stride);
	free(a->chunks);
	a->base = NULL;
	a->chunks = NULL;
}

static void partial_unlink(struct slot_arena *a, uint32_t c)
{
	struct slot_chunk *k = &a->chunks[c];

	if (k->prev != CHUNK_NONE)
		a->chunks[k->prev].next = k->next;
	else
		a->partial = k->next;
	if (k->next != CHUNK_NONE)
		a->chunks[k->next].prev = k->prev;
}

static void partial_push(struct slot_arena *a, uint32_t c)
{
	struct slot_chunk *k = &a->chunks[c];

	k->prev = CHUNK_NONE;
	k->next = a->partial;
	if (a->partial != CHUNK_NONE)
		a->chunks[a->partial].prev = c;
	a->partial = c;
	k->state = CHUNK_PARTIAL;
}

/* A slot of a chunk that has free ones, or a released chunk taken back;
 * 0 when neither has one (the lock held). */
static uint32_t alloc_reused_locked(struct slot_arena *a)
{
	uint32_t c = a->partial, idx;
	struct slot_chunk *k;

	if (c == CHUNK_NONE && a->released != CHUNK_NONE) {
		c = a->released;
		k = &a->chunks[c];
		a->released = k->next;
		__atomic_store_n(&a->released_n, a->released_n - 1, __ATOMIC_RELAXED);
		k->free_head = 0;
		k->nfree = 0;
		k->bump = chunk_first(a, c);
		partial_push(a, c);
	}
	if (c == CHUNK_NONE)
		return 0;
	k = &a->chunks[c];
	if (k->free_head) {
		idx = k->free_head;
		k->free_head = __atomic_load_n(link_of(a, idx), __ATOMIC_RELAXED);
		k->nfree--;
	} else {
		idx = k->bump++;
	}
	__atomic_store_n(&a->avail, a->avail - 1, __ATOMIC_RELAXED);
	if (!k->nfree && (!k->bump || k->bump == chunk_hi(a, c))) {
		partial_unlink(a, c);
		k->state = CHUNK_FULL;
	}
	return idx;
}

/*
 * The pages up to @end and a run beyond, in one system call by the thread
 * that moves a->ahead past them.  Where the kernel has no
 * MADV_POPULATE_WRITE (or the call fails) pages fault in one by one, as
 * they would without it.
 */
static void populate_ahead(struct slot_arena *a, size_t end)
{
	size_t have = __atomic_load_n(&a->ahead, __ATOMIC_RELAXED), limit, want;

	limit = ((size_t)a->cap + 1) * a->stride & ~(size_t)(PAGE - 1);
	do {
		size_t run = have / 16 < chunk_bytes(a) ? have / 16 : chunk_bytes(a);

		if (end <= have)
			return;
		want = ((end + PAGE - 1) & ~(size_t)(PAGE - 1)) + (run & ~(size_t)(PAGE - 1));
		if (want > limit)
			want = limit;
		if (want <= have)
			return;
	} while (!__atomic_compare_exchange_n(&a->ahead, &have, want, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	have &= ~(size_t)(PAGE - 1);
	for (uint32_t m = 0; m < a->mirrors; m++)
		(void)madvise(a->base + m * a->mirror_step + have, want - have,
			      MADV_POPULATE_WRITE);
}

uint32_t slot_arena_alloc(struct slot_arena *a)
{
	uint32_t f;
	size_t end;

	if (__atomic_load_n(&a->avail, __ATOMIC_RELAXED)) {
		uint32_t idx;

		spin_lock_word(&a->lock);
		idx = alloc_reused_locked(a);
		spin_unlock_word(&a->lock);
		if (idx)
			return idx;
	}
	f = __atomic_load_n(&a->fresh, __ATOMIC_RELAXED);
	do {
		if (f > a->cap)
			return 0;
	} while (!__atomic_compare_exchange_n(&a->fresh, &f, f + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	end = (size_t)(f + 1) * a->stride;
	if (unlikely(end > __atomic_load_n(&a->ahead, __ATOMIC_RELAXED)) && end >= AHEAD_FROM)
		populate_ahead(a, end);
	return f;
}

/* What chunk @c, all of whose handed-out slots are free, counts in avail:
 * those, and for a chunk taken back from the released stack the slots it
 * has not bumped to yet, which only it can hand out. */
static uint32_t chunk_share(const struct slot_arena *a, uint32_t c, const struct slot_chunk *k)
{
	return k->bump ? chunk_hi(a, c) - chunk_first(a, c) : k->nfree;
}

/*
 * Whether chunk @c, @k->nfree of whose slots are free, has every slot it
 * handed out back, and may go: not a last chunk shorter than the others
 * (its bytes end mid-page), and only while the other chunks keep as many
 * free slots that can be had, which those of a chunk being given back are
 * not: two chunks emptied at once each counted the other's, both went, and
 * nothing could be had until their pages had gone.
 */
static bool chunk_may_go(const struct slot_arena *a, uint32_t c, const struct slot_chunk *k)
{
	uint32_t first = chunk_first(a, c), hi = chunk_hi(a, c), handed;

	if (hi - chunk_lo(a, c) != 1u << a->chunk_shift)
		return false;
	if (k->bump)
		handed = k->bump - first;
	else if (hi <= __atomic_load_n(&a->fresh, __ATOMIC_RELAXED))
		handed = hi - first; /* fresh only grows: all of it handed, for good */
	else
		return false;
	/* Then its share of avail is all it holds: the others' is the rest,
	 * less what chunks being given back hold. */
	return k->nfree == handed && a->avail - a->giving - chunk_share(a, c, k) >= handed;
}

/* Set while this thread gives a chunk's pages back (slot_arena_wait_given). */
static __thread bool giving_here __attribute__((tls_model("initial-exec")));

bool slot_arena_giving_elsewhere(const struct slot_arena *a)
{
	return slot_arena_giving(a) && !__atomic_load_n(&giving_here, __ATOMIC_RELAXED);
}

bool slot_arena_wait_given(const struct slot_arena *a)
{
	unsigned int spins = 0;
	bool waited = false;

	while (slot_arena_giving_elsewhere(a)) {
		waited = true;
		backoff(&spins);
	}
	return waited;
}

void slot_arena_free(struct slot_arena *a, uint32_t idx)
{
	uint32_t c = idx >> a->chunk_shift;
	struct slot_chunk *k = &a->chunks[c];
	uint32_t share;
	bool given;

	spin_lock_word(&a->lock);
	__atomic_store_n(link_of(a, idx), k->free_head, __ATOMIC_RELAXED);
	k->free_head = idx;
	k->nfree++;
	__atomic_store_n(&a->avail, a->avail + 1, __ATOMIC_RELAXED);
	if (k->state == CHUNK_FULL)
		partial_push(a, c);
	if (!chunk_may_go(a, c, k)) {
		spin_unlock_word(&a->lock);
		return;
	}
	/* Off every list while the pages go (a system call, outside the
	 * lock); its slots stay counted in avail, as a released chunk's are,
	 * and its whole share of avail in giving meanwhile: a caller that
	 * finds nothing to allocate must see no room then (slot_arena_room),
	 * and wait for some (slot_arena_giving), not answer that the arena is
	 * exhausted. */
	partial_unlink(a, c);
	k->state = CHUNK_GIVING;
	share = chunk_share(a, c, k);
	__atomic_store_n(&a->giving, a->giving + share, __ATOMIC_RELAXED);
	spin_unlock_word(&a->lock);
	__atomic_store_n(&giving_here, true, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	TEST_HOOK(HOOK_ARENA_GIVING, slot_arena_at(a, chunk_lo(a, c)));

	/* The mirrors first, the slots (which hold the free list's links)
	 * only if all of those went: a chunk kept keeps its links. */
	given = true;
	for (uint32_t m = a->mirrors; given && m-- > 1;)
		given = !madvise(slot_arena_at(a, chunk_lo(a, c)) + m * a->mirror_step,
				 chunk_bytes(a), MADV_DONTNEED);
	given = given && !madvise(slot_arena_at(a, chunk_lo(a, c)), chunk_bytes(a), MADV_DONTNEED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&giving_here, false, __ATOMIC_RELAXED);

	spin_lock_word(&a->lock);
	__atomic_store_n(&a->giving, a->giving - share, __ATOMIC_RELAXED);
	if (given) {
		k->state = CHUNK_RELEASED;
		k->next = a->released;
		a->released = c;
		__atomic_store_n(&a->released_n, a->released_n + 1, __ATOMIC_RELAXED);
	} else {
		partial_push(a, c); /* kept, and counted as kept */
	}
	spin_unlock_word(&a->lock);
}

size_t slot_arena_mem(const struct slot_arena *a)
{
	uint32_t fresh = __atomic_load_n(&a->fresh, __ATOMIC_RELAXED);
	/* Slots 0 .. fresh - 1 are the bytes touched; with none handed out
	 * (fresh 1) slot 0 is untouched too, and an empty arena takes no page. */
	size_t used = fresh > 1 ? big_reserve_used((size_t)fresh * a->stride) : 0;
	size_t ahead = __atomic_load_n(&a->ahead, __ATOMIC_RELAXED);
	size_t back = (size_t)__atomic_load_n(&a->released_n, __ATOMIC_RELAXED) * chunk_bytes(a);

	if (ahead > used)
		used = ahead;
	return (back < used ? used - back : 0) * a->mirrors;
}
