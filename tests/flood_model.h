/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A flat map's probe lengths from its hash alone, for many parameter draws
 * in little time (tests/test_flooding.c test_tails, tests/tools/
 * flood_tails.c): the keys' homes among FLOOD_HOMES (a 65536-entry flat map
 * of 4- or 8-byte keys), a home's first FLOOD_SLOTS keys in its bucket and
 * the rest in its chain, scored as flat_probe scores the table.
 */
#ifndef BPFMAP_TESTS_FLOOD_MODEL_H
#define BPFMAP_TESTS_FLOOD_MODEL_H

#include <stdint.h>
#include <string.h>

#include "hash/hash_params.h"
#include "hash/hash_select.h"

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

#endif
