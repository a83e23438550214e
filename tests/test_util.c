/* SPDX-License-Identifier: BSD-2-Clause */
#define _GNU_SOURCE
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "test_util.h"
#include "util/compiler.h"

const uint32_t test_map_flag_variants[2] = { 0, BPFMAP_F_NO_PREALLOC };

bool test_chain_forced(void)
{
	const char *t = getenv("BPFMAP_TABLE");

	return t && !strcmp(t, "chain");
}

int test_chain_forced_skipped(const char *why)
{
	printf("skipped under BPFMAP_TABLE=chain: %s\n", why);
	return 77;
}

bool test_tsan_build(void)
{
#ifdef BPFMAP_TSAN
	return true;
#else
	return false;
#endif
}

/* Line by line into ctest's pipe, so that a test killed for its time
 * shows where it was (a full buffer is lost with the process). */
__attribute__((constructor)) static void test_output_by_line(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

int test_close_sections(void **state)
{
	(void)state;
	if (urcu_bp_read_ongoing())
		print_message("closing the read-side sections a failed test left open\n");
	while (urcu_bp_read_ongoing())
		bpfmap_read_unlock();
	return 0;
}

struct bpfmap *must_create(enum bpfmap_type type, uint32_t key_size, uint32_t value_size,
			   uint32_t max_entries, uint32_t map_flags)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = map_flags);
	struct bpfmap *map = bpfmap_create(type, "test", key_size, value_size, max_entries, &opts);

	if (!map)
		fail_msg("bpfmap_create(%d, %u, %u, %u, 0x%x): %s", type, key_size, value_size,
			 max_entries, map_flags, strerror(errno));
	return map;
}

static uint32_t walk_key_size; /* for walk_key_cmp: qsort passes no context */

static int walk_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, walk_key_size);
}

void reap_child(int pid, unsigned int seconds)
{
	int status;

	for (unsigned int i = 0; i < seconds * 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		assert_true(r >= 0);
		if (r == pid) {
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			return;
		}
		usleep(10 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("the child of fork() hung for %u s (killed)", seconds);
}

uint32_t walk_count(struct bpfmap *map, uint32_t key_size)
{
	char *keys = NULL;
	char *cur = malloc(key_size), *next = malloc(key_size);
	uint32_t n = 0, room = 0;
	const void *prev = NULL;

	assert_non_null(cur);
	assert_non_null(next);
	while (bpfmap_get_next_key(map, prev, next) == 0) {
		/* Doubling: under ASan and Valgrind every realloc copies, and a
		 * key at a time made 100K-key walks take minutes. */
		if (n == room) {
			room = room ? 2 * room : 1024;
			keys = realloc(keys, (size_t)room * key_size);
			assert_non_null(keys);
		}
		memcpy(keys + (size_t)n * key_size, next, key_size);
		n++;
		memcpy(cur, next, key_size);
		prev = cur;
	}
	assert_int_equal(errno, ENOENT);
	/* No key twice: sorted, no two neighbours equal. */
	walk_key_size = key_size;
	if (n)
		qsort(keys, n, key_size, walk_key_cmp);
	for (uint32_t i = 1; i < n; i++)
		assert_memory_not_equal(keys + (size_t)(i - 1) * key_size,
					keys + (size_t)i * key_size, key_size);
	free(keys);
	free(cur);
	free(next);
	return n;
}

int test_pin_cpu(unsigned int cpu)
{
	int n = bpfmap_num_possible_cpus();
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % (unsigned int)(n > 0 ? n : 1), &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void test_unpin(void)
{
	int n = bpfmap_num_possible_cpus();
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int section_hold;  /* atomic: the holder stays in its section while set */
static int section_in;    /* atomic: the holder is in its section */
static pthread_t section_holder;

static void *hold_section(void *arg)
{
	(void)arg;
	bpfmap_read_lock();
	__atomic_store_n(&section_in, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&section_hold, __ATOMIC_SEQ_CST))
		usleep(1000);
	bpfmap_read_unlock();
	return NULL;
}

void test_section_hold(void)
{
	__atomic_store_n(&section_hold, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&section_in, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_create(&section_holder, NULL, hold_section, NULL), 0);
	while (!__atomic_load_n(&section_in, __ATOMIC_SEQ_CST))
		usleep(100);
}

void test_section_release(void)
{
	__atomic_store_n(&section_hold, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(section_holder, NULL), 0);
}
