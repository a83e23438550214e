/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attacker's search with the flat table's own cost (docs/HASHING.md,
 * "What that search missed"): key families onto the 8192 homes of a
 * 65536-entry flat map, 50000 in and 15536 absent, scored per parameter
 * draw by the probe lengths tests/test_flooding.c reads from the table (a
 * home's first 8 keys in its bucket, the rest in its chain).  A family
 * that bunches in one draw in a hundred shows as draws over 1.3x random
 * keys; flood_search.c's sum of squared loads, over 8 draws, hid that.
 * Not a test: it runs for minutes and reports.
 *
 *	cc -O2 -I src -I include tests/tools/flood_tails.c build/src/libbpfmap.a \
 *	    -lurcu-bp -o flood_tails && ./flood_tails [draws] [random cubes]
 *
 * (CMake builds it with the tests, as build/tests/flood_tails.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../flood_model.h"

#define BOUND 1.3

static uint64_t keys[FLOOD_IN + FLOOD_ABSENT];

/* keys[] holds the family: draws over BOUND, and the worst ratio. */
static void score_family(const char *name, uint32_t ks, int draws, struct flood_probe base)
{
	struct hash_params p;
	double worst = 0;
	int over = 0;

	for (int r = 0; r < draws; r++) {
		hash_params_random(&p);
		struct flood_probe s = flood_model_probe(keys, ks, &p);
		double x = s.present / base.present > s.absent / base.absent
				   ? s.present / base.present
				   : s.absent / base.absent;

		over += x > BOUND;
		worst = x > worst ? x : worst;
	}
	printf("%u-byte %-40s %5d draws: %4d over %.1fx, worst %.2fx\n", ks, name, draws, over,
	       BOUND, worst);
}

int main(int argc, char **argv)
{
	int draws = argc > 1 ? atoi(argv[1]) : 2000;
	int ncubes = argc > 2 ? atoi(argv[2]) : 100;
	static const struct flood_family fams[] = {
		{ "equal halves, sequential", 8, 0, 0, 0x100000001ULL },
		{ "top octets of both halves", 8, 0xff000000ff000000ULL, 0, 0 },
		{ "192.168.1.x / 192.168.2.y", 8, 0xff000000ff000000ULL, 0x0002a8c00001a8c0ULL, 0 },
		{ "cube 0xffff000000000000", 8, 0xffff000000000000ULL, 0, 0 },
		{ "cube 0xf000f000f000f000", 8, 0xf000f000f000f000ULL, 0, 0 },
		{ "cube 0xffc000003f000000", 8, 0xffc000003f000000ULL, 0, 0 },
		{ "cube 0xc0c0c0c0c0c0c0c0", 8, 0xc0c0c0c0c0c0c0c0ULL, 0, 0 },
		{ "sequential", 8, 0, 0, 1 },
		{ "stride 4096", 8, 0, 0, 4096 },
		{ "stride 75025", 8, 0, 0, 75025 },
		{ "high half sequential", 8, 0, 0, 1ULL << 32 },
		{ "stride 2^24 + 2^56", 8, 0, 0, 0x0100000001000000ULL },
		{ "cube 0xffff0000", 4, 0xffff0000ULL, 0, 0 },
		{ "cube 0xff00ff00", 4, 0xff00ff00ULL, 0, 0 },
		{ "cube 0xf0f0f0f0", 4, 0xf0f0f0f0ULL, 0, 0 },
		{ "stride 4096", 4, 0, 0, 4096 },
		{ "stride 2^16 + 1", 4, 0, 0, 65537 },
	};
	struct flood_probe base[9];
	char name[64];

	base[4] = flood_random_base(keys, 4, 32);
	base[8] = flood_random_base(keys, 8, 32);
	printf("random keys: 4-byte %.3f / %.3f, 8-byte %.3f / %.3f (present / absent)\n",
	       base[4].present, base[4].absent, base[8].present, base[8].absent);
	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		flood_family_keys(&fams[f], keys);
		score_family(fams[f].name, fams[f].ks, draws, base[fams[f].ks]);
	}
	for (int c = 0; c < ncubes; c++) {
		uint32_t ks = c % 2 ? 4 : 8;
		uint64_t mask = flood_draw_mask(8 * ks, 6);
		uint64_t bits = rnd() % 2 ? rnd() & ~mask : 0;
		struct flood_family cube = { name, ks, mask, ks == 4 ? bits & 0xffffffff : bits, 0 };

		snprintf(name, sizeof(name), "cube %#llx | %#llx", (unsigned long long)mask,
			 (unsigned long long)cube.base);
		flood_family_keys(&cube, keys);
		score_family(name, ks, draws / 4, base[ks]);
	}
	return 0;
}
