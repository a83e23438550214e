// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report: every figure issue #4 (HASH performance) sets a target for, for
 * bpfmap and for the running kernel, side by side, and a check of each target
 * (report_print.c):
 *
 *  - lookups over key sizes x small/medium/large maps (flags 0x40, as the
 *    seeds), and a 1M/1M map, there also with --bulk 16 on bpfmap's side;
 *  - full update and overwrite;
 *  - bytes per element of full preallocated maps of several key/value sizes
 *    (report_mem.c);
 *  - lookups by 2 producers against 1, and by 1 producer while a writer
 *    overwrites values non-stop, against none;
 *  - bpfmap alone: full maps of 16384, 100K and 1M entries before and after
 *    10 x max_entries delete + insert pairs (bpf-hashmap-churn, issue 14).
 *
 * Rounds (report_rounds.c): the lookup, update and concurrency cells run in
 * --rounds passes over the whole list (3 by default), bpfmap and the kernel
 * back to back in each, bpfmap first in even rounds and the kernel first in
 * odd ones, so neither side always follows the other.  A row's figures are
 * the medians of its rounds, its ratio the median of the per-round ratios.
 * Whole passes, rather than a cell's rounds in a row, put a row's rounds tens
 * of seconds apart: another job's burst on this shared machine then spoils
 * one of them, which the median drops.  Memory is deterministic: once.
 *
 * The 1M/1M lookups follow how much of the shared L3 the host's other jobs
 * leave them, and the first pass over a fresh 1M map is slower than the
 * next: why the rounds are spread over the run and the 1M cells warm up
 * longer (REPORT_BIG_WARMUP_S), bench/README.md, "The 1M/1M row".
 *
 * Quick (default): -w 0.2 -d 0.5 per cell and timed runs of about 256K
 * lookups instead of the seeds' 8M (the per-lookup figure does not depend on
 * the run length; short runs let a 0.5 s cell finish several).  --full: the
 * whole grid (adds key sizes 1 and 10), the seeds' nr_loops, -w 1 -d 3, more
 * 1M/1M key sizes, memory sizes and concurrency workloads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfmap.h>

#include "json.h"
#include "kernel_backend.h"
#include "output.h"
#include "report.h"
#include "report_int.h"

/* The u32/u64 seed's workloads. */
const struct preset presets[] = {
	{ "small", 512, 256, 8388608 },
	{ "medium", 10000, 5000, 8000000 },
	{ "large", 100000, 50000, 8000000 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const uint32_t quick_keys[] = { 4, 8, 16, 32, 64, 128, 256, 1024 };
static const uint32_t full_keys[] = { 1, 4, 8, 10, 16, 32, 64, 128, 256, 1024 };

/* 1M/1M: one pass over the million keys per timed run, in both modes. */
static const uint32_t quick_big_keys[] = { 8 };
static const uint32_t full_big_keys[] = { 4, 8, 16, 32, 64, 256 };

/* Concurrency rows: index into presets, key size. */
struct conc_spec {
	int preset;
	uint32_t key_size;
};

static const struct conc_spec quick_conc[] = { { 1, 8 } };
static const struct conc_spec full_conc[] = { { 0, 8 }, { 1, 8 }, { 2, 8 } };

size_t report_grid_keys(const struct report *rp, const uint32_t **keys)
{
	*keys = rp->full ? full_keys : quick_keys;
	return rp->full ? N(full_keys) : N(quick_keys);
}

_Static_assert(N(full_keys) <= REPORT_MAX_KEYS && N(quick_keys) <= REPORT_MAX_KEYS,
	       "struct report's lookup rounds hold every key size");
_Static_assert(N(presets) == REPORT_PRESETS, "struct report's lookup rounds hold every preset");

#define QUICK_RUN_LOOKUPS 262144
#define REPORT_FLAGS BPFMAP_F_ZERO_SEED

/* Notes a cell that did not run, once however many rounds it failed in
 * (the first error says why); NULL when the list is full. */
struct failure *failed(struct report *rp, const char *what, const char *backend,
			      const char *error)
{
	struct failure *f;

	for (int i = 0; i < rp->nfail; i++) {
		f = &rp->failures[i];
		if (f->backend == backend && !strcmp(f->what, what)) {
			f->count++;
			return f;
		}
	}
	if (rp->nfail == MAX_FAILURES)
		return NULL;
	f = &rp->failures[rp->nfail++];
	snprintf(f->what, sizeof(f->what), "%s", what);
	f->backend = backend;
	snprintf(f->error, sizeof(f->error), "%s", error);
	f->count = f->of = 1;
	return f;
}

void progress(struct report *rp, const char *what, const char *backend)
{
	rp->cell++;
	if (rp->env->progress) {
		fprintf(stderr, "\r\033[K[%d/%d] %s, %s", rp->cell, rp->cells, what,
			backend_label(backend));
		fflush(stderr);
	} else {
		fprintf(stderr, "[%d/%d] %s, %s\n", rp->cell, rp->cells, what,
			backend_label(backend));
	}
}

/* Runs one cell on one backend with @env; returns its mops, NAN when it did
 * not run.  @out (optional) receives the whole result. */
double run_env(struct report *rp, const struct bench_env *env, const char *bench,
	       const char *what, const struct cell_ops *ops, const struct bench_args *a,
	       struct cell_result *out)
{
	struct cell_result r;

	progress(rp, what, ops->backend);
	cell_run(ops, a, env, what, &r);
	report_slot_add(rp, bench, what, ops->backend, a, &r);
	if (r.ok && !strcmp(ops->backend, "kernel") && !rp->kernel_note[0])
		snprintf(rp->kernel_note, sizeof(rp->kernel_note), "%s", r.note);
	if (!r.ok) {
		struct failure *f = failed(rp, what, ops->backend, r.error);

		if (f)
			f->of = rp->rounds;
	}
	if (r.errors && !cell_errors_expected(ops->backend, &r))
		fprintf(stderr, "\r\033[K%s, %s: %llu operations went wrong\n", what,
			backend_label(ops->backend), (unsigned long long)r.errors);
	if (r.writer_errors)
		fprintf(stderr, "\r\033[K%s, %s: %llu of the writer's updates failed\n", what,
			backend_label(ops->backend), (unsigned long long)r.writer_errors);
	if (out)
		*out = r;
	return r.ok ? r.mops : NAN;
}

/* One side of a measured pair: a label, its cell, and whether it runs. */
struct round_side {
	const char *what;
	const struct cell_ops *ops;
	const struct bench_args *a;
	bool want;
};

/* Round @round of one row: its two sides back to back, @lib (into s->lib)
 * first in even rounds and @kern (into s->kern) first in odd ones. */
static void run_rounds_sides(struct report *rp, int round, const struct bench_env *env,
			     const char *bench, const struct round_side *lib,
			     const struct round_side *kern, struct rounds *s)
{
	for (int i = 0; i < 2; i++) {
		bool k = (i == 0) == (round & 1);

		if (k && kern->want)
			s->kern[round] = run_env(rp, env, bench, kern->what, kern->ops, kern->a, NULL);
		else if (!k && lib->want)
			s->lib[round] = run_env(rp, env, bench, lib->what, lib->ops, lib->a, NULL);
	}
	if (s->n < round + 1)
		s->n = round + 1;
}

/* Round @round of a row of bpfmap alone, one producer (the other side of
 * its ratio is another such row, run just before or after it). */
void run_round_lib(struct report *rp, int round, const char *bench, const char *what,
		   const struct cell_ops *ops, const struct bench_args *a, struct rounds *s)
{
	struct bench_env one = rp->cenv;

	one.producers = 1;
	s->lib[round] = run_env(rp, &one, bench, what, ops, a, NULL);
	s->n = round + 1;
}

/* Round @round of one row: bpfmap and the kernel. */
void run_rounds_pair(struct report *rp, int round, const struct bench_env *env,
			    const char *bench, const char *what, const struct cell_ops *lib,
			    const struct bench_args *la, const struct cell_ops *kern,
			    const struct bench_args *ka, struct rounds *s)
{
	struct round_side l = { what, lib, la, report_want(rp, BACKEND_LIB) };
	struct round_side k = { what, kern, ka, report_want(rp, BACKEND_KERNEL) };

	run_rounds_sides(rp, round, env, bench, &l, &k, s);
}

/* The lookup cell's arguments for a map of @max/@nr entries. */
int lookup_args(struct report *rp, struct bench_args *a, uint32_t key_size, uint32_t max,
		uint32_t nr, uint32_t nr_loops)
{
	char err[160];

	memset(a, 0, sizeof(*a));
	a->map_type = BPFMAP_TYPE_HASH;
	a->key_size = key_size;
	a->max_entries = max;
	a->nr_entries = nr;
	a->nr_loops = nr_loops;
	a->map_flags = rp->user->map_flags_set ? rp->user->map_flags : REPORT_FLAGS;
	a->full_width_keys = rp->user->full_width_keys;
	a->via_lookup = rp->user->via_lookup;
	if (lookup_args_fill(a, err, sizeof(err))) {
		fprintf(stderr, "report: %s\n", err);
		return -1;
	}
	return 0;
}

/* Quick runs are ~256K lookups, at least one pass over the keys. */
uint32_t preset_loops(const struct report *rp, const struct preset *ps)
{
	uint32_t n;

	if (rp->full)
		return ps->nr_loops;
	n = (QUICK_RUN_LOOKUPS / ps->nr_entries) * ps->nr_entries;
	return n ? n : ps->nr_entries;
}

/* The kernel program always patches the key with the selftest's 4-byte
 * store. */
struct bench_args kernel_args(const struct bench_args *a)
{
	struct bench_args ka = *a;

	ka.full_width_keys = false;
	ka.bulk = 0;
	return ka;
}

/* ---- lookups ---- */

static void lookup_what(char *what, size_t len, const struct preset *ps, uint32_t key_size)
{
	snprintf(what, len, "lookup %s k=%u", ps->name, key_size);
}

/* The copy-out view against bpfmap_lookup() on one grid cell, back to back,
 * which goes first alternating by round (run_rounds_sides). */
static void round_copy_out(struct report *rp, int round, const struct bench_args *a,
			   const char *what, struct rounds *s)
{
	struct bench_args via = *a, copy = *a;
	char wv[96], wc[96];
	struct round_side l = { wc, &lookup_lib_ops, &copy, true };
	struct round_side k = { wv, &lookup_lib_ops, &via, true };

	via.via_lookup = true;
	snprintf(via.tag, sizeof(via.tag), "view: bpfmap_lookup()");
	copy.copy_out = true;
	snprintf(copy.tag, sizeof(copy.tag), "view: copy-out");
	snprintf(wv, sizeof(wv), "%s, bpfmap_lookup()", what);
	snprintf(wc, sizeof(wc), "%s, copy-out", what);
	run_rounds_sides(rp, round, &rp->cenv, "bpf-hashmap-lookup", &l, &k, s);
}

static void round_lookups(struct report *rp, int round)
{
	const uint32_t *keys;
	size_t nkeys = report_grid_keys(rp, &keys);

	for (size_t p = 0; p < N(presets); p++) {
		for (size_t k = 0; k < nkeys; k++) {
			const struct preset *ps = &presets[p];
			struct bench_args a, ka;
			char what[64];

			if (lookup_args(rp, &a, keys[k], ps->max_entries, ps->nr_entries,
					preset_loops(rp, ps)))
				continue;
			lookup_what(what, sizeof(what), ps, keys[k]);
			ka = kernel_args(&a);
			run_rounds_pair(rp, round, &rp->cenv, "bpf-hashmap-lookup", what,
					&lookup_lib_ops, &a, &lookup_kernel_ops, &ka,
					&rp->look[p][k]);
			if (report_want(rp, BACKEND_LIB) && !a.via_lookup)
				round_copy_out(rp, round, &a, what, &rp->copy[p][k]);
		}
	}
}

/* A row of the lookup grids: the medians and the per-round ratios' range. */
static void grid_rounds(struct report *rp, const char *row, uint32_t key_size,
			const struct rounds *s)
{
	char col[16];
	double lo, hi;

	snprintf(col, sizeof(col), "%u", key_size);
	rounds_ratio_range(s, &lo, &hi);
	grid_set(&rp->lib, row, col, rounds_lib(s));
	grid_set(&rp->kern, row, col, rounds_kern(s));
	grid_set(&rp->ratio, row, col, rounds_ratio(s));
	grid_set(&rp->ratio_lo, row, col, lo);
	grid_set(&rp->ratio_hi, row, col, hi);
}

static void finish_lookups(struct report *rp)
{
	const uint32_t *keys;
	size_t nkeys = report_grid_keys(rp, &keys);
	char what[64];

	for (size_t p = 0; p < N(presets); p++) {
		for (size_t k = 0; k < nkeys; k++) {
			if (!rp->look[p][k].n)
				continue;
			lookup_what(what, sizeof(what), &presets[p], keys[k]);
			grid_rounds(rp, presets[p].name, keys[k], &rp->look[p][k]);
			report_ratio_json(rp, what, &rp->look[p][k]);
			if (rp->copy[p][k].n) {
				char col[16];

				snprintf(col, sizeof(col), "%u", keys[k]);
				grid_set(&rp->copy_ratio, presets[p].name, col,
					 rounds_ratio(&rp->copy[p][k]));
				snprintf(what + strlen(what), sizeof(what) - strlen(what),
					 ", copy-out / bpfmap_lookup()");
				report_ratio_json(rp, what, &rp->copy[p][k]);
			}
		}
	}
	for (int i = 0; i < rp->nbig; i++) {
		const struct big_row *b = &rp->big[i];

		if (!b->single.n)
			continue;
		grid_rounds(rp, "1M/1M", b->key_size, &b->single);
		snprintf(what, sizeof(what), "lookup 1M/1M k=%u", b->key_size);
		report_ratio_json(rp, what, &b->single);
		snprintf(what, sizeof(what), "lookup 1M/1M k=%u --bulk %d", b->key_size,
			 REPORT_BIG_BULK);
		report_ratio_json(rp, what, &b->bulk);
	}
}

/*
 * 1M/1M: a row of the lookup grids, and bpfmap's --bulk 16 next to it, over
 * the same round's kernel figure.  A longer warm-up than the grid's: the
 * first passes over a freshly filled 1M map run up to 2x slower.
 */
static void round_big(struct report *rp, int round)
{
	struct bench_env env = rp->cenv;

	if (!rp->env->warmup_set && env.warmup_s < REPORT_BIG_WARMUP_S)
		env.warmup_s = REPORT_BIG_WARMUP_S;
	for (int i = 0; i < rp->nbig; i++) {
		struct big_row *b = &rp->big[i];
		struct bench_args a, ka;
		char what[64];

		if (lookup_args(rp, &a, b->key_size, REPORT_BIG_ENTRIES, REPORT_BIG_ENTRIES,
				REPORT_BIG_ENTRIES))
			continue;
		snprintf(what, sizeof(what), "lookup 1M/1M k=%u", b->key_size);
		ka = kernel_args(&a);
		run_rounds_pair(rp, round, &env, "bpf-hashmap-lookup", what, &lookup_lib_ops, &a,
				&lookup_kernel_ops, &ka, &b->single);
		if (report_want(rp, BACKEND_LIB)) {
			a.bulk = REPORT_BIG_BULK;
			snprintf(what, sizeof(what), "lookup 1M/1M k=%u --bulk %d", b->key_size,
				 REPORT_BIG_BULK);
			b->bulk.lib[round] = run_env(rp, &env, "bpf-hashmap-lookup", what,
						     &lookup_lib_ops, &a, NULL);
		}
		b->bulk.kern[round] = b->single.kern[round];
		b->bulk.n = b->single.n;
	}
}

/* ---- full update, overwrite ---- */

static void round_update(struct report *rp, int round, bool overwrite)
{
	const char *bench = overwrite ? "bpf-hashmap-overwrite" : "bpf-hashmap-full-update";
	const char *what = overwrite ? "overwrite" : "full update";
	struct bench_args a = { 0 };
	char err[160];

	/* Always 1 producer: the rows are per single producer. */
	struct bench_env env = rp->cenv;

	env.producers = 1;
	update_args_fill(&a, overwrite ? UPDATE_OVERWRITE : UPDATE_FULL, err, sizeof(err));
	run_rounds_pair(rp, round, &env, bench, what, &update_lib_ops, &a, &update_kernel_ops, &a,
			overwrite ? &rp->ovw : &rp->upd);
}

/* ---- concurrency: 2 producers, and a writer ---- */

/* One backend's cells of a concurrency row (struct conc_side). */
static void conc_side(struct report *rp, const struct cell_ops *ops, const struct bench_args *a,
		      const char *label, struct conc_side *s)
{
	struct bench_env one = rp->cenv, cpu1 = rp->cenv, two = rp->cenv;
	struct bench_args ca = *a, wa;
	struct cell_result r;
	double one_after;
	char what[64];

	snprintf(ca.tag, sizeof(ca.tag), "concurrency");
	wa = ca;
	wa.writer = true;
	/* One producer pinned to the report's first CPU (CPU 0 by default). */
	one.producers = 1;
	if (!one.nr_prod_cpus)
		one.affinity = true;
	snprintf(what, sizeof(what), "lookup %s, 1 producer", label);
	s->one = run_env(rp, &one, "bpf-hashmap-lookup", what, ops, &ca, NULL);

	/* Two on CPUs 0 and 1, whatever the report's pinning, and one on CPU 1. */
	if (rp->conc_two) {
		two.producers = 2;
		two.nr_prod_cpus = 2;
		two.prod_cpus[0] = 0;
		two.prod_cpus[1] = 1;
		snprintf(what, sizeof(what), "lookup %s, 2 producers", label);
		if (isfinite(run_env(rp, &two, "bpf-hashmap-lookup", what, ops, &ca, &r)))
			s->two_total = r.mops_total;
		cpu1.producers = 1;
		cpu1.nr_prod_cpus = 1;
		cpu1.prod_cpus[0] = 1;
		snprintf(what, sizeof(what), "lookup %s, 1 producer on CPU 1", label);
		snprintf(ca.tag, sizeof(ca.tag), "concurrency, CPU 1");
		s->one_cpu1 = run_env(rp, &cpu1, "bpf-hashmap-lookup", what, ops, &ca, NULL);
	}

	/* One producer, and the writer on a CPU of its own. */
	snprintf(what, sizeof(what), "lookup %s, writer", label);
	s->with_writer = run_env(rp, &one, "bpf-hashmap-lookup", what, ops, &wa, &r);
	s->writer_mops = r.writer_mops;
	s->misses = r.errors;

	snprintf(what, sizeof(what), "lookup %s, 1 producer again", label);
	snprintf(ca.tag, sizeof(ca.tag), "concurrency, after");
	one_after = run_env(rp, &one, "bpf-hashmap-lookup", what, ops, &ca, NULL);
	if (isfinite(one_after))
		s->one = isfinite(s->one) ? (s->one + one_after) / 2 : one_after;
	s->scaling = s->two_total / ((s->one + s->one_cpu1) / 2);
	s->writer_ratio = s->with_writer / s->one;
}

static void round_conc(struct report *rp, int round)
{
	const struct conc_spec *cs = rp->full ? full_conc : quick_conc;

	for (int i = 0; i < rp->nconc; i++) {
		const struct preset *ps = &presets[cs[i].preset];
		struct conc_row *c = &rp->conc[i];
		struct bench_args a, ka;

		if (lookup_args(rp, &a, cs[i].key_size, ps->max_entries, ps->nr_entries,
				preset_loops(rp, ps)))
			continue;
		ka = kernel_args(&a);
		/* As run_pair: the side that goes first alternates. */
		for (int k = 0; k < 2; k++) {
			bool kern = (k == 0) == (round & 1);

			if (kern && report_want(rp, BACKEND_KERNEL))
				conc_side(rp, &lookup_kernel_ops, &ka, c->label, &c->kern_r[round]);
			else if (!kern && report_want(rp, BACKEND_LIB))
				conc_side(rp, &lookup_lib_ops, &a, c->label, &c->lib_r[round]);
		}
		c->n = round + 1;
	}
}

static void finish_conc(struct report *rp)
{
	for (int i = 0; i < rp->nconc; i++) {
		struct conc_row *c = &rp->conc[i];

		conc_median(c->lib_r, c->n, &c->lib);
		conc_median(c->kern_r, c->n, &c->kern);
	}
}

/* The rows every round fills in, not measured yet. */
static void report_setup(struct report *rp)
{
	const uint32_t *big = rp->full ? full_big_keys : quick_big_keys;
	const struct conc_spec *cs = rp->full ? full_conc : quick_conc;
	size_t nbig = rp->full ? N(full_big_keys) : N(quick_big_keys);
	size_t nconc = rp->full ? N(full_conc) : N(quick_conc);
	const struct conc_side none = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0 };

	for (size_t p = 0; p < N(presets); p++)
		for (size_t k = 0; k < REPORT_MAX_KEYS; k++) {
			rounds_init(&rp->look[p][k]);
			rounds_init(&rp->copy[p][k]);
		}
	for (size_t k = 0; k < nbig && rp->nbig < REPORT_MAX_BIG; k++) {
		struct big_row *b = &rp->big[rp->nbig++];

		b->key_size = big[k];
		rounds_init(&b->single);
		rounds_init(&b->bulk);
	}
	rounds_init(&rp->upd);
	rounds_init(&rp->ovw);
	for (size_t i = 0; i < nconc && rp->nconc < REPORT_MAX_CONC; i++) {
		struct conc_row *c = &rp->conc[rp->nconc++];

		snprintf(c->label, sizeof(c->label), "%s k=%u", presets[cs[i].preset].name,
			 cs[i].key_size);
		for (int r = 0; r < REPORT_MAX_ROUNDS; r++)
			c->lib_r[r] = c->kern_r[r] = none;
		c->lib = c->kern = none;
	}
}

/* Churn: bpfmap against its own freshly filled map, once per size, like
 * memory: a size's fresh and churned figures come from one process seconds
 * apart, and only their ratio is checked. */
static void report_churn(struct report *rp)
{
	static const uint32_t sizes[] = { 16384, 100000, 1000000 };

	if (!report_want(rp, BACKEND_LIB))
		return;
	for (size_t i = 0; i < N(sizes) && rp->nchurn < REPORT_MAX_CHURN; i++) {
		struct churn_result *r = &rp->churn[rp->nchurn++];
		char what[48];

		snprintf(what, sizeof(what), "churn %u", sizes[i]);
		progress(rp, what, "lib");
		*r = (struct churn_result){ .key_size = 8, .max_entries = sizes[i],
					    .pairs = 10ULL * sizes[i] };
		if (churn_measure_size(r, false))
			failed(rp, what, "lib", "an operation answered wrongly (-1 figures)");
		if (rp->env->json)
			churn_json(r);
	}
}

/* ---- the run ---- */

/* The 1-minute load average, or NAN. */
static double loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double v = NAN;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = NAN;
		fclose(f);
	}
	return v;
}

static int count_cells(const struct report *rp)
{
	bool full = rp->full, lib = report_want(rp, BACKEND_LIB);
	int nb = lib + report_want(rp, BACKEND_KERNEL);
	int nkeys = (int)(full ? N(full_keys) : N(quick_keys));
	int nbig = (int)(full ? N(full_big_keys) : N(quick_big_keys));
	int nmem = report_mem_rows(rp);
	int nconc = (int)(full ? N(full_conc) : N(quick_conc));

	/* Lookups, 1M/1M (and its --bulk), updates, concurrency: every round. */
	int round = nb * ((int)N(presets) * nkeys + nbig + 2 + nconc * (3 + 2 * rp->conc_two)) +
		    (lib ? nbig : 0) +
		    (lib && !rp->user->via_lookup ? 2 * (int)N(presets) * nkeys : 0);

	return rp->rounds * (round + types_cells(rp, true) + rhash_cells(rp, true) +
			     rtebpf_cells(rp)) + nb * nmem +
	       (lib ? REPORT_MAX_CHURN : 0) + types_cells(rp, false) + rhash_cells(rp, false);
}

int report_run(struct bench_env *env, const struct bench_args *a, bool full, int rounds)
{
	struct report *rp = calloc(1, sizeof(*rp));
	uint64_t t0 = now_ns();
	double load0 = loadavg(), load1;
	cpu_set_t cpus;

	if (!rp) {
		fprintf(stderr, "report: out of memory\n");
		return 1;
	}
	rp->env = env;
	rp->user = a;
	rp->full = full;
	rp->rounds = rounds > 0 ? rounds : REPORT_DEFAULT_ROUNDS;
	if (rp->rounds > REPORT_MAX_ROUNDS)
		rp->rounds = REPORT_MAX_ROUNDS;
	rp->cenv = *env;
	rp->cenv.progress = false;
	rp->cenv.verbose = false;
	if (!env->warmup_set)
		rp->cenv.warmup_s = full ? 1.0 : 0.2;
	if (!env->duration_set)
		rp->cenv.duration_s = full ? 3.0 : 0.5;
	/* One producer pinned, as the seeds' runs (unless -p/--prod-affinity). */
	if (!env->nr_prod_cpus)
		rp->cenv.affinity = true;
	rp->conc_two = !sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_ISSET(0, &cpus) &&
		       CPU_ISSET(1, &cpus);
	rp->cells = count_cells(rp);

	grid_init(&rp->lib, "bpfmap:", "key size (bytes)");
	grid_init(&rp->kern, "kernel:", "key size (bytes)");
	grid_init(&rp->ratio, "bpfmap / kernel:", "key size (bytes)");
	grid_init(&rp->ratio_lo, "bpfmap / kernel, the lowest round:", "key size (bytes)");
	grid_init(&rp->ratio_hi, "bpfmap / kernel, the highest round:", "key size (bytes)");
	grid_init(&rp->copy_ratio, "bpfmap copy-out (bpfmap_lookup_elem) / bpfmap_lookup():",
		  "key size (bytes)");
	report_setup(rp);
	types_setup(rp);
	rhash_setup(rp);
	rtebpf_setup(rp);
	for (int r = 0; r < rp->rounds; r++) {
		round_lookups(rp, r);
		round_big(rp, r);
		round_update(rp, r, false);
		round_update(rp, r, true);
		round_conc(rp, r);
		types_round(rp, r);
		rhash_round(rp, r);
		rtebpf_round(rp, r);
	}
	report_mem(rp);
	types_once(rp);
	rhash_once(rp);
	report_churn(rp);
	report_slots_json(rp);
	finish_lookups(rp);
	report_ratio_json(rp, "full update", &rp->upd);
	report_ratio_json(rp, "overwrite", &rp->ovw);
	report_ratio_json(rp, RTEBPF_TARGET, &rp->rte);
	finish_conc(rp);
	if (env->progress)
		fprintf(stderr, "\r\033[K");
	load1 = loadavg();
	report_print(rp, load0, load1, (double)(now_ns() - t0) / 1e9);
	free(rp);
	return 0;
}
