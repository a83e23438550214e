/* SPDX-License-Identifier: BSD-2-Clause */
/* liburcu glue: deferred reclamation and the public read-side section calls. */
#include <bpfmap.h>

#include "core/rcu.h"

#ifdef BPFMAP_TSAN
char rcu_tsan_clock;
#endif

#ifdef BPFMAP_UBSAN
void rcu_lock_outline(void)
{
	urcu_bp_read_lock();
}

void rcu_unlock_outline(void)
{
	rcu_tsan_release();
	urcu_bp_read_unlock();
}
#endif

void rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	rcu_tsan_release();
	urcu_bp_call_rcu(head, fn);
}

void rcu_wait_deferred(void)
{
	urcu_bp_barrier();
	rcu_tsan_acquire();
}

void rcu_synchronize(void)
{
	urcu_bp_synchronize_rcu();
	rcu_tsan_acquire();
}

bool rcu_may_wait(void)
{
	return !urcu_bp_read_ongoing();
}

void bpfmap_read_lock(void)
{
	rcu_lock();
}

void bpfmap_read_unlock(void)
{
	rcu_unlock();
}
