// SPDX-License-Identifier: BSD-2-Clause
/*
 * str-kfuncs: the string seed's four tables and the HTTP Host search (inputs
 * in str_cases.c), ns per call, for
 *   bpfmap    the public bpfmap_str*() function (dispatched at load time)
 *   glibc     the C library's closest function(s): memchr and strchr for
 *             strnchr, strcmp, strcspn, strstr and memmem for strnstr
 *   bytewise  a plain byte-at-a-time loop with the kernel's semantics
 *   kernel    the running kernel's kfunc, from a tc program run with
 *             BPF_PROG_TEST_RUN repeat; "empty" is an empty tc program run
 *             the same way (the test run's own cost), net = kernel - empty
 *   --isa     each of bpfmap's versions (SWAR, SSE2, AVX2, AVX-512) directly
 *
 * How a row is measured (bench_str_report.c shows it): every column first
 * runs once and must give the kernel's answer.  Then each column's batch
 * size is set so a batch takes about 200 us, and the columns take turns, one
 * batch each per round, for -w (dropped) and then -d seconds; a figure is
 * the median over the rounds (the best is in the JSON).  Taking turns puts
 * the load of a shared machine on every column alike.  A user-space batch is
 * timed with the thread's CPU clock (time other tasks take is not counted,
 * as the kernel's test run does not count it either: it stops its clock
 * while it reschedules).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#define STR_TARGET
#include "strings/str_internal.h"

#include "bench.h"
#include "bench_str.h"

#define BATCH_TARGET_NS 200000.0
#define MIN_ROUNDS 3
#define MAX_ROUNDS 8192

/* ---- the batches: the arguments go through an empty asm each call, and
 * the result is kept, so no call is hoisted out of the loop or dropped ---- */

#define OPAQUE(x) __asm__ volatile("" : "+r"(x))
#define KEEP(x) __asm__ volatile("" : : "r"(x))

#define BATCH(NAME, TYPE, CALL, RESULT)                                               \
	static int NAME(const struct bcol *col, const struct bstr_case *k, uint32_t n) \
	{                                                                              \
		const struct str_ops *ops = col->ops;                                  \
		TYPE r = 0;                                                            \
		(void)ops;                                                             \
		for (uint32_t i = 0; i < n; i++) {                                     \
			const char *a = k->a, *b = k->b;                               \
			size_t len = k->n;                                             \
			int ch = k->c;                                                 \
			OPAQUE(a);                                                     \
			OPAQUE(b);                                                     \
			OPAQUE(len);                                                   \
			OPAQUE(ch);                                                    \
			(void)b;                                                       \
			(void)len;                                                     \
			(void)ch;                                                      \
			r = (CALL);                                                    \
			KEEP(r);                                                       \
		}                                                                      \
		const char *a = k->a;                                                  \
		(void)a;                                                               \
		return (RESULT);                                                       \
	}

#define PTR_INDEX (r ? (int)(r - a) : -ENOENT)

BATCH(b_lib_strnchr, int, bpfmap_strnchr(a, len, (char)ch), r)
BATCH(b_isa_strnchr, int, ops->strnchr(a, len, (char)ch), r)
BATCH(b_memchr, const char *, memchr(a, ch, len), PTR_INDEX)
BATCH(b_strchr, const char *, strchr(a, ch), PTR_INDEX)
BATCH(b_bw_strnchr, int, bytewise_strnchr(a, len, (char)ch), r)

BATCH(b_lib_strcmp, int, bpfmap_strcmp(a, b), r)
BATCH(b_isa_strcmp, int, ops->strcmp(a, b), r)
BATCH(b_strcmp, int, strcmp(a, b), (r > 0) - (r < 0))
BATCH(b_bw_strcmp, int, bytewise_strcmp(a, b), r)

BATCH(b_lib_strcspn, int, bpfmap_strcspn(a, b), r)
BATCH(b_isa_strcspn, int, ops->strcspn(a, b), r)
BATCH(b_strcspn, size_t, strcspn(a, b), (int)r)
BATCH(b_bw_strcspn, int, bytewise_strcspn(a, b), r)

BATCH(b_lib_strnstr, int, bpfmap_strnstr(a, b, len), r)
BATCH(b_isa_strnstr, int, ops->strnstr(a, b, len), r)
BATCH(b_strstr, const char *, strstr(a, b), PTR_INDEX)
BATCH(b_memmem, const char *, memmem(a, len, b, strlen(b)), PTR_INDEX)
BATCH(b_bw_strnstr, int, bytewise_strnstr(a, b, len), r)

/* The columns of each kind, user space; the --isa and kernel ones follow. */
struct kind_desc {
	const char *call; /* for the table's heading */
	struct bcol cols[4];
	batch_fn isa_batch;
};

/* A column: heading, JSON backend and function, the batch; designated, as
 * clang's -Wmissing-field-initializers asks of a partial initializer. */
#define BCOL(n, be, fname, fn) { .name = n, .backend = be, .function = fname, .batch = fn }
#define BCOL_GLIBC(fname, fn) \
	{ .name = fname, .backend = "glibc", .function = fname, .batch = fn, .glibc = true }

static const struct kind_desc kinds[BSTR_NKINDS] = {
	[BSTR_SCAN] = { "strnchr(s, Bytes, ':')",
			{ BCOL("bpfmap", "lib", "bpfmap_strnchr", b_lib_strnchr),
			  BCOL_GLIBC("memchr", b_memchr),
			  BCOL_GLIBC("strchr", b_strchr),
			  BCOL("bytewise", "bytewise", "bytewise_strnchr", b_bw_strnchr) },
			b_isa_strnchr },
	[BSTR_CMP] = { "strcmp(s1, s2), s2 differing from s1 at the position",
		       { BCOL("bpfmap", "lib", "bpfmap_strcmp", b_lib_strcmp),
			 BCOL_GLIBC("strcmp", b_strcmp),
			 BCOL("bytewise", "bytewise", "bytewise_strcmp", b_bw_strcmp) },
		       b_isa_strcmp },
	[BSTR_SPAN] = { "strcspn(s, \":;, \\t\\r\\n\"), ':' at the position",
			{ BCOL("bpfmap", "lib", "bpfmap_strcspn", b_lib_strcspn),
			  BCOL_GLIBC("strcspn", b_strcspn),
			  BCOL("bytewise", "bytewise", "bytewise_strcspn", b_bw_strcspn) },
			b_isa_strcspn },
	[BSTR_SUBSTR] = { "strnstr(s, \"Host: benchmark.example.com\", Bytes)",
			  { BCOL("bpfmap", "lib", "bpfmap_strnstr", b_lib_strnstr),
			    BCOL_GLIBC("strstr", b_strstr),
			    BCOL_GLIBC("memmem", b_memmem),
			    BCOL("bytewise", "bytewise", "bytewise_strnstr", b_bw_strnstr) },
			  b_isa_strnstr },
};

static const char *const kernel_fn[BSTR_NKINDS] = { "bpf_strnchr", "bpf_strcmp", "bpf_strcspn",
						    "bpf_strnstr" };

/* ---- one row ---- */


static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* One batch of @col: ns per call, or NAN with col->error set. */
static double run_batch(struct row_run *rr, struct bcol *col, const struct bstr_case *c,
			uint32_t n, int *result)
{
	if (col->batch) {
		uint64_t t0 = thread_cpu_ns();

		*result = col->batch(col, c, n);
		return (double)(thread_cpu_ns() - t0) / n;
	}
	double ns;

	if (bstr_kernel_run(rr->kern, col->kprog, n, &ns, result, col->error, sizeof(col->error)))
		return NAN;
	return ns;
}

/* Run once: the answer must be the kernel's.  Then size the batch. */
static void prepare(struct row_run *rr, struct bcol *col, const struct bstr_case *c)
{
	int result;
	double ns;
	uint32_t n = 1;

	col->nv = 0;
	col->median = col->best = NAN;
	if (!col->ok)
		return;
	ns = run_batch(rr, col, c, 1, &result);
	if (isnan(ns)) {
		col->ok = false;
		return;
	}
	if (col->kprog != BSTR_KEMPTY && result != c->expect) {
		snprintf(col->error, sizeof(col->error), "%s returned %d, the kfunc's answer is %d",
			 col->function, result, c->expect);
		col->ok = false;
		return;
	}
	/* Size the batch to the target: scale by what the last batch took,
	 * until one lands within a factor of two (a preempted or cold batch
	 * only makes the next guess wrong, and the one after corrects it). */
	for (int tries = 0; tries < 24; tries++) {
		double total;

		ns = run_batch(rr, col, c, n, &result);
		if (isnan(ns)) {
			col->ok = false;
			return;
		}
		total = ns * n;
		if ((total >= BATCH_TARGET_NS / 2 && total <= BATCH_TARGET_NS * 2) ||
		    (total > BATCH_TARGET_NS && n == 1) || n >= (1u << 24))
			break;
		n = (uint32_t)fmin(fmax(n * BATCH_TARGET_NS / fmax(total, 1), 1), 1u << 24);
	}
	col->n = n;
}

static void measure_row(struct row_run *rr, const struct bstr_case *c)
{
	const struct bench_env *env = rr->env;
	uint64_t t_warm, t_end;
	int rounds = 0;

	if (rr->kern && !c->worst)
		bstr_kernel_place(rr->kern, c);
	for (int i = 0; i < rr->ncols; i++) {
		struct bcol *col = &rr->cols[i];

		col->error[0] = '\0';
		col->ok = col->batch || rr->kern;
		if (!col->ok)
			snprintf(col->error, sizeof(col->error), "%s", rr->kern_why);
		prepare(rr, col, c);
	}
	t_warm = now_ns() + (uint64_t)(env->warmup_s * 1e9);
	t_end = t_warm + (uint64_t)(env->duration_s * 1e9);
	for (bool warm = env->warmup_s > 0;; rounds++) {
		uint64_t t = now_ns();

		if (warm && t >= t_warm) {
			warm = false;
			rounds = 0;
			t_end = t + (uint64_t)(env->duration_s * 1e9);
		}
		if (!warm && ((t >= t_end && rounds >= MIN_ROUNDS) || rounds == MAX_ROUNDS))
			break;
		/* Start each round at another column: none always runs first. */
		for (int j = 0; j < rr->ncols; j++) {
			struct bcol *col = &rr->cols[(j + rounds) % rr->ncols];
			int result;
			double ns;

			if (!col->ok)
				continue;
			ns = run_batch(rr, col, c, col->n, &result);
			if (isnan(ns)) {
				col->ok = false;
				continue;
			}
			if (!warm)
				col->v[col->nv++] = ns;
		}
	}
	for (int i = 0; i < rr->ncols; i++) {
		struct bcol *col = &rr->cols[i];

		if (!col->ok || !col->nv) {
			col->ok = false;
			continue;
		}
		qsort(col->v, (size_t)col->nv, sizeof(double), cmp_double);
		col->best = col->v[0];
		col->median = col->nv % 2 ? col->v[col->nv / 2]
					  : (col->v[col->nv / 2 - 1] + col->v[col->nv / 2]) / 2;
	}
}

/* ---- the benchmark ---- */

/* The columns of @c's kind: user space (unless --backend kernel), the --isa
 * versions, the kernel's (unless --backend lib, or for a worst case: its
 * strings do not fit the program's buffer). */
static int setup_cols(struct row_run *rr, const struct bstr_case *c,
		      const struct str_ops *const *isa)
{
	const enum bstr_kind kind = c->kind;
	const struct kind_desc *d = &kinds[kind];
	int n = 0;

	if (rr->env->backends & BACKEND_LIB) {
		for (int i = 0; i < 4 && d->cols[i].name; i++)
			rr->cols[n++] = d->cols[i];
		for (int i = 0; isa && isa[i]; i++)
			rr->cols[n++] = (struct bcol){ .name = isa[i]->name, .backend = "lib",
						       .function = d->cols[0].function,
						       .batch = d->isa_batch,
						       .ops = isa[i], .isa = true };
	}
	if ((rr->env->backends & BACKEND_KERNEL) && !c->worst) {
		rr->cols[n++] = (struct bcol){ .name = "kernel", .backend = "kernel",
					       .function = kernel_fn[kind], .kprog = (int)kind };
		rr->cols[n++] = (struct bcol){ .name = "empty", .backend = "kernel",
					       .function = "empty", .kprog = BSTR_KEMPTY };
	}
	rr->ncols = n;
	return n;
}

/* The --isa selection: NULL for none; otherwise a NULL-terminated list. */
static int choose_isa(const char *want, const struct str_ops *out[8])
{
	const struct str_ops *const *all = bpfmap_str_ops_all();
	int n = 0;

	out[0] = NULL;
	if (!want[0])
		return 0;
	for (int i = 0; all[i] && n < 7; i++)
		if (!strcmp(want, "all") || !strcmp(want, all[i]->name))
			out[n++] = all[i];
	out[n] = NULL;
	if (n)
		return 0;
	fprintf(stderr, "str-kfuncs: --isa: 'all' or one of this CPU's:");
	for (int i = 0; all[i]; i++)
		fprintf(stderr, " %s", all[i]->name);
	fprintf(stderr, "\n");
	return -1;
}

static void pin_cpu(const struct bench_env *env)
{
	int cpu = env->nr_prod_cpus ? env->prod_cpus[0] : 0, err;

	if (!env->affinity && !env->nr_prod_cpus)
		return;
	err = bench_pin_self(cpu);
	if (err)
		fprintf(stderr, "str-kfuncs: cannot pin to CPU %d: %s\n", cpu, strerror(-err));
}

static int str_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	const struct str_ops *isa[8];
	const struct bstr_case *cases;
	struct row_run rr = { .env = env };
	struct targets tg;
	static double isa_ns[BSTR_MAX_CASES][BSTR_MAX_COLS];
	double lib_ns[BSTR_MAX_CASES], glibc_ns[BSTR_MAX_CASES];
	char why[256] = "";
	int ncases = bstr_cases(&cases), status = 0, isa_cols = 0;
	bool have_kernel = false, have_glibc = false;
	FILE *f = env->out;

	if (choose_isa(a->isa, isa))
		return 2;
	for (int i = 0; isa[i]; i++)
		isa_cols = i + 1;
	memset(&tg, 0, sizeof(tg));
	pin_cpu(env);
	if (env->backends & BACKEND_KERNEL) {
		rr.kern = bstr_kernel_open(why, sizeof(why));
		if (!rr.kern)
			rr.kern_why = why;
	}
	double *store = calloc((size_t)BSTR_MAX_COLS * MAX_ROUNDS, sizeof(double));

	if (!store) {
		bstr_kernel_close(rr.kern);
		fprintf(stderr, "str-kfuncs: out of memory\n");
		return 1;
	}
	fprintf(f, "%s: ns per call, lower is better.  Each figure is the median of interleaved "
		   "batches (~%.0f us each; the columns take turns, a batch each per round) over "
		   "-w %g (dropped) + -d %g s per row; bpfmap dispatches to %s%s.\n",
		b->name, BATCH_TARGET_NS / 1e3, env->warmup_s, env->duration_s,
		bpfmap_str_ops()->name, env->producers > 1 ? "; one thread (-p ignored)" : "");
	fprintf(f, "  user space: thread CPU time around each batch.  kernel: a tc program calling "
		   "the kfunc once, BPF_PROG_TEST_RUN with a repeat count (the kernel's mean per "
		   "run); empty: an empty tc program run the same way (the test run's own cost); "
		   "kernel-net = kernel - empty.\n");
	if (rr.kern_why)
		fprintf(f, "  kernel: not measured: %s\n", rr.kern_why);
	fputc('\n', f);

	for (int r = 0; r < ncases;) {
		const struct bstr_case *c = &cases[r];
		const char *table = c->table;
		bool http = !strcmp(table, "http-host");

		setup_cols(&rr, c, isa);
		for (int i = 0; i < rr.ncols; i++)
			rr.cols[i].v = store + (size_t)i * MAX_ROUNDS;
		if (c->worst)
			fprintf(f, "substring worst cases (strnstr(s, needle, %d), user space only): "
				   "needle a^%d b (long) or a^%d b (short), s = %d bytes of 'a'\n",
				BSTR_MAX, BSTR_WORST_LONG - 1, BSTR_WORST_SHORT - 1, BSTR_MAX);
		else if (http)
			fprintf(f, "HTTP Host search (strnstr, needle \"%s\"): a GET request, Host "
				   "last or absent, %zu bytes into a packet (%zu past a 64-byte "
				   "boundary)\n", bstr_http_needle, bstr_http_offset,
				bstr_http_offset % 64);
		else
			fprintf(f, "%s (%s): %s\n", table, bstr_kfunc[c->kind], kinds[c->kind].call);
		print_head(f, &rr);
		for (; r < ncases && !strcmp(cases[r].table, table); r++) {
			struct row_fig fig;

			c = &cases[r];
			if (env->progress) {
				fprintf(stderr, "\r\033[K[%d/%d] %s %s", r + 1, ncases, c->table,
					c->scenario);
				fflush(stderr);
			}
			setup_cols(&rr, c, isa);
			for (int i = 0; i < rr.ncols; i++)
				rr.cols[i].v = store + (size_t)i * MAX_ROUNDS;
			measure_row(&rr, c);
			if (env->progress)
				fprintf(stderr, "\r\033[K");
			fig = row_figures(&rr, c->kind);
			print_row(f, &rr, c, &fig);
			fflush(f);
			json_row(env, b, &rr, c, &fig);
			tg.r_glibc[r] = fig.r_glibc;
			tg.r_kernel[r] = fig.r_kernel;
			have_kernel |= isfinite(fig.r_kernel);
			have_glibc |= isfinite(fig.r_glibc);
			lib_ns[r] = fig.lib;
			glibc_ns[r] = fig.glibc;
			for (int i = 0; i < rr.ncols; i++) {
				const struct bcol *col = &rr.cols[i];

				for (int k = 0; col->isa && isa[k]; k++)
					if (col->ops == isa[k])
						isa_ns[r][k] = col_median(col);
				if (col->ok || !col->error[0] || (!col->batch && rr.kern_why))
					continue;
				fprintf(f, "    %s: %s\n", col->name, col->error);
				/* A wrong answer from bpfmap or the kernel is a bug. */
				if (!col->glibc)
					status = 1;
			}
		}
		fputc('\n', f);
	}
	if (env->backends & BACKEND_LIB)
		print_targets(f, &tg, cases, ncases, have_kernel, have_glibc);
	if (isa_cols) {
		fputc('\n', f);
		print_isa(f, cases, ncases, isa_ns, isa, lib_ns, glibc_ns);
	}
	free(store);
	bstr_kernel_close(rr.kern);
	return status;
}

const struct bench bench_str_kfuncs = {
	.name = "str-kfuncs",
	.summary = "string kfuncs (scan/comparison/span/substring x first/middle/late/absent, "
		   "HTTP Host): bpfmap, glibc, bytewise, kernel; ns/call",
	.run = str_run,
	/* 20 rows, each -w + -d: about 35 s. */
	.default_warmup_s = 0.1,
	.default_duration_s = 1.5,
};
