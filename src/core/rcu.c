/* SPDX-License-Identifier: BSD-2-Clause */
/* liburcu glue: deferred reclamation and the public read-side section calls. */
#include <bpfmap.h>

#include "core/rcu.h"

#ifdef BPFMAP_TSAN
char rcu_tsan_clock;
#endif

void rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	rcu_tsan_release();
	urcu_bp_call_rcu(head, fn);
}

void rcu_wait_deferred(void)
{
	urcu_bp_barrier();
}

void bpfmap_read_lock(void)
{
	rcu_lock();
}

void bpfmap_read_unlock(void)
{
	rcu_unlock();
}
