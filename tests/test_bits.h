/* SPDX-License-Identifier: BSD-2-Clause */
/* Bit tricks the flooding tests and tools share. */
#ifndef BPFMAP_TESTS_TEST_BITS_H
#define BPFMAP_TESTS_TEST_BITS_H

#include <stdint.h>

/* The bits of @i deposited, lowest first, at the set bits of @mask: point
 * @i of the subcube that @mask spans (pdep, without needing BMI2). */
static inline uint64_t deposit(uint64_t i, uint64_t mask)
{
	uint64_t r = 0;

	for (uint64_t bit = 1; mask; bit <<= 1, mask &= mask - 1)
		if (i & bit)
			r |= mask & -mask;
	return r;
}

#endif
