// SPDX-License-Identifier: BSD-2-Clause
/*
 * --compare BASE.json NEW.json: the seeds' "Change" tables between two runs
 * saved with --json.  Either side may be several runs, as a comma-separated
 * list of files (or runs appended to one file): each cell is then the median
 * of its runs, so alternated runs of two builds compare as medians.  Cells are matched on what they measured (bench,
 * backend, map type, sizes, flags, producers, ...); each group of cells that
 * differ only in map size and key size becomes a table as the seeds print
 * them -- rows small/medium/large, a column per key size -- with Baseline,
 * New and Change (percent, + is better: more ops/s, or fewer bytes for
 * memory cells).  The report's memory cells make a table per backend (rows
 * key+value, columns map size); a --writer cell adds a table of the writer's
 * rate; str-kfuncs cells a table per kfunc table (rows the functions,
 * columns the scenarios, ns per call: + is fewer ns).  The report's target
 * verdicts are not compared.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "table.h"

struct cell {
	char group[320]; /* what the table is about */
	char row[32];
	char col[16];
	const char *col_title; /* NULL: key size */
	double value;
	bool lower_better; /* bytes per element */
};

struct cells {
	struct cell *v;
	int n, cap;
};

static const char *fmt_num(const struct json_obj *o, const char *key, char *buf, size_t len)
{
	const struct json_field *f = json_get(o, key);
	const char *src = f ? f->str : "";
	size_t n = strnlen(src, len - 1); /* truncating copy */

	memcpy(buf, src, n);
	buf[n] = '\0';
	return buf;
}

/* 1000000 -> "1M", 10000 -> "10K", 512 -> "512". */
static void short_count(double v, char *buf, size_t len)
{
	if (v >= 1e6 && fmod(v, 1e6) == 0)
		snprintf(buf, len, "%.0fM", v / 1e6);
	else if (v >= 1e3 && fmod(v, 1e3) == 0)
		snprintf(buf, len, "%.0fK", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

/* Row label: the seeds' map sizes by name, else max/nr, else the hash. */
static void row_label(const struct json_obj *o, char *buf, size_t len)
{
	double max = json_num(o, "max_entries", 0), nr = json_num(o, "nr_entries", 0);
	char smax[16], snr[16];

	if (json_get(o, "hash"))
		snprintf(buf, len, "%s", json_str(o, "hash", "-"));
	else if (max == 512 && nr == 256)
		snprintf(buf, len, "small");
	else if (max == 10000 && nr == 5000)
		snprintf(buf, len, "medium");
	else if (max == 100000 && nr == 50000)
		snprintf(buf, len, "large");
	else if (max) {
		short_count(max, smax, sizeof(smax));
		short_count(nr, snr, sizeof(snr));
		snprintf(buf, len, "%s/%s", smax, snr);
	}
	else
		snprintf(buf, len, "-");
}

static int push(struct cells *cs, const struct cell *c)
{
	if (cs->n == cs->cap) {
		int cap = cs->cap ? cs->cap * 2 : 64;
		struct cell *v = realloc(cs->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		cs->v = v;
		cs->cap = cap;
	}
	cs->v[cs->n++] = *c;
	return 0;
}

/* str-kfuncs: a table per kfunc table, a row per function (bpfmap's versions
 * by ISA), a column per scenario; ns per call, lower is better. */
static int load_str(const struct json_obj *o, struct cells *cs)
{
	const char *backend = json_str(o, "backend", "?");
	struct cell c;

	if (!json_get(o, "ns_per_op"))
		return 0;
	memset(&c, 0, sizeof(c));
	c.value = json_num(o, "ns_per_op", NAN);
	c.lower_better = true;
	snprintf(c.group, sizeof(c.group), "str-kfuncs: %s (%s) [ns/call]",
		 json_str(o, "table", "?"), json_str(o, "kfunc", "?"));
	c.col_title = "scenario";
	if (!strcmp(backend, "lib") && json_get(o, "dispatched") &&
	    !json_num(o, "dispatched", 0))
		snprintf(c.row, sizeof(c.row), "%.14s %.8s", json_str(o, "function", "?"),
			 json_str(o, "isa", "?"));
	else if (!strcmp(backend, "kernel") && strcmp(json_str(o, "function", ""), "empty"))
		snprintf(c.row, sizeof(c.row), "%.16s (net)", json_str(o, "function", "?"));
	else
		snprintf(c.row, sizeof(c.row), "%s", json_str(o, "function", "?"));
	snprintf(c.col, sizeof(c.col), "%s", json_str(o, "scenario", "?"));
	return push(cs, &c);
}

/* Bytes per element (the report's memory rows): a table per backend, a row
 * per key+value size, a column per map size. */
static int load_mem(const struct json_obj *o, struct cells *cs)
{
	struct cell c;

	memset(&c, 0, sizeof(c));
	c.value = json_num(o, "bytes_per_elem", NAN);
	c.lower_better = true;
	snprintf(c.group, sizeof(c.group), "%s, %s: %s, preallocated, full [bytes/elem]",
		 json_str(o, "bench", "?"), json_str(o, "backend", "?"),
		 json_str(o, "map_type", "?"));
	snprintf(c.row, sizeof(c.row), "%.0f+%.0f", json_num(o, "key_size", 0),
		 json_num(o, "value_size", 0));
	short_count(json_num(o, "max_entries", 0), c.col, sizeof(c.col));
	c.col_title = "entries";
	return push(cs, &c);
}

/* bpf-hashmap-churn: a table per key size of the churned figures, a row per
 * map size, a column per op; lower is better. */
static int load_churn(const struct json_obj *o, struct cells *cs)
{
	struct cell c;

	if (!json_get(o, "churned"))
		return 0;
	memset(&c, 0, sizeof(c));
	c.value = json_num(o, "churned", NAN);
	c.lower_better = true;
	snprintf(c.group, sizeof(c.group),
		 "bpf-hashmap-churn, lib: key_size %.0f, map_flags 0x%x, churned [ns/op; batch: ms]",
		 json_num(o, "key_size", 0), (unsigned)json_num(o, "map_flags", 0));
	short_count(json_num(o, "max_entries", 0), c.row, sizeof(c.row));
	snprintf(c.col, sizeof(c.col), "%s", json_str(o, "op", "?"));
	c.col_title = "op";
	return push(cs, &c);
}

/* A second figure of a cell, in a table of its own: @group (of @size
 * bytes, ending in " [M/s]") with that unit replaced by @what. */
static void group_retitle(char *group, size_t size, const char *what)
{
	size_t keep = strlen(group) - strlen(" [M/s]");

	snprintf(group + keep, size - keep, "%s", what);
}

/* The map benchmarks' cells: lookups, updates, htab-mem, hash, memory. */
static int load_map(const struct json_obj *o, struct cells *cs)
{
	double producers = json_num(o, "producers", 1);
	char b1[32], bulk[24] = "", tag[48] = "", view[64];
	struct cell c;

	memset(&c, 0, sizeof(c));
	if (json_get(o, "mops")) {
		c.value = json_num(o, "mops", NAN);
	} else if (json_get(o, "bytes_per_elem")) {
		c.value = json_num(o, "bytes_per_elem", NAN);
		c.lower_better = true;
	} else {
		return 0;
	}
	if (json_get(o, "bulk"))
		snprintf(bulk, sizeof(bulk), ", bulk %.0f", json_num(o, "bulk", 0));
	if (json_get(o, "tag"))
		snprintf(tag, sizeof(tag), " (%.40s)", json_str(o, "tag", ""));
	/* The view and the loop count are what was measured too: a copy-out
	 * cell is not a program-view one's baseline. */
	snprintf(view, sizeof(view), "%s%s%s",
		 json_get(o, "copy_out") ? ", copy-out" : "",
		 json_get(o, "via_lookup") ? ", via bpfmap_lookup" : "",
		 json_get(o, "nr_loops") ? ", nr_loops " : "");
	if (json_get(o, "nr_loops"))
		fmt_num(o, "nr_loops", view + strlen(view), sizeof(view) - strlen(view));
	/* lru-hit: its two streams, and its length, are two cells, not two
	 * runs of one (their median was reported). */
	if (json_get(o, "stream"))
		snprintf(tag, sizeof(tag), ", %.24s stream, %.0f lookups", json_str(o, "stream", ""),
			 json_num(o, "lookups", 0));
	snprintf(c.group, sizeof(c.group),
		 "%s, %s: %s, value_size %s, map_flags 0x%x, %.0f producer%s%s%s%s%s%s%s%s%s%s",
		 json_str(o, "bench", "?"), json_str(o, "backend", "?"),
		 json_str(o, "map_type", "?"), fmt_num(o, "value_size", b1, sizeof(b1)),
		 (unsigned)json_num(o, "map_flags", 0), producers, producers == 1 ? "" : "s",
		 json_get(o, "use_case") ? ", " : "", json_str(o, "use_case", ""),
		 json_num(o, "preallocated", 0) ? ", preallocated" : "",
		 json_num(o, "full_width_keys", 0) ? ", full-width keys" : "", bulk,
		 json_num(o, "writer", 0) ? ", with a writer" : "", view, tag,
		 c.lower_better ? " [bytes/elem]" : " [M/s]");
	row_label(o, c.row, sizeof(c.row));
	fmt_num(o, "key_size", c.col, sizeof(c.col));
	if (!c.col[0])
		snprintf(c.col, sizeof(c.col), "-");
	if (push(cs, &c))
		return -1;
	if (json_get(o, "hit_ratio")) { /* lru-hit's figure: a table of its own */
		c.value = json_num(o, "hit_ratio", NAN);
		group_retitle(c.group, sizeof(c.group), ": hit ratio");
		return push(cs, &c);
	}
	if (!json_get(o, "writer_mops"))
		return 0;
	/* The writer's own rate: a table of its own next to the lookups'. */
	c.value = json_num(o, "writer_mops", NAN);
	c.lower_better = false;
	group_retitle(c.group, sizeof(c.group), ": the writer [M updates/s]");
	return push(cs, &c);
}

static int load_file(const char *path, struct cells *cs)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int ret = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		struct json_obj o;
		const char *bench;

		/* Tables or progress mixed into the file: not ours to read. */
		if (json_parse(line, &o) || !json_get(&o, "bench") || json_get(&o, "error"))
			continue;
		bench = json_str(&o, "bench", "");
		if (!strcmp(bench, "report-target"))
			continue; /* a verdict, not a figure */
		else if (!strcmp(bench, "str-kfuncs"))
			ret = load_str(&o, cs);
		else if (!strcmp(bench, "mem-per-elem"))
			ret = load_mem(&o, cs);
		else if (!strcmp(bench, "bpf-hashmap-churn"))
			ret = load_churn(&o, cs);
		else
			ret = load_map(&o, cs);
	}
	fclose(f);
	return ret;
}

static bool same_cell(const struct cell *a, const struct cell *b)
{
	return !strcmp(a->group, b->group) && !strcmp(a->row, b->row) && !strcmp(a->col, b->col);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One cell per measurement, the median of its runs (the mean of the two
 * middle ones for an even count); *runs: the most runs a cell had. */
static int cells_median(struct cells *cs, int *runs)
{
	double *vals = malloc(((size_t)cs->n + 1) * sizeof(*vals));
	bool *gone = calloc((size_t)cs->n + 1, sizeof(*gone));
	int out = 0;

	if (!vals || !gone) {
		free(vals);
		free(gone);
		return -1;
	}
	*runs = 0;
	for (int i = 0; i < cs->n; i++) {
		int k = 0;

		if (gone[i])
			continue;
		/* Only finite figures: a NaN among them made the sort's order,
		 * and so the median, depend on the files' order. */
		for (int j = i; j < cs->n; j++)
			if (!gone[j] && same_cell(&cs->v[i], &cs->v[j])) {
				if (isfinite(cs->v[j].value))
					vals[k++] = cs->v[j].value;
				gone[j] = j != i;
			}
		qsort(vals, (size_t)k, sizeof(*vals), cmp_double);
		cs->v[i].value = !k	 ? NAN
				 : k % 2 ? vals[k / 2]
					 : (vals[k / 2 - 1] + vals[k / 2]) / 2;
		if (k > *runs)
			*runs = k;
		cs->v[out++] = cs->v[i];
	}
	cs->n = out;
	free(vals);
	free(gone);
	return 0;
}

/* A comma-separated list of --json files. */
static int load(const char *paths, struct cells *cs, int *runs)
{
	char *list = strdup(paths), *save = NULL;
	int ret = list ? 0 : -1;

	for (char *p = list ? strtok_r(list, ",", &save) : NULL; p && !ret;
	     p = strtok_r(NULL, ",", &save))
		ret = load_file(p, cs);
	free(list);
	return ret ? ret : cells_median(cs, runs);
}

static const struct cell *find(const struct cells *cs, const struct cell *c)
{
	for (int i = 0; i < cs->n; i++)
		if (same_cell(&cs->v[i], c))
			return &cs->v[i];
	return NULL;
}

int compare_run(const char *base_path, const char *new_path, FILE *out)
{
	struct cells base = { 0 }, nw = { 0 };
	int matched = 0, base_runs = 0, new_runs = 0;
	bool *done;

	if (load(base_path, &base, &base_runs) || load(new_path, &nw, &new_runs)) {
		free(base.v);
		free(nw.v);
		return 1;
	}
	if (base_runs > 1 || new_runs > 1)
		fprintf(out, "Medians of up to %d baseline and %d new runs per cell.\n\n",
			base_runs, new_runs);
	done = calloc((size_t)nw.n + 1, sizeof(*done));
	if (!done)
		return 1;
	for (int i = 0; i < nw.n; i++) {
		struct grid gb, gn, gc;
		const char *group = nw.v[i].group, *ct;
		bool any = false;

		if (done[i])
			continue;
		ct = nw.v[i].col_title ? nw.v[i].col_title : "key size (bytes)";

		grid_init(&gb, "Baseline:", ct);
		grid_init(&gn, "New:", ct);
		grid_init(&gc, "Change:", ct);
		for (int j = i; j < nw.n; j++) {
			const struct cell *c = &nw.v[j], *b;
			double change;

			if (done[j] || strcmp(c->group, group))
				continue;
			done[j] = true;
			b = find(&base, c);
			if (!b)
				continue;
			any = true;
			matched++;
			change = (c->value / b->value - 1) * 100;
			if (c->lower_better)
				change = -change;
			if (fabs(change) < 0.005)
				change = 0; /* no "-0.00%" */
			grid_set(&gb, c->row, c->col, b->value);
			grid_set(&gn, c->row, c->col, c->value);
			grid_set(&gc, c->row, c->col, change);
		}
		if (!any)
			continue;
		fprintf(out, "%s\n\n", group);
		grid_print(out, &gb, GRID_VALUE);
		grid_print(out, &gn, GRID_VALUE);
		grid_print(out, &gc, GRID_PERCENT);
	}
	if (!matched)
		fprintf(out, "no cell of %s matches one of %s (compare runs of the same "
			     "benchmarks saved with --json)\n", new_path, base_path);
	else if (nw.n && matched)
		fprintf(out, "Change: + is better (more ops/s; for bytes/elem and ns/call, fewer).\n");
	free(done);
	free(base.v);
	free(nw.v);
	return matched ? 0 : 1;
}
