/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The syscall view's per-CPU flags (BPFMAP_F_CPU, BPFMAP_F_ALL_CPUS, as
 * bpf-next merged them), for core/map.c: their checks, and the operations
 * on one CPU's slot, written once over the map's operations.
 */
#ifndef BPFMAP_CORE_PERCPU_H
#define BPFMAP_CORE_PERCPU_H

#include <stdint.h>

#include "core/map.h"

#define PERCPU_FLAGS (BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS)

/* The kernel's bpf_map_check_op_flags: 0, -EINVAL (a flag outside
 * @allowed, F_LOCK without a lock, the CPU bits without F_CPU, a per-CPU
 * flag on another type, F_CPU with F_ALL_CPUS) or -ERANGE (no such CPU). */
int percpu_check_flags(const struct bpfmap *map, uint64_t flags, uint64_t allowed);

/* The CPU of a checked BPFMAP_F_CPU flag word. */
static inline uint32_t percpu_flags_cpu(uint64_t flags)
{
	return (uint32_t)(flags >> 32);
}

/* The bytes per value in the caller's buffers under @flags: one slot with
 * a per-CPU flag, else the whole value. */
static inline uint32_t percpu_buffer_size(const struct bpfmap *map, uint64_t flags)
{
	return flags & PERCPU_FLAGS ? map->prog_value_size : map->value_size;
}

/* Copy-out of one CPU's slot (BPFMAP_F_CPU); 0 or -errno. */
int percpu_lookup_cpu(struct bpfmap *map, const void *key, void *value, uint32_t cpu);

/* An update with checked flags: a per-CPU flag stores that CPU's slot or
 * every CPU's (update_part), else the whole value. */
int percpu_update(struct bpfmap *map, const void *key, const void *value, uint64_t flags);

/* A lookup batch with BPFMAP_F_CPU: the map's batch into a whole-value
 * buffer, then that CPU's slots packed into @values. */
int percpu_lookup_batch_cpu(struct bpfmap *map, const void *in_batch, void *out_batch,
			    void *keys, void *values, uint32_t *count, uint32_t cpu);

#endif
