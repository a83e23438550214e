// SPDX-License-Identifier: BSD-2-Clause
/*
 * --compare BASE.json NEW.json: the seeds' "Change" tables between two runs
 * saved with --json.  Cells are matched on what they measured (bench,
 * backend, map type, sizes, flags, producers, ...); each group of cells that
 * differ only in map size and key size becomes a table as the seeds print
 * them -- rows small/medium/large, a column per key size -- with Baseline,
 * New and Change (percent, + is better: more ops/s, or fewer bytes for
 * memory cells).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "table.h"

struct cell {
	char group[256]; /* what the table is about */
	char row[32];
	char col[16];
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

static int load(const char *path, struct cells *cs)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct json_obj o;
		struct cell c;
		char b1[32];
		double producers;

		/* Tables or progress mixed into the file: not ours to read. */
		if (json_parse(line, &o) || !json_get(&o, "bench") || json_get(&o, "error"))
			continue;
		memset(&c, 0, sizeof(c));
		if (json_get(&o, "mops")) {
			c.value = json_num(&o, "mops", NAN);
		} else if (json_get(&o, "bytes_per_elem")) {
			c.value = json_num(&o, "bytes_per_elem", NAN);
			c.lower_better = true;
		} else {
			continue;
		}
		producers = json_num(&o, "producers", 1);
		snprintf(c.group, sizeof(c.group),
			 "%s, %s: %s, value_size %s, map_flags 0x%x, %.0f producer%s%s%s%s%s%s",
			 json_str(&o, "bench", "?"), json_str(&o, "backend", "?"),
			 json_str(&o, "map_type", "?"), fmt_num(&o, "value_size", b1, sizeof(b1)),
			 (unsigned)json_num(&o, "map_flags", 0), producers,
			 producers == 1 ? "" : "s",
			 json_get(&o, "use_case") ? ", " : "", json_str(&o, "use_case", ""),
			 json_num(&o, "preallocated", 0) ? ", preallocated" : "",
			 json_num(&o, "full_width_keys", 0) ? ", full-width keys" : "",
			 c.lower_better ? " [bytes/elem]" : " [M/s]");
		row_label(&o, c.row, sizeof(c.row));
		fmt_num(&o, "key_size", c.col, sizeof(c.col));
		if (!c.col[0])
			snprintf(c.col, sizeof(c.col), "-");
		if (cs->n == cs->cap) {
			int cap = cs->cap ? cs->cap * 2 : 64;
			struct cell *v = realloc(cs->v, (size_t)cap * sizeof(*v));

			if (!v) {
				fclose(f);
				return -1;
			}
			cs->v = v;
			cs->cap = cap;
		}
		cs->v[cs->n++] = c;
	}
	fclose(f);
	return 0;
}

static const struct cell *find(const struct cells *cs, const struct cell *c)
{
	/* The last one wins: a file may hold several runs appended. */
	for (int i = cs->n - 1; i >= 0; i--)
		if (!strcmp(cs->v[i].group, c->group) && !strcmp(cs->v[i].row, c->row) &&
		    !strcmp(cs->v[i].col, c->col))
			return &cs->v[i];
	return NULL;
}

int compare_run(const char *base_path, const char *new_path, FILE *out)
{
	struct cells base = { 0 }, nw = { 0 };
	bool *done;
	int matched = 0;

	if (load(base_path, &base) || load(new_path, &nw)) {
		free(base.v);
		free(nw.v);
		return 1;
	}
	done = calloc((size_t)nw.n + 1, sizeof(*done));
	if (!done)
		return 1;
	for (int i = 0; i < nw.n; i++) {
		struct grid gb, gn, gc;
		const char *group = nw.v[i].group;
		bool any = false;

		if (done[i])
			continue;
		grid_init(&gb, "Baseline:", "key size (bytes)");
		grid_init(&gn, "New:", "key size (bytes)");
		grid_init(&gc, "Change:", "key size (bytes)");
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
		fprintf(out, "Change: + is better (more ops/s; for bytes/elem, fewer bytes).\n");
	free(done);
	free(base.v);
	free(nw.v);
	return matched ? 0 : 1;
}
