// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpfmap-bench: the kernel selftests' map benchmarks for bpfmap and for the
 * running kernel's BPF maps, side by side; the seeds' report; comparisons.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

int main(int argc, char **argv)
{
	const struct bench *b;
	struct cli c;
	char why[256];
	int ret;

	ret = cli_parse(argc, argv, &c);
	if (ret)
		return ret;
	if (c.help) {
		cli_usage(stdout);
		return 0;
	}
	if (c.compare_base)
		return compare_run(c.compare_base, c.compare_new, stdout);
	/* One status line that redraws itself, only where someone watches. */
	c.env.progress = isatty(STDERR_FILENO) && !c.env.verbose && !c.quiet;
	if (c.report && c.bench_name) {
		fprintf(stderr, "bpfmap-bench: --report runs every table; it takes no benchmark "
				"name (%s)\n", c.bench_name);
		return 2;
	}
	if (c.report)
		return report_run(&c.env, &c.args, c.full, c.rounds);
	if (c.list || !c.bench_name) {
		if (!c.list) {
			cli_usage(stderr);
			return 2;
		}
		bench_list(stdout);
		return 0;
	}
	b = bench_find(c.bench_name);
	if (!b) {
		fprintf(stderr, "bpfmap-bench: unknown benchmark '%s'\n", c.bench_name);
		bench_list(stderr);
		return 2;
	}
	if ((c.args.writer || c.args.bulk) && b != &bench_lookup && b != &bench_rlookup) {
		fprintf(stderr, "bpfmap-bench: --%s applies to the lookup benchmarks only\n",
			c.args.writer ? "writer" : "bulk");
		return 2;
	}
	if (b->available && !b->available(why, sizeof(why))) {
		fprintf(c.env.out, "%s: not available yet: %s\n", b->name, why);
		return 0;
	}
	if (!c.env.warmup_set && b->default_warmup_s > 0)
		c.env.warmup_s = b->default_warmup_s;
	if (!c.env.duration_set && b->default_duration_s > 0)
		c.env.duration_s = b->default_duration_s;
	return b->run(b, &c.env, &c.args);
}
