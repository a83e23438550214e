/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Producer counters that the sampling thread can read while producers run,
 * and the arithmetic of the report (mean, standard deviation).
 */
#ifndef BPFMAP_BENCH_STATS_H
#define BPFMAP_BENCH_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "bench.h"
#include "bench_shared.h"

/*
 * One producer's running totals.  A sequence count (odd while an update is
 * in progress) lets the sampler read events and ns of the same runs: a torn
 * pair would credit a run's events to one sample and its time to the next.
 * Cache-line sized so producers do not share lines.
 */
struct seq_stats {
	_Atomic uint64_t seq;
	_Atomic uint64_t events;
	_Atomic uint64_t ns;
	_Atomic uint64_t errors;
} __attribute__((aligned(64)));

/* Single writer: the producer owning @s. */
void seq_stats_add(struct seq_stats *s, uint64_t events, uint64_t ns, uint64_t errors);

/* Adds a consistent snapshot of @s to @c. */
void seq_stats_read(struct seq_stats *s, struct counters *c);

/* The same for a BPF program's per-CPU (or per-slot) stats, written by the
 * program with the same sequence protocol and read here through the mmap of
 * the program's .bss. */
void bpf_stats_read(const struct bench_cpu_stats *s, struct counters *c);

double stats_mean(const double *v, int n);
/* Sample standard deviation (n - 1), 0 for fewer than two samples. */
double stats_stddev(const double *v, int n, double mean);

#endif
