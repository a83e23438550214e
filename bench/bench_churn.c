// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf-hashmap-churn: a full map that keeps turning over, the conntrack
 * pattern (issue 14).  For each map size (16384, 100K and 1M entries, or
 * --max_entries): fill the map, measure, then delete a random present key
 * and insert a fresh one, --nr_loops pairs (default 10 x max_entries), and
 * measure again:
 *   present  program-view lookups of present keys (ns each)
 *   absent   program-view lookups of keys never inserted
 *   e2big    inserts of absent keys, each answering -E2BIG
 *   batch    one whole lookup_batch pass over the map (ms)
 * and the churn itself (ns per delete + insert pair).  The figure that
 * matters is each row's churned / fresh ratio.  Keys are 8 bytes unless
 * --key_size says otherwise, values 8; random parameters (--map_flags to
 * change).  Library only: the kernel's map has no deleted slots to reclaim.
 * Each measurement is the median of 5 timed runs in the thread's CPU time.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "bench.h"
#include "bench_churn.h"
#include "json.h"
#include "table.h"

#define CHURN_RUNS 5
#define CHURN_LOOKUPS 1000000u /* per timed run (fewer in small maps: all keys) */
#define CHURN_MAX_KEY 64

struct churn {
	struct bpfmap *map;
	uint32_t ks, me;
	uint64_t *live;	  /* the present keys' ids (key i: id i in word 0) */
	uint64_t next_id; /* ids above every one used */
	uint64_t rng;
};

static uint64_t churn_rand(struct churn *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

/* Key @id: the id in the first 8 bytes (or 4), a fixed pattern after. */
static void churn_key(const struct churn *c, uint64_t id, uint8_t *key)
{
	for (uint32_t j = 8; j < c->ks; j += 4) {
		uint32_t w = 2654435761u * j;

		memcpy(key + j, &w, c->ks - j < 4 ? c->ks - j : 4);
	}
	memcpy(key, &id, c->ks < 8 ? c->ks : 8);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

const char *const churn_op_names[CHURN_OPS] = { "present", "absent", "e2big", "batch" };

/* ns per operation (batch: ms per pass), median of CHURN_RUNS; -1 on a
 * wrong answer. */
static double churn_measure(struct churn *c, enum churn_op op)
{
	uint32_t n = op == CHURN_BATCH ? 1 : (c->me < CHURN_LOOKUPS ? c->me : CHURN_LOOKUPS);
	uint8_t *keys = malloc((size_t)n * c->ks), *bk = NULL, *bv = NULL;
	double t[CHURN_RUNS];
	uint64_t v = 0;

	if (!keys)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = op == CHURN_PRESENT ? c->live[churn_rand(c) % c->me]
					       : c->next_id + churn_rand(c) % (1ULL << 40);

		churn_key(c, id, keys + (size_t)i * c->ks);
	}
	if (op == CHURN_BATCH) {
		bk = malloc((size_t)4096 * c->ks);
		bv = malloc((size_t)4096 * 8);
		if (!bk || !bv)
			goto fail;
	}
	for (int r = 0; r < CHURN_RUNS; r++) {
		uint64_t t0 = thread_cpu_ns(), found = 0;

		switch (op) {
		case CHURN_PRESENT:
		case CHURN_ABSENT:
			bpfmap_read_lock();
			for (uint32_t i = 0; i < n; i++)
				found += bpfmap_lookup(c->map, keys + (size_t)i * c->ks) != NULL;
			bpfmap_read_unlock();
			if (found != (op == CHURN_PRESENT ? n : 0))
				goto fail;
			break;
		case CHURN_E2BIG:
			for (uint32_t i = 0; i < n; i++)
				if (bpfmap_update_elem(c->map, keys + (size_t)i * c->ks, &v,
						       BPFMAP_ANY) != -E2BIG)
					goto fail;
			break;
		case CHURN_BATCH: {
			uint32_t cursor = 0, count;
			int ret;
			bool first = true;

			do {
				count = 4096;
				ret = bpfmap_lookup_batch(c->map, first ? NULL : &cursor, &cursor, bk,
							  bv, &count, NULL);
				first = false;
				found += count;
			} while (ret == 0);
			if (ret != -ENOENT || found != c->me)
				goto fail;
			break;
		}
		default:
			break;
		}
		t[r] = (double)(thread_cpu_ns() - t0) / (op == CHURN_BATCH ? 1e6 : n);
	}
	free(keys);
	free(bk);
	free(bv);
	qsort(t, CHURN_RUNS, sizeof(t[0]), cmp_double);
	return t[CHURN_RUNS / 2];
fail:
	free(keys);
	free(bk);
	free(bv);
	return -1;
}

/* @pairs delete + insert pairs; ns per pair, or -1 on a wrong answer. */
static double churn_turn(struct churn *c, uint64_t pairs, bool progress)
{
	uint8_t key[CHURN_MAX_KEY];
	uint64_t t0 = thread_cpu_ns(), v = 1;

	for (uint64_t p = 0; p < pairs; p++) {
		uint32_t i = (uint32_t)(churn_rand(c) % c->me);

		churn_key(c, c->live[i], key);
		if (bpfmap_delete_elem(c->map, key))
			return -1;
		c->live[i] = c->next_id++;
		churn_key(c, c->live[i], key);
		if (bpfmap_update_elem(c->map, key, &v, BPFMAP_NOEXIST))
			return -1;
		if (progress && !(p & 0xfffff))
			fprintf(stderr, "\r\033[K  churn %u: %llu of %llu pairs", c->me,
				(unsigned long long)p, (unsigned long long)pairs);
	}
	if (progress)
		fprintf(stderr, "\r\033[K");
	return (double)(thread_cpu_ns() - t0) / (double)pairs;
}

static void churn_json_op(const struct churn_result *r, const char *op, double fresh,
			  double churned)
{
	struct jw w;

	jw_begin(&w, stdout);
	jw_str(&w, "bench", "bpf-hashmap-churn");
	jw_str(&w, "backend", "lib");
	jw_u64(&w, "key_size", r->key_size);
	jw_u64(&w, "max_entries", r->max_entries);
	jw_u64(&w, "map_flags", r->map_flags);
	jw_u64(&w, "pairs", r->pairs);
	jw_str(&w, "op", op);
	jw_num(&w, "fresh", fresh);
	jw_num(&w, "churned", churned);
	if (fresh > 0 && churned > 0)
		jw_num(&w, "ratio", churned / fresh);
	jw_end(&w);
}

void churn_json(const struct churn_result *r)
{
	for (int op = 0; op < CHURN_OPS; op++)
		churn_json_op(r, churn_op_names[op], r->fresh[op], r->churned[op]);
	churn_json_op(r, "churn", NAN, r->per_pair);
}

int churn_measure_size(struct churn_result *r, bool progress)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = r->map_flags);
	struct churn c = { .ks = r->key_size, .me = r->max_entries,
			   .rng = 0x9e3779b97f4a7c15ULL ^ r->max_entries };
	uint8_t key[CHURN_MAX_KEY];
	int status = 0;

	for (int op = 0; op < CHURN_OPS; op++)
		r->fresh[op] = r->churned[op] = NAN;
	r->per_pair = NAN;
	c.map = bpfmap_create(BPFMAP_TYPE_HASH, "churn", c.ks, 8, c.me, &opts);
	c.live = malloc((size_t)c.me * sizeof(*c.live));
	if (!c.map || !c.live) {
		fprintf(stderr, "bpf-hashmap-churn: %u entries: %s\n", c.me, strerror(errno));
		bpfmap_free(c.map);
		free(c.live);
		return 1;
	}
	for (uint32_t i = 0; i < c.me; i++) {
		uint64_t v = i;

		c.live[i] = i + 1;
		churn_key(&c, c.live[i], key);
		if (bpfmap_update_elem(c.map, key, &v, BPFMAP_NOEXIST))
			status = 1;
	}
	c.next_id = c.me + 1;
	for (int op = 0; op < CHURN_OPS; op++)
		r->fresh[op] = churn_measure(&c, op);
	r->per_pair = churn_turn(&c, r->pairs, progress);
	for (int op = 0; op < CHURN_OPS; op++)
		r->churned[op] = churn_measure(&c, op);
	for (int op = 0; op < CHURN_OPS; op++)
		status |= r->fresh[op] < 0 || r->churned[op] < 0;
	status |= r->per_pair < 0;
	if (status)
		fprintf(stderr, "bpf-hashmap-churn: %u entries: an operation answered wrongly\n",
			c.me);
	bpfmap_free(c.map);
	free(c.live);
	return status;
}

/* One map size into @g (and --json). */
static int churn_size(const struct bench_env *env, const struct bench_args *a, uint32_t me,
		      struct grid *g)
{
	struct churn_result r = { .key_size = a->key_size, .max_entries = me,
				  .map_flags = a->map_flags,
				  .pairs = a->nr_loops ? a->nr_loops : 10ULL * me };
	int status = churn_measure_size(&r, env->progress);
	char row[24];

	for (int op = 0; op < CHURN_OPS; op++) {
		snprintf(row, sizeof(row), "%u %s", me, churn_op_names[op]);
		grid_row(g, row);
		grid_set(g, row, "fresh", r.fresh[op]);
		grid_set(g, row, "churned", r.churned[op]);
		grid_set(g, row, "ratio", r.fresh[op] > 0 && r.churned[op] > 0
						  ? r.churned[op] / r.fresh[op] : NAN);
	}
	snprintf(row, sizeof(row), "%u churn", me);
	grid_row(g, row);
	grid_set(g, row, "churned", r.per_pair);
	if (env->json)
		churn_json(&r);
	return status;
}

static int churn_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	static const uint32_t sizes[] = { 16384, 100000, 1000000 };
	struct grid g;
	int status = 0;

	if (!(env->backends & BACKEND_LIB)) {
		fprintf(env->out, "%s: the kernel backend does not apply (its map reuses deleted "
				  "elements at once; nothing waits to be reclaimed)\n", b->name);
		return 0;
	}
	if (!a->key_size)
		a->key_size = 8;
	if (a->key_size > CHURN_MAX_KEY) {
		fprintf(stderr, "%s: --key_size must be 1..%d\n", b->name, CHURN_MAX_KEY);
		return 2;
	}
	fprintf(env->out, "%s: full maps, %s delete + insert pairs of fresh keys; key_size %u, "
			  "value_size 8, map_flags %#x\n", b->name,
		a->nr_loops ? "--nr_loops" : "10 x max_entries", a->key_size, a->map_flags);
	grid_init(&g, "ns per op (batch: ms per pass; churn: ns per pair):", "");
	grid_col(&g, "fresh");
	grid_col(&g, "churned");
	grid_col(&g, "ratio");
	if (a->max_entries)
		status = churn_size(env, a, a->max_entries, &g);
	else
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			status |= churn_size(env, a, sizes[i], &g);
	grid_print(env->out, &g, GRID_VALUE);
	if (status)
		fprintf(env->out, "%s: some operation answered wrongly (see the JSON, -1 figures)\n",
			b->name);
	return status;
}

const struct bench bench_churn = {
	.name = "bpf-hashmap-churn",
	.summary = "full maps turning over (delete + insert): lookups, -E2BIG, batch pass, "
		   "fresh against churned",
	.run = churn_run,
};
