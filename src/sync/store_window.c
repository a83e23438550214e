/* SPDX-License-Identifier: BSD-2-Clause */
/* The process-wide registry of store windows (sync/store_window.h). */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sync/store_window.h"
#include "sync/backoff.h"

#ifdef BPFMAP_TSAN
#define STORE_SCAN_ORDER __ATOMIC_SEQ_CST
#else
#define STORE_SCAN_ORDER __ATOMIC_ACQUIRE
#endif

__thread struct store_window *store_window_mine __attribute__((tls_model("initial-exec")));

static struct store_window *store_windows; /* atomic: registry head; records never freed */
static pthread_once_t store_window_once = PTHREAD_ONCE_INIT;
static pthread_key_t store_window_key;
static bool store_window_key_ok; /* the key, and setting it allocates nothing */
static bool store_window_ok; /* membarrier registered: windows possible */

static long store_membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

/* A thread exits outside any window: its record is free for the next one.
 * (Run by the exiting thread: a later destructor's store registers anew.) */
static void store_window_release(void *rec)
{
	struct store_window *w = rec;

	store_window_mine = NULL;
	__atomic_store_n(&w->used, 0, __ATOMIC_RELEASE);
}

/* In a child of fork() only the forking thread lives on, outside any window;
 * another thread may have been in one: nobody must wait for it. */
static void store_window_atfork_child(void)
{
	for (struct store_window *w = store_windows; w; w = w->next) {
		if (w == store_window_mine)
			continue;
		w->word = STORE_WINDOW_WORD(STORE_WINDOW_OWNER(w->word), w->word + (w->word & 1));
		w->used = 0;
	}
}

/* glibc keeps the values of its first 32 keys in the thread's descriptor
 * and callocs a block for the others on a thread's first set, which may be
 * a signal handler's (its thread inside malloc: a hang).  The key is made
 * when the library is loaded, so that it is one of the first; should the
 * program have made 32 before (a late dlopen), there are no windows, and
 * writers take their locks. */
#ifdef __GLIBC__
#define STORE_KEY_INLINE 32u
#else
#define STORE_KEY_INLINE UINT32_MAX /* musl and others allocate no keys' blocks */
#endif

static bool store_window_key_made;

__attribute__((constructor)) static void store_window_key_init(void)
{
	if (pthread_key_create(&store_window_key, store_window_release))
		return;
	store_window_key_made = true;
	store_window_key_ok = (uint64_t)store_window_key < STORE_KEY_INLINE &&
			      !pthread_atfork(NULL, NULL, store_window_atfork_child);
}

/* Unloaded (dlclose), the destructor's code is gone: threads that exit
 * after must not call it (an adversarial probe: SIGSEGV at their exit). */
__attribute__((destructor)) static void store_window_key_fini(void)
{
	if (store_window_key_made)
		(void)pthread_key_delete(store_window_key);
}

static void store_window_init(void)
{
	long cmds = store_membarrier(MEMBARRIER_CMD_QUERY);

	if (!store_window_key_ok || cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
	    store_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
		return;
	store_window_ok = true;
}

void store_window_prepare(void)
{
	pthread_once(&store_window_once, store_window_init);
}

/* An unused record of the registry, claimed; NULL if none. */
static struct store_window *store_window_claim(void)
{
	for (struct store_window *w = __atomic_load_n(&store_windows, __ATOMIC_ACQUIRE); w;
	     w = w->next) {
		uint32_t unused = 0;

		if (!__atomic_load_n(&w->used, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&w->used, &unused, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return w;
	}
	return NULL;
}

/* A page of new records, the first claimed, all pushed on the registry
 * (never freed).  From mmap, not malloc: a thread's first update may be a
 * signal handler's, on a thread interrupted inside malloc. */
static struct store_window *store_window_page(void)
{
	const size_t n = 4096 / sizeof(struct store_window); /* mmap rounds up */
	struct store_window *w;

	w = mmap(NULL, n * sizeof(*w), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (w == MAP_FAILED)
		return NULL;
	w[0].used = 1;
	for (size_t i = 0; i + 1 < n; i++)
		w[i].next = &w[i + 1];
	w[n - 1].next = __atomic_load_n(&store_windows, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&store_windows, &w[n - 1].next, w, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return w;
}

/*
 * Async-signal-safe once store_window_prepare has run (every map's
 * creation runs it, and no map call comes before): the once is done, the
 * records come from mmap, and setting the key allocates nothing
 * (store_window_key_init).  A handler that registers while it interrupts
 * this keeps its record used for good: one line, and no window waits on
 * an even seq.
 */
__attribute__((noinline)) struct store_window *store_window_register(void)
{
	struct store_window *w;

	store_window_prepare();
	if (!store_window_ok)
		return NULL;
	w = store_window_claim();
	if (!w && !(w = store_window_page()))
		return NULL;
	if (pthread_setspecific(store_window_key, w)) {
		store_window_release(w);
		return NULL;
	}
	store_window_mine = w;
	return w;
}

void store_windows_wait(uint32_t owner)
{
	if (!__atomic_load_n(&store_windows, __ATOMIC_ACQUIRE))
		return; /* no thread has a record: a later one sees our stores */
	/* Cannot fail once registered (store_window_ok, before any record).
	 * A record pushed after the scan starts belongs to a thread past the
	 * barrier. */
	(void)store_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	for (struct store_window *w = __atomic_load_n(&store_windows, __ATOMIC_ACQUIRE); w;
	     w = w->next) {
		uint64_t s = __atomic_load_n(&w->word, STORE_SCAN_ORDER);
		uint32_t o = STORE_WINDOW_OWNER(s);
		unsigned int spins = 0;

		if (!(s & 1) || (o && o != owner))
			continue; /* closed, or another map's */
		/* The counter alone: a signal handler may make the window any
		 * map's meanwhile (owner 0), and it is still open. */
		while (STORE_WINDOW_SEQ(__atomic_load_n(&w->word, __ATOMIC_ACQUIRE)) ==
		       STORE_WINDOW_SEQ(s))
			backoff(&spins); /* its thread may be preempted in the window */
	}
}
