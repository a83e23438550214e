/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Producer counters that the sampling thread can read while producers run,
 * and the arithmetic of the report (mean, standard deviation).
 */
#ifndef BPFMAP_BENCH_STATS_H
#define BPFMAP_BENCH_STATS_H

#include <stdint.h>

#include "bench.h"
#include "bench_shared.h"

/*
 * Running totals that a sampler reads while their writer runs: the same
 * struct bench_cpu_stats for a bpfmap producer and for a BPF program's
 * per-CPU slot.  A sequence count (odd while totals are being added) lets the
 * sampler read events and ns of the same runs: a torn pair would credit a
 * run's events to one sample and its time to the next.
 */

/* Single writer: the producer owning @s. */
void seq_stats_add(struct bench_cpu_stats *s, uint64_t events, uint64_t ns, uint64_t errors);

/* Adds a consistent snapshot of @s to @c.  Gives up waiting for an even count
 * after a while and takes the figures as they are: beyond BENCH_MAX_CPUS two
 * CPUs share a BPF slot, and their racing increments could leave it odd. */
void stats_read(const struct bench_cpu_stats *s, struct counters *c);

double stats_mean(const double *v, int n);
/* The median of the finite figures among @v[0..n) (NaN: a cell that did not
 * run), the mean of the middle two when their count is even; NaN when none.
 * At most STATS_MEDIAN_MAX figures are looked at. */
#define STATS_MEDIAN_MAX 64
double stats_median(const double *v, int n);
/* Sample standard deviation (n - 1), 0 for fewer than two samples. */
double stats_stddev(const double *v, int n, double mean);

#endif
