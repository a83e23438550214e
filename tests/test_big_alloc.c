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

#include "util/big_alloc.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
