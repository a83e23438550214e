// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report: the seeds' tables for bpfmap and for the running kernel, side by
 * side -- lookups over key sizes x small/medium/large maps (flags 0x40, as the
 * seeds), full update and overwrite, bytes per element -- each cell run on
 * bpfmap then on the kernel right after, so drift on a shared machine hits
 * both alike.
 *
 * Quick (default): -w 0.2 -d 0.5 per cell and timed runs of about 256K
 * lookups instead of the seeds' 8M (the per-lookup figure does not depend on
 * the run length; short runs let a 0.5 s cell finish several).  --full: the
 * whole grid (adds key sizes 1, 10, 128), the seeds' nr_loops, -w 1 -d 3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpfmap.h>

#include "json.h"
#include "kernel_backend.h"
#include "output.h"
#include "report.h"
#include "table.h"

struct preset {
	const char *name;
	uint32_t max_entries, nr_entries, nr_loops;
};

/* The u32/u64 seed's workloads. */
static const struct preset presets[] = {
	{ "small", 512, 256, 8388608 },
	{ "medium", 10000, 5000, 8000000 },
	{ "large", 100000, 50000, 8000000 },
};

static const uint32_t quick_keys[] = { 4, 8, 16, 32, 64, 256, 1024 };
static const uint32_t full_keys[] = { 1, 4, 8, 10, 16, 32, 64, 128, 256, 1024 };

#define QUICK_RUN_LOOKUPS 262144
#define MEM_ENTRIES 1000000
#define REPORT_FLAGS BPFMAP_F_ZERO_SEED

#define MAX_FAILURES 128

/* A cell that did not run, for the footnotes. */
struct failure {
	char what[48];
	const char *backend;
	char error[256];
};

struct report {
	struct bench_env *env; /* the user's flags (out, json, backends) */
	struct bench_env cenv; /* what each cell runs with */
	int cell, cells;
	char kernel_note[160]; /* how the kernel side ran, from its first cell */
	struct failure failures[MAX_FAILURES];
	int nfail;
};

static void failed(struct report *rp, const char *what, const char *backend, const char *error)
{
	struct failure *f;

	if (rp->nfail == MAX_FAILURES)
		return;
	f = &rp->failures[rp->nfail++];
	snprintf(f->what, sizeof(f->what), "%s", what);
	f->backend = backend;
	snprintf(f->error, sizeof(f->error), "%s", error);
}

static void progress(struct report *rp, const char *what, const char *backend)
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

/* Runs one cell on one backend; NAN when it did not run. */
static double run_one(struct report *rp, const char *bench, const char *what,
		      const struct cell_ops *ops, const struct bench_args *a, double *mem)
{
	struct cell_result r;

	progress(rp, what, ops->backend);
	cell_run(ops, a, &rp->cenv, what, &r);
	json_cell(rp->env, bench, ops->backend, a, &r);
	if (r.ok && !strcmp(ops->backend, "kernel") && !rp->kernel_note[0])
		snprintf(rp->kernel_note, sizeof(rp->kernel_note), "%s", r.note);
	if (!r.ok)
		failed(rp, what, ops->backend, r.error);
	if (r.errors)
		fprintf(stderr, "\r\033[K%s, %s: %llu operations went wrong\n", what,
			backend_label(ops->backend), (unsigned long long)r.errors);
	if (mem)
		*mem = r.mem_bytes;
	return r.ok ? r.mops : NAN;
}

static bool want(const struct report *rp, enum backend b)
{
	return rp->env->backends & b;
}

/* ---- lookups ---- */

static void report_lookups(struct report *rp, const struct bench_args *user, bool full,
			   struct grid *lib, struct grid *kern, struct grid *ratio)
{
	const uint32_t *keys = full ? full_keys : quick_keys;
	size_t nkeys = full ? sizeof(full_keys) / sizeof(full_keys[0])
			    : sizeof(quick_keys) / sizeof(quick_keys[0]);

	for (size_t p = 0; p < sizeof(presets) / sizeof(presets[0]); p++) {
		for (size_t k = 0; k < nkeys; k++) {
			const struct preset *ps = &presets[p];
			struct bench_args a = { 0 };
			char what[64], col[16], err[160];
			double l = NAN, kr = NAN;

			a.map_type = BPFMAP_TYPE_HASH;
			a.key_size = keys[k];
			a.max_entries = ps->max_entries;
			a.nr_entries = ps->nr_entries;
			a.nr_loops = ps->nr_loops;
			if (!full)
				a.nr_loops = (QUICK_RUN_LOOKUPS / ps->nr_entries) * ps->nr_entries;
			a.map_flags = user->map_flags_set ? user->map_flags : REPORT_FLAGS;
			a.full_width_keys = user->full_width_keys;
			if (lookup_args_fill(&a, err, sizeof(err))) {
				fprintf(stderr, "report: %s\n", err);
				continue;
			}
			snprintf(what, sizeof(what), "lookup %s k=%u", ps->name, keys[k]);
			snprintf(col, sizeof(col), "%u", keys[k]);
			if (want(rp, BACKEND_LIB))
				l = run_one(rp, "bpf-hashmap-lookup", what, &lookup_lib_ops, &a,
					    NULL);
			if (want(rp, BACKEND_KERNEL)) {
				struct bench_args ka = a;

				ka.full_width_keys = false;
				kr = run_one(rp, "bpf-hashmap-lookup", what, &lookup_kernel_ops,
					     &ka, NULL);
			}
			grid_set(lib, ps->name, col, l);
			grid_set(kern, ps->name, col, kr);
			grid_set(ratio, ps->name, col, l / kr);
		}
	}
}

/* ---- full update, overwrite ---- */

struct pair {
	double lib, kern;
};

static struct pair report_update(struct report *rp, bool overwrite)
{
	const char *bench = overwrite ? "bpf-hashmap-overwrite" : "bpf-hashmap-full-update";
	struct bench_args a = { 0 };
	struct pair p = { NAN, NAN };
	char err[160];

	update_args_fill(&a, overwrite, err, sizeof(err));
	if (want(rp, BACKEND_LIB))
		p.lib = run_one(rp, bench, overwrite ? "overwrite" : "full update",
				&update_lib_ops, &a, NULL);
	if (want(rp, BACKEND_KERNEL))
		p.kern = run_one(rp, bench, overwrite ? "overwrite" : "full update",
				 &update_kernel_ops, &a, NULL);
	return p;
}

/* ---- bytes per element ---- */

static void mem_json(struct report *rp, const char *backend, double bpe, const char *error)
{
	struct bench_args a = { .map_type = BPFMAP_TYPE_HASH, .key_size = 8, .value_size = 8,
				.max_entries = MEM_ENTRIES, .nr_entries = MEM_ENTRIES };
	struct cell_result r = { 0 };

	r.producers = 1;
	r.ok = error == NULL;
	r.bytes_per_elem = bpe;
	r.mem_bytes = bpe * MEM_ENTRIES;
	r.mem_peak_bytes = NAN;
	if (error)
		snprintf(r.error, sizeof(r.error), "%s", error);
	/* No rate: a memory cell reports bytes only. */
	if (rp->env->json) {
		struct jw w;

		jw_begin(&w, stdout);
		jw_str(&w, "bench", "mem-per-elem");
		jw_str(&w, "backend", backend);
		jw_str(&w, "map_type", map_type_name(a.map_type));
		jw_u64(&w, "key_size", a.key_size);
		jw_u64(&w, "value_size", a.value_size);
		jw_u64(&w, "max_entries", a.max_entries);
		jw_u64(&w, "nr_entries", a.nr_entries);
		jw_u64(&w, "map_flags", 0);
		jw_u64(&w, "producers", 1);
		jw_num(&w, "bytes_per_elem", r.bytes_per_elem);
		jw_num(&w, "mem_bytes", r.mem_bytes);
		if (error)
			jw_str(&w, "error", error);
		jw_end(&w);
	}
}

static double mem_lib(struct report *rp)
{
	struct bpfmap *m;
	double bpe = NAN;
	char err[160] = "";

	progress(rp, "bytes/elem", "lib");
	m = bpfmap_create(BPFMAP_TYPE_HASH, "mem", 8, 8, MEM_ENTRIES, NULL);
	if (!m) {
		snprintf(err, sizeof(err), "bpfmap_create: %s", strerror(errno));
	} else {
		for (uint64_t k = 0; k < MEM_ENTRIES; k++) {
			int ret = bpfmap_update_elem(m, &k, &k, BPFMAP_ANY);

			if (ret) {
				snprintf(err, sizeof(err), "filling: %s", strerror(-ret));
				break;
			}
		}
		if (!err[0])
			bpe = (double)bpfmap_mem_usage(m) / MEM_ENTRIES;
		bpfmap_free(m);
	}
	if (err[0])
		failed(rp, "bytes/elem", "lib", err);
	mem_json(rp, "lib", bpe, err[0] ? err : NULL);
	return bpe;
}

static double mem_kernel(struct report *rp)
{
	const uint32_t chunk = 65536;
	uint64_t *keys = malloc(chunk * sizeof(*keys));
	double bpe = NAN;
	char err[160] = "";
	int fd;

	progress(rp, "bytes/elem", "kernel");
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bench_mem", 8, 8, MEM_ENTRIES, NULL);
	if (fd < 0 || !keys) {
		snprintf(err, sizeof(err), "bpf_map_create: %s", strerror(errno));
		goto out;
	}
	/* Fill it (batches: a million syscalls would take seconds). */
	for (uint32_t base = 0; base < MEM_ENTRIES; base += chunk) {
		uint32_t n = MEM_ENTRIES - base < chunk ? MEM_ENTRIES - base : chunk;

		for (uint32_t i = 0; i < n; i++)
			keys[i] = base + i;
		if (bpf_map_update_batch(fd, keys, keys, &n, NULL)) {
			snprintf(err, sizeof(err), "filling: %s", strerror(errno));
			goto out;
		}
	}
	{
		long long m = kbpf_memlock(fd);

		if (m < 0)
			snprintf(err, sizeof(err), "no memlock in /proc/self/fdinfo");
		else
			bpe = (double)m / MEM_ENTRIES;
	}
out:
	if (err[0])
		failed(rp, "bytes/elem", "kernel", err);
	if (fd >= 0)
		close(fd);
	free(keys);
	mem_json(rp, "kernel", bpe, err[0] ? err : NULL);
	return bpe;
}

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

/* ---- printing ---- */

static void print_fig(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fprintf(f, "%10s", "-");
}

static void print_pair_row(FILE *f, const char *label, struct pair p, const char *fmt)
{
	fprintf(f, "    %-12s", label);
	print_fig(f, p.lib, fmt);
	print_fig(f, p.kern, fmt);
	print_fig(f, p.lib / p.kern, "%9.2fx");
	fputc('\n', f);
}

/* The cells that did not run, grouped by backend and reason. */
static void print_failures(FILE *f, struct report *rp)
{
	bool done[MAX_FAILURES] = { false };

	if (!rp->nfail)
		return;
	fprintf(f, "\nNot measured:\n");
	for (int i = 0; i < rp->nfail; i++) {
		int n = 0;

		if (done[i])
			continue;
		for (int j = i; j < rp->nfail; j++)
			if (!done[j] && rp->failures[j].backend == rp->failures[i].backend &&
			    !strcmp(rp->failures[j].error, rp->failures[i].error))
				n++;
		fprintf(f, "  %s, ", backend_label(rp->failures[i].backend));
		if (n > 3)
			fprintf(f, "%d cells", n);
		for (int j = i, shown = 0; j < rp->nfail; j++) {
			if (done[j] || rp->failures[j].backend != rp->failures[i].backend ||
			    strcmp(rp->failures[j].error, rp->failures[i].error))
				continue;
			done[j] = true;
			if (n <= 3)
				fprintf(f, "%s%s", shown++ ? ", " : "", rp->failures[j].what);
		}
		fprintf(f, ": %s\n", rp->failures[i].error);
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

/* Counts the cells of @ratio that meet the BRIEF's lookup target. */
static void lookup_targets(const struct grid *ratio, int *met, int *total)
{
	*met = *total = 0;
	for (int r = 0; r < ratio->nrows; r++)
		for (int c = 0; c < ratio->ncols; c++) {
			double v = ratio->v[r][c];
			double goal = atoi(ratio->col[c]) <= 8 ? 5.0 : 3.0;

			if (!isfinite(v))
				continue;
			(*total)++;
			*met += v >= goal;
		}
}

int report_run(struct bench_env *env, const struct bench_args *a, bool full)
{
	size_t nkeys = full ? sizeof(full_keys) / sizeof(full_keys[0])
			    : sizeof(quick_keys) / sizeof(quick_keys[0]);
	int nb = !!(env->backends & BACKEND_LIB) + !!(env->backends & BACKEND_KERNEL);
	struct report rp = { .env = env };
	struct grid lib, kern, ratio;
	struct pair upd, ovw, mem = { NAN, NAN };
	uint64_t t0 = now_ns();
	double load0 = loadavg(), load1;
	struct utsname u;
	FILE *f = env->out;
	int met, total;

	rp.cenv = *env;
	rp.cenv.progress = false;
	rp.cenv.verbose = false;
	if (!env->warmup_set)
		rp.cenv.warmup_s = full ? 1.0 : 0.2;
	if (!env->duration_set)
		rp.cenv.duration_s = full ? 3.0 : 0.5;
	/* One producer pinned, as the seeds' runs (unless -p/--prod-affinity). */
	if (!env->nr_prod_cpus)
		rp.cenv.affinity = true;
	rp.cells = nb * ((int)(sizeof(presets) / sizeof(presets[0]) * nkeys) + 3);

	grid_init(&lib, "bpfmap:", "key size (bytes)");
	grid_init(&kern, "kernel:", "key size (bytes)");
	grid_init(&ratio, "bpfmap / kernel:", "key size (bytes)");
	report_lookups(&rp, a, full, &lib, &kern, &ratio);
	upd = report_update(&rp, false);
	ovw = report_update(&rp, true);
	if (want(&rp, BACKEND_LIB))
		mem.lib = mem_lib(&rp);
	if (want(&rp, BACKEND_KERNEL))
		mem.kern = mem_kernel(&rp);
	if (env->progress)
		fprintf(stderr, "\r\033[K");
	load1 = loadavg();

	uname(&u);
	fprintf(f, "\nbpfmap-bench report (%s: -w %g -d %g per cell, %s)\n",
		full ? "full" : "quick", rp.cenv.warmup_s, rp.cenv.duration_s,
		full ? "the seeds' nr_loops"
		     : "timed runs of ~256K lookups; --full for the whole grid and the seeds' nr_loops");
	fprintf(f, "%s %s, %ld CPUs online; %d producer%s, pinned\n", u.sysname, u.release,
		sysconf(_SC_NPROCESSORS_ONLN), rp.cenv.producers,
		rp.cenv.producers == 1 ? "" : "s");
	/* The report itself keeps about one CPU busy; more means company. */
	if (load0 > 1.5 || load1 > 1.5)
		fprintf(f, "warning: load average %.1f before, %.1f after: other work shared "
			   "the CPUs, figures are noisy (bpfmap's runs are timed in thread CPU "
			   "time, the kernel's are not preempted)\n",
			load0, load1);
	if (want(&rp, BACKEND_KERNEL) && rp.kernel_note[0])
		fprintf(f, "kernel: its own BPF maps, %s; its figures include bpf_loop's "
			   "overhead and the key patch, as the selftests'\n",
			rp.kernel_note);
	fprintf(f, "\nLookup: HASH, value_size 8, map_flags 0x%x, %s key stores; M lookups/s\n"
		   "(small 512/256, medium 10000/5000, large 100000/50000 max/nr entries)\n\n",
		a->map_flags_set ? a->map_flags : REPORT_FLAGS,
		a->full_width_keys ? "full-width (bpfmap side)" : "the selftest's 4-byte");
	if (want(&rp, BACKEND_LIB))
		grid_print(f, &lib, GRID_VALUE);
	if (want(&rp, BACKEND_KERNEL) && grid_any(&kern))
		grid_print(f, &kern, GRID_VALUE);
	else if (want(&rp, BACKEND_KERNEL))
		fprintf(f, "  kernel: not measured (see below)\n\n");
	if (nb == 2 && grid_any(&ratio))
		grid_print(f, &ratio, GRID_RATIO);

	fprintf(f, "Updates: u32 -> u64 HASH, 1000 entries, full; M updates/s per producer\n");
	fprintf(f, "    %-12s%10s%10s%10s\n", "", "bpfmap", "kernel", "ratio");
	print_pair_row(f, "full update", upd, "%10.2f");
	print_pair_row(f, "overwrite", ovw, "%10.2f");
	fprintf(f, "\nMemory: HASH, 8 B key + 8 B value, %d entries, preallocated, full; "
		   "bytes per element\n", MEM_ENTRIES);
	fprintf(f, "    %-12s%10s%10s%10s\n", "", "bpfmap", "kernel", "ratio");
	print_pair_row(f, "bytes/elem", mem, "%10.1f");

	if (nb == 2 && grid_any(&ratio)) {
		lookup_targets(&ratio, &met, &total);
		fprintf(f, "\nTargets (BRIEF.md): lookups >= 5x the kernel for 4/8-byte keys, "
			   ">= 3x above: %d of %d cells;\n"
			   "  full update %s, overwrite %s (>= 5x); memory %s (<= 24 B/elem)\n",
			met, total,
			isfinite(upd.lib / upd.kern) ? (upd.lib / upd.kern >= 5 ? "met" : "not met")
						     : "-",
			isfinite(ovw.lib / ovw.kern) ? (ovw.lib / ovw.kern >= 5 ? "met" : "not met")
						     : "-",
			isfinite(mem.lib) ? (mem.lib <= 24 ? "met" : "not met") : "-");
	}
	print_failures(f, &rp);
	fprintf(f, "\nwall time %.0f s\n", (double)(now_ns() - t0) / 1e9);
	fflush(f);
	return 0;
}
