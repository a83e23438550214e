/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that made many pthread keys before its first map: a fresh
 * thread's signal handler's first update still allocates nothing.  glibc
 * keeps its first 32 keys' values in the thread's descriptor and callocs
 * a block for later ones on a thread's first pthread_setspecific; the
 * store-window key, made at the first map's creation, came after the
 * program's 40 and its first set in a handler called calloc (an
 * adversarial probe: a hang when the thread was inside malloc).  The key
 * is now made when the library loads.
 *
 * glibc's own calls to the allocator are seen only by interposing it, so
 * this test defines malloc and friends itself; AddressSanitizer, which
 * interposes them too, skips it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "interpose_alloc.h"

#if INTERPOSE_ALLOC_SKIP
int main(void)
{
	return interpose_alloc_skipped();
}
#else

static __thread volatile int in_handler;
static volatile unsigned long handler_allocs;

void *malloc(size_t n)
{
	handler_allocs += in_handler;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	handler_allocs += in_handler;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	handler_allocs += in_handler;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	handler_allocs += in_handler;
	__libc_free(p);
}

static struct bpfmap *map;
static int ret_update, ret_prog;

static void handler(int sig)
{
	uint64_t k = 5, v = 42;

	(void)sig;
	in_handler = 1;
	ret_update = bpfmap_update_elem(map, &k, &v, BPFMAP_EXIST);
	ret_prog = bpfmap_update(map, &k, &v, BPFMAP_EXIST);
	in_handler = 0;
}

static void *raise_thread(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = handler };
	pthread_key_t keys[40];
	uint64_t k = 5, v = 1;
	pthread_t t;
	int failed = 0;

	for (int i = 0; i < 40; i++)
		if (pthread_key_create(&keys[i], NULL))
			return 1;
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	for (enum bpfmap_type type = BPFMAP_TYPE_HASH; type <= BPFMAP_TYPE_LRU_HASH; type++) {
		if (type != BPFMAP_TYPE_HASH && type != BPFMAP_TYPE_LRU_HASH)
			continue;
		map = bpfmap_create(type, "keys", 8, 8, 1024, NULL);
		if (!map || bpfmap_update_elem(map, &k, &v, BPFMAP_NOEXIST))
			return 1;
		handler_allocs = 0;
		if (pthread_create(&t, NULL, raise_thread, NULL) || pthread_join(t, NULL))
			return 1;
		printf("map type %d: handler's updates %d %d, %lu allocator calls\n", type,
		       ret_update, ret_prog, handler_allocs);
		failed |= handler_allocs != 0 || ret_update != 0 || ret_prog != 0;
		bpfmap_free(map);
	}
	printf("%s\n", failed ? "FAILED" : "passed");
	return failed;
}
#endif
