/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Map calls from a signal handler that interrupted a map call of the same
 * thread (sync/reentry.h).  The interrupted call may hold a bucket lock,
 * have a seq odd or hold a value's lock, and it cannot go on until the
 * handler returns: a handler's call that waited for it would wait for
 * ever.  Before the guard, an update from such a handler hung at once, and
 * copy-outs, F_LOCK copies, batch lookups and long-key or chained
 * program-view lookups hung at the points below.
 *
 * Deterministic: the library's test hooks raise SIGUSR1 at every hook
 * point the main thread's call passes.  The handler then runs every map
 * call on every key:
 *  - while the main thread's writing call (update, delete, lookup-and-
 *    delete, a batch, get_next_key) holds a lock, a store window or an
 *    eviction, every writing call answers -EBUSY and changes nothing (the
 *    map equals the main thread's model afterwards); elsewhere in a writing
 *    call (an update's lock-free probe) they may go through; lookups answer
 *    the key's value, -ENOENT or -EBUSY, and a value copied or pointed to
 *    is the key's own and never torn;
 *  - while it is inside a lookup, nothing answers -EBUSY: a lookup holds
 *    nothing, so a handler's calls go through.
 * Random: a timer signals the thread every 20 us, wherever it is, while it
 * runs random calls; the same checks, for 0.2 s per map.  Any hang fails
 * the test (alarm).  Last, a signal inside an F_LOCK copy-out that holds
 * its value's lock (test_flock_copy_holds).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "sync/rcu.h"
#include "tables/flat.h"
#include "util/test_hook.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NKEYS 12	  /* the main thread's keys: ids 1..NKEYS */
#define HKEY 100	  /* the handler's own keys: ids HKEY..HKEY + 3 */
#define MAX_VS 64
#define MAX_VAL (MAX_VS * 64) /* a per-CPU value's syscall view, 64 CPUs at most */

struct cfg {
	const char *name;
	enum bpfmap_type type;
	uint32_t ks, vs, flags, max_entries;
	int32_t lock_off;
};

static const struct cfg cfgs[] = {
	{ "HASH k4 v8", BPFMAP_TYPE_HASH, 4, 8, 0, 16, -1 },
	{ "HASH k8 v64 lock", BPFMAP_TYPE_HASH, 8, 64, 0, 16, 0 },
	{ "HASH k16 v64", BPFMAP_TYPE_HASH, 16, 64, 0, 16, -1 },
	{ "HASH k32 v16 (flat)", BPFMAP_TYPE_HASH, 32, 16, 0, 4096, -1 },
	{ "HASH chained k8 v64", BPFMAP_TYPE_HASH, 8, 64, BPFMAP_F_NO_PREALLOC, 16, -1 },
	{ "HASH chained k16 v64 lock", BPFMAP_TYPE_HASH, 16, 64, BPFMAP_F_NO_PREALLOC, 16, 8 },
	{ "LRU_HASH k8 v64", BPFMAP_TYPE_LRU_HASH, 8, 64, 0, 16, -1 },
	{ "LRU_HASH k16 v8 no common", BPFMAP_TYPE_LRU_HASH, 16, 8, BPFMAP_F_NO_COMMON_LRU, 16, -1 },
	{ "PERCPU_HASH k8 v8", BPFMAP_TYPE_PERCPU_HASH, 8, 8, 0, 16, -1 },
	{ "PERCPU_HASH chained k8 v16", BPFMAP_TYPE_PERCPU_HASH, 8, 16, BPFMAP_F_NO_PREALLOC, 16, -1 },
	{ "LRU_PERCPU_HASH k8 v8", BPFMAP_TYPE_LRU_PERCPU_HASH, 8, 8, 0, 16, -1 },
	{ "RHASH k8 v64 lock", BPFMAP_TYPE_RHASH, 8, 64, BPFMAP_F_NO_PREALLOC, 64, 0 },
	{ "RHASH k16 v8", BPFMAP_TYPE_RHASH, 16, 8, BPFMAP_F_NO_PREALLOC, 64, -1 },
};

/* The state the handler reads: plain globals, set before the signals. */
static const struct cfg *cur;
static struct bpfmap *map;
static uint32_t ncpus, val_bytes; /* val_bytes: the syscall view's value */
static volatile sig_atomic_t main_in_write, main_in_lookup, in_handler, hooks_armed;
/* The signal comes at a hook where the main thread's call holds a lock, a
 * store window or a place in the count (main_in_write is also set in an
 * update's lock-free probe, which holds nothing). */
static volatile sig_atomic_t main_holds;
/* Signals raised at hooks during the main thread's current call: a few
 * at most, since a handler's writes make a lookup's walk start over, and a
 * signal at each new start would keep it from ever ending. */
static volatile sig_atomic_t raised_in_call;
#define RAISES_PER_CALL 4
/* Signals from the timer: they may also come just before or after the
 * main thread's call, while its flag is already or still set. */
static volatile sig_atomic_t timer_mode;
/* The main thread's calls so far: a timer's handler does its work once per
 * call at most, so that a handler slower than the timer's period cannot
 * keep the thread from going on. */
static volatile unsigned long steps, steps_handled;
static const char *phase = "";
static pid_t main_tid; /* hooks signal this thread only */

/* What the handlers saw; checked by the main thread (a handler cannot
 * fail a cmocka test: it would longjmp out of a signal handler). */
static volatile unsigned long handled, busy_answers, write_busy, write_went_through;
static volatile unsigned long errors;
static char first_error[256];

static void note_error(const char *what, uint32_t id, int ret)
{
	if (!errors++)
		snprintf(first_error, sizeof(first_error), "%s: %s, key %u: %d", cur->name,
			 what, id, ret);
}

static void key_of(uint32_t id, uint8_t *key)
{
	memset(key, 0, cur->ks);
	memcpy(key, &id, 4);
}

/* A value: each 8-byte word (id << 32 | ver), in every CPU's slot. */
static void value_of(uint32_t id, uint32_t ver, uint8_t *v, uint32_t bytes)
{
	uint64_t w = (uint64_t)id << 32 | ver;

	for (uint32_t o = 0; o + 8 <= bytes; o += 8)
		memcpy(v + o, &w, 8);
}

/* A copied value is one write's, of key @id: every word the same, the
 * lock's bytes aside (read as zero).  @bytes: one slot or all of them. */
static bool value_ok(uint32_t id, const uint8_t *v, uint32_t bytes)
{
	uint64_t first = 0;
	bool have = false;

	for (uint32_t o = 0; o + 8 <= bytes; o += 8) {
		uint64_t w;

		memcpy(&w, v + o, 8);
		if (cur->lock_off >= 0 && o % ((cur->vs + 7) / 8 * 8) == (uint32_t)cur->lock_off)
			continue; /* the lock word's 8 bytes: lock + padding */
		if (w >> 32 != id)
			return false;
		if (!have)
			first = w, have = true;
		else if (w != first)
			return false;
	}
	return true;
}

static bool is_percpu(void)
{
	return cur->type == BPFMAP_TYPE_PERCPU_HASH || cur->type == BPFMAP_TYPE_LRU_PERCPU_HASH;
}

/* A lookup's answer: 0 or -ENOENT, or -EBUSY where it may be. */
static void check_lookup(const char *what, uint32_t id, int ret, const uint8_t *v, uint32_t bytes)
{
	if (ret == -EBUSY) {
		busy_answers++;
		if (!main_in_write)
			note_error(what, id, ret); /* nothing of ours is held */
		return;
	}
	if (ret == -ENOENT)
		return;
	if (ret)
		note_error(what, id, ret);
	else if (!value_ok(id, v, bytes))
		note_error(what, id, -1000);
}

static void handler_lookups(void)
{
	uint8_t key[32], v[MAX_VAL];
	void *vals[4];

	for (uint32_t id = 1; id <= NKEYS + 2; id++) {
		uint32_t slot = (cur->vs + 7) / 8 * 8;
		void *p;
		int ret;

		key_of(id, key);
		ret = bpfmap_lookup_elem(map, key, v);
		check_lookup("copy-out", id, ret, v, val_bytes);
		if (cur->lock_off >= 0) {
			ret = bpfmap_lookup_elem_flags(map, key, v, BPFMAP_F_LOCK);
			check_lookup("F_LOCK copy-out", id, ret, v, val_bytes);
		}
		if (is_percpu()) {
			ret = bpfmap_lookup_elem_flags(map, key, v,
						       BPFMAP_F_CPU | (uint64_t)(ncpus - 1) << 32);
			check_lookup("F_CPU copy-out", id, ret, v, slot);
		}
		bpfmap_read_lock();
		errno = 0;
		p = bpfmap_lookup(map, key);
		if (p) {
			/* A pointer's value may change under us (in place);
			 * its key may not: its last word names it. */
			uint64_t w = __atomic_load_n((uint64_t *)((char *)p + slot - 8),
						     __ATOMIC_RELAXED);

			if (w >> 32 != id)
				note_error("program view", id, -1001);
		} else {
			check_lookup("program view", id, -errno, NULL, 0);
		}
		if (is_percpu()) {
			p = bpfmap_lookup_percpu(map, key, 0);
			if (!p)
				check_lookup("lookup_percpu", id, -errno, NULL, 0);
			ret = bpfmap_percpu_add(map, key, 0);
			check_lookup("percpu_add", id, ret, NULL, 0);
		}
		ret = bpfmap_lookup_bulk(map, key, 1, vals);
		if (ret < 0)
			check_lookup("lookup_bulk", id, ret, NULL, 0);
		bpfmap_read_unlock();
	}
}

/* Every writing call, on @id: a key of the main thread's while it is
 * inside a writing call, when all must answer -EBUSY; else one of the
 * handler's own, when none may.  From the timer, always the handler's own,
 * and -EBUSY only while the main thread's write flag is set. */
static void handler_writes(uint32_t id)
{
	uint8_t key[32], next[32], v[MAX_VAL], keys[4 * 32], vals[4 * MAX_VAL];
	uint32_t count;
	uint8_t out[32]; /* a batch cursor: up to key_size bytes (RHASH) */
	int rets[10], n = 0;

	key_of(id, key);
	value_of(id, 0x7777, v, val_bytes);
	memcpy(keys, key, cur->ks);
	memcpy(vals, v, val_bytes);
	rets[n++] = bpfmap_update_elem(map, key, v, BPFMAP_ANY);
	rets[n++] = bpfmap_update(map, key, v, BPFMAP_ANY);
	rets[n++] = bpfmap_delete_elem(map, key);
	rets[n++] = bpfmap_delete(map, key);
	rets[n++] = bpfmap_lookup_and_delete_elem(map, key, v);
	rets[n++] = bpfmap_get_next_key(map, key, next);
	count = 4;
	rets[n++] = bpfmap_lookup_batch(map, NULL, out, keys, vals, &count, NULL);
	count = 1;
	rets[n++] = bpfmap_update_batch(map, key, v, &count, NULL);
	count = 1;
	rets[n++] = bpfmap_delete_batch(map, key, &count, NULL);
	count = 4;
	/* From the first key on: only where it must not go through (it
	 * would take the main thread's keys). */
	if (main_holds)
		rets[n++] = bpfmap_lookup_and_delete_batch(map, NULL, out, keys, vals, &count,
							   NULL);
	for (int i = 0; i < n; i++) {
		if (!main_holds) {
			if (rets[i] == -EBUSY && !main_in_write)
				note_error("a write while the thread does not write", id, i);
			if (rets[i] == -EBUSY)
				write_busy++;
			else
				write_went_through++;
		} else if (main_in_write) {
			if (rets[i] != -EBUSY)
				note_error("a write while the thread writes", id, rets[i] * 100 - i);
			else
				write_busy++;
		} else if (rets[i] == -EBUSY) {
			note_error("a write while the thread looks up", id, i);
		} else {
			write_went_through++;
		}
	}
}

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (timer_mode && steps == steps_handled)
		return;
	steps_handled = steps;
	in_handler = 1;
	handled++;
	handler_lookups();
	/* While the thread writes, on its own keys (nothing may change);
	 * else on the handler's keys, which the main thread's model leaves
	 * out. */
	if (main_holds)
		handler_writes(1 + (uint32_t)(handled % NKEYS));
	else if (main_in_write || main_in_lookup)
		handler_writes(HKEY + (uint32_t)(handled % 4));
	in_handler = 0;
	errno = saved;
}

static void on_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	/* Not in other threads (liburcu's worker runs reclamation). */
	if (gettid() == main_tid && hooks_armed && !in_handler &&
	    raised_in_call < RAISES_PER_CALL) {
		raised_in_call++;
		switch (point) {
		case HOOK_INSERT_RESERVED: /* under the home's or bucket's lock */
		case HOOK_DELETE_HIDDEN:
		case HOOK_DELETE_DEAD:
		case HOOK_RETIRE_LOCKED:
		case HOOK_LRU_VICTIM: /* an eviction */
		case HOOK_LRU_KEYED:
		case HOOK_RTAB_STORE: /* inside a store window */
			main_holds = main_in_write;
			break;
		default:
			break;
		}
		raise(SIGUSR1);
		main_holds = 0;
	}
}

static void on_alarm(int sig)
{
	static const char msg[] = "test_reentry: hung (a call waited for its own thread)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, phase, strlen(phase)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

/* ---- the main thread's calls, against a model -------------------------- */

static uint32_t model_ver[NKEYS + 1]; /* 0: absent */
static uint32_t next_ver = 1;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static bool evicting(void)
{
	return cur->type == BPFMAP_TYPE_LRU_HASH || cur->type == BPFMAP_TYPE_LRU_PERCPU_HASH;
}

#define WRITE(call) (main_in_write = 1, ret = (call), main_in_write = 0)
#define LOOK(call) (main_in_lookup = 1, ret = (call), main_in_lookup = 0)

/* One random call on a random key, its answer checked against the model
 * (an evicting map may have lost keys: there only the call's own answers
 * are checked). */
static void main_step(void)
{
	uint32_t id = 1 + rnd(NKEYS), op = rnd(9);
	uint8_t key[32], v[MAX_VAL], next[32];
	bool present = model_ver[id] != 0;
	int ret = 0;

	raised_in_call = 0;
	steps++;
	key_of(id, key);
	switch (op) {
	case 0:
	case 1: {
		uint64_t flags = cur->lock_off >= 0 && op ? BPFMAP_F_LOCK : BPFMAP_ANY;

		value_of(id, next_ver, v, val_bytes);
		WRITE(bpfmap_update_elem(map, key, v, flags));
		assert_int_equal(ret, 0);
		model_ver[id] = next_ver++;
		break;
	}
	case 2:
		value_of(id, next_ver, v, val_bytes);
		WRITE(bpfmap_update_elem(map, key, v, BPFMAP_NOEXIST));
		if (!evicting())
			assert_int_equal(ret, present ? -EEXIST : 0);
		if (!ret)
			model_ver[id] = next_ver++;
		break;
	case 3:
		WRITE(bpfmap_delete_elem(map, key));
		if (!evicting())
			assert_int_equal(ret, present ? 0 : -ENOENT);
		model_ver[id] = 0;
		break;
	case 4: /* lookup-and-delete, then copy-out: the same answers */
	case 5:
		if (op == 4)
			WRITE(bpfmap_lookup_and_delete_elem(map, key, v));
		else
			LOOK(bpfmap_lookup_elem(map, key, v));
		if (!evicting())
			assert_int_equal(ret, present ? 0 : -ENOENT);
		if (!ret)
			assert_true(value_ok(id, v, val_bytes));
		if (op == 4)
			model_ver[id] = 0;
		break;
	case 6: {
		void *p;

		bpfmap_read_lock();
		main_in_lookup = 1;
		p = bpfmap_lookup(map, key);
		main_in_lookup = 0;
		if (!evicting())
			assert_int_equal(p != NULL, present);
		bpfmap_read_unlock();
		break;
	}
	case 7:
		WRITE(bpfmap_get_next_key(map, key, next));
		assert_true(ret == 0 || ret == -ENOENT);
		break;
	default: {
		uint8_t keys[NKEYS * 32], *vals = malloc((size_t)NKEYS * val_bytes);
		uint32_t count = NKEYS;
		uint8_t out[32];

		assert_non_null(vals);
		WRITE(bpfmap_lookup_batch(map, NULL, out, keys, vals, &count, NULL));
		assert_true(ret == 0 || ret == -ENOENT);
		free(vals);
		break;
	}
	}
}

/* The map holds exactly the model (maps that do not evict). */
static void check_model(void)
{
	uint8_t key[32], v[MAX_VAL], want[MAX_VAL];

	if (evicting())
		return;
	for (uint32_t id = 1; id <= NKEYS; id++) {
		int ret;

		key_of(id, key);
		ret = bpfmap_lookup_elem(map, key, v);
		if (!model_ver[id]) {
			assert_int_equal(ret, -ENOENT);
			continue;
		}
		assert_int_equal(ret, 0);
		value_of(id, model_ver[id], want, val_bytes);
		assert_true(value_ok(id, v, val_bytes));
		assert_memory_equal(v + val_bytes - 8, want + val_bytes - 8, 8);
	}
}

static void setup_map(const struct cfg *c)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = c->flags, .lock_off = c->lock_off);

	cur = c;
	ncpus = (uint32_t)bpfmap_num_possible_cpus();
	assert_true(ncpus * 8 <= MAX_VAL / MAX_VS * 8);
	val_bytes = is_percpu() ? (c->vs + 7) / 8 * 8 * ncpus : c->vs;
	map = bpfmap_create(c->type, "reentry", c->ks, c->vs, c->max_entries, &opts);
	assert_non_null(map);
	memset(model_ver, 0, sizeof(model_ver));
	handled = busy_answers = write_busy = write_went_through = errors = 0;
}

static void report(const char *how)
{
	if (errors)
		fail_msg("%s: %lu wrong answers; the first: %s", how, errors, first_error);
	print_message("  %-28s %-6s %6lu signals: %lu lookups and %lu writes -EBUSY, "
		      "%lu writes through\n",
		      cur->name, how, handled, busy_answers, write_busy, write_went_through);
}

static void install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	signal(SIGALRM, on_alarm);
}

/* A signal at every hook point the main thread's calls pass. */
static void test_at_hooks(void **state)
{
	(void)state;
	install();
	main_tid = gettid();
	__atomic_store_n(&bpfmap_test_hook, on_hook, __ATOMIC_RELEASE);
	for (size_t c = 0; c < ARRAY_SIZE(cfgs); c++) {
		phase = cfgs[c].name;
		alarm(60);
		setup_map(&cfgs[c]);
		hooks_armed = 1;
		for (int i = 0; i < 3000; i++)
			main_step();
		hooks_armed = 0;
		check_model();
		report("hooks");
		/* Some signal came while the thread wrote, and some writes
		 * of the handler's went through while it looked up. */
		assert_true(write_busy > 0);
		bpfmap_free(map);
	}
	alarm(0);
	__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_RELEASE);
}

/* A signal every 20 us, wherever the thread is. */
static void test_timer(void **state)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1 };
	struct itimerspec on = { { 0, 20000 }, { 0, 20000 } }, off = { { 0, 0 }, { 0, 0 } };
	timer_t timer;

	(void)state;
	install();
	timer_mode = 1;
	sev._sigev_un._tid = gettid();
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	for (size_t c = 0; c < ARRAY_SIZE(cfgs); c++) {
		struct timespec t0, t;

		phase = cfgs[c].name;
		alarm(60);
		setup_map(&cfgs[c]);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(timer_settime(timer, 0, &on, NULL), 0);
		do {
			for (int i = 0; i < 256; i++)
				main_step();
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 200000000L);
		assert_int_equal(timer_settime(timer, 0, &off, NULL), 0);
		check_model();
		report("timer");
		bpfmap_free(map);
	}
	alarm(0);
	timer_mode = 0;
	timer_delete(timer);
	rcu_wait_deferred(); /* the maps' last callbacks, before LeakSanitizer */
}

/* ---- an F_LOCK copy-out that holds its value's lock ------------------- */

/* What the handler answered while the main thread's F_LOCK copy-out held
 * key 1's value lock. */
static volatile int held_flock_lookup, held_flock_update, held_plain_lookup, held_other_lookup;
static volatile unsigned long flock_rounds, flock_holds;
static struct bpfmap_spin_lock *held_lock; /* key 1's, from the program view */

static void on_held_signal(int sig)
{
	uint8_t key[32], v[MAX_VAL];
	int saved = errno;

	(void)sig;
	in_handler = 1;
	key_of(1, key);
	held_flock_lookup = bpfmap_lookup_elem_flags(map, key, v, BPFMAP_F_LOCK);
	value_of(1, 0x7777, v, val_bytes);
	held_flock_update = bpfmap_update_elem(map, key, v, BPFMAP_F_LOCK);
	held_plain_lookup = bpfmap_lookup_elem(map, key, v);
	if (!held_plain_lookup && !value_ok(1, v, val_bytes))
		held_plain_lookup = -1000;
	key_of(2, key);
	held_other_lookup = bpfmap_lookup_elem_flags(map, key, v, BPFMAP_F_LOCK);
	if (!held_other_lookup && !value_ok(2, v, val_bytes))
		held_other_lookup = -1000;
	in_handler = 0;
	errno = saved;
}

/* The main thread's unlocked rounds each lose (a program takes and drops
 * the lock between the copy and its check), so the copy-out takes the
 * lock; there the signal comes. */
static void on_flock_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (in_handler || gettid() != main_tid)
		return;
	if (point == HOOK_FLOCK_COPIED) {
		flock_rounds++;
		bpfmap_spin_lock(held_lock);
		bpfmap_spin_unlock(held_lock);
	} else if (point == HOOK_FLOCK_HELD) {
		flock_holds++;
		raise(SIGUSR1);
	}
}

/*
 * A handler that interrupts an F_LOCK copy-out while it holds the value's
 * lock, and makes F_LOCK calls on that value, answers -EBUSY at once.
 * Before the copy-out marked its thread there, the handler's F_LOCK lookup
 * and update both waited for ever for the lock its own thread held.
 */
static void test_flock_copy_holds(void **state)
{
	static const struct cfg lock_cfgs[] = {
		{ "HASH k8 v64 lock", BPFMAP_TYPE_HASH, 8, 64, 0, 16, 0 },
		{ "HASH k32 v64 lock (flat)", BPFMAP_TYPE_HASH, 32, 64, 0, 4096, 24 },
		{ "HASH chained k16 v64 lock", BPFMAP_TYPE_HASH, 16, 64, BPFMAP_F_NO_PREALLOC, 16,
		  8 },
		{ "RHASH k8 v64 lock", BPFMAP_TYPE_RHASH, 8, 64, BPFMAP_F_NO_PREALLOC, 64, 0 },
	};
	struct sigaction sa = { .sa_handler = on_held_signal };

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	signal(SIGALRM, on_alarm);
	main_tid = gettid();
	for (size_t c = 0; c < ARRAY_SIZE(lock_cfgs); c++) {
		uint8_t key[32], v[MAX_VAL];
		void *p;

		phase = lock_cfgs[c].name;
		setup_map(&lock_cfgs[c]);
		for (uint32_t id = 1; id <= 2; id++) {
			key_of(id, key);
			value_of(id, id, v, val_bytes);
			assert_int_equal(bpfmap_update_elem(map, key, v, BPFMAP_ANY), 0);
		}
		key_of(1, key);
		bpfmap_read_lock();
		p = bpfmap_lookup(map, key);
		bpfmap_read_unlock();
		assert_non_null(p); /* key 1 stays: its value stays where it is */
		held_lock = (struct bpfmap_spin_lock *)((char *)p + cur->lock_off);
		flock_rounds = flock_holds = 0;
		held_flock_lookup = held_flock_update = held_plain_lookup = 1;
		held_other_lookup = 1;
		alarm(10);
		__atomic_store_n(&bpfmap_test_hook, on_flock_hook, __ATOMIC_RELEASE);
		assert_int_equal(bpfmap_lookup_elem_flags(map, key, v, BPFMAP_F_LOCK), 0);
		__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_RELEASE);
		alarm(0);
		assert_true(value_ok(1, v, val_bytes));
		assert_int_equal(flock_rounds, 4);
		assert_int_equal(flock_holds, 1);
		assert_int_equal(held_flock_lookup, -EBUSY);
		assert_int_equal(held_flock_update, -EBUSY);
		assert_int_equal(held_plain_lookup, 0);
		assert_int_equal(held_other_lookup, 0);
		/* The handler changed nothing, and the lock is free again. */
		value_of(1, 1, v, val_bytes);
		assert_int_equal(bpfmap_update_elem(map, key, v, BPFMAP_F_LOCK), 0);
		assert_int_equal(bpfmap_lookup_elem_flags(map, key, v, BPFMAP_F_LOCK), 0);
		assert_true(value_ok(1, v, val_bytes));
		print_message("  %-28s F_LOCK copy-out held: the handler's F_LOCK calls -EBUSY\n",
			      cur->name);
		bpfmap_free(map);
	}
	rcu_wait_deferred();
}

/* test_lru_handler_*: the key the handler updates or inserts, and its
 * answers (INT32_MIN: no signal yet). */
static struct bpfmap *lru_map;
static uint64_t lru_handler_key;
static volatile int lru_handler_ret[2] = { INT32_MIN, INT32_MIN };
static enum test_hook_point lru_point;
static volatile sig_atomic_t lru_raised;

static void on_lru_signal(int sig)
{
	uint64_t v = 9;

	(void)sig;
	lru_handler_ret[0] = bpfmap_update_elem(lru_map, &lru_handler_key, &v, BPFMAP_EXIST);
	lru_handler_ret[1] = bpfmap_update_elem(lru_map, &lru_handler_key, &v, BPFMAP_ANY);
}

/* At @lru_point in the main thread, once: a key of a chain node for the
 * relink's case (the first live one), then the signal. */
static void on_lru_hook(enum test_hook_point point, const void *obj)
{
	struct flat *f = to_flat(lru_map);

	(void)obj;
	if (point != lru_point || lru_raised || gettid() != main_tid)
		return;
	if (point == HOOK_NODE_RELINKING) {
		lru_handler_key = 0;
		for (uint32_t h = 0; h < f->n_homes && !lru_handler_key; h++)
			for (uint32_t n = flat_chain(f, h); n != FLAT_NONE; n = flat_node_next(f, n))
				if (flat_tag_at(f, n) >= FLAT_TAG_MIN) {
					lru_handler_key = flat_small_at(f, n, 8);
					break;
				}
		if (!lru_handler_key)
			return;
	}
	lru_raised = 1;
	raise(SIGUSR1);
}

static void lru_handler_setup(uint32_t max_entries, enum test_hook_point point)
{
	struct sigaction sa = { .sa_handler = on_lru_signal };
	uint64_t v = 1;

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	signal(SIGALRM, on_alarm);
	main_tid = gettid();
	lru_map = must_create(BPFMAP_TYPE_LRU_HASH, 8, 8, max_entries, 0);
	for (uint64_t k = 1; k <= max_entries; k++)
		assert_int_equal(bpfmap_update_elem(lru_map, &k, &v, BPFMAP_NOEXIST), 0);
	lru_point = point;
	lru_raised = 0;
	lru_handler_ret[0] = lru_handler_ret[1] = INT32_MIN;
	alarm(10);
	__atomic_store_n(&bpfmap_test_hook, on_lru_hook, __ATOMIC_RELEASE);
}

static void lru_handler_done(void)
{
	__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_RELEASE);
	alarm(0);
	assert_true(lru_raised);
	for (int i = 0; i < 2; i++)
		assert_true(lru_handler_ret[i] == -EBUSY || lru_handler_ret[i] == 0);
	bpfmap_free(lru_map);
}

/*
 * A full LRU map turned over inside one read-side section reuses dead chain
 * nodes at once, holding the map's moved seq while it relinks one; a
 * signal there whose handler updates a key in a chain node (EXIST, ANY).
 * The update's lock-free probe walked the chain without checking the
 * thread's mark and waited for the moved seq for ever (an adversarial
 * helper); it answers -EBUSY (or goes through) now.
 */
static void test_lru_handler_beside_relink(void **state)
{
	(void)state;
	skip_if_chain_forced("the flat table's relink hook");
	phase = "LRU handler beside a relink";
	lru_handler_setup(64, HOOK_NODE_RELINKING);
	bpfmap_read_lock();
	for (uint64_t k = 1000; k < 200000 && !lru_raised; k++) {
		uint64_t v = 1;

		assert_int_equal(bpfmap_update_elem(lru_map, &k, &v, BPFMAP_ANY), 0);
	}
	bpfmap_read_unlock();
	lru_handler_done();
}

/*
 * An insert into a full 1-entry LRU map: its eviction hands it the room,
 * then it inserts.  A signal between the two whose handler inserts a new
 * key: the thread was not marked there, and the handler waited for ever
 * for the room its own thread held (an adversarial helper, with a timer's
 * signals); it is marked from the eviction to the insert now.  On both
 * tables: the chained one's window lies in its own update loop.
 */
static void test_lru_handler_after_eviction(void **state)
{
	bool chain_env = getenv("BPFMAP_TABLE") && !strcmp(getenv("BPFMAP_TABLE"), "chain");

	(void)state;
	for (int chain = 0; chain < 2; chain++) {
		uint64_t k = 2, v = 1;

		phase = chain ? "LRU handler after an eviction (chained)"
			      : "LRU handler after an eviction (flat)";
		lru_handler_key = 3;
		if (chain && !chain_env)
			assert_int_equal(setenv("BPFMAP_TABLE", "chain", 1), 0);
		lru_handler_setup(1, HOOK_LRU_EVICTED);
		if (chain && !chain_env)
			assert_int_equal(unsetenv("BPFMAP_TABLE"), 0);
		assert_true(chain || chain_env ? lru_map->ops != &flat_ops
					       : lru_map->ops == &flat_ops);
		assert_int_equal(bpfmap_update_elem(lru_map, &k, &v, BPFMAP_ANY), 0);
		assert_int_equal(lru_handler_ret[1], -EBUSY);
		/* The insert went in, the handler's key did not. */
		assert_int_equal(bpfmap_lookup_elem(lru_map, &k, &v), 0);
		k = 3;
		assert_int_equal(bpfmap_lookup_elem(lru_map, &k, &v), -ENOENT);
		lru_handler_done();
	}
}

/* ---- bpfmap_percpu_add in a handler ----------------------------------- */

static struct bpfmap *pcpu_map;
static enum test_hook_point pcpu_point;
static volatile int pcpu_raised, pcpu_handler_ret;

static void on_pcpu_signal(int sig)
{
	uint64_t k = 1;
	int saved = errno;

	(void)sig;
	pcpu_handler_ret = bpfmap_percpu_add(pcpu_map, &k, 10);
	errno = saved;
}

static void on_pcpu_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (point != pcpu_point || pcpu_raised || gettid() != main_tid)
		return;
	pcpu_raised = 1;
	raise(SIGUSR1);
}

/* Raise the signal at @point's next hit on the main thread, during @op. */
#define PCPU_SIGNAL_AT(point, op)                                                     \
	do {                                                                          \
		pcpu_point = (point);                                                 \
		pcpu_raised = 0;                                                      \
		pcpu_handler_ret = INT32_MIN;                                         \
		__atomic_store_n(&bpfmap_test_hook, on_pcpu_hook, __ATOMIC_RELEASE); \
		op;                                                                   \
		__atomic_store_n(&bpfmap_test_hook, NULL, __ATOMIC_RELEASE);         \
		assert_true(pcpu_raised);                                             \
	} while (0)

static uint64_t pcpu_sum(struct bpfmap *m, uint64_t key)
{
	uint64_t v[64] = { 0 }, sum = 0;

	assert_true(bpfmap_num_possible_cpus() <= 64);
	assert_int_equal(bpfmap_lookup_elem(m, &key, v), 0);
	for (int c = 0; c < bpfmap_num_possible_cpus(); c++)
		sum += v[c];
	return sum;
}

/*
 * A handler's bpfmap_percpu_add, as a BPF program's per-CPU increment in
 * NMI context, goes through where it would not wait.  Since its adds went
 * into store windows (634dad7), it answered -EBUSY whenever its thread was
 * inside one (an add or a lock-free overwrite on any map), and, once a
 * map's adds took the lock after a lookup_and_delete, whenever its thread
 * was in any writing call on any map: 58-84% of a timer's samples (an
 * adversarial helper).  It adds inside the interrupted window now, and
 * tries the lock instead of refusing at the mark.
 */
static void test_percpu_add_in_handler(void **state)
{
	static const uint32_t flags[] = { 0, BPFMAP_F_NO_PREALLOC };
	struct sigaction sa = { .sa_handler = on_pcpu_signal };

	(void)state;
	phase = "percpu_add in a handler";
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	main_tid = gettid();
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		struct bpfmap *other = must_create(BPFMAP_TYPE_HASH, 8, 8, 64, 0);
		uint64_t zero[64] = { 0 }, k1 = 1, k2 = 2, k3 = 3, v = 0;

		pcpu_map = must_create(BPFMAP_TYPE_PERCPU_HASH, 8, 8, 64, flags[i]);
		assert_int_equal(bpfmap_update_elem(pcpu_map, &k1, zero, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_update_elem(pcpu_map, &k2, zero, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_percpu_add(pcpu_map, &k1, 1), 0); /* the window's record */
		/* Inside the thread's own add's window. */
		PCPU_SIGNAL_AT(HOOK_PCPU_ADD, assert_int_equal(bpfmap_percpu_add(pcpu_map, &k1, 2), 0));
		assert_int_equal(pcpu_handler_ret, 0);
		assert_int_equal(pcpu_sum(pcpu_map, 1), 13);
		/* Adds take the lock after a take; the thread is in an insert
		 * into another map, marked, holding that map's home lock. */
		assert_int_equal(bpfmap_lookup_and_delete_elem(pcpu_map, &k2, zero), 0);
		PCPU_SIGNAL_AT(HOOK_INSERT_RESERVED,
			       assert_int_equal(bpfmap_update_elem(other, &k3, &v, BPFMAP_NOEXIST), 0));
		assert_int_equal(pcpu_handler_ret, 0);
		assert_int_equal(pcpu_sum(pcpu_map, 1), 23);
		bpfmap_free(pcpu_map);
		bpfmap_free(other);
	}
	signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_at_hooks),
		test_entry(test_timer),
		test_entry(test_flock_copy_holds),
		test_entry(test_lru_handler_beside_relink),
		test_entry(test_lru_handler_after_eviction),
		test_entry(test_percpu_add_in_handler),
	};

	return run_test_group(tests);
}
