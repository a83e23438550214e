// SPDX-License-Identifier: BSD-2-Clause
/*
 * htab-mem and rhtab-mem: the selftests' htab-mem use cases, for throughput
 * and memory.  A HASH map, u32 key, --value-size value (default 8),
 * NO_PREALLOC unless --preallocated, max_entries = max(8192, 64 x CPUs).
 * Work comes in batches of 64 operations on keys p + i x nr_producers (so
 * producers never share keys):
 *   overwrite            64 updates (BPF_ANY) of the producer's keys;
 *   batch_add_batch_del  64 updates then 64 deletes (counts as 2 batches);
 *   add_del_on_diff_cpu  producer pairs: the even one adds 64 keys (NOEXIST),
 *                        the odd one deletes them, in lock-step, so elements
 *                        are freed on another CPU than the one that took them.
 * The rate is batches per second per producer over wall-clock time (as the
 * selftest reports it, so the kernel figure includes its getpgid trigger);
 * memory is bpfmap_mem_usage() for bpfmap and the map's fdinfo memlock for
 * the kernel, at the end and at its peak over the samples.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfmap.h>

#include "bench.h"
#include "kernel_backend.h"
#include "output.h"
#include "stats.h"

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

enum use_case { UC_OVERWRITE, UC_BATCH_ADD_BATCH_DEL, UC_ADD_DEL_ON_DIFF_CPU };

static const char *const use_case_names[] = {
	[UC_OVERWRITE] = "overwrite",
	[UC_BATCH_ADD_BATCH_DEL] = "batch_add_batch_del",
	[UC_ADD_DEL_ON_DIFF_CPU] = "add_del_on_diff_cpu",
};

static int use_case_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(use_case_names) / sizeof(use_case_names[0]); i++)
		if (!strcmp(s, use_case_names[i]))
			return (int)i;
	return -1;
}

static uint32_t htab_mem_max_entries(void)
{
	int cpus = bpfmap_num_possible_cpus();
	uint32_t n = cpus > 0 ? 64u * (uint32_t)cpus : 0;

	return n > 8192 ? n : 8192;
}

/*
 * Lock-step for add_del_on_diff_cpu: pair p's phase is even when the adder
 * may go, odd when the deleter may.  Returns false when asked to stop.
 */
static bool wait_phase(atomic_uint *phase, unsigned parity, atomic_bool *stop)
{
	for (unsigned spins = 0;
	     (atomic_load_explicit(phase, memory_order_acquire) & 1u) != parity; spins++) {
		if (atomic_load_explicit(stop, memory_order_relaxed))
			return false;
		/* Spin a while (the partner is usually on another CPU and
		 * about done), then yield in case it shares ours. */
		if (spins < 128)
			cpu_pause();
		else
			sched_yield();
	}
	return true;
}

struct htab_mem_common {
	enum use_case uc;
	int nr;
	atomic_uint phase[BENCH_MAX_PRODUCERS / 2];
	double peak;
};

static void common_init(struct htab_mem_common *c, const struct bench_args *a, int nr)
{
	c->uc = (enum use_case)use_case_parse(a->use_case);
	c->nr = nr;
	for (int i = 0; i < BENCH_MAX_PRODUCERS / 2; i++)
		atomic_init(&c->phase[i], 0);
	c->peak = 0;
}

/* Keys of producer @idx: base + i * stride. */
static void keys_of(const struct htab_mem_common *c, int idx, uint32_t *base, uint32_t *stride)
{
	if (c->uc == UC_ADD_DEL_ON_DIFF_CPU) {
		/* Both members of a pair work on the pair's keys. */
		*base = (uint32_t)idx / 2;
		*stride = (uint32_t)c->nr / 2;
	} else {
		*base = (uint32_t)idx;
		*stride = (uint32_t)c->nr;
	}
}

/* ---- library backend ---- */

struct htab_mem_lib {
	struct htab_mem_common c;
	struct bpfmap *map;
	uint32_t value_size;
	struct bench_cpu_stats stats[BENCH_MAX_PRODUCERS];
};

static void *htab_mem_lib_setup(const struct bench_args *a, const struct bench_env *env,
				struct cell_result *r)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = a->map_flags);
	struct htab_mem_lib *st = aligned_alloc(64, sizeof(*st));

	if (!st) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return NULL;
	}
	memset(st, 0, sizeof(*st));
	common_init(&st->c, a, env->producers);
	st->value_size = a->value_size;
	st->map = bpfmap_create(a->map_type, "htab_mem", 4, a->value_size, a->max_entries, &opts);
	if (!st->map) {
		snprintf(r->error, sizeof(r->error), "bpfmap_create(%s): %s",
			 map_type_name(a->map_type), strerror(errno));
		free(st);
		return NULL;
	}
	return st;
}

static uint64_t lib_batch(struct bpfmap *map, const void *value, uint32_t base, uint32_t stride,
			  bool add, uint64_t flags)
{
	uint64_t errors = 0;

	for (uint32_t i = 0; i < HTAB_MEM_BATCH; i++) {
		uint32_t key = base + i * stride;

		if (add ? bpfmap_update_elem(map, &key, value, flags) : bpfmap_delete_elem(map, &key))
			errors++;
	}
	return errors;
}

static void htab_mem_lib_producer(void *arg, int idx, int nr, atomic_bool *stop)
{
	struct htab_mem_lib *st = arg;
	atomic_uint *phase = &st->c.phase[idx / 2];
	uint32_t base, stride;
	void *value = calloc(1, st->value_size);

	(void)nr;
	if (!value)
		return;
	keys_of(&st->c, idx, &base, &stride);
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		uint64_t t0 = now_ns(), errors = 0, batches = 1;

		switch (st->c.uc) {
		case UC_OVERWRITE:
			errors = lib_batch(st->map, value, base, stride, true, BPFMAP_ANY);
			break;
		case UC_BATCH_ADD_BATCH_DEL:
			errors = lib_batch(st->map, value, base, stride, true, BPFMAP_ANY);
			errors += lib_batch(st->map, value, base, stride, false, 0);
			batches = 2;
			break;
		case UC_ADD_DEL_ON_DIFF_CPU:
			if (!wait_phase(phase, (unsigned)idx & 1u, stop))
				goto out;
			t0 = now_ns();
			errors = lib_batch(st->map, value, base, stride, !(idx & 1), BPFMAP_NOEXIST);
			atomic_fetch_add_explicit(phase, 1, memory_order_release);
			break;
		}
		seq_stats_add(&st->stats[idx], batches, now_ns() - t0, errors);
	}
out:
	free(value);
}

static void htab_mem_lib_measure(void *arg, struct counters *c)
{
	struct htab_mem_lib *st = arg;

	for (int i = 0; i < BENCH_MAX_PRODUCERS; i++)
		stats_read(&st->stats[i], c);
}

static void htab_mem_lib_sample(void *arg, struct cell_result *r)
{
	struct htab_mem_lib *st = arg;
	double m = (double)bpfmap_mem_usage(st->map);

	(void)r;
	if (m > st->c.peak)
		st->c.peak = m;
}

static void htab_mem_lib_finish(void *arg, struct cell_result *r)
{
	struct htab_mem_lib *st = arg;

	htab_mem_lib_sample(arg, r);
	r->unit = "batch";
	r->mem_bytes = (double)bpfmap_mem_usage(st->map);
	r->mem_peak_bytes = st->c.peak;
}

static void htab_mem_lib_teardown(void *arg)
{
	struct htab_mem_lib *st = arg;

	bpfmap_free(st->map);
	free(st);
}

static const struct cell_ops htab_mem_lib_ops = {
	.backend = "lib",
	.setup = htab_mem_lib_setup,
	.producer = htab_mem_lib_producer,
	.measure = htab_mem_lib_measure,
	.sample = htab_mem_lib_sample,
	.finish = htab_mem_lib_finish,
	.teardown = htab_mem_lib_teardown,
	.wall_clock = true,
};

/* ---- kernel backend ---- */

struct htab_mem_kern {
	struct htab_mem_common c;
	struct kbpf k;
	struct htab_mem_state *s;
	int map_fd;
};

static int htab_mem_configure(struct bpf_object *obj, void *arg, char *err, size_t len)
{
	const struct bench_args *a = arg;
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "htab");

	if (!map || bpf_map__set_type(map, a->map_type) ||
	    bpf_map__set_value_size(map, a->value_size) ||
	    bpf_map__set_max_entries(map, a->max_entries) ||
	    bpf_map__set_map_flags(map, a->map_flags)) {
		snprintf(err, len, "cannot size the map");
		return -EINVAL;
	}
	return 0;
}

static void *htab_mem_kern_setup(const struct bench_args *a, const struct bench_env *env,
				 struct cell_result *r)
{
	struct htab_mem_kern *st;

	if (a->value_size > HTAB_MEM_MAX_VALUE) {
		snprintf(r->error, sizeof(r->error),
			 "the kernel side handles values up to %d bytes", HTAB_MEM_MAX_VALUE);
		return NULL;
	}
	if (env->producers > HTAB_MEM_MAX_SLOTS) {
		snprintf(r->error, sizeof(r->error), "the kernel side handles up to %d producers",
			 HTAB_MEM_MAX_SLOTS);
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return NULL;
	}
	common_init(&st->c, a, env->producers);
	if (kbpf_load(&st->k, bpf_obj_htab_mem, bpf_obj_htab_mem_len, "htab_mem",
		      htab_mem_configure, (void *)a, r->error, sizeof(r->error))) {
		free(st);
		return NULL;
	}
	if (st->k.bss_size < sizeof(*st->s)) {
		snprintf(r->error, sizeof(r->error), ".bss is %zu bytes, expected %zu",
			 st->k.bss_size, sizeof(*st->s));
		kbpf_close(&st->k);
		free(st);
		return NULL;
	}
	st->s = st->k.bss;
	st->map_fd = kbpf_map_fd(&st->k, "htab");
	for (int i = 0; i < env->producers; i++) {
		struct htab_mem_slot *slot = &st->s->slot[i];

		keys_of(&st->c, i, &slot->key_base, &slot->key_stride);
		switch (st->c.uc) {
		case UC_OVERWRITE: slot->op = HTAB_MEM_OP_OVERWRITE; break;
		case UC_BATCH_ADD_BATCH_DEL: slot->op = HTAB_MEM_OP_ADD_DEL; break;
		case UC_ADD_DEL_ON_DIFF_CPU:
			slot->op = i & 1 ? HTAB_MEM_OP_DEL : HTAB_MEM_OP_ADD;
			break;
		}
	}
	st->s->nr_slots = (uint32_t)env->producers;
	snprintf(r->note, sizeof(r->note), "%s", st->k.note);
	kbpf_gate_open(&st->s->gate);
	return st;
}

static void htab_mem_kern_producer(void *arg, int idx, int nr, atomic_bool *stop)
{
	struct htab_mem_kern *st = arg;
	atomic_uint *phase = &st->c.phase[idx / 2];

	(void)nr;
	/* The program finds this thread's slot by its id. */
	__atomic_store_n(&st->s->slot[idx].tid, (uint32_t)gettid(), __ATOMIC_RELEASE);
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		if (st->c.uc == UC_ADD_DEL_ON_DIFF_CPU) {
			if (!wait_phase(phase, (unsigned)idx & 1u, stop))
				return;
			kbpf_trigger();
			atomic_fetch_add_explicit(phase, 1, memory_order_release);
		} else {
			kbpf_trigger();
		}
	}
}

static void htab_mem_kern_measure(void *arg, struct counters *c)
{
	struct htab_mem_kern *st = arg;

	for (int i = 0; i < HTAB_MEM_MAX_SLOTS; i++)
		stats_read(&st->s->slot[i].stats, c);
}

static void htab_mem_kern_sample(void *arg, struct cell_result *r)
{
	struct htab_mem_kern *st = arg;
	double m = (double)kbpf_memlock(st->map_fd);

	(void)r;
	if (m > st->c.peak)
		st->c.peak = m;
}

static void htab_mem_kern_finish(void *arg, struct cell_result *r)
{
	struct htab_mem_kern *st = arg;
	long long m = kbpf_memlock(st->map_fd);

	htab_mem_kern_sample(arg, r);
	r->unit = "batch";
	if (m >= 0)
		r->mem_bytes = (double)m;
	if (st->c.peak > 0)
		r->mem_peak_bytes = st->c.peak;
}

static void htab_mem_kern_teardown(void *arg)
{
	struct htab_mem_kern *st = arg;

	kbpf_gate_close(&st->s->gate);
	kbpf_close(&st->k);
	free(st);
}

static const struct cell_ops htab_mem_kernel_ops = {
	.backend = "kernel",
	.setup = htab_mem_kern_setup,
	.producer = htab_mem_kern_producer,
	.measure = htab_mem_kern_measure,
	.sample = htab_mem_kern_sample,
	.finish = htab_mem_kern_finish,
	.teardown = htab_mem_kern_teardown,
	.wall_clock = true,
};

/* ---- the benchmarks ---- */

static int htab_mem_run_type(const struct bench *b, const struct bench_env *env,
			     struct bench_args *a, bool rhash)
{
	struct bench_args ka;

	if (!a->use_case[0])
		snprintf(a->use_case, sizeof(a->use_case), "%s", use_case_names[UC_OVERWRITE]);
	if (use_case_parse(a->use_case) < 0) {
		fprintf(stderr, "%s: --use-case must be overwrite, batch_add_batch_del or "
				"add_del_on_diff_cpu\n", b->name);
		return 2;
	}
	if (use_case_parse(a->use_case) == UC_ADD_DEL_ON_DIFF_CPU && env->producers % 2) {
		fprintf(stderr, "%s: add_del_on_diff_cpu needs an even -p (adder/deleter pairs)\n",
			b->name);
		return 2;
	}
	if (a->key_size && a->key_size != 4) {
		fprintf(stderr, "%s: the key is a u32 (--key_size 4)\n", b->name);
		return 2;
	}
	/* As the selftest's: the map is fixed but for --preallocated; flags
	 * it would override are refused rather than ignored. */
	if (a->map_flags || (a->map_type && a->map_type != BPFMAP_TYPE_HASH)) {
		fprintf(stderr, "%s: --map_type and --map_flags do not apply (the map is %s; "
				"--preallocated chooses its allocation)\n",
			b->name, rhash ? "RHASH" : "HASH");
		return 2;
	}
	if (rhash && a->preallocated) {
		fprintf(stderr, "%s: a resizable map is never preallocated\n", b->name);
		return 2;
	}
	a->key_size = 4;
	if (!a->value_size)
		a->value_size = 8;
	if (!a->max_entries)
		a->max_entries = htab_mem_max_entries();
	a->map_type = rhash ? BPFMAP_TYPE_RHASH : BPFMAP_TYPE_HASH;
	a->map_flags = a->preallocated ? 0 : BPFMAP_F_NO_PREALLOC;
	ka = *a;
	ka.map_type = BPFMAP_TYPE_HASH; /* the kernel has no RHASH */
	return run_pair(b, env, a, &ka, &htab_mem_lib_ops, &htab_mem_kernel_ops, a->use_case);
}

static int htab_mem_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	return htab_mem_run_type(b, env, a, false);
}

static int rhtab_mem_run(const struct bench *b, const struct bench_env *env,
			 struct bench_args *a)
{
	return htab_mem_run_type(b, env, a, true);
}

const struct bench bench_htab_mem = {
	.name = "htab-mem",
	.summary = "htab-mem use cases (--use-case), batches/s per producer and memory",
	.run = htab_mem_run,
};

const struct bench bench_rhtab_mem = {
	.name = "rhtab-mem",
	.summary = "the same on RHASH (kernel column: its fixed HASH)",
	.run = rhtab_mem_run,
	.available = bench_rhash_available,
};
