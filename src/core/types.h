/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The map types, one line each, as the kernel's include/linux/bpf_types.h
 * lists them: MAP_TYPE_ENTRY(uapi value, the struct map_type of its file in
 * maps/).  The name is not MAP_TYPE, which <sys/mman.h> defines.
 * core/map.c turns the list into its dispatch array; adding a type is one
 * line here and one file in maps/ (docs/ARCHITECTURE.md).
 */
MAP_TYPE_ENTRY(BPFMAP_TYPE_HASH, hash_map_type)
MAP_TYPE_ENTRY(BPFMAP_TYPE_PERCPU_HASH, percpu_hash_map_type)
MAP_TYPE_ENTRY(BPFMAP_TYPE_LRU_HASH, lru_hash_map_type)
MAP_TYPE_ENTRY(BPFMAP_TYPE_LRU_PERCPU_HASH, lru_percpu_hash_map_type)
MAP_TYPE_ENTRY(BPFMAP_TYPE_RHASH, rhash_map_type)
