/* SPDX-License-Identifier: BSD-2-Clause */
/* liburcu glue: deferred reclamation, fork, and the public read-side section
 * calls. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpfmap.h>

#include "sync/fork_guard.h"
#include "sync/rcu.h"
#include "util/test_hook.h"

#ifdef BPFMAP_TSAN
char rcu_tsan_clock;
#endif

#ifdef BPFMAP_UBSAN
void rcu_lock_outline(void)
{
	urcu_bp_read_lock();
}

void rcu_unlock_outline(void)
{
	rcu_tsan_release();
	urcu_bp_read_unlock();
}
#endif

/* Every callback of bpfmap's on the default worker, whose queue runs in
 * order (rcu_wait_deferred): liburcu gives a callback the worker of its
 * thread or CPU where the program made such workers. */
void rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	struct call_rcu_data *own = urcu_bp_get_thread_call_rcu_data();
	struct call_rcu_data *dflt = urcu_bp_get_default_call_rcu_data();

	rcu_tsan_release();
	if (own != dflt)
		urcu_bp_set_thread_call_rcu_data(dflt);
	urcu_bp_call_rcu(head, fn);
	if (own != dflt)
		urcu_bp_set_thread_call_rcu_data(own);
}

/* liburcu's worker runs the maps' callbacks, which take locks that writers
 * take too, and waits for grace periods: a signal handler's map call on
 * it could wait for the worker itself (an adversarial probe: a handler's
 * delete on it waited in rcu_barrier for ever, and all reclamation in the
 * process with it).  So the worker blocks every signal: it inherits the
 * mask of the thread that starts it. */
/* Every signal blocked on the calling thread; its mask before in *@old. */
static void rcu_block_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	(void)pthread_sigmask(SIG_BLOCK, &all, old);
}

static void rcu_start_worker(void (*start)(void))
{
	sigset_t old;

	rcu_block_signals(&old);
	start();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void rcu_default_worker(void)
{
	(void)urcu_bp_get_default_call_rcu_data();
}

void rcu_prepare(void)
{
	rcu_start_worker(rcu_default_worker);
}

/* A child of fork() gets a new worker from liburcu's handler. */
static void rcu_call_after_fork_child(void)
{
	rcu_start_worker(urcu_bp_call_rcu_after_fork_child);
}

/* A callback of its own, queued behind the others (rcu_wait_deferred). */
struct rcu_marker {
	struct rcu_head head;
	int done; /* atomic */
};

static void rcu_marker_done(struct rcu_head *head)
{
	struct rcu_marker *m = caa_container_of(head, struct rcu_marker, head);

	rcu_deferred_enter();
	rcu_deferred_exit();
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
}

/*
 * liburcu's rcu_barrier allocates (one item per worker, with calloc) and
 * takes a mutex, and it aborts the process where calloc fails (urcu_die):
 * an insert that found no memory and waited for deleted elements died
 * there (an adversarial probe), and a signal handler's delete over the
 * backlog limit called the allocator.  bpfmap's callbacks all go to the
 * default worker (rcu_defer), which runs its queue in order: a marker
 * queued there after them has run once they have, and costs no
 * allocation.  The worker itself cannot wait for its queue (a program's
 * callback making a map call, or a handler on a worker the program
 * started before bpfmap, with signals unblocked): it goes on at once.
 * The sleep is a raw system call, no cancellation point: a thread
 * cancelled there left its marker queued on a stack reused after.
 */
void rcu_wait_deferred(void)
{
	struct call_rcu_data *dflt = urcu_bp_get_default_call_rcu_data();
	struct rcu_marker m = { .done = 0 };
	struct timespec pause = { 0, 50 * 1000 };
	unsigned int spins = 0;

	if (pthread_equal(pthread_self(), urcu_bp_get_call_rcu_thread(dflt)))
		return;
	rcu_defer(&m.head, rcu_marker_done);
	while (!__atomic_load_n(&m.done, __ATOMIC_ACQUIRE)) {
		if (spins < 64)
			spins++, sched_yield();
		else /* a worker's round takes milliseconds */
			(void)syscall(SYS_nanosleep, &pause, NULL);
	}
	rcu_tsan_acquire();
}

void rcu_synchronize(void)
{
	int cancel;

	/* liburcu's wait polls, a cancellation point, holding its grace
	 * period mutex, and our callers hold flags of their own (a flat map's
	 * sync_busy, RHASH's settling): a thread cancelled there left them
	 * held, and every later grace period in the process waited for
	 * ever (an adversarial probe). */
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	urcu_bp_synchronize_rcu();
	(void)pthread_setcancelstate(cancel, NULL);
	rcu_tsan_acquire();
}

bool rcu_may_wait(void)
{
	return !urcu_bp_read_ongoing();
}

void bpfmap_read_lock(void)
{
	rcu_lock();
}

void bpfmap_read_unlock(void)
{
	rcu_unlock();
}

/*
 * fork(): liburcu-bp keeps a registry of reader threads, and a child
 * inherits the records of threads that do not exist in it; its first grace
 * period would wait for them for ever (issue 14: a lookup_and_delete in the
 * child hung).  liburcu's fork handlers prune the registry in the child and
 * restart the call_rcu worker there.  Prepare handlers run in the reverse
 * order of registration: call_rcu's must run first (its worker may be in a
 * grace period, which the flavour's prepare handler blocks), so it is
 * registered last.  The maps' fork guards (sync/fork_guard.h) go with the
 * flavour's handlers: their locks are taken after the worker has paused,
 * which may be inside a callback that waits for one, and before the
 * flavour's locks, so that a writer holding a guarded lock never waits on
 * liburcu meanwhile; and they are back before the child's worker starts.
 */
static void rcu_before_fork(void)
{
	fork_guard_prepare();
	TEST_HOOK(HOOK_FORK_PREPARED, NULL);
	urcu_bp_before_fork();
}

static void rcu_after_fork_parent(void)
{
	urcu_bp_after_fork_parent();
	fork_guard_parent();
}

static void rcu_after_fork_child(void)
{
	urcu_bp_after_fork_child();
	fork_guard_child();
}

/*
 * Every signal blocked across all of fork()'s handlers: a handler that ran
 * while they held the maps' reclamation locks (fork_guard) or had paused
 * liburcu's worker waited for ever on what its own thread held (an
 * adversarial probe: a timer's handler updating a map while the program
 * forked hung it within a few dozen forks).  This pair is registered last,
 * so its prepare handler runs first and its others last; the mask is the
 * forking thread's.
 */
static __thread sigset_t fork_saved_mask;

static void fork_signals_block(void)
{
	rcu_block_signals(&fork_saved_mask);
}

static void fork_signals_restore(void)
{
	(void)pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}

__attribute__((constructor)) static void rcu_fork_handlers(void)
{
	(void)pthread_atfork(rcu_before_fork, rcu_after_fork_parent, rcu_after_fork_child);
	(void)pthread_atfork(urcu_bp_call_rcu_before_fork, urcu_bp_call_rcu_after_fork_parent,
			     rcu_call_after_fork_child);
	(void)pthread_atfork(fork_signals_block, fork_signals_restore, fork_signals_restore);
}
