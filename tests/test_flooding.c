/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hash flooding: key families chosen without knowing a map's parameters
 * must not slow it.  Each family below slowed the hashes of e3e6fd2 75-200x
 * (issue 13); here each goes into fresh maps with random parameters, and the
 * probe lengths the table itself reports -- the buckets a lookup of a present
 * key scans, and the buckets (flat) or elements (chained) a lookup of an
 * absent member of the family scans -- must stay within 1.3x of random keys
 * in maps of the same geometry.  Every map of every family is checked, not a
 * median: a family that hurts one map in a few is an attack too.
 *
 * The families:
 *  - all 65536 combinations of the bits of a 64-bit mask (8-byte keys) or a
 *    32-bit one (4-byte keys), the subcubes that clustered under the old
 *    fixed multiplier, in flat and chained (NO_PREALLOC) maps;
 *  - 512- and 1024-byte keys whose lanes 1..40 step by a fixed integer
 *    relation (tests/tools/hash_reference.py eta): every key had one hash
 *    under every seed when NH's coefficients were one table xored with the
 *    seed;
 *  - sequential and strided keys, which a hash linear in the key bunches
 *    onto a few buckets in about one map in a hundred (hash/hash_finish.h);
 *  - BPFMAP_F_ZERO_SEED maps (fixed parameters) with multiples of 75025, which
 *    defeated the old zero-seed hash (Fibonacci hashing) 110x.
 * RHASH maps get the subcubes, a lane relation and progressions too; its
 * probe is the groups of a bucket scanned.
 *
 * A map of a family that hurts one parameter draw in a hundred is met by
 * eight maps now and then, a flaky test.  test_tails draws hundreds: the
 * hash alone onto the homes of a 65536-entry flat map (its probe lengths
 * follow from the homes' loads), for the families that bunched in a
 * steady share of draws while the hash's second stage was a fold and one
 * multiply (until 1da51c8; hash/hash_finish.h says why): equal halves, the
 * top octets of both halves, and other keys whose varying bits sit high.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_rng.h"
#include "test_util.h"
#include "tables/flat.h"
#include "tables/chain.h"
#include "tables/rtab.h"
#include "flood_model.h"
#include "test_bits.h"

#define BOUND 1.3

/* The family tables below are positional; their type, last, defaults to
 * HASH where it is left out. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* ---- what the tables report ---------------------------------------------- */

/* Flat: a present key costs its home bucket, plus its place in the home's
 * chain if it is a node; an absent one the bucket and the whole chain. */
static uint32_t flat_chain_len(const struct flat *f, uint32_t h)
{
	uint32_t n = 0;

	for (uint32_t pos = flat_chain(f, h); pos != FLAT_NONE; pos = flat_node_next(f, pos))
		n++;
	return n;
}

static struct flood_probe flat_probe(struct bpfmap *m, const char *absent, uint32_t n_absent)
{
	struct flat *f = to_flat(m);
	uint32_t ks = m->key_size;
	struct flood_probe p = { 0, 0 };
	uint64_t n = 0;

	/* Single-threaded: the chains hold still. */
	for (uint32_t h = 0; h < f->n_homes; h++) {
		uint64_t live = flat_live(__atomic_load_n(&f->buckets[h].tags, __ATOMIC_ACQUIRE));
		uint32_t len = flat_chain_len(f, h);

		p.present += __builtin_popcountll(live) + (double)len * (len + 3) / 2;
		n += (uint64_t)__builtin_popcountll(live) + len;
	}
	p.present /= (double)n;
	for (uint32_t i = 0; i < n_absent; i++)
		p.absent += 1 + flat_chain_len(f, flat_home(f, flat_hash(f, absent + (size_t)i * ks)));
	p.absent /= n_absent;
	return p;
}

/* Chained: a present key compares the elements up to its own; an absent one
 * its bucket's whole chain. */
static struct flood_probe chain_probe(struct bpfmap *m, const char *absent, uint32_t n_absent)
{
	struct chain *h = to_chain(m);
	struct flood_probe p = { 0, 0 };
	uint64_t n = 0;

	for (uint32_t b = 0; b < h->n_buckets; b++) {
		uint32_t pos = 0;

		for (struct chain_elem *e = h->buckets[b].head; e; e = e->next) {
			p.present += ++pos;
			n++;
		}
	}
	p.present /= (double)n;
	for (uint32_t i = 0; i < n_absent; i++) {
		struct chain_bucket *b = chain_bucket(h, chain_hash(h, absent + (size_t)i * m->key_size));

		for (struct chain_elem *e = b->head; e; e = e->next)
			p.absent++;
	}
	p.absent /= n_absent;
	return p;
}

/* RHASH: a present key costs the groups of its bucket up to its own; an
 * absent one all of them.  A bucket is found as lookups find it, through a
 * resize in progress too. */
static const struct rtab_group *rtab_first_group(struct rtab *r, uint32_t hash)
{
	struct rtab_table *t = rtab_table_of(r);
	const struct rtab_group *g = &t->groups[rtab_bucket(t, hash)];

	while (g->next == RTAB_MOVED) {
		t = t->next;
		g = &t->groups[rtab_bucket(t, hash)];
	}
	return g;
}

static uint32_t rtab_groups_to(struct rtab *r, const char *key, bool absent)
{
	uint32_t hash = rtab_hash(r, key, r->map.key_size, r->hash_kind), n = 0;

	for (const struct rtab_group *g = rtab_first_group(r, hash); g;
	     g = g->next == RTAB_NONE ? NULL : rtab_ogroup(r, g->next)) {
		n++;
		for (int i = 0; !absent && i < RTAB_SLOTS; i++)
			if (g->link[i] && !memcmp(rtab_elem(r, g->link[i]), key, r->map.key_size))
				return n;
	}
	return n;
}

static struct flood_probe rtab_probe(struct bpfmap *m, const char *present, uint32_t n_present,
				     const char *absent, uint32_t n_absent)
{
	struct flood_probe p = { 0, 0 };

	for (uint32_t i = 0; i < n_present; i++)
		p.present += rtab_groups_to(to_rtab(m), present + (size_t)i * m->key_size, false);
	for (uint32_t i = 0; i < n_absent; i++)
		p.absent += rtab_groups_to(to_rtab(m), absent + (size_t)i * m->key_size, true);
	p.present /= n_present;
	p.absent /= n_absent;
	return p;
}

/* ---- the families ---------------------------------------------------------- */

struct family {
	const char *name;
	uint32_t ks, max_entries, map_flags;
	uint32_t n_in, n_absent; /* keys 0 .. n_in - 1 go in, the next n_absent are asked */
	uint32_t maps;		 /* fresh maps (random parameters unless ZERO_SEED) */
	void (*gen)(const struct family *fam, uint32_t i, char *key);
	uint64_t arg;
	enum bpfmap_type type; /* 0: HASH */
};

/* The subcube's points in a fixed pseudo-random order, so that the keys
 * inserted and the keys asked are both spread over it. */
static void gen_cube(const struct family *fam, uint32_t i, char *key)
{
	uint64_t k = deposit((uint64_t)(i * 40503u) & 0xffff, fam->arg); /* odd: a bijection */

	memcpy(key, &k, fam->ks);
}

static void gen_seq(const struct family *fam, uint32_t i, char *key)
{
	uint64_t k = (uint64_t)(i + 1) * fam->arg;

	memset(key, 0, fam->ks);
	memcpy(key, &k, fam->ks < 8 ? fam->ks : 8);
}

/* tests/tools/hash_reference.py eta: lanes 1..40 of the old NH coefficient
 * table, sum delta_j * (K_j.hi ^ s) = 0 for every s. */
static const int8_t eta[40] = { 2,  -3, 3,  13, 0,  -9, -1, 0,  7,  5,  -3, -9, -14, -13,
				-3, 9,  -1, 9,  -5, 0,  -1, 9,  -4, 0,  -2, 7,  -4, 4,
				10, 1,  5,  1,  -9, -4, 0,  1,  5,  -3, -5, 2 };

static void gen_eta(const struct family *fam, uint32_t i, char *key)
{
	memset(key, 0, fam->ks);
	for (uint32_t j = 0; j < 40; j++) {
		uint32_t lo = 0x40000000u + (uint32_t)((int32_t)i * eta[j]);

		memcpy(key + 8 * (j + 1), &lo, 4); /* lane j + 1's low half; high half 0 */
	}
}

/* Random keys, distinct: word keys by a random-looking bijection of i
 * (MurmurHash3's finalisers, salted per map), longer ones random bytes. */
static uint64_t random_salt;

static void gen_random(const struct family *fam, uint32_t i, char *key)
{
	if (fam->ks == 4) {
		uint32_t x = i + (uint32_t)random_salt;

		x ^= x >> 16, x *= 0x85ebca6bu, x ^= x >> 13, x *= 0xc2b2ae35u, x ^= x >> 16;
		memcpy(key, &x, 4);
		return;
	}
	if (fam->ks == 8) {
		uint64_t x = i + random_salt;

		x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33;
		x *= 0xc4ceb9fe1a85ec53ULL, x ^= x >> 33;
		memcpy(key, &x, 8);
		return;
	}
	for (uint32_t b = 0; b < fam->ks; b += 8) {
		uint64_t r = rnd();

		memcpy(key + b, &r, fam->ks - b < 8 ? fam->ks - b : 8);
	}
}

/* Fill a fresh map with fam's keys; the probe lengths it reports. */
static struct flood_probe run_map(const struct family *fam, char *keys)
{
	uint32_t n = fam->n_in + fam->n_absent, ks = fam->ks;
	struct bpfmap *m = must_create(fam->type ? fam->type : BPFMAP_TYPE_HASH, ks, 8,
				       fam->max_entries, fam->map_flags);
	struct flood_probe p;
	uint64_t v = 0;

	for (uint32_t i = 0; i < n; i++)
		fam->gen(fam, i, keys + (size_t)i * ks);
	for (uint32_t i = 0; i < fam->n_in; i++)
		assert_int_equal(bpfmap_update_elem(m, keys + (size_t)i * ks, &v, BPFMAP_NOEXIST), 0);
	if (fam->type == BPFMAP_TYPE_RHASH)
		p = rtab_probe(m, keys, fam->n_in, keys + (size_t)fam->n_in * ks, fam->n_absent);
	else if (m->ops == &flat_ops)
		p = flat_probe(m, keys + (size_t)fam->n_in * ks, fam->n_absent);
	else
		p = chain_probe(m, keys + (size_t)fam->n_in * ks, fam->n_absent);
	bpfmap_free(m);
	return p;
}

static void check_family(const struct family *fam)
{
	struct family rnd_fam = *fam;
	char *keys = malloc((size_t)(fam->n_in + fam->n_absent) * fam->ks);
	struct flood_probe base = { 0, 0 }, worst = { 0, 0 };

	assert_non_null(keys);
	rnd_fam.gen = gen_random;
	for (uint32_t r = 0; r < fam->maps; r++) {
		struct flood_probe p;

		random_salt = rnd();
		p = run_map(&rnd_fam, keys);

		base.present += p.present / fam->maps;
		base.absent += p.absent / fam->maps;
	}
	for (uint32_t r = 0; r < fam->maps; r++) {
		struct flood_probe p = run_map(fam, keys);

		if (p.present > worst.present)
			worst.present = p.present;
		if (p.absent > worst.absent)
			worst.absent = p.absent;
	}
	print_message("  %-44s present %.3f (random %.3f, %.2fx)  absent %.3f (random %.3f, "
		      "%.2fx)\n", fam->name, worst.present, base.present,
		      worst.present / base.present, worst.absent, base.absent,
		      worst.absent / base.absent);
	if (worst.present > BOUND * base.present || worst.absent > BOUND * base.absent)
		fail_msg("%s: probe lengths %.3f / %.3f against %.3f / %.3f for random keys "
			 "(worst of %u maps; at most %.1fx)", fam->name, worst.present,
			 worst.absent, base.present, base.absent, fam->maps, BOUND);
	free(keys);
}

static void test_subcubes(void **state)
{
	(void)state;
	static const struct family fams[] = {
		{ "8-byte cube 0x01c6003e04062018, flat", 8, 65536, 0, 50000, 15536, 8, gen_cube,
		  0x01c6003e04062018ULL },
		{ "4-byte cube 0x1f81e07e, flat", 4, 65536, 0, 50000, 15536, 8, gen_cube,
		  0x1f81e07eULL },
		{ "8-byte cube 0xffe0084000600020, chained", 8, 65536, BPFMAP_F_NO_PREALLOC, 50000,
		  15536, 8, gen_cube, 0xffe0084000600020ULL },
		{ "8-byte cube 0xffff000000000000, flat", 8, 65536, 0, 50000, 15536, 8, gen_cube,
		  0xffff000000000000ULL },
		{ "4-byte cube 0xffff0000, chained", 4, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536,
		  8, gen_cube, 0xffff0000ULL },
		{ "8-byte cube 0x01c6003e04062018, RHASH", 8, 65536, BPFMAP_F_NO_PREALLOC, 50000,
		  15536, 8, gen_cube, 0x01c6003e04062018ULL, BPFMAP_TYPE_RHASH },
		{ "4-byte cube 0x1f81e07e, RHASH", 4, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 8,
		  gen_cube, 0x1f81e07eULL, BPFMAP_TYPE_RHASH },
		{ "4-byte cube 0xffff0000, RHASH", 4, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 8,
		  gen_cube, 0xffff0000ULL, BPFMAP_TYPE_RHASH },
	};

	for (size_t i = 0; i < ARRAY_SIZE(fams); i++)
		check_family(&fams[i]);
}

static void test_nh_relation(void **state)
{
	(void)state;
	static const struct family fams[] = {
		{ "512-byte lane relation, flat", 512, 16384, 0, 5000, 5000, 4, gen_eta, 0 },
		{ "1024-byte lane relation, flat", 1024, 16384, 0, 5000, 5000, 4, gen_eta, 0 },
		{ "512-byte lane relation, chained", 512, 8192, 0, 5000, 5000, 4, gen_eta, 0 },
		{ "1024-byte lane relation, chained", 1024, 8192, BPFMAP_F_NO_PREALLOC, 5000, 5000,
		  4, gen_eta, 0 },
		{ "512-byte lane relation, RHASH", 512, 8192, BPFMAP_F_NO_PREALLOC, 5000, 5000, 4,
		  gen_eta, 0, BPFMAP_TYPE_RHASH },
	};

	for (size_t i = 0; i < ARRAY_SIZE(fams); i++)
		check_family(&fams[i]);
}

static void test_progressions(void **state)
{
	(void)state;
	static const struct family fams[] = {
		{ "8-byte sequential, flat", 8, 65536, 0, 50000, 15536, 24, gen_seq, 1 },
		{ "8-byte stride 4096, flat", 8, 65536, 0, 50000, 15536, 24, gen_seq, 4096 },
		{ "4-byte stride 2^16 + 1, flat", 4, 65536, 0, 50000, 15536, 24, gen_seq, 65537 },
		{ "8-byte high half, chained", 8, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 24,
		  gen_seq, 1ULL << 32 },
		{ "8-byte equal halves, flat", 8, 65536, 0, 50000, 15536, 24, gen_seq,
		  0x100000001ULL },
		{ "8-byte equal halves, chained", 8, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 24,
		  gen_seq, 0x100000001ULL },
		{ "16-byte sequential, chained", 16, 8192, 0, 5000, 5000, 24, gen_seq, 1 },
		{ "32-byte stride 75025, flat", 32, 65536, 0, 50000, 15536, 8, gen_seq, 75025 },
		{ "128-byte sequential, flat", 128, 65536, 0, 50000, 15536, 4, gen_seq, 1 },
		{ "4-byte stride 2^16 + 1, RHASH", 4, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 24,
		  gen_seq, 65537, BPFMAP_TYPE_RHASH },
		{ "4-byte stride 4096, RHASH", 4, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 24,
		  gen_seq, 4096, BPFMAP_TYPE_RHASH },
		{ "8-byte sequential, RHASH", 8, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 24,
		  gen_seq, 1, BPFMAP_TYPE_RHASH },
		{ "8-byte equal halves, RHASH", 8, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 24,
		  gen_seq, 0x100000001ULL, BPFMAP_TYPE_RHASH },
		{ "16-byte sequential, RHASH", 16, 65536, BPFMAP_F_NO_PREALLOC, 50000, 15536, 8,
		  gen_seq, 1, BPFMAP_TYPE_RHASH },
	};

	for (size_t i = 0; i < ARRAY_SIZE(fams); i++)
		check_family(&fams[i]);
}

static void test_zero_seed(void **state)
{
	(void)state;
	static const struct family fams[] = {
		{ "ZERO_SEED 8-byte multiples of 75025, flat", 8, 65536, BPFMAP_F_ZERO_SEED, 50000,
		  15536, 1, gen_seq, 75025 },
		{ "ZERO_SEED 4-byte multiples of 75025, flat", 4, 65536, BPFMAP_F_ZERO_SEED, 50000,
		  15536, 1, gen_seq, 75025 },
		{ "ZERO_SEED 8-byte multiples of 75025, chained", 8, 65536,
		  BPFMAP_F_ZERO_SEED | BPFMAP_F_NO_PREALLOC, 50000, 15536, 1, gen_seq, 75025 },
		{ "ZERO_SEED 8-byte sequential, flat", 8, 65536, BPFMAP_F_ZERO_SEED, 50000, 15536,
		  1, gen_seq, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(fams); i++)
		check_family(&fams[i]);
}

/* ---- the hash alone, over many parameter draws ---------------------------- */

#define TAIL_DRAWS 300

static void test_tails(void **state)
{
	(void)state;
	static const struct flood_family fams[] = {
		{ "8-byte equal halves, sequential", 8, 0, 0, 0x100000001ULL },
		{ "8-byte top octets of both halves, 192.168.1.x/2.y", 8, 0xff000000ff000000ULL,
		  0x0002a8c00001a8c0ULL },
		{ "8-byte top octets of both halves", 8, 0xff000000ff000000ULL, 0 },
		{ "8-byte cube 0xffff000000000000", 8, 0xffff000000000000ULL, 0 },
		{ "8-byte cube 0xf000f000f000f000", 8, 0xf000f000f000f000ULL, 0 },
		{ "8-byte stride 2^24 + 2^56", 8, 0, 0, 0x0100000001000000ULL },
		{ "8-byte sequential", 8, 0, 0, 1 },
		{ "4-byte cube 0xffff0000", 4, 0xffff0000ULL, 0 },
		{ "4-byte stride 4096", 4, 0, 0, 4096 },
	};
	uint64_t *keys = malloc((FLOOD_IN + FLOOD_ABSENT) * sizeof(*keys));
	struct hash_params hp;
	struct flood_probe bases[2];
	uint32_t failed = 0;

	assert_non_null(keys);
	/* Random keys' mean, as check_family's, per key size (4, 8). */
	bases[0] = flood_random_base(keys, 4, 16);
	bases[1] = flood_random_base(keys, 8, 16);
	for (size_t f = 0; f < ARRAY_SIZE(fams); f++) {
		const struct flood_family *fam = &fams[f];
		struct flood_probe worst = { 0, 0 }, base = bases[fam->ks == 8];
		uint32_t bad = 0;

		flood_family_keys(fam, keys);
		for (uint32_t r = 0; r < TAIL_DRAWS; r++) {
			struct flood_probe p;

			hash_params_random(&hp);
			p = flood_model_probe(keys, fam->ks, &hp);
			bad += p.present > BOUND * base.present || p.absent > BOUND * base.absent;
			worst.present = p.present > worst.present ? p.present : worst.present;
			worst.absent = p.absent > worst.absent ? p.absent : worst.absent;
		}
		print_message("  %-52s worst of %u: present %.2fx  absent %.2fx, %u over %.1fx\n",
			      fam->name, TAIL_DRAWS, worst.present / base.present,
			      worst.absent / base.absent, bad, BOUND);
		failed += bad != 0;
	}
	free(keys);
	if (failed)
		fail_msg("%u families bunch in some parameter draws (random keys, 4 and 8 bytes: "
			 "%.3f / %.3f, %.3f / %.3f)",
			 failed, bases[0].present, bases[0].absent, bases[1].present,
			 bases[1].absent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_subcubes),
		test_entry(test_nh_relation),
		test_entry(test_progressions),
		test_entry(test_zero_seed),
		test_entry(test_tails),
	};
	return run_test_group(tests);
}
