/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The string tests' common set-up: the seed of test_rng (BPFMAP_TEST_SEED
 * in the environment replays a run) and the versions under test, every one
 * the dispatcher offers and then the public calls.  Include after cmocka.h,
 * test_rng.h and strings/str_internal.h.
 */
#ifndef BPFMAP_TESTS_STRINGS_IMPLS_H
#define BPFMAP_TESTS_STRINGS_IMPLS_H

#include <inttypes.h>
#include <stdlib.h>

#include "strings_public.h"

/* Seed test_rng (@fallback without the variable), fill @impls, and print
 * both after @what (the caller ends the line); the number of versions. */
static inline int strings_impls_setup(const char *what, uint64_t fallback,
				      const struct str_ops **impls, const struct str_ops *pub)
{
	const char *seed = getenv("BPFMAP_TEST_SEED");
	const struct str_ops *const *all = bpfmap_str_ops_all();
	int n;

	test_rng = seed ? strtoull(seed, NULL, 0) : fallback;
	if (!test_rng)
		test_rng = 1;
	print_message("%s: seed 0x%" PRIx64 "; implementations:", what, test_rng);
	for (n = 0; all[n]; n++) {
		impls[n] = all[n];
		print_message(" %s", all[n]->name);
	}
	impls[n++] = pub;
	return n;
}

#endif
