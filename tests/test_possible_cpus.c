/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The possible CPUs as the kernel lists them in
 * /sys/devices/system/cpu/possible, made up per case: each case runs in a
 * child with a private mount namespace and a file of its own bound over
 * that one, so that the library reads it first there.  Root only (the
 * cases skip, saying why, elsewhere).
 *  - NO_COMMON_LRU's max_entries limit applies after its rounding to a
 *    multiple of the CPUs, as in the kernel;
 *  - a list with gaps ("0-3,8"): the count is libbpf's (the CPUs listed),
 *    and the per-CPU value buffer of the syscall view packs the possible
 *    CPUs in their order, as the kernel's does.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define POSSIBLE "/sys/devices/system/cpu/possible"
#define CHILD_SKIP 77

/* A failed check in the child: its line, as the exit status. */
#define CHILD_CHECK(cond)                                                        \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "child: check failed at line %d: %s\n", \
				__LINE__, #cond);                                \
			_exit(1);                                                \
		}                                                                \
	} while (0)

/* In the child: POSSIBLE reads @list from now on, or the child exits with
 * CHILD_SKIP, saying why. */
static void fake_possible(const char *list)
{
	char path[] = "/tmp/bpfmap_possible_XXXXXX";
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "skipped: faking %s needs root\n", POSSIBLE);
		_exit(CHILD_SKIP);
	}
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "skipped: no private mount namespace: %s\n", strerror(errno));
		_exit(CHILD_SKIP);
	}
	fd = mkstemp(path);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(write(fd, list, strlen(list)) == (ssize_t)strlen(list));
	close(fd);
	if (mount(path, POSSIBLE, NULL, MS_BIND, NULL)) {
		fprintf(stderr, "skipped: cannot bind over %s: %s\n", POSSIBLE, strerror(errno));
		unlink(path);
		_exit(CHILD_SKIP);
	}
	unlink(path); /* the bind keeps the file */
}

/* Run @fn in a child that sees @list as the possible CPUs; the test fails
 * on a failed check there, and skips where the list cannot be faked. */
static void with_possible(const char *list, void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		fake_possible(list);
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == CHILD_SKIP)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Three CPUs: 2^27 - 1 entries round up to 2^27 + 1, past HASH's limit. */
static void child_no_common_lru_limit(void)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = BPFMAP_F_NO_COMMON_LRU);
	static const enum bpfmap_type types[] = { BPFMAP_TYPE_LRU_HASH,
						  BPFMAP_TYPE_LRU_PERCPU_HASH };

	CHILD_CHECK(bpfmap_num_possible_cpus() == 3);
	for (int i = 0; i < 2; i++) {
		static const uint32_t over[] = { BPFMAP_HTAB_MAX_ENTRIES - 1,
						 BPFMAP_HTAB_MAX_ENTRIES };

		for (int j = 0; j < 2; j++) {
			errno = 0;
			CHILD_CHECK(!bpfmap_create(types[i], NULL, 8, 8, over[j], &o));
			CHILD_CHECK(errno == E2BIG);
		}
		/* A small one still rounds up: 10 to 12. */
		struct bpfmap *map = bpfmap_create(types[i], NULL, 8, 8, 10, &o);
		struct bpfmap_info info;

		CHILD_CHECK(map);
		CHILD_CHECK(!bpfmap_get_info(map, &info));
		CHILD_CHECK(info.max_entries == 12);
		bpfmap_free(map);
	}
}

static void test_no_common_lru_limit(void **state)
{
	(void)state;
	with_possible("0-2\n", child_no_common_lru_limit);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_common_lru_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
