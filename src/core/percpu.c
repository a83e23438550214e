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
		if ((flags & BPFMAP_F_CPU) && percpu_flags_cpu(flags) >= map->cpus)
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
	if (!ret)
		memcpy(value, buf + (size_t)cpu * map->cpu_stride, map->prog_value_size);
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

int percpu_lookup_batch_cpu(struct bpfmap *map, const void *in_batch, void *out_batch,
			    void *keys, void *values, uint32_t *count, uint32_t cpu)
{
	/* A batch returns at most the map's elements: the whole-value buffer
	 * is sized by those, not by the caller's capacity, which may be far
	 * larger (and is ncpus times smaller per element than this buffer). */
	uint32_t n = *count < map->max_entries ? *count : map->max_entries;
	char *buf = malloc((size_t)(n ? n : 1) * map->value_size);
	int ret;

	if (!buf) {
		*count = 0;
		return -ENOMEM;
	}
	ret = map->ops->lookup_batch(map, in_batch, out_batch, keys, buf, &n, 0, false);
	*count = n;
	for (uint32_t i = 0; i < n; i++)
		memcpy((char *)values + (size_t)i * map->prog_value_size,
		       buf + (size_t)i * map->value_size + (size_t)cpu * map->cpu_stride,
		       map->prog_value_size);
	free(buf);
	return ret;
}

