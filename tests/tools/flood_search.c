/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What an attacker who knows the hash but not a map's parameters would try
 * (issue 13): search for key families that crowd the homes of maps with
 * random parameters.  Not a test (it runs for a while and reports); the
 * families it finds worst go to tests/test_flooding.c's kind of check.
 *
 *	cc -O2 -I src -I include tests/tools/flood_search.c build/src/libbpfmap.a \
 *	    -lurcu-bp -o flood_search && ./flood_search [masks]
 *
 * (CMake builds it with the tests, as build/tests/flood_search.)
 *
 * 1. Subcubes: all 2^16 combinations of 16 key bits, the masks drawn at
 *    random (any bits, one or two bytes' worth, runs, top and bottom bits),
 *    for 4- and 8-byte keys.  Each is hashed under 8 fresh random parameter
 *    sets onto the 9363 homes of a 65536-entry flat map; the figure is the
 *    worst sum of squared home loads over the 8, against the mean for random
 *    keys (1.00 = as random; the old multiplier scored 10-80 on its bad
 *    cubes).  That score and 8 draws miss a family that bunches in one
 *    draw in a hundred: flood_tails.c scores subcubes by the table's probe
 *    lengths over thousands of draws.
 * 2. Lane relations: pairs (x, x + delta) of 512-byte keys for short integer
 *    vectors delta over up to 40 lanes (the old attack's shape: low halves
 *    stepped, high halves 0), counting how often the two share a home over
 *    20000 random parameter sets; chance is 1/9363.  Under the old scheme
 *    the lane relation of tests/test_flooding.c collided every time.
 * 3. The same for 16- and 48-byte keys under the word hash, deltas in
 *    several 32-bit words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash/hash_params.h"
#include "hash/hash_select.h"
#include "../flood_model.h"
#include "../test_bits.h"
#include "../test_rng.h"

#define HOMES 9363u
#define CUBE 65536u
#define MAPS 8

static uint32_t home_of(uint64_t h)
{
	return (uint32_t)(((unsigned __int128)h * HOMES) >> 64);
}

static uint32_t load[HOMES];

/* Sum of squared home loads of @n keys from @gen. */
static double crowding(hash_fn fn, const struct hash_params *p, uint32_t ks, uint64_t mask,
		       bool random)
{
	double s = 0;

	memset(load, 0, sizeof(load));
	for (uint32_t i = 0; i < CUBE; i++) {
		uint64_t k = random ? rnd() : deposit(i, mask);

		load[home_of(fn(&k, ks, p))]++;
	}
	for (uint32_t h = 0; h < HOMES; h++)
		s += (double)load[h] * load[h];
	return s;
}

static void search_cubes(uint32_t ks, int masks)
{
	hash_fn fn = hash_fn_for_kind(hash_kind_for_key_size(ks));
	struct hash_params p;
	double base = 0, worst = 0;
	uint64_t worst_mask = 0;

	for (int r = 0; r < MAPS; r++) {
		hash_params_random(&p);
		base += crowding(fn, &p, ks, 0, true) / MAPS;
	}
	for (int i = 0; i < masks; i++) {
		uint64_t mask = flood_draw_mask(8 * ks, 5);
		double w = 0;

		for (int r = 0; r < MAPS; r++) {
			hash_params_random(&p);
			double c = crowding(fn, &p, ks, mask, false);

			if (c > w)
				w = c;
		}
		if (w > worst) {
			worst = w;
			worst_mask = mask;
		}
	}
	printf("%u-byte subcubes: %d masks x %d maps; worst %#llx: %.3f x random keys' crowding\n",
	       ks, masks, MAPS, (unsigned long long)worst_mask, worst / base);
}

/* Home collisions of (x, x + delta) over @trials parameter sets. */
static void search_relations(uint32_t ks, uint32_t step, uint32_t max_lanes, int deltas,
			     int trials)
{
	hash_fn fn = hash_fn_for_kind(hash_kind_for_key_size(ks));
	static unsigned char x[1024], y[1024];
	struct hash_params p;
	double worst = 0, mean = 0;
	int worst_lanes = 0, tried = 0;

	for (int d = 0; d < deltas; d++) {
		uint32_t lanes = 2 + (uint32_t)(rnd() % (max_lanes - 1)), hits = 0;

		memset(x, 0, ks);
		memset(y, 0, ks);
		for (uint32_t j = 0; j < lanes; j++) {
			uint32_t off = step * (j + 1), lo = 0x40000000u;
			int32_t dj = (int32_t)(rnd() % 29) - 14;

			if (off + 4 > ks)
				break;
			memcpy(x + off, &lo, 4);
			lo += (uint32_t)dj;
			memcpy(y + off, &lo, 4);
		}
		if (!memcmp(x, y, ks))
			continue;
		for (int t = 0; t < trials; t++) {
			hash_params_random(&p);
			hits += home_of(fn(x, ks, &p)) == home_of(fn(y, ks, &p));
		}
		double rate = (double)hits / trials * HOMES;

		mean += rate;
		tried++;
		if (rate > worst) {
			worst = rate;
			worst_lanes = (int)lanes;
		}
	}
	/* The worst of many is high by chance: each count is Poisson with mean
	 * trials / HOMES. */
	printf("%u-byte relations: %d deltas x %d maps share a home %.2f x chance (1/%u) on "
	       "average, the worst (%d lanes) %.2f x (%.0f hits, mean %.1f)\n", ks, tried, trials,
	       mean / tried, HOMES, worst_lanes, worst, worst * trials / HOMES,
	       (double)trials / HOMES);
}

int main(int argc, char **argv)
{
	test_rng = 0x243f6a8885a308d3ULL;
	int masks = argc > 1 ? atoi(argv[1]) : 400;

	search_cubes(4, masks);
	search_cubes(8, masks);
	search_relations(512, 8, 40, 200, 20000);
	search_relations(1024, 8, 40, 100, 20000);
	search_relations(16, 4, 3, 200, 20000);
	search_relations(48, 4, 11, 200, 20000);
	return 0;
}
