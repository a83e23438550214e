/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How a benchmark's cells are shown: a result line per backend and their
 * ratio on the table stream, one JSON object per cell on stdout (--json).
 */
#ifndef BPFMAP_BENCH_OUTPUT_H
#define BPFMAP_BENCH_OUTPUT_H

#include "bench.h"

/* "HASH", "PERCPU_HASH", ..., "RHASH", or the number. */
const char *map_type_name(uint32_t type);

/* "key_size 4, value_size 8, ..." for the parameters a map bench uses. */
void describe_map_args(char *buf, size_t len, const struct bench_args *a);

/* "bpfmap" / "kernel" for the backend names used in JSON ("lib"/"kernel"). */
const char *backend_label(const char *backend);

/* Whether @r's errors are the backend's known behaviour rather than a fault:
 * the kernel's lookups miss keys that a --writer is overwriting (it recycles
 * preallocated elements at once). */
bool cell_errors_expected(const char *backend, const struct cell_result *r);

/* One line: "  bpfmap  lookup  123.456 ± 1.234 M/s per producer (...)". */
void print_cell(FILE *f, const char *backend, const char *what, const struct cell_result *r);

/* One JSON object for the cell on stdout, when --json. */
void json_cell(const struct bench_env *env, const char *bench, const char *backend,
	       const struct bench_args *a, const struct cell_result *r);

/*
 * Run a benchmark's cells on the backends --backend selects, library first
 * (the two never run at once: they would compete for the CPUs), print each
 * result, the ratio when both ran, and the JSON cells.  @kargs may differ
 * from @largs where the kernel has no equivalent (RHASH -> HASH).
 * Returns the exit status: 0, or 1 when the library cell failed or a cell
 * counted errors.
 */
int run_pair(const struct bench *b, const struct bench_env *env, const struct bench_args *largs,
	     const struct bench_args *kargs, const struct cell_ops *lib,
	     const struct cell_ops *kern, const char *what);

#endif
