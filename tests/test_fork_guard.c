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
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "test_util.h"
#include "tables/chain.h"
#include "tables/rtab.h"
#include "util/test_hook.h"

#define KEYS 64

static int armed;   /* atomic: the next HOOK_RETIRE_LOCKED stops */
static int holding; /* atomic: a writer holds the lock, stopped */

static void hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (point != HOOK_RETIRE_LOCKED || !__atomic_exchange_n(&armed, 0, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&holding, 1, __ATOMIC_SEQ_CST);
	usleep(300 * 1000);
}

static void *delete_one(void *map)
{
	uint32_t k = 1;

	__atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST);
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

static void reap(pid_t pid)
{
	int status;

	for (int i = 0; i < 1000; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		assert_true(r >= 0);
		if (r == pid) {
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			return;
		}
		usleep(10 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("the child of fork() hung for 10 s (killed)");
}

static void fork_beside_retire(enum bpfmap_type type)
{
	struct bpfmap *w = must_create(type, 4, 8, 1024, BPFMAP_F_NO_PREALLOC);
	pthread_t t;
	pid_t pid;

	for (uint32_t k = 0; k < KEYS; k++) {
		uint64_t v = k;

		assert_int_equal(bpfmap_update_elem(w, &k, &v, BPFMAP_NOEXIST), 0);
	}
	/* Start with no callbacks pending: fork() waits for them. */
	urcu_bp_barrier();
	holding = 0;
	assert_int_equal(pthread_create(&t, NULL, delete_one, w), 0);
	while (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST))
		usleep(100);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_work(w, type));
	pthread_join(t, NULL);
	reap(pid);
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

static int setup_hook(void **state)
{
	(void)state;
	bpfmap_test_hook = hook;
	return test_close_sections(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_fork_beside_rhash_retire),
		test_entry(test_fork_beside_chain_retire),
	};

	return cmocka_run_group_tests(tests, setup_hook, test_close_sections);
}
