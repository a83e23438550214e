// SPDX-License-Identifier: BSD-2-Clause
/* Consistent reads of running counters, and sample statistics (mean, stddev,
 * median). */
#include <math.h>
#include <sched.h>

#include "stats.h"

/*
 * A seqlock over plain u64 fields accessed with __atomic builtins: acquire
 * loads and release stores keep the count and the data in order without
 * fences (which ThreadSanitizer does not model); on x86 all are plain moves,
 * which is also how the BPF programs write their slots.
 */
void seq_stats_add(struct bench_cpu_stats *s, uint64_t events, uint64_t ns, uint64_t errors)
{
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&s->seq, q + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->events, __atomic_load_n(&s->events, __ATOMIC_RELAXED) + events,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&s->ns, __atomic_load_n(&s->ns, __ATOMIC_RELAXED) + ns,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&s->errors, __atomic_load_n(&s->errors, __ATOMIC_RELAXED) + errors,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
}

void stats_read(const struct bench_cpu_stats *s, struct counters *c)
{
	uint64_t s1, s2, ev = 0, ns = 0, err = 0;

	for (int tries = 0; tries < 10000; tries++) {
		s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		ev = __atomic_load_n(&s->events, __ATOMIC_ACQUIRE);
		ns = __atomic_load_n(&s->ns, __ATOMIC_ACQUIRE);
		err = __atomic_load_n(&s->errors, __ATOMIC_ACQUIRE);
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

double stats_median(const double *v, int n)
{
	double s[STATS_MEDIAN_MAX];
	int m = 0;

	/* Insertion sort: a handful of rounds. */
	for (int i = 0; i < n && m < STATS_MEDIAN_MAX; i++) {
		int j;

		if (!isfinite(v[i]))
			continue;
		for (j = m++; j > 0 && s[j - 1] > v[i]; j--)
			s[j] = s[j - 1];
		s[j] = v[i];
	}
	if (!m)
		return NAN;
	return m & 1 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
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
