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
#include "../test_bits.h"
#include "../test_rng.h"

#define BOUND 1.3

static uint64_t keys[FLOOD_IN + FLOOD_ABSENT];

static struct flood_probe random_keys(uint32_t ks)
{
	struct hash_params p;
	struct flood_probe base = { 0, 0 };

	for (int r = 0; r < 32; r++) {
		for (uint32_t i = 0; i < FLOOD_IN + FLOOD_ABSENT; i++)
			keys[i] = ks == 4 ? (uint32_t)rnd() : rnd();
		hash_params_random(&p);
		struct flood_probe s = flood_model_probe(keys, ks, &p);
		base.present += s.present / 32;
		base.absent += s.absent / 32;
	}
	return base;
}

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

static void cube(uint64_t mask, uint64_t base_bits)
{
	for (uint32_t i = 0; i < FLOOD_IN + FLOOD_ABSENT; i++)
		keys[i] = deposit((uint64_t)(i * 40503u) & 0xffff, mask) | base_bits;
}

static void progression(uint32_t ks, uint64_t stride)
{
	for (uint32_t i = 0; i < FLOOD_IN + FLOOD_ABSENT; i++)
		keys[i] = ks == 4 ? (uint32_t)((i + 1) * stride) : (i + 1) * stride;
}

/* 16 key bits of one of several shapes (flood_search.c's, and the top
 * bits of every 16- or 32-bit field). */
static uint64_t draw_mask(uint32_t width)
{
	uint64_t m = 0;
	uint32_t shape = (uint32_t)(rnd() % 6);

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

int main(int argc, char **argv)
{
	int draws = argc > 1 ? atoi(argv[1]) : 2000;
	int ncubes = argc > 2 ? atoi(argv[2]) : 100;
	static const struct {
		const char *name;
		uint32_t ks;
		uint64_t mask, base, stride;
	} fams[] = {
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

	base[4] = random_keys(4);
	base[8] = random_keys(8);
	printf("random keys: 4-byte %.3f / %.3f, 8-byte %.3f / %.3f (present / absent)\n",
	       base[4].present, base[4].absent, base[8].present, base[8].absent);
	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		if (fams[f].mask)
			cube(fams[f].mask, fams[f].base);
		else
			progression(fams[f].ks, fams[f].stride);
		score_family(fams[f].name, fams[f].ks, draws, base[fams[f].ks]);
	}
	for (int c = 0; c < ncubes; c++) {
		uint32_t ks = c % 2 ? 4 : 8;
		uint64_t mask = draw_mask(8 * ks);
		uint64_t bits = rnd() % 2 ? rnd() & ~mask : 0;

		cube(mask, ks == 4 ? bits & 0xffffffff : bits);
		snprintf(name, sizeof(name), "cube %#llx | %#llx", (unsigned long long)mask,
			 (unsigned long long)(ks == 4 ? bits & 0xffffffff : bits));
		score_family(name, ks, draws / 4, base[ks]);
	}
	return 0;
}
