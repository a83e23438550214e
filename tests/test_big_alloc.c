/* SPDX-License-Identifier: BSD-2-Clause */
/* util/big_alloc: zeroed, 64-byte aligned arrays from calloc or mmap, the
 * large ones 2 MiB-aligned (for transparent huge pages). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "util/big_alloc.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

static void check_array(size_t bytes)
{
	unsigned char *p = big_zalloc(bytes);

	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 64, 0);
	/* Zeroed, and every byte writable (ASan, or a fault, if not). */
	for (size_t i = 0; i < bytes; i += 4093)
		assert_int_equal(p[i], 0);
	assert_int_equal(p[bytes - 1], 0);
	memset(p, 0xa5, bytes);
	if (bytes >= BIG_ALLOC_MMAP_MIN && bytes >= ((size_t)2 << 20))
		assert_int_equal((uintptr_t)p % ((size_t)2 << 20), 0);
	big_free(p);
}

static void test_sizes(void **state)
{
	static const size_t sizes[] = { 1, 63, 64, 100, 4096, (128 << 10) - 1, 128 << 10,
					(128 << 10) + 1, 1 << 20, (2 << 20) - 8, 2 << 20,
					(3 << 20) + 5 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		check_array(sizes[i]);
	big_free(NULL);
}

/* Many arrays alive at once stay apart (headers and alignment do not
 * overlap a neighbour). */
static void test_many(void **state)
{
	enum { N = 64 };
	unsigned char *p[N];

	(void)state;
	for (int i = 0; i < N; i++) {
		size_t bytes = (size_t)(i % 8 + 1) * (i < N / 2 ? 1000 : 200000);

		p[i] = big_zalloc(bytes);
		assert_non_null(p[i]);
		memset(p[i], i, bytes);
	}
	for (int i = 0; i < N; i++) {
		size_t bytes = (size_t)(i % 8 + 1) * (i < N / 2 ? 1000 : 200000);

		assert_int_equal(p[i][0], (unsigned char)i);
		assert_int_equal(p[i][bytes - 1], (unsigned char)i);
		big_free(p[i]);
	}
}

#if defined(__SANITIZE_ADDRESS__)
enum { BLOCKS = 64 };

/* Heap blocks whose only pointers are in @slots; out of line, so that no
 * copy stays in the caller's frame. */
static __attribute__((noinline)) void fill_with_blocks(void **slots, size_t stride)
{
	for (size_t i = 0; i < BLOCKS; i++) {
		void *b = malloc(48);

		assert_non_null(b);
		memcpy((char *)slots + i * stride, &b, sizeof(b));
	}
}

static __attribute__((noinline)) void free_blocks(void **slots, size_t stride)
{
	for (size_t i = 0; i < BLOCKS; i++) {
		void *b;

		memcpy(&b, (char *)slots + i * stride, sizeof(b));
		free(b);
	}
}

/* A pointer kept only in a mapped table (a map's value) is no leak to
 * LeakSanitizer, nor one in an RHASH's values (reserved address space). */
static void test_leak_checker_sees_mapped(void **state)
{
	(void)state;
	void **mapped = big_zalloc_mapped(1 << 20);
	void **reserved = big_reserve(1 << 20);

	assert_non_null(mapped);
	assert_non_null(reserved);
	fill_with_blocks(mapped + 1000, 4096);
	fill_with_blocks(reserved + 3, 8192);
	assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
	free_blocks(mapped + 1000, 4096);
	free_blocks(reserved + 3, 8192);
	big_free(mapped);
	big_unreserve(reserved, 1 << 20);

	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_RHASH, "ptrs", 8, 8, 1 << 16, &o);

	assert_non_null(m);
	for (uint64_t k = 0; k < 5000; k++) {
		void *b = malloc(24);

		assert_non_null(b);
		assert_int_equal(bpfmap_update_elem(m, &k, &b, BPFMAP_ANY), 0);
		b = NULL;
	}
	assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
	for (uint64_t k = 0; k < 5000; k++) {
		void *b;

		assert_int_equal(bpfmap_lookup_and_delete_elem(m, &k, &b), 0);
		free(b);
	}
	bpfmap_free(m);
}
#else
static void test_leak_checker_sees_mapped(void **state)
{
	(void)state;
	print_message("skipped: LeakSanitizer is in the AddressSanitizer builds only\n");
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_leak_checker_sees_mapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
