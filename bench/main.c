// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpfmap-bench: the kernel selftests' map benchmarks for bpfmap and for the
 * running kernel's BPF maps, side by side; the seeds' report; comparisons.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

/*
 * A flag that benchmark @b does not read, or a combination it would not
 * honour, or NULL.  Refused rather than ignored: the JSON records the
 * flags, and --compare then kept such a cell apart from a plain run.
 */
static const char *misplaced_flag(const struct bench *b, const struct bench_args *a)
{
	bool lookup = b == &bench_lookup || b == &bench_rlookup;
	bool mem = b == &bench_htab_mem || b == &bench_rhtab_mem;
	bool loops = lookup || b == &bench_churn || b == &bench_lru_hit ||
		     !strcmp(b->name, "rte-bpf");

	if (!lookup && (a->writer || a->bulk || a->via_lookup || a->copy_out))
		return "--writer, --bulk, --via_lookup or --copy_out";
	if (!lookup && b != &bench_hash && a->full_width_keys)
		return "--full_width_keys";
	if (a->bulk && (a->full_width_keys || a->via_lookup || a->copy_out))
		return "--bulk (bpfmap_lookup_bulk()) with --full_width_keys, --via_lookup or "
		       "--copy_out";
	if (a->copy_out && a->via_lookup)
		return "--copy_out (bpfmap_lookup_elem()) with --via_lookup (bpfmap_lookup())";
	if (b != &bench_percpu_count && a->percpu_add)
		return "--percpu_add";
	if (!mem && (a->use_case[0] || a->preallocated))
		return "--use-case or --preallocated";
	if (b != &bench_hash && a->hash[0])
		return "--hash";
	if (b != &bench_str_kfuncs && a->isa[0])
		return "--isa";
	if (!loops && a->nr_loops)
		return "--nr_loops";
	return NULL;
}

int main(int argc, char **argv)
{
	const struct bench *b;
	const char *flag;
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
	if ((flag = misplaced_flag(b, &c.args))) {
		fprintf(stderr, "bpfmap-bench: %s does not apply to %s\n", flag, b->name);
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
