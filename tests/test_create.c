/* SPDX-License-Identifier: BSD-2-Clause */
/* bpfmap_create(): every validation rule and its errno, options handling. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "core/map.h"

static void expect_create_fails(enum bpfmap_type type, const char *name, uint32_t ks,
				uint32_t vs, uint32_t max, const struct bpfmap_create_opts *opts,
				int err)
{
	errno = 0;
	struct bpfmap *map = bpfmap_create(type, name, ks, vs, max, opts);

	if (map) {
		bpfmap_free(map);
		fail_msg("create(type %d, %u, %u, %u) succeeded, expected errno %d", type, ks, vs,
			 max, err);
	}
	assert_int_equal(errno, err);
}

static void test_defaults(void **state)
{
	(void)state;
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, NULL);

	assert_non_null(map);
	assert_true(bpfmap_mem_usage(map) >= 16 * (4 + 8));
	bpfmap_free(map);
	bpfmap_free(NULL);
	assert_int_equal(bpfmap_mem_usage(NULL), 0);
}

static void test_zero_sizes(void **state)
{
	(void)state;
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 0, 8, 16, NULL, EINVAL);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 0, 16, NULL, EINVAL);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 0, NULL, EINVAL);
}

static void test_too_big(void **state)
{
	(void)state;
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, BPFMAP_MAX_ELEM_BYTES, 8, 1, NULL, E2BIG);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 8, BPFMAP_MAX_ELEM_BYTES - 8, 1, NULL, E2BIG);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, UINT32_MAX, UINT32_MAX, 1, NULL, E2BIG);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, (1U << 31) + 1, NULL, E2BIG);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, BPFMAP_HTAB_MAX_ENTRIES + 1, NULL, E2BIG);
	/* Just below the element limit is accepted (NO_PREALLOC: nothing allocated yet). */
	BPFMAP_CREATE_OPTS(lazy, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *edge = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 8, BPFMAP_MAX_ELEM_BYTES - 9,
					    1, &lazy);
	assert_non_null(edge);
	bpfmap_free(edge);
	/* Large keys are fine (the selftests bench goes to 1024 bytes). */
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 1024, 4096, 4, NULL);
	assert_non_null(map);
	bpfmap_free(map);
}

static void test_flags(void **state)
{
	(void)state;
	static const uint32_t bad[] = {
		1U << 5, 1U << 9, 1U << 31,
		BPFMAP_F_RDONLY | BPFMAP_F_WRONLY,
		BPFMAP_F_RDONLY_PROG | BPFMAP_F_WRONLY_PROG,
		BPFMAP_F_NO_COMMON_LRU, /* only for LRU maps */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .map_flags = bad[i]);
		expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts, EINVAL);
	}
	static const uint32_t good[] = {
		0, BPFMAP_F_NO_PREALLOC, BPFMAP_F_NUMA_NODE, BPFMAP_F_RDONLY, BPFMAP_F_WRONLY,
		BPFMAP_F_ZERO_SEED, BPFMAP_F_RDONLY_PROG, BPFMAP_F_WRONLY_PROG,
		BPFMAP_F_NO_PREALLOC | BPFMAP_F_ZERO_SEED | BPFMAP_F_RDONLY,
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .map_flags = good[i]);
		struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts);

		assert_non_null(map);
		bpfmap_free(map);
	}
}

static void test_map_extra(void **state)
{
	(void)state;
	BPFMAP_CREATE_OPTS(opts, .map_extra = 1);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts, EINVAL);
}

static void test_types_not_implemented(void **state)
{
	(void)state;
	static const int types[] = { 0, 2, 3, 4, 6, 8, 11, 34, 36, 128, 999, -1 };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		expect_create_fails((enum bpfmap_type)types[i], NULL, 4, 8, 16, NULL, EINVAL);
}

static void test_names(void **state)
{
	(void)state;
	static const char *const ok[] = { "", "a", "flows_v4.x", "ABCDEFGHIJKLMNO" /* 15 */,
					  "caf\xe9", "\xc0\xff" /* Latin-1 letters */ };
	static const char *const bad[] = { "with space", "dash-", "slash/",
					   "\xc3\xa9" /* UTF-8: 0xa9 is no letter */, "times\xd7",
					   "div\xf7", "ABCDEFGHIJKLMN-" /* the 15th byte */ };
	/* Longer names keep their first 15 bytes, as libbpf's bpf_map_create()
	 * copies them, and only those are checked: whatever follows is never
	 * seen (issue 15). */
	static const char *const longer[][2] = {
		{ "ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNO" },
		{ "conntrack_v4_flows", "conntrack_v4_fl" },
		{ "ABCDEFGHIJKLMNO-/ ", "ABCDEFGHIJKLMNO" },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, ok[i], 4, 8, 16, NULL);

		assert_non_null(map);
		assert_string_equal(map->name, ok[i]);
		bpfmap_free(map);
	}
	for (size_t i = 0; i < sizeof(longer) / sizeof(longer[0]); i++) {
		struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, longer[i][0], 4, 8, 16, NULL);

		assert_non_null(map);
		assert_string_equal(map->name, longer[i][1]);
		bpfmap_free(map);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_create_fails(BPFMAP_TYPE_HASH, bad[i], 4, 8, 16, NULL, EINVAL);

	/* 15 bytes and no NUL after them, the end of a heap block: nothing
	 * past them is read (AddressSanitizer saw the 16th byte read). */
	char *exact = malloc(BPFMAP_OBJ_NAME_LEN - 1);

	assert_non_null(exact);
	memcpy(exact, "ABCDEFGHIJKLMNO", BPFMAP_OBJ_NAME_LEN - 1);
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, exact, 4, 8, 16, NULL);

	assert_non_null(map);
	assert_string_equal(map->name, "ABCDEFGHIJKLMNO");
	bpfmap_free(map);
	free(exact);
}

static void test_opts_sizes(void **state)
{
	(void)state;
	/* Too small to hold even sz. */
	struct bpfmap_create_opts tiny = { .sz = 4 };
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &tiny, EINVAL);

	/* A newer caller's struct: unknown trailing bytes must be zero. */
	struct {
		struct bpfmap_create_opts o;
		uint64_t future;
	} big = { .o = { .sz = sizeof(big), .lock_off = -1 }, .future = 0 };
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &big.o);
	assert_non_null(map);
	bpfmap_free(map);
	big.future = 1;
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &big.o, EINVAL);

	/* An older caller's struct that stops after map_flags: lock_off
	 * defaults to "none", so F_LOCK is refused. */
	struct bpfmap_create_opts old = { .sz = offsetof(struct bpfmap_create_opts, lock_off),
					  .map_flags = BPFMAP_F_NO_PREALLOC, .lock_off = 0 };
	map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &old);
	assert_non_null(map);
	uint32_t k = 1;
	uint64_t v = 2;
	assert_errno(bpfmap_update_elem(map, &k, &v, BPFMAP_F_LOCK), EINVAL);
	bpfmap_free(map);
}

static void test_lock_off(void **state)
{
	(void)state;
	static const int32_t bad[] = { -2, 1, 2, 6, 8 /* 8 + 4 > 8 */, INT32_MIN };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .lock_off = bad[i]);
		expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts, EINVAL);
	}
	static const int32_t good[] = { -1, 0, 4 };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .lock_off = good[i]);
		struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts);

		assert_non_null(map);
		bpfmap_free(map);
	}
}

/* The spin lock is checked last, as the kernel's map_check_btf does it
 * (tests/test_kernel_diff_create.c compares with the running kernel):
 * EACCES with a _PROG access flag, then EOPNOTSUPP in a type without
 * locks; a bad name, and max_entries over the limit, answer first. */
static void test_lock_checked_last(void **state)
{
	(void)state;
	for (uint32_t prog = BPFMAP_F_RDONLY_PROG; prog <= BPFMAP_F_WRONLY_PROG; prog <<= 1) {
		BPFMAP_CREATE_OPTS(opts, .lock_off = 0, .map_flags = prog);

		expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts, EACCES);
		expect_create_fails(BPFMAP_TYPE_RHASH, NULL, 4, 8, 16, &opts, EINVAL);
		opts.map_flags |= BPFMAP_F_NO_PREALLOC;
		expect_create_fails(BPFMAP_TYPE_RHASH, NULL, 4, 8, 16, &opts, EACCES);
		expect_create_fails(BPFMAP_TYPE_PERCPU_HASH, NULL, 4, 8, 16, &opts, EACCES);
		expect_create_fails(BPFMAP_TYPE_HASH, "bad-name", 4, 8, 16, &opts, EINVAL);
		expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, BPFMAP_HTAB_MAX_ENTRIES + 1,
				    &opts, E2BIG);
	}
	BPFMAP_CREATE_OPTS(opts, .lock_off = 0);
	expect_create_fails(BPFMAP_TYPE_LRU_HASH, NULL, 4, 8, 16, &opts, EOPNOTSUPP);
	expect_create_fails(BPFMAP_TYPE_LRU_HASH, "bad-name", 4, 8, 16, &opts, EINVAL);
	opts.map_flags = 1U << 16; /* BPF_F_TOKEN_FD: no token here */
	expect_create_fails(BPFMAP_TYPE_PERCPU_HASH, NULL, 4, 8, 16, &opts, EINVAL);
	expect_create_fails(BPFMAP_TYPE_HASH, NULL, 4, 8, BPFMAP_HTAB_MAX_ENTRIES + 1, &opts,
			    EINVAL);
}

/* bpfmap_get_info's flags leave out RDONLY and WRONLY, as the kernel's map
 * info does (they belong to a file descriptor there). */
static void test_info_flags(void **state)
{
	static const uint32_t flags[][2] = {
		{ BPFMAP_F_RDONLY, 0 },
		{ BPFMAP_F_WRONLY, 0 },
		{ BPFMAP_F_RDONLY | BPFMAP_F_RDONLY_PROG, BPFMAP_F_RDONLY_PROG },
		{ BPFMAP_F_NO_PREALLOC | BPFMAP_F_WRONLY_PROG,
		  BPFMAP_F_NO_PREALLOC | BPFMAP_F_WRONLY_PROG },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		BPFMAP_CREATE_OPTS(opts, .map_flags = flags[i][0]);
		struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &opts);
		struct bpfmap_info info;

		assert_non_null(map);
		assert_int_equal(bpfmap_get_info(map, &info, &(uint32_t){ sizeof(info) }), 0);
		assert_int_equal(info.map_flags, flags[i][1]);
		bpfmap_free(map);
	}
}

/* bpfmap_get_info's info_len, as the kernel's bpf_map_get_info_by_fd()
 * takes it: a smaller struct gets its part, a larger one needs zeros past
 * this library's, nothing is written on an error. */
static void test_info_len(void **state)
{
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, "len", 4, 8, 16, NULL);
	unsigned char buf[sizeof(struct bpfmap_info) + 64];
	struct bpfmap_info info;
	uint32_t len;

	(void)state;
	assert_non_null(map);
	assert_int_equal(bpfmap_get_info(map, &info, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	len = sizeof(info);
	assert_int_equal(bpfmap_get_info(NULL, &info, &len), -EINVAL);
	assert_int_equal(bpfmap_get_info(map, NULL, &len), -EINVAL);

	/* Exactly this header's struct. */
	memset(&info, 0xaa, sizeof(info));
	len = sizeof(info);
	assert_int_equal(bpfmap_get_info(map, &info, &len), 0);
	assert_int_equal(len, sizeof(info));
	assert_int_equal(info.type, BPFMAP_TYPE_HASH);
	assert_int_equal(info.key_size, 4);
	assert_int_equal(info.value_size, 8);
	assert_int_equal(info.max_entries, 16);
	assert_string_equal(info.name, "len");
	assert_int_equal(info.reserved, 0);
	assert_int_equal(info.map_extra, 0);

	/* An older, smaller struct: its 8 bytes, nothing past them. */
	memset(buf, 0xaa, sizeof(buf));
	len = 8;
	assert_int_equal(bpfmap_get_info(map, (struct bpfmap_info *)(void *)buf, &len), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(buf, &info, 8);
	for (size_t i = 8; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xaa);
	memset(buf, 0xaa, sizeof(buf));
	len = 0;
	assert_int_equal(bpfmap_get_info(map, (struct bpfmap_info *)(void *)buf, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(buf[0], 0xaa);

	/* A newer, larger struct: zeros past ours are taken, ours is filled. */
	memset(buf, 0, sizeof(buf));
	len = sizeof(buf);
	assert_int_equal(bpfmap_get_info(map, (struct bpfmap_info *)(void *)buf, &len), 0);
	assert_int_equal(len, sizeof(info));
	assert_memory_equal(buf, &info, sizeof(info));

	/* ... but not a byte set past ours, nor more than a page. */
	memset(buf, 0, sizeof(buf));
	buf[sizeof(buf) - 1] = 1;
	len = sizeof(buf);
	assert_int_equal(bpfmap_get_info(map, (struct bpfmap_info *)(void *)buf, &len), -E2BIG);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(len, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf) - 1; i++)
		assert_int_equal(buf[i], 0);
	len = 4097;
	assert_int_equal(bpfmap_get_info(map, &info, &len), -E2BIG);
	bpfmap_free(map);
}

static void test_possible_cpus(void **state)
{
	(void)state;
	int n = bpfmap_num_possible_cpus();

	assert_true(n >= 1);
	assert_int_equal(bpfmap_num_possible_cpus(), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_zero_sizes),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_map_extra),
		cmocka_unit_test(test_types_not_implemented),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_opts_sizes),
		cmocka_unit_test(test_lock_off),
		cmocka_unit_test(test_lock_checked_last),
		cmocka_unit_test(test_info_flags),
		cmocka_unit_test(test_info_len),
		cmocka_unit_test(test_possible_cpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
