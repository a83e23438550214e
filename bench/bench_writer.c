// SPDX-License-Identifier: BSD-2-Clause
/* The lookup benchmark's --writer thread (see bench_writer.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpfmap.h>

#include "bench_writer.h"
#include "stats.h"

/* Updates between two looks at the stop flag and two counter updates: about
 * 50 us of bpfmap updates, 1 ms of the kernel's syscalls. */
#define WRITER_BATCH 1024

static int writer_update(const struct bench_writer *w, const void *key, const void *value)
{
	if (w->map)
		return bpfmap_update_elem(w->map, key, value, BPFMAP_ANY);
	return bpf_map_update_elem(w->fd, key, value, BPF_ANY) ? -errno : 0;
}

static void *writer_main(void *arg)
{
	struct bench_writer *w = arg;
	uint8_t key[LOOKUP_MAX_KEY] __attribute__((aligned(64)));
	uint8_t *value = calloc(1, w->value_size);
	uint64_t pass = 0;
	uint32_t i = 0;

	if (!value) {
		seq_stats_add(&w->stats, 0, 0, 1);
		return NULL;
	}
	if (bench_pin_self(w->cpu))
		fprintf(stderr, "warning: cannot pin the writer to CPU %d\n", w->cpu);
	lookup_key_pattern(key);
	do {
		uint64_t t0 = thread_cpu_ns(), errors = 0;

		for (int n = 0; n < WRITER_BATCH; n++) {
			uint64_t v = i;

			lookup_key_set(key, i);
			memcpy(value, &v, sizeof(v));
			if (w->value_size >= 16)
				memcpy(value + 8, &pass, sizeof(pass));
			errors += writer_update(w, key, value) != 0;
			if (++i == w->nr_entries) {
				i = 0;
				pass++;
			}
		}
		seq_stats_add(&w->stats, WRITER_BATCH, thread_cpu_ns() - t0, errors);
	} while (!atomic_load_explicit(&w->stop, memory_order_relaxed));
	free(value);
	return NULL;
}

int writer_start(struct bench_writer *w, const struct bench_env *env, struct bpfmap *map, int fd,
		 const struct bench_args *a, struct cell_result *r)
{
	int ret;

	memset(w, 0, sizeof(*w));
	w->map = map;
	w->fd = fd;
	w->value_size = a->value_size;
	w->nr_entries = a->nr_entries;
	w->cpu = bench_spare_cpu(env);
	w->pinned_env = env->affinity || env->nr_prod_cpus;
	atomic_init(&w->stop, false);
	ret = pthread_create(&w->thread, NULL, writer_main, w);
	if (ret) {
		snprintf(r->error, sizeof(r->error), "cannot start the writer: %s", strerror(ret));
		return -1;
	}
	w->running = true;
	return 0;
}

void writer_stop(struct bench_writer *w)
{
	if (!w->running)
		return;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	w->running = false;
}

void writer_finish(struct bench_writer *w, struct cell_result *r)
{
	struct counters c = { 0 };
	char where[64];

	writer_stop(w);
	stats_read(&w->stats, &c);
	r->writer_updates = c.events;
	r->writer_errors = c.errors;
	r->writer_mops = c.ns ? (double)c.events * 1e3 / (double)c.ns : 0;
	if (w->cpu >= 0)
		snprintf(where, sizeof(where), "on CPU %d", w->cpu);
	else
		snprintf(where, sizeof(where), "not pinned%s",
			 w->pinned_env ? " (every CPU has a producer)" : "");
	snprintf(r->writer_note, sizeof(r->writer_note), "%s, BPF_ANY on present keys, %s",
		 w->map ? "bpfmap_update_elem()" : "bpf_map_update_elem() syscalls", where);
}
