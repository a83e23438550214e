/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The resizable table's resizes: when to start one, and the moving of runs
 * of buckets from a table into its next, shared out among the inserts and
 * deletes that come by (tables/rtab.h has the invariants).
 *
 * A table grows to twice its buckets above RTAB_GROW_LOAD elements a bucket
 * and shrinks to half below a quarter of that, so that a shrink lands at
 * half the grow point, away from the next grow.  Each insert or delete that
 * finds a resize in progress moves RTAB_HELP_RUNS runs of eight buckets: a
 * resize of n buckets is done after n / 32 of them, long before the count
 * asks for the next one.
 */
#include "tables/rtab.h"

#define RTAB_HELP_RUNS 4
/* Inserts and deletes per thread between two looks at the element count
 * (a look sums the count's shards). */
#define RTAB_CHECK_EVERY 16

static __thread uint32_t rtab_tick;

/* Old bucket @g's slots into the new table @nt, each by its hash: false if
 * an overflow group could not be had. */
static bool rtab_move_slots(struct rtab *r, struct rtab_group *g, struct rtab_table *nt,
			    struct rtab_spare *spare)
{
	for (; g; g = g->next == RTAB_NONE ? NULL : rtab_ogroup(r, g->next)) {
		for (int i = 0; i < RTAB_SLOTS; i++) {
			uint32_t link = __atomic_load_n(&g->link[i], __ATOMIC_RELAXED);

			if (link != RTAB_NONE &&
			    !rtab_add_locked(r, &nt->groups[rtab_bucket(nt, g->hash[i])], g->hash[i],
					     link, spare))
				return false;
		}
	}
	return true;
}

/* New buckets [first, first + n) of @nt back to empty, their overflow
 * groups freed (nobody has reached them; this runs only when the arena
 * ran dry). */
static void rtab_unbuild(struct rtab *r, struct rtab_table *nt, uint32_t first, uint32_t n)
{
	for (uint32_t b = first; b < first + n; b++) {
		rtab_free_ogroups(r, nt->groups[b].next);
		memset(&nt->groups[b], 0, sizeof(nt->groups[b]));
	}
}

/*
 * What a run's move would otherwise do while the readers of its buckets
 * wait for it, done before it locks them: fault in its new buckets (a
 * fresh table's first store to a huge page clears 2 MiB) and take the
 * overflow groups it may need (the arena may fault pages in, or populate
 * a run of them, for those).  A grow splits an old bucket's keys in two
 * buckets, whose full chains need no more overflow groups than it had; a
 * shrink merges two old buckets, one more at most.  Counted without the
 * locks, so a chain that grows meanwhile takes what it lacks under them;
 * and a chain walked as a delete frees its groups may end in the free
 * list, hence the bound.
 */
static void rtab_move_prepare(struct rtab *r, struct rtab_table *t, struct rtab_table *nt,
			      uint32_t first, uint32_t nfirst, uint32_t nn,
			      struct rtab_spare *spare)
{
	uint32_t want = nt->n > t->n ? 0 : nn;

	for (uint32_t b = nfirst; b < nfirst + nn; b++)
		__atomic_store_n(&nt->groups[b].lock, 0, __ATOMIC_RELAXED);
	for (uint32_t b = first; b < first + RTAB_RUN && want < RTAB_SPARE_GROUPS; b++) {
		uint32_t og = __atomic_load_n(&t->groups[b].next, __ATOMIC_RELAXED);

		for (; og != RTAB_NONE && og != RTAB_MOVED && want < RTAB_SPARE_GROUPS; want++)
			og = __atomic_load_n(&rtab_ogroup(r, og)->next, __ATOMIC_RELAXED);
	}
	while (spare->n < want) {
		uint32_t og = rtab_ogroup_alloc(r);

		if (og == RTAB_NONE)
			break;
		spare->og[spare->n++] = og;
	}
}

/*
 * Move run @run of @t into @nt: lock its buckets, build their new buckets,
 * then mark each old one moved, unlock, and free the old overflow groups
 * (a reader still in one fails its bucket's lock-word check:
 * rtab_ogroup_free).  A reader in an old bucket before the mark sees its
 * old slots, consistent and current: writers reach the new buckets only
 * after the mark.  False, with nothing changed, when the overflow arena
 * ran dry.
 */
static bool rtab_move_run(struct rtab *r, struct rtab_table *t, struct rtab_table *nt,
			  uint32_t run)
{
	uint32_t first = run << RTAB_RUN_SHIFT;
	uint32_t nfirst = nt->n > t->n ? first * 2 : first / 2;
	uint32_t nn = nt->n > t->n ? RTAB_RUN * 2 : RTAB_RUN / 2;
	uint32_t old[RTAB_RUN];
	struct rtab_spare spare = { 0 };
	bool ok = true;

	rtab_move_prepare(r, t, nt, first, nfirst, nn, &spare);
	for (uint32_t b = first; b < first + RTAB_RUN; b++)
		seq_spin_lock(&t->groups[b].lock);
	TEST_HOOK(HOOK_RTAB_RUN_LOCKED, r);
	rtab_bare_publish(); /* the run's writes come after the resize's start */
	for (uint32_t b = first; ok && b < first + RTAB_RUN; b++)
		ok = rtab_move_slots(r, &t->groups[b], nt, &spare);
	if (!ok) {
		rtab_unbuild(r, nt, nfirst, nn);
	} else {
		for (uint32_t b = first; b < first + RTAB_RUN; b++) {
			struct rtab_group *g = &t->groups[b];

			old[b - first] = g->next;
			__atomic_store_n(&g->next, RTAB_MOVED, __ATOMIC_RELEASE);
		}
	}
	TEST_HOOK(HOOK_RTAB_RUN_UNLOCKING, r);
	for (uint32_t b = first; b < first + RTAB_RUN; b++)
		seq_spin_unlock(&t->groups[b].lock);
	for (uint32_t b = 0; ok && b < RTAB_RUN; b++)
		rtab_free_ogroups(r, old[b]);
	while (spare.n)
		rtab_ogroup_free(r, spare.og[--spare.n]);
	return ok;
}

/* The last run moved: @nt becomes the map's table, and @t goes once no
 * reader can be in it. */
static void rtab_finish(struct rtab *r, struct rtab_table *t, struct rtab_table *nt)
{
	__atomic_store_n(&r->table, rtab_table_word(nt), __ATOMIC_RELEASE);
	__atomic_fetch_add(&r->gen, 1, __ATOMIC_RELEASE); /* even: no resize */
	rtab_table_retire(r, t);
}

/* A run nobody has taken: the next after the movers' cursor, else (runs
 * given back by a mover that ran dry) any; or UINT32_MAX. */
static uint32_t rtab_claim_run(struct rtab_table *t, uint32_t runs)
{
	uint8_t idle = RTAB_RUN_IDLE;
	uint32_t c = __atomic_fetch_add(&t->claimed, 1, __ATOMIC_RELAXED);

	if (c < runs && __atomic_compare_exchange_n(&t->runs[c], &idle, RTAB_RUN_BUSY, false,
						    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return c;
	if (c < runs)
		return UINT32_MAX;
	for (uint32_t i = 0; i < runs; i++) {
		idle = RTAB_RUN_IDLE;
		if (__atomic_load_n(&t->runs[i], __ATOMIC_RELAXED) == RTAB_RUN_IDLE &&
		    __atomic_compare_exchange_n(&t->runs[i], &idle, RTAB_RUN_BUSY, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return i;
	}
	return UINT32_MAX;
}

static void rtab_resize_help(struct rtab *r, struct rtab_table *t, struct rtab_table *nt)
{
	uint32_t runs = t->n >> RTAB_RUN_SHIFT;

	for (int i = 0; i < RTAB_HELP_RUNS; i++) {
		uint32_t run = rtab_claim_run(t, runs);

		if (run == UINT32_MAX)
			return;
		if (!rtab_move_run(r, t, nt, run)) {
			/* Another insert or delete takes it up later. */
			__atomic_store_n(&t->runs[run], RTAB_RUN_IDLE, __ATOMIC_RELEASE);
			return;
		}
		__atomic_store_n(&t->runs[run], RTAB_RUN_DONE, __ATOMIC_RELEASE);
		if (__atomic_add_fetch(&t->moved, 1, __ATOMIC_ACQ_REL) == runs) {
			rtab_finish(r, t, nt);
			return;
		}
	}
}

/* A table of 2^@bits buckets to move @t into, unless another thread has
 * started a resize or finished one meanwhile.  Without memory the table
 * keeps its size: fuller buckets, nothing lost. */
static void rtab_resize_start(struct rtab *r, struct rtab_table *t, uint32_t bits)
{
	uint32_t idle = 0;
	struct rtab_table *nt;

	if (!__atomic_compare_exchange_n(&r->resize_lock, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (rtab_table_of(r) == t && !__atomic_load_n(&t->next, __ATOMIC_ACQUIRE)) {
		nt = rtab_table_alloc(r, bits);
		if (nt) {
			/* Odd until rtab_finish: probes outside read-side
			 * sections go into one (rtab_bare_find). */
			__atomic_fetch_add(&r->gen, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&t->next, nt, __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&r->resize_lock, 0, __ATOMIC_RELEASE);
}

void rtab_resize_check(struct rtab *r, bool crowded)
{
	struct rtab_table *t = rtab_table_of(r);
	struct rtab_table *nt = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	uint32_t bits;
	uint64_t n;

	if (nt) {
		rtab_resize_help(r, t, nt);
		return;
	}
	if (!crowded && ++rtab_tick % RTAB_CHECK_EVERY)
		return;
	bits = 32 - t->shift;
	n = count_elements(&r->count);
	if (n > (uint64_t)t->n * RTAB_GROW_LOAD && bits < r->max_bits)
		rtab_resize_start(r, t, bits + 1);
	else if (n < (uint64_t)t->n * RTAB_GROW_LOAD / 4 && bits > r->min_bits)
		rtab_resize_start(r, t, bits - 1);
	else
		return;
	nt = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	if (nt)
		rtab_resize_help(r, t, nt);
}
