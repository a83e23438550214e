// SPDX-License-Identifier: BSD-2-Clause
/*
 * The benchmarks bpfmap-bench knows, named as in the kernel's selftests bench
 * where it has one.  Some cannot run yet because what they measure does not
 * exist in bpfmap yet; they are listed anyway and say so when run.
 */
#include <string.h>

#include <bpfmap.h>

#include "bench.h"

static int not_available_run(const struct bench *b, const struct bench_env *env,
			     struct bench_args *a)
{
	(void)env;
	(void)a;
	fprintf(stdout, "%s: not available yet\n", b->name);
	return 0;
}

static bool lru_hit_available(char *why, size_t len)
{
	if (!bench_map_type_available(BPFMAP_TYPE_LRU_HASH, why, len))
		return false;
	snprintf(why, len, "LRU_HASH exists, but the lru-hit benchmark (Zipf trace, hit "
			   "ratio) is not written yet");
	return false;
}

const struct bench bench_lru_hit = {
	.name = "lru-hit",
	.summary = "LRU maps on a Zipf key stream: hit ratio and M ops/s",
	.run = not_available_run,
	.available = lru_hit_available,
};

const struct bench *const bench_registry[] = {
	&bench_lookup,
	&bench_rlookup,
	&bench_full_update,
	&bench_lru_full_update,
	&bench_rfull_update,
	&bench_overwrite,
	&bench_htab_mem,
	&bench_rhtab_mem,
	&bench_hash,
	&bench_churn,
	&bench_str_kfuncs,
	&bench_lru_hit,
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
