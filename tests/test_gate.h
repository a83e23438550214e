/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A reclamation callback of the test's own that holds liburcu's callback
 * thread (which runs callbacks one at a time, in the order queued) from when
 * it runs until released, and waits on flags with a watchdog: a test that
 * waits for what waits for it fails after GATE_WATCHDOG_S instead of
 * hanging.  A deadlock detector, not a timing.
 */
#ifndef BPFMAP_TEST_GATE_H
#define BPFMAP_TEST_GATE_H

#include <stdbool.h>
#include <time.h>

#include "test_util.h"
#include "sync/rcu.h"
#include "util/compiler.h"

#define GATE_WATCHDOG_S 30

static inline void set_flag(int *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

/* Wait for *flag; false if the watchdog fired first. */
static inline bool wait_flag(const int *flag)
{
	struct timespec t0, now, ms = { 0, 1000000 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		nanosleep(&ms, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= GATE_WATCHDOG_S)
			return false;
	}
	return true;
}

struct gate {
	struct rcu_head rcu;
	int reached; /* atomic */
	int open;    /* atomic */
	int done;    /* atomic */
	int gave_up;
};

static inline void gate_cb(struct rcu_head *head)
{
	struct gate *g = container_of(head, struct gate, rcu);

	rcu_deferred_enter();
	set_flag(&g->reached);
	if (!wait_flag(&g->open))
		g->gave_up = 1;
	set_flag(&g->done);
	rcu_deferred_exit();
}

static inline void gate_wait_reached(struct gate *g)
{
	assert_true(wait_flag(&g->reached));
}

/* Let the gate's callback return, and wait until it has (g may then go). */
static inline void gate_release(struct gate *g)
{
	set_flag(&g->open);
	assert_true(wait_flag(&g->done));
	assert_int_equal(g->gave_up, 0);
}

#endif
