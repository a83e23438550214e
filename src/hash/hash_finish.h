/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The last step of every hash a map uses, and why each is safe against
 * chosen keys.
 *
 * Every hash here is two stages.  The first maps the key to a 64-bit value
 * s: a random-multiplier product for 4- and 8-byte keys (hash/fast_hash.h),
 * the word hash's or NH's sum for longer ones.  The second,
 *
 *	hash_finish(s) = (s ^ (s >> 32)) * fin  mod 2^64,  fin random and odd,
 *
 * gives the 64-bit hash, of which the tables use the top bits (the flat
 * table's fastrange, the chained table's shift).
 *
 * Bound.  Take two distinct keys fixed in advance.  If their first-stage
 * values differ (always for word keys, whose first stage is a bijection;
 * else but with the first stage's probability, stated in its header), the
 * xor-fold keeps them distinct (it is a bijection), and multiplying by a
 * uniform odd fin, independent of the first stage, is multiply-shift
 * (Dietzfelbinger, Hagerup, Katajainen, Penttonen, "A reliable randomized
 * algorithm for the closest-pair problem", J. Algorithms 1997): the
 * difference of the two products is uniform over the odd multiples of some
 * 2^t, and their top bits can only agree where it lies within 2^64/n of 0.
 * So two keys share one of n home buckets with probability at most about
 * 2/n, plus the first stage's collision probability, whatever keys an
 * attacker picks without knowing the parameters.
 *
 * Why the fold, and two multiplies for word keys where one is universal
 * already.  A hash linear in the key (multiply-shift alone, the word hash,
 * NH) maps an arithmetic progression of keys -- sequential keys, a stride, a
 * counter in one field -- to an arithmetic progression of hashes, and for a
 * few percent of multipliers that progression bunches onto a fraction of
 * the buckets: measured on flat maps of 65536 entries holding 50000
 * sequential 8-byte keys, one map in a hundred probed 2.3x longer than with
 * random keys, one in three hundred 13x; multiples of 75025, 530x.  (Linear
 * probing needs more than pairwise independence: Patrascu and Thorup, "On
 * the k-independence required by linear probing and minwise independence",
 * ICALP 2010.)  The xor of the two halves between two multiplies breaks
 * the progression; the same measurement then stays within 1.06x of random
 * keys on every map.
 */
#ifndef BPFMAP_HASH_HASH_FINISH_H
#define BPFMAP_HASH_HASH_FINISH_H

#include <stdint.h>

#include "util/compiler.h"

static ALWAYS_INLINE uint64_t hash_finish(uint64_t s, uint64_t fin)
{
	return (s ^ (s >> 32)) * fin;
}

#endif
