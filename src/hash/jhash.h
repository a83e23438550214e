/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bob Jenkins' lookup3 hash (public domain), in the two forms the kernel's
 * BPF hash map uses: jhash() over bytes and jhash2() over 32-bit words.  The
 * results equal the kernel's.  No map uses it (ZERO_SEED maps take fixed
 * parameters of bpfmap's own hash: docs/HASHING.md); the tests and the
 * benchmark's hash comparison do.
 */
#ifndef BPFMAP_HASH_JHASH_H
#define BPFMAP_HASH_JHASH_H

#include <stdint.h>
#include <string.h>

#include "util/compiler.h"

#define JHASH_INITVAL 0xdeadbeefU

static ALWAYS_INLINE uint32_t jhash_rol32(uint32_t x, unsigned int k)
{
	return (x << k) | (x >> (32 - k));
}

#define JHASH_MIX(a, b, c)                                   \
	do {                                                 \
		a -= c; a ^= jhash_rol32(c, 4);  c += b;     \
		b -= a; b ^= jhash_rol32(a, 6);  a += c;     \
		c -= b; c ^= jhash_rol32(b, 8);  b += a;     \
		a -= c; a ^= jhash_rol32(c, 16); c += b;     \
		b -= a; b ^= jhash_rol32(a, 19); a += c;     \
		c -= b; c ^= jhash_rol32(b, 4);  b += a;     \
	} while (0)

#define JHASH_FINAL(a, b, c)                                 \
	do {                                                 \
		c ^= b; c -= jhash_rol32(b, 14);             \
		a ^= c; a -= jhash_rol32(c, 11);             \
		b ^= a; b -= jhash_rol32(a, 25);             \
		c ^= b; c -= jhash_rol32(b, 16);             \
		a ^= c; a -= jhash_rol32(c, 4);              \
		b ^= a; b -= jhash_rol32(a, 14);             \
		c ^= b; c -= jhash_rol32(b, 24);             \
	} while (0)

static ALWAYS_INLINE uint32_t jhash_load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* jhash() assembles its bytes little-endian whatever the host order. */
static ALWAYS_INLINE uint32_t jhash_le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

/* jhash over @len bytes (the kernel's jhash()). */
static ALWAYS_INLINE uint32_t jhash_bytes(const void *key, uint32_t len, uint32_t seed)
{
	const unsigned char *k = key;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + len + seed;
	while (len > 12) {
		a += jhash_le32(k);
		b += jhash_le32(k + 4);
		c += jhash_le32(k + 8);
		JHASH_MIX(a, b, c);
		len -= 12;
		k += 12;
	}
	switch (len) {
	case 12: c += (uint32_t)k[11] << 24; /* fall through */
	case 11: c += (uint32_t)k[10] << 16; /* fall through */
	case 10: c += (uint32_t)k[9] << 8;   /* fall through */
	case 9:  c += k[8];                  /* fall through */
	case 8:  b += (uint32_t)k[7] << 24;  /* fall through */
	case 7:  b += (uint32_t)k[6] << 16;  /* fall through */
	case 6:  b += (uint32_t)k[5] << 8;   /* fall through */
	case 5:  b += k[4];                  /* fall through */
	case 4:  a += (uint32_t)k[3] << 24;  /* fall through */
	case 3:  a += (uint32_t)k[2] << 16;  /* fall through */
	case 2:  a += (uint32_t)k[1] << 8;   /* fall through */
	case 1:  a += k[0];
		JHASH_FINAL(a, b, c);
		break;
	default: /* 0: nothing left to add */
		break;
	}
	return c;
}

/* jhash over @nwords 32-bit words (the kernel's jhash2()); @key may be
 * unaligned. */
static ALWAYS_INLINE uint32_t jhash_words(const void *key, uint32_t nwords, uint32_t seed)
{
	const unsigned char *k = key;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + (nwords << 2) + seed;
	while (nwords > 3) {
		a += jhash_load32(k);
		b += jhash_load32(k + 4);
		c += jhash_load32(k + 8);
		JHASH_MIX(a, b, c);
		nwords -= 3;
		k += 12;
	}
	switch (nwords) {
	case 3: c += jhash_load32(k + 8); /* fall through */
	case 2: b += jhash_load32(k + 4); /* fall through */
	case 1: a += jhash_load32(k);
		JHASH_FINAL(a, b, c);
		break;
	default:
		break;
	}
	return c;
}

#endif
