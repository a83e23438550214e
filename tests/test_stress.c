/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Concurrency torture test for BPFMAP_TYPE_HASH, and the other map types.
 *
 * NTHREADS threads (more than the cores we expect) hammer two small maps for a
 * bounded time with every operation of the public API mixed at random:
 * copy-out lookups (plain and BPFMAP_F_LOCK), updates (ANY / NOEXIST / EXIST,
 * with and without BPFMAP_F_LOCK), deletes, lookup_and_delete, get_next_key
 * walks, the four batch operations, and the program view (bpfmap_lookup()
 * inside bpfmap_read_lock() with an atomic counter increment, then a read of
 * the value, under the value's spin lock when the map has one).
 *
 *  - map "A" (churn): key space larger than max_entries, so it is often full
 *    (-E2BIG) and keys come and go all the time;
 *  - map "B" (counters): the first B_CTRS keys are never deleted nor
 *    overwritten; threads increment their counter word through the program
 *    view while other keys of the same map churn around them.  Their totals
 *    must add up exactly.
 *
 * Values validate themselves: {key copy, writer, sequence, payload derived
 * from those, checksum}.  A torn value, a value of another key, a value nobody
 * wrote (or not yet), or a copied-out spin lock word is caught.  Return codes
 * and errno must be among the documented ones.  After the threads stop, the
 * maps are checked at rest (walk vs batch, lookups, capacity, mem_usage), then
 * drained, refilled to exactly max_entries, and drained again.
 *
 * The same run on the other map types, with their own rules:
 *  - RHASH: batch passes never answer -ENOSPC and their cursor is key_size
 *    bytes; one configuration is large enough to grow and shrink while the
 *    threads run (and deletes bursts of keys to make it shrink);
 *  - LRU_HASH: inserts evict instead of failing (-E2BIG is a failure), and
 *    map B has room for all its keys, so its counter keys must never be
 *    evicted (a map with room never evicts); a refill past max_entries
 *    evicts one key;
 *  - PERCPU_HASH and LRU_PERCPU_HASH: a syscall-view value is every
 *    CPU's slot; writers put the same value in each, so a copy must show
 *    every slot from one update, each checked as above; program-view
 *    increments go to the calling CPU's slot, and the counters are the
 *    slots' sums.
 *
 * Runs each configuration for BPFMAP_STRESS_SECONDS (default 2.5) seconds.
 * Then two linearizability tests of the lock-free update decisions (below),
 * half as long each, on preallocated and NO_PREALLOC maps, and two of the
 * chained table's section-free copy-outs under reuse, as long.
 * Worker threads never call cmocka (it is not thread-safe): they count
 * failures, print the first few, and the main thread asserts at the end.
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "tables/flat.h" /* flat_ops: which table a map got */
#include "tables/rtab.h" /* the resizes a resizing run made */

#define NTHREADS 6
#define DEFAULT_SECONDS 2.5

/* Map A: churn. */
#define A_MAX 48
#define A_KEYS 80
/* Map B: counters [0, B_CTRS) plus churn keys [B_CTRS, B_KEYS). */
#define B_MAX 16
#define B_CTRS 4
#define B_KEYS 24

/* RHASH's large configuration: enough keys for its table to resize. */
#define BIG_MAX 6000
#define BIG_KEYS 9000
#define BIG_BURST_EVERY 8000 /* thread 0's ops between its bursts of deletes */

#define MAX_KEYS BIG_KEYS
#define KEYS_CAP BIG_MAX  /* >= every max_entries: the workers' key and value arrays */
#define BATCH_CAP A_MAX /* >= the elements of a batch unit (HASH, LRU_HASH) */
#define CURSOR_WORDS 2  /* a batch cursor: 4 bytes, or RHASH's key_size (8) */
#define MAX_FAIL_MSGS 20

#define INIT_WRITER 0xffffu           /* values stored by the main thread */
#define LOCK_OFF 4                    /* offsetof(struct sval, lock) */
#define LOCK_PATTERN 0x5a5a5a5au      /* what writers put in the lock field */
#define NPAYLOAD 5

struct skey {
	uint32_t id;
	uint32_t tag; /* derived from id and the map: detects foreign keys */
};

struct sval {
	uint32_t key_id;
	struct bpfmap_spin_lock lock; /* a plain data word on maps without a lock */
	uint64_t counter;             /* program-view atomics; not checksummed */
	uint32_t writer;              /* thread index, or INIT_WRITER */
	uint32_t key_tag;
	uint64_t seq;                 /* writer's sequence number, from 1 */
	uint64_t payload[NPAYLOAD];   /* f(key, writer, seq, i) */
	uint64_t csum;                /* over everything but lock and counter */
};

_Static_assert(offsetof(struct sval, lock) == LOCK_OFF, "lock offset");
_Static_assert(sizeof(struct sval) % 8 == 0, "value is whole words");
_Static_assert(sizeof(struct skey) == 8, "key has no padding");

enum op {
	OP_LOOKUP,
	OP_LOOKUP_LOCK,
	OP_UPDATE_ANY,
	OP_UPDATE_NOEXIST,
	OP_UPDATE_EXIST,
	OP_DELETE,
	OP_LOOKUP_DELETE,
	OP_WALK,
	OP_LOOKUP_BATCH,
	OP_LOOKUP_DELETE_BATCH,
	OP_UPDATE_BATCH,
	OP_DELETE_BATCH,
	OP_PROG,
	NOPS_RANDOM, /* ops below are not drawn from the weight table */
	OP_PROG_COUNTER = NOPS_RANDOM,
	OP_UPDATE_F_LOCK, /* counted in addition to OP_UPDATE_* / OP_UPDATE_BATCH */
	NOPS
};

static const char *const op_names[NOPS] = {
	[OP_LOOKUP] = "lookup",
	[OP_LOOKUP_LOCK] = "lookup_flock",
	[OP_UPDATE_ANY] = "upd_any",
	[OP_UPDATE_NOEXIST] = "upd_noexist",
	[OP_UPDATE_EXIST] = "upd_exist",
	[OP_DELETE] = "delete",
	[OP_LOOKUP_DELETE] = "lookup_del",
	[OP_WALK] = "next_key_walk",
	[OP_LOOKUP_BATCH] = "lookup_batch",
	[OP_LOOKUP_DELETE_BATCH] = "lookup_del_batch",
	[OP_UPDATE_BATCH] = "update_batch",
	[OP_DELETE_BATCH] = "delete_batch",
	[OP_PROG] = "prog_lookup",
	[OP_PROG_COUNTER] = "prog_counter",
	[OP_UPDATE_F_LOCK] = "(upd_flock)",
};

/* Relative frequencies; inserts outweigh deletes so map A is often full. */
static const unsigned op_weights[NOPS_RANDOM] = {
	[OP_LOOKUP] = 14,
	[OP_LOOKUP_LOCK] = 8,
	[OP_UPDATE_ANY] = 12,
	[OP_UPDATE_NOEXIST] = 10,
	[OP_UPDATE_EXIST] = 8,
	[OP_DELETE] = 5,
	[OP_LOOKUP_DELETE] = 4,
	[OP_WALK] = 2,
	[OP_LOOKUP_BATCH] = 2,
	[OP_LOOKUP_DELETE_BATCH] = 1,
	[OP_UPDATE_BATCH] = 3,
	[OP_DELETE_BATCH] = 2,
	[OP_PROG] = 12,
};

struct stats {
	uint64_t calls[NOPS];
	uint64_t ok[NOPS];
	uint64_t e2big, enomem, batch_elems;
};

struct target {
	struct bpfmap *map;
	const char *name;
	uint32_t max_entries;
	uint32_t nkeys;
	uint32_t nctr;  /* keys [0, nctr) are never deleted nor overwritten */
	uint32_t salt;
	size_t mem0;    /* bpfmap_mem_usage() of the fresh, empty map */
};

struct config {
	const char *name;
	uint32_t type; /* enum bpfmap_type */
	uint32_t map_flags;
	bool lock;
	bool big; /* map A of BIG_MAX entries and BIG_KEYS keys, with bursts of deletes */
	/* The chained table (BPFMAP_TABLE=chain at create), which a HASH of
	 * these 8-byte keys would not get: the default for longer keys in
	 * maps of fewer than 16384 entries (a 5-tuple flow table). */
	bool chain;
};

struct run {
	const struct config *cfg;
	uint32_t slots; /* a value's slots in the syscall view: the CPUs of a per-CPU map, else 1 */
	struct target a, b;
	int stop;                    /* atomic */
	uint64_t failures;           /* atomic */
	uint64_t pub_seq[NTHREADS + 1]; /* atomic: highest sequence each writer used
					 * (index NTHREADS: the main thread) */
};

struct worker {
	struct run *r;
	unsigned id;                 /* NTHREADS for the main thread */
	uint64_t rng;
	uint64_t seq;
	struct stats st;
	uint64_t ctr_incs[B_CTRS];   /* increments this thread made */
	uint64_t ctr_seen[B_CTRS];   /* highest counter value this thread read */
	struct skey keys[KEYS_CAP];
	struct sval *vals; /* BATCH_CAP values of r->slots slots each */
	struct sval *one;  /* one value of r->slots slots */
	pthread_t thread;
};

static double stress_seconds = DEFAULT_SECONDS;

/* ---- helpers ------------------------------------------------------------ */

static void failf(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(struct worker *w, const char *fmt, ...)
{
	uint64_t n = __atomic_fetch_add(&w->r->failures, 1, __ATOMIC_RELAXED);
	char buf[512];
	va_list ap;

	if (n >= MAX_FAIL_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "FAIL [%s, thread %u]: %s\n", w->r->cfg->name, w->id, buf);
}

static uint64_t rnd(struct worker *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static struct skey make_key(const struct target *t, uint32_t id)
{
	return (struct skey){ .id = id, .tag = (id * 0x9e3779b1u) ^ t->salt };
}

static uint64_t payload_word(uint32_t id, uint32_t writer, uint64_t seq, unsigned i)
{
	return mix64(((uint64_t)id << 32 | writer) ^ mix64(seq * NPAYLOAD + i));
}

static uint64_t value_csum(const struct sval *v)
{
	uint64_t h = mix64((uint64_t)v->key_tag << 32 | v->key_id);

	h = mix64(h ^ v->writer);
	h = mix64(h ^ v->seq);
	for (unsigned i = 0; i < NPAYLOAD; i++)
		h = mix64(h ^ v->payload[i]);
	return h;
}

static void fill_value(struct sval *v, const struct skey *k, uint32_t writer, uint64_t seq)
{
	memset(v, 0, sizeof(*v));
	v->key_id = k->id;
	v->key_tag = k->tag;
	v->lock.val = LOCK_PATTERN; /* a locked map must never copy this */
	v->counter = seq;
	v->writer = writer;
	v->seq = seq;
	for (unsigned i = 0; i < NPAYLOAD; i++)
		v->payload[i] = payload_word(k->id, writer, seq, i);
	v->csum = value_csum(v);
}

/* A fresh value for key k written by w; its sequence is published first, so
 * any reader that sees the value also sees pub_seq >= its sequence. */
static void make_value(struct worker *w, const struct skey *k, struct sval *v)
{
	uint64_t s = ++w->seq;

	__atomic_store_n(&w->r->pub_seq[w->id], s, __ATOMIC_RELEASE);
	fill_value(v, k, w->id, s);
	for (uint32_t j = 1; j < w->r->slots; j++) /* every CPU's slot the same */
		v[j] = v[0];
}

/* An initial value (of the counter keys) in every slot. */
static void fill_init(const struct run *r, struct sval *v, const struct skey *k)
{
	for (uint32_t j = 0; j < r->slots; j++)
		fill_value(&v[j], k, INIT_WRITER, 0);
}

/* The counter of a value: its slots' sum (a per-CPU value's program-view
 * increments land in whichever CPU's slot). */
static uint64_t counter_sum(const struct sval *v, uint32_t slots)
{
	uint64_t c = 0;

	for (uint32_t j = 0; j < slots; j++)
		c += v[j].counter;
	return c;
}

/* Value i of w's batch buffer. */
static struct sval *wval(struct worker *w, uint32_t i)
{
	return &w->vals[(size_t)i * w->r->slots];
}

static uint32_t pick_key(struct worker *w, const struct target *t, bool destructive)
{
	if (destructive)
		return t->nctr + (uint32_t)(rnd(w) % (t->nkeys - t->nctr));
	return (uint32_t)(rnd(w) % t->nkeys);
}

/* A key handed out by the map: one we could have stored in this map. */
static bool check_key(struct worker *w, const struct target *t, const struct skey *k,
		      const char *what)
{
	struct skey want;

	if (k->id >= t->nkeys) {
		failf(w, "%s on %s: key id %u out of range", what, t->name, k->id);
		return false;
	}
	want = make_key(t, k->id);
	if (k->tag != want.tag) {
		failf(w, "%s on %s: key %u has tag %#x, want %#x", what, t->name, k->id,
		      k->tag, want.tag);
		return false;
	}
	return true;
}

/*
 * Is v a value some thread stored under key k?  copy_out: it came from a
 * copy-out (the lock word must read as zero on a locked map, unchanged on
 * others); else it is a program-view snapshot taken under the spin lock.
 */
static bool check_slot(struct worker *w, const struct target *t, const struct skey *k,
		       const struct sval *v, bool copy_out, const char *what)
{
	struct run *r = w->r;

	if (v->key_id != k->id || v->key_tag != k->tag) {
		failf(w, "%s on %s: key %u got the value of key %u/%#x", what, t->name, k->id,
		      v->key_id, v->key_tag);
		return false;
	}
	if (copy_out) {
		uint32_t want = r->cfg->lock ? 0 : LOCK_PATTERN;

		if (v->lock.val != want) {
			failf(w, "%s on %s: key %u: lock word %#x, want %#x", what, t->name,
			      k->id, v->lock.val, want);
			return false;
		}
	}
	if (k->id < t->nctr) {
		if (v->writer != INIT_WRITER || v->seq != 0) {
			failf(w, "%s on %s: counter key %u was overwritten (writer %u seq %" PRIu64 ")",
			      what, t->name, k->id, v->writer, v->seq);
			return false;
		}
	} else if (v->writer > NTHREADS) {
		failf(w, "%s on %s: key %u: bad writer %u", what, t->name, k->id, v->writer);
		return false;
	} else {
		uint64_t pub = __atomic_load_n(&r->pub_seq[v->writer], __ATOMIC_ACQUIRE);

		if (v->seq == 0 || v->seq > pub) {
			failf(w, "%s on %s: key %u: writer %u seq %" PRIu64 " not yet written (max %" PRIu64 ")",
			      what, t->name, k->id, v->writer, v->seq, pub);
			return false;
		}
	}
	for (unsigned i = 0; i < NPAYLOAD; i++) {
		if (v->payload[i] != payload_word(k->id, v->writer, v->seq, i)) {
			failf(w, "%s on %s: key %u: torn value (payload[%u], writer %u seq %" PRIu64 ")",
			      what, t->name, k->id, i, v->writer, v->seq);
			return false;
		}
	}
	if (v->csum != value_csum(v)) {
		failf(w, "%s on %s: key %u: bad checksum", what, t->name, k->id);
		return false;
	}
	return true;
}

/*
 * Is v a value some thread stored under key k, with every slot of a
 * per-CPU value (copy_out: the syscall view's r->slots) from one update?
 * A program view's is one slot.  Counters: the slots' sum.
 */
static bool check_value(struct worker *w, const struct target *t, const struct skey *k,
			const struct sval *v, bool copy_out, const char *what)
{
	uint32_t n = copy_out ? w->r->slots : 1;
	uint64_t c = counter_sum(v, n);

	for (uint32_t j = 0; j < n; j++) {
		if (!check_slot(w, t, k, &v[j], copy_out, what))
			return false;
		if (v[j].writer != v[0].writer || v[j].seq != v[0].seq) {
			failf(w, "%s on %s: key %u: CPU %u's slot from writer %u seq %" PRIu64
			      ", CPU 0's from writer %u seq %" PRIu64,
			      what, t->name, k->id, j, v[j].writer, v[j].seq, v[0].writer, v[0].seq);
			return false;
		}
	}
	if (k->id < t->nctr && w->id < NTHREADS) {
		/* Coherence: a thread never sees a counter go back, nor below
		 * its own increments. */
		if (c < w->ctr_seen[k->id] || c < w->ctr_incs[k->id]) {
			failf(w, "%s on %s: counter %u went back: %" PRIu64 " < %" PRIu64 " (own %" PRIu64 ")",
			      what, t->name, k->id, c, w->ctr_seen[k->id], w->ctr_incs[k->id]);
			return false;
		}
		w->ctr_seen[k->id] = c;
	}
	return true;
}

/*
 * rc must be 0 or -E for E in the 0-terminated list, with errno == E.
 * Returns true for 0, false otherwise (and reports anything undocumented).
 */
static bool expect_rc(struct worker *w, const char *what, int rc, int err, ...)
{
	va_list ap;
	bool allowed = false;
	int e;

	if (rc == 0)
		return true;
	va_start(ap, err);
	while ((e = va_arg(ap, int)) != 0)
		if (rc == -e)
			allowed = true;
	va_end(ap);
	if (!allowed)
		failf(w, "%s: undocumented result %d (%s)", what, rc, strerror(rc < 0 ? -rc : 0));
	else if (err != -rc)
		failf(w, "%s: returned %d but errno is %d", what, rc, err);
	else if (rc == -E2BIG)
		w->st.e2big++;
	else if (rc == -ENOMEM)
		w->st.enomem++;
	return false;
}

/* ENOMEM is documented for BPFMAP_F_NO_PREALLOC maps only. */
static int enomem_ok(const struct worker *w)
{
	return (w->r->cfg->map_flags & BPFMAP_F_NO_PREALLOC) ? ENOMEM : 0;
}

/* An entry of expect_rc()'s list that allows nothing (no rc is +1). */
#define RC_NONE (-1)

/* Inserts into a full LRU map evict: -E2BIG is never an answer there. */
static bool evicts(const struct run *r)
{
	return r->cfg->type == BPFMAP_TYPE_LRU_HASH || r->cfg->type == BPFMAP_TYPE_LRU_PERCPU_HASH;
}

static int e2big_ok(const struct worker *w)
{
	return evicts(w->r) ? RC_NONE : E2BIG;
}

/* RHASH's batches are element-granular: -ENOSPC is never an answer. */
static int enospc_ok(const struct worker *w)
{
	return w->r->cfg->type == BPFMAP_TYPE_RHASH ? RC_NONE : ENOSPC;
}

/* Read a value word by word with atomics: it may be written concurrently. */
static void snapshot(const struct sval *p, struct sval *out)
{
	const uint64_t *src = (const uint64_t *)(const void *)p;
	uint64_t *dst = (uint64_t *)(void *)out;

	for (size_t i = 0; i < sizeof(*p) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ---- operations --------------------------------------------------------- */

static void op_lookup(struct worker *w, struct target *t, bool flock)
{
	enum op op = flock ? OP_LOOKUP_LOCK : OP_LOOKUP;
	struct skey k = make_key(t, pick_key(w, t, false));
	struct sval *v = w->one;
	int rc, err;

	w->st.calls[op]++;
	if (flock && !w->r->cfg->lock) {
		/* Documented: BPFMAP_F_LOCK on a map without a spin lock. */
		errno = 0;
		rc = bpfmap_lookup_elem_flags(t->map, &k, v, BPFMAP_F_LOCK);
		err = errno;
		if (rc != -EINVAL || err != EINVAL)
			failf(w, "lookup F_LOCK without a lock: %d errno %d", rc, err);
		flock = false;
	}
	errno = 0;
	if (flock)
		rc = bpfmap_lookup_elem_flags(t->map, &k, v, BPFMAP_F_LOCK);
	else
		rc = bpfmap_lookup_elem(t->map, &k, v);
	err = errno;
	if (expect_rc(w, op_names[op], rc, err, ENOENT, 0)) {
		w->st.ok[op]++;
		check_value(w, t, &k, v, true, op_names[op]);
	} else if (k.id < t->nctr) {
		failf(w, "%s on %s: counter key %u missing", op_names[op], t->name, k.id);
	}
}

static void op_update(struct worker *w, struct target *t, enum op op)
{
	static const uint64_t modes[] = {
		[OP_UPDATE_ANY] = BPFMAP_ANY,
		[OP_UPDATE_NOEXIST] = BPFMAP_NOEXIST,
		[OP_UPDATE_EXIST] = BPFMAP_EXIST,
	};
	struct skey k = make_key(t, pick_key(w, t, true));
	uint64_t flags = modes[op];
	struct sval *v = w->one;
	int rc, err;
	bool ok;

	make_value(w, &k, v);
	if (w->r->cfg->lock && (rnd(w) & 1)) {
		flags |= BPFMAP_F_LOCK;
		w->st.calls[OP_UPDATE_F_LOCK]++;
	} else if (!w->r->cfg->lock && (rnd(w) & 15) == 0) {
		/* Documented: BPFMAP_F_LOCK on a map without a spin lock. */
		errno = 0;
		rc = bpfmap_update_elem(t->map, &k, v, flags | BPFMAP_F_LOCK);
		err = errno;
		if (rc != -EINVAL || err != EINVAL)
			failf(w, "update F_LOCK without a lock: %d errno %d", rc, err);
	}
	w->st.calls[op]++;
	errno = 0;
	rc = bpfmap_update_elem(t->map, &k, v, flags);
	err = errno;
	switch (op) {
	case OP_UPDATE_ANY:
		ok = expect_rc(w, "update ANY", rc, err, e2big_ok(w), enomem_ok(w), 0);
		break;
	case OP_UPDATE_NOEXIST:
		ok = expect_rc(w, "update NOEXIST", rc, err, EEXIST, e2big_ok(w), enomem_ok(w), 0);
		break;
	default:
		ok = expect_rc(w, "update EXIST", rc, err, ENOENT, 0);
		break;
	}
	if (ok) {
		w->st.ok[op]++;
		if (flags & BPFMAP_F_LOCK)
			w->st.ok[OP_UPDATE_F_LOCK]++;
	}
}

static void op_delete(struct worker *w, struct target *t, bool with_value)
{
	enum op op = with_value ? OP_LOOKUP_DELETE : OP_DELETE;
	struct skey k = make_key(t, pick_key(w, t, true));
	struct sval *v = w->one;
	int rc, err;

	w->st.calls[op]++;
	errno = 0;
	if (with_value)
		rc = bpfmap_lookup_and_delete_elem(t->map, &k, v);
	else
		rc = bpfmap_delete_elem(t->map, &k);
	err = errno;
	if (expect_rc(w, op_names[op], rc, err, ENOENT, 0)) {
		w->st.ok[op]++;
		if (with_value)
			check_value(w, t, &k, v, true, op_names[op]);
	}
}

static void op_walk(struct worker *w, struct target *t)
{
	struct skey cur, next;
	const struct skey *prev = NULL;
	/* Walks over big maps stay short: they would take most of the run. */
	uint32_t steps = 1 + (uint32_t)(rnd(w) % (2 * (w->r->cfg->big ? A_MAX : t->max_entries)));

	w->st.calls[OP_WALK]++;
	if (rnd(w) & 1) { /* start after some key, present or not */
		cur = make_key(t, pick_key(w, t, false));
		prev = &cur;
	}
	for (uint32_t i = 0; i < steps; i++) {
		int rc, err;

		errno = 0;
		rc = bpfmap_get_next_key(t->map, prev, &next);
		err = errno;
		if (!expect_rc(w, "get_next_key", rc, err, ENOENT, 0))
			break;
		w->st.ok[OP_WALK]++; /* keys visited */
		if (!check_key(w, t, &next, "get_next_key"))
			break;
		if ((rnd(w) & 7) == 0) { /* the key may be gone already */
			struct sval *v = w->one;

			errno = 0;
			rc = bpfmap_lookup_elem(t->map, &next, v);
			err = errno;
			if (expect_rc(w, "lookup after get_next_key", rc, err, ENOENT, 0))
				check_value(w, t, &next, v, true, "lookup after get_next_key");
		}
		cur = next;
		prev = &cur;
	}
}

/* One pass (sometimes partial) of lookup_batch / lookup_and_delete_batch. */
static void op_lookup_batch(struct worker *w, struct target *t, bool del)
{
	enum op op = del ? OP_LOOKUP_DELETE_BATCH : OP_LOOKUP_BATCH;
	const char *what = op_names[op];
	BPFMAP_BATCH_OPTS(opts, .elem_flags = (w->r->cfg->lock && (rnd(w) & 1)) ? BPFMAP_F_LOCK : 0);
	uint32_t cap = 1 + (uint32_t)(rnd(w) % 8);
	/* Usually whole passes for lookups; lookup_and_delete_batch mostly
	 * takes a few buckets only, or it would keep map A nearly empty. */
	uint32_t max_calls = (rnd(w) & 3) && !w->r->cfg->big ? UINT32_MAX : 1 + (uint32_t)(rnd(w) % 4);

	if (del && ((rnd(w) & 15) || w->r->cfg->big)) { /* big: op_burst thins it out */
		cap = 1 + (uint32_t)(rnd(w) % 4);
		max_calls = 1 + (uint32_t)(rnd(w) % 2);
	}
	uint64_t in[CURSOR_WORDS] = { 0 }, out[CURSOR_WORDS] = { 0 };
	uint32_t calls = 0;
	bool first = true;
	uint8_t seen[MAX_KEYS] = { 0 };

	w->st.calls[op]++;
	for (;;) {
		uint32_t count = cap;
		int rc, err;

		errno = 0;
		if (del)
			rc = bpfmap_lookup_and_delete_batch(t->map, first ? NULL : in, out, w->keys,
							    w->vals, &count, &opts);
		else
			rc = bpfmap_lookup_batch(t->map, first ? NULL : in, out, w->keys, w->vals,
						 &count, &opts);
		err = errno;
		if (rc) {
			expect_rc(w, what, rc, err, ENOENT, enospc_ok(w), 0);
			if (rc != -ENOENT && rc != -ENOSPC)
				return;
		}
		if (count > cap) {
			failf(w, "%s on %s: count %u > capacity %u", what, t->name, count, cap);
			return;
		}
		if (rc == -ENOSPC) {
			if (count != 0)
				failf(w, "%s on %s: -ENOSPC with count %u", what, t->name, count);
			if (cap >= t->max_entries) {
				failf(w, "%s on %s: -ENOSPC with room for max_entries", what, t->name);
				return;
			}
			cap = BATCH_CAP; /* a bucket never holds more than max_entries */
			continue;
		}
		w->st.batch_elems += count;
		for (uint32_t i = 0; i < count; i++) {
			const struct skey *k = &w->keys[i];

			if (!check_key(w, t, k, what))
				continue;
			/* Each bucket is visited once per pass and a key lives
			 * in one bucket: no key may come back within a pass. */
			if (seen[k->id]++)
				failf(w, "%s on %s: key %u twice in one pass", what, t->name, k->id);
			check_value(w, t, k, wval(w, i), true, what);
			if (del && k->id < t->nctr)
				failf(w, "%s on %s: deleted counter key %u", what, t->name, k->id);
		}
		if (rc == -ENOENT) {
			w->st.ok[op]++; /* complete passes */
			return;
		}
		memcpy(in, out, sizeof(in));
		first = false;
		if (++calls >= max_calls)
			return;
	}
}

static void op_update_batch(struct worker *w, struct target *t)
{
	uint32_t n = 1 + (uint32_t)(rnd(w) % 6), count = n;
	BPFMAP_BATCH_OPTS(opts, .elem_flags = (w->r->cfg->lock && (rnd(w) & 1)) ? BPFMAP_F_LOCK : 0);
	int rc, err;

	for (uint32_t i = 0; i < n; i++) {
		w->keys[i] = make_key(t, pick_key(w, t, true));
		make_value(w, &w->keys[i], wval(w, i));
	}
	w->st.calls[OP_UPDATE_BATCH]++;
	if (opts.elem_flags)
		w->st.calls[OP_UPDATE_F_LOCK]++;
	errno = 0;
	rc = bpfmap_update_batch(t->map, w->keys, w->vals, &count, &opts);
	err = errno;
	if (expect_rc(w, "update_batch", rc, err, e2big_ok(w), enomem_ok(w), 0)) {
		w->st.ok[OP_UPDATE_BATCH]++;
		if (opts.elem_flags)
			w->st.ok[OP_UPDATE_F_LOCK]++;
		if (count != n)
			failf(w, "update_batch on %s: success with count %u of %u", t->name, count, n);
	} else if (count >= n) {
		failf(w, "update_batch on %s: error %d with count %u of %u", t->name, rc, count, n);
	}
}

static void op_delete_batch(struct worker *w, struct target *t)
{
	uint32_t n = 1 + (uint32_t)(rnd(w) % 6), count = n;
	BPFMAP_BATCH_OPTS(opts);
	int rc, err;

	for (uint32_t i = 0; i < n; i++)
		w->keys[i] = make_key(t, pick_key(w, t, true));
	w->st.calls[OP_DELETE_BATCH]++;
	errno = 0;
	rc = bpfmap_delete_batch(t->map, w->keys, &count, rnd(w) & 1 ? &opts : NULL);
	err = errno;
	if (expect_rc(w, "delete_batch", rc, err, ENOENT, 0)) {
		w->st.ok[OP_DELETE_BATCH]++;
		if (count != n)
			failf(w, "delete_batch on %s: success with count %u of %u", t->name, count, n);
	} else if (count >= n) {
		failf(w, "delete_batch on %s: error %d with count %u of %u", t->name, rc, count, n);
	}
}

/*
 * The program view: a pointer into the map, an atomic increment, then a read
 * of the value (consistent under the value's spin lock, if the map has one).
 * counter: a key of B that is never deleted, whose increments are tallied.
 */
static void op_prog(struct worker *w, struct target *t, bool counter)
{
	enum op op = counter ? OP_PROG_COUNTER : OP_PROG;
	uint32_t id = counter ? (uint32_t)(rnd(w) % t->nctr) : pick_key(w, t, false);
	struct skey k = make_key(t, id);
	struct sval *p, *v = w->one;
	int err;

	w->st.calls[op]++;
	bpfmap_read_lock();
	errno = 0;
	p = bpfmap_lookup(t->map, &k);
	err = errno;
	if (!p) {
		bpfmap_read_unlock();
		if (err != ENOENT)
			failf(w, "bpfmap_lookup on %s: NULL with errno %d", t->name, err);
		if (id < t->nctr)
			failf(w, "bpfmap_lookup on %s: counter key %u missing", t->name, id);
		return;
	}
	w->st.ok[op]++;
	__atomic_fetch_add(&p->counter, 1, __ATOMIC_RELAXED);
	if (id < t->nctr)
		w->ctr_incs[id]++;
	if (__atomic_load_n(&p->key_id, __ATOMIC_RELAXED) != k.id ||
	    __atomic_load_n(&p->key_tag, __ATOMIC_RELAXED) != k.tag)
		failf(w, "bpfmap_lookup on %s: key %u points at the value of another key",
		      t->name, id);
	if (w->r->cfg->lock) {
		bpfmap_spin_lock(&p->lock);
		snapshot(p, v);
		bpfmap_spin_unlock(&p->lock);
		check_value(w, t, &k, v, false, counter ? "prog view (counter)" : "prog view");
	}
	if (!counter && id >= t->nctr && (rnd(w) & 7) == 0) {
		/* As a BPF program may: delete the element we point at.  The
		 * pointer must stay readable, unchanged in identity, until
		 * the section ends. */
		int rc;

		errno = 0;
		rc = bpfmap_delete_elem(t->map, &k);
		err = errno;
		expect_rc(w, "delete inside a read-side section", rc, err, ENOENT, 0);
		__atomic_fetch_add(&p->counter, 1, __ATOMIC_RELAXED);
		if (__atomic_load_n(&p->key_id, __ATOMIC_RELAXED) != k.id ||
		    __atomic_load_n(&p->key_tag, __ATOMIC_RELAXED) != k.tag)
			failf(w, "bpfmap_lookup on %s: key %u's value changed identity after delete",
			      t->name, id);
		if (w->r->cfg->lock) {
			bpfmap_spin_lock(&p->lock);
			snapshot(p, v);
			bpfmap_spin_unlock(&p->lock);
			check_value(w, t, &k, v, false, "prog view after delete");
		}
	} else if (!counter && (rnd(w) & 7) == 1) {
		/* Nested sections: syscall-view calls from inside one. */
		struct skey k2 = make_key(t, pick_key(w, t, true));
		int rc;

		make_value(w, &k2, v);
		errno = 0;
		rc = bpfmap_update_elem(t->map, &k2, v, BPFMAP_ANY);
		err = errno;
		expect_rc(w, "update inside a read-side section", rc, err, e2big_ok(w), enomem_ok(w),
			  0);
		errno = 0;
		rc = bpfmap_lookup_elem(t->map, &k2, v);
		err = errno;
		if (expect_rc(w, "lookup inside a read-side section", rc, err, ENOENT, 0))
			check_value(w, t, &k2, v, true, "lookup inside a read-side section");
	}
	bpfmap_read_unlock();
}

static void run_op(struct worker *w, struct target *t, enum op op)
{
	switch (op) {
	case OP_LOOKUP:
		op_lookup(w, t, false);
		break;
	case OP_LOOKUP_LOCK:
		op_lookup(w, t, true);
		break;
	case OP_UPDATE_ANY:
	case OP_UPDATE_NOEXIST:
	case OP_UPDATE_EXIST:
		op_update(w, t, op);
		break;
	case OP_DELETE:
		op_delete(w, t, false);
		break;
	case OP_LOOKUP_DELETE:
		op_delete(w, t, true);
		break;
	case OP_WALK:
		op_walk(w, t);
		break;
	case OP_LOOKUP_BATCH:
		op_lookup_batch(w, t, false);
		break;
	case OP_LOOKUP_DELETE_BATCH:
		/* It would delete B's counter keys: map A only. */
		op_lookup_batch(w, t, t->nctr == 0);
		break;
	case OP_UPDATE_BATCH:
		op_update_batch(w, t);
		break;
	case OP_DELETE_BATCH:
		op_delete_batch(w, t);
		break;
	case OP_PROG:
		op_prog(w, t, false);
		break;
	default:
		failf(w, "bad op %d", op);
	}
}

static enum op pick_op(struct worker *w)
{
	unsigned total = 0, x;

	for (unsigned i = 0; i < NOPS_RANDOM; i++)
		total += op_weights[i];
	x = (unsigned)(rnd(w) % total);
	for (unsigned i = 0; i < NOPS_RANDOM; i++) {
		if (x < op_weights[i])
			return (enum op)i;
		x -= op_weights[i];
	}
	return OP_LOOKUP;
}

/*
 * A burst of deletes over most of map A's keys, so that a resizable map
 * shrinks while the other threads go on (and grows back after).
 */
static void op_burst(struct worker *w, struct target *t)
{
	uint32_t from = t->nctr + (uint32_t)(rnd(w) % (t->nkeys / 4));

	for (uint32_t id = from; id < t->nkeys; id++) {
		struct skey k = make_key(t, id);
		int rc, err;

		errno = 0;
		rc = bpfmap_delete_elem(t->map, &k);
		err = errno;
		expect_rc(w, "delete (burst)", rc, err, ENOENT, 0);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;

	for (uint64_t n = 1; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); n++) {
		uint64_t x = rnd(w) % 100;

		if (r->cfg->big && w->id == 0 && n % BIG_BURST_EVERY == 0)
			op_burst(w, &r->a);
		if (x < 70)
			run_op(w, &r->a, pick_op(w));
		else if (x < 85)
			op_prog(w, &r->b, true);
		else
			run_op(w, &r->b, pick_op(w));
	}
	return NULL;
}

/* ---- checks at rest ----------------------------------------------------- */

/* Full get_next_key walk; marks the keys found in present[]; returns count. */
static uint32_t rest_walk(struct worker *w, struct target *t, uint8_t *present)
{
	struct skey cur, next;
	const struct skey *prev = NULL;
	uint32_t n = 0;
	int rc;

	memset(present, 0, MAX_KEYS);
	for (;;) {
		errno = 0;
		rc = bpfmap_get_next_key(t->map, prev, &next);
		if (rc)
			break;
		if (check_key(w, t, &next, "rest walk") && present[next.id]++)
			failf(w, "rest walk on %s: key %u twice", t->name, next.id);
		if (++n > t->max_entries) {
			failf(w, "rest walk on %s: more than max_entries keys", t->name);
			return n;
		}
		cur = next;
		prev = &cur;
	}
	if (rc != -ENOENT || errno != ENOENT)
		failf(w, "rest walk on %s: ended with %d, errno %d", t->name, rc, errno);
	return n;
}

/* Full lookup_batch (or lookup_and_delete_batch) pass; marks present[]. */
static uint32_t rest_batch(struct worker *w, struct target *t, uint8_t *present, bool del)
{
	const char *what = del ? "rest lookup_and_delete_batch" : "rest lookup_batch";
	uint64_t in[CURSOR_WORDS] = { 0 }, out[CURSOR_WORDS] = { 0 };
	uint32_t n = 0, cap = 1 + (uint32_t)(rnd(w) % 4);
	bool first = true;

	memset(present, 0, MAX_KEYS);
	for (unsigned calls = 0; calls < 4 * MAX_KEYS + 64; calls++) {
		uint32_t count = cap;
		int rc;

		errno = 0;
		if (del)
			rc = bpfmap_lookup_and_delete_batch(t->map, first ? NULL : in, out, w->keys,
							    w->vals, &count, NULL);
		else
			rc = bpfmap_lookup_batch(t->map, first ? NULL : in, out, w->keys, w->vals,
						 &count, NULL);
		if (rc == -ENOSPC) {
			if (count || cap >= t->max_entries || enospc_ok(w) == RC_NONE)
				failf(w, "%s on %s: bad -ENOSPC (count %u cap %u)", what, t->name,
				      count, cap);
			cap = BATCH_CAP;
			continue;
		}
		if (rc && rc != -ENOENT) {
			failf(w, "%s on %s: %d", what, t->name, rc);
			return n;
		}
		if (rc && errno != ENOENT)
			failf(w, "%s on %s: errno %d", what, t->name, errno);
		for (uint32_t i = 0; i < count; i++) {
			const struct skey *k = &w->keys[i];

			if (!check_key(w, t, k, what))
				continue;
			if (present[k->id]++)
				failf(w, "%s on %s: key %u twice", what, t->name, k->id);
			check_value(w, t, k, wval(w, i), true, what);
			n++;
		}
		if (rc == -ENOENT)
			return n;
		memcpy(in, out, sizeof(in));
		first = false;
	}
	failf(w, "%s on %s: the pass does not end", what, t->name);
	return n;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Deferred reclamation runs in liburcu's thread: wait for mem_usage to
 * settle back at @target (the empty map's figure, or for a preallocated
 * map the figure before: it keeps what it has touched, and deletes touch
 * nothing new). */
/* RHASH's memory follows the elements to within its arenas' hysteresis
 * (a chunk each, about 64 KiB, kept while the others have little room:
 * tables/slot_arena.h) and a table that shrinks as later operations move
 * it; tests/test_rhash.c checks the exact figures. */
#define RHASH_MEM_SLACK ((size_t)256 << 10)

static bool mem_back(const struct worker *w, size_t m, size_t target)
{
	if (w->r->cfg->type == BPFMAP_TYPE_RHASH)
		return m <= target + RHASH_MEM_SLACK;
	return m == target;
}

static void wait_mem_back(struct worker *w, struct target *t, const char *when, size_t target)
{
	double deadline = now_sec() + 10;
	size_t m;

	while (!mem_back(w, m = bpfmap_mem_usage(t->map), target) && now_sec() < deadline)
		usleep(1000);
	if (!mem_back(w, m, target))
		failf(w, "%s on %s: mem_usage %zu, expected %zu (the empty map had %zu)", when,
		      t->name, m, target, t->mem0);
}

/*
 * Elements a map may hold beyond max_entries while reclamation lags: 4096
 * in general.  The chained table's preallocated maps (LRU maps with
 * per-CPU lists here) keep for good the heap elements they took while the
 * pool was dry, and deletes inside read-side sections (evictions by the
 * nested updates) queue up to 16384 before deleters wait
 * (chain_deferred_limit), plus four pending batches of 2048.
 */
static size_t extra_elems(const struct config *cfg)
{
	if (cfg->map_flags & BPFMAP_F_NO_COMMON_LRU)
		return 16384 + 4 * 2048 + 4096;
	return 4096;
}

static void check_at_rest(struct worker *w, struct target *t, const uint64_t *ctr_total)
{
	const struct config *cfg = w->r->cfg;
	uint8_t walked[MAX_KEYS], batched[MAX_KEYS];
	uint32_t nwalk = rest_walk(w, t, walked);
	uint32_t nbatch = rest_batch(w, t, batched, false);
	size_t elem_bytes = sizeof(struct skey) + w->r->slots * sizeof(struct sval);
	size_t m = bpfmap_mem_usage(t->map);
	bool prealloc = !(cfg->map_flags & BPFMAP_F_NO_PREALLOC);
	int rc;

	/* (c) walk and batch agree; every key found looks up fine. */
	if (nwalk != nbatch || memcmp(walked, batched, sizeof(walked)))
		failf(w, "at rest on %s: get_next_key finds %u keys, lookup_batch %u (or others)",
		      t->name, nwalk, nbatch);
	if (nwalk > t->max_entries)
		failf(w, "at rest on %s: %u elements > max_entries %u", t->name, nwalk,
		      t->max_entries);
	for (uint32_t id = 0; id < t->nkeys; id++) {
		struct skey k = make_key(t, id);
		struct sval *v = w->one;

		errno = 0;
		rc = bpfmap_lookup_elem(t->map, &k, v);
		if (walked[id] && rc)
			failf(w, "at rest on %s: walked key %u does not look up: %d", t->name, id, rc);
		else if (!walked[id] && (rc != -ENOENT || errno != ENOENT))
			failf(w, "at rest on %s: key %u not walked, but lookup gives %d", t->name,
			      id, rc);
		if (rc == 0)
			check_value(w, t, &k, v, true, "at rest lookup");
		if (rc == 0 && cfg->lock) {
			rc = bpfmap_lookup_elem_flags(t->map, &k, v, BPFMAP_F_LOCK);
			if (rc || !check_value(w, t, &k, v, true, "at rest F_LOCK lookup"))
				failf(w, "at rest on %s: F_LOCK lookup of %u: %d", t->name, id, rc);
		}
		bpfmap_read_lock();
		if ((bpfmap_lookup(t->map, &k) != NULL) != !!walked[id])
			failf(w, "at rest on %s: program view disagrees on key %u", t->name, id);
		bpfmap_read_unlock();
		/* (d) the counters add up exactly. */
		if (id < t->nctr) {
			if (!walked[id] || rc)
				failf(w, "at rest on %s: counter key %u missing", t->name, id);
			else if (counter_sum(v, w->r->slots) != ctr_total[id])
				failf(w, "at rest on %s: counter %u is %" PRIu64 ", threads added %" PRIu64,
				      t->name, id, counter_sum(v, w->r->slots), ctr_total[id]);
		}
	}

	/* mem_usage: at least the elements held, within reason.  Elements deleted
	 * during the run may still wait for liburcu's reclamation thread (starved
	 * on 2 cores under a sanitizer): give it time before judging the upper
	 * bound. */
	size_t upper = t->mem0 + (size_t)(t->max_entries + extra_elems(cfg)) * (elem_bytes + 256);
	for (double deadline = now_sec() + 10; m > upper && now_sec() < deadline;) {
		usleep(1000);
		m = bpfmap_mem_usage(t->map);
	}
	if (t->mem0 == 0 || m < t->mem0 ||
	    ((cfg->map_flags & BPFMAP_F_NO_PREALLOC) && m < t->mem0 + nwalk * elem_bytes) ||
	    /* Preallocated maps count their capacity from creation, but for
	     * values that live in elements handed out as keys come (tables/
	     * flat.h: 128 bytes and more, as every CPU's slots here are). */
	    (!(cfg->map_flags & BPFMAP_F_NO_PREALLOC) && w->r->slots == 1 &&
	     t->mem0 < t->max_entries * elem_bytes) ||
	    m > upper)
		failf(w, "at rest on %s: mem_usage %zu (empty %zu) with %u elements", t->name, m,
		      t->mem0, nwalk);

	/* Drain with lookup_and_delete_batch: everything comes back once. */
	uint32_t ndrain = rest_batch(w, t, batched, true);

	if (ndrain != nwalk || memcmp(walked, batched, sizeof(walked)))
		failf(w, "drain on %s: took %u elements, %u were there", t->name, ndrain, nwalk);
	if (rest_walk(w, t, walked) != 0)
		failf(w, "drain on %s: map not empty", t->name);
	wait_mem_back(w, t, "after drain", prealloc ? m : t->mem0);

	/* Capacity is exactly max_entries again (the element count is right);
	 * an LRU map B with room for all its keys is refilled with them.  With
	 * per-CPU LRU lists this thread, pinned, fills its CPU's list only,
	 * and a full list evicts from itself (documented, as the kernel's). */
	uint32_t refill = t->max_entries < t->nkeys ? t->max_entries : t->nkeys;
	uint32_t held = refill;

	if (cfg->map_flags & BPFMAP_F_NO_COMMON_LRU) {
		uint32_t room = t->max_entries / (uint32_t)bpfmap_num_possible_cpus();

		held = refill < room ? refill : room;
	}

	for (uint32_t id = 0; id < refill; id++) {
		struct skey k = make_key(t, id);

		make_value(w, &k, w->vals);
		if (id < t->nctr) /* counter keys hold INIT values */
			fill_init(w->r, w->vals, &k);
		rc = bpfmap_update_elem(t->map, &k, w->vals, BPFMAP_NOEXIST);
		if (rc)
			failf(w, "refill on %s: insert %u of %u failed: %d", t->name, id,
			      t->max_entries, rc);
	}
	if (refill == t->max_entries && refill < t->nkeys) {
		struct skey k = make_key(t, t->max_entries);

		make_value(w, &k, w->vals);
		errno = 0;
		rc = bpfmap_update_elem(t->map, &k, w->vals, BPFMAP_ANY);
		if (evicts(w->r) ? rc != 0 : (rc != -E2BIG || errno != E2BIG))
			failf(w, "refill on %s: insert past max_entries gives %d", t->name, rc);
	}
	if ((rc = (int)rest_walk(w, t, walked)) != (int)held)
		failf(w, "refill on %s: walk finds %d keys, want %u", t->name, rc, held);
	if (evicts(w->r) && refill < t->nkeys && !walked[refill])
		failf(w, "refill on %s: the key past max_entries is missing", t->name);
	m = bpfmap_mem_usage(t->map);
	if (cfg->type == BPFMAP_TYPE_RHASH) {
		/* Its table and arenas grow by steps, not by the element. */
		if (m < t->mem0 + (size_t)refill * elem_bytes || m > upper)
			failf(w, "refill on %s: mem_usage %zu, empty %zu, for %u elements", t->name,
			      m, t->mem0, t->max_entries);
	} else if (cfg->map_flags & BPFMAP_F_NO_PREALLOC) {
		size_t d = m - t->mem0, per = d / t->max_entries;

		if (m < t->mem0 || d % t->max_entries || per < elem_bytes || per > elem_bytes + 256)
			failf(w, "refill on %s: mem_usage %zu, empty %zu, for %u elements", t->name,
			      m, t->mem0, t->max_entries);
	} else if (m < t->mem0 || m > upper) {
		failf(w, "refill on %s: mem_usage %zu, empty %zu", t->name, m, t->mem0);
	}

	/* Delete them all with delete_batch (the walk's keys: an LRU map
	 * evicted one of the first max_entries). */
	{
		uint32_t count = 0;

		for (uint32_t id = 0; id < t->nkeys; id++)
			if (walked[id] && count < KEYS_CAP)
				w->keys[count++] = make_key(t, id);
		rc = bpfmap_delete_batch(t->map, w->keys, &count, NULL);
		if (rc || count != held)
			failf(w, "final delete_batch on %s: %d, count %u", t->name, rc, count);
		if (rest_walk(w, t, walked) != 0)
			failf(w, "final delete_batch on %s: map not empty", t->name);
	}
	wait_mem_back(w, t, "at the end", prealloc ? m : t->mem0);
}

/* ---- driver --------------------------------------------------------------- */

static void watchdog(int sig)
{
	static const char msg[] = "test_stress: watchdog expired (deadlock?)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more we can do */
	}
	_exit(3);
}

static void create_target(struct target *t, const struct config *cfg, const char *name,
			  uint32_t max_entries, uint32_t nkeys, uint32_t nctr, uint32_t salt)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = cfg->map_flags,
			   .lock_off = cfg->lock ? LOCK_OFF : -1);
	struct bpfmap_info info;

	t->name = name;
	t->nkeys = nkeys;
	t->nctr = nctr;
	t->salt = salt;
	const char *table = getenv("BPFMAP_TABLE");
	char *was = table ? strdup(table) : NULL;

	if (cfg->chain)
		assert_int_equal(setenv("BPFMAP_TABLE", "chain", 1), 0);
	t->map = bpfmap_create(cfg->type, name, sizeof(struct skey), sizeof(struct sval),
			       max_entries, &opts);
	if (cfg->chain)
		assert_int_equal(was ? setenv("BPFMAP_TABLE", was, 1) : unsetenv("BPFMAP_TABLE"), 0);
	free(was);
	if (!t->map)
		fail_msg("bpfmap_create(%s): %s", name, strerror(errno));
	if (cfg->chain)
		assert_true(t->map->ops != &flat_ops);
	/* BPFMAP_F_NO_COMMON_LRU rounds max_entries up to whole CPUs. */
	assert_int_equal(bpfmap_get_info(t->map, &info, &(uint32_t){ sizeof(info) }), 0);
	t->max_entries = info.max_entries;
	assert_true(t->max_entries <= KEYS_CAP);
	t->mem0 = bpfmap_mem_usage(t->map);
}

static void test_config(void **state)
{
	const struct config *cfg = *state;
	bool percpu = cfg->type == BPFMAP_TYPE_PERCPU_HASH ||
		      cfg->type == BPFMAP_TYPE_LRU_PERCPU_HASH;
	struct run r = { .cfg = cfg, .slots = percpu ? (uint32_t)bpfmap_num_possible_cpus() : 1 };
	struct worker *ws = calloc(NTHREADS + 1, sizeof(*ws));
	struct worker *mw = &ws[NTHREADS]; /* the main thread, for checks at rest */
	struct stats tot = { 0 };
	uint64_t ctr_total[B_CTRS] = { 0 };
	double t0, elapsed;

	assert_non_null(ws);
	alarm((unsigned)stress_seconds + 120);
	create_target(&r.a, cfg, "stress_churn", cfg->big ? BIG_MAX : A_MAX,
		      cfg->big ? BIG_KEYS : A_KEYS, 0, 0xa5a5a5a5u);
	/* An LRU map B has room for every key (with per-CPU lists, on every
	 * CPU's list): its counter keys must stay. */
	create_target(&r.b, cfg, "stress_counter",
		      !evicts(&r)				     ? B_MAX
		      : cfg->map_flags & BPFMAP_F_NO_COMMON_LRU ? B_KEYS * (uint32_t)bpfmap_num_possible_cpus()
								     : B_KEYS,
		      B_KEYS, B_CTRS, 0x3c3c3c3cu);
	for (unsigned i = 0; i <= NTHREADS; i++) {
		ws[i].r = &r;
		ws[i].id = i;
		ws[i].rng = mix64(0x5eed0000u + i * 7919 + (uint64_t)time(NULL)) | 1;
		ws[i].vals = calloc((size_t)BATCH_CAP * r.slots, sizeof(struct sval));
		ws[i].one = calloc(r.slots, sizeof(struct sval));
		assert_true(ws[i].vals && ws[i].one);
	}
	for (uint32_t id = 0; id < B_CTRS; id++) {
		struct skey k = make_key(&r.b, id);

		fill_init(&r, mw->one, &k);
		assert_int_equal(bpfmap_update_elem(r.b.map, &k, mw->one, BPFMAP_NOEXIST), 0);
	}
	t0 = now_sec();
	for (unsigned i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]), 0);
	while (now_sec() - t0 < stress_seconds)
		usleep(10000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_join(ws[i].thread, NULL), 0);
	elapsed = now_sec() - t0;

	for (unsigned i = 0; i < NTHREADS; i++) {
		for (unsigned o = 0; o < NOPS; o++) {
			tot.calls[o] += ws[i].st.calls[o];
			tot.ok[o] += ws[i].st.ok[o];
		}
		tot.e2big += ws[i].st.e2big;
		tot.enomem += ws[i].st.enomem;
		tot.batch_elems += ws[i].st.batch_elems;
		for (unsigned c = 0; c < B_CTRS; c++)
			ctr_total[c] += ws[i].ctr_incs[c];
	}

	if (cfg->big) {
		/* It grew twice at least (4609 elements) while every operation
		 * ran; thread 0's bursts of deletes shrink it in between (about
		 * fifty resizes in 2 s under ASan, five under TSan). */
		uint64_t n = rtab_resizes(to_rtab(r.a.map));

		printf("[%s] %" PRIu64 " resizes of map A\n", cfg->name, n);
		if (n < 2)
			fail_msg("map A resized %" PRIu64 " times: the run did not exercise resizes", n);
	}
	/* Quiescent: check both maps at rest, on one CPU (per-CPU LRU lists
	 * fill the inserting CPU's list). */
	cpu_set_t was, one;

	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &was)) {
			CPU_SET(c, &one);
			break;
		}
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	check_at_rest(mw, &r.a, NULL);
	check_at_rest(mw, &r.b, ctr_total);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);

	uint64_t all = 0, ctr_all = 0;

	for (unsigned o = 0; o < NOPS; o++)
		if (o != OP_UPDATE_F_LOCK)
			all += tot.calls[o];
	for (unsigned c = 0; c < B_CTRS; c++)
		ctr_all += ctr_total[c];
	printf("[%s] %u threads, %.1f s: %" PRIu64 " ops, %" PRIu64 " E2BIG, %" PRIu64
	       " ENOMEM, %" PRIu64 " elements through batch lookups, counters +%" PRIu64 "\n",
	       cfg->name, NTHREADS, elapsed, all, tot.e2big, tot.enomem, tot.batch_elems, ctr_all);
	printf("   ok/calls:");
	for (unsigned o = 0; o < NOPS; o++)
		printf(" %s %" PRIu64 "/%" PRIu64 "%s", op_names[o], tot.ok[o], tot.calls[o],
		       o == OP_LOOKUP_DELETE ? "\n   " : "");
	printf("\n   (next_key_walk: keys visited/walks; batch lookups: full passes/passes)\n");
	fflush(stdout);

	bpfmap_free(r.a.map);
	bpfmap_free(r.b.map);
	alarm(0);
	for (unsigned i = 0; i <= NTHREADS; i++) {
		free(ws[i].vals);
		free(ws[i].one);
	}
	free(ws);

	for (unsigned o = 0; o < NOPS_RANDOM; o++)
		if (tot.calls[o] == 0)
			fail_msg("operation %s never ran", op_names[o]);
	assert_true(tot.calls[OP_PROG_COUNTER] > 0);
	if (r.failures)
		fail_msg("%" PRIu64 " invariant violations (first %d printed above)", r.failures,
			 MAX_FAIL_MSGS);
}

/* ---- linearizability of the lock-free update decisions --------------------
 *
 * Updates decide some outcomes without the bucket lock (-E2BIG, -ENOENT,
 * -EEXIST, and in-place stores of word-sized values).  These two tests pin
 * interleavings where a decision that is not linearizable shows up as a
 * result no sequential order can give.  Both run on u32 -> u64 maps, whose
 * values take the lock-free store path.
 */

#define LIN_MAX 64           /* the full map's capacity */
#define LIN_MAX_SHARDED 65536u /* a capacity whose counts are sharded (flat_count.h) */
#define LIN_FILL_BASE 1000u  /* the other keys of the full map */
#define LIN_KEY 0u           /* the key that comes and goes */
#define LIN_CYCLES 200000u   /* delete/reinsert cycles, at most */

struct lin_run {
	struct bpfmap *map;
	uint32_t max;            /* the full map's capacity */
	double deadline;
	int stop;                /* atomic */
	uint64_t failures;       /* atomic */
	uint64_t checks;         /* atomic: outcomes checked */
	char first[256];         /* the first failure, written once */
	/* lost-update test */
	uint32_t reinserts;      /* atomic: reinserts begun */
	uint32_t cycles;         /* deletes done (main thread reads after join) */
	uint64_t *deleted;       /* [j]: value returned by delete j */
	uint64_t *max_written;   /* [r]: largest value stored while reinserts == r */
};

static void lin_fail(struct lin_run *lr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lin_fail(struct lin_run *lr, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&lr->failures, 1, __ATOMIC_RELAXED) == 0) {
		va_start(ap, fmt);
		vsnprintf(lr->first, sizeof(lr->first), fmt, ap);
		va_end(ap);
	}
	__atomic_store_n(&lr->stop, 1, __ATOMIC_RELAXED);
}

static bool lin_stopped(struct lin_run *lr)
{
	return __atomic_load_n(&lr->stop, __ATOMIC_RELAXED) || now_sec() > lr->deadline;
}

static void lin_expect(struct lin_run *lr, const char *what, int ret, int ok1, int ok2)
{
	__atomic_fetch_add(&lr->checks, 1, __ATOMIC_RELAXED);
	if (ret != ok1 && ret != ok2)
		lin_fail(lr, "%s returned %d (%s)", what, ret, strerror(-ret));
}

/* Full map: LIN_KEY is deleted and reinserted over and over; the other
 * max - 1 keys stay.  Whenever LIN_KEY is absent the map has room, and
 * whenever the map is full LIN_KEY is present, so no update of LIN_KEY may
 * fail with -E2BIG, and the other keys are always present. */
static void *lin_toggler(void *arg)
{
	struct lin_run *lr = arg;
	uint32_t k = LIN_KEY;
	uint64_t v = 0;

	for (uint32_t i = 0; !lin_stopped(lr); i++) {
		lin_expect(lr, "delete (toggler)", bpfmap_delete_elem(lr->map, &k), 0, 0);
		v = i;
		lin_expect(lr, "NOEXIST update (toggler)",
			   bpfmap_update_elem(lr->map, &k, &v, BPFMAP_NOEXIST), 0, -EEXIST);
	}
	return NULL;
}

static void *lin_updater(void *arg)
{
	struct lin_run *lr = arg;

	for (uint64_t i = 1; !lin_stopped(lr); i++) {
		uint32_t k = LIN_KEY, other = LIN_FILL_BASE + (uint32_t)(i % (lr->max - 1));
		uint64_t v = i, out;

		lin_expect(lr, "ANY update of the toggled key",
			   bpfmap_update_elem(lr->map, &k, &v, BPFMAP_ANY), 0, 0);
		lin_expect(lr, "NOEXIST update of the toggled key",
			   bpfmap_update_elem(lr->map, &k, &v, BPFMAP_NOEXIST), 0, -EEXIST);
		lin_expect(lr, "EXIST update of the toggled key",
			   bpfmap_update_elem(lr->map, &k, &v, BPFMAP_EXIST), 0, -ENOENT);
		lin_expect(lr, "EXIST update of a resident key",
			   bpfmap_update_elem(lr->map, &other, &v, BPFMAP_EXIST), 0, 0);
		lin_expect(lr, "NOEXIST update of a resident key",
			   bpfmap_update_elem(lr->map, &other, &v, BPFMAP_NOEXIST), -EEXIST, -EEXIST);
		lin_expect(lr, "lookup of a resident key", bpfmap_lookup_elem(lr->map, &other, &out),
			   0, 0);
		lin_expect(lr, "lookup of the toggled key", bpfmap_lookup_elem(lr->map, &k, &out), 0,
			   -ENOENT);
	}
	return NULL;
}

struct lin_cfg {
	uint32_t flags, max;
};

static void test_full_map_linearizable(void **state)
{
	const struct lin_cfg *cfg = *state;
	uint32_t flags = cfg->flags;
	BPFMAP_CREATE_OPTS(opts, .map_flags = flags);
	struct lin_run lr = { .deadline = now_sec() + stress_seconds / 2, .max = cfg->max };
	pthread_t t[3];

	alarm((unsigned)stress_seconds + 120);
	lr.map = bpfmap_create(BPFMAP_TYPE_HASH, "lin_full", 4, 8, lr.max, &opts);
	assert_non_null(lr.map);
	for (uint32_t i = 0; i < lr.max - 1; i++) {
		uint32_t k = LIN_FILL_BASE + i;
		uint64_t v = k;

		assert_int_equal(bpfmap_update_elem(lr.map, &k, &v, BPFMAP_NOEXIST), 0);
	}
	uint32_t k = LIN_KEY, absent = 5;
	uint64_t v = 0;

	assert_int_equal(bpfmap_update_elem(lr.map, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(bpfmap_update_elem(lr.map, &absent, &v, BPFMAP_ANY), -E2BIG);
	assert_int_equal(pthread_create(&t[0], NULL, lin_toggler, &lr), 0);
	assert_int_equal(pthread_create(&t[1], NULL, lin_updater, &lr), 0);
	assert_int_equal(pthread_create(&t[2], NULL, lin_updater, &lr), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	printf("[full map of %u, flags %#x] %" PRIu64 " outcomes checked\n", lr.max, flags,
	       lr.checks);
	if (lr.failures)
		fail_msg("%" PRIu64 " non-linearizable outcomes; first: %s", lr.failures, lr.first);
	/* At rest: full again, the absent key still refused. */
	assert_int_equal(bpfmap_update_elem(lr.map, &absent, &v, BPFMAP_ANY), -E2BIG);
	bpfmap_free(lr.map);
	alarm(0);
}

/*
 * No lost update: the deleter takes LIN_KEY out with lookup_and_delete and
 * puts it back (value 0); the writer stores 1, 2, 3, ... with BPFMAP_EXIST.
 * A store that succeeded belongs to a life of the key that began no later
 * than the writer saw `reinserts` after the store, and each life's last
 * store is what the delete ending it returns.  So a store c with reinserts r
 * read after it must satisfy c <= max(deleted[0..r]) (deleted[cycles] being
 * the value left at the end).  A store that landed in an element after
 * lookup_and_delete copied its value breaks that.
 */
static void *lin_deleter(void *arg)
{
	struct lin_run *lr = arg;
	uint32_t k = LIN_KEY, j;
	uint64_t v;

	for (j = 0; j < LIN_CYCLES && !lin_stopped(lr); j++) {
		int ret = bpfmap_lookup_and_delete_elem(lr->map, &k, &v);

		if (ret) {
			lin_fail(lr, "lookup_and_delete returned %d", ret);
			break;
		}
		lr->deleted[j] = v;
		__atomic_store_n(&lr->reinserts, j + 1, __ATOMIC_RELEASE);
		v = 0;
		ret = bpfmap_update_elem(lr->map, &k, &v, BPFMAP_NOEXIST);
		if (ret) {
			lin_fail(lr, "reinsert returned %d", ret);
			j++;
			break;
		}
	}
	lr->cycles = j;
	__atomic_store_n(&lr->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *lin_writer(void *arg)
{
	struct lin_run *lr = arg;
	uint32_t k = LIN_KEY;

	for (uint64_t c = 1; !__atomic_load_n(&lr->stop, __ATOMIC_ACQUIRE); c++) {
		int ret = bpfmap_update_elem(lr->map, &k, &c, BPFMAP_EXIST);

		if (ret == 0) {
			uint32_t r = __atomic_load_n(&lr->reinserts, __ATOMIC_ACQUIRE);

			lr->max_written[r] = c; /* c only grows */
		} else if (ret != -ENOENT) {
			lin_fail(lr, "EXIST update returned %d", ret);
		}
	}
	return NULL;
}

static void test_no_lost_update(void **state)
{
	uint32_t flags = *(const uint32_t *)*state;
	BPFMAP_CREATE_OPTS(opts, .map_flags = flags);
	struct lin_run lr = { .deadline = now_sec() + stress_seconds / 2 };
	uint32_t k = LIN_KEY;
	uint64_t v = 0, best = 0, lost = 0;
	pthread_t t[2];

	alarm((unsigned)stress_seconds + 120);
	lr.deleted = calloc(LIN_CYCLES + 1, sizeof(*lr.deleted));
	lr.max_written = calloc(LIN_CYCLES + 1, sizeof(*lr.max_written));
	assert_non_null(lr.deleted);
	assert_non_null(lr.max_written);
	lr.map = bpfmap_create(BPFMAP_TYPE_HASH, "lin_lost", 4, 8, 4, &opts);
	assert_non_null(lr.map);
	assert_int_equal(bpfmap_update_elem(lr.map, &k, &v, BPFMAP_NOEXIST), 0);
	assert_int_equal(pthread_create(&t[0], NULL, lin_deleter, &lr), 0);
	assert_int_equal(pthread_create(&t[1], NULL, lin_writer, &lr), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	if (lr.failures)
		fail_msg("%s", lr.first);
	/* The life still running ends with the value left in the map. */
	assert_int_equal(bpfmap_lookup_elem(lr.map, &k, &lr.deleted[lr.cycles]), 0);
	for (uint32_t r = 0; r <= lr.cycles; r++) {
		if (lr.deleted[r] > best)
			best = lr.deleted[r];
		if (lr.max_written[r] > best) {
			if (!lost)
				printf("store %" PRIu64 " (reinserts %u) lost: deletes returned at most %" PRIu64 "\n",
				       lr.max_written[r], r, best);
			lost++;
		}
	}
	printf("[no lost update, flags %#x] %u delete cycles, last store %" PRIu64 "\n", flags,
	       lr.cycles, best);
	bpfmap_free(lr.map);
	free(lr.deleted);
	free(lr.max_written);
	alarm(0);
	if (lost)
		fail_msg("%" PRIu64 " stores lost to lookup_and_delete", lost);
}

/*
 * Copy-outs of a chained map (16-byte keys; 8- and 32-byte values: the
 * section-free copy-outs of tables/chain_lookup.c, word and not) while a
 * churner deletes, reinserts and overwrites keys so fast that elements are
 * reused under the readers, some rounds inside a read-side section so that
 * the pool runs dry and heap elements come and stay.  Every word of a value
 * names its key and its write: a reader must find the resident keys with
 * their own values, and a churned key with one whole value of its own or
 * not at all, never another key's or a torn one.
 */
#define COPY_RESIDENT 16u
#define COPY_CHURNED 16u
#define COPY_MAX 32u
#define COPY_MARK (0xc0ULL << 56)
#define COPY_WORDS_MAX 4

struct copy_run {
	struct lin_run lr;
	uint32_t words; /* the value's 8-byte words */
};

static void copy_key(uint64_t id, uint64_t key[2])
{
	key[0] = id;
	key[1] = 0x5eed;
}

static void copy_value(uint64_t *v, uint32_t words, uint64_t w)
{
	for (uint32_t i = 0; i < words; i++)
		v[i] = w;
}

static void *copy_churner(void *arg)
{
	struct copy_run *cr = arg;
	struct lin_run *lr = &cr->lr;

	for (uint64_t gen = 1; !lin_stopped(lr); gen++) {
		bool section = gen % 8 == 0;

		if (section)
			bpfmap_read_lock();
		for (uint64_t i = 0; i < COPY_CHURNED; i++) {
			uint64_t k[2], v[COPY_WORDS_MAX];

			copy_key(i, k);
			copy_value(v, cr->words, COPY_MARK | i << 32 | (gen & 0x7fffffff));
			lin_expect(lr, "delete of a churned key", bpfmap_delete_elem(lr->map, k), 0,
				   -ENOENT);
			lin_expect(lr, "insert of a churned key",
				   bpfmap_update_elem(lr->map, k, v, BPFMAP_NOEXIST), 0, 0);
			copy_value(v, cr->words, COPY_MARK | i << 32 | 1ULL << 31 | (gen & 0x7fffffff));
			lin_expect(lr, "overwrite of a churned key",
				   bpfmap_update_elem(lr->map, k, v, BPFMAP_EXIST), 0, 0);
		}
		if (section)
			bpfmap_read_unlock();
	}
	return NULL;
}

static void *copy_reader(void *arg)
{
	struct copy_run *cr = arg;
	struct lin_run *lr = &cr->lr;

	while (!lin_stopped(lr)) {
		for (uint64_t i = 0; i < COPY_CHURNED + COPY_RESIDENT; i++) {
			uint64_t k[2], v[COPY_WORDS_MAX] = { 0 };
			bool resident = i >= COPY_CHURNED, torn = false;
			int rc;

			copy_key(resident ? 1000 + i : i, k);
			rc = bpfmap_lookup_elem(lr->map, k, v);
			__atomic_fetch_add(&lr->checks, 1, __ATOMIC_RELAXED);
			for (uint32_t w = 1; w < cr->words; w++)
				torn |= v[w] != v[0];
			if (resident && (rc || torn || v[0] != (COPY_MARK | (1000 + i))))
				lin_fail(lr, "resident key %" PRIu64 ": %d, value %#" PRIx64 "%s", i,
					 rc, v[0], torn ? ", torn" : "");
			if (!resident && rc != -ENOENT &&
			    (rc || torn || (v[0] & ~0xffffffffULL) != (COPY_MARK | i << 32)))
				lin_fail(lr, "churned key %" PRIu64 ": %d, value %#" PRIx64 "%s", i, rc,
					 v[0], torn ? ", torn" : "");
		}
	}
	return NULL;
}

static void test_chain_copy_churn(void **state)
{
	const uint32_t *words = *state;
	struct copy_run cr = { .lr = { .deadline = now_sec() + stress_seconds / 2 },
			       .words = *words };
	struct lin_run *lr = &cr.lr;
	pthread_t t[3];

	alarm((unsigned)stress_seconds + 120);
	lr->map = bpfmap_create(BPFMAP_TYPE_HASH, "copy_churn", 16, 8 * cr.words, COPY_MAX, NULL);
	assert_non_null(lr->map);
	for (uint64_t i = COPY_CHURNED; i < COPY_CHURNED + COPY_RESIDENT; i++) {
		uint64_t k[2], v[COPY_WORDS_MAX];

		copy_key(1000 + i, k);
		copy_value(v, cr.words, COPY_MARK | (1000 + i));
		assert_int_equal(bpfmap_update_elem(lr->map, k, v, BPFMAP_NOEXIST), 0);
	}
	assert_int_equal(pthread_create(&t[0], NULL, copy_churner, &cr), 0);
	assert_int_equal(pthread_create(&t[1], NULL, copy_reader, &cr), 0);
	assert_int_equal(pthread_create(&t[2], NULL, copy_reader, &cr), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("[chained copy-outs under churn, %u-byte values] %" PRIu64 " lookups checked\n",
	       8 * cr.words, lr->checks);
	bpfmap_free(lr->map);
	alarm(0);
	if (lr->failures)
		fail_msg("%" PRIu64 " failures, the first: %s", lr->failures, lr->first);
}

int main(void)
{
	static const struct config cfgs[] = {
		{ "hash prealloc, spin lock", BPFMAP_TYPE_HASH, 0, true, false, false },
		{ "hash no_prealloc, spin lock", BPFMAP_TYPE_HASH, BPFMAP_F_NO_PREALLOC, true, false, false },
		{ "hash prealloc, no lock", BPFMAP_TYPE_HASH, 0, false, false, false },
		{ "hash no_prealloc, no lock", BPFMAP_TYPE_HASH, BPFMAP_F_NO_PREALLOC, false, false, false },
		{ "rhash, spin lock", BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC, true, false, false },
		{ "rhash, no lock", BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC, false, false, false },
		{ "rhash, resizing", BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC, false, true, false },
		{ "lru_hash, common lru", BPFMAP_TYPE_LRU_HASH, 0, false, false, false },
		{ "lru_hash, per-cpu lists", BPFMAP_TYPE_LRU_HASH, BPFMAP_F_NO_COMMON_LRU, false,
		  false, false },
		{ "percpu_hash prealloc", BPFMAP_TYPE_PERCPU_HASH, 0, false, false, false },
		{ "percpu_hash no_prealloc", BPFMAP_TYPE_PERCPU_HASH, BPFMAP_F_NO_PREALLOC, false,
		  false, false },
		{ "lru_percpu_hash, common lru", BPFMAP_TYPE_LRU_PERCPU_HASH, 0, false, false, false },
		{ "hash prealloc, chained table, spin lock", BPFMAP_TYPE_HASH, 0, true, false,
		  true },
		{ "percpu_hash prealloc, chained table", BPFMAP_TYPE_PERCPU_HASH, 0, false, false,
		  true },
	};
	static const uint32_t lin_flags[] = { 0, BPFMAP_F_NO_PREALLOC };
	static const struct lin_cfg lin_cfgs[] = { { 0, LIN_MAX },
						   { BPFMAP_F_NO_PREALLOC, LIN_MAX },
						   { 0, LIN_MAX_SHARDED } };
	static const uint32_t copy_words[] = { 1, 4 };
	struct CMUnitTest tests[sizeof(cfgs) / sizeof(cfgs[0]) + 7];
	size_t n = 0;
	const char *env = getenv("BPFMAP_STRESS_SECONDS");

	if (env && *env) {
		char *end;
		double s = strtod(env, &end);

		if (*end || !(s > 0 && s <= 3600)) {
			fprintf(stderr, "BPFMAP_STRESS_SECONDS: want seconds in (0, 3600]\n");
			return 2;
		}
		stress_seconds = s;
	}
	signal(SIGALRM, watchdog);
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		tests[n++] = (struct CMUnitTest){
			.name = cfgs[i].name,
			.test_func = test_config,
			.initial_state = (void *)&cfgs[i],
		};
	for (size_t i = 0; i < 3; i++)
		tests[n++] = (struct CMUnitTest){
			.name = i == 2	 ? "full map linearizable, prealloc, sharded counts"
				: i == 1 ? "full map linearizable, no_prealloc"
					 : "full map linearizable, prealloc",
			.test_func = test_full_map_linearizable,
			.initial_state = (void *)&lin_cfgs[i],
		};
	for (size_t i = 0; i < 2; i++) {
		tests[n++] = (struct CMUnitTest){
			.name = i ? "no lost update, no_prealloc" : "no lost update, prealloc",
			.test_func = test_no_lost_update,
			.initial_state = (void *)&lin_flags[i],
		};
	}
	for (size_t i = 0; i < 2; i++)
		tests[n++] = (struct CMUnitTest){
			.name = i ? "chained copy-outs under churn, 32-byte values"
				  : "chained copy-outs under churn, 8-byte values",
			.test_func = test_chain_copy_churn,
			.initial_state = (void *)&copy_words[i],
		};
	return _cmocka_run_group_tests("stress", tests, n, NULL, NULL);
}
