// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report's rows for PERCPU_HASH, LRU_HASH and LRU_PERCPU_HASH (issue 16):
 *  - lookups of each type over the small/medium/large presets and keys of
 *    4, 8, 32 and 256 bytes, bpfmap against the kernel's map of the same
 *    type, and against bpfmap's own HASH on the same cell, run right before
 *    it in each round (the ratio is the median of the per-round ratios);
 *  - new keys into a full 1000-entry LRU_HASH (each evicting), 1 producer
 *    and 2 on CPUs 0 and 1;
 *  - per-CPU counter increments through the program view, 1 thread and 2
 *    on CPUs 0 and 1 (bpfmap alone: percpu-count), and no increment lost;
 *  - lru-hit's two streams (hit ratios: deterministic enough to run once);
 *  - bytes per element of full LRU_HASH and PERCPU_HASH maps of 8 + 8.
 * The rounds work as the other rows' (report.c).
 */
#include <math.h>
#include <string.h>

#include <bpfmap.h>

#include "bpf/bench_shared.h"
#include "output.h"
#include "report_int.h"

const enum bpfmap_type types_of_rows[TYPES_N] = { BPFMAP_TYPE_PERCPU_HASH, BPFMAP_TYPE_LRU_HASH,
						   BPFMAP_TYPE_LRU_PERCPU_HASH };
const uint32_t types_keys[TYPES_KEYS] = { 4, 8, 32, 256 };

#define TYPES_MEM_ENTRIES 125000

void types_setup(struct report *rp)
{
	struct types_rows *t = &rp->types;

	for (int i = 0; i < TYPES_N; i++)
		for (int p = 0; p < REPORT_PRESETS; p++)
			for (int k = 0; k < TYPES_KEYS; k++) {
				rounds_init(&t->look[i][p][k]);
				rounds_init(&t->look_hash[i][p][k]);
			}
	rounds_init(&t->evict1);
	rounds_init(&t->evict2);
	rounds_init(&t->count1);
	rounds_init(&t->count2);
}

int types_cells(const struct report *rp, bool per_round)
{
	int nb = report_want(rp, BACKEND_LIB) + report_want(rp, BACKEND_KERNEL);

	if (per_round) /* lookups and bpfmap's HASH beside them, 2 evict
			* cells; 2 count cells (bpfmap) */
		return nb * (TYPES_N * REPORT_PRESETS * TYPES_KEYS + 2) +
		       report_want(rp, BACKEND_LIB) * (TYPES_N * REPORT_PRESETS * TYPES_KEYS + 2);
	return nb * 2 + 2; /* memory; lru-hit's two streams */
}

static void round_type_lookups(struct report *rp, int round)
{
	for (int i = 0; i < TYPES_N; i++)
		for (int p = 0; p < REPORT_PRESETS; p++)
			for (int k = 0; k < TYPES_KEYS; k++) {
				const struct preset *ps = &presets[p];
				struct bench_args a, ka;
				char what[64];

				if (lookup_args(rp, &a, types_keys[k], ps->max_entries,
						ps->nr_entries, preset_loops(rp, ps)))
					continue;
				if (report_want(rp, BACKEND_LIB)) {
					snprintf(a.tag, sizeof(a.tag), "beside %s",
						 map_type_name(types_of_rows[i]));
					snprintf(what, sizeof(what), "lookup HASH %s k=%u, beside %s",
						 ps->name, types_keys[k],
						 map_type_name(types_of_rows[i]));
					run_round_lib(rp, round, "bpf-hashmap-lookup", what,
						      &lookup_lib_ops, &a, &rp->types.look_hash[i][p][k]);
					a.tag[0] = 0;
				}
				a.map_type = types_of_rows[i];
				ka = kernel_args(&a);
				snprintf(what, sizeof(what), "lookup %s %s k=%u",
					 map_type_name(a.map_type), ps->name, types_keys[k]);
				run_rounds_pair(rp, round, &rp->cenv, "bpf-hashmap-lookup", what,
						&lookup_lib_ops, &a, &lookup_kernel_ops, &ka,
						&rp->types.look[i][p][k]);
			}
}

/* Two producers on CPUs 0 and 1: their total. */
static struct bench_env two_cpus(const struct report *rp)
{
	struct bench_env two = rp->cenv;

	two.producers = 2;
	two.nr_prod_cpus = 2;
	two.prod_cpus[0] = 0;
	two.prod_cpus[1] = 1;
	return two;
}

static void round_evict(struct report *rp, int round)
{
	struct bench_env one = rp->cenv, two = two_cpus(rp);
	struct bench_args a = { .map_type = BPFMAP_TYPE_LRU_HASH };
	struct types_rows *t = &rp->types;
	char err[160];
	struct cell_result r;

	one.producers = 1;
	if (update_args_fill(&a, UPDATE_EVICT, err, sizeof(err)))
		return;
	run_rounds_pair(rp, round, &one, "bpf-lru-full-update", "evicting insert, 1 producer",
			&update_lib_ops, &a, &update_kernel_ops, &a, &t->evict1);
	if (!rp->conc_two)
		return;
	/* Two producers: the totals, the side going first alternating. */
	for (int i = 0; i < 2; i++) {
		bool k = (i == 0) == (round & 1);

		if (k && report_want(rp, BACKEND_KERNEL))
			t->evict2.kern[round] =
				isfinite(run_env(rp, &two, "bpf-lru-full-update",
						 "evicting insert, 2 producers", &update_kernel_ops,
						 &a, &r)) ? r.mops_total : NAN;
		else if (!k && report_want(rp, BACKEND_LIB))
			t->evict2.lib[round] =
				isfinite(run_env(rp, &two, "bpf-lru-full-update",
						 "evicting insert, 2 producers", &update_lib_ops,
						 &a, &r)) ? r.mops_total : NAN;
	}
	t->evict2.n = round + 1;
}

static void round_count(struct report *rp, int round)
{
	struct bench_env one = rp->cenv, two = two_cpus(rp);
	struct bench_args a = { .map_type = BPFMAP_TYPE_PERCPU_HASH, .key_size = 4,
				.value_size = 8, .max_entries = 64 };
	struct types_rows *t = &rp->types;
	struct cell_result r;

	if (!report_want(rp, BACKEND_LIB))
		return;
	one.producers = 1;
	t->count1.lib[round] = run_env(rp, &one, "percpu-count", "per-CPU increments, 1 thread",
				       &percpu_count_lib_ops, &a, &r);
	t->count_errors += r.ok ? r.errors : 0;
	t->count1.n = round + 1;
	if (!rp->conc_two)
		return;
	t->count2.lib[round] = isfinite(run_env(rp, &two, "percpu-count",
						"per-CPU increments, 2 threads",
						&percpu_count_lib_ops, &a, &r))
				       ? r.mops_total
				       : NAN;
	t->count_errors += r.ok ? r.errors : 0;
	t->count2.n = round + 1;
}

void types_round(struct report *rp, int round)
{
	round_type_lookups(rp, round);
	round_evict(rp, round);
	round_count(rp, round);
}

void types_once(struct report *rp)
{
	static const enum bpfmap_type mem_types[2] = { BPFMAP_TYPE_LRU_HASH,
						       BPFMAP_TYPE_PERCPU_HASH };
	struct types_rows *t = &rp->types;
	int cpus = bpfmap_num_possible_cpus();
	struct bench_args a = { 0 };

	for (int i = 0; i < 2; i++) {
		struct mem_row *m = &t->mem[i];
		char what[64];

		*m = (struct mem_row){ .type = mem_types[i], .key_size = 8, .value_size = 8,
				       .entries = TYPES_MEM_ENTRIES, .lib = NAN, .kern = NAN };
		/* The bounds: 24 B; 8 + ncpus x 8 + 8 B. */
		m->target = i == 0 ? 24 : 16 + 8.0 * (cpus > 0 ? cpus : 1);
		snprintf(what, sizeof(what), "bytes/elem %s 8+8", map_type_name(m->type));
		if (report_want(rp, BACKEND_LIB))
			m->lib = mem_lib(rp, m, what);
		if (report_want(rp, BACKEND_KERNEL))
			m->kern = mem_kernel(rp, m, what);
	}
	lru_hit_args_fill(&a);
	for (int s = 0; s < 2; s++) {
		progress(rp, s ? "lru-hit, zipf + scan" : "lru-hit, zipf", "lib");
		if (lru_hit_measure(rp->env, &a, s, &t->hit[s]))
			failed(rp, "lru-hit", "lib", "out of memory");
	}
}

void types_print(FILE *f, const struct report *rp)
{
	const struct types_rows *t = &rp->types;
	static const char *const streams[2] = { "zipf", "zipf + scan" };

	fprintf(f, "\nPERCPU_HASH, LRU_HASH, LRU_PERCPU_HASH (issue 16): lookups, M/s per "
		   "producer, bpfmap / kernel of the same type [bpfmap / bpfmap's HASH]:\n");
	fprintf(f, "  %-16s %-7s", "type", "preset");
	for (int k = 0; k < TYPES_KEYS; k++)
		fprintf(f, "  %14s%-4u", "k=", types_keys[k]);
	fprintf(f, "\n");
	for (int i = 0; i < TYPES_N; i++)
		for (int p = 0; p < REPORT_PRESETS; p++) {
			fprintf(f, "  %-16s %-7s", map_type_name(types_of_rows[i]), presets[p].name);
			for (int k = 0; k < TYPES_KEYS; k++) {
				const struct rounds *s = &t->look[i][p][k];

				fprintf(f, "  %6.1f", rounds_lib(s));
				report_print_fig(f, rounds_ratio(s), " %5.2fx");
				report_print_fig(f, types_vs_hash(rp, i, p, k), " [%4.2f]");
			}
			fprintf(f, "\n");
		}
	fprintf(f, "  evicting inserts, full LRU_HASH of 1000: 1 producer bpfmap %.2f, kernel "
		   "%.2f M/s (%.2fx); 2 producers, total: bpfmap %.2f (%.2fx one), kernel %.2f\n",
		rounds_lib(&t->evict1), rounds_kern(&t->evict1), rounds_ratio(&t->evict1),
		rounds_lib(&t->evict2), rounds_lib_ratio(&t->evict2, &t->evict1),
		rounds_kern(&t->evict2));
	fprintf(f, "  per-CPU increments (program view, atomic): 1 thread %.2f M/s, 2 threads "
		   "%.2f total (%.2fx); increments lost: %llu\n",
		rounds_lib(&t->count1), rounds_lib(&t->count2),
		rounds_lib_ratio(&t->count2, &t->count1),
		(unsigned long long)t->count_errors);
	for (int s = 0; s < 2; s++) {
		const struct lru_hit_row *h = &t->hit[s];

		fprintf(f, "  lru-hit %-12s hit ratio: bpfmap ", streams[s]);
		report_print_fig(f, h->lib.ok ? h->lib.ratio : NAN, "%.4f");
		fprintf(f, ", kernel ");
		report_print_fig(f, h->kern.ok ? h->kern.ratio : NAN, "%.4f");
		fprintf(f, ", exact LRU %.4f\n", h->exact);
	}
	for (int i = 0; i < 2; i++)
		fprintf(f, "  bytes/elem, %s 8 + 8: bpfmap %.1f, kernel %.1f\n",
			map_type_name(t->mem[i].type), t->mem[i].lib, t->mem[i].kern);
}

/* bpfmap's figure on type @i's cell over its HASH's on the same cell, each
 * round's pair measured back to back; NaN where either is missing. */
double types_vs_hash(const struct report *rp, int i, int p, int k)
{
	return rounds_lib_ratio(&rp->types.look[i][p][k], &rp->types.look_hash[i][p][k]);
}
