/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The slot arena (tables/slot_arena.h): against a model, no slot handed out
 * twice or outside 1 .. cap and no byte of a held slot changed; wholly free
 * chunks really given back (mincore) and counted so; released chunks used
 * before fresh slots, and reading as zeros; no give-and-fault cycle at a
 * chunk boundary; pages faulted in ahead of a growing arena, counted, and
 * no more than a sixteenth; and no slot lost or duplicated with threads
 * (TSan too).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tables/slot_arena.h"
#include "util/big_alloc.h"
#include "test_rng.h"

/* Slot @idx's bytes as its holder writes them, the link's 4 included. */
static void fill(struct slot_arena *a, uint32_t idx)
{
	char *p = slot_arena_at(a, idx);

	for (uint32_t i = 0; i < a->stride; i++)
		p[i] = (char)(idx * 31 + i);
}

static void check_fill(struct slot_arena *a, uint32_t idx)
{
	const char *p = slot_arena_at(a, idx);

	for (uint32_t i = 0; i < a->stride; i++)
		if (p[i] != (char)(idx * 31 + i))
			fail_msg("slot %u byte %u changed while held", idx, i);
}

/* Resident bytes of the arena's slots, as the kernel reports them. */
static size_t resident(struct slot_arena *a)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = ((size_t)a->cap + 1) * a->stride, pages = (len + page - 1) / page, n = 0;
	unsigned char *vec = malloc(pages);

	assert_non_null(vec);
	assert_int_equal(mincore(a->base, len, vec), 0);
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n * (size_t)page;
}

/* Random allocs and frees against a model of what is held, several
 * strides, the link at both ends of a slot. */
static void test_model(void **state)
{
	static const uint32_t strides[][2] = { { 8, 0 }, { 16, 0 }, { 24, 16 }, { 64, 60 },
					       { 1032, 0 } };

	(void)state;
	for (size_t s = 0; s < sizeof(strides) / sizeof(strides[0]); s++) {
		const uint32_t cap = 20000;
		struct slot_arena a;
		uint32_t *held = calloc(cap, sizeof(*held)), n = 0;
		unsigned char *in = calloc(cap + 1, 1);
		uint64_t seed = s + 1;

		assert_int_equal(slot_arena_init(&a, cap, strides[s][0], strides[s][1]), 0);
		for (int op = 0; op < 400000; op++) {
			uint64_t r = rng_next(&seed);
			/* Phases that fill, drain and churn, so chunks empty. */
			bool grow = (op / 50000) % 2 == 0 ? r % 4 != 0 : r % 4 == 0;

			if (grow || !n) {
				uint32_t idx = slot_arena_alloc(&a);

				if (n == cap) {
					assert_int_equal(idx, 0);
					continue;
				}
				if (idx < 1 || idx > cap || in[idx])
					fail_msg("stride %u: slot %u handed out (held %u)", a.stride,
						 idx, idx <= cap ? in[idx] : 2);
				in[idx] = 1;
				fill(&a, idx);
				held[n++] = idx;
			} else {
				uint32_t j = (uint32_t)(r >> 32) % n, idx = held[j];

				check_fill(&a, idx);
				in[idx] = 0;
				held[j] = held[--n];
				slot_arena_free(&a, idx);
			}
		}
		for (uint32_t j = 0; j < n; j++)
			check_fill(&a, held[j]);
		/* Every one of the cap slots can be held at once. */
		while (n < cap) {
			uint32_t idx = slot_arena_alloc(&a);

			assert_true(idx >= 1 && idx <= cap && !in[idx]);
			in[idx] = 1;
			n++;
		}
		assert_int_equal(slot_arena_alloc(&a), 0);
		slot_arena_destroy(&a);
		free(held);
		free(in);
	}
}

/* Grown to many chunks, drained to the first few slots: the rest goes
 * back, as the kernel sees it and as slot_arena_mem() says, except about
 * a chunk kept for the next inserts; refilled, released chunks come first
 * and read as zeros. */
static void test_gives_back(void **state)
{
	const uint32_t cap = 300000, keep = 1000;
	struct slot_arena a;
	size_t chunk, full;
	uint32_t fresh;

	(void)state;
	assert_int_equal(slot_arena_init(&a, cap, 16, 0), 0);
	chunk = (size_t)a.stride << a.chunk_shift;
	assert_int_equal(chunk % 4096, 0);
	for (uint32_t i = 1; i <= cap; i++) {
		assert_int_equal(slot_arena_alloc(&a), i);
		fill(&a, i);
	}
	full = slot_arena_mem(&a);
	assert_true(full >= (size_t)cap * 16);
	assert_true(resident(&a) >= (size_t)cap * 16);
	for (uint32_t i = keep + 1; i <= cap; i++)
		slot_arena_free(&a, i);
	for (uint32_t i = 1; i <= keep; i++)
		check_fill(&a, i);
	/* Kept: chunk 0 (the live slots), chunk 1 (freed first, while the
	 * others had less than a chunk of room) and the last chunk, shorter
	 * than the others.  The rest is given back. */
	assert_int_equal(a.released_n, a.n_chunks - 3);
	assert_true(slot_arena_mem(&a) <= 3 * chunk);
	assert_true(resident(&a) <= slot_arena_mem(&a));

	fresh = a.fresh;
	for (uint32_t i = keep + 1; i <= cap; i++) {
		uint32_t idx = slot_arena_alloc(&a), c = idx >> a.chunk_shift;
		const char *p = slot_arena_at(&a, idx);

		assert_true(idx > keep && idx <= cap);
		/* A released chunk's slots read as zeros. */
		if (c >= 2 && c < a.n_chunks - 1) {
			for (uint32_t b = 0; b < a.stride; b++)
				assert_int_equal(p[b], 0);
		}
		fill(&a, idx);
	}
	assert_int_equal(a.fresh, fresh);
	assert_int_equal(slot_arena_alloc(&a), 0);
	assert_true(slot_arena_mem(&a) >= full);
	slot_arena_destroy(&a);
}

/* An arena in the caller's address space with three mirrors (a per-CPU
 * map's regions): what a chunk gives back goes in every mirror, and the
 * memory counted is every mirror's. */
static void test_mirrors(void **state)
{
	const uint32_t cap = 100000, keep = 100, stride = 16, mirrors = 3;
	size_t step = ((((size_t)cap + 1) * stride + 4095) & ~(size_t)4095) + 4096;
	char *base = big_reserve(step * mirrors);
	struct slot_arena a;
	size_t chunk;

	(void)state;
	assert_non_null(base);
	assert_int_equal(slot_arena_init_at(&a, cap, stride, 0, base, mirrors, step), 0);
	chunk = (size_t)a.stride << a.chunk_shift;
	for (uint32_t i = 1; i <= cap; i++) {
		assert_int_equal(slot_arena_alloc(&a), i);
		for (uint32_t m = 0; m < mirrors; m++)
			memset(slot_arena_at(&a, i) + m * step, (int)(m + 1), stride);
	}
	assert_true(slot_arena_mem(&a) >= (size_t)cap * stride * mirrors);
	for (uint32_t i = keep + 1; i <= cap; i++)
		slot_arena_free(&a, i);
	assert_int_equal(a.released_n, a.n_chunks - 3); /* as test_gives_back says */
	assert_true(slot_arena_mem(&a) <= 3 * chunk * mirrors);
	for (uint32_t c = 2; c < a.n_chunks - 1; c++)
		for (uint32_t m = 0; m < mirrors; m++)
			assert_int_equal(slot_arena_at(&a, c << a.chunk_shift)[m * step + 5], 0);
	for (uint32_t i = 1; i <= keep; i++)
		for (uint32_t m = 1; m < mirrors; m++)
			assert_int_equal(slot_arena_at(&a, i)[m * step + 5], (char)(m + 1));
	slot_arena_destroy(&a);
	big_unreserve(base, step * mirrors);
}

/* Whether this kernel has MADV_POPULATE_WRITE (Linux 5.14). */
static bool kernel_populates(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	assert_true(p != MAP_FAILED);
	ok = !madvise(p, 4096, 23 /* MADV_POPULATE_WRITE */);
	munmap(p, 4096);
	return ok;
}

/* A growing arena: small, its memory is its slots' pages and nothing more;
 * from 256 KiB on, pages beyond the slots handed out are resident (faulted
 * in ahead, a run at a time), slot_arena_mem() counts every resident page,
 * and what is ahead stays within a sixteenth of what is used and a chunk. */
static void test_populates_ahead(void **state)
{
	const uint32_t cap = 200000;
	bool populates = kernel_populates();
	size_t most_ahead = 0, chunk;
	struct slot_arena a;

	(void)state;
	assert_int_equal(slot_arena_init(&a, cap, 16, 0), 0);
	chunk = (size_t)a.stride << a.chunk_shift;
	/* Nothing handed out, nothing touched. */
	assert_int_equal(slot_arena_mem(&a), 0);
	for (uint32_t i = 1; i <= cap; i++) {
		size_t used, mem, res;

		assert_int_equal(slot_arena_alloc(&a), i);
		fill(&a, i);
		if (i % 1024 && i != cap)
			continue;
		used = ((size_t)(i + 1) * 16 + 4095) & ~(size_t)4095;
		mem = slot_arena_mem(&a);
		res = resident(&a);
		assert_true(res <= mem);
		assert_true(mem >= used);
		if (used < ((size_t)256 << 10))
			assert_int_equal(mem, used);
		else
			assert_true(mem - used <= used / 16 + 4096 && mem - used <= chunk + 4096);
		if (res > used && res - used > most_ahead)
			most_ahead = res - used;
	}
	if (populates)
		assert_true(most_ahead >= 4 * 4096);
	else
		print_message("kernel without MADV_POPULATE_WRITE: pages fault in one by one, "
			      "the look-ahead is not checked\n");
	slot_arena_destroy(&a);
}

/* A map holding steady at a chunk boundary: the one slot left in a chunk
 * freed and taken again, over and over, gives nothing back (no system
 * call, no faults), while no other chunk has room for the next inserts. */
static void test_no_thrash(void **state)
{
	struct slot_arena a;
	uint32_t per, x;

	(void)state;
	assert_int_equal(slot_arena_init(&a, 100000, 16, 0), 0);
	per = 1u << a.chunk_shift;
	/* Chunks 0, 1 and 2 wholly in use (slot 0 is never handed out). */
	for (uint32_t i = 1; i < 3 * per; i++)
		assert_int_equal(slot_arena_alloc(&a), i);
	/* Chunk 2 drained but for x. */
	x = 2 * per;
	for (uint32_t i = x + 1; i < 3 * per; i++)
		slot_arena_free(&a, i);
	for (int r = 0; r < 10000; r++) {
		slot_arena_free(&a, x);
		assert_int_equal(slot_arena_alloc(&a), x);
	}
	assert_int_equal(a.released_n, 0);
	/* Chunk 1 emptied while chunk 2 has less than a chunk of room: kept. */
	for (uint32_t i = per; i < 2 * per; i++)
		slot_arena_free(&a, i);
	assert_int_equal(a.released_n, 0);
	/* Chunk 2 emptied with chunk 1's room beside it: given back. */
	slot_arena_free(&a, x);
	assert_int_equal(a.released_n, 1);
	slot_arena_destroy(&a);
}

/* The first chunk goes back too, and when it comes back its slot 0 (the
 * callers' "none") is still never handed out. */
static void test_first_chunk(void **state)
{
	const uint32_t cap = 3u << 12;
	struct slot_arena a;
	unsigned char *seen = calloc(cap + 1, 1);
	uint32_t per;

	(void)state;
	assert_int_equal(slot_arena_init(&a, cap - 1, 16, 0), 0);
	per = 1u << a.chunk_shift;
	assert_int_equal(3 * per, cap);
	for (uint32_t i = 1; i < cap; i++)
		assert_int_equal(slot_arena_alloc(&a), i);
	assert_int_equal(slot_arena_alloc(&a), 0);
	/* Last chunk first (nothing else has room: kept), then the two
	 * others go (the last one's room beside them). */
	for (uint32_t i = cap; --i > 0;)
		slot_arena_free(&a, i);
	assert_int_equal(a.released_n, 2);
	assert_true(resident(&a) <= per * 16);
	for (uint32_t i = 1; i < cap; i++) {
		uint32_t idx = slot_arena_alloc(&a);

		assert_true(idx >= 1 && idx < cap && !seen[idx]);
		seen[idx] = 1;
	}
	assert_int_equal(slot_arena_alloc(&a), 0);
	slot_arena_destroy(&a);
	free(seen);
}

#define THREADS 4
#define HELD 512
#define ROUNDS 50000

struct worker {
	struct slot_arena *a;
	unsigned char *owner;
	uint64_t seed;
	int dup;
};

static void *churn(void *arg)
{
	struct worker *w = arg;
	uint32_t held[HELD], n = 0;

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t x = rng_next(&w->seed);

		if (x % 2 && n < HELD) {
			uint32_t idx = slot_arena_alloc(w->a);

			if (!idx)
				continue;
			if (__atomic_exchange_n(&w->owner[idx], 1, __ATOMIC_RELAXED))
				w->dup++;
			held[n++] = idx;
		} else if (n) {
			uint32_t j = (uint32_t)(x >> 32) % n, idx = held[j];

			held[j] = held[--n];
			__atomic_store_n(&w->owner[idx], 0, __ATOMIC_RELAXED);
			slot_arena_free(w->a, idx);
		}
	}
	while (n) {
		__atomic_store_n(&w->owner[held[--n]], 0, __ATOMIC_RELAXED);
		slot_arena_free(w->a, held[n]);
	}
	return NULL;
}

/* Threads taking and giving back slots at once, with chunks emptying all
 * the time (small chunks: stride 8 KiB): no slot held twice, none lost. */
static void test_threads(void **state)
{
	const uint32_t cap = THREADS * HELD;
	struct slot_arena a;
	struct worker w[THREADS];
	pthread_t t[THREADS];
	unsigned char *owner = calloc(cap + 1, 1);

	(void)state;
	assert_int_equal(slot_arena_init(&a, cap, 8192, 0), 0);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .a = &a, .owner = owner, .seed = (uint64_t)i * 77 + 1 };
		assert_int_equal(pthread_create(&t[i], NULL, churn, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].dup, 0);
	}
	/* Everything is back: all cap slots can be held again. */
	for (uint32_t i = 0; i < cap; i++) {
		uint32_t idx = slot_arena_alloc(&a);

		assert_true(idx >= 1 && idx <= cap && !owner[idx]);
		owner[idx] = 1;
	}
	assert_int_equal(slot_arena_alloc(&a), 0);
	slot_arena_destroy(&a);
	free(owner);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_gives_back),
		cmocka_unit_test(test_mirrors),
		cmocka_unit_test(test_populates_ahead),
		cmocka_unit_test(test_no_thrash),
		cmocka_unit_test(test_first_chunk),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
