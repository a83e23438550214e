/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Just enough JSON for one flat object per line: a writer for --json and a
 * reader for --compare (strings, numbers, true/false/null; no nesting).
 */
#ifndef BPFMAP_BENCH_JSON_H
#define BPFMAP_BENCH_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writer: jw_begin, fields, jw_end (prints the line). */
struct jw {
	FILE *f;
	bool first;
};

void jw_begin(struct jw *w, FILE *f);
void jw_str(struct jw *w, const char *key, const char *val);
void jw_num(struct jw *w, const char *key, double val); /* NaN/inf: skipped */
void jw_u64(struct jw *w, const char *key, uint64_t val);
void jw_bool(struct jw *w, const char *key, bool val);
void jw_end(struct jw *w);

/* Reader: one parsed flat object. */
#define JSON_MAX_FIELDS 48

struct json_field {
	char key[32];
	bool is_str;
	char str[256]; /* the string, or the number's text */
	double num;    /* the number (true = 1, false/null = 0) */
};

struct json_obj {
	int n;
	struct json_field f[JSON_MAX_FIELDS];
};

/* Parses @line; returns 0, or -1 if it is not one flat JSON object. */
int json_parse(const char *line, struct json_obj *o);
const struct json_field *json_get(const struct json_obj *o, const char *key);
/* The number under @key, or @dflt when absent or a string. */
double json_num(const struct json_obj *o, const char *key, double dflt);
/* The string under @key, or @dflt. */
const char *json_str(const struct json_obj *o, const char *key, const char *dflt);

#endif
