// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report's output: the tables (the seeds' layout where they have one) and
 * "Targets", which checks every row of issue #4 against its bound and prints
 * what was measured for it.  With --json each target is also one object
 * ("bench": "report-target").
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpfmap.h>

#include "json.h"
#include "output.h"
#include "report_int.h"

void report_print_fig(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else /* "-" as wide as a figure */
		fprintf(f, "%*s", snprintf(NULL, 0, fmt, 0.0), "-");
}

/* A row of rounds: the medians, the median ratio and the rounds' range. */
static void print_rounds_row(FILE *f, const char *label, const struct rounds *s, const char *fmt)
{
	double lo, hi;

	rounds_ratio_range(s, &lo, &hi);
	fprintf(f, "    %-14s", label);
	report_print_fig(f, rounds_lib(s), fmt);
	report_print_fig(f, rounds_kern(s), fmt);
	report_print_fig(f, rounds_ratio(s), "%9.2fx");
	if (isfinite(lo) && hi > lo)
		fprintf(f, "   %.2f-%.2fx", lo, hi);
	fputc('\n', f);
}

/* The cells that did not run, grouped by backend and reason. */
static void print_failures(FILE *f, const struct report *rp)
{
	bool done[MAX_FAILURES] = { false };

	if (!rp->nfail)
		return;
	fprintf(f, "\nNot measured:\n");
	for (int i = 0; i < rp->nfail; i++) {
		const struct failure *fi = &rp->failures[i];
		int n = 0;

		if (done[i])
			continue;
		for (int j = i; j < rp->nfail; j++)
			if (!done[j] && rp->failures[j].backend == fi->backend &&
			    !strcmp(rp->failures[j].error, fi->error))
				n++;
		fprintf(f, "  %s, ", backend_label(fi->backend));
		if (n > 3)
			fprintf(f, "%d cells", n);
		for (int j = i, shown = 0; j < rp->nfail; j++) {
			if (done[j] || rp->failures[j].backend != fi->backend ||
			    strcmp(rp->failures[j].error, fi->error))
				continue;
			done[j] = true;
			if (n > 3)
				continue;
			fprintf(f, "%s%s", shown++ ? ", " : "", rp->failures[j].what);
			if (rp->failures[j].count < rp->failures[j].of)
				fprintf(f, " (%d of %d rounds)", rp->failures[j].count,
					rp->failures[j].of);
		}
		fprintf(f, ": %s\n", fi->error);
	}
}

/* Whether @g has any figure. */
static bool grid_any(const struct grid *g)
{
	for (int r = 0; r < g->nrows; r++)
		for (int c = 0; c < g->ncols; c++)
			if (isfinite(g->v[r][c]))
				return true;
	return false;
}

static bool both(const struct report *rp)
{
	return report_want(rp, BACKEND_LIB) && report_want(rp, BACKEND_KERNEL);
}

/* ---- tables ---- */

static void print_header(FILE *f, const struct report *rp, double load0, double load1)
{
	struct utsname u;

	uname(&u);
	fprintf(f, "\nbpfmap-bench report (%s: -w %g -d %g per cell, %s)\n",
		rp->full ? "full" : "quick", rp->cenv.warmup_s, rp->cenv.duration_s,
		rp->full ? "the seeds' nr_loops"
			 : "timed runs of ~256K lookups; --full for the whole grid and the "
			   "seeds' nr_loops");
	fprintf(f, "%s %s, %ld CPUs online; %d producer%s, pinned\n", u.sysname, u.release,
		sysconf(_SC_NPROCESSORS_ONLN), rp->cenv.producers,
		rp->cenv.producers == 1 ? "" : "s");
	fprintf(f, "%d round%s: each round measures every bpfmap/kernel row once, the two back to "
		   "back (bpfmap first in\neven rounds, the kernel in odd ones); figures are the "
		   "medians of the rounds, ratios the medians\nof the per-round ratios (memory: "
		   "once)\n",
		rp->rounds, rp->rounds == 1 ? "" : "s");
	/* The report itself keeps about one CPU busy; more means company. */
	if (load0 > 1.5 || load1 > 1.5)
		fprintf(f, "warning: load average %.1f before, %.1f after: other work shared "
			   "the CPUs, figures are noisy (bpfmap's runs are timed in thread CPU "
			   "time, the kernel's are not preempted)\n",
			load0, load1);
	if (report_want(rp, BACKEND_KERNEL) && rp->kernel_note[0])
		fprintf(f, "kernel: its own BPF maps, %s; its figures include bpf_loop's "
			   "overhead and the key patch, as the selftests'\n",
			rp->kernel_note);
}

static void print_lookups(FILE *f, const struct report *rp)
{
	const struct bench_args *a = rp->user;

	fprintf(f, "\nLookup: HASH, value_size 8, map_flags 0x%x, %s key stores; M lookups/s\n"
		   "(small 512/256, medium 10000/5000, large 100000/50000, 1M/1M max/nr entries; "
		   "1M/1M: one pass of 1M lookups per timed run)\n"
		   "bpfmap side: %s\n\n",
		a->map_flags_set ? a->map_flags : BPFMAP_F_ZERO_SEED,
		a->full_width_keys ? "full-width (bpfmap side)" : "the selftest's 4-byte",
		a->via_lookup ? "each key through bpfmap_lookup() (--via_lookup)"
			      : "the map's lookup function from bpfmap_lookup_func(), called directly "
				"as a JIT would (--via_lookup: through bpfmap_lookup())");
	if (report_want(rp, BACKEND_LIB))
		grid_print(f, &rp->lib, GRID_VALUE);
	if (report_want(rp, BACKEND_KERNEL) && grid_any(&rp->kern))
		grid_print(f, &rp->kern, GRID_VALUE);
	else if (report_want(rp, BACKEND_KERNEL))
		fprintf(f, "  kernel: not measured (see below)\n\n");
	if (both(rp) && grid_any(&rp->ratio)) {
		grid_print(f, &rp->ratio, GRID_RATIO);
		if (rp->rounds > 1) {
			grid_print(f, &rp->ratio_lo, GRID_RATIO);
			grid_print(f, &rp->ratio_hi, GRID_RATIO);
		}
	}
	if (grid_any(&rp->copy_ratio)) {
		fprintf(f, "  The syscall view: bpfmap_lookup_elem() copying each value out, over the\n"
			   "  same cell through bpfmap_lookup() (--copy_out against --via_lookup, back to\n"
			   "  back in each round; medians of the per-round ratios)\n");
		grid_print(f, &rp->copy_ratio, GRID_RATIO);
	}
}

static void print_big(FILE *f, const struct report *rp)
{
	struct grid v, r;
	char col[16];

	if (!rp->nbig || !report_want(rp, BACKEND_LIB))
		return;
	grid_init(&v, "1M/1M with bpfmap_lookup_bulk(), 16 keys a call (M lookups/s):",
		  "key size (bytes)");
	grid_init(&r, "ratio to the kernel's single lookups:", "key size (bytes)");
	for (int i = 0; i < rp->nbig; i++) {
		const struct big_row *b = &rp->big[i];

		double lo, hi;

		snprintf(col, sizeof(col), "%u", b->key_size);
		rounds_ratio_range(&b->bulk, &lo, &hi);
		grid_set(&v, "bpfmap bulk", col, rounds_lib(&b->bulk));
		grid_set(&r, "bulk / kernel", col, rounds_ratio(&b->bulk));
		grid_set(&r, "lowest round", col, rp->rounds > 1 ? lo : NAN);
		grid_set(&r, "highest round", col, rp->rounds > 1 ? hi : NAN);
	}
	grid_print(f, &v, GRID_VALUE);
	if (both(rp))
		grid_print(f, &r, GRID_RATIO);
}

static void print_updates(FILE *f, const struct report *rp)
{
	fprintf(f, "Updates: u32 -> u64 HASH, 1000 entries, full, 1 producer; M updates/s\n");
	fprintf(f, "    %-14s%10s%10s%10s%s\n", "", "bpfmap", "kernel", "ratio",
		rp->rounds > 1 ? "   rounds" : "");
	print_rounds_row(f, "full update", &rp->upd, "%10.2f");
	print_rounds_row(f, "overwrite", &rp->ovw, "%10.2f");
}

static void print_mem(FILE *f, const struct report *rp)
{
	fprintf(f, "\nMemory: HASH, preallocated, full; bytes per element (bpfmap_mem_usage(), "
		   "the kernel's memlock, / max_entries)\n");
	fprintf(f, "    %-14s%10s%10s%10s%10s%10s\n", "key+value", "entries", "bpfmap", "kernel",
		"ratio", "target");
	for (int i = 0; i < rp->nmem; i++) {
		const struct mem_row *m = &rp->mem[i];
		char label[32];

		snprintf(label, sizeof(label), "%u+%u", m->key_size, m->value_size);
		fprintf(f, "    %-14s%10u", label, m->entries);
		report_print_fig(f, m->lib, "%10.1f");
		report_print_fig(f, m->kern, "%10.1f");
		report_print_fig(f, m->lib / m->kern, "%9.2fx");
		fprintf(f, "%8s%.0f\n", "<= ", m->target);
	}
}

static void print_churn(FILE *f, const struct report *rp)
{
	if (!rp->nchurn)
		return;
	fprintf(f, "\nChurn: bpfmap, HASH 8 B key + 8 B value, full, before and after 10 x "
		   "max_entries delete + insert pairs\n(ns per op; batch: ms per lookup_batch pass; "
		   "bpf-hashmap-churn)\n");
	fprintf(f, "    %-10s%-10s%10s%10s%10s%10s\n", "entries", "op", "fresh", "churned", "ratio",
		"target");
	for (int i = 0; i < rp->nchurn; i++) {
		const struct churn_result *r = &rp->churn[i];

		for (int op = 0; op < CHURN_OPS; op++) {
			fprintf(f, "    %-10u%-10s", r->max_entries, churn_op_names[op]);
			report_print_fig(f, r->fresh[op], "%10.3g");
			report_print_fig(f, r->churned[op], "%10.3g");
			report_print_fig(f, r->churned[op] / r->fresh[op], "%9.2fx");
			fprintf(f, "%7s%.1fx\n", "<= ", op == CHURN_PRESENT ? CHURN_PRESENT_BOUND
								 : CHURN_OTHER_BOUND);
		}
	}
}

static void print_conc(FILE *f, const struct report *rp)
{
	if (!rp->nconc)
		return;
	fprintf(f, "\nConcurrency: lookups as above, M lookups/s per producer.  1 prod: one "
		   "producer on CPU 0 (mean of a run\nbefore and after the others), on CPU 1; "
		   "2 prod: on CPUs 0 and 1, their total, over the mean of the two\nsingle rates; "
		   "writer: one producer on CPU 0 while a writer on CPU 1 overwrites present "
		   "keys'\nvalues (BPF_ANY) non-stop, over the single rate on CPU 0.  Medians "
		   "of the rounds, the ratios\nof the per-round ratios.  The 2-producer figures "
		   "need an otherwise idle machine (both CPUs).\n");
	fprintf(f, "    %-14s %-7s%9s%9s%9s%8s%9s%8s%11s\n", "", "", "1 prod", "CPU 1", "2 prod",
		"2 / 1", "writer", "w / 1", "writer M/s");
	for (int i = 0; i < rp->nconc; i++) {
		const struct conc_row *c = &rp->conc[i];

		for (int k = 0; k < 2; k++) {
			const struct conc_side *s = k ? &c->kern : &c->lib;

			if (!report_want(rp, k ? BACKEND_KERNEL : BACKEND_LIB))
				continue;
			fprintf(f, "    %-14s %-7s", k && report_want(rp, BACKEND_LIB) ? "" : c->label,
				k ? "kernel" : "bpfmap");
			report_print_fig(f, s->one, "%9.2f");
			report_print_fig(f, s->one_cpu1, "%9.2f");
			report_print_fig(f, s->two_total, "%9.2f");
			report_print_fig(f, s->scaling, "%7.2fx");
			report_print_fig(f, s->with_writer, "%9.2f");
			report_print_fig(f, s->writer_ratio, "%7.2fx");
			report_print_fig(f, s->writer_mops, "%11.2f");
			if (k && s->misses)
				fprintf(f, "  (%llu lookup%s missed a key being overwritten)",
					(unsigned long long)s->misses, s->misses == 1 ? "" : "s");
			fputc('\n', f);
		}
	}
	if (report_want(rp, BACKEND_KERNEL))
		fprintf(f, "    (the kernel's writer is a user thread calling bpf_map_update_elem(), "
			   "a syscall per update)\n");
}

static void print_rtebpf(FILE *f, const struct report *rp)
{
	fprintf(f, "\nrte_bpf: examples/rte_bpf/flow_count.bpf.c over a warm trace of %u packets "
		   "and %u flows\n(bpfmap-bench rte-bpf, one run per round); M packets/s: rte_bpf's "
		   "JIT on bpfmap's maps, the\nkernel's XDP net of an empty program's test run\n",
		RTEBPF_PACKETS, RTEBPF_FLOWS);
	fprintf(f, "    %-14s%10s%10s%10s%s\n", "", "JIT", "kernel", "ratio",
		rp->rounds > 1 ? "   rounds" : "");
	print_rounds_row(f, "flow_count", &rp->rte, "%10.2f");
}

/* ---- targets ---- */

struct target {
	char row[56];
	char measured[80];
	char bound[32];
	int met, total; /* cells within the bound, cells measured */
	double worst;   /* the figure farthest from the bound (the checked one) */
	double worst_lo, worst_hi; /* its rounds' range (NaN: one round, or none) */
	double goal;
	bool lower;     /* the bound is a maximum */
};

static void tgt_init(struct target *t, const char *row, double goal, bool lower)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->row, sizeof(t->row), "%s", row);
	t->goal = goal;
	t->lower = lower;
	t->worst = t->worst_lo = t->worst_hi = NAN;
	if (lower)
		snprintf(t->bound, sizeof(t->bound), "<= %g B", goal);
	else
		snprintf(t->bound, sizeof(t->bound), ">= %.*fx", goal * 10 == (int)(goal * 10) ? 1 : 2,
			 goal);
}

/* Adds one measured cell (NAN: not measured), whose rounds ranged @lo-@hi. */
static void tgt_add_range(struct target *t, double v, double lo, double hi)
{
	if (!isfinite(v))
		return;
	t->total++;
	t->met += t->lower ? v <= t->goal : v >= t->goal;
	if (!isfinite(t->worst) || (t->lower ? v > t->worst : v < t->worst)) {
		t->worst = v;
		t->worst_lo = lo < hi ? lo : NAN;
		t->worst_hi = lo < hi ? hi : NAN;
	}
}

static void tgt_add(struct target *t, double v)
{
	tgt_add_range(t, v, NAN, NAN);
}

/* A row of rounds: its median per-round ratio. */
static void tgt_add_rounds(struct target *t, const struct rounds *s)
{
	double lo, hi;

	rounds_ratio_range(s, &lo, &hi);
	tgt_add_range(t, rounds_ratio(s), lo, hi);
}

/* "min 2.49x (2.41-2.60), 2 of 6 cells met" or "2.49x (2.41-2.60)" for a
 * single cell; the range is the checked cell's rounds. */
static void tgt_describe(struct target *t, const char *unit)
{
	char range[32] = "";

	if (isfinite(t->worst_lo))
		snprintf(range, sizeof(range), " (%.2f-%.2f)", t->worst_lo, t->worst_hi);
	if (!t->total)
		snprintf(t->measured, sizeof(t->measured), "not measured");
	else if (t->total == 1)
		snprintf(t->measured, sizeof(t->measured), "%.2f%s%s", t->worst, unit, range);
	else
		snprintf(t->measured, sizeof(t->measured), "%s %.2f%s%s, %d of %d cells met",
			 t->lower ? "max" : "min", t->worst, unit, range, t->met, t->total);
}

static void tgt_lookup_keys(struct target *t, const struct report *rp, uint32_t lo, uint32_t hi)
{
	const struct grid *g = &rp->ratio;

	for (int r = 0; r < g->nrows; r++) {
		if (!strcmp(g->row[r], "1M/1M"))
			continue;
		for (int c = 0; c < g->ncols; c++) {
			uint32_t k = (uint32_t)atoi(g->col[c]);

			if (k >= lo && k <= hi)
				tgt_add_range(t, g->v[r][c], rp->ratio_lo.v[r][c],
					      rp->ratio_hi.v[r][c]);
		}
	}
	tgt_describe(t, "x");
}

/* A churn target: ops @from .. @to - 1 of every size, churned / fresh. */
static void tgt_churn(struct target *t, const struct report *rp, const char *row, int from,
		      int to, double bound)
{
	tgt_init(t, row, bound, true);
	snprintf(t->bound, sizeof(t->bound), "<= %.1fx", bound);
	for (int i = 0; i < rp->nchurn; i++)
		for (int op = from; op < to; op++) {
			const struct churn_result *r = &rp->churn[i];

			tgt_add(t, r->fresh[op] > 0 && r->churned[op] > 0
					   ? r->churned[op] / r->fresh[op] : NAN);
		}
	tgt_describe(t, "x");
}

/* A bound that is a maximum in @unit (the bound's text says so). */
static void tgt_init_max(struct target *t, const char *row, double goal, const char *unit,
			 double v)
{
	tgt_init(t, row, goal, true);
	snprintf(t->bound, sizeof(t->bound), "<= %g%s", goal, unit);
	tgt_add(t, v);
	tgt_describe(t, unit);
}

/* RHASH's memory and growth rows (bench_rhash.c's figures). */
static int rhash_targets(const struct report *rp, struct target *t)
{
	const struct rhash_rows *h = &rp->rhash;
	double nan = NAN;
	int n = 0;

	tgt_init_max(&t[n++], "RHASH memory, 1K of 1M max_entries", 256, " KiB",
		     h->mem_ok ? h->mem.at_1k / 1024.0 : nan);
	tgt_init_max(&t[n++], "RHASH memory, 500K back to 1K, settled", 512, " KiB",
		     h->mem_ok ? h->mem.back_1k_settled / 1024.0 : nan);
	tgt_init_max(&t[n++], "RHASH bytes/elem 8+8, growth 1K-1M, most", 48, " B",
		     h->mem_ok ? h->mem.peak_per_elem : nan);
	tgt_init_max(&t[n++], "RHASH bytes/elem 8+8 at 1M", 32, " B",
		     h->mem_ok ? h->mem.per_elem_1m : nan);
	tgt_init_max(&t[n++], "RHASH growth to 1M: lookups missed", 0, "",
		     h->grow_ok ? (double)h->grow.rhash.misses : nan);
	tgt_init_max(&t[n++], "RHASH growth to 1M: longest lookup", 50, " us",
		     h->grow_ok ? h->grow.rhash.max_us : nan);
	tgt_init_max(&t[n++], "RHASH growth: 1M inserts vs prealloc HASH", 1.5, "x",
		     h->grow_ok ? h->grow.ratio : nan);
	return n;
}

static int build_targets(const struct report *rp, struct target *t)
{
	int n = 0;

	tgt_init(&t[n], "lookups, key 4 and 8 B, small/medium/large", 5.0, false);
	tgt_lookup_keys(&t[n++], rp, 4, 8);
	tgt_init(&t[n], "lookups, key 16-64 B", 3.0, false);
	tgt_lookup_keys(&t[n++], rp, 16, 64);
	tgt_init(&t[n], "lookups, key 128-1024 B", 3.0, false);
	tgt_lookup_keys(&t[n++], rp, 128, 1024);

	tgt_init(&t[n], "lookups, 1M/1M, single", 3.0, false);
	for (int i = 0; i < rp->nbig; i++)
		tgt_add_rounds(&t[n], &rp->big[i].single);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "lookups, 1M/1M, --bulk 16 vs kernel single", 8.0, false);
	for (int i = 0; i < rp->nbig; i++)
		tgt_add_rounds(&t[n], &rp->big[i].bulk);
	tgt_describe(&t[n++], "x");

	tgt_init(&t[n], "full update, 1 producer", 5.0, false);
	tgt_add_rounds(&t[n], &rp->upd);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "overwrite, 1 producer", 5.0, false);
	tgt_add_rounds(&t[n], &rp->ovw);
	tgt_describe(&t[n++], "x");

	for (int i = 0; i < rp->nmem; i++) {
		const struct mem_row *m = &rp->mem[i];
		char row[56];

		snprintf(row, sizeof(row), "bytes/elem, %u B key + %u B value", m->key_size,
			 m->value_size);
		tgt_init(&t[n], row, m->target, true);
		tgt_add(&t[n], m->lib);
		if (t[n].total)
			snprintf(t[n].measured, sizeof(t[n].measured), "%.1f B", m->lib);
		else
			tgt_describe(&t[n], " B");
		n++;
	}

	tgt_init(&t[n], "2 producers doing lookups vs 1", 1.9, false);
	for (int i = 0; i < rp->nconc; i++)
		tgt_add(&t[n], rp->conc[i].lib.scaling);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "lookups with a writer vs read-only", 0.8, false);
	for (int i = 0; i < rp->nconc; i++)
		tgt_add(&t[n], rp->conc[i].lib.writer_ratio);
	tgt_describe(&t[n++], "x");

	/* Issue 15's: the copy-out view against the program view. */
	tgt_init(&t[n], "copy-out lookups vs bpfmap_lookup()", 0.8, false);
	for (size_t p = 0; p < REPORT_PRESETS; p++)
		for (size_t k = 0; k < REPORT_MAX_KEYS; k++)
			if (rp->copy[p][k].n)
				tgt_add_rounds(&t[n], &rp->copy[p][k]);
	tgt_describe(&t[n++], "x");

	/* Issue 16's: the newer types. */
	tgt_init(&t[n], "PERCPU/LRU lookups vs kernel's, key 4-8 B", 5.0, false);
	tgt_init(&t[n + 1], "PERCPU/LRU lookups vs kernel's, key 32-256 B", 3.0, false);
	tgt_init(&t[n + 2], "PERCPU/LRU lookups vs bpfmap's HASH", 0.85, false);
	for (int i = 0; i < TYPES_N; i++)
		for (int p = 0; p < REPORT_PRESETS; p++)
			for (int k = 0; k < TYPES_KEYS; k++) {
				tgt_add_rounds(&t[n + (types_keys[k] > 8)], &rp->types.look[i][p][k]);
				tgt_add(&t[n + 2], types_vs_hash(rp, i, p, k));
			}
	tgt_describe(&t[n++], "x");
	tgt_describe(&t[n++], "x");
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "evicting inserts, LRU_HASH, 1 producer", 5.0, false);
	tgt_add_rounds(&t[n], &rp->types.evict1);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "evicting inserts, 2 producers vs 1", 1.8, false);
	tgt_add(&t[n], rounds_lib_ratio(&rp->types.evict2, &rp->types.evict1));
	tgt_describe(&t[n++], "x");
	for (int s = 0; s < 2; s++) {
		const struct lru_hit_row *h = &rp->types.hit[s];

		tgt_init(&t[n], s ? "lru-hit + scan: hit ratio vs exact LRU" :
				    "lru-hit: hit ratio vs exact LRU", 1.0, false);
		tgt_add(&t[n], h->lib.ok ? h->lib.ratio / h->exact : NAN);
		tgt_describe(&t[n++], "x");
		tgt_init(&t[n], s ? "lru-hit + scan: hit ratio vs kernel's" :
				    "lru-hit: hit ratio vs kernel's", 1.0, false);
		tgt_add(&t[n], h->lib.ok && h->kern.ok ? h->lib.ratio / h->kern.ratio : NAN);
		tgt_describe(&t[n++], "x");
	}
	tgt_init(&t[n], "per-CPU increments, 2 threads vs 1", 1.9, false);
	tgt_add(&t[n], rounds_lib_ratio(&rp->types.count2, &rp->types.count1));
	tgt_describe(&t[n++], "x");
	for (int i = 0; i < 2; i++) {
		const struct mem_row *m = &rp->types.mem[i];
		char row[56];

		snprintf(row, sizeof(row), "bytes/elem, %s 8 + 8", map_type_name(m->type));
		tgt_init(&t[n], row, m->target, true);
		tgt_add(&t[n], m->lib);
		if (t[n].total)
			snprintf(t[n].measured, sizeof(t[n].measured), "%.1f B", m->lib);
		else
			tgt_describe(&t[n], " B");
		n++;
	}

	/* Issue 17's: RHASH. */
	tgt_init(&t[n], "RHASH lookups k=8 vs kernel's HASH, 1K and 1M", 5.0, false);
	for (int i = 0; i < RHASH_BIG; i++)
		tgt_add_rounds(&t[n], &rp->rhash.big[i]);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "RHASH lookups vs bpfmap's HASH, the grid", 0.9, false);
	for (int p = 0; p < REPORT_PRESETS; p++)
		for (int k = 0; k < REPORT_MAX_KEYS; k++)
			if (rp->rhash.look[p][k].n)
				tgt_add(&t[n], rhash_vs_hash(rp, p, k));
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "RHASH full update vs bpfmap's HASH", 0.9, false);
	tgt_add(&t[n], rounds_lib_ratio(&rp->rhash.upd, &rp->rhash.upd_hash));
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "RHASH overwrite vs bpfmap's HASH", 0.9, false);
	tgt_add(&t[n], rounds_lib_ratio(&rp->rhash.ovw, &rp->rhash.ovw_hash));
	tgt_describe(&t[n++], "x");
	n += rhash_targets(rp, &t[n]);

	/* Issue 14's: churned against fresh, bpfmap's own. */
	tgt_churn(&t[n++], rp, "churn: present lookups, churned vs fresh", CHURN_PRESENT,
		  CHURN_PRESENT + 1, CHURN_PRESENT_BOUND);
	tgt_churn(&t[n++], rp, "churn: absent, -E2BIG, batch, churned vs fresh", CHURN_ABSENT,
		  CHURN_OPS, CHURN_OTHER_BOUND);

	/* rte_bpf: the same BPF program, packets/s. */
	tgt_init(&t[n], RTEBPF_TARGET, 3.0, false);
	tgt_add_rounds(&t[n], &rp->rte);
	tgt_describe(&t[n++], "x");
	return n;
}

static const char *tgt_status(const struct target *t)
{
	if (!t->total)
		return "-";
	return t->met == t->total ? "met" : "NOT MET";
}

static void targets_json(const struct report *rp, const struct target *t, int n)
{
	for (int i = 0; rp->env->json && i < n; i++) {
		struct jw w;

		jw_begin(&w, stdout);
		jw_str(&w, "bench", "report-target");
		jw_str(&w, "target", t[i].row);
		jw_str(&w, "bound", t[i].bound);
		jw_num(&w, "goal", t[i].goal);
		jw_num(&w, "worst", t[i].worst);
		jw_num(&w, "worst_round_min", t[i].worst_lo);
		jw_num(&w, "worst_round_max", t[i].worst_hi);
		jw_u64(&w, "cells", (uint64_t)t[i].total);
		jw_u64(&w, "cells_met", (uint64_t)t[i].met);
		if (t[i].total)
			jw_bool(&w, "met", t[i].met == t[i].total);
		jw_end(&w);
	}
}

static void print_targets(FILE *f, const struct report *rp)
{
	struct target t[48 + REPORT_MAX_MEM];
	int n = build_targets(rp, t), met = 0, measured = 0;

	fprintf(f, "\nTargets (issues #4, #14, #15, #16 and #17; ratios bpfmap / kernel from this run: medians of the "
		   "per-round ratios, in brackets\nthe checked cell's lowest and highest round; "
		   "memory, concurrency, copy-out and churn bpfmap's own):\n");
	fprintf(f, "    %-44s %-46s %-10s %s\n", "row", "measured", "target", "");
	for (int i = 0; i < n; i++) {
		fprintf(f, "    %-44s %-46s %-10s %s\n", t[i].row, t[i].measured, t[i].bound,
			tgt_status(&t[i]));
		measured += t[i].total > 0;
		met += t[i].total > 0 && t[i].met == t[i].total;
	}
	fprintf(f, "  %d of %d targets met (%d measured)", met, n, measured);
	if (rp->full)
		fprintf(f, "; key sizes 1 and 10 have no target");
	fprintf(f, "\n");
	targets_json(rp, t, n);
}

void report_print(struct report *rp, double load0, double load1, double wall_s)
{
	FILE *f = rp->env->out;

	print_header(f, rp, load0, load1);
	print_lookups(f, rp);
	print_big(f, rp);
	print_updates(f, rp);
	print_mem(f, rp);
	print_conc(f, rp);
	print_churn(f, rp);
	types_print(f, rp);
	rhash_print(f, rp);
	print_rtebpf(f, rp);
	print_targets(f, rp);
	print_failures(f, rp);
	fprintf(f, "\nwall time %.0f s\n", wall_s);
	fflush(f);
}
