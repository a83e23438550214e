/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A lock-free stack of slot indices (Treiber stack), for preallocated element
 * pools.  The head packs a 32-bit generation tag with the index + 1 so that a
 * pop racing with pop-push-pop of the same slot (ABA) fails its CAS.  Links
 * live in a side array of atomics, never in the slots themselves, because a
 * slot being initialised by its new owner may still be read by a losing pop.
 */
#ifndef BPFMAP_UTIL_FREELIST_H
#define BPFMAP_UTIL_FREELIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FREELIST_EMPTY UINT32_MAX

struct freelist {
	uint64_t head;  /* (tag << 32) | (index + 1); index + 1 == 0: empty */
	uint32_t *next; /* next[i]: index below i on the stack, or FREELIST_EMPTY */
	uint32_t capacity;
	bool borrowed;  /* next belongs to the caller of freelist_init_on */
};

/* Empty list able to hold indices 0 .. capacity - 1; 0 or -ENOMEM. */
int freelist_init(struct freelist *fl, uint32_t capacity);

/* The same on the caller's array of @capacity atomic words, which an index
 * uses only while on the list (a pool's own link words, say: a pop that
 * loses its race may read one being rewritten, and then fails its CAS). */
void freelist_init_on(struct freelist *fl, uint32_t *links, uint32_t capacity);
void freelist_destroy(struct freelist *fl);
void freelist_push(struct freelist *fl, uint32_t index);

/* A chain of indices built by the caller, none on the list, pushed with one
 * CAS rather than one each: freelist_chain_add() them one by one (the last
 * added ends on top), then freelist_push_chain(). */
struct freelist_chain {
	uint32_t top, bottom; /* FREELIST_EMPTY: empty */
};

#define FREELIST_CHAIN_EMPTY ((struct freelist_chain){ FREELIST_EMPTY, FREELIST_EMPTY })

static inline void freelist_chain_add(struct freelist *fl, struct freelist_chain *c,
				      uint32_t index)
{
	__atomic_store_n(&fl->next[index], c->top, __ATOMIC_RELAXED);
	if (c->top == FREELIST_EMPTY)
		c->bottom = index;
	c->top = index;
}

void freelist_push_chain(struct freelist *fl, const struct freelist_chain *c);
/* An index, or FREELIST_EMPTY. */
uint32_t freelist_pop(struct freelist *fl);

/* Whether the list was empty when looked at (a hint: others may push). */
static inline bool freelist_looks_empty(const struct freelist *fl)
{
	return (uint32_t)__atomic_load_n(&fl->head, __ATOMIC_RELAXED) == 0;
}
size_t freelist_mem_usage(const struct freelist *fl);

#endif
