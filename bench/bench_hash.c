// SPDX-License-Identifier: BSD-2-Clause
/*
 * hash: the hash functions alone, ns per hash by key size -- the data behind
 * the library's choice of hash per key size (hash/hash_select.h).
 *
 * Each hash runs over the lookup benchmark's keys (word 0 = i + 1 patched
 * with a 4-byte store, the rest fixed; --full_width_keys for wide stores) and
 * is called through a function pointer with the key size as a run-time
 * value, as the library calls it.  Measured:
 *   kernel-u32/u64  the kernel's u32/u64 fast path: jhash2 of one or two words
 *            with the seed folded at creation (4- and 8-byte keys only)
 *   jhash    byte-wise lookup3
 *   jhash2   word-wise lookup3 (multiples of 4)
 *   xxh3     XXH3 64-bit (libxxhash; no map uses it: a
 *            seed does not make it universal, hash/nh_hash.h)
 *   xxh64    XXH64
 *   words    multilinear over 32-bit words (hash/word_hash.h), up to
 *            WORD_HASH_MAX_KEY bytes
 *   nh       NH over 64-bit lanes (hash/nh_hash.h), up to one block
 *   bpfmap   whatever bpfmap picks for that key size (hash/hash_select.h),
 *            with random parameters (hash/hash_params.h)
 * The kernel backend does not apply: these run in user space only.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash/hash_select.h"
#include "hash/jhash.h"
#include "hash/nh_hash.h"
#include "hash/word_hash.h"

#include "bench.h"
#include "output.h"
#include "stats.h"
#include "table.h"

#define HASH_RUN 65536 /* hashes per timed run */
#define HASH_MAX_KEY 2048
#define HASH_SEED 0x12345678u

/* Every hash here takes the library's form; the others use p->fin as their
 * seed (the jhash family its low 32 bits). */
typedef hash_fn hash_fn_t;

/* The kernel's u32/u64 fast path (the u32/u64 seed): jhash2 of one or two
 * words, the seed arriving folded (seed + JHASH_INITVAL + key_size, done once
 * per map: impl_fn), leaving one final mix. */
static uint64_t hash_kernel_u32(const void *key, uint32_t key_size, const struct hash_params *p)
{
	uint32_t a, b, c, seed = (uint32_t)p->fin;

	(void)key_size;
	memcpy(&a, key, 4);
	a += seed;
	b = c = seed;
	JHASH_FINAL(a, b, c);
	return c;
}

static uint64_t hash_kernel_u64(const void *key, uint32_t key_size, const struct hash_params *p)
{
	uint32_t a, b, c, seed = (uint32_t)p->fin;

	(void)key_size;
	memcpy(&a, key, 4);
	memcpy(&b, (const char *)key + 4, 4);
	a += seed;
	b += seed;
	c = seed;
	JHASH_FINAL(a, b, c);
	return c;
}

static uint64_t hash_jhash(const void *key, uint32_t key_size, const struct hash_params *p)
{
	return jhash_bytes(key, key_size, (uint32_t)p->fin);
}

static uint64_t hash_jhash2(const void *key, uint32_t key_size, const struct hash_params *p)
{
	return jhash_words(key, key_size / 4, (uint32_t)p->fin);
}

static uint64_t hash_xxh3(const void *key, uint32_t key_size, const struct hash_params *p)
{
	return XXH3_64bits_withSeed(key, key_size, p->fin);
}

static uint64_t hash_xxh64(const void *key, uint32_t key_size, const struct hash_params *p)
{
	return XXH64(key, key_size, p->fin);
}

struct hash_impl {
	const char *name;
	bool (*fits)(uint32_t key_size);
};

static bool fits_u32u64(uint32_t ks) { return ks == 4 || ks == 8; }
static bool fits_any(uint32_t ks) { return ks > 0; }
static bool fits_words(uint32_t ks) { return ks % 4 == 0; }
static bool fits_word_hash(uint32_t ks) { return ks <= WORD_HASH_MAX_KEY; }
/* NH reads 16-byte blocks from byte 8 on (hash/nh_hash.h). */
static bool fits_nh(uint32_t ks) { return ks >= 24 && ks <= NH_BLOCK; }

static const struct hash_impl impls[] = {
	{ "kernel-u32/u64", fits_u32u64 }, { "jhash", fits_any }, { "jhash2", fits_words },
	{ "xxh3", fits_any },       { "xxh64", fits_any }, { "words", fits_word_hash },
	{ "nh", fits_nh },          { "bpfmap", fits_any },
};

static hash_fn_t impl_fn(const char *name, uint32_t ks, struct hash_params *p)
{
	hash_params_seeded(p, HASH_SEED);
	if (!strcmp(name, "kernel-u32/u64")) {
		p->fin = HASH_SEED + JHASH_INITVAL + ks;
		return ks == 4 ? hash_kernel_u32 : hash_kernel_u64;
	}
	if (!strcmp(name, "jhash"))
		return hash_jhash;
	if (!strcmp(name, "jhash2"))
		return hash_jhash2;
	if (!strcmp(name, "xxh3"))
		return hash_xxh3;
	if (!strcmp(name, "xxh64"))
		return hash_xxh64;
	/* The library's own, as its maps call them. */
	if (!strcmp(name, "words"))
		return hash_fn_for_kind(HASH_WORDS);
	if (!strcmp(name, "nh"))
		return hash_fn_for_kind(HASH_NH);
	hash_params_random(p);
	return hash_fn_for_kind(hash_kind_for_key_size(ks));
}

static const uint32_t default_key_sizes[] = { 1,  2,  4,   6,   8,   12,  13,  16,  20,   24,  32,
					       40, 48, 56,  64,  96,  128, 192, 256, 512, 1024, 2048 };

/* ---- the cell (library only) ---- */

struct hash_state {
	hash_fn_t fn;
	struct hash_params hp;
	uint32_t key_size;
	bool full_width;
	struct bench_cpu_stats stats[BENCH_MAX_PRODUCERS];
};

/* Keeps the hashes alive without a store per hash. */
static volatile uint64_t hash_sink;

static void *hash_setup(const struct bench_args *a, const struct bench_env *env,
			struct cell_result *r)
{
	struct hash_state *st = aligned_alloc(64, sizeof(*st));

	(void)env;
	if (!st) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return NULL;
	}
	memset(st, 0, sizeof(*st));
	st->key_size = a->key_size;
	st->full_width = a->full_width_keys;
	st->fn = impl_fn(a->hash, a->key_size, &st->hp);
	return st;
}

typedef uint32_t v4u32 __attribute__((vector_size(16)));

static void hash_producer(void *arg, int idx, int nr, atomic_bool *stop)
{
	struct hash_state *st = arg;
	uint8_t key[HASH_MAX_KEY] __attribute__((aligned(64)));
	hash_fn_t fn = st->fn;
	const struct hash_params *hp = &st->hp;
	uint32_t ks = st->key_size;
	uint64_t acc = 0;
	bool wide = st->full_width && ks >= 16;

	(void)nr;
	for (uint32_t j = 0; j < HASH_MAX_KEY / 4; j++) {
		uint32_t w = 2654435761u * j;

		memcpy(key + 4 * j, &w, 4);
	}
	do { /* at least one run, however short -d is */
		uint64_t t0 = thread_cpu_ns();

		if (wide) {
			v4u32 head;

			memcpy(&head, key, sizeof(head));
			for (uint32_t i = 0; i < HASH_RUN; i++) {
				head[0] = i + 1;
				memcpy(key, &head, sizeof(head));
				acc += fn(key, ks, hp);
			}
		} else if (st->full_width && ks >= 8) {
			uint64_t w1;

			memcpy(&w1, key, 8);
			w1 &= ~0xffffffffull;
			for (uint32_t i = 0; i < HASH_RUN; i++) {
				uint64_t head = w1 | (i + 1);

				memcpy(key, &head, 8);
				acc += fn(key, ks, hp);
			}
		} else {
			for (uint32_t i = 0; i < HASH_RUN; i++) {
				uint32_t w = i + 1;

				memcpy(key, &w, 4);
				acc += fn(key, ks, hp);
			}
		}
		seq_stats_add(&st->stats[idx], HASH_RUN, thread_cpu_ns() - t0, 0);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	hash_sink = acc;
}

static void hash_measure(void *arg, struct counters *c)
{
	struct hash_state *st = arg;

	for (int i = 0; i < BENCH_MAX_PRODUCERS; i++)
		stats_read(&st->stats[i], c);
}

static void hash_teardown(void *arg)
{
	free(arg);
}

static const struct cell_ops hash_ops = {
	.backend = "lib",
	.setup = hash_setup,
	.producer = hash_producer,
	.measure = hash_measure,
	.teardown = hash_teardown,
};

static int hash_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	uint32_t sizes[sizeof(default_key_sizes) / sizeof(default_key_sizes[0])];
	size_t nsizes = 0, nimpl = 0, total, done = 0;
	const struct hash_impl *chosen[sizeof(impls) / sizeof(impls[0])];
	struct bench_env cenv = *env;
	struct grid g;
	int status = 0;

	if (!(env->backends & BACKEND_LIB)) {
		fprintf(env->out, "%s: the kernel backend does not apply (hash functions are "
				  "measured in user space only)\n", b->name);
		return 0;
	}
	if (a->key_size > HASH_MAX_KEY) {
		fprintf(stderr, "%s: --key_size must be 1..%d\n", b->name, HASH_MAX_KEY);
		return 2;
	}
	if (a->key_size)
		sizes[nsizes++] = a->key_size;
	else
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			sizes[nsizes++] = default_key_sizes[i];
	for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
		if (!a->hash[0] || !strcmp(a->hash, impls[i].name))
			chosen[nimpl++] = &impls[i];
	if (!nimpl) {
		fprintf(stderr, "%s: --hash must be one of kernel-u32/u64, jhash, jhash2, xxh3, xxh64, "
				"words, nh, bpfmap\n", b->name);
		return 2;
	}
	total = 0;
	for (size_t h = 0; h < nimpl; h++)
		for (size_t s = 0; s < nsizes; s++)
			total += chosen[h]->fits(sizes[s]);

	fprintf(env->out, "%s: ns per hash, %s key stores; %d producer%s, -w %g -d %g per cell\n",
		b->name, a->full_width_keys ? "full-width" : "the selftest's 4-byte",
		env->producers, env->producers == 1 ? "" : "s", env->warmup_s, env->duration_s);
	grid_init(&g, "ns/hash (lower is better):", "key size (bytes)");
	for (size_t s = 0; s < nsizes; s++) {
		char col[16];

		snprintf(col, sizeof(col), "%u", sizes[s]);
		grid_col(&g, col);
	}
	cenv.progress = false;
	for (size_t h = 0; h < nimpl; h++) {
		grid_row(&g, chosen[h]->name);
		for (size_t s = 0; s < nsizes; s++) {
			struct bench_args ca = *a;
			struct cell_result r;
			char col[16];

			if (!chosen[h]->fits(sizes[s]))
				continue;
			ca.key_size = sizes[s];
			ca.map_type = 0;
			snprintf(ca.hash, sizeof(ca.hash), "%s", chosen[h]->name);
			done++;
			if (env->progress) {
				fprintf(stderr, "\r\033[K[%zu/%zu] hash %s, key %u", done, total,
					ca.hash, ca.key_size);
				fflush(stderr);
			}
			if (cell_run(&hash_ops, &ca, &cenv, ca.hash, &r))
				status = 1;
			json_cell(env, b->name, "lib", &ca, &r);
			snprintf(col, sizeof(col), "%u", sizes[s]);
			grid_set(&g, chosen[h]->name, col, r.ok && r.mops > 0 ? 1e3 / r.mops : NAN);
		}
	}
	if (env->progress)
		fprintf(stderr, "\r\033[K");
	grid_print(env->out, &g, GRID_VALUE);
	{
		char buf[160] = "";

		for (size_t s = 0; s < nsizes; s++) {
			enum hash_kind k = hash_kind_for_key_size(sizes[s]);
			size_t n = strlen(buf);

			if (s && hash_kind_for_key_size(sizes[s - 1]) == k)
				continue;
			snprintf(buf + n, sizeof(buf) - n, "%s%s from %u", n ? ", " : "",
				 hash_kind_name(k), sizes[s]);
		}
		fprintf(env->out, "  bpfmap picks: %s\n", buf);
	}
	return status;
}

const struct bench bench_hash = {
	.name = "hash",
	.summary = "hash functions alone (kernel-u32/u64, jhash, jhash2, xxh3, xxh64, words, nh, bpfmap), ns/hash by key size",
	.run = hash_run,
	/* Many short cells: the kernel bench's 1 s + 5 s each would take minutes. */
	.default_warmup_s = 0.05,
	.default_duration_s = 0.25,
};
