// SPDX-License-Identifier: BSD-2-Clause
/*
 * The benchmarks bpfmap-bench knows, named as in the kernel's selftests bench
 * where it has one.  Some cannot run yet because what they measure does not
 * exist in bpfmap yet; they are listed anyway and say so when run.
 */
#include <string.h>

#include <bpfmap.h>

#include "bench.h"

#ifdef BPFMAP_BENCH_RTEBPF
extern const struct bench bench_rtebpf; /* bench_rtebpf.c */
#else
/* Without DPDK's rte_bpf there is nothing to run the program in; the name
 * stays in the list so that asking for it says why. */
static bool rtebpf_missing(char *why, size_t len)
{
	snprintf(why, len, "bpfmap-bench was built without DPDK's rte_bpf (libbpfmap-rtebpf "
			   "needs libdpdk-dev and libelf-dev; scripts/deps.sh installs them)");
	return false;
}

static int rtebpf_none(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	char why[256];

	(void)env;
	(void)a;
	rtebpf_missing(why, sizeof(why));
	fprintf(stderr, "%s: %s\n", b->name, why);
	return 0;
}

static const struct bench bench_rtebpf = {
	.name = "rte-bpf",
	.summary = "flow_count.bpf.c in DPDK's rte_bpf (JIT, interpreter), in C and in the "
		   "kernel's XDP; packets/s",
	.run = rtebpf_none,
	.available = rtebpf_missing,
};
#endif

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
	&bench_rtebpf,
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
