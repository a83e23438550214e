// SPDX-License-Identifier: BSD-2-Clause
/*
 * The measuring loop, as the kernel's selftests bench does it: start the
 * producer threads (pinned to consecutive CPUs with -a), take a sample every
 * period, drop the warm-up samples, report mean ± stddev of the rest.
 *
 * A sample's rate is events / time: by default the time the workload timed
 * itself (a BPF program's bpf_ktime_get_ns around its loop, or the same
 * clock around the same loop in the library backend), so the trigger and the
 * sampling never count; benches that mirror wall-clock figures ask for
 * wall_clock instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "stats.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The CPUs online (not the calling thread's affinity: the report pins its
 * main thread to one CPU for some benches and runs two producers after). */
static int allowed_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* The CPUs the producers run on: the distinct ones of --prod-affinity
 * (two producers on "0" share one: their rates per CPU-second added up
 * to twice the throughput), else those online. */
static int producer_cpus(const struct bench_env *env)
{
	int distinct = 0;

	if (!env->nr_prod_cpus)
		return allowed_cpus();
	for (int i = 0; i < env->nr_prod_cpus; i++) {
		int j = 0;

		while (j < i && env->prod_cpus[j] != env->prod_cpus[i])
			j++;
		distinct += j == i;
	}
	return distinct;
}

/*
 * One second, as the kernel bench samples, unless -w or -d is shorter than
 * that: then a quarter of the shorter one, so a quick run still has a few
 * samples to take a standard deviation from.
 */
static double sample_period(const struct bench_env *env)
{
	double m = env->duration_s;

	if (env->warmup_s > 0 && env->warmup_s < m)
		m = env->warmup_s;
	if (m >= 1.0)
		return 1.0;
	m /= 4;
	return m < 0.02 ? 0.02 : m;
}

struct producer {
	const struct cell_ops *ops;
	void *st;
	int idx, nr;
	int cpu; /* -1: not pinned */
	atomic_bool *stop;
	pthread_t thread;
};

int bench_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	if (bench_pin_self(p->cpu))
		fprintf(stderr, "warning: cannot pin producer %d to CPU %d\n", p->idx, p->cpu);
	p->ops->producer(p->st, p->idx, p->nr, p->stop);
	return NULL;
}

int bench_producer_cpu(const struct bench_env *env, int i)
{
	if (env->nr_prod_cpus)
		return env->prod_cpus[i % env->nr_prod_cpus];
	if (env->affinity) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		return (int)(i % (n > 0 ? n : 1));
	}
	return -1;
}

int bench_spare_cpu(const struct bench_env *env)
{
	cpu_set_t allowed, used;

	if (!env->affinity && !env->nr_prod_cpus)
		return -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return -1;
	CPU_ZERO(&used);
	for (int i = 0; i < env->producers; i++) {
		int c = bench_producer_cpu(env, i);

		if (c >= 0 && c < CPU_SETSIZE)
			CPU_SET(c, &used);
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed) && !CPU_ISSET(c, &used))
			return c;
	return -1;
}

static void progress(const struct bench_env *env, const char *label, double t, double w,
		     double d, double rate)
{
	if (!env->progress)
		return;
	if (t <= w)
		fprintf(stderr, "\r\033[K%s: warm-up %.1f/%.1f s", label, t, w);
	else if (rate >= 0)
		fprintf(stderr, "\r\033[K%s: %.1f/%.1f s, %.3f M/s", label, t - w, d, rate);
	else
		fprintf(stderr, "\r\033[K%s: %.1f/%.1f s", label, t - w, d);
	fflush(stderr);
}

static void init_result(struct cell_result *r, int producers)
{
	memset(r, 0, sizeof(*r));
	r->producers = producers;
	r->bytes_per_elem = NAN;
	r->mem_bytes = NAN;
	r->mem_peak_bytes = NAN;
	r->writer_mops = NAN;
}

int cell_run(const struct cell_ops *ops, const struct bench_args *a,
	     const struct bench_env *env, const char *label, struct cell_result *r)
{
	struct producer prod[BENCH_MAX_PRODUCERS];
	int n = env->producers, started = 0;
	double period = sample_period(env);
	int nw = (int)lround(env->warmup_s / period);
	int nd = (int)lround(env->duration_s / period);
	struct counters prev = { 0 }, cur, base = { 0 };
	uint64_t t0, tprev, t;
	atomic_bool stop = false;
	double *samples;
	int ns = 0;
	void *st;

	init_result(r, n);
	if (nd < 1)
		nd = 1;
	samples = calloc((size_t)nd, sizeof(*samples));
	if (!samples) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return -1;
	}
	st = ops->setup(a, env, r);
	if (!st) {
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "setup failed");
		free(samples);
		return -1;
	}

	t0 = tprev = now_ns();
	for (int i = 0; i < n; i++) {
		prod[i] = (struct producer){ .ops = ops, .st = st, .idx = i, .nr = n,
					     .cpu = bench_producer_cpu(env, i), .stop = &stop };
		if (pthread_create(&prod[i].thread, NULL, producer_main, &prod[i])) {
			snprintf(r->error, sizeof(r->error), "cannot start producer %d: %s", i,
				 strerror(errno));
			break;
		}
		started++;
	}
	if (started == n) {
		ops->measure(st, &prev);
		if (nw == 0)
			base = prev;
		for (int k = 1; k <= nw + nd; k++) {
			double rate = -1;

			sleep_until(t0 + (uint64_t)(k * period * 1e9));
			memset(&cur, 0, sizeof(cur));
			ops->measure(st, &cur);
			t = now_ns();
			if (ops->wall_clock) {
				if (t > tprev)
					rate = (double)(cur.events - prev.events) * 1e3 /
					       ((double)(t - tprev) * n);
			} else if (cur.ns > prev.ns) {
				rate = (double)(cur.events - prev.events) * 1e3 /
				       (double)(cur.ns - prev.ns);
			}
			if (k == nw)
				base = cur;
			else if (k > nw && rate >= 0)
				samples[ns++] = rate;
			if (ops->sample)
				ops->sample(st, r);
			if (env->verbose)
				fprintf(stderr, "%s: sample %d (%.3f s)%s: %.3f M/s\n", label, k,
					(double)(t - t0) / 1e9, k <= nw ? " warm-up" : "",
					rate < 0 ? 0.0 : rate);
			progress(env, label, (double)(t - t0) / 1e9, env->warmup_s,
				 env->duration_s, rate);
			prev = cur;
			tprev = t;
		}
	}
	atomic_store(&stop, true);
	for (int i = 0; i < started; i++)
		pthread_join(prod[i].thread, NULL);
	if (env->progress) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}

	memset(&cur, 0, sizeof(cur));
	ops->measure(st, &cur);
	if (started == n) {
		/* Runs longer than a sample period leave samples empty; the runs
		 * that finished after warm-up (including the one in flight at the
		 * end) still give a rate. */
		if (!ns && !ops->wall_clock && cur.ns > base.ns)
			samples[ns++] = (double)(cur.events - base.events) * 1e3 /
					(double)(cur.ns - base.ns);
		r->events = cur.events - base.events;
		r->errors = cur.errors;
		if (ns) {
			r->ok = true;
			r->samples = ns;
			r->mops = stats_mean(samples, ns);
			r->mops_stddev = stats_stddev(samples, ns, r->mops);
			r->mops_total = r->mops * n;
			/* Rates are per producer's CPU time: their sum is a
			 * throughput only while each producer has a CPU. */
			if (n > producer_cpus(env))
				r->mops_total = NAN;
		} else {
			snprintf(r->error, sizeof(r->error),
				 "no run completed in %.2f s (runs longer than the duration?)",
				 env->warmup_s + env->duration_s);
		}
		/* Every run failed (a lookup bench's runs stop at a miss):
		 * nothing was measured, whatever the samples say. */
		if (r->errors && !r->events) {
			r->ok = false;
			snprintf(r->error, sizeof(r->error),
				 "every run stopped at a failure (%llu: lookups that missed, "
				 "inserts that failed); nothing measured",
				 (unsigned long long)r->errors);
		}
		if (ops->finish)
			ops->finish(st, r);
	}
	ops->teardown(st);
	free(samples);
	return r->ok ? 0 : -1;
}
