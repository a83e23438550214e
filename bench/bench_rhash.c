// SPDX-License-Identifier: BSD-2-Clause
/*
 * RHASH's own rows (issue 17), bpfmap alone (the kernel has no RHASH):
 *
 * rhash-grow: nr_entries (default 1M) 8-byte keys inserted into an empty
 *   RHASH of as many max_entries, by one thread (CPU 0), while a second
 *   (another CPU) looks up keys already inserted, at random, non-stop, each
 *   lookup timed.  The same with a preallocated HASH of the same
 *   max_entries.  Figures: the inserts' time (and RHASH's over HASH's),
 *   the lookups that missed (must be 0), the longest lookup and the
 *   99.999th percentile.  GROW_ROUNDS rounds, RHASH and HASH alternated,
 *   medians (of the ratio: each round's pair's).
 *
 *   The longest lookup is the machine's as much as the map's, so the
 *   reader does what it can to be left alone, and measures what is left:
 *   - it runs SCHED_FIFO (priority 1) where the process may; without it,
 *     on this 2-CPU machine, HASH's longest lookup was 163 us and RHASH's
 *     144 in the same run;
 *   - it pauses GROW_PAUSE_NS after every GROW_BURST_NS, between two
 *     lookups: a SCHED_FIFO thread that runs more than the kernel's RT
 *     share (sched_rt_runtime_us, 95% of each second) is stopped for the
 *     rest of the second, 50 ms in the middle of whatever lookup it is in;
 *   - before each growth it spins GROW_FLOOR_NS in an empty loop of clock
 *     reads with the same pauses, and reports the longest gap between two
 *     reads: the stall the machine alone gives a thread that does nothing.
 *     On a virtual machine that floor is tens of microseconds.
 * rhash-mem: bpfmap_mem_usage() of an RHASH of 8 + 8 bytes and 1M
 *   max_entries: holding 1K elements; grown to 500K and deleted down to 1K
 *   (keys 1K..500K deleted, the first 1K kept), at once and once settled;
 *   and bytes per element after every insert of a growth from 1K to 1M:
 *   the most, where, and at 1M.  Deleted elements go back only after a
 *   grace period, which liburcu's reclamation thread runs about every
 *   10 ms, so the figure right after a burst of deletes still holds those
 *   of the last few: "settled" polls bpfmap_mem_usage() every millisecond
 *   until it has not changed for 50 ms (at most 2 s), as the kernel's
 *   map, which frees its elements after a grace period too, would be
 *   measured once its RCU callbacks ran.
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
#include "output.h"
#include "stats.h"

#define GROW_DEFAULT 1000000u
#define GROW_HIST 64 /* log2 buckets of lookup ns */
#define GROW_ROUNDS 3
#define GROW_BURST_NS 1000000ull
#define GROW_PAUSE_NS 100000l
#define GROW_FLOOR_NS 300000000ull

struct grow_reader {
	struct bpfmap *map;
	uint64_t published; /* atomic: keys 0 .. published - 1 are in */
	int ready;          /* atomic: the floor is measured, lookups start */
	int done;           /* atomic */
	int cpu;
	bool fifo; /* the reader got SCHED_FIFO */
	uint64_t lookups, misses, max_ns, floor_ns;
	uint64_t hist[GROW_HIST];
};

/* After every GROW_BURST_NS of running, a pause (see the top): true if
 * it paused. */
static bool grow_pause(uint64_t *burst_end, uint64_t t)
{
	const struct timespec pause = { .tv_nsec = GROW_PAUSE_NS };

	if (t < *burst_end)
		return false;
	nanosleep(&pause, NULL);
	*burst_end = now_ns() + GROW_BURST_NS;
	return true;
}

/* The longest gap between two clock reads of an empty loop, pauses left
 * out. */
static uint64_t grow_floor(void)
{
	uint64_t last = now_ns(), end = last + GROW_FLOOR_NS, burst = last + GROW_BURST_NS;
	uint64_t most = 0;

	while (last < end) {
		uint64_t t = now_ns();

		if (t - last > most)
			most = t - last;
		last = grow_pause(&burst, t) ? now_ns() : t;
	}
	return most;
}

static void *grow_reader_thread(void *arg)
{
	struct grow_reader *g = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL, burst;
	struct sched_param sp = { .sched_priority = 1 };

	(void)bench_pin_self(g->cpu); /* as the producers: best effort */
	g->fifo = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	g->floor_ns = grow_floor();
	__atomic_store_n(&g->ready, 1, __ATOMIC_RELEASE);
	burst = now_ns() + GROW_BURST_NS;
	while (!__atomic_load_n(&g->done, __ATOMIC_ACQUIRE)) {
		uint64_t n = __atomic_load_n(&g->published, __ATOMIC_ACQUIRE), k, t0, dt;
		void *p;

		if (!n)
			continue;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % n;
		t0 = now_ns();
		bpfmap_read_lock();
		p = bpfmap_lookup(g->map, &k);
		bpfmap_read_unlock();
		dt = now_ns() - t0;
		g->misses += !p;
		g->lookups++;
		if (dt > g->max_ns)
			g->max_ns = dt;
		g->hist[dt ? 63 - __builtin_clzll(dt) : 0]++;
		(void)grow_pause(&burst, t0 + dt);
	}
	return NULL;
}

/* The smallest power of two of ns that @q of the lookups stay under. */
static double grow_quantile(const struct grow_reader *g, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)g->lookups), seen = 0;

	for (int i = 0; i < GROW_HIST; i++) {
		seen += g->hist[i];
		if (seen >= want)
			return ldexp(1.0, i + 1);
	}
	return NAN;
}

static int grow_one(enum bpfmap_type type, uint32_t n, int reader_cpu, struct rhash_grow_side *s)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = type == BPFMAP_TYPE_RHASH ? BPFMAP_F_NO_PREALLOC : 0);
	struct grow_reader g = { .cpu = reader_cpu };
	pthread_t t;
	uint64_t t0, v = 1;

	memset(s, 0, sizeof(*s));
	g.map = bpfmap_create(type, "grow", 8, 8, n, &o);
	if (!g.map)
		return -errno;
	if (pthread_create(&t, NULL, grow_reader_thread, &g)) {
		bpfmap_free(g.map);
		return -EAGAIN;
	}
	while (!__atomic_load_n(&g.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	t0 = now_ns();
	for (uint64_t k = 0; k < n; k++) {
		if (bpfmap_update_elem(g.map, &k, &v, BPFMAP_NOEXIST)) {
			s->insert_errors++;
			continue;
		}
		__atomic_store_n(&g.published, k + 1, __ATOMIC_RELEASE);
	}
	s->insert_s = (double)(now_ns() - t0) / 1e9;
	__atomic_store_n(&g.done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	s->lookups = g.lookups;
	s->misses = g.misses;
	s->max_us = (double)g.max_ns / 1e3;
	s->p99999_us = grow_quantile(&g, 0.99999) / 1e3;
	s->floor_us = (double)g.floor_ns / 1e3;
	s->fifo = g.fifo;
	bpfmap_free(g.map);
	return 0;
}

/* The median of each figure over @n rounds into @out (misses and errors
 * summed: every one counts). */
static void grow_medians(const struct rhash_grow_side *r, int n, struct rhash_grow_side *out)
{
	double ins[GROW_ROUNDS], mx[GROW_ROUNDS], p[GROW_ROUNDS], fl[GROW_ROUNDS];

	memset(out, 0, sizeof(*out));
	out->fifo = true;
	for (int i = 0; i < n; i++) {
		ins[i] = r[i].insert_s;
		mx[i] = r[i].max_us;
		p[i] = r[i].p99999_us;
		fl[i] = r[i].floor_us;
		out->lookups += r[i].lookups;
		out->misses += r[i].misses;
		out->insert_errors += r[i].insert_errors;
		out->fifo &= r[i].fifo;
	}
	out->insert_s = stats_median(ins, n);
	out->max_us = stats_median(mx, n);
	out->p99999_us = stats_median(p, n);
	out->floor_us = stats_median(fl, n);
}

int rhash_grow_measure(const struct bench_env *env, uint32_t n, struct rhash_grow_row *row)
{
	int cpu0 = bench_producer_cpu(env, 0) >= 0 ? bench_producer_cpu(env, 0) : 0;
	int reader = bench_spare_cpu(env) >= 0 ? bench_spare_cpu(env) : 1;
	struct rhash_grow_side rh[GROW_ROUNDS], hs[GROW_ROUNDS];
	double ratio[GROW_ROUNDS];
	int err = 0;

	(void)bench_pin_self(cpu0);
	row->n = n;
	row->rounds = GROW_ROUNDS;
	for (int i = 0; i < GROW_ROUNDS && !err; i++) {
		err = grow_one(BPFMAP_TYPE_RHASH, n, reader, &rh[i]);
		if (!err)
			err = grow_one(BPFMAP_TYPE_HASH, n, reader, &hs[i]);
		if (!err)
			ratio[i] = rh[i].insert_s / hs[i].insert_s;
	}
	if (err)
		return err;
	grow_medians(rh, GROW_ROUNDS, &row->rhash);
	grow_medians(hs, GROW_ROUNDS, &row->hash);
	row->ratio = stats_median(ratio, GROW_ROUNDS);
	return 0;
}

static void mem_settle(struct bpfmap *m, struct rhash_mem_row *row)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	uint64_t t0 = now_ns(), still = t0;
	size_t last = row->back_1k;

	for (;;) {
		uint64_t t;
		size_t now;

		nanosleep(&ms, NULL);
		t = now_ns();
		now = bpfmap_mem_usage(m);
		if (now != last) {
			last = now;
			still = t;
		}
		if (t - still >= 50000000 || t - t0 >= 2000000000)
			break;
	}
	row->back_1k_settled = last;
	row->settle_ms = (double)(still - t0) / 1e6;
}

int rhash_mem_measure(struct rhash_mem_row *row)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, "mem", 8, 8, 1000000, &o);
	uint64_t v = 0, k;

	memset(row, 0, sizeof(*row));
	if (!m)
		return -errno;
	for (k = 0; k < 1000; k++)
		bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST);
	row->at_1k = bpfmap_mem_usage(m);
	for (; k < 500000; k++)
		bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST);
	row->at_500k = bpfmap_mem_usage(m);
	for (k = 1000; k < 500000; k++)
		bpfmap_delete_elem(m, &k);
	row->back_1k = bpfmap_mem_usage(m);
	mem_settle(m, row);
	bpfmap_free(m);

	m = bpfmap_create(BPFMAP_TYPE_RHASH, "mem", 8, 8, 1000000, &o);
	if (!m)
		return -errno;
	for (k = 0; k < 1000000; k++) {
		double per;

		bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST);
		if (k + 1 < 1000)
			continue;
		per = (double)bpfmap_mem_usage(m) / (double)(k + 1);
		if (per > row->peak_per_elem) {
			row->peak_per_elem = per;
			row->peak_at = k + 1;
		}
	}
	row->per_elem_1m = (double)bpfmap_mem_usage(m) / 1e6;
	bpfmap_free(m);
	return 0;
}

void rhash_grow_print(FILE *f, const struct rhash_grow_row *row)
{
	fprintf(f, "  growth to %u, a reader looking up present keys (medians of %d rounds): "
		   "RHASH inserts %.3f s, HASH (preallocated) %.3f s: %.2fx\n",
		row->n, row->rounds, row->rhash.insert_s, row->hash.insert_s, row->ratio);
	fprintf(f, "    RHASH lookups %llu, missed %llu, longest %.1f us, 99.999%% under %.1f us; "
		   "HASH lookups %llu, missed %llu, longest %.1f us%s\n",
		(unsigned long long)row->rhash.lookups, (unsigned long long)row->rhash.misses,
		row->rhash.max_us, row->rhash.p99999_us, (unsigned long long)row->hash.lookups,
		(unsigned long long)row->hash.misses, row->hash.max_us,
		row->rhash.fifo ? " (reader SCHED_FIFO)" : " (reader not SCHED_FIFO: not permitted)");
	fprintf(f, "    the reader's CPU alone, an empty loop for %.1f s before each growth: "
		   "longest gap %.1f us (RHASH rounds), %.1f us (HASH rounds)\n",
		GROW_FLOOR_NS / 1e9, row->rhash.floor_us, row->hash.floor_us);
}

void rhash_mem_print(FILE *f, const struct rhash_mem_row *row)
{
	fprintf(f, "  memory, RHASH 8 + 8, max_entries 1M: 1K elements %.1f KiB; grown to 500K "
		   "%.1f MiB, deleted back to 1K %.1f KiB at once, %.1f KiB settled (%.0f ms)\n",
		row->at_1k / 1024.0, row->at_500k / 1048576.0, row->back_1k / 1024.0,
		row->back_1k_settled / 1024.0, row->settle_ms);
	fprintf(f, "    growth 1K -> 1M, after every insert: at most %.1f B an element (at %u), "
		   "%.1f B at 1M\n",
		row->peak_per_elem, row->peak_at, row->per_elem_1m);
}

static void grow_json(const char *name, const char *type, uint32_t n,
		      const struct rhash_grow_side *s)
{
	struct jw w;

	jw_begin(&w, stdout);
	jw_str(&w, "bench", name);
	jw_str(&w, "backend", "lib");
	jw_str(&w, "map_type", type);
	jw_u64(&w, "nr_entries", n);
	jw_num(&w, "insert_s", s->insert_s);
	jw_u64(&w, "lookups", s->lookups);
	jw_u64(&w, "misses", s->misses);
	jw_u64(&w, "errors", s->insert_errors);
	jw_num(&w, "lookup_max_us", s->max_us);
	jw_num(&w, "lookup_p99999_us", s->p99999_us);
	jw_num(&w, "empty_loop_max_gap_us", s->floor_us);
	jw_bool(&w, "reader_fifo", s->fifo);
	jw_end(&w);
}

static int rhash_grow_run(const struct bench *b, const struct bench_env *env,
			  struct bench_args *a)
{
	struct rhash_grow_row row;
	uint32_t n = a->nr_entries ? a->nr_entries : GROW_DEFAULT;
	int err;

	fprintf(env->out, "%s: %u 8-byte keys into an empty RHASH (and a preallocated HASH), "
			  "a reader on another CPU\n", b->name, n);
	err = rhash_grow_measure(env, n, &row);
	if (err) {
		fprintf(stderr, "%s: %s\n", b->name, strerror(-err));
		return 1;
	}
	rhash_grow_print(env->out, &row);
	if (env->json) {
		grow_json(b->name, "RHASH", n, &row.rhash);
		grow_json(b->name, "HASH", n, &row.hash);
	}
	return row.rhash.misses || row.rhash.insert_errors ? 1 : 0;
}

static int rhash_mem_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	struct rhash_mem_row row;
	int err;

	(void)a;
	fprintf(env->out, "%s: bpfmap_mem_usage() of RHASH 8 + 8, max_entries 1M\n", b->name);
	err = rhash_mem_measure(&row);
	if (err) {
		fprintf(stderr, "%s: %s\n", b->name, strerror(-err));
		return 1;
	}
	rhash_mem_print(env->out, &row);
	if (env->json) {
		struct jw w;

		jw_begin(&w, stdout);
		jw_str(&w, "bench", b->name);
		jw_str(&w, "backend", "lib");
		jw_str(&w, "map_type", "RHASH");
		jw_u64(&w, "mem_1k_bytes", row.at_1k);
		jw_u64(&w, "mem_500k_bytes", row.at_500k);
		jw_u64(&w, "mem_back_1k_bytes", row.back_1k);
		jw_u64(&w, "mem_back_1k_settled_bytes", row.back_1k_settled);
		jw_num(&w, "peak_bytes_per_elem", row.peak_per_elem);
		jw_u64(&w, "peak_at", row.peak_at);
		jw_num(&w, "bytes_per_elem_1m", row.per_elem_1m);
		jw_end(&w);
	}
	return 0;
}

const struct bench bench_rhash_grow = {
	.name = "rhash-grow",
	.summary = "RHASH from empty to nr_entries (1M) while a reader looks up present keys: "
		   "misses, longest lookup, insert time against a preallocated HASH",
	.run = rhash_grow_run,
	.available = bench_rhash_available,
};

const struct bench bench_rhash_mem = {
	.name = "rhash-mem",
	.summary = "RHASH 8 + 8 memory: 1K of 1M max, after 500K and back to 1K, per element "
		   "over a growth to 1M",
	.run = rhash_mem_run,
	.available = bench_rhash_available,
};
