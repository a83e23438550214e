/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Maps of large values turned over by delete + insert pairs.  Deleted
 * elements wait for a grace period before they are reused, and how many
 * may wait was counted in elements alone: a one-entry map of 1 MiB values
 * took 72 MiB (HASH), 66 MiB (LRU_HASH) and 229 MiB (RHASH) after 1000
 * pairs made outside any read-side section, and a chained one 33 MiB at
 * creation.  The waits are bounded in bytes now (tables/pool_slack.h);
 * inside a section, where nothing can wait, inserts still find room.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "test_util.h"

#define VALUE (1u << 20)
#define MIB (1024.0 * 1024.0)

struct big_case {
	const char *what;
	enum bpfmap_type type;
	uint32_t flags, key_size;
	/* Its tables' arrays come from mmap, touched as used, in every build
	 * but ASan's, whose figure counts all of them at once. */
	bool mapped_arrays;
	uint32_t bound; /* MiB after the pairs, for max_entries 1 */
};

static const struct big_case cases[] = {
	{ "HASH, flat table", BPFMAP_TYPE_HASH, 0, 8, true, 8 },
	{ "HASH, chained, preallocated", BPFMAP_TYPE_HASH, 0, 16, false, 8 },
	{ "HASH, NO_PREALLOC", BPFMAP_TYPE_HASH, BPFMAP_F_NO_PREALLOC, 8, false, 8 },
	{ "LRU_HASH, flat table", BPFMAP_TYPE_LRU_HASH, 0, 8, true, 8 },
	{ "LRU_HASH, chained", BPFMAP_TYPE_LRU_HASH, 0, 16, false, 8 },
	{ "RHASH", BPFMAP_TYPE_RHASH, BPFMAP_F_NO_PREALLOC, 8, false, 8 },
};

static struct bpfmap *big_map(const struct big_case *c)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = c->flags);
	struct bpfmap *m = bpfmap_create(c->type, "big", c->key_size, VALUE, 1, &opts);

	assert_non_null(m);
	return m;
}

/* Pairs [0, n): key i (16 bytes, of which the map's key size are read)
 * inserted, then deleted; every call must succeed. */
static void pairs(struct bpfmap *m, const char *value, uint64_t n, bool program_view)
{
	uint8_t key[16] = { 0 };

	for (uint64_t i = 0; i < n; i++) {
		memcpy(key, &i, sizeof(i));
		if (program_view) {
			assert_int_equal(bpfmap_update(m, key, value, BPFMAP_NOEXIST), 0);
			assert_int_equal(bpfmap_delete(m, key), 0);
		} else {
			assert_int_equal(bpfmap_update_elem(m, key, value, BPFMAP_NOEXIST), 0);
			assert_int_equal(bpfmap_delete_elem(m, key), 0);
		}
	}
}

static void test_churn_outside_sections(void **state)
{
	char *value = calloc(1, VALUE);
	int over = 0;

	(void)state;
	assert_non_null(value);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct big_case *c = &cases[i];
		struct bpfmap *m;
		double mib;

#if defined(__SANITIZE_ADDRESS__)
		if (c->mapped_arrays) {
			print_message("  %s: skipped under ASan, whose arrays come from the heap "
				      "and count whole\n", c->what);
			continue;
		}
#endif
		m = big_map(c);
		pairs(m, value, 1000, false);
		mib = (double)bpfmap_mem_usage(m) / MIB;
		print_message("  %s: %.1f MiB after 1000 pairs (bound %u)\n", c->what, mib,
			      c->bound);
		over += mib > c->bound;
		bpfmap_free(m);
	}
	free(value);
	assert_int_equal(over, 0);
}

/* Inside one section nothing deleted can be reused yet: the inserts must
 * still succeed (none answers -ENOMEM for want of the waiting ones). */
static void test_churn_inside_a_section(void **state)
{
	char *value = calloc(1, VALUE);

	(void)state;
	assert_non_null(value);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bpfmap *m = big_map(&cases[i]);

		bpfmap_read_lock();
		pairs(m, value, 100, true);
		bpfmap_read_unlock();
		bpfmap_free(m);
	}
	free(value);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_churn_outside_sections),
		test_entry(test_churn_inside_a_section),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return run_test_group(tests);
}
