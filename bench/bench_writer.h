/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lookup benchmark's --writer: one more thread that overwrites the values
 * of present keys (BPF_ANY) non-stop while the producers look them up, so the
 * lookup figure shows what a concurrent writer costs the readers.
 *
 * It walks keys 0 .. nr_entries - 1 of the lookup benchmark over and over and
 * stores value i under key i (the benchmark's invariant: every key stays
 * present with its own value; bytes 8..15 of longer values carry a pass
 * count, so the stored bytes do change).  bpfmap's writer calls
 * bpfmap_update_elem(); the kernel's calls bpf_map_update_elem(), a syscall
 * per update (user space has no other way to write the kernel's map).
 *
 * It is pinned to a CPU no producer is pinned to (bench_spare_cpu()) when the
 * producers are pinned, so it never takes a producer's CPU.  Its rate is
 * updates over its own CPU time, as bpfmap's other figures.
 */
#ifndef BPFMAP_BENCH_WRITER_H
#define BPFMAP_BENCH_WRITER_H

#include <pthread.h>

#include "bench.h"
#include "bench_shared.h"

struct bpfmap;

struct bench_writer {
	struct bpfmap *map; /* bpfmap's map, or NULL: */
	int fd;             /* the kernel map's fd */
	uint32_t value_size, nr_entries;
	int cpu;            /* pinned there, or -1 */
	bool pinned_env;    /* the producers are pinned */
	bool running;
	atomic_bool stop;
	pthread_t thread;
	struct bench_cpu_stats stats; /* updates, CPU ns, failed updates */
};

/* Starts the writer on @map (bpfmap) or @fd (the kernel's, when @map is
 * NULL).  Returns 0, or -1 with r->error set. */
int writer_start(struct bench_writer *w, const struct bench_env *env, struct bpfmap *map, int fd,
		 const struct bench_args *a, struct cell_result *r);

/* Stops and joins it; nothing when it is not running.  */
void writer_stop(struct bench_writer *w);

/* Stops it and puts its figures into @r (writer_*). */
void writer_finish(struct bench_writer *w, struct cell_result *r);

#endif
