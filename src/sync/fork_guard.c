/* SPDX-License-Identifier: BSD-2-Clause */
/* The registry of fork guards (sync/fork_guard.h). */
#include <pthread.h>

#include "sync/fork_guard.h"
#include "util/big_alloc.h"

static pthread_mutex_t guards_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct fork_guard guards = { &guards, &guards, NULL, NULL };

void fork_guard_add(struct fork_guard *g)
{
	pthread_mutex_lock(&guards_mutex);
	g->next = &guards;
	g->prev = guards.prev;
	guards.prev->next = g;
	guards.prev = g;
	pthread_mutex_unlock(&guards_mutex);
}

/* Under the mutex from the first read: g->next changes when another
 * thread adds a guard after g. */
void fork_guard_remove(struct fork_guard *g)
{
	pthread_mutex_lock(&guards_mutex);
	if (g->next) { /* NULL: never added, its map's creation failed first */
		g->prev->next = g->next;
		g->next->prev = g->prev;
		g->prev = g->next = g;
	}
	pthread_mutex_unlock(&guards_mutex);
}

/* The mutex stays held from here to the parent's or the child's handler:
 * no map comes or goes meanwhile. */
void fork_guard_prepare(void)
{
	pthread_mutex_lock(&guards_mutex);
	for (struct fork_guard *g = guards.next; g != &guards; g = g->next)
		g->hold(g);
	big_fork_hold(); /* last: its holders may hold a map's lock */
}

static void fork_guard_release_all(void)
{
	big_fork_release();
	for (struct fork_guard *g = guards.next; g != &guards; g = g->next)
		g->release(g);
	pthread_mutex_unlock(&guards_mutex);
}

void fork_guard_parent(void)
{
	fork_guard_release_all();
}

/* The child's one thread is the one that locked the mutex. */
void fork_guard_child(void)
{
	fork_guard_release_all();
}
