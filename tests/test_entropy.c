/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a map's random hash parameters come from when getrandom() fails (a
 * seccomp filter that refuses it, or early boot): /dev/urandom, read to
 * the end through short reads and EINTR, then the clock.  The test defines
 * getrandom(), open() and read() itself, so the library's calls reach these
 * while a test arms them and the C library's otherwise.
 */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <bpfmap.h>

#include "hash/hash_params.h"
#include "hash/nh_hash.h"

/* What the armed functions do. */
static struct {
	bool armed;
	ssize_t getrandom_gives; /* bytes getrandom() hands out before failing */
	int getrandom_errno;     /* then fails with this */
	bool open_fails;         /* open("/dev/urandom") -> ENOENT */
	size_t urandom_len;      /* bytes /dev/urandom has before EOF */
	size_t chunk;            /* the most one read() returns */
	int eintr;               /* read() calls to fail with EINTR first */
	int urandom_fd;          /* the descriptor open() handed out, or -1 */
	size_t urandom_off;
	int opens, reads;
} fake = { .urandom_fd = -1 };

static uint8_t pattern[sizeof(struct hash_params)];

static uint8_t pattern_byte(size_t i)
{
	return (uint8_t)(i * 131 + 7);
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	if (!fake.armed)
		return syscall(SYS_getrandom, buf, len, flags);
	if (fake.getrandom_gives > 0) {
		size_t n = (size_t)fake.getrandom_gives < len ? (size_t)fake.getrandom_gives : len;

		memset(buf, 0xa5, n);
		fake.getrandom_gives -= (ssize_t)n;
		return (ssize_t)n;
	}
	errno = fake.getrandom_errno;
	return -1;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!fake.armed || strcmp(path, "/dev/urandom"))
		return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
	fake.opens++;
	if (fake.open_fails) {
		errno = ENOENT;
		return -1;
	}
	fake.urandom_fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
	fake.urandom_off = 0;
	return fake.urandom_fd;
}

ssize_t read(int fd, void *buf, size_t len)
{
	size_t n;

	if (!fake.armed || fd != fake.urandom_fd)
		return syscall(SYS_read, fd, buf, len);
	fake.reads++;
	if (fake.eintr > 0) {
		fake.eintr--;
		errno = EINTR;
		return -1;
	}
	n = fake.urandom_len - fake.urandom_off;
	n = n < len ? n : len;
	n = n < fake.chunk ? n : fake.chunk;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = pattern_byte(fake.urandom_off + i);
	fake.urandom_off += n;
	return (ssize_t)n;
}

static int arm(void **state)
{
	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.urandom_fd = -1;
	fake.getrandom_errno = ENOSYS;
	fake.urandom_len = sizeof(pattern);
	fake.chunk = 7;
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = pattern_byte(i);
	fake.armed = true;
	return 0;
}

static int disarm(void **state)
{
	(void)state;
	fake.armed = false;
	return 0;
}

/* @bytes as the library turns them into parameters: each family's
 * constraints applied (odd multipliers, a polynomial key below the prime). */
static void expect_from(struct hash_params *want, const uint8_t *bytes)
{
	memcpy(want, bytes, sizeof(*want));
	want->mul |= 1;
	want->fin |= 1;
	want->poly &= NH_POLY_PRIME;
	if (want->poly == NH_POLY_PRIME)
		want->poly = 0;
}

static void assert_valid(const struct hash_params *p)
{
	assert_true(p->mul & 1);
	assert_true(p->fin & 1);
	assert_true(p->poly < NH_POLY_PRIME);
}

/* getrandom() refused outright: every byte from /dev/urandom, through
 * EINTR and reads of 7 bytes, and the descriptor closed. */
static void test_urandom_when_getrandom_refuses(void **state)
{
	(void)state;
	struct hash_params p, want;

	fake.eintr = 2;
	hash_params_random(&p);
	expect_from(&want, pattern);
	assert_memory_equal(&p, &want, sizeof(p));
	assert_int_equal(fake.opens, 1);
	assert_true(fake.reads >= 2 + (int)((sizeof(p) + 6) / 7));
	errno = 0;
	assert_int_equal(fcntl(fake.urandom_fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
}

/* getrandom() hands out 11 bytes, then would block: the rest, and only
 * the rest, from /dev/urandom. */
static void test_urandom_completes_short_getrandom(void **state)
{
	(void)state;
	struct hash_params p, want;
	uint8_t bytes[sizeof(p)];

	fake.getrandom_gives = 11;
	fake.getrandom_errno = EAGAIN;
	hash_params_random(&p);
	memset(bytes, 0xa5, 11);
	for (size_t i = 11; i < sizeof(bytes); i++)
		bytes[i] = pattern_byte(i - 11);
	expect_from(&want, bytes);
	assert_memory_equal(&p, &want, sizeof(p));
}

/* Neither source: parameters from the clock, still valid and different
 * from one map to the next (the clock and the address vary). */
static void check_clock_fallback(void)
{
	struct hash_params p, q, zero;

	hash_params_random(&p);
	hash_params_random(&q);
	assert_valid(&p);
	assert_valid(&q);
	assert_memory_not_equal(&p, &q, sizeof(p));
	memset(&zero, 0, sizeof(zero));
	assert_memory_not_equal(&p, &zero, sizeof(p));
	hash_params_seeded(&zero, 0); /* not the public ZERO_SEED parameters */
	assert_memory_not_equal(&p, &zero, sizeof(p));
}

static void test_clock_when_no_urandom(void **state)
{
	(void)state;
	fake.open_fails = true;
	check_clock_fallback();
	assert_int_equal(fake.opens, 2);
}

/* /dev/urandom ends early: its bytes are not taken as enough. */
static void test_clock_when_urandom_short(void **state)
{
	(void)state;
	struct hash_params p, want;

	fake.urandom_len = 100;
	check_clock_fallback();
	hash_params_random(&p);
	expect_from(&want, pattern);
	assert_memory_not_equal(&p, &want, sizeof(p));
}

/* Maps of every table still work with no entropy at all. */
static void test_maps_without_entropy(void **state)
{
	(void)state;
	static const struct {
		enum bpfmap_type type;
		uint32_t key_size, flags;
	} cfg[] = {
		{ BPFMAP_TYPE_HASH, 8, 0 },
		{ BPFMAP_TYPE_HASH, 40, 0 },
		{ BPFMAP_TYPE_HASH, 8, BPFMAP_F_NO_PREALLOC },
		{ BPFMAP_TYPE_RHASH, 8, BPFMAP_F_NO_PREALLOC },
	};

	fake.open_fails = true;
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		BPFMAP_CREATE_OPTS(o, .map_flags = cfg[c].flags);
		struct bpfmap *m = bpfmap_create(cfg[c].type, "entropy", cfg[c].key_size, 8, 4096, &o);
		uint8_t key[40] = { 0 };
		uint64_t v;

		assert_non_null(m);
		for (uint64_t i = 0; i < 4096; i++) {
			memcpy(key, &i, sizeof(i));
			assert_int_equal(bpfmap_update_elem(m, key, &i, BPFMAP_ANY), 0);
		}
		for (uint64_t i = 0; i < 4096; i++) {
			memcpy(key, &i, sizeof(i));
			assert_int_equal(bpfmap_lookup_elem(m, key, &v), 0);
			assert_true(v == i);
		}
		bpfmap_free(m);
	}
	assert_true(fake.opens >= 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_urandom_when_getrandom_refuses, arm, disarm),
		cmocka_unit_test_setup_teardown(test_urandom_completes_short_getrandom, arm,
						disarm),
		cmocka_unit_test_setup_teardown(test_clock_when_no_urandom, arm, disarm),
		cmocka_unit_test_setup_teardown(test_clock_when_urandom_short, arm, disarm),
		cmocka_unit_test_setup_teardown(test_maps_without_entropy, arm, disarm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
