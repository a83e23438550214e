/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_F_CPU and BPFMAP_F_ALL_CPUS over a map's operations: see
 * core/percpu.h.  A one-CPU copy-out copies the whole value (the table's
 * consistent copy) and keeps the slot, so it is never torn either.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/percpu.h"

int percpu_check_flags(const struct bpfmap *map, uint64_t flags, uint64_t allowed)
{
	if ((uint32_t)flags & ~allowed)
		return -EINVAL;
	if ((flags & BPFMAP_F_LOCK) && !map_has_lock(map))
		return -EINVAL;
	if (!(flags & BPFMAP_F_CPU) && (flags >> 32))
		return -EINVAL;
	if (flags & PERCPU_FLAGS) {
		if (!map_is_percpu(map))
			return -EINVAL;
		if ((flags & BPFMAP_F_CPU) && (flags & BPFMAP_F_ALL_CPUS))
			return -EINVAL;
		/* A CPU number, as the kernel's; one in a gap of the
		 * possible CPUs' list is no CPU either. */
		if ((flags & BPFMAP_F_CPU) && !map_cpu_possible(map, percpu_flags_cpu(flags)))
			return -ERANGE;
	}
	return 0;
}

/* Whole values up to this size are copied through the stack. */
#define PERCPU_STACK_BYTES 512

int percpu_lookup_cpu(struct bpfmap *map, const void *key, void *value, uint32_t cpu)
{
	char stack[PERCPU_STACK_BYTES];
	char *buf = map->value_size <= sizeof(stack) ? stack : malloc(map->value_size);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = map->ops->lookup_elem(map, key, buf, 0);
	if (!ret) /* @cpu's place in the syscall layout: its rank */
		memcpy(value, buf + (size_t)cpu_rank_of(cpu) * map->cpu_stride,
		       map->prog_value_size);
	if (buf != stack)
		free(buf);
	return ret;
}

int percpu_update(struct bpfmap *map, const void *key, const void *value, uint64_t flags)
{
	uint64_t mode = (uint32_t)flags & ~(BPFMAP_F_LOCK | PERCPU_FLAGS);

	if (flags & BPFMAP_F_CPU)
		return map->ops->update_part(map, key, value, map->prog_value_size,
					     percpu_flags_cpu(flags) * map->cpu_stride, 0, 1, mode);
	if (flags & BPFMAP_F_ALL_CPUS)
		return map->ops->update_part(map, key, value, map->prog_value_size, 0,
					     map->cpu_stride, map->cpus, mode);
	return map->ops->update_elem(map, key, value, flags);
}

/* Whole values copied per table call: the one-CPU batch's buffer holds
 * ncpus times what the caller's does, per element. */
#define PERCPU_BATCH_BYTES ((size_t)1 << 20)

/*
 * The table's batch of whole values, a chunk at a time, each CPU's slot
 * kept.  A buffer for the caller's whole capacity (ncpus times its values,
 * up to max_entries of them) could answer -ENOMEM where the kernel, which
 * copies a bucket at a time, does not.  Chunks go on from the cursor the
 * last one left while they fill, so the call returns the elements one
 * call over the caller's capacity would: whole buckets while they fit (a
 * bucket larger than the chunk doubles it, up to that capacity).  Their
 * order within a flat table's bucket may differ, where a bucket's home
 * slots and overflow chain fall in two chunks.
 */
int percpu_lookup_batch_cpu(struct bpfmap *map, const void *in_batch, void *out_batch,
			    void *keys, void *values, uint32_t *count, uint32_t cpu)
{
	uint32_t room = *count, done = 0, cursor = 0, rank = cpu_rank_of(cpu);
	uint32_t chunk = (uint32_t)(PERCPU_BATCH_BYTES / map->value_size);
	const void *in = in_batch;
	char *buf = NULL;
	int ret;

	chunk = chunk ? chunk : 1;
	for (;;) {
		uint32_t n = chunk < room ? chunk : room;

		if (!buf) {
			buf = malloc((size_t)n * map->value_size);
			if (!buf) {
				ret = -ENOMEM;
				break;
			}
		}
		ret = map->ops->lookup_batch(map, in, out_batch, (char *)keys +
					     (size_t)done * map->key_size, buf, &n, 0, false);
		for (uint32_t i = 0; i < n; i++)
			memcpy((char *)values + (size_t)(done + i) * map->prog_value_size,
			       buf + (size_t)i * map->value_size + (size_t)rank * map->cpu_stride,
			       map->prog_value_size);
		done += n;
		room -= n;
		if (ret == -ENOSPC && !n && chunk < room) {
			/* The next bucket is larger than a chunk: a larger one. */
			chunk = chunk > room / 2 ? room : chunk * 2;
			free(buf);
			buf = NULL;
			continue;
		}
		if (ret == -ENOSPC && done)
			ret = 0; /* what fitted, as one call over room would */
		if (ret || !room || !n)
			break;
		/* On from here: the cursor is a 4-byte bucket index (RHASH, the
		 * one map of key cursors, has no per-CPU values). */
		memcpy(&cursor, out_batch, sizeof(cursor));
		in = &cursor;
	}
	free(buf);
	*count = done;
	return ret;
}

