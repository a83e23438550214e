// SPDX-License-Identifier: BSD-2-Clause
/* A flat-object JSON writer and reader (see json.h). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void jw_begin(struct jw *w, FILE *f)
{
	w->f = f;
	w->first = true;
	fputc('{', f);
}

static void put_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void key(struct jw *w, const char *k)
{
	if (!w->first)
		fputs(", ", w->f);
	w->first = false;
	put_escaped(w->f, k);
	fputs(": ", w->f);
}

void jw_str(struct jw *w, const char *k, const char *val)
{
	if (!val)
		return;
	key(w, k);
	put_escaped(w->f, val);
}

void jw_num(struct jw *w, const char *k, double val)
{
	if (!isfinite(val))
		return;
	key(w, k);
	/* %.17g round-trips, but %.6g is what a reader of the line wants; the
	 * figures are not better than that anyway. */
	fprintf(w->f, "%.6g", val);
}

void jw_u64(struct jw *w, const char *k, uint64_t val)
{
	key(w, k);
	fprintf(w->f, "%llu", (unsigned long long)val);
}

void jw_bool(struct jw *w, const char *k, bool val)
{
	key(w, k);
	fputs(val ? "true" : "false", w->f);
}

void jw_end(struct jw *w)
{
	fputs("}\n", w->f);
	fflush(w->f);
}

static const char *skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* Parses a string at @p (after the quote); stores up to @len - 1 bytes. */
static const char *parse_string(const char *p, char *out, size_t len)
{
	size_t n = 0;

	for (; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			p++;
			switch (*p) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u':
				/* Only \u00XX is ever written here. */
				if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]) ||
				    !isxdigit((unsigned char)p[3]) || !isxdigit((unsigned char)p[4]))
					return NULL;
				c = (char)strtol((char[]){ p[3], p[4], 0 }, NULL, 16);
				p += 4;
				break;
			case '\0': return NULL;
			default: c = *p; break;
			}
		}
		if (n + 1 < len)
			out[n++] = c;
	}
	if (*p != '"')
		return NULL;
	out[n] = '\0';
	return p + 1;
}

int json_parse(const char *line, struct json_obj *o)
{
	const char *p = skip_ws(line);

	o->n = 0;
	if (*p++ != '{')
		return -1;
	p = skip_ws(p);
	if (*p == '}')
		return 0;
	for (;;) {
		struct json_field *f;

		if (o->n == JSON_MAX_FIELDS)
			return -1;
		f = &o->f[o->n];
		memset(f, 0, sizeof(*f));
		if (*p++ != '"')
			return -1;
		p = parse_string(p, f->key, sizeof(f->key));
		if (!p)
			return -1;
		p = skip_ws(p);
		if (*p++ != ':')
			return -1;
		p = skip_ws(p);
		if (*p == '"') {
			p = parse_string(p + 1, f->str, sizeof(f->str));
			if (!p)
				return -1;
			f->is_str = true;
		} else if (!strncmp(p, "true", 4)) {
			f->num = 1;
			snprintf(f->str, sizeof(f->str), "true");
			p += 4;
		} else if (!strncmp(p, "false", 5) || !strncmp(p, "null", 4)) {
			snprintf(f->str, sizeof(f->str), "%s", *p == 'f' ? "false" : "null");
			p += *p == 'f' ? 5 : 4;
		} else {
			char *end;

			f->num = strtod(p, &end);
			if (end == p)
				return -1;
			snprintf(f->str, sizeof(f->str), "%.*s", (int)(end - p), p);
			p = end;
		}
		o->n++;
		p = skip_ws(p);
		if (*p == ',') {
			p = skip_ws(p + 1);
			continue;
		}
		if (*p != '}')
			return -1;
		return 0;
	}
}

const struct json_field *json_get(const struct json_obj *o, const char *k)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->f[i].key, k))
			return &o->f[i];
	return NULL;
}

double json_num(const struct json_obj *o, const char *k, double dflt)
{
	const struct json_field *f = json_get(o, k);

	return f && !f->is_str ? f->num : dflt;
}

const char *json_str(const struct json_obj *o, const char *k, const char *dflt)
{
	const struct json_field *f = json_get(o, k);

	return f && f->is_str ? f->str : dflt;
}
