/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the cmocka unit tests. */
#ifndef BPFMAP_TESTS_TEST_UTIL_H
#define BPFMAP_TESTS_TEST_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpfmap.h>

/* Create a map or fail the test. */
struct bpfmap *must_create(enum bpfmap_type type, uint32_t key_size, uint32_t value_size,
			   uint32_t max_entries, uint32_t map_flags);

/* Assert a call returned -err and left errno == err. */
#define assert_errno(call, err)                       \
	do {                                          \
		errno = 0;                            \
		int ret__ = (call);                   \
		assert_int_equal(ret__, -(err));      \
		assert_int_equal(errno, (err));       \
	} while (0)

/* Skip the calling test when @cond, saying under what (@what) and @why. */
#define skip_when(cond, what, why)                                           \
	do {                                                                 \
		if (cond) {                                                  \
			print_message("skipped %s: %s\n", (what), (why));    \
			skip();                                              \
		}                                                            \
	} while (0)

/* Skip the calling test in ThreadSanitizer builds, saying @why: a few ask
 * what those builds cannot give (the release and ASan builds run them).
 * test_tsan_build() is decided where test_util.c is compiled, with the
 * library's own test (util/compiler.h), which test files including DPDK
 * cannot include. */
bool test_tsan_build(void);
#define skip_under_tsan(why) skip_when(test_tsan_build(), "under ThreadSanitizer", why)

/* BPFMAP_TABLE=chain in the environment gives every hash map the chained
 * table (scripts/test.sh runs the unit tests once so).  A test of the flat
 * table's own layout, figures or hooks skips then, saying why; a file of
 * nothing else exits with test_chain_forced_skipped(). */
bool test_chain_forced(void);
#define skip_if_chain_forced(why) skip_when(test_chain_forced(), "under BPFMAP_TABLE=chain", why)
int test_chain_forced_skipped(const char *why);

/* Pin the calling thread to CPU @cpu (modulo the possible CPUs): 0 or
 * -errno; no assertion, so threads other than cmocka's may call it.
 * pin_to() asserts it.  test_unpin(): every possible CPU again. */
int test_pin_cpu(unsigned int cpu);
void test_unpin(void);
#define pin_to(cpu) assert_int_equal(test_pin_cpu(cpu), 0)

/* Wait up to @seconds for the fork()ed child @pid, which must exit with 0;
 * one that has not ended by then is killed (SIGKILL: liburcu blocks every
 * other signal while it waits for a grace period) and the test fails. */
void reap_child(int pid, unsigned int seconds);

/* Number of keys a full get_next_key walk finds (each checked unique). */
uint32_t walk_count(struct bpfmap *map, uint32_t key_size);

/*
 * A test that fails inside a read-side section leaves it open: cmocka
 * longjmps out of the test and runs no teardown after a failure.  The next
 * synchronize (any bpfmap_free) would then wait for this very thread for
 * ever, and the run would hang instead of reporting.  So every test starts
 * by closing what the one before left open (test_entry, VARIANT_TESTS), and
 * run_test_group() does the same after the last one.
 */
int test_close_sections(void **state);
#define test_entry(fn) cmocka_unit_test_setup(fn, test_close_sections)
#define run_test_group(tests) cmocka_run_group_tests(tests, NULL, test_close_sections)

/* A thread in a read-side section from test_section_hold()'s return until
 * test_section_release(): grace periods wait for it meanwhile.  One at a
 * time. */
void test_section_hold(void);
void test_section_release(void);

/* The map-flag variants every semantic test runs on: preallocated and
 * BPFMAP_F_NO_PREALLOC.  VARIANT_TESTS(fn) registers fn once per variant;
 * fn reads its flags with variant_flags(state). */
extern const uint32_t test_map_flag_variants[2];
#define VARIANT_TEST_AS(fn, i)                                                             \
	cmocka_unit_test_prestate_setup_teardown(fn, test_close_sections, NULL,            \
						 (void *)&test_map_flag_variants[i])
#define VARIANT_TESTS(fn) VARIANT_TEST_AS(fn, 0), VARIANT_TEST_AS(fn, 1)

static inline uint32_t variant_flags(void **state)
{
	return *(const uint32_t *)*state;
}

#endif
