/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork() while other threads are inside read-side sections, and while one
 * waits for a grace period (issue 14, sixth defect: the child inherited
 * liburcu's grace-period lock held by a thread that does not exist in it,
 * and its first grace period waited for ever).  Public API only, so the same
 * source builds against any version of the library.  The child gets 20 s
 * for work that needs grace periods and deferred reclamation on inherited
 * maps and new ones: lookup_and_delete on a chained map, churn on a flat one
 * until deleted slots must be reclaimed, batch lookup-and-delete, an RHASH
 * grown and shrunk, evicting inserts into LRU maps (common and per-CPU
 * lists), churn on a PERCPU_HASH, bpfmap_free.  A child that hangs is killed
 * (SIGKILL: liburcu blocks every other signal while it waits for a grace
 * period) and the test fails.  Beside bpfmap's API it calls liburcu's
 * barrier, to start without pending callbacks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "test_util.h"

#define READERS 2
#define KEYS 2048

static int holding;	 /* atomic: readers inside their sections */
static int release_them; /* atomic */

/* A reader that leaves its section after 300 ms by itself: fork()'s prepare
 * handler waits for the grace period that waits for it. */
static void *slow_reader(void *arg)
{
	(void)arg;
	bpfmap_read_lock();
	__atomic_add_fetch(&holding, 1, __ATOMIC_SEQ_CST);
	usleep(300 * 1000);
	bpfmap_read_unlock();
	return NULL;
}

/* A writer whose first lookup_and_delete on a chained map waits for a grace
 * period (the slow reader's). */
static void *gp_waiter(void *arg)
{
	uint32_t k = KEYS - 1;
	uint64_t v;

	if (bpfmap_lookup_and_delete_elem(arg, &k, &v))
		abort();
	return NULL;
}

static void *reader(void *arg)
{
	struct bpfmap *m = arg;
	uint32_t k = 1;

	bpfmap_read_lock();
	(void)bpfmap_lookup(m, &k);
	__atomic_add_fetch(&holding, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&release_them, __ATOMIC_SEQ_CST))
		usleep(100);
	bpfmap_read_unlock();
	return NULL;
}

static struct bpfmap *filled(uint32_t flags, uint32_t n)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, KEYS, flags);

	for (uint32_t k = 0; k < n; k++) {
		uint64_t v = k;

		if (bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST))
			abort();
	}
	return m;
}

static struct bpfmap *rhash_filled(void)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 4, 8, 1u << 20, &o);

	if (!m)
		abort();
	for (uint32_t k = 0; k < KEYS; k++) {
		uint64_t v = k;

		if (bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST))
			abort();
	}
	return m;
}

/* An inherited RHASH grown, walked and shrunk again in the child: resizes,
 * their deferred frees and the arena's reclamation all work there. */
static int child_rhash(struct bpfmap *rh)
{
	uint32_t k, next, n = 0;
	uint64_t v = 0;

	for (k = KEYS; k < KEYS + 40000; k++)
		if (bpfmap_update_elem(rh, &k, &v, BPFMAP_NOEXIST))
			return 6;
	for (int ret = bpfmap_get_next_key(rh, NULL, &next); !ret;
	     ret = bpfmap_get_next_key(rh, &k, &next)) {
		k = next;
		n++;
	}
	if (n != KEYS + 40000)
		return 7;
	for (k = KEYS; k < KEYS + 40000; k++)
		if (bpfmap_delete_elem(rh, &k))
			return 8;
	bpfmap_free(rh);
	return 0;
}

/* The other types, inherited full: LRU_HASH with the common LRU (flat
 * table) and with per-CPU lists (chained), and PERCPU_HASH. */
#define TYPED 3
static struct bpfmap *typed[TYPED];

static void typed_fill(void)
{
	static const struct {
		enum bpfmap_type type;
		uint32_t flags;
	} t[TYPED] = {
		{ BPFMAP_TYPE_LRU_HASH, 0 },
		{ BPFMAP_TYPE_LRU_HASH, BPFMAP_F_NO_COMMON_LRU },
		{ BPFMAP_TYPE_PERCPU_HASH, 0 },
	};
	uint32_t ncpus = (uint32_t)bpfmap_num_possible_cpus();
	uint64_t *v = calloc(ncpus, sizeof(*v));

	if (!v)
		abort();
	for (int i = 0; i < TYPED; i++) {
		typed[i] = must_create(t[i].type, 4, 8, KEYS, t[i].flags);
		for (uint32_t k = 0; k < KEYS; k++)
			if (bpfmap_update_elem(typed[i], &k, v, BPFMAP_NOEXIST))
				abort();
	}
	free(v);
}

static void typed_free(void)
{
	for (int i = 0; i < TYPED; i++)
		bpfmap_free(typed[i]);
}

/* In the child: the LRU maps evict for every new key (their locks, queues
 * and reclamation), the per-CPU map churns, then all are freed. */
static int child_typed(void)
{
	uint32_t ncpus = (uint32_t)bpfmap_num_possible_cpus(), k;
	uint64_t v[64] = { 0 };

	if (ncpus > 64)
		return 0; /* the value buffer: skip, the other checks still run */
	for (int i = 0; i < 2; i++) {
		for (k = KEYS; k < 11 * KEYS; k++)
			if (bpfmap_update_elem(typed[i], &k, v, BPFMAP_ANY))
				return 9;
		if (walk_count(typed[i], 4) > KEYS || bpfmap_lookup_elem(typed[i], &(uint32_t){ k - 1 }, v))
			return 10;
	}
	for (uint32_t r = 0; r < 10 * KEYS; r++) {
		k = r % KEYS;
		if (bpfmap_delete_elem(typed[2], &k) || bpfmap_update_elem(typed[2], &k, v, BPFMAP_NOEXIST))
			return 11;
	}
	typed_free();
	return 0;
}

/* The child's work; exit status 0 if every call answered as it should. */
static int child_work(struct bpfmap *chained, struct bpfmap *flat, struct bpfmap *rh)
{
	int err = child_rhash(rh);

	if (!err)
		err = child_typed();
	if (err)
		return err;
	uint64_t v;
	uint32_t k, keys[64], cursor, count;
	uint64_t vals[64];

	/* A chained map's lookup_and_delete waits for a grace period. */
	for (k = 0; k < 100; k++)
		if (bpfmap_lookup_and_delete_elem(chained, &k, &v) || v != k)
			return 1;
	/* Churn a full flat map until its deleted slots must be reclaimed. */
	for (uint32_t r = 0; r < 20 * KEYS; r++) {
		k = r % KEYS;
		if (bpfmap_delete_elem(flat, &k))
			return 2;
		v = r;
		if (bpfmap_update_elem(flat, &k, &v, BPFMAP_NOEXIST))
			return 3;
	}
	count = 64;
	if (bpfmap_lookup_and_delete_batch(flat, NULL, &cursor, keys, vals, &count, NULL) < 0 &&
	    errno != ENOENT)
		return 4;
	/* A new map, used and freed. */
	struct bpfmap *m = filled(BPFMAP_F_NO_PREALLOC, KEYS);

	for (k = 0; k < KEYS; k++)
		if (bpfmap_delete_elem(m, &k))
			return 5;
	bpfmap_free(m);
	bpfmap_free(chained);
	bpfmap_free(flat);
	return 0;
}

static void test_fork_with_readers(void **state)
{
	(void)state;
	struct bpfmap *chained = filled(BPFMAP_F_NO_PREALLOC, KEYS);
	struct bpfmap *flat = filled(0, KEYS);
	struct bpfmap *rh = rhash_filled();
	pthread_t t[READERS];
	pid_t pid;

	typed_fill();
	/* The fills' reclamation done first (RHASH's growth retires tables):
	 * with callbacks pending, fork() waits for the other threads' sections
	 * (README, "fork()"), and these readers hold theirs until after it.
	 * Under load the test hung so (CI, ASan build). */
	urcu_bp_barrier();
	holding = release_them = 0;
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, flat), 0);
	while (__atomic_load_n(&holding, __ATOMIC_SEQ_CST) < READERS)
		usleep(100);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_work(chained, flat, rh));
	__atomic_store_n(&release_them, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < READERS; i++)
		pthread_join(t[i], NULL);
	reap_child(pid, 20);
	/* The parent's maps are untouched by the child's work. */
	uint32_t k = 5;
	uint64_t v;

	assert_int_equal(bpfmap_lookup_elem(chained, &k, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(walk_count(rh, 4), KEYS);
	bpfmap_free(chained);
	bpfmap_free(flat);
	bpfmap_free(rh);
	typed_free();
}

static void test_fork_during_grace_period(void **state)
{
	(void)state;
	struct bpfmap *chained = filled(BPFMAP_F_NO_PREALLOC, KEYS);
	struct bpfmap *flat = filled(0, KEYS);
	struct bpfmap *other = filled(BPFMAP_F_NO_PREALLOC, KEYS);
	struct bpfmap *rh = rhash_filled();
	pthread_t r, w;
	pid_t pid;

	typed_fill();
	holding = 0;
	assert_int_equal(pthread_create(&r, NULL, slow_reader, NULL), 0);
	while (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST))
		usleep(100);
	assert_int_equal(pthread_create(&w, NULL, gp_waiter, other), 0);
	usleep(100 * 1000); /* w is in its grace period now */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_work(chained, flat, rh));
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	reap_child(pid, 20);
	bpfmap_free(chained);
	bpfmap_free(flat);
	bpfmap_free(other);
	bpfmap_free(rh);
	typed_free();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_fork_with_readers),
		test_entry(test_fork_during_grace_period),
	};
	return run_test_group(tests);
}
