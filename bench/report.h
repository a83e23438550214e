/* SPDX-License-Identifier: BSD-2-Clause */
/* The report (the seeds' tables for bpfmap and the kernel) and --compare. */
#ifndef BPFMAP_BENCH_REPORT_H
#define BPFMAP_BENCH_REPORT_H

#include "bench.h"

#define REPORT_MAX_ROUNDS 9 /* --rounds */
#define REPORT_DEFAULT_ROUNDS 3

/* --report [--full] [--rounds R]; @a carries overrides (e.g.
 * --full_width_keys); @rounds 0: the default (3). */
int report_run(struct bench_env *env, const struct bench_args *a, bool full, int rounds);

/* --compare BASE NEW: the seeds' "Change" tables between two --json runs. */
int compare_run(const char *base, const char *new_path, FILE *out);

#endif
