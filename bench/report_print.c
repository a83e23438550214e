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

static void print_fig(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else /* "-" as wide as a figure */
		fprintf(f, "%*s", snprintf(NULL, 0, fmt, 0.0), "-");
}

static void print_pair_row(FILE *f, const char *label, struct pair p, const char *fmt)
{
	fprintf(f, "    %-14s", label);
	print_fig(f, p.lib, fmt);
	print_fig(f, p.kern, fmt);
	print_fig(f, p.lib / p.kern, "%9.2fx");
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
			if (n <= 3)
				fprintf(f, "%s%s", shown++ ? ", " : "", rp->failures[j].what);
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
		   "1M/1M: one pass of 1M lookups per timed run)\n\n",
		a->map_flags_set ? a->map_flags : BPFMAP_F_ZERO_SEED,
		a->full_width_keys ? "full-width (bpfmap side)" : "the selftest's 4-byte");
	if (report_want(rp, BACKEND_LIB))
		grid_print(f, &rp->lib, GRID_VALUE);
	if (report_want(rp, BACKEND_KERNEL) && grid_any(&rp->kern))
		grid_print(f, &rp->kern, GRID_VALUE);
	else if (report_want(rp, BACKEND_KERNEL))
		fprintf(f, "  kernel: not measured (see below)\n\n");
	if (both(rp) && grid_any(&rp->ratio))
		grid_print(f, &rp->ratio, GRID_RATIO);
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

		snprintf(col, sizeof(col), "%u", b->key_size);
		grid_set(&v, "bpfmap bulk", col, b->bulk);
		grid_set(&r, "bulk / kernel", col, b->bulk / b->kern);
	}
	grid_print(f, &v, GRID_VALUE);
	if (both(rp))
		grid_print(f, &r, GRID_RATIO);
}

static void print_updates(FILE *f, const struct report *rp)
{
	fprintf(f, "Updates: u32 -> u64 HASH, 1000 entries, full, 1 producer; M updates/s\n");
	fprintf(f, "    %-14s%10s%10s%10s\n", "", "bpfmap", "kernel", "ratio");
	print_pair_row(f, "full update", rp->upd, "%10.2f");
	print_pair_row(f, "overwrite", rp->ovw, "%10.2f");
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
		print_fig(f, m->lib, "%10.1f");
		print_fig(f, m->kern, "%10.1f");
		print_fig(f, m->lib / m->kern, "%9.2fx");
		fprintf(f, "%8s%.0f\n", "<= ", m->target);
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
		   "keys'\nvalues (BPF_ANY) non-stop, over the single rate on CPU 0.  The "
		   "2-producer figures need an otherwise\nidle machine (both CPUs).\n");
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
			print_fig(f, s->one, "%9.2f");
			print_fig(f, s->one_cpu1, "%9.2f");
			print_fig(f, s->two_total, "%9.2f");
			print_fig(f, conc_scaling(s), "%7.2fx");
			print_fig(f, s->with_writer, "%9.2f");
			print_fig(f, s->with_writer / s->one, "%7.2fx");
			print_fig(f, s->writer_mops, "%11.2f");
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

/* ---- targets ---- */

struct target {
	char row[56];
	char measured[72];
	char bound[32];
	int met, total; /* cells within the bound, cells measured */
	double worst;   /* the figure farthest from the bound (the checked one) */
	double goal;
	bool lower;     /* the bound is a maximum */
};

static void tgt_init(struct target *t, const char *row, double goal, bool lower)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->row, sizeof(t->row), "%s", row);
	t->goal = goal;
	t->lower = lower;
	t->worst = NAN;
	if (lower)
		snprintf(t->bound, sizeof(t->bound), "<= %g B", goal);
	else
		snprintf(t->bound, sizeof(t->bound), ">= %.1fx", goal);
}

/* Adds one measured cell (NAN: not measured). */
static void tgt_add(struct target *t, double v)
{
	if (!isfinite(v))
		return;
	t->total++;
	t->met += t->lower ? v <= t->goal : v >= t->goal;
	if (!isfinite(t->worst) || (t->lower ? v > t->worst : v < t->worst))
		t->worst = v;
}

/* "min 2.49x, 2 of 6 cells" or "2.49x" for a single cell. */
static void tgt_describe(struct target *t, const char *unit)
{
	if (!t->total)
		snprintf(t->measured, sizeof(t->measured), "not measured");
	else if (t->total == 1)
		snprintf(t->measured, sizeof(t->measured), "%.2f%s", t->worst, unit);
	else
		snprintf(t->measured, sizeof(t->measured), "%s %.2f%s, %d of %d cells met",
			 t->lower ? "max" : "min", t->worst, unit, t->met, t->total);
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
				tgt_add(t, g->v[r][c]);
		}
	}
	tgt_describe(t, "x");
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
		tgt_add(&t[n], rp->big[i].lib / rp->big[i].kern);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "lookups, 1M/1M, --bulk 16 vs kernel single", 8.0, false);
	for (int i = 0; i < rp->nbig; i++)
		tgt_add(&t[n], rp->big[i].bulk / rp->big[i].kern);
	tgt_describe(&t[n++], "x");

	tgt_init(&t[n], "full update, 1 producer", 5.0, false);
	tgt_add(&t[n], rp->upd.lib / rp->upd.kern);
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "overwrite, 1 producer", 5.0, false);
	tgt_add(&t[n], rp->ovw.lib / rp->ovw.kern);
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
		tgt_add(&t[n], conc_scaling(&rp->conc[i].lib));
	tgt_describe(&t[n++], "x");
	tgt_init(&t[n], "lookups with a writer vs read-only", 0.8, false);
	for (int i = 0; i < rp->nconc; i++)
		tgt_add(&t[n], rp->conc[i].lib.with_writer / rp->conc[i].lib.one);
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
		jw_u64(&w, "cells", (uint64_t)t[i].total);
		jw_u64(&w, "cells_met", (uint64_t)t[i].met);
		if (t[i].total)
			jw_bool(&w, "met", t[i].met == t[i].total);
		jw_end(&w);
	}
}

static void print_targets(FILE *f, const struct report *rp)
{
	struct target t[16 + REPORT_MAX_MEM];
	int n = build_targets(rp, t), met = 0, measured = 0;

	fprintf(f, "\nTargets (issue #4; ratios bpfmap / kernel from this run, memory and "
		   "concurrency bpfmap's own):\n");
	fprintf(f, "    %-46s %-34s %-10s %s\n", "row", "measured", "target", "");
	for (int i = 0; i < n; i++) {
		fprintf(f, "    %-46s %-34s %-10s %s\n", t[i].row, t[i].measured, t[i].bound,
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
	print_targets(f, rp);
	print_failures(f, rp);
	fprintf(f, "\nwall time %.0f s\n", wall_s);
	fflush(f);
}
