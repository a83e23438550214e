/* SPDX-License-Identifier: BSD-2-Clause */
/* The command line: the kernel bench's flags, the benchmarks' flags, ours. */
#ifndef BPFMAP_BENCH_CLI_H
#define BPFMAP_BENCH_CLI_H

#include "bench.h"

struct cli {
	struct bench_env env;
	struct bench_args args;
	const char *bench_name; /* the positional argument */
	bool list;              /* --list, or -a without a benchmark */
	bool report, full;      /* --report [--full] */
	int rounds;             /* --rounds R (0: the report's default) */
	const char *compare_base, *compare_new; /* --compare BASE NEW */
	bool help;
	bool quiet;             /* -q: no progress line */
};

/* Returns 0, or the exit status for a bad command line (message printed). */
int cli_parse(int argc, char **argv, struct cli *c);
void cli_usage(FILE *f);

#endif
