/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The random parameters of a map's hash, drawn once at creation.
 *
 * A BPF map's keys come from packets, so an attacker chooses them.  Each hash
 * in this folder is (almost) universal: for two distinct keys fixed in
 * advance, the probability over the random parameters that they share a home
 * bucket is about 2/n for n buckets, whatever the keys (hash/hash_finish.h
 * has the argument; each first stage's header its own bound and paper).  That only holds if the
 * parameters are independent and uniform, and the attacker never learns
 * them.  So every parameter a map uses is its own uniformly random word,
 * read from getrandom(): no parameter derives from another, none from a
 * shared constant table.  (The earlier design xored one 64-bit seed into
 * fixed tables; NH and the word hash are linear in their coefficients, so a
 * key family whose lanes satisfy one integer relation collided under every
 * seed.)
 *
 * BPFMAP_F_ZERO_SEED maps take fixed public parameters instead
 * (hash_params_seeded(p, 0)): deterministic layouts, as the kernel's zero
 * seed gives, and no protection against chosen keys.
 */
#ifndef BPFMAP_HASH_HASH_PARAMS_H
#define BPFMAP_HASH_HASH_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

/* Coefficients: the word hash takes 1 + one per 32-bit word + one for a
 * tail word (keys up to 512 bytes: 129), NH one per 64-bit lane of a block
 * (1024-byte blocks: 128). */
#define HASH_COEFS 129

struct hash_params {
	uint64_t mul;  /* odd: 4- and 8-byte keys' first stage */
	uint64_t fin;  /* odd: every hash's last multiply (hash_finish) */
	uint64_t poly; /* < 2^61 - 1: long keys' polynomial over NH blocks */
	uint64_t coef[HASH_COEFS]; /* the word hash's and NH's */
};

/* Independent uniform parameters: getrandom(), else /dev/urandom (a seccomp
 * filter may refuse the call); with neither (early boot), splitmix64 from
 * the clock and an address, still varying per map. */
void hash_params_random(struct hash_params *p);

/* Parameters expanded from @seed by splitmix64: seed 0 for ZERO_SEED maps,
 * other seeds for tests that need a reproducible layout.  Not a PRF: never
 * for maps that may hold chosen keys. */
void hash_params_seeded(struct hash_params *p, uint64_t seed);

/* A map's parameters: fixed for ZERO_SEED maps, random otherwise.  Maps
 * keep theirs inside their own struct, at a constant offset from the map
 * pointer: a lookup then loads the coefficients at once, not after loading
 * a pointer to them (that load was on the hash's critical path). */
void hash_params_init(struct hash_params *p, bool zero_seed);

/* The same, malloc'ed (free() it); NULL without memory. */
struct hash_params *hash_params_new(bool zero_seed);

#endif
