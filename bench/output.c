// SPDX-License-Identifier: BSD-2-Clause
/* Result lines, ratios and JSON cells (see output.h). */
#include <math.h>
#include <string.h>

#include <bpfmap.h>

#include "json.h"
#include "output.h"

const char *map_type_name(uint32_t type)
{
	static char buf[16];

	switch (type) {
	case 0: return "none";
	case BPFMAP_TYPE_HASH: return "HASH";
	case BPFMAP_TYPE_PERCPU_HASH: return "PERCPU_HASH";
	case BPFMAP_TYPE_LRU_HASH: return "LRU_HASH";
	case BPFMAP_TYPE_LRU_PERCPU_HASH: return "LRU_PERCPU_HASH";
	case BPFMAP_TYPE_RHASH: return "RHASH";
	default:
		snprintf(buf, sizeof(buf), "%u", type);
		return buf;
	}
}

void describe_map_args(char *buf, size_t len, const struct bench_args *a)
{
	int n = snprintf(buf, len, "%s, key_size %u, value_size %u, max_entries %u",
			 map_type_name(a->map_type), a->key_size, a->value_size, a->max_entries);

	if (a->nr_entries && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", nr_entries %u", a->nr_entries);
	if (a->nr_loops && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", nr_loops %u", a->nr_loops);
	if ((size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", map_flags 0x%x", a->map_flags);
}

const char *backend_label(const char *backend)
{
	return !strcmp(backend, "lib") ? "bpfmap" : backend;
}

bool cell_errors_expected(const char *backend, const struct cell_result *r)
{
	return isfinite(r->writer_mops) && !strcmp(backend, "kernel");
}

static void print_bytes(FILE *f, const char *what, double b)
{
	if (b >= 1 << 20)
		fprintf(f, "%s %.2f MiB", what, b / (1 << 20));
	else
		fprintf(f, "%s %.1f KiB", what, b / 1024);
}

void print_cell(FILE *f, const char *backend, const char *what, const struct cell_result *r)
{
	fprintf(f, "  %-7s %-10s ", backend_label(backend), what);
	if (!r->ok) {
		fprintf(f, "not measured: %s\n", r->error);
		return;
	}
	fprintf(f, "%9.3f ± %.3f M%s/s per producer (%.2f ns/%s, %d sample%s", r->mops,
		r->mops_stddev, r->unit ? " batches" : "", r->mops > 0 ? 1e3 / r->mops : 0.0,
		r->unit ? r->unit : "op", r->samples, r->samples == 1 ? "" : "s");
	if (r->producers > 1 && isfinite(r->mops_total))
		fprintf(f, ", total %.3f M/s", r->mops_total);
	if (isfinite(r->mem_bytes))
		print_bytes(f, ", memory", r->mem_bytes);
	if (isfinite(r->mem_peak_bytes))
		print_bytes(f, ", peak", r->mem_peak_bytes);
	if (isfinite(r->bytes_per_elem))
		fprintf(f, ", %.1f B/elem", r->bytes_per_elem);
	fputc(')', f);
	if (r->errors && cell_errors_expected(backend, r))
		fprintf(f, "  misses: %llu (lookups racing the writer)",
			(unsigned long long)r->errors);
	else if (r->errors)
		fprintf(f, "  ERRORS: %llu", (unsigned long long)r->errors);
	if (r->note[0])
		fprintf(f, "\n  %-7s %-10s [%s]", "", "", r->note);
	fputc('\n', f);
	if (isfinite(r->writer_mops)) {
		fprintf(f, "  %-7s %-10s %9.3f M updates/s (%.2f ns/update, %llu updates", "writer",
			"overwrite", r->writer_mops, r->writer_mops > 0 ? 1e3 / r->writer_mops : 0.0,
			(unsigned long long)r->writer_updates);
		if (r->writer_errors)
			fprintf(f, ", %llu FAILED", (unsigned long long)r->writer_errors);
		fprintf(f, ")\n  %-7s %-10s [%s]\n", "", "", r->writer_note);
	}
}

void json_cell(const struct bench_env *env, const char *bench, const char *backend,
	       const struct bench_args *a, const struct cell_result *r)
{
	struct jw w;

	if (!env->json)
		return;
	jw_begin(&w, stdout);
	jw_str(&w, "bench", bench);
	jw_str(&w, "backend", backend);
	jw_str(&w, "map_type", map_type_name(a->map_type));
	if (a->key_size)
		jw_u64(&w, "key_size", a->key_size);
	if (a->value_size)
		jw_u64(&w, "value_size", a->value_size);
	if (a->max_entries)
		jw_u64(&w, "max_entries", a->max_entries);
	if (a->nr_entries)
		jw_u64(&w, "nr_entries", a->nr_entries);
	if (a->nr_loops)
		jw_u64(&w, "nr_loops", a->nr_loops);
	if (a->map_type)
		jw_u64(&w, "map_flags", a->map_flags);
	jw_u64(&w, "producers", (uint64_t)r->producers);
	if (a->use_case[0])
		jw_str(&w, "use_case", a->use_case);
	if (a->use_case[0])
		jw_bool(&w, "preallocated", a->preallocated);
	if (a->hash[0])
		jw_str(&w, "hash", a->hash);
	if (a->full_width_keys)
		jw_bool(&w, "full_width_keys", true);
	if (a->via_lookup)
		jw_bool(&w, "via_lookup", true);
	if (a->copy_out)
		jw_bool(&w, "copy_out", true);
	if (a->bulk)
		jw_u64(&w, "bulk", a->bulk);
	if (a->writer)
		jw_bool(&w, "writer", true);
	if (a->tag[0])
		jw_str(&w, "tag", a->tag);
	if (r->ok) {
		jw_num(&w, "mops", r->mops);
		jw_num(&w, "mops_stddev", r->mops_stddev);
		jw_num(&w, "mops_total", r->mops_total);
		jw_num(&w, "ns_per_op", r->mops > 0 ? 1e3 / r->mops : NAN);
		jw_u64(&w, "samples", (uint64_t)r->samples);
		jw_u64(&w, "events", r->events);
		jw_u64(&w, "errors", r->errors);
	}
	jw_num(&w, "bytes_per_elem", r->bytes_per_elem);
	jw_num(&w, "mem_bytes", r->mem_bytes);
	jw_num(&w, "mem_peak_bytes", r->mem_peak_bytes);
	if (r->note[0])
		jw_str(&w, "note", r->note);
	if (isfinite(r->writer_mops)) {
		jw_num(&w, "writer_mops", r->writer_mops);
		jw_u64(&w, "writer_updates", r->writer_updates);
		jw_u64(&w, "writer_errors", r->writer_errors);
		jw_str(&w, "writer_note", r->writer_note);
	}
	if (!r->ok)
		jw_str(&w, "error", r->error);
	jw_end(&w);
}

int run_pair(const struct bench *b, const struct bench_env *env, const struct bench_args *largs,
	     const struct bench_args *kargs, const struct cell_ops *lib,
	     const struct cell_ops *kern, const char *what)
{
	struct cell_result rl = { 0 }, rk = { 0 };
	bool ran_l = false, ran_k = false, bad_l = false, bad_k = false;
	char desc[256];
	int status = 0;

	describe_map_args(desc, sizeof(desc), largs);
	fprintf(env->out, "%s: %s; %d producer%s%s%s, -w %g -d %g\n", b->name, desc,
		env->producers, env->producers == 1 ? "" : "s",
		env->affinity || env->nr_prod_cpus ? " (pinned)" : "",
		largs->writer ? " and a writer" : "", env->warmup_s, env->duration_s);
	fflush(env->out);
	if (env->backends & BACKEND_LIB) {
		ran_l = true;
		if (cell_run(lib, largs, env, "bpfmap", &rl))
			status = 1;
		print_cell(env->out, "lib", what, &rl);
		json_cell(env, b->name, "lib", largs, &rl);
		bad_l = rl.errors || rl.writer_errors;
		if (bad_l)
			status = 1;
	}
	if (env->backends & BACKEND_KERNEL) {
		ran_k = true;
		/* Asked for alone, a kernel side that measured nothing fails
		 * the run; beside bpfmap's, where BPF may not be permitted,
		 * it says why and the ratio is left out. */
		if (cell_run(kern, kargs, env, "kernel", &rk) && !ran_l)
			status = 1;
		print_cell(env->out, "kernel", what, &rk);
		json_cell(env, b->name, "kernel", kargs, &rk);
		bad_k = (rk.errors && !cell_errors_expected("kernel", &rk)) || rk.writer_errors;
		if (bad_k)
			status = 1;
	}
	/* Two sides that did not do the same work have no ratio. */
	if (ran_l && ran_k && rl.ok && rk.ok && (bad_l || bad_k))
		fprintf(env->out, "  %-7s %-10s not computed: ERRORS on %s\n", "ratio", "bpfmap/kern",
			bad_l && bad_k ? "both sides" : bad_l ? "bpfmap's side" : "the kernel's side");
	else if (ran_l && ran_k && rl.ok && rk.ok && rk.mops > 0)
		fprintf(env->out, "  %-7s %-10s %9.2fx\n", "ratio", "bpfmap/kern", rl.mops / rk.mops);
	fflush(env->out);
	return status;
}
