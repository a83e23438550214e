// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report's rounds: every figure of bpfmap against the kernel is measured in
 * R rounds, both back to back in each, and reported as medians.  A shared
 * 2-CPU machine loads one round and not the next; a mean would carry a bad
 * round into the figure, the median of three drops it.  The ratio is the
 * median of the per-round ratios, not the ratio of the medians: a round's two
 * figures share their load, so their ratio is the steadier figure.
 *
 * --json: every cell's rounds are kept and printed after the last one as a
 * single object, so files from --report still have one object per cell.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "output.h"
#include "report_int.h"
#include "stats.h"

void rounds_init(struct rounds *s)
{
	for (int i = 0; i < REPORT_MAX_ROUNDS; i++)
		s->lib[i] = s->kern[i] = NAN;
	s->n = 0;
}

double rounds_lib(const struct rounds *s)
{
	return stats_median(s->lib, s->n);
}

double rounds_kern(const struct rounds *s)
{
	return stats_median(s->kern, s->n);
}

/* The rounds where both sides ran: their ratios; NaN elsewhere. */
static void ratios(const struct rounds *s, double *out)
{
	for (int i = 0; i < s->n; i++)
		out[i] = s->lib[i] / s->kern[i];
}

double rounds_ratio(const struct rounds *s)
{
	double r[REPORT_MAX_ROUNDS];

	ratios(s, r);
	return stats_median(r, s->n);
}

double rounds_lib_ratio(const struct rounds *num, const struct rounds *den)
{
	double r[REPORT_MAX_ROUNDS];
	int n = num->n < den->n ? num->n : den->n;

	for (int i = 0; i < n; i++)
		r[i] = num->lib[i] / den->lib[i];
	return stats_median(r, n);
}

void rounds_ratio_range(const struct rounds *s, double *lo, double *hi)
{
	double r[REPORT_MAX_ROUNDS];

	ratios(s, r);
	*lo = *hi = NAN;
	for (int i = 0; i < s->n; i++) {
		if (!isfinite(r[i]))
			continue;
		if (!isfinite(*lo) || r[i] < *lo)
			*lo = r[i];
		if (!isfinite(*hi) || r[i] > *hi)
			*hi = r[i];
	}
}

/* The median over @n rounds of the double at @off in a concurrency side. */
static double side_median(const struct conc_side *v, int n, size_t off)
{
	double x[REPORT_MAX_ROUNDS] = { 0 };

	for (int i = 0; i < n && i < REPORT_MAX_ROUNDS; i++)
		memcpy(&x[i], (const char *)&v[i] + off, sizeof(x[i]));
	return stats_median(x, n);
}

void conc_median(const struct conc_side *v, int n, struct conc_side *out)
{
#define MED(field) out->field = side_median(v, n, offsetof(struct conc_side, field))
	MED(one);
	MED(one_cpu1);
	MED(two_total);
	MED(with_writer);
	MED(writer_mops);
	MED(scaling);
	MED(writer_ratio);
#undef MED
	out->misses = 0;
	for (int i = 0; i < n; i++)
		out->misses += v[i].misses;
}

/* ---- --json ---- */

static struct report_slot *slot_find(struct report *rp, const char *what, const char *backend)
{
	struct report_slot *s;

	for (int i = 0; i < rp->nslots; i++)
		if (!strcmp(rp->slots[i].what, what) && !strcmp(rp->slots[i].backend, backend))
			return &rp->slots[i];
	if (rp->nslots == rp->slots_cap) {
		int cap = rp->slots_cap ? 2 * rp->slots_cap : 64;
		struct report_slot *v = realloc(rp->slots, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		rp->slots = v;
		rp->slots_cap = cap;
	}
	s = &rp->slots[rp->nslots++];
	memset(s, 0, sizeof(*s));
	snprintf(s->what, sizeof(s->what), "%s", what);
	s->backend = backend;
	return s;
}

void report_slot_add(struct report *rp, const char *bench, const char *what, const char *backend,
		     const struct bench_args *a, const struct cell_result *r)
{
	struct report_slot *s;

	if (!rp->env->json)
		return;
	s = slot_find(rp, what, backend);
	if (!s || s->n == REPORT_MAX_ROUNDS) {
		/* No memory for it: print the round as it is. */
		json_cell(rp->env, bench, backend, a, r);
		return;
	}
	s->bench = bench;
	s->a = *a;
	s->r[s->n++] = *r;
}

/* The round whose figure is the median (the lower middle one when their
 * count is even), with the median itself as its figures. */
static void slot_json(const struct report *rp, const struct report_slot *s)
{
	double mops[REPORT_MAX_ROUNDS], total[REPORT_MAX_ROUNDS], med;
	int best = -1;
	struct cell_result r;

	for (int i = 0; i < s->n; i++) {
		mops[i] = s->r[i].ok ? s->r[i].mops : NAN;
		total[i] = s->r[i].ok ? s->r[i].mops_total : NAN;
	}
	med = stats_median(mops, s->n);
	for (int i = 0; i < s->n; i++)
		if (isfinite(mops[i]) && mops[i] <= med && (best < 0 || mops[i] > mops[best]))
			best = i;
	if (best < 0) { /* no round ran: the first one says why */
		json_cell(rp->env, s->bench, s->backend, &s->a, &s->r[0]);
		return;
	}
	r = s->r[best];
	r.mops = med;
	r.mops_total = stats_median(total, s->n);
	json_cell(rp->env, s->bench, s->backend, &s->a, &r);
}

void report_slots_json(struct report *rp)
{
	for (int i = 0; i < rp->nslots; i++)
		slot_json(rp, &rp->slots[i]);
	free(rp->slots);
	rp->slots = NULL;
	rp->nslots = rp->slots_cap = 0;
}

void report_ratio_json(const struct report *rp, const char *what, const struct rounds *s)
{
	double lo, hi;
	struct jw w;

	if (!rp->env->json)
		return;
	rounds_ratio_range(s, &lo, &hi);
	jw_begin(&w, stdout);
	jw_str(&w, "bench", "report-ratio");
	jw_str(&w, "row", what);
	jw_u64(&w, "rounds", (uint64_t)s->n);
	jw_num(&w, "lib_median", rounds_lib(s));
	jw_num(&w, "kernel_median", rounds_kern(s));
	jw_num(&w, "ratio_median", rounds_ratio(s));
	jw_num(&w, "ratio_min", lo);
	jw_num(&w, "ratio_max", hi);
	jw_end(&w);
}
