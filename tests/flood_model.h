/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A flat map's probe lengths from its hash alone, for many parameter draws
 * in little time (tests/test_flooding.c test_tails, tests/tools/
 * flood_tails.c): the keys' homes among FLOOD_HOMES (a 65536-entry flat map
 * of 4- or 8-byte keys), a home's first FLOOD_SLOTS keys in its bucket and
 * the rest in its chain, scored as flat_probe scores the table; the key
 * families and random 16-bit masks that test_tails, flood_tails.c and
 * flood_search.c feed it.
 */
#ifndef BPFMAP_TESTS_FLOOD_MODEL_H
#define BPFMAP_TESTS_FLOOD_MODEL_H

#include <stdint.h>
#include <string.h>

#include "hash/hash_params.h"
#include "hash/hash_select.h"
#include "test_bits.h"
#include "test_rng.h"

#define FLOOD_HOMES 8192u
#define FLOOD_SLOTS 8u
#define FLOOD_IN 50000u
#define FLOOD_ABSENT 15536u

struct flood_probe {
	double present, absent;
};

/* keys[0 .. FLOOD_IN) go in, the next FLOOD_ABSENT are asked. */
static inline struct flood_probe flood_model_probe(const uint64_t *keys, uint32_t ks,
						   const struct hash_params *hp)
{
	static uint32_t load[FLOOD_HOMES];
	hash_fn fn = hash_fn_for_kind(hash_kind_for_key_size(ks));
	struct flood_probe p = { 0, 0 };

	memset(load, 0, sizeof(load));
	for (uint32_t i = 0; i < FLOOD_IN + FLOOD_ABSENT; i++) {
		uint32_t h = (uint32_t)(((unsigned __int128)fn(&keys[i], ks, hp) * FLOOD_HOMES) >> 64);

		if (i < FLOOD_IN)
			load[h]++;
		else
			p.absent += 1 + (load[h] > FLOOD_SLOTS ? load[h] - FLOOD_SLOTS : 0);
	}
	for (uint32_t h = 0; h < FLOOD_HOMES; h++) {
		uint32_t len = load[h] > FLOOD_SLOTS ? load[h] - FLOOD_SLOTS : 0;

		p.present += load[h] - len + (double)len * (len + 3) / 2;
	}
	p.present /= FLOOD_IN;
	p.absent /= FLOOD_ABSENT;
	return p;
}

/* Random keys' mean probe lengths over @draws parameter draws (@keys
 * overwritten). */
static inline struct flood_probe flood_random_base(uint64_t *keys, uint32_t ks, uint32_t draws)
{
	struct flood_probe base = { 0, 0 };
	struct hash_params hp;

	for (uint32_t r = 0; r < draws; r++) {
		struct flood_probe p;

		for (uint32_t i = 0; i < FLOOD_IN + FLOOD_ABSENT; i++)
			keys[i] = ks == 4 ? (uint32_t)rnd() : rnd();
		hash_params_random(&hp);
		p = flood_model_probe(keys, ks, &hp);
		base.present += p.present / draws;
		base.absent += p.absent / draws;
	}
	return base;
}

/* A key family: the subcube over @mask (its points in a fixed
 * pseudo-random order) with @base's bits set, or with mask 0 the
 * progression (i + 1) * @stride. */
struct flood_family {
	const char *name;
	uint32_t ks;
	uint64_t mask, base, stride;
};

static inline void flood_family_keys(const struct flood_family *fam, uint64_t *keys)
{
	for (uint32_t i = 0; i < FLOOD_IN + FLOOD_ABSENT; i++) {
		uint64_t k = fam->mask ? deposit((uint64_t)(i * 40503u) & 0xffff, fam->mask) | fam->base
				       : (uint64_t)(i + 1) * fam->stride;

		keys[i] = fam->ks == 4 ? (uint32_t)k : k;
	}
}

/* A mask of 16 bits below @width, of one of the first @shapes shapes: any
 * bits, a run, the top bits, two bytes, any bits, the top bits of every
 * 16- or 32-bit field. */
static inline uint64_t flood_draw_mask(uint32_t width, uint32_t shapes)
{
	uint64_t m = 0;
	uint32_t shape = (uint32_t)(rnd() % shapes);

	if (shape == 1)
		return 0xffffULL << (rnd() % (width - 15));
	if (shape == 2)
		return 0xffffULL << (width - 16);
	if (shape == 3) {
		uint32_t a = (uint32_t)(rnd() % (width / 8)), b;

		do
			b = (uint32_t)(rnd() % (width / 8));
		while (b == a);
		return 0xffULL << (8 * a) | 0xffULL << (8 * b);
	}
	if (shape == 5) {
		uint32_t field = width == 64 && rnd() % 2 ? 32 : 16, per = 16 / (width / field);

		for (uint32_t b = 0; b < width; b += field)
			m |= ((1ULL << per) - 1) << (b + field - per);
		return m;
	}
	while (__builtin_popcountll(m) < 16)
		m |= 1ULL << (rnd() % width);
	return m;
}

#endif
