// SPDX-License-Identifier: BSD-2-Clause
/*
 * lru-hit: how well an LRU map keeps the keys that matter.  A trace of
 * nr_loops (default 1M) keys drawn from a Zipf(0.99) distribution over 10x
 * max_entries (default 10K) keys is replayed as a caching program replays
 * it: look the key up (the program view, which marks it used), and on a
 * miss insert it.  The figure is the hit ratio of those lookups, for
 * bpfmap's map, the kernel's map of the same type (the replay runs in a BPF
 * program, so its lookups set the kernel's reference bits), and an exact
 * LRU of the same capacity replayed in C, the reference.  The "+ scan" row
 * adds, every 100K lookups, one sequential pass over 2x max_entries cold
 * keys that never come back (a backup job walking the flow table, say);
 * their lookups all miss and are not counted.  Replays also give M ops/s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "bench.h"
#include "json.h"
#include "kernel_backend.h"
#include "output.h"

#define LRU_HIT_ZIPF_S 0.99
#define LRU_HIT_KEYS_PER_ENTRY 10
#define LRU_HIT_SCAN_EVERY 100000
#define LRU_HIT_SCAN_PER_ENTRY 2

struct trace {
	uint32_t *keys;
	uint32_t n;     /* entries, scans included */
	uint32_t zipf;  /* of them the Zipf lookups, which are counted */
};


static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Zipf ranks by inverse CDF; rank r is key r + 1.  A fixed seed: every
 * backend and every run replays the same trace. */
static int trace_build(struct trace *t, uint32_t universe, uint32_t lookups, uint32_t scan_len)
{
	double *cdf = malloc(sizeof(double) * universe), sum = 0;
	uint32_t scans = scan_len ? lookups / LRU_HIT_SCAN_EVERY : 0, scan_seq = 0;
	uint64_t seed = 42;

	t->n = lookups + scans * scan_len;
	t->zipf = lookups;
	t->keys = malloc(sizeof(uint32_t) * t->n);
	if (!cdf || !t->keys) {
		free(cdf);
		free(t->keys);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < universe; r++) {
		sum += 1.0 / pow((double)(r + 1), LRU_HIT_ZIPF_S);
		cdf[r] = sum;
	}
	for (uint32_t i = 0, j = 0; i < lookups; i++) {
		double u = (double)(rng_next(&seed) >> 11) / (double)(1ULL << 53) * sum;
		uint32_t lo = 0, hi = universe - 1;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		t->keys[j++] = lo + 1;
		if (scan_len && (i + 1) % LRU_HIT_SCAN_EVERY == 0)
			for (uint32_t s = 0; s < scan_len; s++)
				t->keys[j++] = LRU_HIT_SCAN_BIT | scan_seq++;
	}
	free(cdf);
	return 0;
}

/* The reference: an exact LRU (a hash of chains over a node array, and a
 * recency list through the nodes). */
struct exact_lru {
	uint32_t cap, size, mask, head, tail; /* head: most recent; UINT32_MAX: none */
	uint32_t *bucket;
	struct { uint32_t key, prev, next, hnext; } *node;
};

#define NONE UINT32_MAX

static void lru_unlink(struct exact_lru *l, uint32_t i)
{
	if (l->node[i].prev != NONE)
		l->node[l->node[i].prev].next = l->node[i].next;
	else
		l->head = l->node[i].next;
	if (l->node[i].next != NONE)
		l->node[l->node[i].next].prev = l->node[i].prev;
	else
		l->tail = l->node[i].prev;
}

static void lru_push_front(struct exact_lru *l, uint32_t i)
{
	l->node[i].prev = NONE;
	l->node[i].next = l->head;
	if (l->head != NONE)
		l->node[l->head].prev = i;
	l->head = i;
	if (l->tail == NONE)
		l->tail = i;
}

static uint32_t lru_slot(const struct exact_lru *l, uint32_t key)
{
	return (uint32_t)(((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> 32) & l->mask;
}

static double exact_lru_replay(const struct trace *t, uint32_t cap)
{
	struct exact_lru l = { .cap = cap, .head = NONE, .tail = NONE };
	uint32_t nb = 1;
	uint64_t hits = 0;

	while (nb < 2 * cap)
		nb <<= 1;
	l.mask = nb - 1;
	l.bucket = malloc(sizeof(uint32_t) * nb);
	l.node = malloc(sizeof(*l.node) * cap);
	if (!l.bucket || !l.node) {
		free(l.bucket);
		free(l.node);
		return -1;
	}
	memset(l.bucket, 0xff, sizeof(uint32_t) * nb);
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t key = t->keys[i], *link = &l.bucket[lru_slot(&l, key)], n;

		for (n = *link; n != NONE && l.node[n].key != key; n = l.node[n].hnext)
			;
		if (n != NONE) {
			hits += !(key & LRU_HIT_SCAN_BIT);
			lru_unlink(&l, n);
			lru_push_front(&l, n);
			continue;
		}
		if (l.size < cap) {
			n = l.size++;
		} else {
			uint32_t *p;

			n = l.tail; /* the least recently used goes */
			lru_unlink(&l, n);
			for (p = &l.bucket[lru_slot(&l, l.node[n].key)]; *p != n;
			     p = &l.node[*p].hnext)
				;
			*p = l.node[n].hnext;
		}
		l.node[n].key = key;
		l.node[n].hnext = *link;
		*link = n;
		lru_push_front(&l, n);
	}
	free(l.bucket);
	free(l.node);
	return (double)hits / t->zipf;
}

static void lib_replay(const struct trace *t, const struct bench_args *a, struct lru_hit_side *res)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = a->map_flags);
	struct bpfmap *map = bpfmap_create(a->map_type, "lru_hit", 4, 8, a->max_entries, &opts);
	bpfmap_lookup_fn lookup;
	uint64_t hits = 0, t0, one = 1;

	if (!map) {
		snprintf(res->error, sizeof(res->error), "bpfmap_create(%s): %s",
			 map_type_name(a->map_type), strerror(errno));
		return;
	}
	lookup = bpfmap_lookup_func(map);
	t0 = now_ns();
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t key = t->keys[i];
		void *v;

		bpfmap_read_lock();
		v = lookup(map, &key);
		bpfmap_read_unlock();
		if (v) {
			hits += !(key & LRU_HIT_SCAN_BIT);
			continue;
		}
		if (bpfmap_update(map, &key, &one, BPFMAP_ANY)) {
			snprintf(res->error, sizeof(res->error), "insert: %s", strerror(errno));
			bpfmap_free(map);
			return;
		}
	}
	res->mops = t->n / ((double)(now_ns() - t0) / 1e3);
	res->ratio = (double)hits / t->zipf;
	res->ok = true;
	bpfmap_free(map);
}

struct kern_cfg {
	const struct bench_args *a;
	uint32_t n;
};

static int lru_hit_configure(struct bpf_object *obj, void *arg, char *err, size_t len)
{
	const struct kern_cfg *c = arg;
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "lru_map");
	struct bpf_map *t = bpf_object__find_map_by_name(obj, "trace");

	if (!m || !t || bpf_map__set_type(m, c->a->map_type) ||
	    bpf_map__set_max_entries(m, c->a->max_entries) ||
	    bpf_map__set_map_flags(m, c->a->map_flags) || bpf_map__set_max_entries(t, c->n)) {
		snprintf(err, len, "cannot size the maps");
		return -EINVAL;
	}
	return 0;
}

static void trace_make(void *key, void *value, uint32_t i, void *arg)
{
	const struct trace *t = arg;

	memcpy(key, &i, 4);
	memcpy(value, &t->keys[i], 4);
}

static void kern_replay(const struct trace *t, const struct bench_args *a, struct lru_hit_side *res)
{
	struct kern_cfg cfg = { a, t->n };
	struct lru_hit_state *s;
	struct kbpf k;

	memset(&k, 0, sizeof(k));
	if (kbpf_load(&k, bpf_obj_lru_hit, bpf_obj_lru_hit_len, "lru_hit", lru_hit_configure, &cfg,
		      res->error, sizeof(res->error)))
		return;
	if (k.bss_size < sizeof(*s)) {
		snprintf(res->error, sizeof(res->error), ".bss too small");
		goto out;
	}
	s = k.bss;
	/* One bpf_loop replays the trace, scans included: the kernel runs
	 * none of it past 2^23 iterations (bpf_loop answers -E2BIG). */
	if (t->n > (1u << 23)) {
		snprintf(res->error, sizeof(res->error),
			 "the trace (%u lookups, scans included) is longer than bpf_loop's 2^23: "
			 "lower --nr_loops or --max_entries", t->n);
		goto out;
	}
	if (kbpf_fill(kbpf_map_fd(&k, "trace"), t->n, 4, 4, trace_make, (void *)t, res->error,
		      sizeof(res->error)))
		goto out;
	s->n = t->n;
	kbpf_gate_open(&s->gate);
	kbpf_trigger();
	kbpf_gate_close(&s->gate);
	if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) != 1 || s->errors) {
		snprintf(res->error, sizeof(res->error), "the replay ran %u times, %llu errors",
			 s->done, (unsigned long long)s->errors);
		goto out;
	}
	res->ratio = (double)s->hits / t->zipf;
	res->mops = t->n / ((double)s->ns / 1e3);
	res->ok = true;
out:
	kbpf_close(&k);
}

static void print_row(FILE *f, const char *what, const struct lru_hit_side *lib,
		      const struct lru_hit_side *kern, double exact)
{
	fprintf(f, "  %-12s", what);
	if (lib->ok)
		fprintf(f, "  bpfmap %6.4f (%6.2f M ops/s)", lib->ratio, lib->mops);
	else
		fprintf(f, "  bpfmap -");
	if (kern->ok)
		fprintf(f, "  kernel %6.4f (%6.2f M ops/s)", kern->ratio, kern->mops);
	else
		fprintf(f, "  kernel -");
	fprintf(f, "  exact LRU %6.4f\n", exact);
	if (!lib->ok && lib->error[0])
		fprintf(f, "    bpfmap: %s\n", lib->error);
	if (!kern->ok && kern->error[0])
		fprintf(f, "    kernel: %s\n", kern->error);
}

/* One JSON cell per backend: its hit ratio, beside the exact LRU's. */
static void hit_json(const struct bench_env *env, const struct bench_args *a, const char *stream,
		     const char *backend, const struct lru_hit_side *r, double exact)
{
	struct jw w;

	if (!env->json)
		return;
	jw_begin(&w, stdout);
	jw_str(&w, "bench", "lru-hit");
	jw_str(&w, "backend", backend);
	jw_str(&w, "stream", stream);
	jw_str(&w, "map_type", map_type_name(a->map_type));
	jw_u64(&w, "max_entries", a->max_entries);
	jw_u64(&w, "lookups", a->nr_loops);
	jw_u64(&w, "producers", 1);
	jw_num(&w, "exact_lru", exact);
	if (r->ok) {
		jw_num(&w, "hit_ratio", r->ratio);
		jw_num(&w, "mops", r->mops);
	} else {
		jw_str(&w, "error", r->error[0] ? r->error : "not run");
	}
	jw_end(&w);
}

int lru_hit_measure(const struct bench_env *env, const struct bench_args *a, bool scan,
		    struct lru_hit_row *row)
{
	struct trace t = { 0 };
	int ret = trace_build(&t, a->max_entries * LRU_HIT_KEYS_PER_ENTRY, a->nr_loops,
			      scan ? a->max_entries * LRU_HIT_SCAN_PER_ENTRY : 0);

	memset(row, 0, sizeof(*row));
	if (ret)
		return ret;
	row->exact = exact_lru_replay(&t, a->max_entries);
	if (env->backends & BACKEND_LIB)
		lib_replay(&t, a, &row->lib);
	if (env->backends & BACKEND_KERNEL)
		kern_replay(&t, a, &row->kern);
	free(t.keys);
	return 0;
}

void lru_hit_args_fill(struct bench_args *a)
{
	if (!a->map_type)
		a->map_type = BPFMAP_TYPE_LRU_HASH;
	if (!a->max_entries)
		a->max_entries = 10000;
	if (!a->nr_loops)
		a->nr_loops = 1000000;
}

static int lru_hit_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	static const char *const streams[] = { "zipf", "zipf + scan" };

	lru_hit_args_fill(a);
	if (a->map_type != BPFMAP_TYPE_LRU_HASH && a->map_type != BPFMAP_TYPE_LRU_PERCPU_HASH) {
		fprintf(stderr, "%s: --map_type lru_hash or lru_percpu_hash\n", b->name);
		return 2;
	}
	if (a->max_entries > (1u << 24) || a->nr_loops > (1u << 23)) {
		fprintf(stderr, "%s: --max_entries up to 2^24, --nr_loops up to 2^23\n", b->name);
		return 2;
	}
	(void)bench_pin_self(0); /* best effort: the hit ratios do not depend on it */
	fprintf(env->out, "%s: Zipf(%.2f) over %u keys, %s max_entries %u, %u lookups; "
			  "scan: %ux max_entries cold keys every %u lookups\n",
		b->name, LRU_HIT_ZIPF_S, a->max_entries * LRU_HIT_KEYS_PER_ENTRY,
		map_type_name(a->map_type), a->max_entries, a->nr_loops, LRU_HIT_SCAN_PER_ENTRY,
		LRU_HIT_SCAN_EVERY);
	int status = 0;

	for (int s = 0; s < 2; s++) {
		struct lru_hit_row row;

		if (lru_hit_measure(env, a, s, &row)) {
			fprintf(stderr, "%s: out of memory\n", b->name);
			return 1;
		}
		/* A side asked for and not measured fails the run (the kernel's
		 * beside bpfmap's may not be permitted: it says why). */
		if (((env->backends & BACKEND_LIB) && !row.lib.ok) ||
		    (env->backends == BACKEND_KERNEL && !row.kern.ok))
			status = 1;
		print_row(env->out, streams[s], &row.lib, &row.kern, row.exact);
		if (env->backends & BACKEND_LIB)
			hit_json(env, a, streams[s], "lib", &row.lib, row.exact);
		if (env->backends & BACKEND_KERNEL)
			hit_json(env, a, streams[s], "kernel", &row.kern, row.exact);
	}
	return status;
}

const struct bench bench_lru_hit = {
	.name = "lru-hit",
	.summary = "LRU maps on a Zipf(0.99) key stream, with and without a scan: hit ratio "
		   "against an exact LRU's",
	.run = lru_hit_run,
};
