/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waits under real-time priorities (sync/backoff.h).  DPDK's lcores and
 * other runtimes' workers often run SCHED_FIFO.  A waiter that only spun
 * and yielded behind a holder of lower priority on its own CPU waited for
 * ever: sched_yield() never lets a thread of lower priority run, and the
 * kernel's real-time throttling spares only SCHED_OTHER threads.  Here a
 * SCHED_FIFO thread of priority 1 holds a value's spin lock on CPU 0 and one
 * of priority 2 on the same CPU wants it, through bpfmap_spin_lock() and
 * through a BPFMAP_F_LOCK update; both must get it once the holder has run
 * its course.
 *
 * Not under ThreadSanitizer: its runtime guards its own allocators with spin
 * locks that yield without ever sleeping, the very inversion tested here.
 * The holder, exiting, held one (ProcDestroy) while the waiter, wanting it
 * for a sync object of its lock's atomics, yielded on the same CPU for
 * ever: about one run in twenty hung, whatever bpfmap does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "test_util.h"

struct locked_value {
	struct bpfmap_spin_lock lock;
	uint32_t n;
};

struct contest {
	struct bpfmap *map;
	struct locked_value *v; /* the key's value, program view */
	bool through_update;
	int ready, held, done, setup_err, ret;
};

/* Pin to CPU 0 and take SCHED_FIFO @prio: 0, or the error. */
static int fifo_on_cpu0(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;
	int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);

	/* The priority first: a SCHED_OTHER thread moved to CPU 0 would not
	 * run there while the other one does. */
	if (err)
		return err;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ? EINVAL : 0;
}

/* Back to SCHED_OTHER once the contest is over, before the thread exits:
 * the sanitizers' thread-exit code takes spin locks that only yield, and two
 * SCHED_FIFO threads of one CPU exiting together could wait on each other
 * there for ever (ASan's quarantine drain, seen 4 runs in 60). */
static void back_to_other(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Priority 1: take the lock, work 2 ms of its own CPU time, release. */
static void *holder(void *arg)
{
	struct contest *c = arg;
	uint64_t end;
	int err = fifo_on_cpu0(1);

	if (err) {
		__atomic_store_n(&c->setup_err, err, __ATOMIC_RELEASE);
		return NULL;
	}
	bpfmap_spin_lock(&c->v->lock);
	__atomic_store_n(&c->held, 1, __ATOMIC_RELEASE);
	for (end = thread_cpu_ns() + 2000000; thread_cpu_ns() < end;)
		;
	bpfmap_spin_unlock(&c->v->lock);
	back_to_other();
	return NULL;
}

/* Priority 2, once the holder holds: the lock, or an F_LOCK update. */
static void *waiter(void *arg)
{
	struct contest *c = arg;
	struct timespec pause = { 0, 100000 };
	struct locked_value nv = { .n = 7 };
	uint32_t key = 1;
	int err = fifo_on_cpu0(2);

	if (err) {
		__atomic_store_n(&c->setup_err, err, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->held, __ATOMIC_ACQUIRE))
		if (__atomic_load_n(&c->setup_err, __ATOMIC_ACQUIRE))
			return NULL;
		else
			nanosleep(&pause, NULL); /* lets the holder run */
	if (c->through_update) {
		c->ret = bpfmap_update_elem(c->map, &key, &nv, BPFMAP_F_LOCK);
	} else {
		bpfmap_spin_lock(&c->v->lock);
		c->v->n++;
		bpfmap_spin_unlock(&c->v->lock);
	}
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	back_to_other();
	return NULL;
}

static void contest(bool through_update)
{
	BPFMAP_CREATE_OPTS(o, .lock_off = 0);
	struct contest c = { .through_update = through_update };
	struct locked_value v0 = { .n = 0 };
	uint32_t key = 1;
	pthread_t h, w;
	struct timespec deadline;

#ifdef __SANITIZE_THREAD__
	print_message("skipped: ThreadSanitizer's runtime spin locks invert priorities "
		      "themselves (see the top of this file)\n");
	skip();
#endif

	c.map = bpfmap_create(BPFMAP_TYPE_HASH, "prio", 4, sizeof(struct locked_value), 4, &o);
	assert_non_null(c.map);
	assert_int_equal(bpfmap_update_elem(c.map, &key, &v0, BPFMAP_ANY), 0);
	c.v = bpfmap_lookup(c.map, &key);
	assert_non_null(c.v);
	/* The waiter first, polling on CPU 0, so that it preempts the
	 * holder as soon as the lock is held. */
	assert_int_equal(pthread_create(&w, NULL, waiter, &c), 0);
	while (!__atomic_load_n(&c.ready, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&c.setup_err, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_int_equal(pthread_create(&h, NULL, holder, &c), 0);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 20;
	if (pthread_timedjoin_np(w, NULL, &deadline)) {
		/* The waiter spins on CPU 0 for ever, and the holder with it:
		 * nothing to join. */
		fprintf(stderr, "the SCHED_FIFO waiter never got the lock\n");
		_exit(1);
	}
	pthread_join(h, NULL);
	if (c.setup_err) {
		bpfmap_free(c.map);
		print_message("skipped: SCHED_FIFO refused (%s); needs CAP_SYS_NICE\n",
			      strerror(c.setup_err));
		skip();
	}
	assert_true(c.done);
	assert_int_equal(c.ret, 0);
	assert_int_equal(c.v->n, through_update ? 7 : 1);
	bpfmap_free(c.map);
}

static void test_lock_behind_lower_priority(void **state)
{
	(void)state;
	contest(false);
}

static void test_update_behind_lower_priority(void **state)
{
	(void)state;
	contest(true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_lock_behind_lower_priority),
		test_entry(test_update_behind_lower_priority),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return run_test_group(tests);
}
