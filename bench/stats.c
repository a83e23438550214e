// SPDX-License-Identifier: BSD-2-Clause
/* Consistent reads of running counters, and sample statistics. */
#include <math.h>
#include <sched.h>

#include "stats.h"

void seq_stats_add(struct seq_stats *s, uint64_t events, uint64_t ns, uint64_t errors)
{
	uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);

	/* C11 seqlock writer: odd count, release fence, data, even count. */
	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->events,
			      atomic_load_explicit(&s->events, memory_order_relaxed) + events,
			      memory_order_relaxed);
	atomic_store_explicit(&s->ns, atomic_load_explicit(&s->ns, memory_order_relaxed) + ns,
			      memory_order_relaxed);
	atomic_store_explicit(&s->errors,
			      atomic_load_explicit(&s->errors, memory_order_relaxed) + errors,
			      memory_order_relaxed);
	atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

void seq_stats_read(struct seq_stats *s, struct counters *c)
{
	uint64_t s1, s2, ev, ns, err;

	for (;;) {
		s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
		ev = atomic_load_explicit(&s->events, memory_order_relaxed);
		ns = atomic_load_explicit(&s->ns, memory_order_relaxed);
		err = atomic_load_explicit(&s->errors, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
		if (s1 == s2 && !(s1 & 1))
			break;
		sched_yield();
	}
	c->events += ev;
	c->ns += ns;
	c->errors += err;
}

void bpf_stats_read(const struct bench_cpu_stats *s, struct counters *c)
{
	uint64_t s1, s2, ev, ns, err;

	/* The program's stores are plain (x86 keeps them in order; the
	 * program writes seq, data, seq through volatile pointers).  Two CPUs
	 * share a slot only beyond BENCH_MAX_CPUS; their racing increments
	 * could leave seq odd for good, so give up waiting after a while and
	 * take the figures as they are. */
	for (int tries = 0; tries < 10000; tries++) {
		s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		ev = __atomic_load_n(&s->events, __ATOMIC_RELAXED);
		ns = __atomic_load_n(&s->ns, __ATOMIC_RELAXED);
		err = __atomic_load_n(&s->errors, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (s1 == s2 && !(s1 & 1))
			break;
		sched_yield();
	}
	c->events += ev;
	c->ns += ns;
	c->errors += err;
}

double stats_mean(const double *v, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : 0;
}

double stats_stddev(const double *v, int n, double mean)
{
	double sum = 0;

	if (n < 2)
		return 0;
	for (int i = 0; i < n; i++)
		sum += (v[i] - mean) * (v[i] - mean);
	return sqrt(sum / (n - 1));
}
