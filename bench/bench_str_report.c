// SPDX-License-Identifier: BSD-2-Clause
/*
 * str-kfuncs: what the measured rows show (bench_str.c measures them): a
 * table per kfunc in the seed's layout with the two target ratios,
 * bpfmap/glibc (against glibc's faster function) and kernel-net/bpfmap; the
 * targets' summary; the --isa table; one JSON object per cell.
 */
#include <math.h>
#include <string.h>

#include <bpfmap.h>

#define STR_TARGET
#include "strings/str_internal.h"

#include "bench.h"
#include "bench_str.h"
#include "json.h"

/* ---- what a row shows ---- */


static const struct bcol *find_col(const struct row_run *rr, const char *backend, int kprog)
{
	for (int i = 0; i < rr->ncols; i++) {
		const struct bcol *col = &rr->cols[i];

		if (col->isa || strcmp(col->backend, backend))
			continue;
		if (!strcmp(backend, "kernel") && col->kprog != kprog)
			continue;
		return col;
	}
	return NULL;
}

double col_median(const struct bcol *col)
{
	return col && col->ok ? col->median : NAN;
}

struct row_fig row_figures(const struct row_run *rr, enum bstr_kind kind)
{
	struct row_fig f = { .glibc = NAN, .glibc_name = "" };

	f.lib = col_median(find_col(rr, "lib", 0));
	for (int i = 0; i < rr->ncols; i++) {
		const struct bcol *col = &rr->cols[i];

		if (col->glibc && col->ok && !(col->median >= f.glibc)) {
			f.glibc = col->median;
			f.glibc_name = col->name;
		}
	}
	f.kernel = col_median(find_col(rr, "kernel", (int)kind));
	f.empty = col_median(find_col(rr, "kernel", BSTR_KEMPTY));
	f.net = f.kernel - f.empty;
	f.r_glibc = f.lib / f.glibc;
	f.r_kernel = f.net / f.lib;
	return f;
}

/* ---- output ---- */

#define W 9 /* a figure's column */

static void fmt_ns(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (v >= 1000)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.1f", v);
}

static void fmt_ratio(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2fx", v);
}

void print_head(FILE *f, const struct row_run *rr)
{
	fprintf(f, "  %-9s %6s", "Scenario", "Bytes");
	for (int i = 0; i < rr->ncols; i++)
		if (!rr->cols[i].isa)
			fprintf(f, " %*s", W,
				rr->cols[i].kprog == BSTR_KEMPTY ? "empty" : rr->cols[i].name);
	if (rr->kern_why || rr->kern)
		fprintf(f, " %*s", W + 1, "kernel-net");
	fprintf(f, " %13s %14s\n", "bpfmap/glibc", "kernel/bpfmap");
}

void print_row(FILE *f, const struct row_run *rr, const struct bstr_case *c,
	       const struct row_fig *fig)
{
	char buf[32];

	fprintf(f, "  %-9s %6zu", c->scenario, c->bytes);
	for (int i = 0; i < rr->ncols; i++) {
		if (rr->cols[i].isa)
			continue;
		fmt_ns(buf, sizeof(buf), col_median(&rr->cols[i]));
		fprintf(f, " %*s", W, buf);
	}
	if (rr->kern_why || rr->kern) {
		fmt_ns(buf, sizeof(buf), fig->net);
		fprintf(f, " %*s", W + 1, buf);
	}
	fmt_ratio(buf, sizeof(buf), fig->r_glibc);
	fprintf(f, " %13s", buf);
	fmt_ratio(buf, sizeof(buf), fig->r_kernel);
	fprintf(f, " %14s\n", buf);
}

void json_row(const struct bench_env *env, const struct bench *b, const struct row_run *rr,
	      const struct bstr_case *c, const struct row_fig *fig)
{
	for (int i = 0; env->json && i < rr->ncols; i++) {
		const struct bcol *col = &rr->cols[i];
		bool kfunc = !col->batch && col->kprog != BSTR_KEMPTY;
		struct jw w;

		jw_begin(&w, stdout);
		jw_str(&w, "bench", b->name);
		jw_str(&w, "backend", col->backend);
		jw_str(&w, "function", col->function);
		if (!strcmp(col->backend, "lib")) {
			/* The --isa columns call one version directly. */
			jw_str(&w, "isa", col->ops ? col->ops->name : bpfmap_str_ops()->name);
			jw_bool(&w, "dispatched", !col->ops);
		}
		jw_str(&w, "table", c->table);
		jw_str(&w, "kfunc", bstr_kfunc[c->kind]);
		jw_str(&w, "scenario", c->scenario);
		jw_u64(&w, "bytes", c->bytes);
		if (c->pos >= 0)
			jw_u64(&w, "position", (uint64_t)c->pos);
		jw_u64(&w, "producers", 1);
		if (col->ok) {
			/* The kfunc's figure is net of the test run's own cost. */
			jw_num(&w, "ns_per_op", kfunc ? fig->net : col->median);
			jw_num(&w, "ns_best", kfunc ? col->best - fig->empty : col->best);
			if (kfunc) {
				jw_num(&w, "ns_raw", col->median);
				jw_num(&w, "ns_overhead", fig->empty);
			}
			jw_str(&w, "stat", "median");
			jw_u64(&w, "batches", (uint64_t)col->nv);
			jw_u64(&w, "calls_per_batch", col->n);
			if (!strcmp(col->backend, "lib") && !col->isa) {
				jw_num(&w, "ratio_glibc", fig->r_glibc);
				jw_str(&w, "glibc_function",
				       fig->glibc_name[0] ? fig->glibc_name : NULL);
				jw_num(&w, "ratio_kernel_net", fig->r_kernel);
			}
		} else {
			jw_str(&w, "error", col->error);
		}
		jw_end(&w);
	}
}

/* ---- the targets ---- */

static void missed(struct targets *t, const struct bstr_case *c, const char *what, double v)
{
	size_t n = strlen(t->missed);

	if (n < sizeof(t->missed))
		snprintf(t->missed + n, sizeof(t->missed) - n, "%s%s %s %s %.2fx",
			 n ? "; " : "", c->table, c->scenario, what, v);
	t->nmissed++;
}

void print_targets(FILE *f, struct targets *t, const struct bstr_case *cases, int ncases,
		   bool have_kernel, bool have_glibc)
{
	fprintf(f, "Targets: bpfmap/glibc <= 1.25x everywhere (glibc: its faster function); "
		   "kernel-net/bpfmap >= 20x at 2048 B and for the HTTP Host search\n");
	fprintf(f, "  %-12s %8s %8s %8s %13s   %s\n", "bpfmap/glibc", "first", "middle", "late",
		"absent/equal", "kernel-net/bpfmap");
	for (int i = 0; i < ncases;) {
		const char *table = cases[i].table;
		char buf[32], kbuf[96] = "";

		if (cases[i].worst) { /* no target: measured for the record */
			i++;
			continue;
		}

		fprintf(f, "  %-12s", table);
		if (!strcmp(table, "http-host"))
			fprintf(f, " %8s %8s", "", "");
		for (; i < ncases && !strcmp(cases[i].table, table); i++) {
			const struct bstr_case *c = &cases[i];
			bool kernel_row = c->bytes == 2048 || !strcmp(table, "http-host");

			fmt_ratio(buf, sizeof(buf), t->r_glibc[i]);
			fprintf(f, " %*s", c->pos < 0 ? 13 : 8, buf);
			if (have_glibc && !(t->r_glibc[i] <= 1.25))
				missed(t, c, "bpfmap/glibc", t->r_glibc[i]);
			if (kernel_row) {
				size_t n = strlen(kbuf);

				fmt_ratio(buf, sizeof(buf), t->r_kernel[i]);
				snprintf(kbuf + n, sizeof(kbuf) - n, "%s%s %s", n ? ", " : "",
					 c->scenario, buf);
				if (have_kernel && !(t->r_kernel[i] >= 20))
					missed(t, c, "kernel-net/bpfmap", t->r_kernel[i]);
			}
		}
		fprintf(f, "   %s\n", kbuf);
	}
	if (!have_kernel || !have_glibc)
		fprintf(f, "  (not all columns ran: targets checked where they did)\n");
	if (t->nmissed)
		fprintf(f, "  missed (%zu): %s\n", t->nmissed, t->missed);
	else
		fprintf(f, "  all met\n");
}

/* ---- the --isa table ---- */

void print_isa(FILE *f, const struct bstr_case *cases, int ncases,
	       double isa_ns[][BSTR_MAX_COLS], const struct str_ops *const *isa, const double *lib,
	       const double *glibc)
{
	char buf[32];

	fprintf(f, "bpfmap by instruction set, ns per call (bpfmap: the dispatched %s; glibc: "
		   "its faster function):\n", bpfmap_str_ops()->name);
	fprintf(f, "  %-22s", "");
	for (int i = 0; isa[i]; i++)
		fprintf(f, " %*s", W, isa[i]->name);
	fprintf(f, " %*s %*s\n", W, "bpfmap", W, "glibc");
	for (int r = 0; r < ncases; r++) {
		char label[40];

		snprintf(label, sizeof(label), "%s %s", cases[r].table, cases[r].scenario);
		fprintf(f, "  %-22s", label);
		for (int i = 0; isa[i]; i++) {
			fmt_ns(buf, sizeof(buf), isa_ns[r][i]);
			fprintf(f, " %*s", W, buf);
		}
		fmt_ns(buf, sizeof(buf), lib[r]);
		fprintf(f, " %*s", W, buf);
		fmt_ns(buf, sizeof(buf), glibc[r]);
		fprintf(f, " %*s\n", W, buf);
	}
	fputc('\n', f);
}
