/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Issue 13's measurement, through the public API only, so that one source
 * builds against any version of the library:
 *
 *	cc -O2 -I include tests/tools/flood_time.c build/src/libbpfmap.a -lurcu-bp -o flood_time
 *	./flood_time
 *
 * (CMake builds it with the tests, as build/tests/flood_time.)
 *
 * For each key family: fresh maps with random parameters, the family's keys
 * inserted, then the median time of a lookup of a present key against the
 * same for random keys of the same size in the same kind of map.  A ratio
 * near 1 means the family does not slow the map.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpfmap.h>
#include "../test_bits.h"
#include "../test_rng.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static const int8_t eta[40] = { 2,  -3, 3,  13, 0,  -9, -1, 0,  7,  5,  -3, -9, -14, -13,
				-3, 9,  -1, 9,  -5, 0,  -1, 9,  -4, 0,  -2, 7,  -4, 4,
				10, 1,  5,  1,  -9, -4, 0,  1,  5,  -3, -5, 2 };

enum kind { CUBE, ETA, SEQ, RANDOM };

static void make_key(enum kind kind, uint64_t arg, uint32_t ks, uint32_t i, char *key)
{
	uint64_t k;

	memset(key, 0, ks);
	switch (kind) {
	case CUBE:
		k = deposit((uint64_t)(i * 40503u) & 0xffff, arg);
		memcpy(key, &k, ks < 8 ? ks : 8);
		break;
	case ETA:
		for (uint32_t j = 0; j < 40; j++) {
			uint32_t lo = 0x40000000u + (uint32_t)((int32_t)i * eta[j]);

			memcpy(key + 8 * (j + 1), &lo, 4);
		}
		break;
	case SEQ:
		k = (uint64_t)(i + 1) * arg;
		memcpy(key, &k, ks < 8 ? ks : 8);
		break;
	case RANDOM:
		for (uint32_t b = 0; b < ks; b += 8) {
			k = rnd();
			memcpy(key + b, &k, ks - b < 8 ? ks - b : 8);
		}
		break;
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median ns per lookup of the n present keys over @maps fresh maps. */
static double run(enum kind kind, uint64_t arg, uint32_t ks, uint32_t me, uint32_t n,
		  uint32_t flags, int maps)
{
	double t[64];
	char *keys = malloc((size_t)n * ks);
	uint64_t v = 0;

	for (int r = 0; r < maps; r++) {
		BPFMAP_CREATE_OPTS(o, .map_flags = flags);
		struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, ks, 8, me, &o);
		uint32_t in = 0;

		for (uint32_t i = 0; i < n; i++) {
			make_key(kind, arg, ks, i, keys + (size_t)in * ks);
			in += bpfmap_update_elem(m, keys + (size_t)in * ks, &v, BPFMAP_NOEXIST) == 0;
		}
		double t0 = now_ns();
		for (int pass = 0; pass < 3; pass++)
			for (uint32_t i = 0; i < in; i++)
				bpfmap_lookup_elem(m, keys + (size_t)i * ks, &v);
		t[r] = (now_ns() - t0) / (3.0 * in);
		bpfmap_free(m);
	}
	free(keys);
	qsort(t, maps, sizeof(t[0]), cmp);
	return t[maps / 2];
}

static void family(const char *name, enum kind kind, uint64_t arg, uint32_t ks, uint32_t me,
		   uint32_t n, uint32_t flags)
{
	double fam = run(kind, arg, ks, me, n, flags, 5);
	double base = run(RANDOM, 0, ks, me, n, flags, 5);

	printf("%-42s %8.1f ns  random %6.1f ns  %6.2fx\n", name, fam, base, fam / base);
}

int main(void)
{
	test_rng = 0x9e3779b97f4a7c15ULL;
	family("8-byte cube 0x01c6003e04062018", CUBE, 0x01c6003e04062018ULL, 8, 65536, 50000, 0);
	family("4-byte cube 0x1f81e07e", CUBE, 0x1f81e07eULL, 4, 65536, 50000, 0);
	family("8-byte cube 0xffe0084000600020, NO_PREALLOC", CUBE, 0xffe0084000600020ULL, 8,
	       65536, 50000, BPFMAP_F_NO_PREALLOC);
	family("512-byte lane relation", ETA, 0, 512, 65536, 5000, 0);
	family("1024-byte lane relation", ETA, 0, 1024, 65536, 5000, 0);
	family("ZERO_SEED 8-byte multiples of 75025", SEQ, 75025, 8, 65536, 50000,
	       BPFMAP_F_ZERO_SEED);
	family("8-byte sequential", SEQ, 1, 8, 65536, 50000, 0);
	return 0;
}
