// SPDX-License-Identifier: BSD-2-Clause
/*
 * The benchmarks bpfmap-bench knows, named as in the kernel's selftests bench
 * where it has one.  Some cannot run yet because what they measure does not
 * exist in bpfmap yet; they are listed anyway and say so when run.
 */
#include <string.h>

#include <bpfmap.h>

#include "bench.h"

const struct bench *const bench_registry[] = {
	&bench_lookup,
	&bench_rlookup,
	&bench_full_update,
	&bench_lru_full_update,
	&bench_rfull_update,
	&bench_overwrite,
	&bench_htab_mem,
	&bench_rhtab_mem,
	&bench_rhash_grow,
	&bench_rhash_mem,
	&bench_hash,
	&bench_churn,
	&bench_str_kfuncs,
	&bench_lru_hit,
	&bench_percpu_count,
	NULL,
};

const struct bench *bench_find(const char *name)
{
	for (int i = 0; bench_registry[i]; i++)
		if (!strcmp(bench_registry[i]->name, name))
			return bench_registry[i];
	return NULL;
}

void bench_list(FILE *f)
{
	fprintf(f, "Benchmarks:\n");
	for (int i = 0; bench_registry[i]; i++) {
		const struct bench *b = bench_registry[i];
		char why[256];

		fprintf(f, "  %-26s %s\n", b->name, b->summary);
		if (b->available && !b->available(why, sizeof(why)))
			fprintf(f, "  %-26s (not available yet: %s)\n", "", why);
	}
	fprintf(f, "Also: --report [--full] (the seeds' tables), "
		   "--compare BASE.json NEW.json (their \"Change\" table).\n");
}
