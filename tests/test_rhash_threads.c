/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_RHASH with threads (also run under TSan):
 *  - walks by get_next_key and by batches while another thread inserts
 *    enough to force several grows and deletes enough to force shrinks:
 *    every element present for the whole walk comes back exactly once, and
 *    none twice;
 *  - a growth from empty while another thread looks up the keys inserted so
 *    far, non-stop: no miss, and no copy-out torn by a concurrent overwrite;
 *  - inserts from several threads into a map that fills: exactly
 *    max_entries succeed, the rest answer -E2BIG, also with deletes mixed in;
 *  - a full map turning over while the callback worker is held.
 * The fixed interleavings (a lookup stopped inside a chain that a resize
 * splits, a copy-out stopped before its check) are in test_races.c.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_gate.h"
#include "test_util.h"
#include "tables/rtab.h"

#ifdef __SANITIZE_THREAD__
#define SCALE 8
#else
#define SCALE 1
#endif

static struct bpfmap *rhash(uint32_t ks, uint32_t vs, uint32_t max)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, "rh", ks, vs, max, &o);

	assert_non_null(m);
	return m;
}

static uint64_t resizes(struct bpfmap *m)
{
	return rtab_resizes(to_rtab(m));
}

/* ---- walks under resizes ------------------------------------------------- */

#define STABLE 4000u       /* keys 0, 2, 4, ...: present for the whole test */
#define CHURN (60000u / SCALE) /* odd keys, inserted then deleted, in rounds */

struct churn {
	struct bpfmap *m;
	int stop; /* atomic */
	uint64_t rounds;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	uint64_t v = 1;

	test_pin_cpu(1);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		for (uint64_t i = 0; i < CHURN; i++) {
			uint64_t k = 2 * i + 1;

			assert_int_equal(bpfmap_update_elem(c->m, &k, &v, BPFMAP_NOEXIST), 0);
		}
		for (uint64_t i = 0; i < CHURN; i++) {
			uint64_t k = 2 * i + 1;

			assert_int_equal(bpfmap_delete_elem(c->m, &k), 0);
		}
		__atomic_fetch_add(&c->rounds, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* One walk's keys: each stable key once, no key twice. */
struct seen {
	uint8_t *mark;
	uint32_t stable;
};

static void seen_add(struct seen *s, uint64_t k)
{
	assert_true(k < 2 * (uint64_t)CHURN + 2 * STABLE);
	assert_int_equal(s->mark[k], 0);
	s->mark[k] = 1;
	if (!(k & 1))
		s->stable++;
}

static void walk_by_next_key(struct bpfmap *m, struct seen *s)
{
	uint64_t k, next;
	int ret = bpfmap_get_next_key(m, NULL, &k);

	while (ret == 0) {
		seen_add(s, k);
		ret = bpfmap_get_next_key(m, &k, &next);
		k = next;
	}
	assert_int_equal(ret, -ENOENT);
}

static void walk_by_batches(struct bpfmap *m, struct seen *s, uint32_t chunk)
{
	uint64_t keys[64], vals[64], cursor;
	uint64_t *in = NULL;
	int ret;

	do {
		uint32_t count = chunk;

		ret = bpfmap_lookup_batch(m, in, &cursor, keys, vals, &count, NULL);
		assert_true(ret == 0 || ret == -ENOENT);
		for (uint32_t i = 0; i < count; i++) {
			seen_add(s, keys[i]);
			/* Values as stored: the stable keys' are the key. */
			if (!(keys[i] & 1))
				assert_int_equal(vals[i], keys[i]);
		}
		in = &cursor;
	} while (ret == 0);
}

static void test_walks_under_resizes(void **state)
{
	struct bpfmap *m = rhash(8, 8, 1u << 20);
	struct churn c = { .m = m };
	size_t span = 2 * (size_t)CHURN + 2 * STABLE;
	uint64_t before;
	pthread_t t;
	int walks = 0;

	(void)state;
	for (uint64_t i = 0; i < STABLE; i++) {
		uint64_t k = 2 * i;

		assert_int_equal(bpfmap_update_elem(m, &k, &k, BPFMAP_NOEXIST), 0);
	}
	before = resizes(m);
	test_pin_cpu(0);
	assert_int_equal(pthread_create(&t, NULL, churn_thread, &c), 0);
	/* Walk until the churn has run two full rounds (each round grows the
	 * table several times and shrinks it back) and resizes happened. */
	while (__atomic_load_n(&c.rounds, __ATOMIC_ACQUIRE) < 2 || walks < 4) {
		struct seen s = { calloc(span, 1), 0 };

		assert_non_null(s.mark);
		if (walks % 2)
			walk_by_batches(m, &s, 1 + (uint32_t)walks % 64);
		else
			walk_by_next_key(m, &s);
		assert_int_equal(s.stable, STABLE);
		free(s.mark);
		walks++;
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	test_unpin();
	/* 4000 -> 64000 elements (7500 under TSan) and back: two grows and
	 * two shrinks a round at the least. */
	assert_true(resizes(m) - before >= 4);
	print_message("%d walks over %lu churn rounds, %lu resizes\n", walks,
		      (unsigned long)c.rounds, (unsigned long)(resizes(m) - before));
	bpfmap_free(m);
}

/* ---- lookups during growth ----------------------------------------------- */

struct grow {
	struct bpfmap *m;
	uint64_t n;    /* atomic: keys 0 .. n - 1 are in */
	uint64_t goal;
	int done;      /* atomic */
};

/* Values [x, ~x]: a torn copy shows the two halves disagree. */
static void *grow_thread(void *arg)
{
	struct grow *g = arg;

	test_pin_cpu(1);
	for (uint64_t k = 0; k < g->goal; k++) {
		uint64_t v[2] = { k, ~k };

		assert_int_equal(bpfmap_update_elem(g->m, &k, v, BPFMAP_NOEXIST), 0);
		__atomic_store_n(&g->n, k + 1, __ATOMIC_RELEASE);
		/* Overwrite an older key in place now and then. */
		if (k % 7 == 0) {
			uint64_t o = k / 2, w[2] = { o + k, ~(o + k) };

			assert_int_equal(bpfmap_update_elem(g->m, &o, w, BPFMAP_EXIST), 0);
		}
	}
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_lookups_during_growth(void **state)
{
	struct grow g = { .m = rhash(8, 16, 1u << 20), .goal = 400000 / SCALE };
	uint64_t x = 0x9e3779b97f4a7c15ULL, lookups = 0, before = resizes(g.m);
	pthread_t t;

	(void)state;
	test_pin_cpu(0);
	assert_int_equal(pthread_create(&t, NULL, grow_thread, &g), 0);
	while (!__atomic_load_n(&g.done, __ATOMIC_ACQUIRE)) {
		uint64_t n = __atomic_load_n(&g.n, __ATOMIC_ACQUIRE), v[2], *p;

		if (!n)
			continue;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t k = x % n;

		assert_int_equal(bpfmap_lookup_elem(g.m, &k, v), 0);
		assert_int_equal(v[0], ~v[1]);
		bpfmap_read_lock();
		p = bpfmap_lookup(g.m, &k);
		assert_non_null(p);
		bpfmap_read_unlock();
		lookups++;
	}
	pthread_join(t, NULL);
	test_unpin();
	assert_true(resizes(g.m) - before >= 4);
	print_message("%lu lookups, no miss, over %lu resizes\n", (unsigned long)lookups,
		      (unsigned long)(resizes(g.m) - before));
	bpfmap_free(g.m);
}

/* ---- exact -E2BIG ---------------------------------------------------------- */

#define FILL_MAX 2000u

struct filler {
	struct bpfmap *m;
	uint64_t base;
	uint32_t ok, full;
	bool churn; /* delete and reinsert own keys on the way */
};

static void *fill_thread(void *arg)
{
	struct filler *f = arg;
	uint64_t v = 0;

	for (uint64_t i = 0; i < FILL_MAX; i++) {
		uint64_t k = f->base + i;
		int ret = bpfmap_update_elem(f->m, &k, &v, BPFMAP_NOEXIST);

		if (ret == 0) {
			f->ok++;
			if (f->churn && i % 3 == 0) {
				/* The room may go to the other thread meanwhile. */
				assert_int_equal(bpfmap_delete_elem(f->m, &k), 0);
				ret = bpfmap_update_elem(f->m, &k, &v, BPFMAP_NOEXIST);
				if (ret) {
					assert_int_equal(ret, -E2BIG);
					f->ok--;
				}
			}
		} else {
			assert_int_equal(ret, -E2BIG);
			f->full++;
		}
	}
	return NULL;
}

static void check_exact_full(bool churn)
{
	for (int round = 0; round < 20 / SCALE + 1; round++) {
		struct bpfmap *m = rhash(8, 8, FILL_MAX);
		struct filler f[2] = { { m, 0, 0, 0, churn }, { m, 1u << 20, 0, 0, churn } };
		pthread_t t[2];

		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&t[i], NULL, fill_thread, &f[i]), 0);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		/* Full at the end: a delete's room is refilled by its own
		 * reinsert or by the other thread's insert. */
		assert_int_equal(f[0].ok + f[1].ok, FILL_MAX);
		assert_int_equal(walk_count(m, 8), FILL_MAX);
		bpfmap_free(m);
	}
}

static void test_exact_full(void **state)
{
	(void)state;
	check_exact_full(false);
	check_exact_full(true);
}

/*
 * Two threads delete and insert again their own few keys, outside any
 * read-side section, in a map that holds at most 8 of its 64: never
 * -ENOMEM.  The element arena fills with deleted elements that wait for
 * their grace period; an insert that waited once and then found the
 * other thread had taken what came back answered -ENOMEM (about 400 of
 * 600,000 inserts) before it waited for as long as room takes.
 */
#define CHURN_KEYS 4
#define CHURN_ITERS (200000 / SCALE)

struct churn_arg {
	struct bpfmap *m;
	uint64_t base;
	long failed;
};

static void *churn_own_keys(void *p)
{
	struct churn_arg *a = p;
	uint64_t v = 7;

	for (long i = 0; i < CHURN_ITERS; i++) {
		uint64_t k = a->base + (uint64_t)(i % CHURN_KEYS);
		int rc = bpfmap_delete_elem(a->m, &k);

		if (rc && rc != -ENOENT)
			a->failed++;
		if (bpfmap_update_elem(a->m, &k, &v, BPFMAP_NOEXIST))
			a->failed++;
	}
	return NULL;
}

static void test_churn_never_enomem(void **state)
{
	struct bpfmap *m = rhash(8, 8, 64);
	struct churn_arg a[2] = { { m, 0, 0 }, { m, 1000, 0 } };
	pthread_t t[2];

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn_own_keys, &a[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(a[0].failed + a[1].failed, 0);
	assert_int_equal(walk_count(m, 8), 2 * CHURN_KEYS);
	bpfmap_free(m);
}

/*
 * A full map turning over takes its deleted elements back itself, after one
 * grace period, when its arena runs dry: it does not wait for liburcu's
 * callback worker.  That worker runs callbacks about 10 ms apart, and a
 * 1024-entry map that waited for it every max(1024, max_entries / 4)
 * deletes took 10 us a pair instead of 0.1.  Here a callback of the test's
 * own holds the worker for the whole churn of 8 x max_entries pairs: an
 * insert that waited for the worker would never return (test_gate.h's
 * watchdog).
 */
struct turnover {
	struct bpfmap *m;
	uint32_t n;
	int failed, done; /* done: test_gate.h's flag */
};

static void *turn_over(void *arg)
{
	struct turnover *a = arg;
	uint64_t v = 0;

	for (uint64_t i = 0; i < 8 * (uint64_t)a->n; i++) {
		uint64_t k = i;

		if (bpfmap_delete_elem(a->m, &k))
			a->failed++;
		k = i + a->n;
		if (bpfmap_update_elem(a->m, &k, &v, BPFMAP_NOEXIST))
			a->failed++;
	}
	set_flag(&a->done);
	return NULL;
}

static void test_turnover_without_worker(void **state)
{
	struct turnover a = { .m = rhash(8, 8, 1024), .n = 1024 };
	struct gate g = { 0 };
	pthread_t t;
	uint64_t v = 0;
	bool done;

	(void)state;
	for (uint64_t k = 0; k < a.n; k++)
		assert_int_equal(bpfmap_update_elem(a.m, &k, &v, BPFMAP_NOEXIST), 0);
	rcu_defer(&g.rcu, gate_cb);
	gate_wait_reached(&g);
	assert_int_equal(pthread_create(&t, NULL, turn_over, &a), 0);
	done = wait_flag(&a.done);
	gate_release(&g); /* lets a stuck insert go */
	pthread_join(t, NULL);
	assert_true(done);
	assert_int_equal(a.failed, 0);
	assert_int_equal(walk_count(a.m, 8), a.n);
	bpfmap_free(a.m);
	rcu_wait_deferred();
}

/*
 * Deletes outside any read-side section, inserts inside one-op sections (a
 * program inserting, a control plane deleting): the inserts cannot wait
 * for a grace period, so the deletes must take retired elements back before
 * the arena runs dry.  With the worker held, nothing else does: this
 * answered -ENOMEM at the 1056th insert (a 64-entry map, 1024 + 32 spare).
 */
static void test_section_inserts_outside_deletes(void **state)
{
	struct bpfmap *m = rhash(8, 8, 64);
	struct gate g = { 0 };
	uint64_t v = 0, id = 0;
	int failed_at = -1;

	(void)state;
	for (; id < 32; id++)
		assert_int_equal(bpfmap_update_elem(m, &id, &v, BPFMAP_NOEXIST), 0);
	rcu_defer(&g.rcu, gate_cb);
	gate_wait_reached(&g);
	for (int i = 0; i < 20000 && failed_at < 0; i++, id++) {
		uint64_t old = id - 32;
		int ret;

		assert_int_equal(bpfmap_delete_elem(m, &old), 0);
		bpfmap_read_lock();
		ret = bpfmap_update(m, &id, &v, BPFMAP_NOEXIST);
		bpfmap_read_unlock();
		if (ret)
			failed_at = i;
	}
	gate_release(&g);
	assert_int_equal(failed_at, -1);
	assert_int_equal(walk_count(m, 8), 32);
	bpfmap_free(m);
	rcu_wait_deferred();
}

/*
 * The same in bulk: a control plane deletes 6000 of a map's keys at once,
 * outside sections, then programs insert inside one-op sections up to
 * max_entries.  A delete leaves the arena's room as it was (a live element
 * becomes a retired one), so deletes that settled only on low room never
 * did, and with the worker held all 6000 stayed retired: the 4241st
 * insert answered -ENOMEM with 4240 keys of 8192 in the map (an
 * adversarial helper; with the worker running, for 1-14 ms).
 */
static void test_bulk_deletes_then_section_inserts(void **state)
{
	const uint32_t n = 8192, bulk = 6000;
	struct bpfmap *m = rhash(8, 8, n);
	struct gate g = { 0 };
	uint64_t v = 0, k;
	int failed_at = -1, ret = 0;

	(void)state;
	for (k = 0; k < bulk; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	rcu_defer(&g.rcu, gate_cb);
	gate_wait_reached(&g);
	for (k = 0; k < bulk; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	for (uint32_t i = 0; i < n && failed_at < 0; i++) {
		k = bulk + i;
		bpfmap_read_lock();
		ret = bpfmap_update(m, &k, &v, BPFMAP_NOEXIST);
		bpfmap_read_unlock();
		if (ret)
			failed_at = (int)i;
	}
	k = 2 * n; /* one more: the map is full now */
	bpfmap_read_lock();
	ret = bpfmap_update(m, &k, &v, BPFMAP_NOEXIST);
	bpfmap_read_unlock();
	gate_release(&g);
	assert_int_equal(failed_at, -1);
	assert_int_equal(ret, -E2BIG);
	assert_int_equal(walk_count(m, 8), n);
	bpfmap_free(m);
	rcu_wait_deferred();
}

/*
 * The same from three threads, while a reader in its section holds every
 * grace period: the first deleter to find the room low waits in its
 * settle, and the others must not insert the rest of the room away
 * meanwhile.  A flag that only one deleter saw at a time let them: the
 * third thread's inserts answered -ENOMEM (and 0.02-0.2% of the pairs of
 * three or four threads on two CPUs, without the held reader).
 */
struct settle_arg {
	struct bpfmap *m;
	uint64_t first; /* this thread's keys: first + i */
	int iters;      /* atomic: pairs done */
	int enomem;     /* atomic */
	int bad;        /* other failures */
	int done;
};

static void *delete_then_insert(void *arg)
{
	struct settle_arg *a = arg;
	uint64_t v = 0;

	for (int i = 0; i < 3000; i++) {
		uint64_t old = a->first + i, key = old + 16;
		int ret;

		a->bad += bpfmap_delete_elem(a->m, &old) != 0;
		bpfmap_read_lock();
		ret = bpfmap_update(a->m, &key, &v, BPFMAP_NOEXIST);
		bpfmap_read_unlock();
		if (ret == -ENOMEM)
			__atomic_fetch_add(&a->enomem, 1, __ATOMIC_RELAXED);
		else
			a->bad += ret != 0;
		__atomic_store_n(&a->iters, i + 1, __ATOMIC_RELEASE);
	}
	set_flag(&a->done);
	return NULL;
}

struct holder {
	int in, go;
};

static void *hold_section(void *arg)
{
	struct holder *h = arg;

	bpfmap_read_lock();
	set_flag(&h->in);
	(void)wait_flag(&h->go);
	bpfmap_read_unlock();
	return NULL;
}

/* Until @a stops making progress (waits in a settle) or fails. */
static void wait_stalled(struct settle_arg *a)
{
	struct timespec ms20 = { 0, 20000000 };
	int last = -1;

	for (int i = 0; i < GATE_WATCHDOG_S * 50; i++) {
		int now = __atomic_load_n(&a->iters, __ATOMIC_ACQUIRE);

		if (now == last || __atomic_load_n(&a->enomem, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&a->done, __ATOMIC_ACQUIRE))
			return;
		last = now;
		nanosleep(&ms20, NULL);
	}
}

static void test_deleters_settle_together(void **state)
{
	struct bpfmap *m = rhash(8, 8, 64);
	struct settle_arg a[3];
	struct holder h = { 0 };
	pthread_t t[3], ht;
	uint64_t v = 0;

	(void)state;
	for (int i = 0; i < 3; i++) {
		a[i] = (struct settle_arg){ .m = m, .first = (uint64_t)i << 32 };
		for (uint64_t k = a[i].first; k < a[i].first + 16; k++)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(pthread_create(&ht, NULL, hold_section, &h), 0);
	assert_true(wait_flag(&h.in));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_create(&t[i], NULL, delete_then_insert, &a[i]), 0);
		wait_stalled(&a[i]);
	}
	set_flag(&h.go);
	pthread_join(ht, NULL);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].enomem, 0);
		assert_int_equal(a[i].bad, 0);
	}
	assert_int_equal(walk_count(m, 8), 48);
	bpfmap_free(m);
	rcu_wait_deferred();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_walks_under_resizes),
		test_entry(test_lookups_during_growth),
		test_entry(test_exact_full),
		test_entry(test_churn_never_enomem),
		test_entry(test_turnover_without_worker),
		test_entry(test_section_inserts_outside_deletes),
		test_entry(test_bulk_deletes_then_section_inserts),
		test_entry(test_deleters_settle_together),
	};

	return run_test_group(tests);
}
