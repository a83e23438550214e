/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: operation sequences on one BPFMAP_TYPE_HASH map (one in
 * eight PERCPU_HASH, one in eight RHASH, one in eight LRU_HASH, and of the
 * per-CPU ones one in two LRU_PERCPU_HASH; of the LRU maps one in two
 * with per-CPU lists) against a reference model.
 *
 * The input's first bytes choose a map (key size 1-1024, value size 1-512
 * with or without a struct bpfmap_spin_lock, max_entries 1..64, with 256
 * keys 16..255, or now and then 16384-20000, preallocated or NO_PREALLOC,
 * ZERO_SEED or not, now and then an access flag) and a set of 40 possible
 * keys (one input in eight: 256); the rest is a sequence of operations on
 * those keys: every syscall-view call, the four batch operations with cursor
 * walks, get_next_key walks, the program view inside read-side sections
 * (lookups, bulk lookups, writes through the pointer and deletes under it,
 * bpfmap_update, bpfmap_delete, bpfmap_lookup_percpu, bpfmap_percpu_add),
 * the per-CPU flags (BPFMAP_F_CPU with any CPU number, BPFMAP_F_ALL_CPUS,
 * right or wrong, on single and batch calls), bpfmap_get_info with every
 * kind of info_len, mem_usage, NULL arguments and bad flags, and invalid
 * creations.  The model (which keys are present, their values in the
 * syscall view's layout: a per-CPU value is round_up(value_size, 8) bytes
 * per possible CPU) predicts every return code, errno, copied value and
 * iteration result
 * from the contract in include/bpfmap.h and the README (the kernel's
 * semantics): iteration results are compared as sets (the order is the
 * library's), batch walks are checked against the cursor protocol (whole
 * buckets: -ENOSPC only when nothing was copied and more elements than the
 * capacity remain; 0 only with more to come; -ENOENT once every element was
 * returned; RHASH's element by element: 0 exactly when the room is full,
 * never -ENOSPC, its cursor key_size bytes).  LRU maps evict where the
 * others answer -E2BIG: an insert of a new key into a full map (with
 * per-CPU lists, a full list of this thread's CPU)
 * takes out exactly one other key, which the model learns by looking up
 * every key it holds (the victim is the map's choice); nothing else ever
 * goes, and an update of a present key evicts nothing.  Where the contract leaves the choice between two errors open
 * (e.g. a bad flag on a read-only map), any applicable one is accepted.  A
 * disagreement prints what differed and traps.
 *
 * The harness runs on one thread (a multi-threaded one would not replay
 * deterministically), pinned to CPU 0 (THIS_CPU) for per-CPU maps, so that
 * the model knows which slot the program view and bpfmap_percpu_add() use.
 *
 * The same files build as a libFuzzer target (scripts/fuzz.sh) and, with
 * tests/fuzz/replay.c, as a ctest that replays tests/fuzz/corpus/.
 * FUZZ_TRACE=1 in the environment prints every operation (for reproducers).
 * The model and input decoding are in fuzz_model.c, the single-element
 * calls in fuzz_single.c, the batches in fuzz_batch.c, the program view in
 * fuzz_prog.c, get_info in fuzz_info.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_internal.h"
#include "fuzz_map_ops.h"

/* Preallocated HASH maps get the flat layout (src/tables/flat.c) from
 * bpfmap_create(); some inputs also make one directly with flat_create(), as
 * tests/test_flat.c does, which the committed corpus was generated with. */
#if __has_include("tables/flat.h")
#include "tables/flat.h"
#define FUZZ_FLAT 1
#endif

static const uint32_t key_sizes[] = {1, 3, 4, 8,  13, 16, 64,  2,   12,  32,  100,
				     5, 6, 7, 9, 24, 48, 128, 256, 512, 1024};

struct value_cfg {
	uint32_t size;
	int32_t lock_off;
};

static const struct value_cfg value_cfgs[] = {
	{8, -1}, {24, -1}, {1, -1}, {5, -1}, {13, -1}, {64, -1},
	{8, 0},  {8, 4},   {24, 8}, {16, 12}, {4, 0},  {28, 20},
	{100, -1}, {256, -1}, {512, -1}, {300, -1}, {7, -1},
	{512, 256}, {256, 0}, {100, 96}, {400, 388},
};

/*
 * Preallocated maps of keys over 8 bytes take the chained table below
 * HASH_FLAT_LONG_MIN_ENTRIES (16384, src/maps/hash.c) elements, the flat table with
 * element-index slots from there on.  One such map in 64 (b2 >= BIG_MAP_B2,
 * which would mean 61-64 entries, more than the NKEYS keys: never full either
 * way; with MAX_KEYS, 28-31) gets 16384-20000 entries and so the flat table,
 * still with its keys (up to 256 bytes, values up to 64: to keep it cheap).
 * Only those: creating and freeing one costs about 4 ms under ASan (1 ms for
 * a small map), and big word-key or NO_PREALLOC maps would add nothing new.
 */
#define BIG_MAP_B2 0xfc
static const uint32_t big_max_entries[] = {16384, 16385, 20000, 16384};

static const char *const map_names[] = {NULL, "", "fuzz", "a.b_C9", "fifteen_chars_x"};

/* Access flags a map may get (rarely); the rest of the time none. */
static const uint32_t access_flags[] = {
	BPFMAP_F_RDONLY, BPFMAP_F_WRONLY, BPFMAP_F_WRONLY_PROG,
	BPFMAP_F_RDONLY_PROG | BPFMAP_F_NUMA_NODE,
};

/* A per-CPU map's (NUMA_NODE is -EINVAL there). */
static const uint32_t percpu_access_flags[] = {
	BPFMAP_F_RDONLY_PROG, BPFMAP_F_WRONLY_PROG, BPFMAP_F_RDONLY, BPFMAP_F_WRONLY,
};

/* ---- whole-map checks ---- */

static void op_check_all(struct fuzz *f)
{
	size_t mem = bpfmap_mem_usage(f->map);

	trace("check all (mem_usage %zu)", mem);
	if (mem < (size_t)f->m.count * (f->ks + f->vs) || mem > (1u << 30))
		mismatch("mem_usage %zu bytes for %u elements of %u + %u bytes", mem, f->m.count,
			 f->ks, f->vs);
	if (bpfmap_mem_usage(NULL) != 0)
		mismatch("mem_usage(NULL) is not 0");
	for (unsigned id = 0; id < f->nkeys; id++) {
		if (can_read(f)) {
			int ret = bpfmap_lookup_elem(f->map, f->key[id], f->vbuf);

			expect_ret("lookup_elem (check)", ret, errno, f->m.present[id] ? 0 : -ENOENT);
			if (!ret)
				check_value(f, id, f->vbuf, "lookup_elem (check)");
		}
		bpfmap_read_lock();
		prog_lookup(f, id); /* EPERM on a WRONLY_PROG map */
		if (f->percpu && f->m.present[id] && prog_can_read(f)) {
			/* Every CPU's slot, through the program view, where
			 * the syscall view shows it. */
			for (uint32_t cpu = 0; cpu < f->ncpus; cpu++) {
				uint8_t *p = bpfmap_lookup_percpu(f->map, f->key[id], cpu);

				if (!p)
					mismatch("bpfmap_lookup_percpu(key %u, cpu %u) (check): "
						 "NULL errno %d", id, cpu, errno);
				check_slot(f, id, cpu, p, "bpfmap_lookup_percpu (check)");
			}
		}
		bpfmap_read_unlock();
	}
}

/* NULL arguments: -EINVAL (or -EPERM where the map's access flags also
 * refuse), and nothing changes. */

/* ---- creation ---- */

/* One invalid creation; it must fail with the documented errno. */
static void try_bad_create(const struct fuzz *f, uint8_t which)
{
	/* A HASH map like the input's (an LRU one's per-CPU lists aside). */
	BPFMAP_CREATE_OPTS(o, .map_flags = f->flags & ~BPFMAP_F_NO_COMMON_LRU,
			   .lock_off = f->lock_off);
	enum bpfmap_type type = BPFMAP_TYPE_HASH;
	uint32_t ks = f->ks, vs = f->vs, me = f->max_entries;
	const char *name = NULL;
	int want = EINVAL;
	struct bpfmap *m;

	switch (which % 16) {
	case 0: ks = 0; break;
	case 1: vs = 0; break;
	case 2: me = 0; break;
	case 3: o.map_flags |= 1U << 5; break;
	case 4: o.map_flags |= 1U << (9 + which / 16); break;
	case 5: o.map_flags = (o.map_flags & ~BPFMAP_F_WRONLY) | BPFMAP_F_RDONLY | BPFMAP_F_WRONLY; break;
	case 6: o.map_flags |= BPFMAP_F_NO_COMMON_LRU; break;
	case 7: o.map_extra = 1; break;
	case 8: o.lock_off = (int32_t)(vs >= 8 ? 2 : 1); break;
	case 9: o.lock_off = (int32_t)((vs + 3) & ~3u); break; /* no room for the lock */
	case 10: o.lock_off = -2; break;
	case 11: o.sz = 4; break;
	/* Only the first 15 bytes count (as libbpf keeps them): a bad byte
	 * among them. */
	case 12: name = which & 0x10 ? "bad-name" : "fifteen_chars-x_more"; break;
	case 13: me = BPFMAP_HTAB_MAX_ENTRIES + 1; want = E2BIG; break;
	case 14: vs = BPFMAP_MAX_ELEM_BYTES - ks; o.lock_off = -1; want = E2BIG; break;
	default:
		if (!(which & 0x10)) {
			type = (enum bpfmap_type)(which & 0x20 ? 2 : 0);
			break;
		}
		/* Checked after the name and max_entries, as the kernel. */
		o.lock_off = 0;
		o.map_flags |= which & 0x20 ? BPFMAP_F_RDONLY_PROG : BPFMAP_F_WRONLY_PROG;
		o.map_flags &= ~(which & 0x20 ? BPFMAP_F_WRONLY_PROG : BPFMAP_F_RDONLY_PROG);
		want = vs >= sizeof(struct bpfmap_spin_lock) ? EACCES : EINVAL;
		break;
	}
	errno = 0;
	m = bpfmap_create(type, name, ks, vs, me, &o);
	if (m || errno != want)
		mismatch("bpfmap_create invalid case %u gave %p errno %d, expected errno %d",
			 which % 16, (void *)m, errno, want);
}

/*
 * Maps are freed by worker threads.  bpfmap_free() waits for the reclamation
 * queued so far, which costs a period of liburcu's callback thread (~10 ms)
 * whatever the map; freeing inline would cap the harness near 100 inputs/s.
 * Waits that overlap end together, so a pool of threads frees many maps per
 * period.  A map handed over is never touched again by the harness (the
 * contract of bpfmap_free() is met from another thread).
 */
#define FREE_THREADS 16
#define FREE_QUEUE 256

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, space;
	struct bpfmap *queue[FREE_QUEUE];
	unsigned head, len, busy;
	bool started, failed;
} freeq = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.space = PTHREAD_COND_INITIALIZER,
};

static void *free_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&freeq.lock);
	for (;;) {
		while (!freeq.len)
			pthread_cond_wait(&freeq.work, &freeq.lock);
		struct bpfmap *map = freeq.queue[freeq.head];

		freeq.head = (freeq.head + 1) % FREE_QUEUE;
		freeq.len--;
		freeq.busy++;
		pthread_mutex_unlock(&freeq.lock);
		bpfmap_free(map);
		pthread_mutex_lock(&freeq.lock);
		freeq.busy--;
		pthread_cond_broadcast(&freeq.space);
	}
	return NULL;
}

/* Called with freeq.lock held. */
static void start_free_workers(void)
{
	pthread_attr_t attr;

	freeq.started = true;
	if (pthread_attr_init(&attr)) {
		freeq.failed = true;
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (unsigned i = 0; i < FREE_THREADS; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, free_worker, NULL)) {
			freeq.failed = i == 0;
			break;
		}
	}
	pthread_attr_destroy(&attr);
}

static void free_later(struct bpfmap *map)
{
	pthread_mutex_lock(&freeq.lock);
	if (!freeq.started)
		start_free_workers();
	if (freeq.failed) {
		pthread_mutex_unlock(&freeq.lock);
		bpfmap_free(map);
		return;
	}
	while (freeq.len == FREE_QUEUE)
		pthread_cond_wait(&freeq.space, &freeq.lock);
	freeq.queue[(freeq.head + freeq.len) % FREE_QUEUE] = map;
	freeq.len++;
	pthread_cond_signal(&freeq.work);
	pthread_mutex_unlock(&freeq.lock);
}

void fuzz_map_ops_flush(void)
{
	pthread_mutex_lock(&freeq.lock);
	while (freeq.len || freeq.busy)
		pthread_cond_wait(&freeq.space, &freeq.lock);
	pthread_mutex_unlock(&freeq.lock);
}

/* This thread on CPU 0 (THIS_CPU), so that its program view is CPU 0's
 * slot and its per-CPU LRU list CPU 0's. */
static bool pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(THIS_CPU, &set);
	return !sched_setaffinity(0, sizeof(set), &set) && sched_getcpu() == (int)THIS_CPU;
}

/* The model lays per-CPU values out as CPUs 0..n-1 at their number's slot,
 * which holds when the possible CPUs have no gap ("0" or "0-<n-1>"); on a
 * machine where they do, per-CPU maps are not fuzzed. */
static bool cpus_contiguous(int n)
{
	static int known = -1;
	FILE *fp;
	int hi = -1;
	char tail = 0;

	if (known >= 0)
		return known;
	fp = fopen("/sys/devices/system/cpu/possible", "r");
	known = 0;
	if (fp) {
		int r = fscanf(fp, "0-%d%c", &hi, &tail);

		if (r <= 0) {
			rewind(fp);
			r = fscanf(fp, "0%c", &tail) == 1 ? 2 : 0;
			hi = 0;
		}
		known = r == 2 && tail == '\n' && hi == n - 1;
		fclose(fp);
	}
	return known;
}

static bool setup(struct fuzz *f, struct input *in)
{
	uint8_t b0 = u8(in), b1 = u8(in), b2 = u8(in), b3 = u8(in), b4 = u8(in), b5 = u8(in);
	const struct value_cfg *vc = &value_cfgs[b1 % (sizeof(value_cfgs) / sizeof(*value_cfgs))];
	int ncpus = bpfmap_num_possible_cpus();

	if (ncpus <= 0)
		mismatch("bpfmap_num_possible_cpus() gave %d", ncpus);
	f->ncpus = (uint32_t)ncpus;
	f->ks = key_sizes[b0 % (sizeof(key_sizes) / sizeof(*key_sizes))];
	f->vs = f->pvs = vc->size;
	f->slot = (f->pvs + 7) / 8 * 8;
	f->lock_off = vc->lock_off;
	/* One input in eight: 256 keys, and maps of 16-255 entries fill. */
	f->nkeys = (b5 & 7) == 7 ? MAX_KEYS : NKEYS;
	/* One map in eight without a spin lock: PERCPU_HASH, its syscall
	 * values a slot per CPU, this thread pinned to CPU 0. */
	f->percpu = (b3 & 0x1c) == 0x0c && f->lock_off < 0 && cpus_contiguous(ncpus) &&
		    pin_cpu0();
	if (f->percpu)
		f->vs = f->slot * f->ncpus;
	/* One map in eight RHASH (always NO_PREALLOC, never ZERO_SEED). */
	f->rhash = !f->percpu && (b3 & 0x1c) == 0x10;
	/* One in eight LRU_HASH without a spin lock, and one per-CPU map in
	 * two LRU_PERCPU_HASH: preallocated; an access flag only on per-CPU
	 * ones (b5, below). */
	f->lru = f->percpu ? (b3 & 0x20) != 0 : (b3 & 0x1c) == 0x14 && f->lock_off < 0;
	f->type = f->percpu ? (f->lru ? BPFMAP_TYPE_LRU_PERCPU_HASH : BPFMAP_TYPE_PERCPU_HASH)
		  : f->lru   ? BPFMAP_TYPE_LRU_HASH
		  : f->rhash ? BPFMAP_TYPE_RHASH
			     : BPFMAP_TYPE_HASH;
	f->cs = f->rhash ? f->ks : 4;
	f->max_entries = f->nkeys == MAX_KEYS ? 16 + b2 % (MAX_KEYS - 16) : 1 + b2 % 64;
	f->flags = 0;
	if (((b3 & 1) && !f->lru) || f->rhash)
		f->flags |= BPFMAP_F_NO_PREALLOC;
	else if (b2 >= BIG_MAP_B2 && f->ks > 8 && f->ks <= 256 && f->vs <= 64)
		f->max_entries = big_max_entries[b2 - BIG_MAP_B2];
	if ((b3 & 2) && !f->rhash)
		f->flags |= BPFMAP_F_ZERO_SEED;
	if ((b3 & 0x1c) == 0x1c) { /* one map in eight: an access flag */
		f->flags |= access_flags[(b3 >> 5) % 4];
		/* Programs' access restricted beside a spin lock: the
		 * kernel's EACCES (try_bad_create). */
		if (f->lock_off >= 0)
			f->flags &= ~(BPFMAP_F_RDONLY_PROG | BPFMAP_F_WRONLY_PROG);
	}
	if (f->percpu && (b5 & 0x38) == 0x38) /* a per-CPU map in eight: one too */
		f->flags |= percpu_access_flags[b5 >> 6];
	/* One LRU map in two with per-CPU lists: this thread, on CPU 0, fills
	 * CPU 0's, of max_entries / ncpus (max_entries rounded up to a
	 * multiple of the CPUs), which evicts from itself once full. */
	f->lru_cap = f->max_entries;
	if (f->lru && (b3 & 0x40) && pin_cpu0()) {
		f->flags |= BPFMAP_F_NO_COMMON_LRU;
		f->lru_cap = (f->max_entries + f->ncpus - 1) / f->ncpus;
	}
	for (unsigned id = 0; id < f->nkeys; id++) {
		f->key[id] = malloc(f->ks);
		f->m.val[id] = malloc(f->vs);
		if (!f->key[id] || !f->m.val[id])
			abort();
	}
	f->vbuf = malloc(f->vs);
	f->sbuf = malloc(f->pvs);
	f->kbuf = malloc(f->ks);
	f->abuf = malloc(2 * (size_t)f->vs + f->ks);
	if (!f->vbuf || !f->sbuf || !f->kbuf || !f->abuf)
		abort();
	make_keys(f, b4 & 3);
	if (b4 & 0x80)
		try_bad_create(f, b4 >> 2);

	BPFMAP_CREATE_OPTS(o, .map_flags = f->flags, .lock_off = f->lock_off);
	f->name = map_names[(b4 >> 2) % (sizeof(map_names) / sizeof(*map_names))];

#ifdef FUZZ_FLAT
	f->flat = (b3 & 0x80) && !(f->flags & BPFMAP_F_NO_PREALLOC) && !f->percpu && !f->lru;
#endif
	trace("create %s%s key_size %u value_size %u lock_off %d max_entries %u flags %#x",
	      type_name(f), f->flat ? " (flat layout)" : "", f->ks, f->pvs,
	      f->lock_off, f->max_entries, f->flags);
#ifdef FUZZ_FLAT
	if (f->flat) {
		struct map_params p = {
			.type = BPFMAP_TYPE_HASH,
			.key_size = f->ks,
			.value_size = f->vs,
			.max_entries = f->max_entries,
			.map_flags = f->flags,
			.lock_off = f->lock_off,
		};
		int err = 0;

		f->map = flat_create(&p, &err);
		errno = -err;
		f->name = NULL; /* made without one */
	} else
#endif
		f->map = bpfmap_create(f->type, f->name, f->ks, f->pvs, f->max_entries, &o);
	if (!f->map)
		mismatch("bpfmap_create of a valid map failed: errno %d", errno);
#ifdef FUZZ_FLAT
	trace("  layout: %s", f->map->ops == &flat_ops ? "flat" : "chained");
#endif
	return true;
}

static void teardown(struct fuzz *f)
{
	if (f->map)
		free_later(f->map);
	for (unsigned id = 0; id < f->nkeys; id++) {
		free(f->key[id]);
		free(f->m.val[id]);
	}
	free(f->vbuf);
	free(f->sbuf);
	free(f->kbuf);
	free(f->abuf);
}

enum op {
	OP_UPDATE,
	OP_UPDATE2, /* updates twice as often: maps fill up */
	OP_LOOKUP,
	OP_DELETE,
	OP_LOOKUP_AND_DELETE,
	OP_GET_NEXT_KEY,
	OP_LOOKUP_BATCH,
	OP_LOOKUP_AND_DELETE_BATCH,
	OP_UPDATE_BATCH,
	OP_DELETE_BATCH,
	OP_PROG_VIEW,
	OP_PROG_WRITE,
	OP_PROG_WRITE2, /* program-view writes and per-CPU calls twice as often */
	OP_GET_INFO,
	OP_CHECK_ALL,
	OP_NULL_ARGS,
	OP_COUNT
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {.p = data, .n = size};
	struct fuzz f = {0};
	static int trace_checked;

	if (!trace_checked) {
		const char *t = getenv("FUZZ_TRACE");

		trace_on = t && *t && *t != '0';
		trace_checked = 1;
	}
	if (size < 6)
		return 0;
	cur_fuzz = &f;
	setup(&f, &in);
	while (more(&in) && f.op_index < MAX_OPS) {
		f.op_index++;
		switch ((enum op)(u8(&in) % OP_COUNT)) {
		case OP_UPDATE:
		case OP_UPDATE2:
			op_update(&f, &in);
			break;
		case OP_LOOKUP:
			op_lookup(&f, &in);
			break;
		case OP_DELETE:
			op_delete(&f, &in, false);
			break;
		case OP_LOOKUP_AND_DELETE:
			op_delete(&f, &in, true);
			break;
		case OP_GET_NEXT_KEY:
			op_get_next_key(&f, &in);
			break;
		case OP_LOOKUP_BATCH:
			op_lookup_batch(&f, &in, false);
			break;
		case OP_LOOKUP_AND_DELETE_BATCH:
			op_lookup_batch(&f, &in, true);
			break;
		case OP_UPDATE_BATCH:
			op_update_batch(&f, &in);
			break;
		case OP_DELETE_BATCH:
			op_delete_batch(&f, &in);
			break;
		case OP_PROG_VIEW:
			op_prog_view(&f, &in);
			break;
		case OP_PROG_WRITE:
		case OP_PROG_WRITE2:
			op_prog_write(&f, &in);
			break;
		case OP_GET_INFO:
			op_get_info(&f, &in);
			break;
		case OP_CHECK_ALL:
			op_check_all(&f);
			break;
		default:
			op_null_args(&f, &in);
			break;
		}
	}
	op_check_all(&f);
	teardown(&f);
	cur_fuzz = NULL;
	return 0;
}

