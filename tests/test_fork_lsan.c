/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork() while another thread is inside a call into the leak checker.  The
 * library shows its mapped tables to LeakSanitizer (util/big_alloc.c)
 * through weak references to LSan's root-region calls, which take LSan's
 * own lock, and GCC 12's LSan has no fork handler for it: a child forked
 * while another thread held it kept it locked, and hung at its first
 * mapping (an adversarial helper's probe: 2 children of 200).
 *
 * This test defines the two calls itself, with a lock of its own that
 * likewise has no fork handler, and stops a thread inside one: the child
 * must not inherit that lock held.  AddressSanitizer builds, which define
 * the calls themselves, skip it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

#if !defined(__SANITIZE_ADDRESS__)
static pthread_mutex_t checker_lock = PTHREAD_MUTEX_INITIALIZER;
static int stop_next; /* atomic: the next registration stops, holding the lock */
static int stopped;   /* atomic */

void __lsan_register_root_region(const void *p, size_t size);
void __lsan_unregister_root_region(const void *p, size_t size);

void __lsan_register_root_region(const void *p, size_t size)
{
	(void)p;
	(void)size;
	pthread_mutex_lock(&checker_lock);
	if (__atomic_exchange_n(&stop_next, 0, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&stopped, 1, __ATOMIC_SEQ_CST);
		usleep(300 * 1000);
	}
	pthread_mutex_unlock(&checker_lock);
}

void __lsan_unregister_root_region(const void *p, size_t size)
{
	(void)p;
	(void)size;
	pthread_mutex_lock(&checker_lock);
	pthread_mutex_unlock(&checker_lock);
}

/* A map whose tables are mapped (over 128 KiB), made and freed. */
static int make_big_map(void)
{
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, "big", 8, 8, 100000, NULL);

	if (!m)
		return 1;
	bpfmap_free(m);
	return 0;
}

static void *create_stopped(void *arg)
{
	(void)arg;
	__atomic_store_n(&stop_next, 1, __ATOMIC_SEQ_CST);
	if (make_big_map())
		abort();
	return NULL;
}

static void test_fork_beside_checker_call(void **state)
{
	pthread_t t;
	pid_t pid;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, create_stopped, NULL), 0);
	for (int i = 0; i < 50000 && !__atomic_load_n(&stopped, __ATOMIC_SEQ_CST); i++)
		usleep(100);
	assert_true(__atomic_load_n(&stopped, __ATOMIC_SEQ_CST));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(make_big_map());
	pthread_join(t, NULL);
	reap_child(pid, 10);
}
#else
static void test_fork_beside_checker_call(void **state)
{
	(void)state;
	print_message("skipped: AddressSanitizer defines the leak checker's calls itself\n");
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_beside_checker_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
