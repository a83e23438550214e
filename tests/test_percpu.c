/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PERCPU_HASH and LRU_PERCPU_HASH: the per-CPU value layout of the syscall
 * view, the program view (lookup, update, delete, lookup_percpu), the
 * BPFMAP_F_CPU and BPFMAP_F_ALL_CPUS flags with every rule of their
 * checks, and the batch operations in the per-CPU layout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync/rcu.h"
#include "tables/chain.h"
#include "tables/flat.h"
#include "util/cpu.h"
#include "test_util.h"

#ifdef __SANITIZE_THREAD__
#define REUSES_AT_ONCE 0
#else
#define REUSES_AT_ONCE 1
#endif

static uint32_t nr_cpus;
/* --small (the Valgrind run): the churn tests' rounds / scale. */
static uint32_t scale = 1;

/* Each type on the table it gets (the flat one, for these maps) and on the
 * chained one (BPFMAP_TABLE=chain, set around each test). */
struct variant {
	enum bpfmap_type type;
	bool chain;
};

static const struct variant variants[] = {
	{ BPFMAP_TYPE_PERCPU_HASH, false },
	{ BPFMAP_TYPE_LRU_PERCPU_HASH, false },
	{ BPFMAP_TYPE_PERCPU_HASH, true },
	{ BPFMAP_TYPE_LRU_PERCPU_HASH, true },
};

static enum bpfmap_type type_of(void **state)
{
	return ((const struct variant *)*state)->type;
}

static int variant_setup(void **state)
{
	if (((const struct variant *)*state)->chain)
		setenv("BPFMAP_TABLE", "chain", 1);
	return test_close_sections(state);
}

static int variant_teardown(void **state)
{
	(void)state;
	unsetenv("BPFMAP_TABLE");
	return 0;
}

/* A per-CPU buffer of value_size-byte values: slot i at i * round_up(vs, 8),
 * each byte of slot i set to (seed + i + byte index), padding included. */
static void *fill_slots(uint32_t vs, uint8_t seed)
{
	uint32_t stride = (vs + 7) / 8 * 8;
	uint8_t *buf = malloc((size_t)stride * nr_cpus);

	assert_non_null(buf);
	for (uint32_t i = 0; i < nr_cpus; i++)
		for (uint32_t b = 0; b < stride; b++)
			buf[(size_t)i * stride + b] = (uint8_t)(seed + i * 31 + b);
	return buf;
}

static void test_create_checks(void **state)
{
	BPFMAP_CREATE_OPTS(lock, .lock_off = 0);
	enum bpfmap_type t = type_of(state);
	struct bpfmap *map;

	/* A slot of at most 32 KiB (round_up(value_size, 8)). */
	map = bpfmap_create(t, NULL, 4, 32768, 4, NULL);
	assert_non_null(map);
	bpfmap_free(map);
	errno = 0;
	assert_null(bpfmap_create(t, NULL, 4, 32769, 4, NULL));
	assert_int_equal(errno, E2BIG);
	/* No spin lock in a per-CPU value, as the kernel's map_check_btf. */
	errno = 0;
	assert_null(bpfmap_create(t, NULL, 4, 8, 4, &lock));
	assert_int_equal(errno, EOPNOTSUPP);
	if (t == BPFMAP_TYPE_PERCPU_HASH) {
		BPFMAP_CREATE_OPTS(lru_flag, .map_flags = BPFMAP_F_NO_COMMON_LRU);

		errno = 0;
		assert_null(bpfmap_create(t, NULL, 4, 8, 4, &lru_flag));
		assert_int_equal(errno, EINVAL);
	}
}

/* The syscall view copies every slot in and out, padding included. */
static void test_syscall_layout(void **state)
{
	static const uint32_t sizes[] = { 1, 4, 8, 12, 16, 60, 100 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t vs = sizes[s], stride = (vs + 7) / 8 * 8;
		struct bpfmap *map = must_create(type_of(state), 8, vs, 64, 0);
		uint8_t *in = fill_slots(vs, 1), *in2 = fill_slots(vs, 77);

		/* The table the variant asks for (values of 128 bytes and more
		 * per element: the flat table's elements). */
		assert_int_equal(map->ops == &flat_percpu_ops,
				 !((const struct variant *)*state)->chain);
		uint8_t *out = calloc(nr_cpus, stride);
		uint64_t key = 42;

		assert_int_equal(bpfmap_update_elem(map, &key, in, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
		assert_memory_equal(out, in, (size_t)stride * nr_cpus);
		/* An update of a present key is in place: the program view's
		 * pointer sees the new bytes. */
		bpfmap_read_lock();
		pin_to(0);
		uint8_t *p = bpfmap_lookup_percpu(map, &key, 0);
		assert_non_null(p);
		assert_int_equal(bpfmap_update_elem(map, &key, in2, BPFMAP_EXIST), 0);
		assert_memory_equal(p, in2, vs);
		bpfmap_read_unlock();
		memset(out, 0, (size_t)stride * nr_cpus);
		assert_int_equal(bpfmap_lookup_and_delete_elem(map, &key, out), 0);
		assert_memory_equal(out, in2, (size_t)stride * nr_cpus);
		assert_errno(bpfmap_lookup_elem(map, &key, out), ENOENT);
		free(in);
		free(in2);
		free(out);
		bpfmap_free(map);
	}
	test_unpin();
}

/* The program view: the calling CPU's slot; lookup_percpu any CPU's. */
static void test_program_view(void **state)
{
	enum bpfmap_type t = type_of(state);
	struct bpfmap *map = must_create(t, 4, 8, 16, 0), *hash;
	uint64_t *in = fill_slots(8, 3), out[1024], one = 0x1111, two = 0x2222;
	uint32_t key = 7, absent = 8;

	assert_true(nr_cpus <= 1024);
	assert_int_equal(bpfmap_update_elem(map, &key, in, BPFMAP_ANY), 0);
	bpfmap_read_lock();
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
		uint64_t *p, *q;

		pin_to(cpu);
		p = bpfmap_lookup(map, &key);
		q = bpfmap_lookup_percpu(map, &key, cpu);
		assert_non_null(p);
		assert_ptr_equal(p, q);
		assert_int_equal(*p, in[cpu]);
		assert_ptr_equal(bpfmap_lookup_func(map)(map, &key), p);
		__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
	}
	errno = 0;
	assert_null(bpfmap_lookup_percpu(map, &key, nr_cpus));
	assert_int_equal(errno, ERANGE);
	errno = 0;
	assert_null(bpfmap_lookup_percpu(map, &absent, 0));
	assert_int_equal(errno, ENOENT);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
		assert_int_equal(out[cpu], in[cpu] + 1);

	/* A program's update: its own CPU's slot; a new element's others 0. */
	pin_to(nr_cpus - 1);
	assert_int_equal(bpfmap_update(map, &key, &one, BPFMAP_EXIST), 0);
	assert_int_equal(bpfmap_update(map, &absent, &two, BPFMAP_NOEXIST), 0);
	assert_errno(bpfmap_update(map, &absent, &two, BPFMAP_NOEXIST), EEXIST);
	assert_errno(bpfmap_update(map, &key, &two, BPFMAP_F_LOCK), EINVAL);
	assert_errno(bpfmap_update(map, &key, &two, BPFMAP_F_CPU), EINVAL);
	assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
		assert_int_equal(out[cpu], cpu == nr_cpus - 1 ? one : in[cpu] + 1);
	assert_int_equal(bpfmap_lookup_elem(map, &absent, out), 0);
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
		assert_int_equal(out[cpu], cpu == nr_cpus - 1 ? two : 0);
	assert_int_equal(bpfmap_delete(map, &absent), 0);
	assert_errno(bpfmap_delete(map, &absent), ENOENT);
	test_unpin();
	bpfmap_free(map);

	/* lookup_percpu is for per-CPU maps only. */
	hash = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, 0);
	assert_int_equal(bpfmap_update_elem(hash, &key, &one, 0), 0);
	errno = 0;
	assert_null(bpfmap_lookup_percpu(hash, &key, 0));
	assert_int_equal(errno, EINVAL);
	/* On HASH the program view's update and delete are the syscall's. */
	assert_int_equal(bpfmap_update(hash, &key, &two, BPFMAP_EXIST), 0);
	assert_int_equal(bpfmap_lookup_elem(hash, &key, out), 0);
	assert_int_equal(out[0], two);
	assert_int_equal(bpfmap_delete(hash, &key), 0);
	assert_errno(bpfmap_delete(hash, &key), ENOENT);
	bpfmap_free(hash);
	free(in);
}

/* bpfmap_percpu_add: the calling CPU's counter, and its checks. */
static void test_percpu_add(void **state)
{
	enum bpfmap_type t = type_of(state);
	struct bpfmap *map = must_create(t, 4, 12, 16, 0), *small, *hash, *ro;
	uint8_t *zero = calloc(nr_cpus, 16), *out = calloc(nr_cpus, 16);
	uint32_t key = 5, absent = 6;

	assert_int_equal(bpfmap_update_elem(map, &key, zero, 0), 0);
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
		pin_to(cpu);
		for (uint32_t i = 0; i <= cpu; i++)
			assert_int_equal(bpfmap_percpu_add(map, &key, 1000 + cpu), 0);
	}
	test_unpin();
	assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
		uint64_t v;

		memcpy(&v, out + (size_t)cpu * 16, 8);
		assert_int_equal(v, (uint64_t)(cpu + 1) * (1000 + cpu));
		for (uint32_t b = 8; b < 16; b++) /* the rest of the slot untouched */
			assert_int_equal(out[(size_t)cpu * 16 + b], 0);
	}
	assert_errno(bpfmap_percpu_add(map, &absent, 1), ENOENT);
	assert_errno(bpfmap_percpu_add(NULL, &key, 1), EINVAL);
	assert_errno(bpfmap_percpu_add(map, NULL, 1), EINVAL);
	small = must_create(t, 4, 4, 16, 0);
	assert_errno(bpfmap_percpu_add(small, &key, 1), EINVAL);
	hash = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, 0);
	assert_int_equal(bpfmap_update_elem(hash, &key, zero, 0), 0);
	assert_errno(bpfmap_percpu_add(hash, &key, 1), EINVAL);
	ro = must_create(t, 4, 8, 16, BPFMAP_F_RDONLY_PROG);
	assert_int_equal(bpfmap_update_elem(ro, &key, zero, 0), 0);
	assert_errno(bpfmap_percpu_add(ro, &key, 1), EPERM);
	bpfmap_free(small);
	bpfmap_free(hash);
	bpfmap_free(ro);
	bpfmap_free(map);
	free(zero);
	free(out);
}

/* BPFMAP_F_RDONLY_PROG refuses the program view's writes, BPFMAP_F_RDONLY
 * the syscall view's only; WRONLY_PROG refuses its reads. */
static void test_program_view_rights(void **state)
{
	enum bpfmap_type t = type_of(state);
	struct bpfmap *ro_prog = must_create(t, 4, 8, 16, BPFMAP_F_RDONLY_PROG);
	struct bpfmap *ro = must_create(t, 4, 8, 16, BPFMAP_F_RDONLY);
	struct bpfmap *wo_prog = must_create(t, 4, 8, 16, BPFMAP_F_WRONLY_PROG);
	uint64_t *v = fill_slots(8, 9);
	uint32_t key = 1;

	assert_int_equal(bpfmap_update_elem(ro_prog, &key, v, 0), 0);
	assert_errno(bpfmap_update(ro_prog, &key, v, 0), EPERM);
	assert_errno(bpfmap_delete(ro_prog, &key), EPERM);
	assert_errno(bpfmap_update_elem(ro, &key, v, 0), EPERM);
	assert_int_equal(bpfmap_update(ro, &key, v, 0), 0);
	assert_int_equal(bpfmap_delete(ro, &key), 0);
	assert_int_equal(bpfmap_update_elem(wo_prog, &key, v, 0), 0);
	errno = 0;
	assert_null(bpfmap_lookup_percpu(wo_prog, &key, 0));
	assert_int_equal(errno, EPERM);
	bpfmap_free(ro_prog);
	bpfmap_free(ro);
	bpfmap_free(wo_prog);
	free(v);
}

#define CPU_FLAG(cpu) (BPFMAP_F_CPU | (uint64_t)(cpu) << 32)

/* BPFMAP_F_CPU and BPFMAP_F_ALL_CPUS on single elements. */
static void test_cpu_flags(void **state)
{
	enum bpfmap_type t = type_of(state);
	struct bpfmap *map = must_create(t, 4, 12, 16, 0), *hash;
	uint8_t *all = fill_slots(12, 5), *out = calloc(nr_cpus, 16);
	uint8_t slot[12], got[12];
	uint32_t key = 3, fresh = 4, cpu = nr_cpus - 1;

	memset(slot, 0xab, sizeof(slot));
	assert_int_equal(bpfmap_update_elem(map, &key, all, 0), 0);
	/* F_CPU lookup: that CPU's value_size bytes. */
	for (uint32_t c = 0; c < nr_cpus; c++) {
		assert_int_equal(bpfmap_lookup_elem_flags(map, &key, got, CPU_FLAG(c)), 0);
		assert_memory_equal(got, all + (size_t)c * 16, 12);
	}
	/* F_CPU update of a present key: that slot only. */
	assert_int_equal(bpfmap_update_elem(map, &key, slot, CPU_FLAG(cpu) | BPFMAP_EXIST), 0);
	assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
	for (uint32_t c = 0; c < nr_cpus; c++)
		assert_memory_equal(out + (size_t)c * 16, c == cpu ? slot : all + (size_t)c * 16, 12);
	/* F_CPU update of an absent key: the other slots zero. */
	assert_int_equal(bpfmap_update_elem(map, &fresh, slot, CPU_FLAG(0)), 0);
	assert_int_equal(bpfmap_lookup_elem(map, &fresh, out), 0);
	for (uint32_t c = 0; c < nr_cpus; c++)
		for (uint32_t b = 0; b < 12; b++)
			assert_int_equal(out[(size_t)c * 16 + b], c == 0 ? 0xab : 0);
	/* F_ALL_CPUS: the value into every slot. */
	memset(slot, 0x5c, sizeof(slot));
	assert_int_equal(bpfmap_update_elem(map, &fresh, slot, BPFMAP_F_ALL_CPUS), 0);
	assert_int_equal(bpfmap_lookup_elem(map, &fresh, out), 0);
	for (uint32_t c = 0; c < nr_cpus; c++)
		assert_memory_equal(out + (size_t)c * 16, slot, 12);
	assert_errno(bpfmap_update_elem(map, &fresh, slot, BPFMAP_F_ALL_CPUS | BPFMAP_NOEXIST),
		     EEXIST);
	{
		uint32_t absent = 99;

		assert_errno(bpfmap_update_elem(map, &absent, slot,
						BPFMAP_F_ALL_CPUS | BPFMAP_EXIST), ENOENT);
		assert_errno(bpfmap_lookup_elem_flags(map, &absent, got, CPU_FLAG(0)), ENOENT);
	}

	/* The checks: both flags, CPU bits without F_CPU, no such CPU, a flag
	 * an operation does not take, F_LOCK without a lock. */
	assert_errno(bpfmap_update_elem(map, &key, slot, BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS),
		     EINVAL);
	assert_errno(bpfmap_update_elem(map, &key, slot, (uint64_t)1 << 32), EINVAL);
	assert_errno(bpfmap_update_elem(map, &key, slot, BPFMAP_F_ALL_CPUS | (uint64_t)1 << 32),
		     EINVAL);
	assert_errno(bpfmap_update_elem(map, &key, slot, CPU_FLAG(nr_cpus)), ERANGE);
	assert_errno(bpfmap_lookup_elem_flags(map, &key, got, CPU_FLAG(nr_cpus)), ERANGE);
	assert_errno(bpfmap_lookup_elem_flags(map, &key, got, BPFMAP_F_ALL_CPUS), EINVAL);
	assert_errno(bpfmap_lookup_elem_flags(map, &key, got, (uint64_t)1 << 32), EINVAL);
	assert_errno(bpfmap_lookup_elem_flags(map, &key, got, BPFMAP_F_LOCK), EINVAL);
	assert_errno(bpfmap_update_elem(map, &key, slot, BPFMAP_F_LOCK), EINVAL);
	assert_errno(bpfmap_update_elem(map, &key, slot, CPU_FLAG(0) | 3), EINVAL);
	bpfmap_free(map);

	/* Only per-CPU maps take them. */
	hash = must_create(BPFMAP_TYPE_HASH, 4, 12, 16, 0);
	assert_int_equal(bpfmap_update_elem(hash, &key, slot, 0), 0);
	assert_errno(bpfmap_update_elem(hash, &key, slot, CPU_FLAG(0)), EINVAL);
	assert_errno(bpfmap_update_elem(hash, &key, slot, BPFMAP_F_ALL_CPUS), EINVAL);
	assert_errno(bpfmap_lookup_elem_flags(hash, &key, got, CPU_FLAG(0)), EINVAL);
	bpfmap_free(hash);
	free(all);
	free(out);
}

/* lookup_batch with F_CPU and a capacity of UINT32_MAX elements, into
 * buffers reserved for that many (MAP_NORESERVE: only touched pages are
 * backed): every one of the @n elements, the count written back. */
static void big_capacity_cpu_batch(struct bpfmap *map, const struct bpfmap_batch_opts *cpu_opts,
				   uint32_t n)
{
	size_t cap = UINT32_MAX;
	void *keys = mmap(NULL, cap * 4, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *slots = mmap(NULL, cap * 4, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint32_t cursor, count = UINT32_MAX;
	int ret;

	assert_true(keys != MAP_FAILED && slots != MAP_FAILED);
	ret = bpfmap_lookup_batch(map, NULL, &cursor, keys, slots, &count, cpu_opts);
	assert_int_equal(ret, -ENOENT);
	assert_int_equal(count, n);
	munmap(keys, cap * 4);
	munmap(slots, cap * 4);
}

/* Batches: whole per-CPU values, or one CPU's slot with F_CPU. */
static void test_batches(void **state)
{
	enum bpfmap_type t = type_of(state);
	const uint32_t n = 40, vs = 4, stride = 8;
	struct bpfmap *map = must_create(t, 4, vs, 64, 0);
	uint32_t keys[40], out_keys[64], cursor = 0, count;
	uint8_t *values = calloc(n, (size_t)stride * nr_cpus);
	uint8_t *out = calloc(64, (size_t)stride * nr_cpus);
	uint32_t slots[40], got_slots[64];
	BPFMAP_BATCH_OPTS(cpu_opts, .elem_flags = CPU_FLAG(nr_cpus - 1));
	BPFMAP_BATCH_OPTS(all_opts, .elem_flags = BPFMAP_F_ALL_CPUS);
	BPFMAP_BATCH_OPTS(bad_cpu, .elem_flags = CPU_FLAG(nr_cpus));
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		keys[i] = i * 7 + 1;
		slots[i] = 0xc0de0000u + i;
		for (uint32_t b = 0; b < stride * nr_cpus; b++)
			values[(size_t)i * stride * nr_cpus + b] = (uint8_t)(i + b);
	}
	count = n;
	assert_int_equal(bpfmap_update_batch(map, keys, values, &count, NULL), 0);
	assert_int_equal(count, n);
	/* Whole values come back as they went in. */
	count = 64;
	ret = bpfmap_lookup_batch(map, NULL, &cursor, out_keys, out, &count, NULL);
	assert_true(ret == 0 || ret == -ENOENT);
	assert_int_equal(count, n);
	for (uint32_t j = 0; j < count; j++) {
		uint32_t i = (out_keys[j] - 1) / 7;

		assert_memory_equal(out + (size_t)j * stride * nr_cpus,
				    values + (size_t)i * stride * nr_cpus, (size_t)stride * nr_cpus);
	}
	/* F_CPU update batch: that CPU's slot of each, value_size apart. */
	count = n;
	assert_int_equal(bpfmap_update_batch(map, keys, slots, &count, &cpu_opts), 0);
	count = 64;
	ret = bpfmap_lookup_batch(map, NULL, &cursor, out_keys, got_slots, &count, &cpu_opts);
	assert_true(ret == 0 || ret == -ENOENT);
	assert_int_equal(count, n);
	for (uint32_t j = 0; j < count; j++)
		assert_int_equal(got_slots[j], 0xc0de0000u + (out_keys[j] - 1) / 7);
	/* F_ALL_CPUS update batch. */
	count = n;
	assert_int_equal(bpfmap_update_batch(map, keys, slots, &count, &all_opts), 0);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(bpfmap_lookup_elem(map, &keys[i], out), 0);
		for (uint32_t c = 0; c < nr_cpus; c++)
			assert_memory_equal(out + (size_t)c * stride, &slots[i], vs);
	}
	/* The checks: lookup batches take no F_ALL_CPUS, lookup-and-delete
	 * batches no per-CPU flag, and no CPU past the last. */
	count = 64;
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, out_keys, out, &count, &all_opts),
		     EINVAL);
	count = 64;
	assert_errno(bpfmap_lookup_and_delete_batch(map, NULL, &cursor, out_keys, out, &count,
						    &cpu_opts), EINVAL);
	count = 64;
	assert_errno(bpfmap_lookup_batch(map, NULL, &cursor, out_keys, out, &count, &bad_cpu),
		     ERANGE);
	count = n;
	assert_errno(bpfmap_delete_batch(map, keys, &count, &cpu_opts), EINVAL);
	/* A capacity far beyond the map: its elements, not -ENOMEM for a
	 * buffer sized by the capacity times the whole per-CPU value. */
	big_capacity_cpu_batch(map, &cpu_opts, n);
	/* Lookup-and-delete batch: whole values, and the map empties. */
	count = 64;
	ret = bpfmap_lookup_and_delete_batch(map, NULL, &cursor, out_keys, out, &count, NULL);
	assert_true(ret == 0 || ret == -ENOENT);
	assert_int_equal(count, n);
	assert_int_equal(walk_count(map, 4), 0);
	free(values);
	free(out);
	bpfmap_free(map);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One CPU's slot by batches (F_CPU), for values so large that the table's
 * whole values are copied a chunk at a time (32 KiB slots: a chunk holds
 * 1 MiB of whole values): each call must return what a batch of whole
 * values returns for the same capacity (the same keys, in the same order,
 * the same answer: whole buckets while they fit, -ENOSPC only with
 * nothing copied), and that CPU's slot of each.
 */
static void test_cpu_batch_chunks(void **state)
{
	static const uint32_t caps[] = { 1, 2, 3, 17, 40, 300, 1000 };
	enum bpfmap_type t = type_of(state);
	const uint32_t vs = 32768, n = 300;
	struct bpfmap *map = must_create(t, 4, vs, 512, 0);
	size_t whole = (size_t)vs * nr_cpus;
	uint8_t *value = malloc(whole), *out = malloc(1000 * whole), *slots = malloc(1000 * vs);
	uint32_t *wkeys = malloc(1000 * 4), *ckeys = malloc(1000 * 4), wcur, ccur, got = 0;
	uint32_t *sorted_c = malloc(1000 * 4), *sorted_w = malloc(1000 * 4);
	BPFMAP_BATCH_OPTS(cpu_opts, .elem_flags = CPU_FLAG(nr_cpus - 1));

	assert_true(value && out && slots && wkeys && ckeys && sorted_c && sorted_w);
	for (uint32_t k = 0; k < n; k++) {
		for (uint32_t c = 0; c < nr_cpus; c++)
			memset(value + (size_t)c * vs, (int)(k * 3 + c), vs);
		assert_int_equal(bpfmap_update_elem(map, &k, value, BPFMAP_NOEXIST), 0);
	}
	for (size_t ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++) {
		bool first = true;
		int wret, cret;

		got = 0;
		do {
			uint32_t wn = caps[ci], cn = caps[ci];

			wret = bpfmap_lookup_batch(map, first ? NULL : &wcur, &wcur, wkeys, out,
						   &wn, NULL);
			cret = bpfmap_lookup_batch(map, first ? NULL : &ccur, &ccur, ckeys, slots,
						   &cn, &cpu_opts);
			assert_int_equal(cret, wret);
			assert_int_equal(cn, wn);
			/* The same elements; within a call, the table's order
			 * may differ where a chunk ended. */
			memcpy(sorted_c, ckeys, (size_t)cn * 4);
			memcpy(sorted_w, wkeys, (size_t)wn * 4);
			qsort(sorted_c, cn, 4, cmp_u32);
			qsort(sorted_w, wn, 4, cmp_u32);
			assert_memory_equal(sorted_c, sorted_w, (size_t)wn * 4);
			if (wret == -ENOSPC) /* a bucket beyond this capacity: as both */
				break;
			for (uint32_t i = 0; i < cn; i++) {
				uint8_t want = (uint8_t)(ckeys[i] * 3 + nr_cpus - 1);

				assert_int_equal(slots[(size_t)i * vs], want);
				assert_int_equal(slots[(size_t)i * vs + vs - 1], want);
			}
			got += cn;
			first = false;
		} while (wret == 0);
		if (wret != -ENOSPC) {
			assert_int_equal(wret, -ENOENT);
			assert_int_equal(got, n);
		}
	}
	free(value);
	free(out);
	free(slots);
	free(wkeys);
	free(ckeys);
	free(sorted_c);
	free(sorted_w);
	bpfmap_free(map);
}

/*
 * The same where one bucket holds more elements than a chunk: 20 keys that
 * share a bucket of the chained table, 32 KiB slots (a chunk of 16 whole
 * values on 2 CPUs).  The chunk must grow to take the bucket whole, as the
 * kernel copies a bucket at a time; with room for fewer than the bucket,
 * -ENOSPC and nothing copied, as for whole values.  And F_CPU single
 * lookups of values too large for the stack buffer.  (The flat table's
 * batch units hold 8 elements at most: the chained variants only.)
 */
static void test_cpu_batch_long_bucket(void **state)
{
	enum bpfmap_type t = type_of(state);
	const uint32_t vs = 32768, n = 20;
	struct bpfmap *map = must_create(t, 16, vs, 64, 0);
	struct chain *c = to_chain(map);
	size_t whole = (size_t)vs * nr_cpus;
	uint32_t chunk = (uint32_t)(((size_t)1 << 20) / whole), cn, wn;
	uint8_t *value = malloc(whole), *out = malloc(64 * whole), *slots = malloc(64 * vs);
	uint64_t (*keys)[2] = malloc(n * sizeof(*keys)), (*got)[2] = malloc(64 * sizeof(*got));
	uint64_t (*wkeys)[2] = malloc(64 * sizeof(*wkeys)), cursor, wcursor;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	BPFMAP_BATCH_OPTS(cpu_opts, .elem_flags = CPU_FLAG(nr_cpus - 1));

	assert_true(value && out && slots && keys && got && wkeys);
	/* The chained variants only: the flat table's units hold 8 at most. */
	assert_true(map->ops != &flat_ops && map->ops != &flat_percpu_ops);
	assert_true(chunk < n); /* else the bucket fits a chunk anyway */
	for (uint32_t k = 0; k < n;) {
		uint64_t key[2] = {x ^ k, ~x};

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		if (k && chain_bucket(c, chain_hash(c, key)) !=
			     chain_bucket(c, chain_hash(c, keys[0])))
			continue;
		memcpy(keys[k], key, sizeof(key));
		for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
			memset(value + (size_t)cpu * vs, (int)(k * 3 + cpu), vs);
		assert_int_equal(bpfmap_update_elem(map, key, value, BPFMAP_NOEXIST), 0);
		k++;
	}
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
			memset(slots, 0xee, (size_t)vs + 1);
			assert_int_equal(bpfmap_lookup_elem_flags(map, keys[k], slots,
								  CPU_FLAG(cpu)), 0);
			assert_int_equal(slots[0], (uint8_t)(k * 3 + cpu));
			assert_int_equal(slots[vs - 1], (uint8_t)(k * 3 + cpu));
			assert_int_equal(slots[vs], 0xee);
		}
	/* Room for fewer than the bucket: -ENOSPC with nothing, both ways. */
	cn = wn = n - 1;
	assert_int_equal(bpfmap_lookup_batch(map, NULL, &wcursor, wkeys, out, &wn, NULL), -ENOSPC);
	assert_int_equal(bpfmap_lookup_batch(map, NULL, &cursor, got, slots, &cn, &cpu_opts),
			 -ENOSPC);
	assert_int_equal(cn, 0);
	assert_int_equal(wn, 0);
	/* Room for it: the whole bucket in one call, each key's slot. */
	cn = 64;
	assert_int_equal(bpfmap_lookup_batch(map, NULL, &cursor, got, slots, &cn, &cpu_opts),
			 -ENOENT);
	assert_int_equal(cn, n);
	for (uint32_t i = 0; i < cn; i++) {
		uint32_t k = 0;

		while (k < n && memcmp(keys[k], got[i], sizeof(keys[k])))
			k++;
		assert_true(k < n);
		assert_int_equal(slots[(size_t)i * vs], (uint8_t)(k * 3 + nr_cpus - 1));
		assert_int_equal(slots[(size_t)i * vs + vs - 1], (uint8_t)(k * 3 + nr_cpus - 1));
	}
	free(value);
	free(out);
	free(slots);
	free(keys);
	free(got);
	free(wkeys);
	bpfmap_free(map);
}

/* Churn: elements deleted and inserted again get their slots back, zeroed
 * or written whole, in preallocated and NO_PREALLOC maps (whose elements'
 * slot indices are handed out and returned). */
static void test_churn_slots(void **state)
{
	static const uint32_t flags[] = { 0, BPFMAP_F_NO_PREALLOC };

	/* LRU maps are always preallocated. */
	size_t nf = type_of(state) == BPFMAP_TYPE_PERCPU_HASH ? 2 : 1;

	for (size_t f = 0; f < nf; f++) {
		struct bpfmap *map = must_create(type_of(state), 4, 8, 64, flags[f]);
		uint64_t *in = calloc(nr_cpus, 8), *out = calloc(nr_cpus, 8), one = 7;

		for (uint32_t round = 0; round < 3000; round++) {
			uint32_t key = round % 80;

			for (uint32_t c = 0; c < nr_cpus; c++)
				in[c] = (uint64_t)round << 8 | c;
			if (round % 3 == 0) {
				/* a program-view insert: the other slots zeroed */
				uint32_t ones = 0;
				int ret;

				bpfmap_delete_elem(map, &key);
				ret = bpfmap_update(map, &key, &one, BPFMAP_NOEXIST);
				assert_true(ret == 0 || ret == -E2BIG); /* 80 keys, 64 entries */
				if (ret)
					continue;
				assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
				for (uint32_t c = 0; c < nr_cpus; c++) {
					assert_true(out[c] == 0 || out[c] == one);
					ones += out[c] == one;
				}
				assert_int_equal(ones, 1);
			} else {
				int ret = bpfmap_update_elem(map, &key, in, BPFMAP_ANY);

				assert_true(ret == 0 || ret == -E2BIG);
				if (!ret) {
					assert_int_equal(bpfmap_lookup_elem(map, &key, out), 0);
					assert_memory_equal(out, in, (size_t)nr_cpus * 8);
				}
			}
			if (round % 5 == 0)
				bpfmap_delete_elem(map, &key);
		}
		free(in);
		free(out);
		bpfmap_free(map);
	}
}

/*
 * Delete one key and insert another, over and over, inside one read-side
 * section of a full map (docs/CONCURRENCY.md, "Inserts inside long
 * sections").  The flat table reuses a deleted position at once and never
 * fails.  So does a preallocated map on the chained table, once it has
 * borrowed its slack from the heap (chain_reuses): it used to borrow an
 * element, and its slots, for every insert, until its slot indices ran
 * out at max(16384, 4 x max_entries) + 1024 such deletes, and then answer
 * -ENOMEM.  A NO_PREALLOC PERCPU_HASH still does, leaving the map
 * unchanged; after the section the same insert succeeds, at once (it
 * answered -ENOMEM until the reclamation in the background had caught
 * up).  LRU_PERCPU_HASH reuses a deleted element at once, so no insert
 * fails and no key is evicted (it used to evict a key from there on, so
 * that later deletes found theirs gone: chain_pending_steal).
 */
static void test_churn_in_section(void **state)
{
	static const uint32_t flags[] = { 0, BPFMAP_F_NO_PREALLOC };
	const uint32_t me = 16, sure = 16384 + 1024, rounds = 3 * sure;
	bool evicting = type_of(state) == BPFMAP_TYPE_LRU_PERCPU_HASH;
	size_t nf = evicting ? 1 : 2;

#ifdef __SANITIZE_THREAD__
	if (evicting) {
		print_message("skipped: TSan builds never reuse an element at once "
			      "(chain_reuse_wanted), which keeps this map from -ENOMEM\n");
		skip();
	}
#endif

	for (size_t f = 0; f < nf; f++) {
		struct bpfmap *map = must_create(type_of(state), 8, 8, me, flags[f]);
		bool chained = map->ops != &flat_ops && map->ops != &flat_percpu_ops;
		uint64_t *v = calloc(nr_cpus, 8), k;
		uint32_t j;
		int ret = 0;

		/* TSan builds never reuse at once (chain_may_reuse). */
		bool fails = chained && ((flags[f] & BPFMAP_F_NO_PREALLOC) || !REUSES_AT_ONCE);

		for (k = 0; k < me; k++)
			assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST), 0);
		bpfmap_read_lock();
		for (j = 0; j < rounds; j++) {
			k = j;
			assert_int_equal(bpfmap_delete_elem(map, &k), 0); /* never evicted */
			k = j + me;
			ret = bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST);
			if (ret)
				break;
		}
		if (fails) {
			assert_int_equal(ret, -ENOMEM);
			assert_true(j >= sure);
			assert_true(j <= sure + me + 16 * nr_cpus);
			assert_int_equal(bpfmap_lookup_elem(map, &k, v), -ENOENT);
		} else {
			assert_int_equal(ret, 0);
			if (chained) /* no more than its slack borrowed */
				assert_true(to_chain(map)->heap_elems <= to_chain(map)->borrow_cap);
		}
		bpfmap_read_unlock();
		if (fails) /* it waits for the section's deletes now */
			assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST), 0);
		assert_int_equal(bpfmap_lookup_elem(map, &k, v), 0); /* the last one in */
		for (k = j + 1; k < j + me; k++) /* all there */
			assert_int_equal(bpfmap_lookup_elem(map, &k, v), 0);
		free(v);
		bpfmap_free(map);
	}
}

/*
 * The program view's slot is the calling CPU's, by every lookup path: word
 * keys (the flat table's specialised lookups), a long key in a large map
 * (the flat table's wrapped lookup) and in a small one (the chained
 * table's), and bpfmap_lookup_bulk.  CTest runs this file twice, the second
 * time with glibc's rseq registration off (test_percpu_no_rseq): the CPU
 * number is rseq's, unchecked, where the kernel's possible-CPU mask bounds
 * it, else checked, else sched_getcpu()'s.
 */
static void test_slot_of_cpu(void **state)
{
	static const struct {
		uint32_t key_size, max_entries;
	} shapes[] = { { 4, 16 }, { 8, 16 }, { 32, 16 }, { 32, 20000 }, { 8, 20000 } };
	enum bpfmap_type t = type_of(state);

#ifdef CPU_HAVE_RSEQ
	/* What the maps below chose (util/cpu.h): the tunable decides here. */
	assert_int_equal(cpu_rseq_usable(),
			 __rseq_size != 0 && access("/sys/devices/system/cpu/possible", R_OK) == 0);
#endif
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		uint32_t ks = shapes[s].key_size;
		struct bpfmap *map = must_create(t, ks, 8, shapes[s].max_entries, 0);
		uint64_t *in = fill_slots(8, (uint8_t)s);
		uint8_t key[32] = { 0x5a, 1, 2, 3 };

		assert_int_equal(bpfmap_update_elem(map, key, in, BPFMAP_ANY), 0);
		bpfmap_read_lock();
		for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
			void *bulk[1] = { NULL };
			uint64_t *p;

			pin_to(cpu);
			p = bpfmap_lookup(map, key);
			assert_ptr_equal(p, bpfmap_lookup_percpu(map, key, cpu));
			assert_ptr_equal(bpfmap_lookup_func(map)(map, key), p);
			assert_int_equal(bpfmap_lookup_bulk(map, key, 1, bulk), 1);
			assert_ptr_equal(bulk[0], p);
			assert_int_equal(*p, in[cpu]);
		}
		bpfmap_read_unlock();
		test_unpin();
		free(in);
		bpfmap_free(map);
	}
}

/* The VmFlags line of the mapping that holds @p (/proc/self/smaps). */
static bool mapping_flags(const void *p, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char c;

		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			found = snprintf(flags, len, "%s", line + 8) > 0;
	}
	fclose(f);
	return found;
}

/*
 * A NO_PREALLOC per-CPU map's slots are address space, committed as its
 * elements touch them ("nr" in VmFlags: no swap reserved).  Allocated, they
 * were charged whole at creation: max_entries x slot x CPUs, so that maps
 * the kernel creates were refused with -ENOMEM (1M entries of 4 KiB values
 * on two CPUs here; far smaller ones on a machine of many CPUs).
 */
static void test_no_prealloc_slots_reserved(void **state)
{
	BPFMAP_CREATE_OPTS(np, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_PERCPU_HASH, NULL, 4, 4096, 1 << 16, &np);
	char flags[256];
	uint32_t k = 7;
	uint8_t *v = calloc(nr_cpus, 4096);

	(void)state;
	assert_non_null(map);
	assert_non_null(v);
	assert_true(mapping_flags(to_chain(map)->pcpu, flags, sizeof(flags)));
	assert_non_null(strstr(flags, " nr"));
	memset(v, 0x5a, (size_t)nr_cpus * 4096);
	assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST), 0);
	memset(v, 0, (size_t)nr_cpus * 4096);
	assert_int_equal(bpfmap_lookup_elem(map, &k, v), 0);
	for (size_t i = 0; i < (size_t)nr_cpus * 4096; i++)
		assert_int_equal(v[i], 0x5a);
	free(v);
	bpfmap_free(map);
}

/* Rss of the mapping that holds @p, in KiB (/proc/self/smaps). */
static long mapping_rss_kib(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long rss = -1, sum = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char c;

		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && sscanf(line, "Rss: %ld kB", &rss) == 1)
			sum += rss;
	}
	fclose(f);
	return sum;
}

/*
 * A NO_PREALLOC per-CPU map filled and emptied gives its slots' pages
 * back, in every CPU's region, as the kernel frees an element's per-CPU
 * memory with it: a free list of slot indices kept the high-water mark's
 * pages for the map's life (16384 elements of 1 KiB on two CPUs: 33 MiB).
 */
static void test_no_prealloc_slots_given_back(void **state)
{
	BPFMAP_CREATE_OPTS(np, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_PERCPU_HASH, NULL, 4, 1024, 16384, &np);
	uint8_t *v = calloc(nr_cpus, 1024);
	long full, empty;

	(void)state;
	assert_non_null(map);
	assert_non_null(v);
	for (uint32_t k = 0; k < 16384; k++) {
		memset(v, (int)k, (size_t)nr_cpus * 1024);
		assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST), 0);
	}
	full = mapping_rss_kib(to_chain(map)->pcpu);
	for (uint32_t k = 0; k < 16384; k++)
		assert_int_equal(bpfmap_delete_elem(map, &k), 0);
	assert_true(chain_reclaim_now(to_chain(map)));
	rcu_wait_deferred();
	empty = mapping_rss_kib(to_chain(map)->pcpu);
	print_message("per-CPU slots: %ld KiB full, %ld KiB emptied\n", full, empty);
	assert_true(full >= 16384L * nr_cpus);
	/* At most a chunk or two a CPU (64 KiB each) stays. */
	assert_in_range(empty, 0, 2 * 128L * nr_cpus);
	/* And the slots taken again read as written. */
	for (uint32_t k = 0; k < 64; k++) {
		memset(v, (int)k + 1, (size_t)nr_cpus * 1024);
		assert_int_equal(bpfmap_update_elem(map, &k, v, BPFMAP_NOEXIST), 0);
	}
	for (uint32_t k = 0; k < 64; k++) {
		assert_int_equal(bpfmap_lookup_elem(map, &k, v), 0);
		for (size_t i = 0; i < (size_t)nr_cpus * 1024; i += 511)
			assert_int_equal(v[i], (uint8_t)(k + 1));
	}
	free(v);
	bpfmap_free(map);
}

/*
 * Inserts outside any section must not answer -ENOMEM for want of slots
 * while other threads delete inside sections: they wait for the deleted
 * elements instead (docs/CONCURRENCY.md).  One wait was not enough (other
 * threads' deletes may take what it gave back), and slots freed between a
 * failed allocation and the look at the room were missed: 0-4 inserts a
 * run answered -ENOMEM in 5 runs of 6 (chained LRU_PERCPU_HASH, two
 * threads each deleting its keys 64 to a section, a third reading).
 */
struct churn_arg {
	struct bpfmap *map;
	uint32_t id, n;
	int enomem, bad;
};

static int churn_stop;

static void *insert_out_delete_in(void *arg)
{
	struct churn_arg *a = arg;
	uint64_t *v = calloc(nr_cpus, 8);
	bool *held = calloc(a->n, sizeof(bool));

	if (!v || !held || test_pin_cpu(a->id))
		abort();
	for (uint32_t r = 1; r <= 100 / scale; r++) {
		uint32_t in = 0;

		for (uint32_t i = 0; i < a->n; i++) {
			uint32_t k = i * 2 + a->id;
			int ret;

			if (held[i])
				continue;
			ret = bpfmap_update_elem(a->map, &k, v, BPFMAP_NOEXIST);
			a->enomem += ret == -ENOMEM;
			a->bad += ret && ret != -ENOMEM;
			held[i] = !ret;
		}
		for (uint32_t i = 0; i < a->n; i++) {
			uint32_t k = i * 2 + a->id;

			if (!held[i] || (i % 3 == 0 && r % 4))
				continue;
			if (!in++)
				bpfmap_read_lock();
			(void)bpfmap_delete_elem(a->map, &k); /* an LRU map may have evicted it */
			held[i] = false;
			if (in == 64) {
				bpfmap_read_unlock();
				in = 0;
			}
		}
		if (in)
			bpfmap_read_unlock();
	}
	free(v);
	free(held);
	return NULL;
}

static void *read_in_sections(void *arg)
{
	struct bpfmap *map = arg;

	while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED))
		for (uint32_t k = 0; k < 64; k++) {
			bpfmap_read_lock();
			(void)bpfmap_lookup(map, &k);
			bpfmap_read_unlock();
		}
	return NULL;
}

static void test_outside_inserts_wait_for_slots(void **state)
{
	enum bpfmap_type t = type_of(state);
	cpu_set_t saved;

	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	if (nr_cpus < 2 || !CPU_ISSET(0, &saved) || !CPU_ISSET(1, &saved)) {
		print_message("skipped: needs CPUs 0 and 1\n");
		skip();
	}
	for (int run = 0; run < (scale == 1 ? 3 : 1); run++) {
		/* Room for every key: an insert has no reason to fail. */
		struct bpfmap *map = must_create(t, 4, 8, 2 * 4096 + 16,
						 t == BPFMAP_TYPE_PERCPU_HASH ? BPFMAP_F_NO_PREALLOC
									      : 0);
		struct churn_arg a[2] = { { map, 0, 4096, 0, 0 }, { map, 1, 4096, 0, 0 } };
		pthread_t th[2], reader;

		__atomic_store_n(&churn_stop, 0, __ATOMIC_RELAXED);
		assert_int_equal(pthread_create(&reader, NULL, read_in_sections, map), 0);
		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&th[i], NULL, insert_out_delete_in, &a[i]), 0);
		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_join(th[i], NULL), 0);
		__atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
		assert_int_equal(pthread_join(reader, NULL), 0);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(a[i].enomem, 0);
			assert_int_equal(a[i].bad, 0);
		}
		bpfmap_free(map);
	}
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

#define ON(fn, i)                                                                                  \
	cmocka_unit_test_prestate_setup_teardown(fn, variant_setup, variant_teardown,               \
						 (void *)&variants[i])
#define EACH(fn) ON(fn, 0), ON(fn, 1), ON(fn, 2), ON(fn, 3)

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--small"))
		scale = 50;
	const struct CMUnitTest tests[] = {
		EACH(test_create_checks), EACH(test_syscall_layout), EACH(test_program_view),
		EACH(test_program_view_rights), EACH(test_cpu_flags), EACH(test_batches),
		EACH(test_churn_slots),	    EACH(test_percpu_add), EACH(test_churn_in_section),
		EACH(test_slot_of_cpu),	    EACH(test_cpu_batch_chunks),
		ON(test_cpu_batch_long_bucket, 2), ON(test_cpu_batch_long_bucket, 3),
		ON(test_outside_inserts_wait_for_slots, 2), ON(test_outside_inserts_wait_for_slots, 3),
		cmocka_unit_test(test_no_prealloc_slots_reserved),
		cmocka_unit_test(test_no_prealloc_slots_given_back),
	};
	int n = bpfmap_num_possible_cpus();

	if (n <= 0)
		return 1;
	nr_cpus = (uint32_t)n;
	return run_test_group(tests);
}
