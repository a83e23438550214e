/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The creation checks the kernel's hash-map family shares (its
 * htab_map_alloc_check), for the type files of maps/.
 */
#ifndef BPFMAP_MAPS_HASH_FAMILY_H
#define BPFMAP_MAPS_HASH_FAMILY_H

#include <stdbool.h>

#include "core/map.h"

/* The checks for a hash map (@lru: of an LRU type; @percpu: of a per-CPU
 * one); 0 or -errno, in the kernel's order. */
int hash_family_check(const struct map_params *p, bool lru, bool percpu);

/* The same without the map_extra check, with max_entries capped at
 * @max_entries_cap (the types whose max_entries is not a bucket count). */
int hash_family_check_common(const struct map_params *p, bool lru, bool percpu,
			     uint32_t max_entries_cap);

/* The number of per-CPU slots: the possible CPUs; 0 with *err set if they
 * cannot be read. */
uint32_t hash_family_cpus(int *err);

#endif
