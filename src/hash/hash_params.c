/* SPDX-License-Identifier: BSD-2-Clause */
/* A map's hash parameters (design: hash/hash_params.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hash/hash_params.h"
#include "hash/nh_hash.h"

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The constraints of each parameter's family: odd multipliers, a
 * polynomial key below the prime.  Clearing bits of a uniform word keeps the
 * rest uniform. */
static void hash_params_fix(struct hash_params *p)
{
	p->mul |= 1;
	p->fin |= 1;
	p->poly &= NH_POLY_PRIME; /* 61 uniform bits; 2^61 - 1 itself is ~0 */
	if (p->poly == NH_POLY_PRIME)
		p->poly = 0;
}

void hash_params_seeded(struct hash_params *p, uint64_t seed)
{
	uint64_t *w = (uint64_t *)(void *)p;

	for (size_t i = 0; i < sizeof(*p) / sizeof(uint64_t); i++)
		w[i] = splitmix64(&seed);
	hash_params_fix(p);
}

void hash_params_random(struct hash_params *p)
{
	char *dst = (char *)p;
	size_t got = 0;

	while (got < sizeof(*p)) {
		ssize_t n = getrandom(dst + got, sizeof(*p) - got, GRND_NONBLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(*p)) {
		/* getrandom() refused (a seccomp filter) or would block (early
		 * boot): /dev/urandom never blocks, and its bytes are as
		 * independent. */
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		while (fd >= 0 && got < sizeof(*p)) {
			ssize_t n = read(fd, dst + got, sizeof(*p) - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (fd >= 0)
			close(fd);
	}
	if (got < sizeof(*p)) {
		/* No entropy yet (early boot): varying parameters still beat
		 * fixed ones. */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		hash_params_seeded(p, ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec) ^
					      (uint64_t)(uintptr_t)p);
		return;
	}
	hash_params_fix(p);
}

void hash_params_init(struct hash_params *p, bool zero_seed)
{
	if (zero_seed)
		hash_params_seeded(p, 0);
	else
		hash_params_random(p);
}

struct hash_params *hash_params_new(bool zero_seed)
{
	struct hash_params *p = malloc(sizeof(*p));

	if (p)
		hash_params_init(p, zero_seed);
	return p;
}
