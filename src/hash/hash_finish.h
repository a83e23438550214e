/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The last step of every hash a map uses, and why each is safe against
 * chosen keys.
 *
 * Every hash here is two stages.  The first maps the key to a 64-bit value
 * s: a random-multiplier product for 4- and 8-byte keys (hash/fast_hash.h),
 * the word hash's or NH's sum for longer ones.  The second,
 *
 *	x = s ^ (s >> 32);  x *= HASH_MIX;  x ^= x >> 32;
 *	hash_finish(s) = x * fin  mod 2^64,  fin random and odd,
 *
 * gives the 64-bit hash, of which the tables use the top bits (the flat
 * table's fastrange, the chained table's shift).
 *
 * Bound.  Take two distinct keys fixed in advance.  If their first-stage
 * values differ (always for word keys, whose first stage is a bijection;
 * else but with the first stage's probability, stated in its header), x
 * keeps them distinct (xor-shifts and a product with an odd constant are
 * bijections), and multiplying by a uniform odd fin, independent of the
 * first stage, is multiply-shift (Dietzfelbinger, Hagerup, Katajainen,
 * Penttonen, "A reliable randomized algorithm for the closest-pair
 * problem", J. Algorithms 1997): the difference of the two products is
 * uniform over the odd multiples of some 2^t, and their top bits can only
 * agree where it lies within 2^64/n of 0.  So two keys share one of n home
 * buckets with probability at most about 2/n, plus the first stage's
 * collision probability, whatever keys an attacker picks without knowing
 * the parameters.
 *
 * Why more than that bound asks.  Bucket overflow and linear probing need
 * more than pairwise independence (Patrascu and Thorup, "On the
 * k-independence required by linear probing and minwise independence",
 * ICALP 2010), and a hash nearly linear in the key maps structured key sets
 * onto structured sets of buckets for some parameter draws:
 *  - an arithmetic progression of keys (sequential keys, a stride, a
 *    counter in one field) becomes a progression of products, which for
 *    some multipliers bunches onto a fraction of the buckets;
 *  - a product keeps its factor's trailing zeros, and its low bits depend
 *    on the factor's low bits only: keys whose varying bits sit high in
 *    both 32-bit halves (the last octets of two IPv4 addresses in network
 *    order) reach the second stage with their low bits constant, and 8-byte
 *    keys with equal halves (lo ^ hi = 0) with their whole low half zero,
 *    and a fold and one multiply then leave a progression again.
 * The product with HASH_MIX between two xor-shifts (MurmurHash3's fmix64
 * shape) carries every bit of the fold into the top bits that fin then
 * spreads.  docs/HASHING.md has the families and what each construction
 * measured; it costs one multiply on the lookups' critical path.
 */
#ifndef BPFMAP_HASH_HASH_FINISH_H
#define BPFMAP_HASH_HASH_FINISH_H

#include <stdint.h>

#include "util/compiler.h"

/* A fixed odd constant: part of the bijection between the two random
 * stages, so it needs no secrecy (MurmurHash3 fmix64's first multiplier). */
#define HASH_MIX 0xff51afd7ed558ccdULL

static ALWAYS_INLINE uint64_t hash_finish(uint64_t s, uint64_t fin)
{
	s ^= s >> 32;
	s *= HASH_MIX;
	s ^= s >> 32;
	return s * fin;
}

#endif
