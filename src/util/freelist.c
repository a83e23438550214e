/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/freelist.h"

int freelist_init(struct freelist *fl, uint32_t capacity)
{
	fl->head = 0;
	fl->capacity = capacity;
	fl->borrowed = false;
	fl->next = malloc((size_t)(capacity ? capacity : 1) * sizeof(*fl->next));
	return fl->next ? 0 : -ENOMEM;
}

void freelist_init_on(struct freelist *fl, uint32_t *links, uint32_t capacity)
{
	fl->head = 0;
	fl->capacity = capacity;
	fl->borrowed = true;
	fl->next = links;
}

void freelist_destroy(struct freelist *fl)
{
	if (!fl->borrowed)
		free(fl->next);
	fl->next = NULL;
}

void freelist_push(struct freelist *fl, uint32_t index)
{
	freelist_push_chain(fl, &(struct freelist_chain){ index, index });
}

void freelist_push_chain(struct freelist *fl, const struct freelist_chain *c)
{
	uint64_t old = __atomic_load_n(&fl->head, __ATOMIC_RELAXED), new;

	if (c->top == FREELIST_EMPTY)
		return;
	do {
		/* The chain is ours until the CAS: only its bottom's link
		 * changes, to what is on top now (FREELIST_EMPTY if none). */
		__atomic_store_n(&fl->next[c->bottom], (uint32_t)old - 1, __ATOMIC_RELAXED);
		new = ((old >> 32) + 1) << 32 | (uint64_t)(c->top + 1);
	} while (!__atomic_compare_exchange_n(&fl->head, &old, new, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

uint32_t freelist_pop(struct freelist *fl)
{
	uint64_t old = __atomic_load_n(&fl->head, __ATOMIC_ACQUIRE), new;
	uint32_t top;

	do {
		if ((uint32_t)old == 0)
			return FREELIST_EMPTY;
		top = (uint32_t)old - 1;
		uint32_t below = __atomic_load_n(&fl->next[top], __ATOMIC_RELAXED);
		new = ((old >> 32) + 1) << 32 | (uint64_t)(below + 1);
	} while (!__atomic_compare_exchange_n(&fl->head, &old, new, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	return top;
}

size_t freelist_mem_usage(const struct freelist *fl)
{
	return fl->borrowed ? 0 : (size_t)fl->capacity * sizeof(*fl->next);
}
