/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The tests' pseudo-random numbers: Marsaglia's xorshift64 (shifts 13, 7,
 * 17), period 2^64 - 1 over the non-zero states.  Cheap, and a run replays
 * from its seed; not for anything but tests.
 *
 * rng_next() steps a caller's own state (one per thread in the concurrency
 * tests); rnd() and rnd_below() step the including test's default state,
 * test_rng, which it may reseed (never with 0, a fixed point).
 */
#ifndef BPFMAP_TESTS_TEST_RNG_H
#define BPFMAP_TESTS_TEST_RNG_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* A number in [0, n), 0 for n = 0 (the modulo bias does not matter here). */
static inline size_t rng_below(uint64_t *state, size_t n)
{
	return n ? (size_t)(rng_next(state) % n) : 0;
}

/* The default state: one per test program (each includes this once). */
static uint64_t test_rng __attribute__((unused)) = 0x2545f4914f6cdd1dULL;

static inline uint64_t rnd(void)
{
	return rng_next(&test_rng);
}

static inline size_t rnd_below(size_t n)
{
	return rng_below(&test_rng, n);
}

#endif
