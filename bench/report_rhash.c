// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report's rows for RHASH (issue 17).  The kernel has no RHASH, so its
 * column is its fixed HASH of the same max_entries, as in the rhash seed:
 *  - lookups of 8-byte keys: 1K max_entries with 750 and 1K present, 1M
 *    with 750K and 1M, bpfmap's RHASH against the kernel's HASH;
 *  - the lookup grid (presets x key sizes) and the full-update and
 *    overwrite rows, bpfmap's RHASH against bpfmap's own HASH on the same
 *    cell (bpfmap alone).  Each HASH cell runs again right before its
 *    RHASH cell, and the ratio is the median of the per-round ratios, as
 *    for the kernel's rows: measured apart, minutes away in the round, the
 *    two sides met different loads on this shared machine (a full update
 *    ran 42 or 80 M/s from one run to the next);
 *  - once: rhash-mem and rhash-grow (bench_rhash.c).
 * The rounds work as the other rows' (report.c).
 */
#include <math.h>
#include <string.h>

#include <bpfmap.h>

#include "bpf/bench_shared.h"
#include "output.h"
#include "report_int.h"

const struct rhash_big rhash_bigs[RHASH_BIG] = {
	{ 1000, 750 }, { 1000, 1000 }, { 1000000, 750000 }, { 1000000, 1000000 },
};

void rhash_setup(struct report *rp)
{
	struct rhash_rows *h = &rp->rhash;

	for (int i = 0; i < RHASH_BIG; i++)
		rounds_init(&h->big[i]);
	for (int p = 0; p < REPORT_PRESETS; p++)
		for (int k = 0; k < REPORT_MAX_KEYS; k++) {
			rounds_init(&h->look[p][k]);
			rounds_init(&h->look_hash[p][k]);
		}
	rounds_init(&h->upd);
	rounds_init(&h->ovw);
	rounds_init(&h->upd_hash);
	rounds_init(&h->ovw_hash);
}

int rhash_cells(const struct report *rp, bool per_round)
{
	const uint32_t *keys;
	int nb = report_want(rp, BACKEND_LIB) + report_want(rp, BACKEND_KERNEL);
	int lib = report_want(rp, BACKEND_LIB);

	if (per_round)
		return nb * RHASH_BIG +
		       2 * lib * ((int)REPORT_PRESETS * (int)report_grid_keys(rp, &keys) + 2);
	return 2 * lib;
}

static void rhash_args(struct bench_args *a)
{
	a->map_type = BPFMAP_TYPE_RHASH;
	a->map_flags = BPFMAP_F_NO_PREALLOC;
}

void rhash_round(struct report *rp, int round)
{
	struct rhash_rows *h = &rp->rhash;
	const uint32_t *keys;
	size_t nkeys = report_grid_keys(rp, &keys);
	struct bench_args a, ka;
	char what[64], err[160];

	for (int i = 0; i < RHASH_BIG; i++) {
		const struct rhash_big *b = &rhash_bigs[i];

		if (lookup_args(rp, &a, 8, b->max_entries, b->nr_entries,
				b->nr_entries >= 100000 ? b->nr_entries : 1000000))
			continue;
		ka = kernel_args(&a);
		ka.map_flags = 0; /* a preallocated HASH of the same max_entries */
		rhash_args(&a);
		/* Two cells of one max_entries: the JSON tells them apart. */
		snprintf(a.tag, sizeof(a.tag), "rhash %u present", b->nr_entries);
		snprintf(ka.tag, sizeof(ka.tag), "rhash %u present", b->nr_entries);
		snprintf(what, sizeof(what), "RHASH lookup k=8 %u/%u", b->max_entries, b->nr_entries);
		run_rounds_pair(rp, round, &rp->cenv, "bpf-rhashmap-lookup", what, &lookup_lib_ops,
				&a, &lookup_kernel_ops, &ka, &h->big[i]);
	}
	if (!report_want(rp, BACKEND_LIB))
		return;
	for (int p = 0; p < REPORT_PRESETS; p++)
		for (size_t k = 0; k < nkeys; k++) {
			const struct preset *ps = &presets[p];

			if (lookup_args(rp, &a, keys[k], ps->max_entries, ps->nr_entries,
					preset_loops(rp, ps)))
				continue;
			snprintf(a.tag, sizeof(a.tag), "beside RHASH");
			snprintf(what, sizeof(what), "HASH lookup %s k=%u, beside RHASH", ps->name,
				 keys[k]);
			run_round_lib(rp, round, "bpf-hashmap-lookup", what, &lookup_lib_ops, &a,
				      &h->look_hash[p][k]);
			a.tag[0] = 0;
			rhash_args(&a);
			snprintf(what, sizeof(what), "RHASH lookup %s k=%u", ps->name, keys[k]);
			run_round_lib(rp, round, "bpf-rhashmap-lookup", what, &lookup_lib_ops, &a,
				      &h->look[p][k]);
		}
	for (int ovw = 0; ovw < 2; ovw++) {
		memset(&a, 0, sizeof(a));
		if (update_args_fill(&a, ovw ? UPDATE_OVERWRITE : UPDATE_FULL, err, sizeof(err)))
			continue;
		snprintf(a.tag, sizeof(a.tag), "%s, beside RHASH", ovw ? "overwrite" : "full update");
		run_round_lib(rp, round, ovw ? "bpf-hashmap-overwrite" : "bpf-hashmap-full-update",
			      ovw ? "HASH overwrite, beside RHASH" : "HASH full update, beside RHASH",
			      &update_lib_ops, &a, ovw ? &h->ovw_hash : &h->upd_hash);
		memset(&a, 0, sizeof(a));
		rhash_args(&a);
		if (update_args_fill(&a, ovw ? UPDATE_OVERWRITE : UPDATE_FULL, err, sizeof(err)))
			continue;
		snprintf(a.tag, sizeof(a.tag), "%s", ovw ? "overwrite" : "full update");
		run_round_lib(rp, round, "bpf-rhashmap-full-update",
			      ovw ? "RHASH overwrite" : "RHASH full update", &update_lib_ops, &a,
			      ovw ? &h->ovw : &h->upd);
	}
}

void rhash_once(struct report *rp)
{
	struct rhash_rows *h = &rp->rhash;

	if (!report_want(rp, BACKEND_LIB))
		return;
	progress(rp, "rhash-mem", "lib");
	h->mem_ok = !rhash_mem_measure(&h->mem);
	if (!h->mem_ok)
		failed(rp, "rhash-mem", "lib", "could not create the map");
	progress(rp, "rhash-grow", "lib");
	h->grow_ok = !rhash_grow_measure(&rp->cenv, 1000000, &h->grow);
	if (!h->grow_ok)
		failed(rp, "rhash-grow", "lib", "could not create the maps");
}

/* RHASH's figure on a grid cell over bpfmap's HASH's on the same cell,
 * each round's pair measured back to back. */
double rhash_vs_hash(const struct report *rp, int p, int k)
{
	return rounds_lib_ratio(&rp->rhash.look[p][k], &rp->rhash.look_hash[p][k]);
}

void rhash_print(FILE *f, const struct report *rp)
{
	const struct rhash_rows *h = &rp->rhash;
	const uint32_t *keys;
	size_t nkeys = report_grid_keys(rp, &keys);

	fprintf(f, "\nRHASH (issue 17): lookups of 8-byte keys, M/s, bpfmap's RHASH / the kernel's "
		   "HASH of the same max_entries:\n");
	for (int i = 0; i < RHASH_BIG; i++) {
		fprintf(f, "  %7u max, %7u present: bpfmap %7.1f, kernel %6.1f: ",
			rhash_bigs[i].max_entries, rhash_bigs[i].nr_entries, rounds_lib(&h->big[i]),
			rounds_kern(&h->big[i]));
		report_print_fig(f, rounds_ratio(&h->big[i]), "%.2fx");
		fprintf(f, "\n");
	}
	fprintf(f, "  lookup grid, M/s [RHASH / bpfmap's HASH]:\n  %-7s", "preset");
	for (size_t k = 0; k < nkeys; k++)
		fprintf(f, "  %8s%-5u", "k=", keys[k]);
	fprintf(f, "\n");
	for (int p = 0; p < REPORT_PRESETS; p++) {
		fprintf(f, "  %-7s", presets[p].name);
		for (size_t k = 0; k < nkeys; k++) {
			fprintf(f, "  %6.1f", rounds_lib(&h->look[p][k]));
			report_print_fig(f, rhash_vs_hash(rp, p, (int)k), " [%4.2f]");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "  full update (-E2BIG into a full 1000): %.2f M/s, %.2fx HASH's; overwrite: "
		   "%.2f M/s, %.2fx HASH's\n",
		rounds_lib(&h->upd), rounds_lib_ratio(&h->upd, &h->upd_hash),
		rounds_lib(&h->ovw), rounds_lib_ratio(&h->ovw, &h->ovw_hash));
	if (h->mem_ok)
		rhash_mem_print(f, &h->mem);
	if (h->grow_ok)
		rhash_grow_print(f, &h->grow);
}
