/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork() while another thread holds a lock that the deferred reclamation
 * callbacks take (sync/fork_guard.h).  A writer of map W stops inside its
 * delete, holding the lock under which it hands the deleted element over to
 * reclamation (HOOK_RETIRE_LOCKED), and stays there 300 ms while the main
 * thread forks.  The child must find that lock free: it takes W's deleted
 * elements back itself (under the very lock the callbacks take), waits for
 * the deferred callbacks, and creates, churns and frees a map of its own.
 * Without the guards the fork copied the lock held and the child hung
 * there for ever.  RHASH, and HASH on the chained table (NO_PREALLOC).
 *
 * And fork() while another thread is inside a BPFMAP_F_LOCK copy-out of a
 * key: the copy takes no lock (sync/spin_lock.h), so the child's own
 * F_LOCK lookup and update of that key go through.  While such copies
 * took the value's lock, 36-53% of the children of a fork beside a thread
 * looping them hung.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "test_util.h"
#include "tables/chain.h"
#include "tables/rtab.h"
#include "util/test_hook.h"

#define KEYS 64

static int armed = -1; /* atomic: the next hook at this point stops */
static int holding;	/* atomic: a thread stopped there */

static int raise_at_fork; /* atomic: HOOK_FORK_PREPARED raises SIGUSR1 once */

static void hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (point == HOOK_FORK_PREPARED) {
		if (__atomic_exchange_n(&raise_at_fork, 0, __ATOMIC_SEQ_CST))
			raise(SIGUSR1);
		return;
	}
	if ((int)point != __atomic_load_n(&armed, __ATOMIC_SEQ_CST) ||
	    __atomic_exchange_n(&armed, -1, __ATOMIC_SEQ_CST) != (int)point)
		return;
	__atomic_store_n(&holding, 1, __ATOMIC_SEQ_CST);
	usleep(300 * 1000);
}

/* Wait for a thread to stop at the armed point, 5 s at most. */
static void wait_holding(void)
{
	for (int i = 0; i < 50000 && !__atomic_load_n(&holding, __ATOMIC_SEQ_CST); i++)
		usleep(100);
	if (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST))
		fail_msg("no thread reached the hook point in 5 s");
}

static void *delete_one(void *map)
{
	uint32_t k = 1;

	__atomic_store_n(&armed, HOOK_RETIRE_LOCKED, __ATOMIC_SEQ_CST);
	if (bpfmap_delete_elem(map, &k))
		abort();
	return NULL;
}

/* The child's work: nonzero exit on a wrong answer, a hang if a lock is held. */
static int child_work(struct bpfmap *w, enum bpfmap_type type)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m;

	if (type == BPFMAP_TYPE_RHASH)
		rtab_reclaim_wait(to_rtab(w));
	else if (!chain_reclaim_now(to_chain(w)))
		return 2;
	urcu_bp_barrier();
	m = bpfmap_create(type, "child", 4, 8, KEYS, &opts);
	if (!m)
		return 3;
	for (uint32_t round = 0; round < 8; round++)
		for (uint32_t k = 0; k < KEYS; k++) {
			uint64_t v = k;

			if (bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST) ||
			    bpfmap_delete_elem(m, &k))
				return 4;
		}
	bpfmap_free(m);
	urcu_bp_barrier();
	return 0;
}

/* Start @stopper on @map, wait until it stops at the armed hook, and fork
 * meanwhile: the child exits with @child's answer, which the parent reaps. */
static void fork_while_stopped(struct bpfmap *map, void *(*stopper)(void *),
			       int (*child)(struct bpfmap *, enum bpfmap_type),
			       enum bpfmap_type type)
{
	pthread_t t;
	pid_t pid;

	urcu_bp_barrier(); /* no callbacks pending: fork() waits for them */
	holding = 0;
	assert_int_equal(pthread_create(&t, NULL, stopper, map), 0);
	wait_holding();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child(map, type));
	pthread_join(t, NULL);
	reap_child(pid, 10);
}

static void fork_beside_retire(enum bpfmap_type type)
{
	struct bpfmap *w = must_create(type, 4, 8, 1024, BPFMAP_F_NO_PREALLOC);

	for (uint32_t k = 0; k < KEYS; k++) {
		uint64_t v = k;

		assert_int_equal(bpfmap_update_elem(w, &k, &v, BPFMAP_NOEXIST), 0);
	}
	fork_while_stopped(w, delete_one, child_work, type);
	assert_int_equal(walk_count(w, 4), KEYS - 1);
	bpfmap_free(w);
}

static void test_fork_beside_rhash_retire(void **state)
{
	(void)state;
	fork_beside_retire(BPFMAP_TYPE_RHASH);
}

static void test_fork_beside_chain_retire(void **state)
{
	(void)state;
	fork_beside_retire(BPFMAP_TYPE_HASH);
}

struct locked_value {
	uint64_t a;
	struct bpfmap_spin_lock lock;
	uint32_t pad;
	uint64_t b;
};

static void *flock_copy(void *map)
{
	uint32_t k = 1;
	struct locked_value out;

	__atomic_store_n(&armed, HOOK_FLOCK_COPIED, __ATOMIC_SEQ_CST);
	if (bpfmap_lookup_elem_flags(map, &k, &out, BPFMAP_F_LOCK) || out.a != out.b)
		abort();
	return NULL;
}

static int flock_child(struct bpfmap *map, enum bpfmap_type type)
{
	uint32_t k = 1;
	struct locked_value v = { .a = 7, .b = 7 }, out;

	(void)type;
	if (bpfmap_lookup_elem_flags(map, &k, &out, BPFMAP_F_LOCK) || out.a != out.b)
		return 2;
	if (bpfmap_update_elem(map, &k, &v, BPFMAP_F_LOCK))
		return 3;
	if (bpfmap_lookup_elem_flags(map, &k, &out, BPFMAP_F_LOCK) || out.a != 7 || out.b != 7)
		return 4;
	return 0;
}

static void test_fork_beside_flock_copy(void **state)
{
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_HASH, BPFMAP_TYPE_RHASH };
	static const uint32_t flags[] = { 0, BPFMAP_F_NO_PREALLOC };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		enum bpfmap_type type = types[i / 2];
		uint32_t f = flags[i == 0 ? 0 : 1];
		BPFMAP_CREATE_OPTS(opts, .map_flags = f,
				   .lock_off = offsetof(struct locked_value, lock));
		struct bpfmap *map = bpfmap_create(type, "flock", 4, sizeof(struct locked_value),
						   64, &opts);
		struct locked_value v = { .a = 1, .b = 1 };
		uint32_t k = 1;

		assert_non_null(map);
		assert_int_equal(bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST), 0);
		fork_while_stopped(map, flock_copy, flock_child, type);
		bpfmap_free(map);
	}
}

static struct bpfmap *sig_map;
static int sig_ran; /* atomic: 1 when the handler's delete and insert worked */

static void delete_insert(int sig)
{
	uint32_t k = 1;
	uint64_t v = 2;

	(void)sig;
	__atomic_store_n(&sig_ran,
			 !bpfmap_delete_elem(sig_map, &k) &&
					 !bpfmap_update_elem(sig_map, &k, &v, BPFMAP_NOEXIST)
				 ? 1
				 : 2,
			 __ATOMIC_SEQ_CST);
}

/*
 * A signal raised inside fork()'s prepare handler, after it took the
 * maps' reclamation locks, whose handler deletes and inserts a key (a
 * timer's handler updating a map while the program forks).  The handler
 * waits until fork()'s handlers are done and runs in the parent then (the
 * child inherits no pending signal); it spun for ever on the lock its own
 * thread held before (an adversarial probe's, on the chained table and
 * RHASH).
 */
static void test_signal_inside_fork(void **state)
{
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_HASH, BPFMAP_TYPE_RHASH };
	struct sigaction sa = { .sa_handler = delete_insert }, old;
	uint32_t k = 1;
	uint64_t v = 1;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		pid_t pid;

		sig_map = must_create(types[i], 4, 8, 64, BPFMAP_F_NO_PREALLOC);
		assert_int_equal(bpfmap_update_elem(sig_map, &k, &v, BPFMAP_NOEXIST), 0);
		urcu_bp_barrier();
		sig_ran = 0;
		__atomic_store_n(&raise_at_fork, 1, __ATOMIC_SEQ_CST);
		alarm(20); /* a hang ends the test */
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(__atomic_load_n(&sig_ran, __ATOMIC_SEQ_CST) ? 5 : 0);
		alarm(0);
		assert_int_equal(__atomic_load_n(&sig_ran, __ATOMIC_SEQ_CST), 1);
		reap_child(pid, 10);
		assert_int_equal(bpfmap_lookup_elem(sig_map, &k, &v), 0);
		assert_int_equal(v, 2);
		bpfmap_free(sig_map);
	}
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
}

static int setup_hook(void **state)
{
	(void)state;
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
	return test_close_sections(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_fork_beside_rhash_retire),
		test_entry(test_fork_beside_chain_retire),
		test_entry(test_fork_beside_flock_copy),
		test_entry(test_signal_inside_fork),
	};

	return cmocka_run_group_tests(tests, setup_hook, test_close_sections);
}
