/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A signal handler's map calls allocate nothing, but on the paths that
 * docs/CONCURRENCY.md ("Signal handlers") names: a handler may interrupt
 * its thread inside malloc or free, and glibc's allocator then deadlocks
 * on its own arena lock.  The build wraps malloc, calloc, realloc, free and
 * pthread_create for this test; while a handler runs, each call counts.
 *
 * Each case runs on a thread of its own that has made no map call yet (a
 * thread's first update registers its store window: before, that called
 * calloc, and a profiler's handler updating a counter map hung at once
 * when its thread was in malloc), raises the signal and checks the
 * handler's answers and the count.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "sync/rcu.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static __thread volatile int in_handler;
static unsigned long handler_allocs; /* atomic */

static void note(void)
{
	if (in_handler)
		__atomic_add_fetch(&handler_allocs, 1, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t size)
{
	note();
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	note();
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	note();
	return __real_realloc(p, size);
}

void __wrap_free(void *p)
{
	note();
	__real_free(p);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	note();
	return __real_pthread_create(t, a, fn, arg);
}

/* What the handler does, and what it answered. */
struct handler_case {
	struct bpfmap *m;
	uint32_t key_size;
	bool prog_view; /* bpfmap_update / bpfmap_delete instead of the syscall view */
	int update_ret, lookup_ret, delete_ret;
	uint64_t in[256], out[256]; /* a per-CPU map's value is one slot per CPU */
};

static struct handler_case *current;

static void key_of(uint8_t *key, uint32_t size, uint64_t k)
{
	memset(key, 0, size);
	memcpy(key, &k, size < 8 ? size : 8);
}

static void handler(int sig)
{
	struct handler_case *c = current;
	uint8_t key[16];

	(void)sig;
	in_handler = 1;
	key_of(key, c->key_size, 5);
	if (c->prog_view) {
		c->update_ret = bpfmap_update(c->m, key, c->in, BPFMAP_EXIST);
		c->lookup_ret = bpfmap_lookup_elem(c->m, key, c->out);
		key_of(key, c->key_size, 6);
		c->delete_ret = bpfmap_delete(c->m, key);
	} else {
		c->update_ret = bpfmap_update_elem(c->m, key, c->in, BPFMAP_EXIST);
		c->lookup_ret = bpfmap_lookup_elem(c->m, key, c->out);
		key_of(key, c->key_size, 6);
		c->delete_ret = bpfmap_delete_elem(c->m, key);
	}
	in_handler = 0;
}

static int count_threads(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Do the process's other threads (liburcu's call_rcu worker) block
 * SIGUSR1?  A handler's map call on the worker could wait for the worker
 * itself. */
static bool others_block_sigusr1(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool all = true;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[320], line[128];
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == (int)syscall(SYS_gettid))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigBlk:", 7))
				all = all && (strtoull(line + 7, NULL, 16) >> (SIGUSR1 - 1) & 1);
		if (f)
			fclose(f);
		n++;
	}
	if (d)
		closedir(d);
	return all && n > 0;
}

static void *raise_thread(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
	return NULL;
}

/* With @here the handler runs on the calling thread, else on a fresh one.
 * Returns the threads the handler's calls started (none may start; only a
 * child of fork() counts its threads alone, and only @here: a joined
 * thread may linger in /proc a moment). */
static int check_handler(enum bpfmap_type type, uint32_t key_size, uint32_t max_entries,
			 uint32_t flags, bool prog_view, bool here)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = flags);
	struct bpfmap *m = bpfmap_create(type, "sig", key_size, 8, max_entries, &o);
	static struct handler_case c;
	int cpus = bpfmap_num_possible_cpus();
	bool percpu = type == BPFMAP_TYPE_PERCPU_HASH;
	uint64_t zeros[256] = { 0 };
	uint8_t key[16];
	pthread_t t;
	bool seen = false;
	int threads;

	assert_non_null(m);
	assert_true(cpus > 0 && cpus <= 256);
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.key_size = key_size;
	c.prog_view = prog_view;
	for (int i = 0; i < 256; i++)
		c.in[i] = 42;
	for (uint64_t k = 0; k < 10; k++) {
		key_of(key, key_size, k);
		assert_int_equal(bpfmap_update_elem(m, key, zeros, BPFMAP_NOEXIST), 0);
	}
	current = &c;
	__atomic_store_n(&handler_allocs, 0, __ATOMIC_RELAXED);
	threads = count_threads();
	if (here) {
		raise(SIGUSR1);
	} else {
		assert_int_equal(pthread_create(&t, NULL, raise_thread, NULL), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
	}
	threads = count_threads() - threads;
	if (handler_allocs)
		fail_msg("map type %d, key %u, flags %#x%s: the handler made %lu allocator calls",
			 type, key_size, flags, prog_view ? ", program view" : "", handler_allocs);
	assert_int_equal(c.update_ret, 0);
	assert_int_equal(c.lookup_ret, 0);
	assert_int_equal(c.delete_ret, 0);
	/* The program view's update writes the handler's CPU's slot only. */
	for (int i = 0; i < (percpu ? cpus : 1); i++)
		seen = seen || c.out[i] == 42;
	assert_true(seen);
	key_of(key, key_size, 6);
	assert_int_equal(bpfmap_lookup_elem(m, key, c.out), -ENOENT);
	bpfmap_free(m);
	return threads;
}

static void test_first_calls_allocate_nothing(void **state)
{
	struct sigaction sa = { .sa_handler = handler };

	(void)state;
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int pv = 0; pv < 2; pv++) {
		check_handler(BPFMAP_TYPE_HASH, 8, 1024, 0, pv, false);      /* flat, word keys */
		check_handler(BPFMAP_TYPE_HASH, 4, 1024, 0, pv, false);
		check_handler(BPFMAP_TYPE_HASH, 16, 64, 0, pv, false);       /* chained, preallocated */
		check_handler(BPFMAP_TYPE_LRU_HASH, 8, 1024, 0, pv, false);
		check_handler(BPFMAP_TYPE_LRU_HASH, 16, 64, BPFMAP_F_NO_COMMON_LRU, pv, false);
		check_handler(BPFMAP_TYPE_PERCPU_HASH, 8, 1024, 0, pv, false);
	}
}

/*
 * The process's first deferred reclamation starts liburcu's call_rcu
 * thread (pthread_create allocates): a map's creation does it, not the
 * handler's delete.  In a child forked before this process deferred
 * anything (this case runs first), so that its first is the handler's.
 */
static void test_first_deferral_in_process(void **state)
{
	int pid, status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = handler };

		if (sigaction(SIGUSR1, &sa, NULL))
			_exit(2);
		if (check_handler(BPFMAP_TYPE_HASH, 16, 64, 0, false, true))
			_exit(3);
		if (!others_block_sigusr1())
			_exit(4);
		/* liburcu starts a new worker in a child of fork(). */
		pid = fork();
		if (pid == 0)
			_exit(others_block_sigusr1() ? 0 : 5);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			_exit(6);
		_exit(WEXITSTATUS(status));
	}
	reap_child(pid, 60);
}

/* ---- liburcu's workers and bpfmap's callbacks ---------------------------- */

static pthread_t cb_thread;
static int cb_done; /* atomic */

static void record_thread(struct rcu_head *head)
{
	(void)head;
	cb_thread = pthread_self();
	__atomic_store_n(&cb_done, 1, __ATOMIC_RELEASE);
}

/* A program's own callback (on the default worker) waiting for bpfmap's
 * deferred callbacks, as a map call over its backlog limit does. */
static void wait_on_worker(struct rcu_head *head)
{
	(void)head;
	rcu_wait_deferred();
	__atomic_store_n(&cb_done, 1, __ATOMIC_RELEASE);
}

static bool cb_done_within_5s(void)
{
	for (int i = 0; i < 5000 && !__atomic_load_n(&cb_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return __atomic_load_n(&cb_done, __ATOMIC_ACQUIRE);
}

/*
 * bpfmap's callbacks go to liburcu's default worker, whose queue runs in
 * order, even from a thread to which the program gave a worker of its own:
 * rcu_wait_deferred's marker is queued there, behind them (before, such a
 * thread's flush ran on its own worker, the wait returned before it, and an
 * insert answered -ENOMEM; an adversarial probe).  And the default worker
 * never waits for its own queue: a program's callback whose map call
 * waited for bpfmap's callbacks hung there for ever.
 */
static void test_worker_contexts(void **state)
{
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, "w", 8, 8, 8, NULL);
	struct call_rcu_data *own = urcu_bp_create_call_rcu_data(0, -1);
	pthread_t dflt = urcu_bp_get_call_rcu_thread(urcu_bp_get_default_call_rcu_data());
	static struct rcu_head head;

	(void)state;
	assert_non_null(m);
	assert_non_null(own);
	urcu_bp_set_thread_call_rcu_data(own);
	cb_done = 0;
	rcu_defer(&head, record_thread);
	assert_true(cb_done_within_5s());
	assert_true(pthread_equal(cb_thread, dflt));
	urcu_bp_set_thread_call_rcu_data(NULL);
	rcu_wait_deferred();
	urcu_bp_call_rcu_data_free(own);

	cb_done = 0;
	urcu_bp_call_rcu(&head, wait_on_worker);
	assert_true(cb_done_within_5s());
	bpfmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_deferral_in_process),
		cmocka_unit_test(test_first_calls_allocate_nothing),
		cmocka_unit_test(test_worker_contexts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
