/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Races at fixed interleavings (issue 14).  The library is the hooked build
 * (util/test_hook.h): a thread is stopped at a critical point of its
 * operation, the test runs another operation against it, checks what that one
 * answers, and lets the first go on.  Each case below failed on e3e6fd2 (at
 * the same points, forced there with breakpoints):
 *  - a delete whose effect another thread has seen (the key gone) still held
 *    its room: an insert answered -E2BIG into a map with room (defect 4),
 *    in flat maps, sharded flat maps and chained maps;
 *  - an insert whose key was not visible yet made the map full: another
 *    insert answered -E2BIG, and then the key was missing;
 *  - a sharded count's credits in flight between a shard and the global
 *    count: an insert on another CPU answered -E2BIG (defect 2);
 *  - the lock-free -E2BIG probe of a word key read the home's lock word,
 *    two writers of the home ran (a delete that lowered its reach, an insert
 *    of the key), and the word read the same again: the probe answered
 *    -E2BIG for a key present by then (defect 3).
 * And one of the chained layout that replaced linear probing: a chain walk
 * that reached a node just before an in-section reuse relinked it into
 * another home's chain.  And two of the chained table's section-free
 * copy-outs (tables/chain_lookup.c): a copy whose element was deleted and
 * reused for another key before it validated, and a walk that reached an
 * element just before it was reused in another bucket; and keys deeper than
 * such a walk goes.
 * And RHASH's (tables/rtab.h): a copy-out stopped between a slot's hash
 * match and its link while the key is deleted and inserted again into a
 * slot it has passed, which would miss the key without its check of the
 * bucket's lock word; and a copy-out stopped between its copy and that
 * check while the value is overwritten in place.  And an RHASH walk step
 * stopped in an overflow group that a delete then frees: the delete must
 * not wait for it, nor a fork()ed child's insert, and the step must look
 * again rather than miss the rest of its bucket; and one whose bucket
 * keeps changing, which must lock it at last.  And an update that waits
 * for a value's spin lock that a program holds, in all three tables: the
 * bucket's other keys and copy-outs must not wait with it.
 * And the slot arena's (tables/slot_arena.c): a chunk stopped between its
 * last free and the return of its pages while others allocate.
 * And the flat LRU's: an eviction stopped before and after it reads its
 * victim's key while the victim's position is refilled by a key of the
 * same home and tag, and an insert stopped in its eviction while its key
 * is inserted by another thread, and a delete stopped once its node is
 * dead while an in-section insert reuses the node.  And the flat table's
 * section-free copy-out of a word key, stopped with its key matched while
 * its home slot is reclaimed and filled with another key.  And copy-outs
 * and an F_LOCK lookup-and-delete that write into their key's own buffer
 * and then must look again: they must not read the key from it again.
 * A stopped operation holds a bucket lock at most; the other operations
 * either complete or wait for it, and the test checks which.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_rng.h"
#include "test_util.h"
#include "tables/flat.h"
#include "tables/flat_find.h"
#include "tables/flat_lru.h"
#include "tables/flat_words.h"
#include "tables/chain.h"
#include "tables/chain_lru.h"
#include "tables/rtab.h"
#include "tables/slot_arena.h"
#include "util/test_hook.h"
#include "maps/hash_family.h"

#ifdef __SANITIZE_THREAD__
#define CHAIN_COPY_SECTION_FREE 0 /* TSan builds copy long keys out in a section */
#else
#define CHAIN_COPY_SECTION_FREE 1
#endif

#define skip_msg(why)                         \
	do {                                  \
		print_message("skipped: %s\n", why); \
		skip();                       \
	} while (0)

/* ---- stopping one thread at one hook ------------------------------------- */

static struct {
	enum test_hook_point point;
	pthread_t who;
	int skip;    /* hits to let pass before stopping */
	int armed;   /* atomic */
	int reached; /* atomic */
	int round;   /* atomic: stops so far (op_restop) */
	int go;	     /* atomic: the thread goes on once go > the round it stopped in */
	const void *obj; /* the hook's object where it stopped */
} stop;

static void hook(enum test_hook_point point, const void *obj)
{
	/* Armed first: liburcu's worker runs hooks too, while a test sets
	 * the next stop up (stop_reset). */
	if (!__atomic_load_n(&stop.armed, __ATOMIC_SEQ_CST) ||
	    point != __atomic_load_n(&stop.point, __ATOMIC_RELAXED) ||
	    !pthread_equal(pthread_self(), __atomic_load_n(&stop.who, __ATOMIC_RELAXED)))
		return;
	if (stop.skip-- > 0)
		return;
	__atomic_store_n(&stop.armed, 0, __ATOMIC_SEQ_CST);
	stop.obj = obj;
	int round = __atomic_load_n(&stop.round, __ATOMIC_SEQ_CST);

	__atomic_store_n(&stop.reached, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&stop.go, __ATOMIC_SEQ_CST) <= round)
		usleep(100);
}

/* An operation run in a thread of its own. */
struct op {
	struct bpfmap *m;
	uint64_t key, key_hi; /* keys of up to 16 bytes: key_hi 0 */
	uint64_t value;
	bool del;
	bool look; /* a program-view lookup (0: found), in a read-side section */
	bool bare; /* look outside any read-side section */
	bool copy; /* a copy-out lookup (bpfmap_lookup_elem's answer) into out */
	bool into_key; /* copy, take: into the key's own buffer (key, key_hi) */
	uint64_t flags; /* copy, take: their flags */
	bool take; /* a lookup-and-delete into out */
	bool walk; /* get_next_key from the first key into out */
	/* Overwrite the key with the value it holds before anything else: a
	 * thread's first overwrite registers its store window under the
	 * lock, and only later ones store lock-free. */
	bool warm;
	bool warmed; /* atomic: the warm-up is done (op_start_stopped arms after it) */
	uint64_t out;
	uint64_t out_hi; /* the second word of a 16-byte value */
	int cpu; /* -1: anywhere */
	bool stopped; /* stop this one at stop.point */
	int ret;      /* atomic: INT32_MIN until done */
	pthread_t t;
};

_Static_assert(offsetof(struct op, out_hi) == offsetof(struct op, out) + 8,
	       "a 16-byte value is copied out into out and out_hi");

static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

static void *op_thread(void *arg)
{
	struct op *o = arg;
	int ret;

	if (o->cpu >= 0 && !pin(o->cpu))
		abort();
	if (o->warm) {
		uint64_t cur[2];

		if (bpfmap_lookup_elem(o->m, &o->key, cur) ||
		    bpfmap_update_elem(o->m, &o->key, cur, BPFMAP_EXIST))
			abort();
		__atomic_store_n(&o->warmed, true, __ATOMIC_SEQ_CST);
	}
	while (o->stopped && !__atomic_load_n(&stop.armed, __ATOMIC_SEQ_CST))
		usleep(100);
	if (o->copy) {
		ret = bpfmap_lookup_elem_flags(o->m, &o->key,
					       o->into_key ? (void *)&o->key : &o->out, o->flags);
	} else if (o->take) {
		ret = bpfmap_lookup_and_delete_elem_flags(o->m, &o->key,
							  o->into_key ? (void *)&o->key : &o->out,
							  o->flags);
	} else if (o->walk) {
		ret = bpfmap_get_next_key(o->m, NULL, &o->out);
	} else if (o->look) {
		if (!o->bare)
			bpfmap_read_lock();
		ret = bpfmap_lookup(o->m, &o->key) ? 0 : -ENOENT;
		if (!o->bare)
			bpfmap_read_unlock();
	} else {
		ret = o->del ? bpfmap_delete_elem(o->m, &o->key)
			     : bpfmap_update_elem(o->m, &o->key, &o->value, BPFMAP_ANY);
	}
	__atomic_store_n(&o->ret, ret, __ATOMIC_SEQ_CST);
	return NULL;
}

static void op_start(struct op *o)
{
	o->ret = INT32_MIN;
	assert_int_equal(pthread_create(&o->t, NULL, op_thread, o), 0);
}

/* A new stop at @point, disarmed: every field but armed is read only
 * once it is armed. */
static void stop_reset(enum test_hook_point point, int skip)
{
	__atomic_store_n(&stop.armed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop.point, point, __ATOMIC_RELAXED);
	stop.skip = skip;
	stop.obj = NULL;
	__atomic_store_n(&stop.reached, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop.round, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop.go, 0, __ATOMIC_SEQ_CST);
}

/* Start @o and stop it at @point (after @skip earlier hits). */
static void op_start_stopped(struct op *o, enum test_hook_point point, int skip)
{
	stop_reset(point, skip);
	o->stopped = true;
	op_start(o);
	while (o->warm && !__atomic_load_n(&o->warmed, __ATOMIC_SEQ_CST))
		usleep(100);
	__atomic_store_n(&stop.who, o->t, __ATOMIC_RELAXED);
	__atomic_store_n(&stop.armed, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&stop.reached, __ATOMIC_SEQ_CST)) {
		assert_int_equal(__atomic_load_n(&o->ret, __ATOMIC_SEQ_CST), INT32_MIN);
		usleep(100);
	}
}

/* thread_start_stopped's function and argument, run once the stop is
 * armed: else a quick @fn passed @point before, and the test waited for
 * ever (test_chain_reuse_value_first, about one run in ten under load). */
static struct {
	void *(*fn)(void *);
	void *arg;
} stopped_start;

static void *start_when_armed(void *unused)
{
	void *(*fn)(void *) = stopped_start.fn;
	void *arg = stopped_start.arg;

	(void)unused;
	while (!__atomic_load_n(&stop.armed, __ATOMIC_SEQ_CST))
		usleep(100);
	return fn(arg);
}

/* Run @fn(@arg) in thread *@t, stopped at @point's first hit. */
static void thread_start_stopped(pthread_t *t, void *(*fn)(void *), void *arg,
				 enum test_hook_point point)
{
	stop_reset(point, 0);
	stopped_start.fn = fn;
	stopped_start.arg = arg;
	assert_int_equal(pthread_create(t, NULL, start_when_armed, NULL), 0);
	__atomic_store_n(&stop.who, *t, __ATOMIC_RELAXED);
	__atomic_store_n(&stop.armed, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&stop.reached, __ATOMIC_SEQ_CST))
		usleep(100);
}

static void op_release(void)
{
	__atomic_store_n(&stop.go, __atomic_load_n(&stop.round, __ATOMIC_SEQ_CST) + 1,
			 __ATOMIC_SEQ_CST);
}

/* Let the stopped @o go on, and stop it at the same point's next hit. */
static void op_restop(struct op *o)
{
	int round = __atomic_load_n(&stop.round, __ATOMIC_SEQ_CST) + 1;

	__atomic_store_n(&stop.reached, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop.round, round, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop.armed, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stop.go, round, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&stop.reached, __ATOMIC_SEQ_CST)) {
		assert_int_equal(__atomic_load_n(&o->ret, __ATOMIC_SEQ_CST), INT32_MIN);
		usleep(100);
	}
}

static int op_join(struct op *o)
{
	pthread_join(o->t, NULL);
	return o->ret;
}

/* The answer *@ret of another thread (INT32_MIN until it comes), as soon
 * as it comes within @ms milliseconds, else INT32_MIN. */
static int answer_within(const int *ret, int ms)
{
	for (int i = 0; i < ms; i++) {
		int r = __atomic_load_n(ret, __ATOMIC_SEQ_CST);

		if (r != INT32_MIN)
			return r;
		usleep(1000);
	}
	return INT32_MIN;
}

/* Has it come within 50 ms?  For calls that must be waiting. */
static int answer_soon(const int *ret)
{
	return answer_within(ret, 50);
}

static int op_answer_soon(struct op *o)
{
	return answer_soon(&o->ret);
}

/* The answer of a call that must answer without waiting for anyone, within
 * 10 s: answer_soon's 50 ms, which a loaded machine's scheduler alone may
 * pass, failed such asserts under load. */
static int answer_late(const int *ret)
{
	return answer_within(ret, 10000);
}

static int op_answer_late(struct op *o)
{
	return answer_late(&o->ret);
}

static struct bpfmap *full_map(uint32_t ks, uint32_t me, uint32_t flags)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, ks, 8, me, flags);

	for (uint64_t k = 0; k < me; k++) {
		uint64_t key[2] = { k, 0 }, v = k;

		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	return m;
}

static int setup_hook(void **state)
{
	(void)state;
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
	return test_close_sections(state);
}

/* ---- an LRU victim replaced between its pick and its delete --------------- */

/* The home of key @k in a map of 4- or 8-byte keys (little-endian: the
 * hash reads the low 4 bytes of the word for the former). */
static uint32_t home_of(const struct flat *f, uint32_t k)
{
	uint64_t w = k;

	return flat_home(f, flat_hash(f, &w));
}

/* A 64-entry LRU_HASH of 4-byte keys with every home slot live and no node
 * (eight keys a home, eight homes).  Returns the first key not inserted. */
static uint64_t lru_homes_full(struct bpfmap *m)
{
	struct flat *f = to_flat(m);
	uint32_t per[8] = { 0 }, n = 0;
	uint64_t k, v = 1;

	assert_int_equal(f->n_homes, 8);
	for (k = 1; n < 64; k++) {
		uint32_t h = home_of(f, (uint32_t)k);

		if (per[h] == FLAT_SLOTS)
			continue;
		per[h]++;
		n++;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(f->node_hwm, 0);
	return k;
}

/*
 * An eviction picks a victim under the LRU's lock and deletes it under its
 * home's lock after.  Stopped in between (@point: before it reads the
 * victim's key, or after, its read-side section over and the home not yet
 * locked), the victim is deleted and its position given to a new key X of
 * the same home and tag (the one free slot of a map whose homes are exactly
 * full), so that the position, its home and its tag all look the same.
 * The eviction must see that the position no longer holds the element it
 * picked (the generation differs), leave X alone and evict another key.
 * Without the generation check it evicted X, a key inserted after
 * everything else and never given a chance.
 */
static void check_lru_victim_replaced(enum test_hook_point point)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 4, 8, 64, 0);
	struct flat *f = to_flat(m);
	uint64_t k = lru_homes_full(m), victim, x, v = 1, out; /* little-endian */
	struct op ins = { .m = m, .key = k, .value = 2, .cpu = -1 };
	struct flat_place vp;
	uint32_t pos;

	/* A new key: the map is full, so it evicts. */
	op_start_stopped(&ins, point, 0);
	pos = *(const uint32_t *)stop.obj;
	victim = flat_small_at(f, pos, 4);
	vp = flat_place_of(f, flat_hash(f, &victim));
	assert_int_equal(bpfmap_delete_elem(m, &victim), 0);
	flat_reclaim_sync(f);
	for (x = k + 1;; x++) {
		struct flat_place xp = flat_place_of(f, flat_hash(f, &x));

		if (xp.home == vp.home && xp.tag == vp.tag)
			break;
	}
	assert_int_equal(bpfmap_update_elem(m, &x, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(flat_small_at(f, pos, 4), x);
	op_release();
	assert_int_equal(op_join(&ins), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &x, &out), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &ins.key, &out), 0);
	assert_int_equal(out, 2);
	assert_errno(bpfmap_lookup_elem(m, &victim, &out), ENOENT);
	assert_int_equal(walk_count(m, 4), 64);
	bpfmap_free(m);
}

static void test_lru_victim_replaced(void **state)
{
	(void)state;
	check_lru_victim_replaced(HOOK_LRU_VICTIM);
	check_lru_victim_replaced(HOOK_LRU_KEYED);
}

/* Live elements marked small in flat LRU map @f, which the small queue's
 * count must equal. */
static uint32_t lru_small_states(const struct flat *f)
{
	uint32_t small = 0;

	for (uint32_t pos = 0; pos < f->n_buckets * FLAT_SLOTS; pos++)
		if (flat_tag_at(f, pos) >= FLAT_TAG_MIN &&
		    (flat_lru_state(f->lru, flat_elem_of(f, pos)) & FLAT_LRU_SMALL))
			small++;
	return small;
}

/*
 * An insert of a new key into a full LRU map evicts before it locks its
 * home (its probe saw the key absent and the map full).  Stopped with its
 * victim picked, the key is inserted by another thread (which evicts a
 * victim of its own).  The stopped insert then deletes its victim and finds
 * its key present: it overwrites the value, and gives back what the
 * eviction handed it, the victim's room and its count in the small queue,
 * so the map holds one element fewer and the small queue's count still
 * matches the elements marked small.
 */
static void test_lru_key_came_meanwhile(void **state)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 4, 8, 64, 0);
	struct flat *f = to_flat(m);
	uint64_t k = lru_homes_full(m), v = 3, out;
	struct op ins = { .m = m, .key = k, .value = 2, .cpu = -1 };
	(void)state;
	op_start_stopped(&ins, HOOK_LRU_VICTIM, 0);
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	op_release();
	assert_int_equal(op_join(&ins), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(out, 2); /* the stopped insert's, after ours */
	assert_int_equal(walk_count(m, 4), 63);
	assert_int_equal(count_elements(&f->count), 63);
	assert_int_equal(lru_small_states(f), __atomic_load_n(&f->lru->small, __ATOMIC_RELAXED));
	/* The room given back: a new key goes in without evicting. */
	k += 1000;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(walk_count(m, 4), 64);
	bpfmap_free(m);
}

/*
 * An insert into a full LRU map, stopped with its victim picked (@point, as
 * above); then a delete makes room: of the victim itself, or of another key
 * (@victim_itself false).  The insert must take that room and evict
 * nothing: a map with room never evicts (docs/MAPS.md).  It took another
 * victim when its own had gone, or its victim all the same, and the map
 * held 63 of 64 (an adversarial helper: 1.8% of rounds of a new flow's
 * insert beside an old one's expiry, without hooks).
 */
static void check_lru_room_made(enum test_hook_point point, bool victim_itself)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 4, 8, 64, 0);
	struct flat *f = to_flat(m);
	uint64_t k = lru_homes_full(m), victim, gone, out;
	struct op ins = { .m = m, .key = k, .value = 2, .cpu = -1 };

	op_start_stopped(&ins, point, 0);
	victim = flat_small_at(f, *(const uint32_t *)stop.obj, 4);
	gone = victim_itself ? victim : victim == 1 ? 2 : 1;
	assert_int_equal(bpfmap_delete_elem(m, &gone), 0);
	op_release();
	assert_int_equal(op_join(&ins), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &out), 0);
	assert_int_equal(walk_count(m, 4), 64);
	if (!victim_itself)
		assert_int_equal(bpfmap_lookup_elem(m, &victim, &out), 0);
	assert_int_equal(lru_small_states(f), __atomic_load_n(&f->lru->small, __ATOMIC_RELAXED));
	bpfmap_free(m);
}

static void test_lru_room_made_meanwhile(void **state)
{
	(void)state;
	check_lru_room_made(HOOK_LRU_VICTIM, true);
	check_lru_room_made(HOOK_LRU_VICTIM, false);
	check_lru_room_made(HOOK_LRU_KEYED, true);
	check_lru_room_made(HOOK_LRU_KEYED, false);
}

/*
 * The same on the chained table (16-byte keys): an insert into a full
 * 64-entry LRU_HASH stopped once it found the map full, before it picks a
 * victim; a delete makes room meanwhile.  The insert must take that room:
 * it evicted a key all the same, and the map held 63 of 64.
 */
static void check_chain_lru_room_made(uint32_t flags)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 16, 8, 64, flags);
	uint64_t k[2] = { 1000, 7 }, gone[2] = { 5, 7 }, v = 1, out;
	struct op ins = { .m = m, .key = k[0], .key_hi = k[1], .value = 2, .cpu = 0 };
	uint32_t fill = 64;

	assert_ptr_equal(m->ops->get_next_key, chain_get_next_key); /* the chained table */
	if (flags & BPFMAP_F_NO_COMMON_LRU)
		fill /= to_chain(m)->n_lru; /* CPU 0's list full, the map not */
	pin_to(0);
	for (uint64_t i = 0; i < fill; i++) {
		uint64_t key[2] = { i, 7 };

		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	test_unpin();
	op_start_stopped(&ins, HOOK_LRU_FULL, 0);
	assert_int_equal(bpfmap_delete_elem(m, gone), 0);
	op_release();
	assert_int_equal(op_join(&ins), 0);
	assert_int_equal(bpfmap_lookup_elem(m, k, &out), 0);
	assert_int_equal(out, 2);
	for (uint64_t i = 0; i < fill; i++) {
		uint64_t key[2] = { i, 7 };

		assert_int_equal(bpfmap_lookup_elem(m, key, &out), i == gone[0] ? -ENOENT : 0);
	}
	assert_int_equal(walk_count(m, 16), fill);
	bpfmap_free(m);
}

static void test_chain_lru_room_made_meanwhile(void **state)
{
	(void)state;
	check_chain_lru_room_made(0);
}

/*
 * The same with per-CPU lists (NO_COMMON_LRU): an insert on CPU 0 finds its
 * CPU's list full and stops; a delete of one of that list's keys makes room
 * there.  The insert must take it and evict nothing.  Before, only the
 * common LRU looked again, and the insert evicted the list's oldest key.
 */
static void test_percpu_lists_room_made_meanwhile(void **state)
{
	(void)state;
	check_chain_lru_room_made(BPFMAP_F_NO_COMMON_LRU);
}

/* ---- per-CPU LRU lists over their cap ----------------------------------- */

static uint32_t list_len(const struct chain *c, uint32_t i)
{
	return __atomic_load_n(&c->lru[i].n[0], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c->lru[i].n[1], __ATOMIC_RELAXED);
}

/* Insert keys [from, from + n) on CPU @cpu (its list). */
static void insert_on(struct bpfmap *m, int cpu, uint64_t from, uint32_t n)
{
	uint64_t v = 1;

	pin_to(cpu);
	for (uint64_t k = from; k < from + n; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	test_unpin();
}

/* An insert on @cpu of key @k answers 0 at once (it waited for ever). */
static void insert_answers(struct bpfmap *m, int cpu, uint64_t k)
{
	struct op ins = { .m = m, .key = k, .value = 2, .cpu = cpu };

	op_start(&ins);
	assert_int_equal(op_answer_late(&ins), 0);
	op_join(&ins);
}

/*
 * NO_COMMON_LRU, both CPUs' lists full (4 of 8 each).  An insert on CPU 0
 * evicts from its list and, stopped at its victim, is moved to CPU 1: its
 * insert (the eviction's room) went to CPU 1's list, over its cap, and the
 * map full with room on CPU 0's list, an insert on CPU 0 found the map
 * full, and would evict only where the list had no room: it waited for
 * ever (an adversarial probe, 69f151b).  The room now goes to the
 * victim's list when the own one is full.  Then two inserts on CPU 0 at
 * once (one stopped with its room reserved) with one place left on its
 * list: they both passed the list's check and took it over its cap (a
 * probe: five took a list of cap 4 to 8); the second now finds the list
 * full and evicts from it.  Last, a list over its cap (made so by raising
 * the cap for one insert, as a thread moved between CPUs at the wrong
 * time still can): an insert on CPU 1 that finds the map full takes from
 * that list, but not when a delete has made room meanwhile.
 */
static void test_percpu_lists_over_cap(void **state)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 8, 8, 8, BPFMAP_F_NO_COMMON_LRU);
	struct chain *c = to_chain(m);
	struct op ins = { .m = m, .key = 200, .value = 2, .cpu = 0 };
	cpu_set_t one;

	(void)state;
	if (c->n_lru != 2) {
		print_message("skipped: needs two LRU lists (2 possible CPUs), has %u\n", c->n_lru);
		bpfmap_free(m);
		return;
	}
	assert_int_equal(c->lru_cap, 4);
	insert_on(m, 1, 0, 4);
	insert_on(m, 0, 100, 4);
	op_start_stopped(&ins, HOOK_LRU_VICTIM, 0);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	assert_int_equal(pthread_setaffinity_np(ins.t, sizeof(one), &one), 0);
	op_release();
	assert_int_equal(op_join(&ins), 0);
	assert_int_equal(list_len(c, 0), 4);
	assert_int_equal(list_len(c, 1), 4);
	insert_answers(m, 0, 201);
	assert_int_equal(walk_count(m, 8), 8);

	/* Two inserts on CPU 0 at once, one place left on its list. */
	uint64_t k = 0;

	assert_int_equal(bpfmap_delete_elem(m, &k), 0); /* CPU 1's: 3 */
	k = 103;
	assert_int_equal(bpfmap_delete_elem(m, &k), 0); /* CPU 0's: 3 */
	struct op first = { .m = m, .key = 300, .value = 2, .cpu = 0 };
	uint64_t second = 301;

	/* Not in 300's bucket, whose lock the stopped insert holds. */
	while (chain_hash(c, &second) >> c->shift == chain_hash(c, &first.key) >> c->shift)
		second++;
	op_start_stopped(&first, HOOK_INSERT_RESERVED, 0);
	insert_on(m, 0, second, 1);
	op_release();
	assert_int_equal(op_join(&first), 0);
	assert_int_equal(list_len(c, 0), 4);
	assert_int_equal(list_len(c, 1), 3);
	assert_int_equal(walk_count(m, 8), 7);
	/* CPU 0's list one over its cap, the map full. */
	c->lru_cap = 5;
	insert_on(m, 0, 500, 1);
	c->lru_cap = 4;
	assert_int_equal(list_len(c, 0), 5);
	assert_int_equal(list_len(c, 1), 3);
	/* The map full, an insert on CPU 1 stops once it found so; a delete
	 * of one of CPU 1's keys makes room on its list and in the map.  The
	 * insert takes it: it took a key of CPU 0's list, over its cap, all
	 * the same (an adversarial probe). */
	struct op room = { .m = m, .key = 400, .value = 2, .cpu = 1 };

	op_start_stopped(&room, HOOK_LRU_FULL, 0);
	k = 1;
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	op_release();
	assert_int_equal(op_join(&room), 0);
	assert_int_equal(list_len(c, 0), 5);
	assert_int_equal(list_len(c, 1), 3);
	assert_int_equal(walk_count(m, 8), 8);
	/* Full again: now an insert on CPU 1 takes from the list over its cap. */
	insert_answers(m, 1, second + 1);
	assert_int_equal(list_len(c, 0), 4);
	assert_int_equal(list_len(c, 1), 4);
	assert_int_equal(walk_count(m, 8), 8);
	bpfmap_free(m);
}

/*
 * A bpfmap_percpu_add that found its key before a lookup_and_delete took
 * it lands before the value is copied out: the take turns the map's
 * lock-free stores off and waits for the adds' store windows.  It landed
 * after the copy, and its delta was lost though the add returned 0 (22-26%
 * of the adds of a two-thread loop, an adversarial helper's
 * linearizability checker).  Flat and chained tables, LRU too.  The adder
 * is stopped between its find and its add; the take, started then, must
 * return the delta once the adder goes on (it returned 1 instead of 6).
 */
struct pcpu_adder {
	struct bpfmap *m;
	uint64_t key;
	int ret;
};

static void *pcpu_add_stopped(void *arg)
{
	struct pcpu_adder *a = arg;

	/* A thread's first add registers its window on the locked path. */
	a->ret = bpfmap_percpu_add(a->m, &a->key, 1);
	if (!a->ret)
		a->ret = bpfmap_percpu_add(a->m, &a->key, 5);
	return NULL;
}

struct pcpu_taker {
	struct bpfmap *m;
	uint64_t key, *vals;
	int ret; /* INT32_MIN until it answers */
};

static void *pcpu_take(void *arg)
{
	struct pcpu_taker *t = arg;

	__atomic_store_n(&t->ret, bpfmap_lookup_and_delete_elem(t->m, &t->key, t->vals),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

static void percpu_add_before_take(enum bpfmap_type type, uint32_t flags)
{
	struct bpfmap *m = must_create(type, 8, 8, 64, flags);
	int ncpu = bpfmap_num_possible_cpus();
	uint64_t *zero = calloc((size_t)ncpu, 8), sum = 0;
	struct pcpu_adder a = { .m = m, .key = 7 };
	struct pcpu_taker t = { .m = m, .key = 7, .ret = INT32_MIN };
	pthread_t at, tt;

	t.vals = calloc((size_t)ncpu, 8);
	assert_non_null(zero);
	assert_non_null(t.vals);
	assert_int_equal(bpfmap_update_elem(m, &a.key, zero, BPFMAP_NOEXIST), 0);
	thread_start_stopped(&at, pcpu_add_stopped, &a, HOOK_PCPU_ADD);
	assert_int_equal(pthread_create(&tt, NULL, pcpu_take, &t), 0);
	(void)answer_within(&t.ret, 200); /* the take waits for the window */
	op_release();
	pthread_join(at, NULL);
	pthread_join(tt, NULL);
	assert_int_equal(a.ret, 0);
	assert_int_equal(t.ret, 0);
	for (int c = 0; c < ncpu; c++)
		sum += t.vals[c];
	assert_int_equal(sum, 6);
	/* Later adds take the lock; the key is gone. */
	assert_int_equal(bpfmap_percpu_add(m, &a.key, 1), -ENOENT);
	free(zero);
	free(t.vals);
	bpfmap_free(m);
}

static void test_percpu_add_before_take(void **state)
{
	(void)state;
	percpu_add_before_take(BPFMAP_TYPE_PERCPU_HASH, 0);
	percpu_add_before_take(BPFMAP_TYPE_PERCPU_HASH, BPFMAP_F_NO_PREALLOC);
	percpu_add_before_take(BPFMAP_TYPE_LRU_PERCPU_HASH, 0);
}

/* ---- a flat copy-out whose home slot is refilled ------------------------ */

/*
 * A copy-out of a word key reads its home bucket outside any read-side
 * section, validated by the bucket's seq.  Stopped with A's key matched and
 * its value not yet read, A is deleted, its slot reclaimed and filled with
 * B (same home, the bucket's one free slot), whose value differs.  The copy
 * must not answer B's value as A's: the fill's seq tells it, and A is
 * absent.  This is why a home slot is filled inside its bucket's seq, where
 * a node off the free list need not be (flat_fill, @unseen).
 */
static void test_flat_copy_home_refilled(void **state)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 8, 8, 64, 0);
	struct flat *f = to_flat(m);
	uint64_t a, b, va = 111, vb = 222, v, k;
	uint32_t n = 0, home = 0;
	struct op copy = { .m = m, .copy = true, .cpu = -1 };

	(void)state;
	for (a = 1; home_of(f, a) != home; a++)
		;
	/* Home 0's bucket full: A and seven more keys of it. */
	assert_int_equal(bpfmap_update_elem(m, &a, &va, BPFMAP_NOEXIST), 0);
	for (k = a + 1; n < FLAT_SLOTS - 1; k++)
		if (home_of(f, k) == home) {
			assert_int_equal(bpfmap_update_elem(m, &k, &k, BPFMAP_NOEXIST), 0);
			n++;
		}
	for (b = k; home_of(f, b) != home; b++)
		;
	copy.key = a;
	op_start_stopped(&copy, HOOK_FLAT_COPY_MATCHED, 0);
	assert_int_equal(*(const uint32_t *)stop.obj / FLAT_SLOTS, home);
	assert_int_equal(bpfmap_delete_elem(m, &a), 0);
	flat_reclaim_sync(f);
	assert_int_equal(bpfmap_update_elem(m, &b, &vb, BPFMAP_NOEXIST), 0);
	assert_int_equal(flat_small_at(f, *(const uint32_t *)stop.obj, 8), b);
	op_release();
	assert_int_equal(op_join(&copy), -ENOENT);
	assert_int_equal(bpfmap_lookup_elem(m, &b, &v), 0);
	assert_int_equal(v, vb);
	bpfmap_free(m);
}

/* ---- a copy-out into its key's own buffer ------------------------------------ */

/*
 * bpfmap_lookup_elem(m, buf, buf): the kernel copies the key in before it
 * writes the value out, so one buffer may hold both.  A copy-out of K into
 * K's own buffer is stopped at @point, its key matched or its value read,
 * and K's value is overwritten: the copy's check fails, and it looks again
 * with value bytes in the buffer.  K's values begin with the bytes of
 * another present key O, so a retry that read the key from the buffer again
 * answered O's value (77s) or -ENOENT; it must answer K's new value.
 * 16-byte values; @ks 8 or 16.
 */
static void check_copy_into_key(struct bpfmap *m, uint32_t ks, enum test_hook_point point)
{
	uint64_t k[2] = { 5, 0 }, o[2] = { 9, 1 }, vo[2] = { 77, 77 };
	uint64_t v1[2] = { 9, 1 }, v2[2] = { 9, ks == 8 ? 2 : 1 };
	struct op copy = { .m = m, .key = k[0], .key_hi = k[1], .copy = true, .into_key = true,
			   .cpu = -1 };

	assert_int_equal(bpfmap_update_elem(m, o, vo, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, k, v1, BPFMAP_NOEXIST), 0);
	op_start_stopped(&copy, point, 0);
	assert_int_equal(bpfmap_update_elem(m, k, v2, BPFMAP_EXIST), 0);
	op_release();
	assert_int_equal(op_join(&copy), 0);
	assert_int_equal(copy.key, v2[0]);
	assert_int_equal(copy.key_hi, v2[1]);
	bpfmap_free(m);
}

static void test_copy_into_key(void **state)
{
	(void)state;
	/* Word keys in the flat table (HASH and LRU_HASH), whose retries use
	 * the key as first read, per instruction set; RHASH. */
	for (int isa = 0; isa < FLAT_ISA_COUNT; isa++) {
		map_copy_fn copy = flat_copy_word(HASH_U64, false, false, true, (enum flat_isa)isa);
		struct bpfmap *m;

		if (!flat_isa_runs((enum flat_isa)isa))
			continue;
		m = must_create(BPFMAP_TYPE_HASH, 8, 16, 64, 0);
		/* TSan builds have none: the general copy-out, which stops at
		 * the same hook. */
		if (copy)
			m->copy = copy;
		check_copy_into_key(m, 8, HOOK_FLAT_COPY_MATCHED);
	}
	check_copy_into_key(must_create(BPFMAP_TYPE_LRU_HASH, 8, 16, 64, 0), 8,
			    HOOK_FLAT_COPY_MATCHED);
	check_copy_into_key(must_create(BPFMAP_TYPE_RHASH, 8, 16, 64, BPFMAP_F_NO_PREALLOC), 8,
			    HOOK_RTAB_COPY);
	check_copy_into_key(must_create(BPFMAP_TYPE_RHASH, 16, 16, 64, BPFMAP_F_NO_PREALLOC), 16,
			    HOOK_RTAB_COPY);
}

/* Long keys: the flat table's and the chained table's section-free
 * copy-outs. */
static void test_copy_into_long_key(void **state)
{
	(void)state;
	if (!CHAIN_COPY_SECTION_FREE)
		skip_msg("TSan builds copy long keys out in a read-side section, at no hook");
	check_copy_into_key(must_create(BPFMAP_TYPE_HASH, 16, 16, HASH_FLAT_LONG_MIN_ENTRIES, 0),
			    16, HOOK_FLAT_COPY_MATCHED);
	check_copy_into_key(must_create(BPFMAP_TYPE_HASH, 16, 16, 64, 0), 16, HOOK_CHAIN_COPY);
}

/*
 * The same buffer in an F_LOCK lookup-and-delete of K, stopped after its
 * copy without the lock: a program takes the value's lock meanwhile, so the
 * copy does not hold, and the take waits for the lock and looks K up again.
 * K's value begins with O's key, so a take that read the key from the
 * buffer again deleted O and answered O's value.  Value: word, then lock.
 */
static void check_take_into_key(struct bpfmap *m)
{
	uint64_t k[2] = { 5, 0 }, o[2] = { 9, 0 }, vo[2] = { 77, 0 }, vk[2] = { 9, 0 }, got[2];
	struct op take = { .m = m, .key = k[0], .key_hi = k[1], .take = true, .into_key = true,
			   .flags = BPFMAP_F_LOCK, .cpu = -1 };
	uint64_t *p;

	assert_non_null(m);
	assert_int_equal(bpfmap_update_elem(m, o, vo, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, k, vk, BPFMAP_NOEXIST), 0);
	op_start_stopped(&take, HOOK_FLOCK_COPIED, 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, k);
	assert_non_null(p);
	bpfmap_spin_lock((struct bpfmap_spin_lock *)(p + 1));
	op_release();
	assert_int_equal(op_answer_soon(&take), INT32_MIN); /* it waits for the lock */
	bpfmap_spin_unlock((struct bpfmap_spin_lock *)(p + 1));
	bpfmap_read_unlock();
	assert_int_equal(op_join(&take), 0);
	assert_int_equal(take.key, vk[0]);
	assert_int_equal(take.key_hi, 0);
	assert_int_equal(bpfmap_lookup_elem(m, k, got), -ENOENT);
	assert_int_equal(bpfmap_lookup_elem(m, o, got), 0);
	assert_int_equal(got[0], vo[0]);
	bpfmap_free(m);
}

static void test_take_into_key(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(opts, .lock_off = 8);

	if (!CHAIN_COPY_SECTION_FREE)
		skip_msg("TSan builds take F_LOCK copies under the lock only, at no hook");
	/* Flat word and long keys, chained (preallocated or not), RHASH. */
	check_take_into_key(bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, 16, 64, &opts));
	check_take_into_key(bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, 16, 16384, &opts));
	check_take_into_key(bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, 16, 64, &opts));
	opts.map_flags = BPFMAP_F_NO_PREALLOC;
	check_take_into_key(bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, 16, 64, &opts));
	check_take_into_key(bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 8, 16, 64, &opts));
}

/* ---- a delete seen, then an insert ---------------------------------------- */

static void check_delete_seen(uint32_t ks, uint32_t me, uint32_t flags)
{
	struct bpfmap *m = full_map(ks, me, flags);
	struct op del = { .m = m, .key = 7, .del = true, .cpu = -1 };
	struct op ins = { .m = m, .key = me + 100, .value = 1, .cpu = -1 };
	uint64_t v, k[2] = { me + 101, 0 };
	int early;

	op_start_stopped(&del, HOOK_DELETE_HIDDEN, 0);
	/* The delete's effect, seen: key 7 is gone. */
	assert_int_equal(bpfmap_lookup_elem(m, &del.key, &v), -ENOENT);
	op_start(&ins);
	early = op_answer_soon(&ins);
	op_release();
	assert_int_equal(op_join(&del), 0);
	assert_int_equal(op_join(&ins), 0);
	if (early != INT32_MIN)
		assert_int_equal(early, 0); /* never -E2BIG for the delete's room */
	assert_int_equal(bpfmap_lookup_elem(m, &ins.key, &v), 0);
	assert_int_equal(bpfmap_update_elem(m, k, &v, BPFMAP_NOEXIST), -E2BIG);
	bpfmap_free(m);
}

static void test_delete_seen_then_insert(void **state)
{
	(void)state;
	check_delete_seen(8, 64, 0);			 /* flat, one count word */
	check_delete_seen(4, 64, 0);
	check_delete_seen(8, 8192, 0);			 /* flat, sharded where 2+ CPUs */
	check_delete_seen(8, 64, BPFMAP_F_NO_PREALLOC); /* chained */
	check_delete_seen(16, 64, 0);			 /* chained, preallocated */
}

/* ---- an insert not visible yet, then another --------------------------------- */

static void check_insert_in_flight(uint32_t ks, uint32_t me, uint32_t flags)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, ks, 8, me, flags);
	struct op first = { .m = m, .key = me - 1, .value = 1, .cpu = -1 };
	struct op second = { .m = m, .key = me + 100, .value = 2, .cpu = -1 };
	uint64_t v;
	int early;

	for (uint64_t k = 0; k < me - 1; k++) {
		uint64_t key[2] = { k, 0 };

		v = k;
		assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	}
	op_start_stopped(&first, HOOK_INSERT_RESERVED, 0);
	assert_int_equal(bpfmap_lookup_elem(m, &first.key, &v), -ENOENT);
	op_start(&second);
	early = op_answer_soon(&second); /* full only once the first is visible */
	assert_int_equal(early, INT32_MIN);
	op_release();
	assert_int_equal(op_join(&first), 0);
	assert_int_equal(op_join(&second), -E2BIG);
	assert_int_equal(bpfmap_lookup_elem(m, &first.key, &v), 0);
	bpfmap_free(m);
}

static void test_insert_in_flight(void **state)
{
	(void)state;
	check_insert_in_flight(8, 64, 0);
	check_insert_in_flight(8, 64, BPFMAP_F_NO_PREALLOC);
	check_insert_in_flight(16, 64, 0);
}

/* ---- a sharded count's credits in flight ------------------------------------ */

static void test_credits_in_flight(void **state)
{
	(void)state;
	const uint32_t me = 8192, freed = 8;
	cpu_set_t saved;

	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	if (bpfmap_num_possible_cpus() < 2 || !CPU_ISSET(0, &saved) || !CPU_ISSET(1, &saved)) {
		print_message("skipped: needs CPUs 0 and 1 to pin to (sharded counts)\n");
		skip();
	}
	assert_true(pin(0));
	struct bpfmap *m = full_map(8, me, 0);
	struct flat *f = to_flat(m);

	assert_non_null(f->count.shards);
	/* Deletes on CPU 1: their room becomes CPU 1's shard's credits. */
	assert_true(pin(1));
	for (uint64_t k = 0; k < freed; k++)
		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	assert_true(pin(0));
	/* An insert on CPU 0 finds no credit of its own and freezes the shards;
	 * stop it with CPU 1's credits taken and not yet counted. */
	struct op a = { .m = m, .key = me + 1, .value = 1, .cpu = 0 };
	struct op b = { .m = m, .key = me + 2, .value = 2, .cpu = 1 };

	op_start_stopped(&a, HOOK_COUNT_STEAL, (int)f->count.shard_mask);
	op_start(&b);
	int early = op_answer_soon(&b);

	op_release();
	assert_int_equal(op_join(&a), 0);
	assert_int_equal(op_join(&b), 0);
	if (early != INT32_MIN)
		assert_int_equal(early, 0);
	assert_int_equal(count_elements(&f->count), me - freed + 2);
	/* The rest of the room, exactly. */
	for (uint64_t k = me + 3; k < me + freed + 1; k++) {
		uint64_t v = k;

		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	uint64_t k = me + freed + 1, v = 0;

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), -E2BIG);
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
	bpfmap_free(m);
}

/*
 * A sharded count's slow path found the map full and quiescent and stops
 * before it records that ("exhausted"); a delete runs whole meanwhile, so
 * it saw no flag to clear.  The flag must not stay set over the room the
 * delete gave back: it did, and every insert answered -E2BIG until the
 * next delete (a helper saw 2047 of 2048 elements and -E2BIG for good).
 */
static void test_exhausted_after_delete(void **state)
{
	(void)state;
	const uint32_t me = 8192;
	struct bpfmap *m = full_map(8, me, 0);
	struct flat *f = to_flat(m);
	struct op a = { .m = m, .key = me + 1, .value = 1, .cpu = -1 };
	uint64_t k = 0, v = 0;
	int ret;

	if (!f->count.shards) {
		print_message("skipped: the count is not sharded with one CPU\n");
		bpfmap_free(m);
		skip();
	}
	op_start_stopped(&a, HOOK_COUNT_FULL, 0);
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	op_release();
	ret = op_join(&a);
	/* The insert saw the map full and may say so, or find the room. */
	assert_true(ret == 0 || ret == -E2BIG);
	k = me + 2;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), ret ? 0 : -E2BIG);
	assert_int_equal(count_elements(&f->count), me);
	k = me + 3;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), -E2BIG);
	bpfmap_free(m);
}

/* ---- the lock-free -E2BIG probe and its lock word ----------------------------- */

/* The next 4-byte key from *next on whose home is h. */
static uint32_t key_of_home(const struct flat *f, uint32_t h, uint32_t *next)
{
	while (home_of(f, *next) != h)
		(*next)++;
	return (*next)++;
}

/* Insert @n keys of home h (from *next on); returns the last. */
static uint32_t fill_home(struct bpfmap *m, uint32_t h, uint32_t n, uint32_t *next)
{
	uint32_t k = 0;
	uint64_t v = 0;

	for (uint32_t i = 0; i < n; i++) {
		k = key_of_home(to_flat(m), h, next);
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	return k;
}

/* Use up the pool: home h's chain takes node after node, each deleted at
 * once (inside a read-side section, none is reclaimed meanwhile). */
static void use_up_pool(struct bpfmap *m, uint32_t h, uint32_t *next)
{
	struct flat *f = to_flat(m);

	while (__atomic_load_n(&f->node_hwm, __ATOMIC_RELAXED) < f->n_nodes) {
		uint64_t k = fill_home(m, h, 1, next);

		assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	}
}

static uint32_t lock_word(const struct flat *f, uint32_t h)
{
	return __atomic_load_n(&f->homes[h].lock, __ATOMIC_RELAXED);
}

/* Every locked insert and delete of a home moves its lock word by two (a
 * lock and an unlock), a chain's node unlinked included; nothing else
 * writes it. */
static void test_lock_word_counts(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, 200, 0);
	struct flat *f = to_flat(m);
	uint32_t next = 0, keys[10], h = 3;
	uint64_t v = 0;

	for (int i = 0; i < 10; i++) /* the last two are nodes of h's chain */
		keys[i] = key_of_home(f, h, &next);
	for (int i = 0; i < 10; i++) {
		uint32_t before = lock_word(f, h);

		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(lock_word(f, h), before + 2);
	}
	assert_true(flat_is_node(f, flat_chain(f, h)));
	for (int i = 9; i >= 7; i--) { /* the chain's head, its tail, a slot */
		uint32_t before = lock_word(f, h);

		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);
		assert_int_equal(lock_word(f, h), before + 2);
	}
	assert_int_equal(flat_chain(f, h), FLAT_NONE);
	bpfmap_free(m);
}

/*
 * The probe stopped after reading home h's lock word and finding key K
 * absent in a full map; meanwhile K0, a node of h's chain, is deleted and K
 * inserted (a node again).  The lock word moved, so the probe must not
 * answer -E2BIG from what it saw: K is present by then.  (On e3e6fd2 the
 * delete's shrinking of h's reach rewrote the word and wiped its count, and
 * the probe answered -E2BIG.)
 */
static void test_probe_full_not_fooled(void **state)
{
	(void)state;
	const uint32_t me = 200, h = 3;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, me, 0);
	struct flat *f = to_flat(m);
	uint32_t next = 0, k0, k;
	uint64_t v = 0;

	assert_true(f->match_by_key && f->n_homes > 12);
	k0 = fill_home(m, h, 9, &next);
	k = key_of_home(f, h, &next);
	assert_true(flat_is_node(f, flat_chain(f, h)));
	for (uint32_t n = 9; n < me; next++) { /* the rest elsewhere */
		uint32_t o = next;

		if (home_of(f, o) == h)
			continue;
		assert_int_equal(bpfmap_update_elem(m, &o, &v, BPFMAP_NOEXIST), 0);
		n++;
	}
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), -E2BIG);
	struct op probe = { .m = m, .key = k, .value = 42, .cpu = -1 };

	op_start_stopped(&probe, HOOK_PROBE_FULL_SCANNED, 0);
	uint64_t k0w = k0, kw = k;

	assert_int_equal(bpfmap_delete_elem(m, &k0w), 0);
	assert_int_equal(bpfmap_update_elem(m, &kw, &v, BPFMAP_NOEXIST), 0);
	op_release();
	/* K is present now: BPF_ANY overwrites it. */
	assert_int_equal(op_join(&probe), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &kw, &v), 0);
	assert_int_equal(v, 42);
	bpfmap_free(m);
}

/*
 * Homes B and C filled and the pool used up (through C), inside a read-side
 * section; then @o stopped at its first chain step, on its way to node X
 * (key x's, the head of its home's chain), x deleted and a new key of home
 * B inserted, which reuses X at once; then @o let go.  The new key.
 */
static uint32_t divert_node(struct op *o, uint32_t x, uint32_t X, uint32_t B, uint32_t C,
			    uint32_t *next)
{
	uint64_t w = x;
	uint32_t y;

	fill_home(o->m, B, 8, next);
	fill_home(o->m, C, 8, next);
	use_up_pool(o->m, C, next);
	op_start_stopped(o, HOOK_CHAIN_STEP, 0);
	assert_int_equal(bpfmap_delete_elem(o->m, &w), 0);
	y = fill_home(o->m, B, 1, next); /* reuses X, the first dead node */
	assert_int_equal(flat_chain(to_flat(o->m), B), X);
	op_release();
	return y;
}

/*
 * A chain walk stopped on its way to node X (x's, the head of home A's
 * chain, K behind it); meanwhile x is deleted and, with every other node in
 * use and the grace period held up (reader sections), an insert of home B
 * inside a read-side section reuses X at once: X now heads B's chain.  The
 * walk goes on from X along B's chain: without the reuse's mark on A's seq
 * it would end there and answer that K, present throughout, is absent.
 */
static void test_chain_walk_diverted(void **state)
{
	(void)state;
	const uint32_t me = 64, A = 1, B = 2, C = 3;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, me, 0);
	struct flat *f = to_flat(m);
	uint32_t next = 0, k, x, y, X;
	uint64_t v = 0;

	assert_true(f->match_by_key && f->n_homes > C);
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	fill_home(m, A, 8, &next);
	k = fill_home(m, A, 1, &next);
	x = fill_home(m, A, 1, &next);
	X = flat_chain(f, A);
	assert_true(flat_is_node(f, X));
	uint64_t kw0 = k;
	struct flat_place pk = flat_place_of(f, flat_hash(f, &kw0));

	assert_int_equal(flat_node_next(f, X), flat_chain_find(f, A, pk.tag, NULL, 4, k, true, true));
	struct op look = { .m = m, .key = k, .look = true, .cpu = -1 };

	y = divert_node(&look, x, X, B, C, &next);
	assert_int_equal(op_join(&look), 0);
	bpfmap_read_unlock();
	uint64_t kw = k, yw = y, xw = x;

	assert_int_equal(bpfmap_lookup_elem(m, &kw, &v), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &yw, &v), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &xw, &v), -ENOENT);
	bpfmap_free(m);
}

/*
 * A chain hit needs the moved check too.  Key 0, absent, is the dead word
 * of every home but the dead home D, its own.  Its walk is stopped on its
 * way to node X (x's, D's chain head, behind which it would end); x is
 * deleted and X reused at once for home B, ahead of Z, B's node of key z.
 * The diverted walk stops again on its way to Z, and z is deleted, which
 * stores B's dead word, 0, in Z's key.  The walk matched it and answered
 * z's value as key 0's, in both views (found by an adversarial probe); a
 * hit now counts only if the map's moved seq held still.
 */
static void check_dead_word_hit(bool copy)
{
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, 64, 0);
	struct flat *f = to_flat(m);
	uint32_t D = f->dead_home, B = (D + 1) % f->n_homes, C = (D + 2) % f->n_homes;
	uint32_t next = 1, x, z, X, Z;
	uint64_t w = 0, v = 0x5a5a5a5a;
	struct op look = { .m = m, .look = !copy, .copy = copy, .cpu = -1 };
	uint32_t tag0 = flat_place_of(f, flat_hash(f, &w)).tag;

	assert_true(f->match_by_key && f->n_homes > 3);
	assert_int_equal(home_of(f, 0), D);
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	fill_home(m, D, 8, &next);
	fill_home(m, B, 8, &next);
	fill_home(m, C, 8, &next);
	/* x, D's one node, with key 0's filter bit, so that its walk runs. */
	for (x = next;; x++) {
		w = x;
		if (home_of(f, x) == D &&
		    flat_filter_bit(flat_place_of(f, flat_hash(f, &w)).tag) == flat_filter_bit(tag0))
			break;
	}
	assert_int_equal(bpfmap_update_elem(m, &w, &v, BPFMAP_NOEXIST), 0);
	X = flat_chain(f, D);
	next = x + 1;
	z = fill_home(m, B, 1, &next);
	w = z;
	assert_int_equal(bpfmap_update_elem(m, &w, &v, BPFMAP_EXIST), 0);
	Z = flat_chain(f, B);
	assert_true(flat_is_node(f, X) && flat_is_node(f, Z));
	use_up_pool(m, C, &next);
	op_start_stopped(&look, HOOK_CHAIN_STEP, 0); /* about to read X */
	w = x;
	assert_int_equal(bpfmap_delete_elem(m, &w), 0);
	fill_home(m, B, 1, &next); /* reuses X, ahead of Z */
	assert_int_equal(flat_chain(f, B), X);
	assert_int_equal(flat_node_next(f, X), Z);
	op_restop(&look); /* diverted: about to read Z */
	w = z;
	assert_int_equal(bpfmap_delete_elem(m, &w), 0);
	op_release();
	assert_int_equal(op_join(&look), -ENOENT);
	bpfmap_read_unlock();
	w = 0;
	assert_int_equal(bpfmap_lookup_elem(m, &w, &v), -ENOENT);
	bpfmap_free(m);
}

static void test_dead_word_hit(void **state)
{
	(void)state;
	check_dead_word_hit(false);
	check_dead_word_hit(true);
}

/*
 * The same diversion under get_next_key: a walk from the first key, home
 * A's bucket emptied so that K, in A's chain behind X, is A's only key
 * present throughout, homes before A empty.  Stopped on its way to X while
 * X is deleted and reused for home B's Y, the walk went on along B's chain
 * and answered Y (found by an adversarial probe: walks skipped up to 11 of
 * a home's 24 stable keys); the reuse's mark on the map's moved seq now
 * has it walk A again, and answer K.
 */
static void test_walk_diverted(void **state)
{
	(void)state;
	const uint32_t me = 64, A = 1, B = 2, C = 3;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, me, 0);
	struct flat *f = to_flat(m);
	uint32_t next = 0, k, x, y, X, bucket[8];
	uint64_t w, v;

	assert_true(f->match_by_key && f->n_homes > C);
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	for (int i = 0; i < 8; i++)
		bucket[i] = fill_home(m, A, 1, &next);
	k = fill_home(m, A, 1, &next);
	x = fill_home(m, A, 1, &next);
	X = flat_chain(f, A);
	assert_true(flat_is_node(f, X));
	for (int i = 0; i < 8; i++) {
		w = bucket[i];
		assert_int_equal(bpfmap_delete_elem(m, &w), 0);
	}
	struct op walk = { .m = m, .walk = true, .cpu = -1 };

	y = divert_node(&walk, x, X, B, C, &next);
	assert_int_equal(op_join(&walk), 0);
	bpfmap_read_unlock();
	assert_int_equal((uint32_t)walk.out, k);
	w = y;
	assert_int_equal(bpfmap_lookup_elem(m, &w, &v), 0);
	bpfmap_free(m);
}

/* An insert inside a read-side section that reuses a dead node: home C's
 * chain uses the pool up, then a key of home B, whose bucket is full, is
 * inserted (stopped at HOOK_NODE_RELINKING, the map's moved seq odd). */
struct relinker {
	struct bpfmap *m;
	uint32_t key, c_home, next;
	int ret; /* atomic: INT32_MIN until done */
};

static void *relink_thread(void *arg)
{
	struct relinker *r = arg;
	uint64_t v = 0;

	bpfmap_read_lock();
	use_up_pool(r->m, r->c_home, &r->next);
	__atomic_store_n(&r->ret, bpfmap_update_elem(r->m, &r->key, &v, BPFMAP_NOEXIST),
			 __ATOMIC_SEQ_CST);
	bpfmap_read_unlock();
	return NULL;
}

/* A walk of homes without a chain does not wait for a reuse that relinks
 * a node elsewhere: get_next_key used to read the map's moved seq for
 * every home, and so waited for as long as the reuse was stopped. */
static void test_walk_beside_relink(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 4, 8, 256, 0);
	struct flat *f = to_flat(m);
	struct relinker r = { .m = m, .ret = INT32_MIN, .c_home = f->n_homes - 1 };
	struct op walk = { .m = m, .walk = true, .cpu = -1 };
	uint32_t next = 1, k0, b = f->n_homes / 2;
	uint64_t v = 0;
	pthread_t t;

	k0 = key_of_home(f, 0, &next);
	assert_int_equal(bpfmap_update_elem(m, &k0, &v, BPFMAP_NOEXIST), 0);
	fill_home(m, b, FLAT_SLOTS, &next);
	r.key = key_of_home(f, b, &next);
	r.next = next;
	thread_start_stopped(&t, relink_thread, &r, HOOK_NODE_RELINKING);
	assert_true(__atomic_load_n(&f->moved, __ATOMIC_SEQ_CST) & MWSEQ_WRITERS);
	assert_int_equal(flat_chain(f, 0), FLAT_NONE);
	op_start(&walk);
	assert_int_equal(op_answer_late(&walk), 0);
	assert_int_equal((uint32_t)walk.out, k0);
	op_release();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r.ret, 0);
	op_join(&walk);
	bpfmap_free(m);
}

/*
 * A delete of node X (home A's chain) in an LRU map, stopped once X is dead
 * and before the delete returns: with every other node in use and no grace
 * period ending (a reader section), an insert of home B inside that section
 * reuses X at once for key Y, a new element in the small queue.  The delete
 * must have taken X's old element out of the queues before X could be
 * claimed: done after, it took the new element's mark instead, and the
 * small queue's count kept one element that no state held (found by
 * test_flat_lru's churn under TSan: 782 counted, 781 marked).
 */
static void test_lru_delete_then_reuse(void **state)
{
	(void)state;
	const uint32_t A = 1, B = 2, C = 3;
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 4, 8, 64, 0);
	struct flat *f = to_flat(m);
	uint32_t next = 0, x, y, X;
	uint64_t v;

	assert_non_null(f->lru);
	bpfmap_read_lock(); /* nothing reclaimed from here on */
	fill_home(m, A, 8, &next);
	x = fill_home(m, A, 1, &next);
	X = flat_chain(f, A);
	assert_true(flat_is_node(f, X));
	fill_home(m, B, 8, &next);
	use_up_pool(m, C, &next);
	struct op del = { .m = m, .key = x, .del = true, .cpu = -1 };

	op_start_stopped(&del, HOOK_DELETE_DEAD, 0);
	assert_int_equal(*(const uint32_t *)stop.obj, X);
	y = fill_home(m, B, 1, &next); /* reuses X, the first dead node */
	assert_int_equal(flat_chain(f, B), X);
	op_release();
	assert_int_equal(op_join(&del), 0);
	bpfmap_read_unlock();
	assert_true(flat_lru_state(f->lru, flat_elem_of(f, X)) & FLAT_LRU_SMALL);
	assert_int_equal(lru_small_states(f), __atomic_load_n(&f->lru->small, __ATOMIC_RELAXED));
	uint64_t xw = x, yw = y;

	assert_int_equal(bpfmap_lookup_elem(m, &yw, &v), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &xw, &v), -ENOENT);
	bpfmap_free(m);
}

/* ---- the chained table's section-free copy-outs -------------------------- */


static struct chain *chain_map_of(struct bpfmap *m)
{
	assert_ptr_equal(m->ops, &chain_ops);
	return to_chain(m);
}

static uint32_t chain_bucket_of(struct chain *c, const uint64_t key[2])
{
	return (uint32_t)((uint64_t)chain_hash(c, key) >> c->shift);
}

/* The end of a diverted lookup of @k: it found @k, present throughout;
 * after the section, @y is present and @x is not. */
static void diversion_end(struct bpfmap *m, struct op *look, const uint64_t k[2],
			  const uint64_t x[2], const uint64_t y[2])
{
	uint64_t v;

	op_release();
	assert_int_equal(op_join(look), 0);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, k, &v), 0);
	assert_int_equal(bpfmap_lookup_elem(m, y, &v), 0);
	assert_int_equal(bpfmap_lookup_elem(m, x, &v), -ENOENT);
	bpfmap_free(m);
}

/* Keys of a diverted walk: @x, moved on to the next key of bucket @bk; @y,
 * the next after it of another bucket. */
static void diversion_keys(struct chain *c, uint32_t bk, uint64_t x[2], uint64_t y[2])
{
	do
		x[0]++;
	while (chain_bucket_of(c, x) != bk);
	y[0] = x[0];
	do
		y[0]++;
	while (chain_bucket_of(c, y) == bk);
}

/* Wait (up to 10 s) until pool element @e is back on the free list's top:
 * reclaimed after its grace period, the next element an insert takes. */
static void wait_released(struct chain *c, const void *e)
{
	uint32_t index = (uint32_t)(((const char *)e - c->pool) / c->elem_size);

	for (int i = 0; i < 100000; i++) {
		uint64_t head = __atomic_load_n(&c->free_slots.head, __ATOMIC_ACQUIRE);

		if ((uint32_t)head == index + 1)
			return;
		usleep(100);
	}
	fail_msg("element %u not reclaimed within 10 s", index);
}

/* A chained map whose copy-outs take no read-side section (skipped where
 * they take one: nothing could be reused under them). */
static struct bpfmap *section_free_map(void)
{
	if (!CHAIN_COPY_SECTION_FREE)
		skip_msg("TSan builds copy out in a read-side section: no reuse while it runs");
	return must_create(BPFMAP_TYPE_HASH, 16, 8, 64, 0);
}

/* Delete @old, whose element is @e, wait until @e is reclaimed, and insert
 * @key with @value: @e is reused for it. */
static void reuse_for(struct bpfmap *m, const struct chain_elem *e, const uint64_t old[2],
		      const uint64_t key[2], uint64_t value)
{
	assert_int_equal(bpfmap_delete_elem(m, old), 0);
	wait_released(chain_map_of(m), e);
	assert_int_equal(bpfmap_update_elem(m, key, &value, BPFMAP_NOEXIST), 0);
	assert_memory_equal(elem_key(e), key, 2 * sizeof(uint64_t));
}

/*
 * A copy-out of A, stopped after it read A's value and before it validated:
 * A is deleted, its element reclaimed and reused for B.  The copy must not
 * answer B's value as A's: A is absent.
 */
static void test_chain_copy_reused(void **state)
{
	(void)state;
	struct bpfmap *m = section_free_map();
	uint64_t a[2] = { 1, 0 }, b[2] = { 2, 0 }, va = 111, vb = 222, v;

	assert_int_equal(bpfmap_update_elem(m, a, &va, BPFMAP_NOEXIST), 0);
	struct op copy = { .m = m, .key = a[0], .copy = true, .cpu = -1 };

	op_start_stopped(&copy, HOOK_CHAIN_COPY, 0);
	reuse_for(m, stop.obj, a, b, vb); /* A's element, now B's */
	op_release();
	assert_int_equal(op_join(&copy), -ENOENT);
	assert_int_equal(bpfmap_lookup_elem(m, b, &v), 0);
	assert_int_equal(v, vb);
	bpfmap_free(m);
}

/*
 * A copy-out of K, whose bucket's chain is X -> K, stopped about to read X:
 * X is deleted, reclaimed and reused for Y in another bucket, so X now ends
 * that chain.  The walk goes on from X: it must not answer that K, present
 * throughout, is absent.
 */
static void test_chain_copy_walk_diverted(void **state)
{
	(void)state;
	struct bpfmap *m = section_free_map();
	struct chain *c = chain_map_of(m);
	uint64_t k[2] = { 0, 7 }, x[2] = { 0, 7 }, y[2] = { 0, 7 }, vk = 5, vx = 6, vy = 8;
	uint32_t bk = chain_bucket_of(c, k);

	diversion_keys(c, bk, x, y);
	assert_int_equal(bpfmap_update_elem(m, k, &vk, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, x, &vx, BPFMAP_NOEXIST), 0); /* at the head */
	struct op copy = { .m = m, .key = k[0], .key_hi = k[1], .copy = true, .cpu = -1 };

	op_start_stopped(&copy, HOOK_CHAIN_STEP, 0); /* about to read X */
	const struct chain_elem *e = stop.obj;

	assert_non_null(e);
	assert_memory_equal(elem_key(e), x, sizeof(x));
	reuse_for(m, e, x, y, vy); /* X's element, now in Y's bucket */
	op_release();
	assert_int_equal(op_join(&copy), 0);
	assert_int_equal(copy.out, vk);
	bpfmap_free(m);
}

/*
 * An evicting map reuses the element an insert evicts at once when the
 * insert is inside a read-side section and the pool has no free element
 * (tables/chain.h, chain_reuses).  A program-view lookup of K, whose
 * bucket's chain is X -> K, stopped about to read X: inside a section, with
 * the pool used up, an insert of Y (another bucket) into the full map
 * evicts X (K was used, X not) and takes its element, which now heads Y's
 * chain.  The walk goes on from X: it must not answer that K, present
 * throughout, is absent.
 */
static void test_chain_lru_walk_diverted(void **state)
{
	(void)state;
	const uint32_t me = 64;
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 16, 8, me, 0);
	struct chain *c = to_chain(m);
	uint64_t k[2] = { 0, 7 }, x[2] = { 0, 7 }, y[2] = { 0, 7 }, f[2] = { 0, 8 }, v = 1;
	uint32_t bk, n;

	assert_ptr_equal(m->ops->get_next_key, chain_get_next_key); /* the chained table */
#ifdef __SANITIZE_THREAD__
	bpfmap_free(m);
	skip_msg("TSan builds never reuse an evicted element in place (chain_reuse_wanted)");
#endif
	if (!pin(0))
		skip_msg("cannot pin to CPU 0 (one LRU list for the whole test)");
	bk = chain_bucket_of(c, k);
	diversion_keys(c, bk, x, y);
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	assert_int_equal(bpfmap_update_elem(m, k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, x, &v, BPFMAP_NOEXIST), 0); /* the head */
	assert_non_null(bpfmap_lookup(m, k)); /* used: not the victim */
	/* Use up the pool's free elements, then fill the map from the heap,
	 * keeping K's bucket X -> K. */
	while (!freelist_looks_empty(&c->free_slots)) {
		assert_int_equal(bpfmap_update_elem(m, f, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_delete_elem(m, f), 0);
		f[0]++;
	}
	for (n = 2; n < me; f[0]++) {
		if (chain_bucket_of(c, f) == bk)
			continue;
		assert_int_equal(bpfmap_update_elem(m, f, &v, BPFMAP_NOEXIST), 0);
		n++;
	}
	struct op look = { .m = m, .key = k[0], .key_hi = k[1], .look = true, .cpu = -1 };

	op_start_stopped(&look, HOOK_CHAIN_STEP, 0); /* about to read X */
	const struct chain_elem *e = stop.obj;

	assert_memory_equal(elem_key(e), x, sizeof(x));
	assert_int_equal(bpfmap_update_elem(m, y, &v, BPFMAP_NOEXIST), 0);
	assert_memory_equal(elem_key(e), y, sizeof(y)); /* X's element, now Y's */
	diversion_end(m, &look, k, x, y);
	test_unpin();
}

/*
 * A preallocated chained HASH inside a read-side section (no grace period
 * ends), churned by deletes and inserts of keys outside bucket @avoid until
 * its pool has no free element and it has borrowed all it may from the
 * heap (borrow_cap), without reusing any deleted element yet: the next
 * insert inside a section takes the most recently deleted one at once
 * (chain_reuses).  @f: the next filler key, which ends deleted.
 */
static void borrow_all(struct bpfmap *m, uint32_t avoid, uint64_t f[2])
{
	struct chain *c = to_chain(m);
	uint64_t v[8] = { 3 }; /* values of up to 64 bytes */

	assert_true(m->value_size <= sizeof(v));
	while (__atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED) < c->borrow_cap ||
	       !freelist_looks_empty(&c->free_slots)) {
		if (chain_bucket_of(c, f) != avoid) {
			assert_int_equal(bpfmap_update_elem(m, f, v, BPFMAP_NOEXIST), 0);
			assert_int_equal(bpfmap_delete_elem(m, f), 0);
		}
		f[0]++;
	}
	if (c->value_word)
		assert_int_equal(c->lockfree_store, STORES_ON); /* nothing reused yet */
}

/* Key @a (value @va) inserted into @m, then, inside a read-side section
 * that the caller ends, the map's slack borrowed (borrow_all): the next
 * insert inside a section reuses a deleted element at once.  Skips in TSan
 * builds, which never do. */
static void reuse_ready(struct bpfmap *m, const uint64_t a[2], const void *va)
{
	uint64_t f[2] = { 0, 8 };

	if (!CHAIN_COPY_SECTION_FREE) {
		bpfmap_free(m);
		skip_msg("TSan builds never reuse a deleted element at once (chain_may_reuse)");
	}
	assert_int_equal(bpfmap_update_elem(m, a, va, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	borrow_all(m, chain_bucket_of(to_chain(m), a), f);
}

/*
 * The same diversion in a HASH that does not evict: a lookup of K, whose
 * bucket's chain is X -> K, stopped about to read X; X deleted, and an
 * insert of Y (another bucket) inside a section, with the pool dry and the
 * heap's share borrowed, reuses X's element at once (it borrowed instead,
 * without bound: 290 MB for a 64-entry map).  The walk goes on from X
 * into Y's chain: the map's moved seq, which the reuse held, sends it
 * back, and it must find K, present throughout.
 */
static void test_chain_reuse_walk_diverted(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 16, 8, 64, 0);
	struct chain *c = to_chain(m);
	uint64_t k[2] = { 0, 7 }, x[2] = { 0, 7 }, y[2] = { 0, 7 }, f[2] = { 0, 8 }, v = 1;
	uint32_t bk, moved;

	assert_ptr_equal(m->ops->get_next_key, chain_get_next_key); /* the chained table */
	if (!CHAIN_COPY_SECTION_FREE) {
		bpfmap_free(m);
		skip_msg("TSan builds never reuse a deleted element at once (chain_may_reuse)");
	}
	bk = chain_bucket_of(c, k);
	diversion_keys(c, bk, x, y);
	assert_int_equal(bpfmap_update_elem(m, k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, x, &v, BPFMAP_NOEXIST), 0); /* the head */
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	borrow_all(m, bk, f);
	struct op look = { .m = m, .key = k[0], .key_hi = k[1], .look = true, .cpu = -1 };

	op_start_stopped(&look, HOOK_CHAIN_STEP, 0); /* about to read X */
	const struct chain_elem *e = stop.obj;

	assert_memory_equal(elem_key(e), x, sizeof(x));
	moved = c->moved;
	assert_int_equal(bpfmap_delete_elem(m, x), 0);
	assert_int_equal(bpfmap_update_elem(m, y, &v, BPFMAP_NOEXIST), 0);
	assert_memory_equal(elem_key(e), y, sizeof(y)); /* X's element, now Y's */
	assert_int_not_equal(c->moved, moved);
	diversion_end(m, &look, k, x, y);
}

/* An insert of key ->key with value ->value (->take: a lookup-and-delete
 * of it into ->value) inside a read-side section of its own, by a thread
 * of its own. */
struct section_insert {
	struct bpfmap *m;
	uint64_t key[2], value;
	bool take;
	int ret; /* atomic: INT32_MIN until done */
};

static void *section_insert_thread(void *arg)
{
	struct section_insert *si = arg;
	int ret;

	bpfmap_read_lock();
	if (si->take)
		ret = bpfmap_lookup_and_delete_elem(si->m, si->key, &si->value);
	else
		ret = bpfmap_update_elem(si->m, si->key, &si->value, BPFMAP_NOEXIST);
	bpfmap_read_unlock();
	__atomic_store_n(&si->ret, ret, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Run @si beside @store, stopped in its store window: @si must wait for
 * the window; then both go on, and both succeed. */
static void beside_stopped_store(struct op *store, struct section_insert *si)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, section_insert_thread, si), 0);
	assert_int_equal(answer_soon(&si->ret), INT32_MIN); /* it waits for the window */
	op_release();
	assert_int_equal(op_join(store), 0);
	pthread_join(t, NULL);
	assert_int_equal(si->ret, 0);
}

/*
 * A lock-free overwrite of K (42) stopped in its store window, K's element
 * found: K is deleted, and an insert of Y (7) inside a section, with the
 * pool dry and the heap's share borrowed, takes K's element at once.  It
 * must wait for the window before it writes Y there (it turns the map's
 * lock-free stores off for good), so that the overwrite, let go, lands in
 * the element while it is still K's, deleted: Y must read 7, not 42.
 */
static void test_chain_reuse_waits_store(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 16, 8, 64, 0);
	struct chain *c = to_chain(m);
	uint64_t k[2] = { 1, 9 }, f[2] = { 0, 8 }, v = 1;
	struct section_insert ins = { .m = m, .key = { 2, 9 }, .value = 7, .ret = INT32_MIN };

	if (!CHAIN_COPY_SECTION_FREE) {
		bpfmap_free(m);
		skip_msg("TSan builds never reuse a deleted element at once (chain_may_reuse)");
	}
	assert_true(c->value_word);
	assert_int_equal(bpfmap_update_elem(m, k, &v, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock(); /* no grace period ends from here on: nothing reclaimed */
	borrow_all(m, chain_bucket_of(c, k), f);
	struct op store = { .m = m, .key = k[0], .key_hi = k[1], .value = 42, .warm = true,
			    .cpu = -1 };

	op_start_stopped(&store, HOOK_CHAIN_STORE, 0);
	const struct chain_elem *e = stop.obj;

	assert_memory_equal(elem_key(e), k, sizeof(k));
	assert_int_equal(bpfmap_delete_elem(m, k), 0);
	beside_stopped_store(&store, &ins);
	assert_memory_equal(elem_key(e), ins.key, sizeof(ins.key)); /* K's element, now Y's */
	assert_int_equal(c->lockfree_store, STORES_OFF);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, ins.key, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(bpfmap_lookup_elem(m, k, &v), -ENOENT);
	bpfmap_free(m);
}

/* A map whose 16-byte values hold a spin lock at offset 0, then a word. */
struct locked_value {
	struct bpfmap_spin_lock lock;
	uint32_t pad;
	uint64_t word;
};

/*
 * An insert of K that reuses deleted A's element at once, stopped with the
 * element's key written and not yet published: its value must be K's
 * already.  A walker that stood on A's element and matches K (a hit, which
 * nothing validates) returns that value; when the key went in first, a
 * lookup of K returned A's value, and a per-CPU add into K was lost to
 * the fill (found by an adversarial probe: 20 of 20 runs).
 */
static void test_chain_reuse_value_first(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 16, 8, 64, 0);
	struct chain *c = to_chain(m);
	uint64_t a[2] = { 3, 9 }, va = 0xaaaaaaaaaaaaaaaaull, v;
	struct section_insert ins = { .m = m, .key = { 4, 9 }, .value = 0xbbbbbbbbbbbbbbbbull,
				      .ret = INT32_MIN };
	pthread_t t;

	reuse_ready(m, a, &va);
	assert_int_equal(bpfmap_delete_elem(m, a), 0);
	thread_start_stopped(&t, section_insert_thread, &ins, HOOK_CHAIN_NAMED);
	const struct chain_elem *e = stop.obj;

	assert_memory_equal(elem_key(e), ins.key, sizeof(ins.key));
	memcpy(&v, elem_value(c, e), sizeof(v));
	assert_int_equal(v, ins.value);
	op_release();
	pthread_join(t, NULL);
	assert_int_equal(ins.ret, 0);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, ins.key, &v), 0);
	assert_int_equal(v, 0xbbbbbbbbbbbbbbbbull);
	bpfmap_free(m);
}

/*
 * A program holds deleted A's spin lock while an insert of K inside a
 * section reuses A's element at once: K's lock is free only once A's
 * holder lets it go (README, bpfmap_update_elem).  The fill zeroed the
 * lock word, and another thread took K's lock while A's holder still held
 * it (an adversarial probe; the flat table's test_flock_hold_across_reuse).
 */
/* A 64-entry chained HASH of 16-byte keys and locked values, holding @a
 * (word @word), ready to reuse a deleted element at once (reuse_ready). */
static struct bpfmap *locked_reuse_ready(const uint64_t a[2], uint64_t word)
{
	BPFMAP_CREATE_OPTS(opts, .lock_off = 0);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, sizeof(struct locked_value),
					 64, &opts);
	struct locked_value va = { .word = word };

	assert_non_null(m);
	reuse_ready(m, a, &va);
	return m;
}

static void test_chain_reuse_keeps_lock(void **state)
{
	(void)state;
	uint64_t a[2] = { 3, 9 }, k[2] = { 4, 9 };
	struct bpfmap *m = locked_reuse_ready(a, 1);
	struct locked_value vk = { .word = 2 };
	struct locked_value *p;

	p = bpfmap_lookup(m, a);
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(bpfmap_delete_elem(m, a), 0);
	assert_int_equal(bpfmap_update_elem(m, k, &vk, BPFMAP_NOEXIST), 0);
	assert_ptr_equal(bpfmap_lookup(m, k), p); /* A's element, now K's */
	assert_int_not_equal(__atomic_load_n(&p->lock.val, __ATOMIC_RELAXED), 0);
	assert_int_equal(p->word, 2);
	bpfmap_spin_unlock(&p->lock);
	bpfmap_read_unlock();
	bpfmap_free(m);
}

/* The writer that test_chain_reuse_flock_copy stops once its reused
 * element is filled: it lets the stopped copy-out go and waits for it. */
static pthread_t filled_writer;
static struct op *filled_reader;
static bool filled_reached;

static void filled_hook(enum test_hook_point point, const void *obj)
{
	if (point != HOOK_CHAIN_FILLED || !pthread_equal(pthread_self(), filled_writer)) {
		hook(point, obj);
		return;
	}
	filled_reached = true;
	op_release();
	while (__atomic_load_n(&filled_reader->ret, __ATOMIC_SEQ_CST) == INT32_MIN)
		usleep(100);
}

/*
 * An F_LOCK copy-out of A, stopped on A's element; A deleted, and an
 * insert of K inside a section reuses A's element at once, stopped with
 * K's value in and the map's moved seq not yet taken.  The copy-out goes
 * on: it must answer -ENOENT (A was deleted meanwhile), not K's value.  It
 * copied under the value's lock, which the reuse's fill does not take, and
 * checked no seq of the element: A's lookup returned K's value, or, with
 * the fill under way, a mix of the two (an adversarial probe).
 */
static void test_chain_reuse_flock_copy(void **state)
{
	(void)state;
	uint64_t a[2] = { 3, 9 }, k[2] = { 4, 9 };
	struct bpfmap *m = locked_reuse_ready(a, 1);
	struct locked_value vk = { .word = 2 }, got;
	struct op look = { .m = m, .key = a[0], .key_hi = a[1], .copy = true,
			   .flags = BPFMAP_F_LOCK, .cpu = -1 };

	op_start_stopped(&look, HOOK_CHAIN_STEP, 0);
	assert_memory_equal(elem_key(stop.obj), a, sizeof(a));
	assert_int_equal(bpfmap_delete_elem(m, a), 0);
	filled_writer = pthread_self();
	filled_reader = &look;
	filled_reached = false;
	__atomic_store_n(&bpfmap_test_hook, filled_hook, __ATOMIC_SEQ_CST);
	assert_int_equal(bpfmap_update_elem(m, k, &vk, BPFMAP_NOEXIST), 0);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_SEQ_CST);
	pthread_join(look.t, NULL);
	assert_true(filled_reached); /* A's element, reused for K */
	assert_int_equal(look.ret, -ENOENT);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem_flags(m, k, &got, BPFMAP_F_LOCK), 0);
	assert_int_equal(got.word, 2);
	bpfmap_free(m);
}

/*
 * A lock-free overwrite of K (42) in a chained map, stopped in its store
 * window, K's element found; the map's first lookup-and-delete of K, inside
 * a read-side section, must wait for the window (it turns the stores off)
 * and return 42, the value the overwrite stored just before the delete.
 * It used to turn them off without waiting, as a grace period cannot end
 * inside the section, and return 1 while the 42 landed in the deleted
 * element, lost.
 */
static void test_chain_take_waits_store(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 16, 8, 64, 0);
	uint64_t k[2] = { 1, 9 }, v = 1;
	struct section_insert take = { .m = m, .key = { 1, 9 }, .take = true, .ret = INT32_MIN };

	assert_ptr_equal(m->ops->get_next_key, chain_get_next_key); /* the chained table */
	assert_int_equal(bpfmap_update_elem(m, k, &v, BPFMAP_NOEXIST), 0);
	struct op store = { .m = m, .key = k[0], .key_hi = k[1], .value = 42, .warm = true,
			    .cpu = -1 };

	op_start_stopped(&store, HOOK_CHAIN_STORE, 0);
	beside_stopped_store(&store, &take);
	assert_int_equal(take.value, 42);
	assert_int_equal(bpfmap_lookup_elem(m, k, &v), -ENOENT);
	bpfmap_free(m);
}

/* Keys deeper in a chain than a section-free walk goes (CHAIN_STABLE_HOPS)
 * take the general copy-out: every key of a 12-long chain answers its own
 * value, and a deleted one is absent.  (No hook: a fixed layout.) */
static void test_chain_copy_deep(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, 16, 8, 64, 0);
	struct chain *c = chain_map_of(m);
	uint64_t keys[12][2], v, first[2] = { 0, 9 };
	uint32_t bucket = chain_bucket_of(c, first), n = 0;

	for (uint64_t i = 0; n < 12; i++) {
		uint64_t k[2] = { i, 9 };

		if (chain_bucket_of(c, k) != bucket)
			continue;
		memcpy(keys[n], k, sizeof(k));
		assert_int_equal(bpfmap_update_elem(m, k, &i, BPFMAP_NOEXIST), 0);
		n++;
	}
	for (uint32_t j = 0; j < 12; j++) {
		assert_int_equal(bpfmap_lookup_elem(m, keys[j], &v), 0);
		assert_int_equal(v, keys[j][0]);
	}
	assert_int_equal(bpfmap_delete_elem(m, keys[1]), 0); /* 11th from the head */
	assert_int_equal(bpfmap_lookup_elem(m, keys[1], &v), -ENOENT);
	assert_int_equal(bpfmap_lookup_elem(m, keys[0], &v), 0);
	assert_int_equal(v, keys[0][0]);
	bpfmap_free(m);
}

/* ---- RHASH: a chain split under a walker, an overwrite under a copy ------ */

static struct bpfmap *rhash_map(uint32_t vs)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 8, vs, 1u << 16, &o);

	assert_non_null(m);
	return m;
}

static uint32_t rhash_hash(struct bpfmap *m, uint64_t k)
{
	return rtab_hash(to_rtab(m), &k, 8, HASH_U64);
}

/* Insert @n keys from @from on whose bucket in the current table is @b,
 * each with @v, into @keys; the key after the last one tried. */
static uint64_t rhash_fill(struct bpfmap *m, uint32_t b, uint64_t from, uint64_t *keys,
			   uint32_t n, uint64_t v)
{
	struct rtab_table *t = rtab_table_of(to_rtab(m));

	for (uint64_t k = from;; k++) {
		if (rtab_bucket(t, rhash_hash(m, k)) != b)
			continue;
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		*keys++ = k;
		if (!--n)
			return k + 1;
	}
}

static void test_rhash_slot_reused(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_map(8);
	struct rtab *r = to_rtab(m);
	struct rtab_table *t = rtab_table_of(r);
	uint64_t keys[6], w = 2;
	uint32_t b = rtab_bucket(t, rhash_hash(m, 0));

	/* Six keys of one bucket: slots 0-5, the last one K. */
	rhash_fill(m, b, 0, keys, 6, 1);
	assert_int_equal(t->groups[b].hash[5], rhash_hash(m, keys[5]));
	assert_int_equal(bpfmap_delete_elem(m, &keys[2]), 0); /* slot 2 free */

	struct op copy = { .m = m, .key = keys[5], .copy = true, .cpu = -1 };

	/* The copy-out matched K's hash in slot 5 and stops before its link. */
	op_start_stopped(&copy, HOOK_RTAB_STEP, 0);
	assert_ptr_equal(stop.obj, &t->groups[b].link[5]);
	/* K deleted and inserted again: into slot 2, which the copy passed. */
	assert_int_equal(bpfmap_delete_elem(m, &keys[5]), 0);
	assert_int_equal(bpfmap_update_elem(m, &keys[5], &w, BPFMAP_NOEXIST), 0);
	assert_int_equal(t->groups[b].hash[2], rhash_hash(m, keys[5]));
	op_release();
	/* Its miss is checked against the bucket's lock word: it scans again. */
	assert_int_equal(op_join(&copy), 0);
	assert_int_equal(copy.out, 2);
	bpfmap_free(m);
}

/*
 * A slot refilled under a lookup with another key of its bucket.  A
 * program-view lookup of K matches K's hash in slot 5 and stops before
 * reading the link; K is deleted and Y, of the same bucket, takes slot 5.
 * The lookup then reads Y's link beside K's stale hash: it must not take
 * Y's element for K's.  4-byte keys, whose lookups are the fastest and the
 * likeliest to be made to skip the element (an attempt that trusted a
 * bijective hash failed here without a second read of the slot).
 */
static void test_rhash_slot_refilled_other_key(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 4, 8, 1u << 16, &o);
	struct rtab *r;
	struct rtab_table *t;
	uint32_t keys[8], n = 0, b, y;
	uint64_t v = 1;

	assert_non_null(m);
	r = to_rtab(m);
	t = rtab_table_of(r);
	b = rtab_bucket(t, rtab_hash(r, &n, 4, HASH_U32));
	/* Seven keys of bucket b fill its first group, then Y of the same. */
	for (uint32_t k = 0; n < 8; k++) {
		if (rtab_bucket(t, rtab_hash(r, &k, 4, HASH_U32)) != b)
			continue;
		if (n < 7)
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
		keys[n++] = k;
	}
	y = keys[7];
	assert_int_equal(t->groups[b].hash[5], rtab_hash(r, &keys[5], 4, HASH_U32));

	struct op look = { .m = m, .key = keys[5], .look = true, .cpu = -1 };

	op_start_stopped(&look, HOOK_RTAB_STEP, 0);
	assert_ptr_equal(stop.obj, &t->groups[b].link[5]);
	assert_int_equal(bpfmap_delete_elem(m, &keys[5]), 0);
	v = 2;
	assert_int_equal(bpfmap_update_elem(m, &y, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(t->groups[b].hash[5], rtab_hash(r, &y, 4, HASH_U32));
	op_release();
	assert_int_equal(op_join(&look), -ENOENT);
	/* The others stay found, Y with its value. */
	bpfmap_read_lock();
	for (int i = 0; i < 8; i++) {
		uint64_t *p = bpfmap_lookup(m, &keys[i]);

		if (i == 5) {
			assert_null(p);
			continue;
		}
		assert_non_null(p);
		assert_int_equal(*p, i == 7 ? 2 : 1);
	}
	bpfmap_read_unlock();
	bpfmap_free(m);
}

/*
 * Overflow groups are reused without a grace period (rtab_ogroup_free).
 * A lookup of K, the eighth key of bucket B and alone in B's overflow
 * group G, stops in G before reading K's link; then the group changes
 * hands under it, and its answer must still be K's.  @look: the program
 * view, else a copy-out.  @resize: G goes because a grow moves B, else
 * because K is deleted, G goes to another bucket, and K comes back.
 */
static void rhash_group_reused(bool look, bool resize)
{
	struct bpfmap *m = rhash_map(8);
	struct rtab *r = to_rtab(m);
	struct rtab_table *t = rtab_table_of(r);
	uint64_t keys[8], other[8], k, v = 2;
	uint32_t b = rtab_bucket(t, rhash_hash(m, 0)), gi, elem;
	struct rtab_group *g;

	k = rhash_fill(m, b, 0, keys, 8, 1);
	gi = t->groups[b].next;
	assert_int_not_equal(gi, RTAB_NONE);
	g = rtab_ogroup(r, gi);
	assert_int_equal(g->hash[0], rhash_hash(m, keys[7]));
	elem = g->link[0];

	struct op find = { .m = m, .key = keys[7], .copy = !look, .look = look, .cpu = -1 };

	op_start_stopped(&find, HOOK_RTAB_STEP, 0);
	assert_ptr_equal(stop.obj, &g->link[0]);
	if (resize) {
		/* Grow until B has moved: G is freed, emptied, and may be
		 * taken by a new bucket. */
		while (rtab_table_of(r) == t) {
			assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
			k++;
		}
		assert_int_equal(t->groups[b].next, RTAB_MOVED);
		assert_int_not_equal(__atomic_load_n(&g->link[0], __ATOMIC_RELAXED), elem);
		v = 1; /* K's value is still 1 */
	} else {
		assert_int_equal(bpfmap_delete_elem(m, &keys[7]), 0);
		assert_int_equal(__atomic_load_n(&g->link[0], __ATOMIC_RELAXED), RTAB_NONE);
		/* Another bucket overflows into G at once ... */
		uint32_t b2 = (b + 1) % t->n;

		rhash_fill(m, b2, 0, other, 8, 3);
		assert_int_equal(t->groups[b2].next, gi);
		assert_int_not_equal(g->link[0], RTAB_NONE);
		/* ... and K comes back, into a new group of B. */
		assert_int_equal(bpfmap_update_elem(m, &keys[7], &v, BPFMAP_NOEXIST), 0);
		assert_int_not_equal(t->groups[b].next, gi);
	}
	op_release();
	/* It finds another key's element in G, or none, and G's next leads
	 * elsewhere: its miss is checked against B's lock word, which the
	 * delete or the move changed, so it looks again. */
	assert_int_equal(op_join(&find), 0);
	if (!look)
		assert_int_equal(find.out, v);
	bpfmap_free(m);
}

static void test_rhash_group_reused(void **state)
{
	(void)state;
	rhash_group_reused(false, false);
	rhash_group_reused(true, false);
}

static void test_rhash_group_moved(void **state)
{
	(void)state;
	rhash_group_reused(false, true);
	rhash_group_reused(true, true);
}

/* Where @a falls against @b in the map's order (hash, key bytes). */
static int rhash_order(struct bpfmap *m, uint64_t a, uint64_t b)
{
	uint32_t ha = rhash_hash(m, a), hb = rhash_hash(m, b);

	return ha != hb ? (ha < hb ? -1 : 1) : memcmp(&a, &b, sizeof(a));
}

/* Has the child @pid exited with 0 within 5 s?  Killed if not. */
static __attribute__((unused)) bool child_done(pid_t pid)
{
	int status = 0;

	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		usleep(10 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return false;
}

/*
 * A get_next_key walk takes no lock.  Bucket 0 holds 15 keys: 7 in its
 * first group, K1 alone in the overflow group G1 (six others deleted), and
 * K2, the least of all in the order, in G2 after it.  The walk from the
 * first key stops in G1, its slots read, before it reads G1's next.  Then:
 *  - a fork()ed child inserts into bucket 0: it hung when a walk held the
 *    bucket's lock (it cannot be released in the child), and the parent's
 *    delete of K1 waited for the walk;
 *  - that delete empties G1, which is freed at once, its next no longer
 *    G2: the walk's scan misses K2, present throughout, and only the
 *    bucket's lock word, moved by the delete, makes it read the bucket
 *    again and answer K2.
 */
static void test_rhash_walk_holds_nothing(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_map(8);
	struct rtab *r = to_rtab(m);
	struct rtab_table *t = rtab_table_of(r);
	uint64_t keys[15], spare[1], least, v = 1, k;
	struct rtab_group *g1;
	size_t li = 0;
	pid_t pid;

	k = rhash_fill(m, 0, 0, keys, 14, 1);
	rhash_fill(m, 0, k, spare, 1, 1); /* one more, taken out at once */
	assert_int_equal(bpfmap_delete_elem(m, spare), 0);
	/* The least of the 15 goes in last, so that it lands in G2. */
	keys[14] = spare[0];
	for (size_t i = 1; i < 15; i++)
		if (rhash_order(m, keys[i], keys[li]) < 0)
			li = i;
	least = keys[li];
	keys[li] = keys[14];
	keys[14] = least;
	for (int i = 0; i < 15; i++)
		(void)bpfmap_delete_elem(m, &keys[i]);
	for (int i = 0; i < 15; i++)
		assert_int_equal(bpfmap_update_elem(m, &keys[i], &v, BPFMAP_NOEXIST), 0);
	g1 = rtab_ogroup(r, t->groups[0].next);
	assert_int_not_equal(g1->next, RTAB_NONE);
	assert_int_equal(rtab_ogroup(r, g1->next)->link[0] != RTAB_NONE, 1);
	for (int i = 8; i < 14; i++) /* G1 keeps keys[7], K1 */
		assert_int_equal(bpfmap_delete_elem(m, &keys[i]), 0);

	struct op walk = { .m = m, .walk = true, .cpu = -1 };
	struct op del = { .m = m, .key = keys[7], .del = true, .cpu = -1 };

	/* The deletes' reclamation done first: liburcu's pre-fork handler
	 * waits for the callbacks in flight, and they for a grace period
	 * that the stopped walk's section holds up (the test hung so, under
	 * load). */
	rcu_wait_deferred();
	op_start_stopped(&walk, HOOK_RTAB_WALK, 1);
	assert_ptr_equal(stop.obj, g1);
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer stops a child of a threaded process that starts a
	 * thread, and liburcu restarts its worker there; the other builds
	 * run the fork. */
	print_message("fork part skipped: ThreadSanitizer forbids threads in a forked child\n");
	(void)pid;
#else
	pid = fork();
	assert_int_not_equal(pid, -1);
	if (pid == 0) {
		uint64_t in = keys[8];

		_exit(bpfmap_update_elem(m, &in, &v, BPFMAP_NOEXIST) ? 1 : 0);
	}
	assert_true(child_done(pid));
#endif
	op_start(&del);
	assert_int_equal(op_answer_late(&del), 0);
	assert_int_equal(op_join(&del), 0);
	op_release();
	assert_int_equal(op_join(&walk), 0);
	assert_int_equal(walk.out, least);
	bpfmap_free(m);
}

/* Values of two words: an overwrite takes the lock (one-word values are
 * stored lock-free, and a copy reads them at once). */
static void test_rhash_copy_overwritten(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_map(16);
	uint64_t k = 5, v[2] = { 1, 1 }, w[2] = { 2, 2 };
	struct op copy = { .m = m, .key = k, .copy = true, .cpu = -1 };

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	op_start_stopped(&copy, HOOK_RTAB_COPY, 0);
	assert_int_equal(bpfmap_update_elem(m, &k, w, BPFMAP_EXIST), 0);
	op_release();
	assert_int_equal(op_join(&copy), 0);
	/* The copy read 1, then saw the group's word move: it copies again. */
	assert_int_equal(copy.out, 2);
	assert_int_equal(copy.out_hi, 2);
	bpfmap_free(m);
}

/* The same copy, but the key is deleted before the copy looks again: its
 * answer is -ENOENT, not the bytes it copied before the check failed
 * (it answered 0 with them, torn or not, with the lock field uncleared). */
static void test_rhash_copy_then_gone(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_map(16);
	uint64_t k = 5, v[2] = { 1, 1 };
	struct op copy = { .m = m, .key = k, .copy = true, .cpu = -1 };

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	op_start_stopped(&copy, HOOK_RTAB_COPY, 0);
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	op_release();
	assert_int_equal(op_join(&copy), -ENOENT);
	bpfmap_free(m);
}

/*
 * Values of 1-7 bytes are overwritten lock-free by one 8-byte store, and
 * under the bucket lock by a thread with no store window yet.  The locked
 * overwrite copied byte by byte: a lock-free store validated just before
 * it took the lock could land between its bytes, and the value stayed a
 * mix of the two (bb bb aa aa aa below).  Here the locked writer stops
 * between its bytes on a page fault of its own value buffer (a page not
 * yet touched or swapped out does the same), the lock-free one stops
 * after its check.
 */
static char *torn_page;
static int torn_faulted, torn_go;

static void torn_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if ((char *)si->si_addr < torn_page + 4096 || (char *)si->si_addr >= torn_page + 8192)
		abort();
	__atomic_store_n(&torn_faulted, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&torn_go, __ATOMIC_SEQ_CST))
		usleep(100);
	if (mprotect(torn_page + 4096, 4096, PROT_READ | PROT_WRITE))
		abort();
}

static void *torn_locked_writer(void *arg)
{
	struct bpfmap *m = arg;
	uint64_t k = 5;

	/* bytes 0-1 readable, 2-4 on the next page */
	return (void *)(intptr_t)bpfmap_update_elem(m, &k, torn_page + 4096 - 2, BPFMAP_ANY);
}

static void test_rhash_short_value_whole(void **state)
{
	struct bpfmap *m = rhash_map(5);
	struct op w = { .m = m, .key = 5, .value = 0xbbbbbbbbbbULL, .warm = true, .cpu = -1 };
	struct sigaction sa = { .sa_sigaction = torn_segv, .sa_flags = SA_SIGINFO }, old;
	uint8_t out[5];
	pthread_t l;
	void *ret;

	(void)state;
	if (!RTAB_BARE_PROBES)
		skip_msg("ThreadSanitizer builds overwrite RHASH values in read-side sections only");
	assert_int_equal(bpfmap_update_elem(m, &w.key, &w.key, BPFMAP_NOEXIST), 0);
	torn_page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(torn_page != MAP_FAILED);
	memset(torn_page + 4096 - 2, 0xaa, 5);
	assert_int_equal(mprotect(torn_page + 4096, 4096, PROT_NONE), 0);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);

	op_start_stopped(&w, HOOK_RTAB_STORE, 0); /* checked, not stored */
	assert_int_equal(pthread_create(&l, NULL, torn_locked_writer, m), 0);
	while (!__atomic_load_n(&torn_faulted, __ATOMIC_SEQ_CST))
		usleep(100);
	op_release();
	assert_int_equal(op_join(&w), 0);
	__atomic_store_n(&torn_go, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(l, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &w.key, out), 0);
	for (int i = 1; i < 5; i++)
		assert_int_equal(out[i], out[0]);
	munmap(torn_page, 8192);
	bpfmap_free(m);
}

/*
 * Copy-outs outside any read-side section (rtab_bare_find): one stops
 * after reading the map's table; a grow then finishes and the old table is
 * retired and cleared (it stays mapped).  The copy goes on in the cleared
 * table: an empty bucket with an even lock word, whose check alone passes.
 * Only the resize generation tells it the table is no longer the map's:
 * without that check the copy-out of the present key answered -ENOENT.
 */
static void test_rhash_bare_stale_table(void **state)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 8, 8, 4096, &o);
	struct rtab *r = to_rtab(m);
	struct rtab_table *t = rtab_table_of(r);
	struct op probe = { .m = m, .key = 0, .copy = true, .cpu = -1 };
	const struct rtab_group *g;
	uint64_t k, v = 1;

	(void)state;
	if (!RTAB_BARE_PROBES)
		skip_msg("ThreadSanitizer builds copy out of RHASH in read-side sections only");
	assert_int_equal(bpfmap_update_elem(m, &probe.key, &v, BPFMAP_NOEXIST), 0);
	op_start_stopped(&probe, HOOK_RTAB_BARE, 0);
	g = stop.obj;
	assert_ptr_equal(g, &t->groups[rtab_bucket(t, rhash_hash(m, 0))]);
	assert_int_not_equal(g->link[0], RTAB_NONE);
	for (k = 1; rtab_table_of(r) == t; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	rcu_wait_deferred(); /* the old table retired: cleared, still mapped */
	assert_int_equal(__atomic_load_n(&g->lock, __ATOMIC_RELAXED), 0);
	assert_int_equal(__atomic_load_n(&g->link[0], __ATOMIC_RELAXED), RTAB_NONE);
	op_release();
	assert_int_equal(op_join(&probe), 0);
	assert_int_equal(probe.out, 1);
	bpfmap_free(m);
}

/*
 * A lock-free overwrite outside any read-side section (rtab_update_bare)
 * stops after reading the map's table.  A grow then moves its bucket, and
 * the key is deleted and inserted again (a new element, value 7), all
 * inside a read-side section that keeps the old table from being cleared.
 * The overwrite goes on in the old table, which still links the key's old
 * element under an even lock word that did not change since it read it:
 * only the resize generation says the table is stale.  The store must land
 * in the new element: without that check it went into the deleted one,
 * answered 0, and the key kept 7.
 */
static void test_rhash_bare_store_stale_table(void **state)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 8, 8, 4096, &o);
	struct rtab *r = to_rtab(m);
	struct rtab_table *t = rtab_table_of(r);
	struct op store = { .m = m, .key = 0, .value = 5, .cpu = -1 };
	const struct rtab_group *g;
	uint64_t k, v = 1;
	uint32_t old;

	(void)state;
	if (!RTAB_BARE_PROBES)
		skip_msg("ThreadSanitizer builds update RHASH in read-side sections only");
	assert_int_equal(bpfmap_update_elem(m, &store.key, &v, BPFMAP_NOEXIST), 0);
	op_start_stopped(&store, HOOK_RTAB_BARE, 0);
	g = stop.obj;
	assert_ptr_equal(g, &t->groups[rtab_bucket(t, rhash_hash(m, 0))]);
	old = g->link[0];
	assert_int_not_equal(old, RTAB_NONE);
	bpfmap_read_lock();
	for (k = 1; rtab_table_of(r) == t; k++)
		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	k = 0;
	v = 7;
	assert_int_equal(bpfmap_delete_elem(m, &k), 0);
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(__atomic_load_n(&g->link[0], __ATOMIC_RELAXED), old);
	assert_int_equal(__atomic_load_n(&g->lock, __ATOMIC_RELAXED) & 1, 0);
	op_release();
	assert_int_equal(op_join(&store), 0);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 5);
	bpfmap_free(m);
}

struct reclaim_reuse {
	struct bpfmap *m;
	uint64_t key, value;
	int ret; /* atomic: INT32_MIN until done */
	pthread_t t;
};

/* Wait for the deleted elements to come back, then insert (reusing one). */
static void *reclaim_reuse_thread(void *arg)
{
	struct reclaim_reuse *u = arg;

	rtab_reclaim_wait(to_rtab(u->m));
	__atomic_store_n(&u->ret, bpfmap_update_elem(u->m, &u->key, &u->value, BPFMAP_NOEXIST),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A lock-free overwrite outside any read-side section stops in its store
 * window, its check passed, before its store.  Its key is deleted and
 * another thread waits for the deleted elements to come back, to insert a
 * new key into the one the overwrite is about to store in.  The element
 * must not come back before the store lands (rtab_release waits for the
 * windows): without that wait the new key was inserted with 9 and then
 * read 5, the overwrite's value.
 */
static void test_rhash_window_holds_element(void **state)
{
	struct bpfmap *m = rhash_map(8);
	struct op store = { .m = m, .key = 3, .value = 5, .cpu = -1, .warm = true };
	struct reclaim_reuse u = { .m = m, .key = 4, .value = 9, .ret = INT32_MIN };
	uint64_t v = 1;

	(void)state;
	if (!RTAB_BARE_PROBES)
		skip_msg("ThreadSanitizer builds update RHASH in read-side sections only");
	assert_int_equal(bpfmap_update_elem(m, &store.key, &v, BPFMAP_NOEXIST), 0);
	op_start_stopped(&store, HOOK_RTAB_STORE, 0);
	assert_int_equal(bpfmap_delete_elem(m, &store.key), 0);
	assert_int_equal(pthread_create(&u.t, NULL, reclaim_reuse_thread, &u), 0);
	for (int i = 0; i < 50 && __atomic_load_n(&u.ret, __ATOMIC_SEQ_CST) == INT32_MIN; i++)
		usleep(1000);
	assert_int_equal(__atomic_load_n(&u.ret, __ATOMIC_SEQ_CST), INT32_MIN); /* it waits */
	op_release();
	assert_int_equal(op_join(&store), 0); /* landed just before the delete */
	assert_int_equal(pthread_join(u.t, NULL), 0);
	assert_int_equal(u.ret, 0);
	assert_int_equal(bpfmap_lookup_elem(m, &u.key, &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(bpfmap_lookup_elem(m, &store.key, &v), -ENOENT);
	bpfmap_free(m);
}

static struct bpfmap *rhash_locked_map(void)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC, .lock_off = 0);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 8, sizeof(struct locked_value),
					 64, &o);

	assert_non_null(m);
	return m;
}

/* Plain copy-outs check a copy by the bucket's lock word: an F_LOCK store
 * must move it too (it was made under the value's spin lock alone, and a
 * copy-out running beside it returned half of each value). */
static void test_rhash_flock_store_moves_word(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_locked_map();
	struct rtab *r = to_rtab(m);
	uint64_t k = 3;
	struct locked_value v = { .word = 1 };
	uint32_t *word, before;

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	struct rtab_table *t = rtab_table_of(r);

	word = &t->groups[rtab_bucket(t, rtab_hash(r, &k, 8, HASH_U64))].lock;
	before = __atomic_load_n(word, __ATOMIC_RELAXED);
	v.word = 2;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST | BPFMAP_F_LOCK), 0);
	assert_int_not_equal(__atomic_load_n(word, __ATOMIC_RELAXED), before);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v.word, 2);
	bpfmap_free(m);
}

struct locked_update {
	struct bpfmap *m;
	uint64_t key[2]; /* maps of 8-byte keys read key[0] */
	int ret;	 /* atomic: INT32_MIN until done */
};

static void *locked_update_thread(void *arg)
{
	struct locked_update *u = arg;
	struct locked_value v = { .word = 7 };

	__atomic_store_n(&u->ret, bpfmap_update_elem(u->m, u->key, &v, BPFMAP_ANY),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/* A program reads the value under its spin lock: an update without F_LOCK
 * must wait for that lock too (it stored under the bucket's alone, and the
 * program saw half of it). */
static void test_rhash_store_waits_value_lock(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_locked_map();
	struct locked_update u = { .m = m, .key = { 4 }, .ret = INT32_MIN };
	struct locked_value v = { .word = 1 }, *p;
	pthread_t t;
	int early;

	assert_int_equal(bpfmap_update_elem(m, u.key, &v, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, u.key);
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(pthread_create(&t, NULL, locked_update_thread, &u), 0);
	early = answer_soon(&u.ret);
	assert_int_equal(__atomic_load_n(&p->word, __ATOMIC_RELAXED), 1);
	bpfmap_spin_unlock(&p->lock);
	bpfmap_read_unlock();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(early, INT32_MIN); /* it waited for the program's lock */
	assert_int_equal(u.ret, 0);
	assert_int_equal(bpfmap_lookup_elem(m, u.key, &v), 0);
	assert_int_equal(v.word, 7);
	bpfmap_free(m);
}

/*
 * A walk step that keeps finding its bucket changed locks it at last
 * (RTAB_WALK_TRIES), so that writers cannot hold it off for as long as
 * they go on.  The step stops in bucket B before its check; a delete and
 * an insert change B, and it reads again, RTAB_WALK_TRIES times.  Until
 * then the step holds nothing and each change answers at once; then it
 * holds B's lock, and a delete waits for it.  Its answer is B's least key.
 */
static void test_rhash_walk_step_locks_at_last(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_map(8);
	uint64_t keys[3], least, v = 1;
	struct op walk = { .m = m, .walk = true, .cpu = -1 };

	rhash_fill(m, 0, 0, keys, 3, 1);
	least = keys[0];
	for (int i = 1; i < 3; i++)
		if (rhash_order(m, keys[i], least) < 0)
			least = keys[i];
	op_start_stopped(&walk, HOOK_RTAB_WALK, 0);
	for (int i = 0; i < RTAB_WALK_TRIES; i++) {
		struct op del = { .m = m, .key = keys[2], .del = true, .cpu = -1 };
		struct op ins = { .m = m, .key = keys[2], .value = v, .cpu = -1 };

		op_start(&del);
		assert_int_equal(op_answer_late(&del), 0);
		assert_int_equal(op_join(&del), 0);
		op_start(&ins);
		assert_int_equal(op_answer_late(&ins), 0);
		assert_int_equal(op_join(&ins), 0);
		op_restop(&walk);
	}
	struct op del = { .m = m, .key = keys[2], .del = true, .cpu = -1 };

	op_start(&del);
	assert_int_equal(op_answer_soon(&del), INT32_MIN); /* the step holds B */
	op_release();
	assert_int_equal(op_join(&walk), 0);
	assert_int_equal(walk.out, least);
	assert_int_equal(op_join(&del), 0);
	bpfmap_free(m);
}

/*
 * A program holds K's value lock; an update of K without F_LOCK waits for
 * it, but not with K's bucket locked: meanwhile a copy-out of K answers at
 * once (the old value), and so does an update of @other, a key of the same
 * bucket.  Both waited for the program's lock when the update held the
 * bucket (or, in the chained table, K's seqcount) while it waited.
 */
static void value_lock_waits_alone(struct bpfmap *m, uint64_t k, uint64_t other)
{
	struct locked_update u = { .m = m, .key = { k }, .ret = INT32_MIN };
	struct locked_update o = { .m = m, .key = { other }, .ret = INT32_MIN };
	struct locked_value v = { .word = 1 }, *p;
	struct op copy = { .m = m, .key = k, .copy = true, .cpu = -1 };
	pthread_t tu, to;

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, &other, &v, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, &k);
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(pthread_create(&tu, NULL, locked_update_thread, &u), 0);
	assert_int_equal(answer_soon(&u.ret), INT32_MIN); /* waits for the program */
	op_start(&copy);
	assert_int_equal(pthread_create(&to, NULL, locked_update_thread, &o), 0);
	int copied = op_answer_late(&copy), updated = answer_late(&o.ret);

	assert_int_equal(__atomic_load_n(&p->word, __ATOMIC_RELAXED), 1);
	bpfmap_spin_unlock(&p->lock);
	bpfmap_read_unlock();
	assert_int_equal(op_join(&copy), 0);
	assert_int_equal(pthread_join(tu, NULL), 0);
	assert_int_equal(pthread_join(to, NULL), 0);
	assert_int_equal(copied, 0);
	assert_int_equal(copy.out_hi, 1);
	assert_int_equal(updated, 0);
	assert_int_equal(u.ret, 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v.word, 7);
	bpfmap_free(m);
}

static int gp_done; /* atomic */

static void *grace_period_thread(void *arg)
{
	(void)arg;
	rcu_synchronize();
	__atomic_store_n(&gp_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Does a grace period started in thread *@tg now end within 10 s?  (Under
 * load one alone took over the 200 ms given before; one that a waiting
 * section holds up never ends.)  The caller joins *@tg. */
static int grace_period_ends(pthread_t *tg)
{
	int done = 0;

	__atomic_store_n(&gp_done, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_create(tg, NULL, grace_period_thread, NULL), 0);
	for (int i = 0; i < 10000 && !done; i++) {
		usleep(1000);
		done = __atomic_load_n(&gp_done, __ATOMIC_SEQ_CST);
	}
	return done;
}

/*
 * A program holds K's value lock outside any read-side section (its
 * pointer obtained in one that has ended).  An update of K waits for it,
 * and must do so outside read-side sections: the program may be waiting
 * for a grace period (a churn of its own), which a waiting section would
 * hold up for ever.  It did, in the chained table and RHASH, and in flat
 * maps of long keys.
 */
static void value_lock_waits_outside(struct bpfmap *m)
{
	struct locked_update u = { .m = m, .key = { 1, 0 }, .ret = INT32_MIN };
	struct locked_value v = { .word = 1 }, *p;
	pthread_t tu, tg;
	int done = 0;

	assert_int_equal(bpfmap_update_elem(m, u.key, &v, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, u.key);
	bpfmap_read_unlock();
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(pthread_create(&tu, NULL, locked_update_thread, &u), 0);
	assert_int_equal(answer_soon(&u.ret), INT32_MIN); /* waits for the program */
	done = grace_period_ends(&tg);
	bpfmap_spin_unlock(&p->lock);
	assert_int_equal(pthread_join(tg, NULL), 0);
	assert_int_equal(pthread_join(tu, NULL), 0);
	assert_true(done); /* the grace period ended while the update waited */
	assert_int_equal(u.ret, 0);
	assert_int_equal(bpfmap_lookup_elem(m, u.key, &v), 0);
	assert_int_equal(v.word, 7);
	bpfmap_free(m);
}

static void test_value_lock_waits_outside(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(o, .lock_off = 0);
	struct bpfmap *m;

	/* Flat maps of long keys update in a section. */
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, sizeof(struct locked_value), 16384, &o);
	assert_non_null(m);
	assert_ptr_not_equal(m->ops, &chain_ops);
	value_lock_waits_outside(m);
	/* Chained, preallocated and not. */
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, sizeof(struct locked_value), 64, &o);
	assert_non_null(m);
	assert_ptr_equal(m->ops, &chain_ops);
	value_lock_waits_outside(m);
	o.map_flags = BPFMAP_F_NO_PREALLOC;
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, sizeof(struct locked_value), 64, &o);
	assert_non_null(m);
	value_lock_waits_outside(m);
	m = bpfmap_create(BPFMAP_TYPE_RHASH, NULL, 16, sizeof(struct locked_value), 64, &o);
	assert_non_null(m);
	value_lock_waits_outside(m);
}

/* ---- a chained map's flush waiting for its grace period ------------------ */

static int flush_armed, flush_reached, flush_go; /* atomic */
static enum test_hook_point flush_point; /* atomic: where flush_hook stops */

/* Stops the flush callback, in liburcu's worker, at its first wait. */
static void flush_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (point != __atomic_load_n(&flush_point, __ATOMIC_SEQ_CST) ||
	    !__atomic_exchange_n(&flush_armed, 0, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&flush_reached, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&flush_go, __ATOMIC_SEQ_CST))
		usleep(100);
}

/* A program-view insert or delete in a read-side section of its own. */
static int section_update(struct bpfmap *m, const uint64_t key[2], bool del)
{
	uint64_t one = 1;
	int ret;

	bpfmap_read_lock();
	ret = del ? bpfmap_delete(m, key) : bpfmap_update(m, key, &one, BPFMAP_NOEXIST);
	bpfmap_read_unlock();
	return ret;
}

/*
 * In one section, so that nothing is reclaimed: every element of chained
 * map @c's pool used from *@key on, deleted and left pending; then the
 * flush callback stopped at @point once the section ends.
 */
static void pool_pending_flush_stopped(struct bpfmap *m, uint64_t key[2],
				       enum test_hook_point point)
{
	struct chain *c = to_chain(m);

	bpfmap_read_lock();
	while (!freelist_looks_empty(&c->free_slots) || __atomic_load_n(&c->spare, __ATOMIC_RELAXED)) {
		uint64_t one = 1;

		assert_int_equal(bpfmap_update(m, key, &one, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_delete(m, key), 0);
		key[0]++;
	}
	assert_int_equal(__atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED), 0);
	__atomic_store_n(&flush_go, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&flush_reached, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&flush_point, point, __ATOMIC_SEQ_CST);
	__atomic_store_n(&flush_armed, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&bpfmap_test_hook, flush_hook, __ATOMIC_RELEASE);
	bpfmap_read_unlock();
	while (!__atomic_load_n(&flush_reached, __ATOMIC_SEQ_CST))
		usleep(100);
}

/*
 * A chained LRU_PERCPU_HASH with room, whose pool's elements, spare
 * included, are all deleted ones that the flush callback took and waits
 * with for a grace period.  Inserts inside sections must reuse those, and
 * neither borrow from the heap nor evict: the flush used to hold them
 * apart while it waited, so the inserts borrowed for good and, once a
 * per-CPU map's heap slot indices ran out, evicted the map's oldest keys,
 * which were never deleted (a probe: all 16 of 16 within seconds).
 */
static void test_flush_leaves_reusable(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_PERCPU_HASH, 16, 8, 1024, 0);
	struct chain *c = to_chain(m);
	uint64_t key[2] = { 0, 0 };
	uint32_t kept = 0, failed = 0, borrowed;

	if (!CHAIN_COPY_SECTION_FREE)
		skip_msg("TSan builds never reuse an element at once (chain_reuse_wanted)");
	assert_ptr_not_equal(m->ops, &flat_percpu_ops);
	for (key[0] = 0; key[0] < 16; key[0]++)
		assert_int_equal(section_update(m, key, false), 0);
	pool_pending_flush_stopped(m, key, HOOK_FLUSH_WAITING);
	for (int i = 0; i < 64; i++, key[0]++)
		failed += section_update(m, key, false) != 0;
	/* Read before the flush goes on and gives the rest back. */
	borrowed = __atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED);
	bpfmap_read_lock();
	for (key[0] = 0; key[0] < 16; key[0]++)
		kept += bpfmap_lookup(m, key) != NULL;
	bpfmap_read_unlock();
	__atomic_store_n(&flush_go, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
	assert_int_equal(failed, 0);
	assert_int_equal(borrowed, 0);
	assert_int_equal(kept, 16);
	rcu_wait_deferred();
	bpfmap_free(m);
}

static void *flush_go_later(void *arg)
{
	(void)arg;
	usleep(50000);
	__atomic_store_n(&flush_go, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A chained LRU_HASH with room whose pool's elements are all deleted, and
 * the flush that took them stopped after its grace period, before it gives
 * the first back (HOOK_RELEASING): none is on a stack, none on the free
 * list yet.  An insert inside a section must wait for the first to land
 * (chain_elem_reusable), not borrow an element from the heap, which the
 * map keeps for good: a churn on two CPUs borrowed a few a second in that
 * window (and in the one chain_flush_gather had, thousands at a time).
 */
static void test_insert_awaits_release(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_LRU_HASH, 16, 8, 1024, 0);
	struct chain *c = to_chain(m);
	uint64_t key[2] = { 0, 0 };
	uint32_t borrowed;
	int ret;
	pthread_t t;

	if (!CHAIN_COPY_SECTION_FREE)
		skip_msg("TSan builds never reuse an element at once (chain_reuse_wanted)");
	assert_true(c->evict && c->prealloc);
	pool_pending_flush_stopped(m, key, HOOK_RELEASING);
	assert_int_equal(pthread_create(&t, NULL, flush_go_later, NULL), 0);
	ret = section_update(m, key, false);
	borrowed = (uint32_t)__atomic_load_n(&c->heap_elems, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
	assert_int_equal(ret, 0);
	assert_int_equal(borrowed, 0);
	rcu_wait_deferred();
	bpfmap_free(m);
}

/* ---- an F_LOCK copy-out's hold across an in-section reuse ---------------- */

/* The copy-out of this test: its unlocked tries spoiled by a program's lock
 * and unlock (so that it takes the lock), then stopped holding it. */
static struct {
	pthread_t who;
	int held; /* atomic */
	int go;	  /* atomic */
} flock_stop;

static void flock_stop_hook(enum test_hook_point point, const void *obj)
{
	if (!pthread_equal(pthread_self(), flock_stop.who))
		return;
	if (point == HOOK_FLOCK_COPIED) {
		bpfmap_spin_lock((struct bpfmap_spin_lock *)(uintptr_t)obj);
		bpfmap_spin_unlock((struct bpfmap_spin_lock *)(uintptr_t)obj);
	} else if (point == HOOK_FLOCK_HELD) {
		__atomic_store_n(&flock_stop.held, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&flock_stop.go, __ATOMIC_SEQ_CST))
			usleep(100);
	}
}

/* An F_LOCK copy-out (@flock: else a program's lock of ->value) of key
 * ->key, by a thread of its own. */
struct flock_copy {
	struct bpfmap *m;
	uint32_t key;
	bool flock;
	bool stop; /* the F_LOCK copy-out stops as flock_stop_hook says */
	struct locked_value *value; /* a program's lock: the value locked */
	struct locked_value out;
	int ret;  /* atomic: INT32_MIN until done (a program: until locked) */
	int drop; /* atomic: a program unlocks once set */
};

static void *flock_copy_thread(void *arg)
{
	struct flock_copy *c = arg;

	if (c->flock) {
		if (c->stop)
			flock_stop.who = pthread_self();
		__atomic_store_n(&c->ret,
				 bpfmap_lookup_elem_flags(c->m, &c->key, &c->out, BPFMAP_F_LOCK),
				 __ATOMIC_SEQ_CST);
		return NULL;
	}
	bpfmap_read_lock();
	bpfmap_spin_lock(&c->value->lock);
	__atomic_store_n(&c->ret, 0, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&c->drop, __ATOMIC_SEQ_CST))
		usleep(100);
	c->value->word = 22;
	bpfmap_spin_unlock(&c->value->lock);
	bpfmap_read_unlock();
	return NULL;
}

static void flock_copy_start(struct flock_copy *c, pthread_t *t)
{
	c->ret = INT32_MIN;
	assert_int_equal(pthread_create(t, NULL, flock_copy_thread, c), 0);
}

/*
 * An F_LOCK copy-out R of key A holds A's value lock when A is deleted and
 * its position reused at once for key B (an insert inside a read-side
 * section that finds every free position waiting for a grace period).  B
 * must inherit the held word: a program's lock of B waits until R lets go,
 * and then holds it alone.  The fill used to zero the word, so the program
 * got in beside R, R's release freed the program's hold, and an F_LOCK
 * copy-out of B went in beside the program and copied half its write.
 */
static void test_flock_hold_across_reuse(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(o, .lock_off = 0);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, sizeof(struct locked_value), 16,
					 &o);
	struct flat *f = to_flat(m);
	struct locked_value v = { .word = 1 }, *pa, *pb;
	struct flock_copy r = { .m = m, .flock = true, .stop = true }, prog = { .m = m };
	struct flock_copy rb = { .m = m, .flock = true };
	pthread_t rt, pt, bt;
	uint32_t h, next = 1, a, b, churn = 100000;

	assert_ptr_not_equal(m->ops, &chain_ops);
	h = home_of(f, 1);
	a = key_of_home(f, h, &next);
	assert_int_equal(bpfmap_update_elem(m, &a, &v, BPFMAP_NOEXIST), 0);
	for (int i = 1; i < FLAT_SLOTS; i++) { /* A's bucket full: B can only reuse */
		uint32_t k = key_of_home(f, h, &next);

		assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	}
	b = key_of_home(f, h, &next);
	bpfmap_read_lock();
	pa = bpfmap_lookup(m, &a);
	bpfmap_read_unlock();
	assert_non_null(pa);

	memset(&flock_stop, 0, sizeof(flock_stop));
	__atomic_store_n(&bpfmap_test_hook, flock_stop_hook, __ATOMIC_RELEASE);
	r.key = a;
	flock_copy_start(&r, &rt);
	while (!__atomic_load_n(&flock_stop.held, __ATOMIC_SEQ_CST))
		usleep(100);

	assert_int_equal(bpfmap_delete_elem(m, &a), 0);
	bpfmap_read_lock();
	/* Every free position used and deleted, none reclaimed in the section. */
	for (uint32_t i = 0; i < f->n_homes * FLAT_SLOTS + f->n_nodes; i++) {
		while (home_of(f, churn) == h)
			churn++;
		assert_int_equal(bpfmap_update_elem(m, &churn, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_delete_elem(m, &churn), 0);
		churn++;
	}
	v.word = 2;
	assert_int_equal(bpfmap_update_elem(m, &b, &v, BPFMAP_NOEXIST), 0);
	pb = bpfmap_lookup(m, &b);
	assert_non_null(pb);
	if (pb != pa) { /* not the position asserted below: the test's premise */
		bpfmap_read_unlock();
		__atomic_store_n(&flock_stop.go, 1, __ATOMIC_SEQ_CST);
		pthread_join(rt, NULL);
		__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
		bpfmap_free(m);
		fail_msg("B did not reuse A's position");
	}
	assert_true(__atomic_load_n(&pb->lock.val, __ATOMIC_SEQ_CST) & 1); /* R's hold */

	prog.value = pb;
	flock_copy_start(&prog, &pt);
	assert_int_equal(answer_soon(&prog.ret), INT32_MIN); /* waits for R */
	__atomic_store_n(&flock_stop.go, 1, __ATOMIC_SEQ_CST);
	pthread_join(rt, NULL);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
	assert_int_equal(r.ret, -ENOENT); /* A was gone: R's copy is not A's */
	assert_int_equal(answer_late(&prog.ret), 0); /* now the program holds it */
	assert_true(__atomic_load_n(&pb->lock.val, __ATOMIC_SEQ_CST) & 1);
	rb.key = b;
	flock_copy_start(&rb, &bt);
	assert_int_equal(answer_soon(&rb.ret), INT32_MIN); /* waits for the program */
	__atomic_store_n(&prog.drop, 1, __ATOMIC_SEQ_CST);
	pthread_join(pt, NULL);
	pthread_join(bt, NULL);
	assert_int_equal(rb.ret, 0);
	assert_int_equal(rb.out.word, 22);
	assert_false(__atomic_load_n(&pb->lock.val, __ATOMIC_SEQ_CST) & 1);
	bpfmap_read_unlock();
	bpfmap_free(m);
}

struct flock_batch {
	struct bpfmap *m;
	bool del; /* lookup_and_delete_batch, else lookup_batch */
	char keys[8 * 16]; /* packed keys of 8 or 16 bytes */
	struct locked_value values[8];
	uint32_t count;
	int ret; /* atomic: INT32_MIN until done */
};

static void *flock_batch_thread(void *arg)
{
	struct flock_batch *fb = arg;
	uint64_t out[2]; /* a cursor: 4 bytes, RHASH's a key */
	struct bpfmap_batch_opts o = { .sz = sizeof(o), .elem_flags = BPFMAP_F_LOCK };

	fb->count = 8;
	__atomic_store_n(&fb->ret,
			 fb->del ? bpfmap_lookup_and_delete_batch(fb->m, NULL, out, fb->keys,
								  fb->values, &fb->count, &o)
				 : bpfmap_lookup_batch(fb->m, NULL, out, fb->keys, fb->values,
						       &fb->count, &o),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A batch with F_LOCK copies each value under its spin lock; one that a
 * program holds, it waits for with the bucket (the flat table: the home)
 * unlocked, taking none of the bucket's values meanwhile, so an update of
 * @other, a key of that bucket, answers at once.  It waited for the
 * program with the bucket locked, and the update with it.  Only K and
 * @other are in the map.
 */
static void flock_batch_waits_alone(struct bpfmap *m, uint64_t k, uint64_t other, bool del)
{
	struct flock_batch fb = { .m = m, .del = del, .ret = INT32_MIN };
	struct locked_update o = { .m = m, .key = { other }, .ret = INT32_MIN };
	struct locked_value v = { .word = 1 }, *p;
	uint64_t key[2] = { k }, got[2] = { 0 }, first = 0;
	uint32_t ks = m->key_size;
	bool took_k = false;
	pthread_t tb, to;

	assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, o.key, &v, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, key);
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(pthread_create(&tb, NULL, flock_batch_thread, &fb), 0);
	usleep(20 * 1000);
	assert_int_equal(pthread_create(&to, NULL, locked_update_thread, &o), 0);
	int updated = answer_late(&o.ret), batched = answer_soon(&fb.ret);

	bpfmap_spin_unlock(&p->lock);
	bpfmap_read_unlock();
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_int_equal(pthread_join(to, NULL), 0);
	assert_int_equal(updated, 0);
	assert_int_equal(batched, INT32_MIN); /* it waited for the program */
	assert_true(fb.ret == 0 || fb.ret == -ENOENT);
	/* K with its value; @other too, unless a lookup-and-delete passed its
	 * place before the update put it back. */
	assert_true(fb.count == 2 || (del && fb.count == 1));
	for (uint32_t i = 0; i < fb.count; i++) {
		memcpy(got, fb.keys + i * ks, ks);
		assert_int_equal(got[1], 0);
		assert_true(got[0] == k || got[0] == other);
		assert_int_not_equal(got[0], first);
		first = got[0];
		assert_int_equal(fb.values[i].lock.val, 0);
		if (got[0] == k) {
			took_k = true;
			assert_int_equal(fb.values[i].word, 1);
		} else {
			assert_true(fb.values[i].word == 1 || fb.values[i].word == 7);
		}
	}
	assert_true(took_k);
	bpfmap_free(m);
}

static void test_flock_batch_waits_alone(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(o, .lock_off = 0);
	uint64_t k = 1, other;

	for (int del = 0; del < 2; del++) {
		/* The flat table: a key of k's home. */
		o.map_flags = 0;
		struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8,
						 sizeof(struct locked_value), 8, &o);

		assert_non_null(m);
		uint32_t next = 2;

		flock_batch_waits_alone(m, 1, key_of_home(to_flat(m), home_of(to_flat(m), 1), &next),
					del);

		/* The chained table, both kinds of element memory (a small
		 * preallocated map of 16-byte keys is chained). */
		for (int np = 0; np < 2; np++) {
			uint64_t key[2] = { k }, okey[2] = { 0 };

			o.map_flags = np ? BPFMAP_F_NO_PREALLOC : 0;
			m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, np ? 8 : 16,
					  sizeof(struct locked_value), 64, &o);
			assert_non_null(m);
			struct chain *c = chain_map_of(m);
			struct chain_bucket *bk =
				chain_bucket(c, chain_key_of(c, key, CHAIN_GENERIC).hash);

			assert_int_equal(c->prealloc, !np);
			for (okey[0] = 2;
			     chain_bucket(c, chain_key_of(c, okey, CHAIN_GENERIC).hash) != bk;)
				okey[0]++;
			flock_batch_waits_alone(m, k, okey[0], del);
		}

		/* RHASH. */
		m = rhash_locked_map();
		struct rtab_table *t = rtab_table_of(to_rtab(m));

		for (other = 2;
		     rtab_bucket(t, rhash_hash(m, other)) != rtab_bucket(t, rhash_hash(m, k));)
			other++;
		flock_batch_waits_alone(m, k, other, del);
	}
}

struct bare_delete {
	struct bpfmap *m;
	uint64_t key[2];
	bool done; /* atomic */
};

/* Delete a key, then wait until every deleted element is freed. */
static void *bare_delete_thread(void *arg)
{
	struct bare_delete *d = arg;

	if (bpfmap_delete_elem(d->m, d->key) || !chain_reclaim_now(chain_map_of(d->m)))
		abort();
	__atomic_store_n(&d->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A program-view lookup of key A outside any read-side section (the header
 * allows one: its pointer holds while nobody deletes A), in a NO_PREALLOC
 * map, whose elements go back to malloc a grace period after their delete.
 * The walk stops on its way to element B, ahead of A in the chain; B is
 * deleted and reclaimed meanwhile.  The lookup must hold that grace period
 * back, or it reads B freed: a helper's ASan run found the use after free
 * (chain_key_match), and here the reclamation would end while the walk
 * stands on B.
 */
static void test_bare_lookup_holds_free(void **state)
{
	(void)state;
	for (uint32_t ks = 8; ks <= 16; ks += 8) {
		struct bpfmap *m = must_create(BPFMAP_TYPE_HASH, ks, 8, 64, BPFMAP_F_NO_PREALLOC);
		struct chain *c = chain_map_of(m);
		struct bare_delete d = { .m = m, .key = { 2 } };
		uint64_t a[2] = { 1 }, v = 7;
		struct op look = { .m = m, .key = 1, .look = true, .bare = true, .cpu = -1 };
		pthread_t t;
		bool freed;

		while (chain_bucket(c, chain_key_of(c, d.key, CHAIN_GENERIC).hash) !=
		       chain_bucket(c, chain_key_of(c, a, CHAIN_GENERIC).hash))
			d.key[0]++;
		assert_int_equal(bpfmap_update_elem(m, a, &v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_update_elem(m, d.key, &v, BPFMAP_NOEXIST), 0);
		op_start_stopped(&look, HOOK_CHAIN_STEP, 0); /* about to read B */
		assert_int_equal(pthread_create(&t, NULL, bare_delete_thread, &d), 0);
		for (int i = 0; i < 300 && !__atomic_load_n(&d.done, __ATOMIC_SEQ_CST); i++)
			usleep(1000);
		freed = __atomic_load_n(&d.done, __ATOMIC_SEQ_CST);
		op_release();
		assert_int_equal(op_join(&look), 0);
		pthread_join(t, NULL);
		assert_false(freed);
		bpfmap_free(m);
	}
	rcu_wait_deferred();
}

struct locked_take {
	struct bpfmap *m;
	uint64_t key[2]; /* maps of 8-byte keys read key[0] */
	uint64_t flags;
	struct locked_value out;
	int ret; /* atomic: INT32_MIN until done */
};

static void *locked_take_thread(void *arg)
{
	struct locked_take *t = arg;

	memset(&t->out, 0xff, sizeof(t->out));
	__atomic_store_n(&t->ret, bpfmap_lookup_and_delete_elem_flags(t->m, t->key, &t->out, t->flags),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A program holds K's value lock, its pointer taken in a read-side section
 * that has ended.  A lookup-and-delete of K with F_LOCK waits for it: with
 * the bucket unlocked (an update of @other, a key of that bucket, answers
 * at once) and outside read-side sections (a grace period ends meanwhile),
 * and then returns what the program left and removes K.  Without F_LOCK it
 * takes no value lock, as the kernel's, and answers at once.
 */
static void flock_take_waits_alone(struct bpfmap *m, uint64_t k, uint64_t other)
{
	struct locked_take t = { .m = m, .key = { k }, .flags = BPFMAP_F_LOCK, .ret = INT32_MIN };
	struct locked_update o = { .m = m, .key = { other }, .ret = INT32_MIN };
	struct locked_value v = { .word = 1 }, *p;
	uint64_t key[2] = { k };
	pthread_t tt, to, tg;
	int done = 0;

	assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, o.key, &v, BPFMAP_NOEXIST), 0);
	bpfmap_read_lock();
	p = bpfmap_lookup(m, key);
	bpfmap_read_unlock();
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(pthread_create(&tt, NULL, locked_take_thread, &t), 0);
	assert_int_equal(answer_soon(&t.ret), INT32_MIN); /* waits for the program */
	assert_int_equal(pthread_create(&to, NULL, locked_update_thread, &o), 0);
	int updated = answer_late(&o.ret);

	done = grace_period_ends(&tg);
	p->word = 2; /* the program's change, made under its lock */
	bpfmap_spin_unlock(&p->lock);
	assert_int_equal(pthread_join(tg, NULL), 0);
	assert_int_equal(pthread_join(tt, NULL), 0);
	assert_int_equal(pthread_join(to, NULL), 0);
	assert_int_equal(updated, 0);
	assert_true(done); /* the grace period ended while the take waited */
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.out.word, 2);
	assert_int_equal(t.out.lock.val, 0);
	assert_int_equal(bpfmap_lookup_elem(m, key, &v), -ENOENT);
	assert_int_equal(bpfmap_lookup_elem(m, o.key, &v), 0);
	assert_int_equal(v.word, 7);

	/* Without F_LOCK: at once, the program still holding the lock (in a
	 * section, so the element stays while it does). */
	v.word = 3;
	assert_int_equal(bpfmap_update_elem(m, key, &v, BPFMAP_NOEXIST), 0);
	t.flags = 0;
	t.ret = INT32_MIN;
	bpfmap_read_lock();
	p = bpfmap_lookup(m, key);
	assert_non_null(p);
	bpfmap_spin_lock(&p->lock);
	assert_int_equal(pthread_create(&tt, NULL, locked_take_thread, &t), 0);
	int took = answer_late(&t.ret);

	bpfmap_spin_unlock(&p->lock);
	bpfmap_read_unlock();
	assert_int_equal(pthread_join(tt, NULL), 0);
	assert_int_equal(took, 0);
	assert_int_equal(t.out.word, 3);
	assert_int_equal(t.out.lock.val, 0);
	bpfmap_free(m);
}

static void test_flock_take_waits_alone(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(o, .lock_off = 0);
	struct bpfmap *m;
	uint64_t k = 1, other;
	uint32_t next = 2;

	/* The flat table, word keys and long ones (a map of 16384: flat). */
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, sizeof(struct locked_value), 8, &o);
	assert_non_null(m);
	flock_take_waits_alone(m, k, key_of_home(to_flat(m), home_of(to_flat(m), k), &next));
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 16, sizeof(struct locked_value), 16384, &o);
	assert_non_null(m);
	assert_ptr_not_equal(m->ops, &chain_ops);
	flock_take_waits_alone(m, k, 2); /* any other key: the map above has K's home */

	/* The chained table, both kinds of element memory. */
	for (int np = 0; np < 2; np++) {
		uint64_t key[2] = { k }, okey[2] = { 0 };

		o.map_flags = np ? BPFMAP_F_NO_PREALLOC : 0;
		m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, np ? 8 : 16, sizeof(struct locked_value),
				  64, &o);
		assert_non_null(m);
		struct chain *c = chain_map_of(m);
		struct chain_bucket *bk = chain_bucket(c, chain_key_of(c, key, CHAIN_GENERIC).hash);

		assert_int_equal(c->prealloc, !np);
		for (okey[0] = 2; chain_bucket(c, chain_key_of(c, okey, CHAIN_GENERIC).hash) != bk;)
			okey[0]++;
		flock_take_waits_alone(m, k, okey[0]);
	}

	/* RHASH. */
	m = rhash_locked_map();
	struct rtab_table *t = rtab_table_of(to_rtab(m));

	for (other = 2; rtab_bucket(t, rhash_hash(m, other)) != rtab_bucket(t, rhash_hash(m, k));)
		other++;
	flock_take_waits_alone(m, k, other);
}

static void test_value_lock_waits_alone(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(o, .lock_off = 0);
	struct bpfmap *m;
	uint64_t other;

	/* The flat table: a key of k's home. */
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, sizeof(struct locked_value), 8, &o);
	assert_non_null(m);
	uint32_t next = 2;

	value_lock_waits_alone(m, 1, key_of_home(to_flat(m), home_of(to_flat(m), 1), &next));

	/* The chained table. */
	o.map_flags = BPFMAP_F_NO_PREALLOC;
	m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, sizeof(struct locked_value), 64, &o);
	assert_non_null(m);
	struct chain *c = chain_map_of(m);
	uint64_t k = 1;
	struct chain_bucket *bk = chain_bucket(c, chain_key_of(c, &k, CHAIN_GENERIC).hash);

	for (other = 2; chain_bucket(c, chain_key_of(c, &other, CHAIN_GENERIC).hash) != bk;)
		other++;
	value_lock_waits_alone(m, k, other);

	/* RHASH. */
	m = rhash_locked_map();
	struct rtab_table *t = rtab_table_of(to_rtab(m));

	for (other = 2; rtab_bucket(t, rhash_hash(m, other)) != rtab_bucket(t, rhash_hash(m, 1));)
		other++;
	value_lock_waits_alone(m, 1, other);
}

/*
 * A lock-free overwrite found its key and stops before its store; a
 * lookup-and-delete of the key starts.  The overwrite will answer success,
 * so the value it stores must be the one the lookup-and-delete returns:
 * the latter turns lock-free stores off and waits for the store in flight
 * (without that it returned 1 and the store of 2 was lost).
 */
static void test_rhash_store_then_take(void **state)
{
	(void)state;
	struct bpfmap *m = rhash_map(8);
	uint64_t k = 9, v = 1;
	struct op store = { .m = m, .key = k, .value = 2, .cpu = -1, .warm = true };
	struct op take = { .m = m, .key = k, .take = true, .cpu = -1 };

	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	op_start_stopped(&store, HOOK_RTAB_STORE, 0);
	op_start(&take);
	assert_int_equal(op_answer_soon(&take), INT32_MIN); /* it waits */
	op_release();
	assert_int_equal(op_join(&store), 0);
	assert_int_equal(op_join(&take), 0);
	assert_int_equal(take.out, 2);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), -ENOENT);
	/* Stores take the lock from now on, and still land. */
	v = 3;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_NOEXIST), 0);
	v = 4;
	assert_int_equal(bpfmap_update_elem(m, &k, &v, BPFMAP_EXIST), 0);
	assert_int_equal(bpfmap_lookup_elem(m, &k, &v), 0);
	assert_int_equal(v, 4);
	bpfmap_free(m);
}

/* ---- a slot arena's chunk between its last free and its pages going ----- */

struct arena_free {
	struct slot_arena *a;
	uint32_t idx;
	pthread_t t;
};

static void *arena_free_thread(void *arg)
{
	struct arena_free *f = arg;

	slot_arena_free(f->a, f->idx);
	return NULL;
}

/* Arena @a of four chunks (a chunk's size is the stride's), every slot
 * handed out; returns the slots a chunk. */
static uint32_t arena_of_four_chunks(struct slot_arena *a)
{
	uint32_t per;

	assert_int_equal(slot_arena_init(a, 1, 16, 0), 0);
	per = 1u << a->chunk_shift;
	slot_arena_destroy(a);
	assert_int_equal(slot_arena_init(a, 4 * per - 1, 16, 0), 0);
	for (uint32_t i = 1; i < 4 * per; i++)
		assert_int_equal(slot_arena_alloc(a), i);
	assert_int_equal(slot_arena_room(a), 0);
	return per;
}

/*
 * While a chunk is being given back its slots cannot be had, though the
 * arena still counts them: with nothing else free, an allocation fails and
 * slot_arena_room() must say so too.  It said the chunk's slots were room,
 * and a chained per-CPU map's insert outside any section answered -ENOMEM
 * at once instead of waiting for them (an adversarial helper: the arena
 * exhausted by in-section deletes, a chunk held in its giving window).
 */
static void test_arena_room_while_giving(void **state)
{
	(void)state;
	struct slot_arena a;
	struct arena_free f = { .a = &a };
	uint32_t per = arena_of_four_chunks(&a);

	/* Chunk 1 freed (kept: nothing else had room), then chunk 2, whose
	 * last free gives it back: stopped there. */
	for (uint32_t i = per; i < 3 * per - 1; i++)
		slot_arena_free(&a, i);
	f.idx = 3 * per - 1;
	thread_start_stopped(&f.t, arena_free_thread, &f, HOOK_ARENA_GIVING);
	for (uint32_t i = 0; i < per; i++) /* chunk 1's */
		assert_int_not_equal(slot_arena_alloc(&a), 0);
	assert_int_equal(slot_arena_alloc(&a), 0);
	assert_int_equal(slot_arena_room(&a), 0);
	op_release();
	pthread_join(f.t, NULL);
	assert_int_equal(slot_arena_room(&a), per);
	assert_int_equal(slot_arena_alloc(&a) >> a.chunk_shift, 2);
	slot_arena_destroy(&a);
}

/*
 * The same for a chunk taken back from the released stack, which hands its
 * slots out in order: freed again after 10 of them, it goes while the rest
 * were never handed out, and they are no room either (the giving counted
 * the 10 only, and room said a chunk less 10; an adversarial helper).
 * Another chunk's 10 free slots let it go; they are taken meanwhile.
 */
static void test_arena_room_while_giving_bumped(void **state)
{
	(void)state;
	struct slot_arena a;
	struct arena_free f = { .a = &a };
	uint32_t per = arena_of_four_chunks(&a), mine[10];

	/* Chunk 1 freed (kept), chunk 2 freed and given back. */
	for (uint32_t i = per; i < 3 * per; i++)
		slot_arena_free(&a, i);
	assert_int_equal(a.released_n, 1);
	for (uint32_t i = 0; i < per; i++) /* chunk 1's */
		assert_int_equal(slot_arena_alloc(&a) >> a.chunk_shift, 1);
	for (uint32_t i = 0; i < 10; i++) { /* chunk 2 taken back, bumped */
		mine[i] = slot_arena_alloc(&a);
		assert_int_equal(mine[i] >> a.chunk_shift, 2);
	}
	for (uint32_t i = 0; i < 10; i++) /* room elsewhere: chunk 3's */
		slot_arena_free(&a, 3 * per + i);
	for (uint32_t i = 0; i < 9; i++)
		slot_arena_free(&a, mine[i]);
	f.idx = mine[9]; /* the last: chunk 2 goes again, stopped there */
	thread_start_stopped(&f.t, arena_free_thread, &f, HOOK_ARENA_GIVING);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(slot_arena_alloc(&a) >> a.chunk_shift, 3);
	assert_int_equal(slot_arena_alloc(&a), 0);
	assert_int_equal(slot_arena_room(&a), 0);
	assert_true(slot_arena_giving(&a));
	op_release();
	pthread_join(f.t, NULL);
	assert_false(slot_arena_giving(&a));
	assert_int_equal(slot_arena_room(&a), per);
	assert_int_equal(slot_arena_alloc(&a) >> a.chunk_shift, 2);
	slot_arena_destroy(&a);
}

/* test_arena_two_chunks_emptied: the second free, by a thread of its own,
 * and whether it began to give its chunk back (emptied_hook holds it
 * there until told). */
static __thread bool second_giver;
static bool second_giving, second_done;

static void *second_free_thread(void *arg)
{
	struct arena_free *f = arg;

	second_giver = true;
	slot_arena_free(f->a, f->idx);
	__atomic_store_n(&second_done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void emptied_hook(enum test_hook_point point, const void *obj)
{
	if (point == HOOK_ARENA_GIVING && second_giver) {
		__atomic_store_n(&second_giving, true, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&second_giving, __ATOMIC_SEQ_CST))
			usleep(100);
		return;
	}
	hook(point, obj);
}

/*
 * Two chunks emptied at once, the rest of the arena handed out: the first
 * goes, counting the second's free slots as the room that stays; the
 * second must then stay, since the first's slots cannot be had while they
 * go.  It counted them as room and went too, and nothing could be had
 * until their pages had gone: an RHASH insert inside a section answered
 * -ENOMEM with no deleted element waiting (an adversarial helper).
 */
static void test_arena_two_chunks_emptied(void **state)
{
	(void)state;
	struct slot_arena a;
	struct arena_free first = { .a = &a }, second = { .a = &a };
	uint32_t per = arena_of_four_chunks(&a);
	bool went;

	/* Chunks 1 and 2 but for one slot each, and one slot of chunk 3. */
	for (uint32_t i = per; i < 3 * per; i++)
		if (i != 2 * per - 1 && i != 3 * per - 1)
			slot_arena_free(&a, i);
	slot_arena_free(&a, 3 * per);
	first.idx = 2 * per - 1; /* chunk 1 goes: stopped there */
	thread_start_stopped(&first.t, arena_free_thread, &first, HOOK_ARENA_GIVING);
	assert_int_equal(slot_arena_alloc(&a), 3 * per); /* chunk 3 full again */
	second.idx = 3 * per - 1; /* chunk 2 emptied too */
	second_giving = second_done = false;
	__atomic_store_n(&bpfmap_test_hook, emptied_hook, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_create(&second.t, NULL, second_free_thread, &second), 0);
	while (!__atomic_load_n(&second_done, __ATOMIC_SEQ_CST) &&
	       !__atomic_load_n(&second_giving, __ATOMIC_SEQ_CST))
		usleep(100);
	went = __atomic_load_n(&second_giving, __ATOMIC_SEQ_CST);
	__atomic_store_n(&second_giving, false, __ATOMIC_SEQ_CST);
	pthread_join(second.t, NULL);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_SEQ_CST);
	if (went) {
		op_release();
		pthread_join(first.t, NULL);
		fail_msg("chunk 2 went while chunk 1's slots were going");
	}
	assert_int_equal(slot_arena_alloc(&a) >> a.chunk_shift, 2);
	op_release();
	pthread_join(first.t, NULL);
	slot_arena_destroy(&a);
}

/* test_arena_giving_insert_waits: an insert of ->key (value ->value,
 * the syscall layout) outside any section, and whether it began to wait
 * for slots on their way back (landing_hook). */
struct big_insert {
	struct bpfmap *m;
	uint64_t key;
	void *value;
	int ret; /* atomic: INT32_MIN until done */
};

static bool slots_landing;

static void landing_hook(enum test_hook_point point, const void *obj)
{
	if (point == HOOK_SLOTS_LANDING)
		__atomic_store_n(&slots_landing, true, __ATOMIC_SEQ_CST);
	else
		hook(point, obj);
}

static void *big_insert_thread(void *arg)
{
	struct big_insert *bi = arg;

	__atomic_store_n(&bi->ret, bpfmap_update_elem(bi->m, &bi->key, bi->value, BPFMAP_ANY),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A NO_PREALLOC PERCPU_HASH whose heap of slots has none free (taken here
 * through its arena, as elements deleted inside sections hold them) but a
 * chunk being given back: an insert outside any section must wait for it
 * and succeed, as inserts outside sections wait for slots.  Its eight
 * waits passed in microseconds (they waited for grace periods and
 * callbacks, not for the chunk) and it answered -ENOMEM (an adversarial
 * helper).
 */
static void test_arena_giving_insert_waits(void **state)
{
	(void)state;
	struct bpfmap *m = must_create(BPFMAP_TYPE_PERCPU_HASH, 8, 64, 64, BPFMAP_F_NO_PREALLOC);
	struct chain *c = to_chain(m);
	struct slot_arena *a = &c->pcpu_heap;
	struct arena_free f = { .a = a };
	struct big_insert bi = { .m = m, .key = 42, .ret = INT32_MIN };
	uint32_t per = 1u << a->chunk_shift;
	pthread_t t;

	assert_ptr_equal(m->ops->get_next_key, chain_get_next_key); /* the chained table */
	bi.value = calloc(bpfmap_num_possible_cpus(), 64);
	assert_non_null(bi.value);
	for (uint32_t i = 1; i <= a->cap; i++)
		assert_int_not_equal(slot_arena_alloc(a), 0);
	/* Chunk 1 and chunk 2 freed but for one slot, whose free gives
	 * chunk 2 back: stopped there; chunk 1 taken again. */
	for (uint32_t i = per; i < 3 * per - 1; i++)
		slot_arena_free(a, i);
	f.idx = 3 * per - 1;
	thread_start_stopped(&f.t, arena_free_thread, &f, HOOK_ARENA_GIVING);
	for (uint32_t i = 0; i < per; i++)
		assert_int_not_equal(slot_arena_alloc(a), 0);
	assert_int_equal(slot_arena_room(a), 0);
	slots_landing = false;
	__atomic_store_n(&bpfmap_test_hook, landing_hook, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_create(&t, NULL, big_insert_thread, &bi), 0);
	while (!__atomic_load_n(&slots_landing, __ATOMIC_SEQ_CST) &&
	       __atomic_load_n(&bi.ret, __ATOMIC_SEQ_CST) == INT32_MIN)
		usleep(100);
	assert_int_equal(__atomic_load_n(&bi.ret, __ATOMIC_SEQ_CST), INT32_MIN); /* waiting */
	op_release();
	pthread_join(f.t, NULL);
	pthread_join(t, NULL);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_SEQ_CST);
	assert_int_equal(bi.ret, 0);
	free(bi.value);
	bpfmap_free(m);
}

/*
 * The free that empties a chunk takes it off every list and gives its
 * pages back after dropping the arena's lock (tables/slot_arena.c).  Stopped
 * in between, other threads take a chunk's worth of slots and more, and
 * write them: none may come from the chunk going (its pages are zeroed
 * when the free goes on, which would wipe them), and after it, the chunk
 * is reused, zeroed, before any slot never used.
 */
static void test_arena_chunk_giving(void **state)
{
	(void)state;
	struct slot_arena a;
	struct arena_free f = { .a = &a };
	uint32_t per, x, fresh, *mine;

	assert_int_equal(slot_arena_init(&a, 1u << 16, 16, 0), 0);
	per = 1u << a.chunk_shift;
	mine = calloc(2 * per, sizeof(*mine));
	assert_non_null(mine);
	for (uint32_t i = 1; i < 4 * per; i++)
		assert_int_equal(slot_arena_alloc(&a), i);
	/* Chunk 1 emptied (kept: nothing else had room), chunk 2 but for x. */
	x = 2 * per;
	for (uint32_t i = per; i < 3 * per; i++)
		if (i != x)
			slot_arena_free(&a, i);
	f.idx = x;
	thread_start_stopped(&f.t, arena_free_thread, &f, HOOK_ARENA_GIVING);
	assert_ptr_equal(stop.obj, slot_arena_at(&a, x));
	/* Chunk 2 is going: chunk 1's slots, then fresh ones. */
	for (uint32_t i = 0; i < 2 * per; i++) {
		mine[i] = slot_arena_alloc(&a);
		assert_true(mine[i] && mine[i] >> a.chunk_shift != 2);
		memset(slot_arena_at(&a, mine[i]), 0x5a, a.stride);
	}
	op_release();
	pthread_join(f.t, NULL);
	assert_int_equal(a.released_n, 1);
	for (uint32_t i = 0; i < 2 * per; i++) {
		const unsigned char *p = (const unsigned char *)slot_arena_at(&a, mine[i]);

		for (uint32_t b = 0; b < a.stride; b++)
			assert_int_equal(p[b], 0x5a);
	}
	/* Then chunk 2 again, zeroed, before any slot never used. */
	fresh = a.fresh;
	for (uint32_t i = 0; i < per; i++) {
		uint32_t idx = slot_arena_alloc(&a);
		const unsigned char *p = (const unsigned char *)slot_arena_at(&a, idx);

		assert_int_equal(idx >> a.chunk_shift, 2);
		for (uint32_t b = 0; b < a.stride; b++)
			assert_int_equal(p[b], 0);
	}
	assert_int_equal(a.fresh, fresh);
	free(mine);
	slot_arena_destroy(&a);
}

/* ---- copy-outs that writers keep busy ---------------------------------------- */

/* Writes the hook makes before it lets a starved copy-out finish. */
#define STARVE_CAP 1000000

static struct {
	struct bpfmap *m;
	const uint64_t *key;
	uint64_t *value; /* the syscall view's value: its first word per CPU counts */
	uint32_t stride, cpus;
	pthread_t who;
	int writes;
	int armed;
} busy;

/* At every point where a copy-out is about to read a value, or has read it
 * and not yet checked it, the value is overwritten in place: every
 * optimistic round of the copy loses. */
static void busy_hook(enum test_hook_point point, const void *obj)
{
	(void)obj;
	if (point != HOOK_FLAT_COPY_MATCHED && point != HOOK_VALUE_COPYING &&
	    point != HOOK_CHAIN_COPY && point != HOOK_RTAB_COPY)
		return;
	if (!busy.armed || !pthread_equal(pthread_self(), busy.who))
		return;
	if (busy.writes == STARVE_CAP) {
		busy.armed = 0;
		return;
	}
	busy.writes++;
	for (uint32_t c = 0; c < busy.cpus; c++)
		busy.value[c * busy.stride / 8] = (uint64_t)busy.writes;
	if (bpfmap_update_elem(busy.m, busy.key, busy.value, BPFMAP_EXIST))
		busy.armed = 0; /* the copy then reads a value the test rejects */
}

static void check_copy_outlasts_writers(enum bpfmap_type type, uint32_t ks, uint32_t entries,
					uint32_t flags)
{
	bool pcpu = type == BPFMAP_TYPE_PERCPU_HASH || type == BPFMAP_TYPE_LRU_PERCPU_HASH;
	struct bpfmap *m = must_create(type, ks, 16, entries, flags);
	uint64_t key[2] = { 7, 0 }, other[2] = { 9, 0 };
	uint32_t cpus = pcpu ? (uint32_t)bpfmap_num_possible_cpus() : 1;
	uint64_t *v = calloc(cpus, 16), *out = calloc(cpus, 16);

	assert_non_null(v);
	assert_non_null(out);
	assert_int_equal(bpfmap_update_elem(m, other, v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(m, key, v, BPFMAP_NOEXIST), 0);
	busy = (typeof(busy)){ .m = m, .key = key, .value = v, .stride = 16, .cpus = cpus,
			       .who = pthread_self() };
	__atomic_store_n(&busy.armed, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(bpfmap_lookup_elem(m, key, out), 0);
	__atomic_store_n(&busy.armed, 0, __ATOMIC_SEQ_CST);
	print_message("type %d, %u-byte keys, %u entries, flags %u: %d writes\n", type, ks,
		      entries, flags, busy.writes);
	assert_true(busy.writes > 0); /* the hook was reached */
	assert_true(busy.writes < STARVE_CAP);
	for (uint32_t c = 0; c < cpus; c++) /* the last value written, whole */
		assert_int_equal(out[c * 2], busy.writes);
	free(v);
	free(out);
	bpfmap_free(m);
}

/*
 * A copy-out whose optimistic rounds all lose to in-place writes of its
 * value: one that only retried never ended (the hook stops writing after
 * STARVE_CAP writes, and the test fails).  It must take the writers' lock
 * once it has lost rounds for SEQ_READ_PATIENCE, and answer the last value
 * written.  Every table and copy-out path: word keys and long keys, flat
 * and chained (preallocated or not), per-CPU, LRU, RHASH.
 */
static void test_copy_outlasts_writers(void **state)
{
	(void)state;
	__atomic_store_n(&bpfmap_test_hook, busy_hook, __ATOMIC_RELEASE);
	check_copy_outlasts_writers(BPFMAP_TYPE_HASH, 4, 64, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_HASH, 8, 64, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_HASH, 16, HASH_FLAT_LONG_MIN_ENTRIES, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_HASH, 16, 64, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_HASH, 8, 64, BPFMAP_F_NO_PREALLOC);
	check_copy_outlasts_writers(BPFMAP_TYPE_HASH, 16, 64, BPFMAP_F_NO_PREALLOC);
	check_copy_outlasts_writers(BPFMAP_TYPE_PERCPU_HASH, 8, 64, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_PERCPU_HASH, 8, 64, BPFMAP_F_NO_PREALLOC);
	check_copy_outlasts_writers(BPFMAP_TYPE_LRU_HASH, 8, 64, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_LRU_HASH, 8, 64, BPFMAP_F_NO_COMMON_LRU);
	check_copy_outlasts_writers(BPFMAP_TYPE_LRU_PERCPU_HASH, 8, 64, 0);
	check_copy_outlasts_writers(BPFMAP_TYPE_RHASH, 8, 64, BPFMAP_F_NO_PREALLOC);
	check_copy_outlasts_writers(BPFMAP_TYPE_RHASH, 16, 64, BPFMAP_F_NO_PREALLOC);
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
}

/* ---- overwrites of one key and the other keys of its bucket ------------------- */

/* The first key after @after (16 bytes, the second word 0, or its first
 * 4 or 8) whose flat home is @home. */
static void key_at_home(const struct flat *f, uint32_t home, uint64_t after, uint64_t *key)
{
	for (uint64_t k = after + 1;; k++) {
		uint64_t w[2] = { k, 0 };

		if (flat_place_of(f, flat_hash(f, w)).home == home) {
			key[0] = k;
			key[1] = 0;
			return;
		}
	}
}

/* The map kinds that keep values over 8 bytes (or with a spin lock) in the
 * flat table: each overwrite writes inside the value's own version. */
struct versioned_kind {
	enum bpfmap_type type;
	uint32_t ks, vs, entries, flags;
	int32_t lock_off;
};

static const struct versioned_kind versioned_kinds[] = {
	{ BPFMAP_TYPE_HASH, 4, 16, 64, 0, -1 },
	{ BPFMAP_TYPE_HASH, 8, 16, 64, 0, -1 },
	{ BPFMAP_TYPE_HASH, 8, 16, 64, 0, 8 }, /* a spin lock */
	{ BPFMAP_TYPE_HASH, 16, 16, HASH_FLAT_LONG_MIN_ENTRIES, 0, -1 },
	{ BPFMAP_TYPE_HASH, 8, 256, 64, 0, -1 }, /* values in elements */
	{ BPFMAP_TYPE_LRU_HASH, 8, 16, 64, 0, -1 },
	{ BPFMAP_TYPE_PERCPU_HASH, 8, 16, 64, 0, -1 },
};

static struct bpfmap *versioned_map(const struct versioned_kind *k)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = k->flags, .lock_off = k->lock_off);
	struct bpfmap *m = bpfmap_create(k->type, "versioned", k->ks, k->vs, k->entries, &opts);

	assert_non_null(m);
	return m;
}

/* A value of map @m for key word @k, version @ver: every 8-byte word
 * (the spin lock's aside, which the map keeps) k << 32 | ver. */
static void versioned_value(const struct bpfmap *m, uint64_t k, uint32_t ver, uint64_t *v)
{
	uint32_t words = (m)->value_size / 8;

	for (uint32_t i = 0; i < words; i++)
		v[i] = k << 32 | ver;
}

static bool versioned_value_ok(const struct bpfmap *m, int32_t lock_off, uint64_t k,
			       uint32_t ver, const uint64_t *v)
{
	uint32_t words = (m)->value_size / 8;

	for (uint32_t i = 0; i < words; i++)
		if (!(lock_off >= 0 && i == (uint32_t)lock_off / 8) && v[i] != (k << 32 | ver))
			return false;
	return true;
}

/*
 * A copy-out of key B while key A, in B's home bucket, is overwritten
 * during each of its rounds: the first round stands, since B's value did
 * not change.  When overwrites wrote inside the bucket's seq, every round
 * lost, until the copy-out gave up after SEQ_READ_PATIENCE and took the
 * home's lock: a writer of one key cut the copy-outs of the seven others
 * by 100x (4 KiB values).
 */
static void test_copy_beside_neighbour_writes(void **state)
{
	(void)state;
	__atomic_store_n(&bpfmap_test_hook, busy_hook, __ATOMIC_RELEASE);
	for (size_t i = 0; i < sizeof(versioned_kinds) / sizeof(versioned_kinds[0]); i++) {
		const struct versioned_kind *k = &versioned_kinds[i];
		struct bpfmap *m = versioned_map(k);
		const struct flat *f = to_flat(m);
		uint64_t b[2] = { 7, 0 }, a[2];
		uint64_t *v = calloc(1, (m)->value_size);
		uint64_t *out = calloc(1, (m)->value_size);

		assert_non_null(v);
		assert_non_null(out);
		key_at_home(f, flat_place_of(f, flat_hash(f, b)).home, b[0], a);
		versioned_value(m, a[0], 0, v);
		assert_int_equal(bpfmap_update_elem(m, a, v, BPFMAP_NOEXIST), 0);
		versioned_value(m, b[0], 1, v);
		assert_int_equal(bpfmap_update_elem(m, b, v, BPFMAP_NOEXIST), 0);
		/* busy_hook's writes, of A: its first word per CPU slot. */
		busy = (typeof(busy)){ .m = m, .key = a, .value = v, .who = pthread_self(),
				       .stride = (k->vs + 7) / 8 * 8,
				       .cpus = m->value_size / ((k->vs + 7) / 8 * 8) };
		__atomic_store_n(&busy.armed, 1, __ATOMIC_SEQ_CST);
		assert_int_equal(bpfmap_lookup_elem(m, b, out), 0);
		__atomic_store_n(&busy.armed, 0, __ATOMIC_SEQ_CST);
		print_message("type %d, k%u v%u: %d writes of the neighbour\n", k->type, k->ks,
			      k->vs, busy.writes);
		assert_int_equal(busy.writes, 1);
		assert_true(versioned_value_ok(m, k->lock_off, b[0], 1, out));
		assert_int_equal(bpfmap_lookup_elem(m, a, out), 0);
		assert_int_equal(out[0], 1); /* A: the hook's one write */
		free(v);
		free(out);
		bpfmap_free(m);
	}
	__atomic_store_n(&bpfmap_test_hook, hook, __ATOMIC_RELEASE);
}

/* What a reader did while a writer stood inside its overwrite of key A. */
struct beside_stopped {
	struct bpfmap *m;
	int32_t lock_off;
	uint64_t b[2], c[2]; /* present, absent: both of A's home */
	int ret;	     /* atomic: INT32_MIN until done; then 0, or the failed step */
};

static void *read_beside_stopped(void *arg)
{
	struct beside_stopped *r = arg;
	uint64_t *out = calloc(1, (r->m)->value_size), key[2], next[2];
	int ret = 0, walked = 0;
	void *p;

	if (!out)
		abort();
	if (bpfmap_lookup_elem(r->m, r->b, out) ||
	    !versioned_value_ok(r->m, r->lock_off, r->b[0], 1, out))
		ret = 1;
	bpfmap_read_lock();
	p = bpfmap_lookup(r->m, r->b);
	if (!ret && !p)
		ret = 2;
	p = bpfmap_lookup(r->m, r->c);
	if (!ret && p)
		ret = 3;
	bpfmap_read_unlock();
	if (!ret && bpfmap_lookup_elem(r->m, r->c, out) != -ENOENT)
		ret = 4;
	for (int e = bpfmap_get_next_key(r->m, NULL, key); !e;
	     e = bpfmap_get_next_key(r->m, key, next), memcpy(key, next, sizeof(key)))
		walked++;
	if (!ret && walked != 2)
		ret = 5;
	free(out);
	__atomic_store_n(&r->ret, ret, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *overwrite_a(void *arg)
{
	struct op *o = arg;
	uint64_t *v = calloc(1, (o->m)->value_size);

	if (!v)
		abort();
	versioned_value(o->m, o->key, 1, v);
	__atomic_store_n(&o->ret, bpfmap_update_elem(o->m, &o->key, v, BPFMAP_EXIST),
			 __ATOMIC_SEQ_CST);
	free(v);
	return NULL;
}

/*
 * A writer stopped inside its overwrite of key A (its value's version odd,
 * its home locked), as a preempted thread is: another thread's copy-out
 * and program-view lookup of key B of the same bucket, a lookup of an
 * absent key of that home, and a get_next_key walk all answer at once.
 * When overwrites wrote inside the bucket's seq, each of them waited for
 * the writer to go on (a 2 ms pause of the writer held a reader of long
 * keys for 2 ms); the copy-out then took the home's lock, held by the
 * writer, and waited for it in the end.
 */
static void test_reads_beside_stopped_overwrite(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(versioned_kinds) / sizeof(versioned_kinds[0]); i++) {
		const struct versioned_kind *k = &versioned_kinds[i];
		struct bpfmap *m = versioned_map(k);
		const struct flat *f = to_flat(m);
		struct beside_stopped r = { .m = m, .lock_off = k->lock_off, .b = { 7, 0 },
					    .ret = INT32_MIN };
		uint64_t a[2], *v = calloc(1, (m)->value_size);
		uint32_t home = flat_place_of(f, flat_hash(f, r.b)).home;
		struct op w = { .m = m };
		pthread_t reader;
		int ret = INT32_MIN;

		assert_non_null(v);
		key_at_home(f, home, r.b[0], a);
		key_at_home(f, home, a[0], r.c); /* a[0] > r.b[0] */
		versioned_value(m, a[0], 0, v);
		assert_int_equal(bpfmap_update_elem(m, a, v, BPFMAP_NOEXIST), 0);
		versioned_value(m, r.b[0], 1, v);
		assert_int_equal(bpfmap_update_elem(m, r.b, v, BPFMAP_NOEXIST), 0);

		w.key = a[0];
		w.ret = INT32_MIN;
		thread_start_stopped(&w.t, overwrite_a, &w, HOOK_VALUE_WRITING);

		assert_int_equal(pthread_create(&reader, NULL, read_beside_stopped, &r), 0);
		for (int ms = 0; ms < 5000 && ret == INT32_MIN; ms++) {
			ret = __atomic_load_n(&r.ret, __ATOMIC_SEQ_CST);
			usleep(1000);
		}
		op_release();
		pthread_join(reader, NULL);
		assert_int_equal(op_join(&w), 0);
		print_message("type %d, k%u v%u: the reader answered %d beside the stopped writer\n",
			      k->type, k->ks, k->vs, ret);
		assert_int_equal(ret, 0); /* INT32_MIN: it waited for the writer */
		assert_int_equal(bpfmap_lookup_elem(m, a, v), 0);
		assert_true(versioned_value_ok(m, k->lock_off, a[0], 1, v));
		free(v);
		bpfmap_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_delete_seen_then_insert, setup_hook),
		cmocka_unit_test_setup(test_insert_in_flight, setup_hook),
		cmocka_unit_test_setup(test_credits_in_flight, setup_hook),
		cmocka_unit_test_setup(test_exhausted_after_delete, setup_hook),
		cmocka_unit_test_setup(test_lock_word_counts, setup_hook),
		cmocka_unit_test_setup(test_probe_full_not_fooled, setup_hook),
		cmocka_unit_test_setup(test_chain_walk_diverted, setup_hook),
		cmocka_unit_test_setup(test_dead_word_hit, setup_hook),
		cmocka_unit_test_setup(test_walk_diverted, setup_hook),
		cmocka_unit_test_setup(test_walk_beside_relink, setup_hook),
		cmocka_unit_test_setup(test_chain_copy_reused, setup_hook),
		cmocka_unit_test_setup(test_chain_copy_walk_diverted, setup_hook),
		cmocka_unit_test_setup(test_chain_copy_deep, setup_hook),
		cmocka_unit_test_setup(test_chain_lru_walk_diverted, setup_hook),
		cmocka_unit_test_setup(test_chain_reuse_walk_diverted, setup_hook),
		cmocka_unit_test_setup(test_chain_reuse_waits_store, setup_hook),
		cmocka_unit_test_setup(test_chain_take_waits_store, setup_hook),
		cmocka_unit_test_setup(test_chain_reuse_value_first, setup_hook),
		cmocka_unit_test_setup(test_chain_reuse_keeps_lock, setup_hook),
		cmocka_unit_test_setup(test_chain_reuse_flock_copy, setup_hook),
		cmocka_unit_test_setup(test_rhash_slot_reused, setup_hook),
		cmocka_unit_test_setup(test_rhash_slot_refilled_other_key, setup_hook),
		cmocka_unit_test_setup(test_rhash_group_reused, setup_hook),
		cmocka_unit_test_setup(test_rhash_group_moved, setup_hook),
		cmocka_unit_test_setup(test_rhash_walk_holds_nothing, setup_hook),
		cmocka_unit_test_setup(test_rhash_walk_step_locks_at_last, setup_hook),
		cmocka_unit_test_setup(test_rhash_copy_overwritten, setup_hook),
		cmocka_unit_test_setup(test_rhash_copy_then_gone, setup_hook),
		cmocka_unit_test_setup(test_rhash_short_value_whole, setup_hook),
		cmocka_unit_test_setup(test_rhash_bare_stale_table, setup_hook),
		cmocka_unit_test_setup(test_rhash_bare_store_stale_table, setup_hook),
		cmocka_unit_test_setup(test_rhash_window_holds_element, setup_hook),
		cmocka_unit_test(test_rhash_flock_store_moves_word),
		cmocka_unit_test(test_rhash_store_waits_value_lock),
		cmocka_unit_test(test_value_lock_waits_alone),
		cmocka_unit_test(test_flock_take_waits_alone),
		cmocka_unit_test(test_flock_batch_waits_alone),
		cmocka_unit_test(test_value_lock_waits_outside),
		cmocka_unit_test_setup(test_flock_hold_across_reuse, setup_hook),
		cmocka_unit_test_setup(test_flush_leaves_reusable, setup_hook),
		cmocka_unit_test_setup(test_rhash_store_then_take, setup_hook),
		cmocka_unit_test_setup(test_lru_victim_replaced, setup_hook),
		cmocka_unit_test_setup(test_lru_key_came_meanwhile, setup_hook),
		cmocka_unit_test_setup(test_lru_room_made_meanwhile, setup_hook),
		cmocka_unit_test_setup(test_chain_lru_room_made_meanwhile, setup_hook),
		cmocka_unit_test_setup(test_percpu_lists_room_made_meanwhile, setup_hook),
		cmocka_unit_test_setup(test_percpu_lists_over_cap, setup_hook),
		cmocka_unit_test_setup(test_percpu_add_before_take, setup_hook),
		cmocka_unit_test_setup(test_lru_delete_then_reuse, setup_hook),
		cmocka_unit_test_setup(test_flat_copy_home_refilled, setup_hook),
		cmocka_unit_test_setup(test_copy_into_key, setup_hook),
		cmocka_unit_test_setup(test_copy_into_long_key, setup_hook),
		cmocka_unit_test_setup(test_take_into_key, setup_hook),
		cmocka_unit_test_setup(test_arena_chunk_giving, setup_hook),
		cmocka_unit_test_setup(test_arena_room_while_giving, setup_hook),
		cmocka_unit_test_setup(test_arena_room_while_giving_bumped, setup_hook),
		cmocka_unit_test_setup(test_arena_two_chunks_emptied, setup_hook),
		cmocka_unit_test_setup(test_arena_giving_insert_waits, setup_hook),
		cmocka_unit_test_setup(test_copy_outlasts_writers, setup_hook),
		cmocka_unit_test_setup(test_copy_beside_neighbour_writes, setup_hook),
		cmocka_unit_test_setup(test_reads_beside_stopped_overwrite, setup_hook),
		cmocka_unit_test_setup(test_bare_lookup_holds_free, setup_hook),
		cmocka_unit_test_setup(test_insert_awaits_release, setup_hook),
	};

	if (test_chain_forced())
		return test_chain_forced_skipped("the flat table's races (the chained table's "
						 "cases here run in every stage)");
	return run_test_group(tests);
}
