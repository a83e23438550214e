/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-CPU maps made and used before this library's own constructors ran:
 * a program's constructor of higher priority (101) runs first in a static
 * link, and a per-CPU map made there must still put each CPU's value in
 * that CPU's slot.  The library's copy of glibc's rseq offset is set by a
 * constructor of default priority; map creation copies it too, before it
 * lets lookups index slots by rseq's CPU number (util/cpu.c).  Were the
 * index read at offset 0 of the thread's block, it would be no CPU number
 * and the slot would be out of bounds (ASan) or another CPU's.
 *
 * The constructor only records what it saw; main() checks it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cpu.h"
#include "test_util.h"

#define EARLY_SHAPES 4

static struct {
	bool ran;		/* the constructor ran */
	bool before_library;	/* ... before the library's own */
	int cpus;
	int create_errno[2][EARLY_SHAPES];
	uint32_t wrong_slots[2][EARLY_SHAPES];	/* CPUs whose slot was wrong */
	uint32_t wrong_pointer[2][EARLY_SHAPES]; /* lookup != lookup_percpu */
} early;

static const enum bpfmap_type early_types[2] = { BPFMAP_TYPE_PERCPU_HASH,
						 BPFMAP_TYPE_LRU_PERCPU_HASH };
/* Word keys (the flat table), and long keys in a small map (the chained
 * table) and in a large one (the flat table). */
static const struct {
	uint32_t key_size, max_entries;
} early_shapes[EARLY_SHAPES] = { { 4, 16 }, { 8, 20000 }, { 32, 16 }, { 32, 20000 } };

/* Each CPU stores cpu + 1 through the program view, then the syscall view
 * reads every slot. */
static void early_one(int t, int s)
{
	uint32_t ks = early_shapes[s].key_size;
	struct bpfmap *map = bpfmap_create(early_types[t], "early", ks, 8,
					   early_shapes[s].max_entries, NULL);
	uint8_t key[32] = { 0x11, 0x22, 0x33, 0x44, 5 };
	uint64_t *all;
	bool *online;

	if (!map) {
		early.create_errno[t][s] = errno;
		return;
	}
	all = calloc((size_t)early.cpus, 8);
	online = calloc((size_t)early.cpus, sizeof(*online));
	for (int cpu = 0; online && cpu < early.cpus; cpu++) {
		uint64_t v = (uint64_t)cpu + 1;

		online[cpu] = test_pin_cpu((unsigned int)cpu) == 0; /* else its slot stays 0 */
		if (!online[cpu])
			continue;
		bpfmap_read_lock();
		if (bpfmap_update(map, key, &v, BPFMAP_ANY) == 0 &&
		    bpfmap_lookup(map, key) != bpfmap_lookup_percpu(map, key, (uint32_t)cpu))
			early.wrong_pointer[t][s]++;
		bpfmap_read_unlock();
	}
	if (all && online && bpfmap_lookup_elem(map, key, all) == 0) {
		for (int cpu = 0; cpu < early.cpus; cpu++)
			if (all[cpu] != (online[cpu] ? (uint64_t)cpu + 1 : 0))
				early.wrong_slots[t][s]++;
	} else {
		early.wrong_slots[t][s] = UINT32_MAX;
	}
	free(online);
	free(all);
	bpfmap_free(map);
}

__attribute__((constructor(101))) static void early_ctor(void)
{
	early.ran = true;
#ifdef CPU_HAVE_RSEQ
	/* The library's constructor sets this from glibc's offset, which is
	 * not 0 wherever glibc registered rseq. */
	early.before_library = __rseq_size && __rseq_offset && cpu_rseq_offset == 0;
#endif
	early.cpus = bpfmap_num_possible_cpus();
	if (early.cpus <= 0)
		return;
	for (int t = 0; t < 2; t++)
		for (int s = 0; s < EARLY_SHAPES; s++)
			early_one(t, s);
	test_unpin();
}

static void test_maps_made_before_library_init(void **state)
{
	(void)state;
	assert_true(early.ran);
	assert_true(early.cpus > 0);
	for (int t = 0; t < 2; t++)
		for (int s = 0; s < EARLY_SHAPES; s++) {
			print_message("%s k%u max %u: errno %d, wrong slots %u, wrong pointers %u\n",
				      early_types[t] == BPFMAP_TYPE_PERCPU_HASH ? "PERCPU_HASH"
										: "LRU_PERCPU_HASH",
				      early_shapes[s].key_size, early_shapes[s].max_entries,
				      early.create_errno[t][s], early.wrong_slots[t][s],
				      early.wrong_pointer[t][s]);
			assert_int_equal(early.create_errno[t][s], 0);
			assert_int_equal(early.wrong_slots[t][s], 0);
			assert_int_equal(early.wrong_pointer[t][s], 0);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_made_before_library_init),
	};

	/* Without glibc's rseq there is no offset whose copy could come late:
	 * the maps fall back to sched_getcpu() from the start. */
	if (!early.before_library) {
		printf("SKIP: the library's constructor ran before the test's, or glibc "
		       "registered no rseq area: the early path is not reachable here\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
