/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The possible CPUs as the kernel lists them in
 * /sys/devices/system/cpu/possible, made up per case: each case runs in a
 * child with a private mount namespace and a file of its own bound over
 * that one, so that the library reads it first there.  Root only (the
 * cases skip, saying why, elsewhere).
 *  - NO_COMMON_LRU's max_entries limit applies after its rounding to a
 *    multiple of the CPUs, as in the kernel;
 *  - a list with gaps ("0-3,8"): the count is libbpf's (the CPUs listed),
 *    and the per-CPU value buffer of the syscall view packs the possible
 *    CPUs in their order, as the kernel's does; mem_usage counts the
 *    listed CPUs' slots only ("0,4095");
 *  - a CPU number past what bpfmap takes ("0,65535").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define POSSIBLE "/sys/devices/system/cpu/possible"
#define CHILD_SKIP 77

/* A failed check in the child: its line, as the exit status. */
#define CHILD_CHECK(cond)                                                        \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "child: check failed at line %d: %s\n", \
				__LINE__, #cond);                                \
			_exit(1);                                                \
		}                                                                \
	} while (0)

/* In the child: POSSIBLE reads @list from now on, or the child exits with
 * CHILD_SKIP, saying why. */
static void fake_possible(const char *list)
{
	char path[] = "/tmp/bpfmap_possible_XXXXXX";
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "skipped: faking %s needs root\n", POSSIBLE);
		_exit(CHILD_SKIP);
	}
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "skipped: no private mount namespace: %s\n", strerror(errno));
		_exit(CHILD_SKIP);
	}
	fd = mkstemp(path);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(write(fd, list, strlen(list)) == (ssize_t)strlen(list));
	close(fd);
	if (mount(path, POSSIBLE, NULL, MS_BIND, NULL)) {
		fprintf(stderr, "skipped: cannot bind over %s: %s\n", POSSIBLE, strerror(errno));
		unlink(path);
		_exit(CHILD_SKIP);
	}
	unlink(path); /* the bind keeps the file */
}

/* Run @fn in a child that sees @list as the possible CPUs; the test fails
 * on a failed check there, and skips where the list cannot be faked. */
static void with_possible(const char *list, void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		fake_possible(list);
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == CHILD_SKIP)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Three CPUs: 2^27 - 1 entries round up to 2^27 + 1, past HASH's limit. */
static void child_no_common_lru_limit(void)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_COMMON_LRU);
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_LRU_HASH,
						  BPFMAP_TYPE_LRU_PERCPU_HASH };

	CHILD_CHECK(bpfmap_num_possible_cpus() == 3);
	for (int i = 0; i < 2; i++) {
		static const uint32_t over[] = { BPFMAP_HTAB_MAX_ENTRIES - 1,
						 BPFMAP_HTAB_MAX_ENTRIES };

		for (int j = 0; j < 2; j++) {
			errno = 0;
			CHILD_CHECK(!bpfmap_create(types[i], NULL, 8, 8, over[j], &o));
			CHILD_CHECK(errno == E2BIG);
		}
		/* A small one still rounds up: 10 to 12. */
		struct bpfmap *map = bpfmap_create(types[i], NULL, 8, 8, 10, &o);
		struct bpfmap_info info;

		CHILD_CHECK(map);
		CHILD_CHECK(!bpfmap_get_info(map, &info, &(uint32_t){ sizeof(info) }));
		CHILD_CHECK(info.max_entries == 12);
		bpfmap_free(map);
	}
}

static void test_no_common_lru_limit(void **state)
{
	(void)state;
	with_possible("0-2\n", child_no_common_lru_limit);
}

/* One per-CPU map kind on "0-3,8": five CPUs, CPU 8 the fifth in the
 * syscall layout.  Buffers are heap blocks of exactly the documented size,
 * so that a build with AddressSanitizer sees any byte past them. */
static void check_gapped_map(enum bpfmap_type type, uint32_t flags)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = flags);
	const size_t n = 5, vb = n * sizeof(uint64_t);
	struct bpfmap *map = bpfmap_create(type, NULL, 4, 8, 16, &o);
	uint64_t *in = malloc(vb), *out = malloc(vb), *vals = malloc(2 * vb), one = 0, *p;
	uint32_t keys[2], cursor, k = 7, k2 = 9, count = 2;
	BPFMAP_BATCH_OPTS(cpu8, .elem_flags = BPFMAP_F_CPU | (8ULL << 32));

	CHILD_CHECK(map && in && out && vals);
	for (size_t i = 0; i < n; i++)
		in[i] = 100 + i;
	CHILD_CHECK(!bpfmap_update_elem(map, &k, in, BPFMAP_ANY));
	CHILD_CHECK(!bpfmap_lookup_elem(map, &k, out));
	CHILD_CHECK(!memcmp(in, out, vb));
	/* CPU 8 is the fifth slot of the buffer; CPU 4 and 9 are no CPUs. */
	CHILD_CHECK(!bpfmap_lookup_elem_flags(map, &k, &one, BPFMAP_F_CPU | (8ULL << 32)));
	CHILD_CHECK(one == 104);
	CHILD_CHECK(bpfmap_lookup_elem_flags(map, &k, &one, BPFMAP_F_CPU | (4ULL << 32)) == -ERANGE);
	CHILD_CHECK(bpfmap_lookup_elem_flags(map, &k, &one, BPFMAP_F_CPU | (9ULL << 32)) == -ERANGE);
	one = 50;
	CHILD_CHECK(!bpfmap_update_elem(map, &k, &one, BPFMAP_F_CPU | (8ULL << 32)));
	CHILD_CHECK(bpfmap_update_elem(map, &k, &one, BPFMAP_F_CPU | (4ULL << 32)) == -ERANGE);
	CHILD_CHECK(!bpfmap_lookup_elem(map, &k, out));
	CHILD_CHECK(out[0] == 100 && out[3] == 103 && out[4] == 50);
	p = bpfmap_lookup_percpu(map, &k, 8);
	CHILD_CHECK(p && *p == 50);
	errno = 0;
	CHILD_CHECK(!bpfmap_lookup_percpu(map, &k, 4) && errno == ERANGE);
	CHILD_CHECK(!bpfmap_lookup_percpu(map, &k, 9) && errno == ERANGE);
	/* Batches: whole values in the same layout, and one CPU's. */
	CHILD_CHECK(!bpfmap_update_elem(map, &k2, in, BPFMAP_ANY));
	CHILD_CHECK(bpfmap_lookup_batch(map, NULL, &cursor, keys, vals, &count, NULL) == -ENOENT);
	CHILD_CHECK(count == 2);
	for (int i = 0; i < 2; i++)
		CHILD_CHECK(vals[i * n + 4] == (keys[i] == k ? 50u : 104u));
	count = 2;
	CHILD_CHECK(bpfmap_lookup_batch(map, NULL, &cursor, keys, vals, &count, &cpu8) == -ENOENT);
	CHILD_CHECK(count == 2);
	for (int i = 0; i < 2; i++)
		CHILD_CHECK(vals[i] == (keys[i] == k ? 50u : 104u));
	/* Every possible CPU's slot, and no other byte of the buffer. */
	one = 7;
	CHILD_CHECK(!bpfmap_update_elem(map, &k, &one, BPFMAP_F_ALL_CPUS));
	CHILD_CHECK(!bpfmap_lookup_and_delete_elem(map, &k, out));
	for (size_t i = 0; i < n; i++)
		CHILD_CHECK(out[i] == 7);
	bpfmap_free(map);
	free(in);
	free(out);
	free(vals);
}

static void child_gapped_list(void)
{
	CHILD_CHECK(bpfmap_num_possible_cpus() == 5);
	check_gapped_map(BPFMAP_TYPE_PERCPU_HASH, 0);
	check_gapped_map(BPFMAP_TYPE_PERCPU_HASH, BPFMAP_F_NO_PREALLOC);
	check_gapped_map(BPFMAP_TYPE_LRU_PERCPU_HASH, 0);
	check_gapped_map(BPFMAP_TYPE_LRU_PERCPU_HASH, BPFMAP_F_NO_COMMON_LRU);
	/* The chained table for what the flat one holds. */
	CHILD_CHECK(!setenv("BPFMAP_TABLE", "chain", 1));
	check_gapped_map(BPFMAP_TYPE_PERCPU_HASH, 0);
	check_gapped_map(BPFMAP_TYPE_LRU_PERCPU_HASH, 0);
}

static void test_gapped_list(void **state)
{
	(void)state;
	with_possible("0-3,8\n", child_gapped_list);
}

/* Four 32 KiB per-CPU values on "0,4095": two CPUs, whose slots are all
 * that memory holds (mem_usage counted 4096 slots, 512 MiB).  In a map of
 * 1000 the gap's slots take 295 GB of address space, which the kernel's
 * commit limit refused (-ENOMEM) until they were left out of it. */
static void child_sparse_memory(void)
{
	static const uint32_t flags[] = { 0, BPFMAP_F_NO_PREALLOC, 0 };
	static const uint32_t max[] = { 4, 4, 1000 };
	const uint32_t vs = 32768;
	uint64_t *v = calloc(2, vs);

	CHILD_CHECK(v && bpfmap_num_possible_cpus() == 2);
	for (int i = 0; i < 3; i++) {
		BPFMAP_CREATE_OPTS(o, .map_flags = flags[i]);
		struct bpfmap *map =
			bpfmap_create(BPFMAP_TYPE_PERCPU_HASH, NULL, 4, vs, max[i], &o);

		CHILD_CHECK(map);
		for (uint32_t k = 0; k < 4; k++)
			CHILD_CHECK(!bpfmap_update_elem(map, &k, v, BPFMAP_ANY));
		/* 512 MiB with the gap's slots; a few MiB without, the slack's
		 * slots included where the arrays come from the heap (ASan). */
		if (bpfmap_mem_usage(map) >= (64u << 20)) {
			fprintf(stderr, "child: flags %u: mem_usage %zu\n", flags[i],
				bpfmap_mem_usage(map));
			_exit(1);
		}
		bpfmap_free(map);
	}
	free(v);
}

static void test_sparse_memory(void **state)
{
	(void)state;
	skip_if_chain_forced("the flat table's per-CPU memory");
	with_possible("0,4095\n", child_sparse_memory);
}

/* A CPU numbered 65535: 65536 slots wrapped struct bpfmap's 16-bit count
 * to 0, and per-CPU maps were not per-CPU (F_CPU and lookup_percpu
 * answered EINVAL).  The list is past what bpfmap takes: it counts the
 * CPUs as sysconf() does, and the maps work. */
static void child_cpu_65535(void)
{
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_PERCPU_HASH, NULL, 4, 8, 4, NULL);
	uint32_t k = 1;
	uint64_t one = 5, *p;

	CHILD_CHECK(map && bpfmap_num_possible_cpus() > 0);
	CHILD_CHECK(!bpfmap_update_elem(map, &k, &one, BPFMAP_F_CPU));
	CHILD_CHECK(!bpfmap_lookup_elem_flags(map, &k, &one, BPFMAP_F_CPU));
	CHILD_CHECK(one == 5);
	p = bpfmap_lookup_percpu(map, &k, 0);
	CHILD_CHECK(p && *p == 5);
	CHILD_CHECK(bpfmap_percpu_add(map, &k, 1) == 0);
	bpfmap_free(map);
}

static void test_cpu_65535(void **state)
{
	(void)state;
	with_possible("0,65535\n", child_cpu_65535);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_common_lru_limit),
		cmocka_unit_test(test_gapped_list),
		cmocka_unit_test(test_sparse_memory),
		cmocka_unit_test(test_cpu_65535),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
