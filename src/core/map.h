/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The generic map: what every map type shares, and the table of operations a
 * type fills in (the kernel's struct bpf_map_ops, in user space).  The public
 * functions in core/map.c validate arguments, check access rights and turn
 * results into errno; a type's operations see only well-formed calls.
 */
#ifndef BPFMAP_CORE_MAP_H
#define BPFMAP_CORE_MAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <bpfmap.h>

#include "util/compiler.h"
#include "util/cpu.h"
#include "util/rseq_add.h"

/* Validated creation parameters, as the map types receive them. */
struct map_params {
	enum bpfmap_type type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t map_flags;
	int32_t lock_off; /* -1: no spin lock in the value */
	uint64_t map_extra;
	char name[BPFMAP_OBJ_NAME_LEN];
	/* What the type asks of its table: per-CPU values (the number of
	 * slots, by CPU number: cpu_slots(); 0 for one shared value), and eviction
	 * of an old element instead of -E2BIG when the map is full (LRU). */
	uint32_t cpus;
	bool evict;
};

/* The bytes of one value as the syscall view copies it: value_size, or a
 * round_up(value_size, 8) slot per possible CPU (their count, which is
 * below p->cpus, the slots, where the possible CPUs' list has gaps). */
static inline uint32_t map_params_value_bytes(const struct map_params *p)
{
	return p->cpus ? ROUND_UP(p->value_size, 8) * (uint32_t)cpu_possible() : p->value_size;
}

struct bpfmap;

/*
 * Program-view lookup: the value's address, or NULL with errno set (return
 * map_lookup_miss() on a miss).  bpfmap_lookup() tail-calls it, so the errno
 * of a miss is set here, off the hot path, rather than after the call.
 */
typedef void *(*map_lookup_fn)(struct bpfmap *map, const void *key);

/*
 * Copy-out lookup without flags: 0, or -errno with errno set.
 * bpfmap_lookup_elem() tail-calls it after its checks, so errno is set here,
 * off the hot path.  A table may specialise it per map at creation, as it
 * does the program view; else it is the map's ops->lookup_elem(.., 0).
 */
typedef int (*map_copy_fn)(struct bpfmap *map, const void *key, void *value);

/* errno = -err, and err (< 0) returned: out of line, so that a map_copy_fn
 * or an entry point can end in a tail call to it and set up no frame.  Not
 * cold: a copy-out's -ENOENT is an ordinary answer. */
int map_fail(int err);

/* @ret, through map_fail when it is -errno: the return convention of
 * map_copy_fns, a tail call on failure. */
static ALWAYS_INLINE int map_result(int ret)
{
	return likely(ret >= 0) ? ret : map_fail(ret);
}

/* The same for an entry point returning what a map operation answered,
 * errno set inline: no call for a -E2BIG or -EEXIST, which are ordinary
 * answers of updates. */
static ALWAYS_INLINE int map_answer(int ret)
{
	if (unlikely(ret < 0))
		errno = -ret;
	return ret;
}

/* The miss path of every map_lookup_fn: errno ENOENT, NULL. */
void *map_lookup_miss(void) __attribute__((cold));

/* A program-view lookup that would wait for its own thread's interrupted
 * operation (sync/reentry.h): errno EBUSY, NULL. */
void *map_lookup_busy(void) __attribute__((cold));

struct map_ops {
	void (*free)(struct bpfmap *map);
	/* flags: 0 or BPFMAP_F_LOCK, already validated. */
	int (*lookup_elem)(struct bpfmap *map, const void *key, void *value, uint64_t flags);
	/* flags: validated update flags. */
	int (*update_elem)(struct bpfmap *map, const void *key, const void *value,
			   uint64_t flags);
	int (*delete_elem)(struct bpfmap *map, const void *key);
	/* Store @len bytes of @src at @off + i * @step of the value, i < @n,
	 * the rest of a new element's value zeroed (per-CPU slots: the program
	 * view's update, BPFMAP_F_CPU and BPFMAP_F_ALL_CPUS); mode is
	 * BPFMAP_ANY, NOEXIST or EXIST. */
	/* Per-CPU maps: the program view of CPU @cpu's slot (< cpus), and
	 * bpfmap_percpu_add's work (0 or -ENOENT). */
	void *(*lookup_percpu)(struct bpfmap *map, const void *key, uint32_t cpu);
	int (*percpu_add)(struct bpfmap *map, const void *key, uint64_t delta);
	int (*update_part)(struct bpfmap *map, const void *key, const void *src, uint32_t len,
			   uint32_t off, uint32_t step, uint32_t n, uint64_t mode);
	/* flags: 0 or BPFMAP_F_LOCK (the map has a lock), already validated. */
	int (*lookup_and_delete_elem)(struct bpfmap *map, const void *key, void *value,
				      uint64_t flags);
	int (*get_next_key)(struct bpfmap *map, const void *key, void *next_key);
	/* The kernel's bucket-cursor batch protocol; elem_flags validated. */
	int (*lookup_batch)(struct bpfmap *map, const void *in_batch, void *out_batch,
			    void *keys, void *values, uint32_t *count, uint64_t elem_flags,
			    bool do_delete);
	size_t (*mem_usage)(const struct bpfmap *map);
	/* Optional: many program-view lookups with overlapped memory accesses;
	 * returns how many were found.  Without it, map->lookup is looped. */
	int (*lookup_bulk)(struct bpfmap *map, const void *keys, uint32_t n, void **values);
	/* Optional: the map_extra it was created with, for bpfmap_get_info()
	 * (only RHASH takes one); without it, 0. */
	uint64_t (*map_extra)(const struct bpfmap *map);
};

struct bpfmap {
	/* Program-view lookup, specialised per map at creation: first, so the
	 * hot path loads it without an offset. */
	map_lookup_fn lookup;
	map_copy_fn copy; /* beside it: the copy-out's hot path */
	const struct map_ops *ops;
	uint32_t key_size;
	/* Bytes per value in the syscall view (per-CPU maps: cpu_stride bytes
	 * for each possible CPU, in their order). */
	uint32_t value_size;
	/* The value_size the map was created with: what a program sees. */
	uint32_t prog_value_size;
	uint16_t cpus;       /* per-CPU slots, by CPU number (cpu_slots()); 0: one value */
	uint16_t cpu_stride; /* round_up(prog_value_size, 8) when per-CPU */
	uint32_t max_entries;
	uint32_t map_flags;
	int32_t lock_off;
	enum bpfmap_type type;
	char name[BPFMAP_OBJ_NAME_LEN];
	/* 72 bytes: the flat table's hot fields fill the line after the first
	 * (tables/flat.h). */
};

/*
 * Whether a copy-out's @value buffer overlaps its @key: callers may pass
 * one buffer for both, as the kernel's syscall allows (it copies the key in
 * first).  A copy-out writes the value before it knows that the copy holds,
 * and its retry reads the key again, so each copy-out either keeps the key
 * in registers for its retries (the word keys' hot paths) or checks this
 * before its first write and then answers through map_copy_key_apart().
 * Overlap iff -value_size < value - key < key_size: one unsigned compare.
 */
static ALWAYS_INLINE bool map_value_overlaps_key(const struct bpfmap *map, const void *key,
						 const void *value)
{
	uintptr_t d = (uintptr_t)value - (uintptr_t)key;

	return d + (map->value_size - 1) < (uintptr_t)map->key_size + map->value_size - 1;
}

/* A call that reads @key and writes @value (a copy-out, a lookup-and-delete). */
typedef int (*map_keyed_fn)(struct bpfmap *map, const void *key, void *value, uint64_t flags);

/* @call(@map, a copy of @key, @value, @flags), for callers whose buffers
 * overlap: keys of up to 512 bytes (the kernel's BPF stack, where programs
 * build theirs) are copied on the stack, longer ones to the heap (-ENOMEM
 * with errno set when that fails).  Errno as @call sets it. */
int map_call_key_apart(map_keyed_fn call, struct bpfmap *map, const void *key, void *value,
		       uint64_t flags) __attribute__((cold));

/* map->copy(@map, a copy of @key, @value): map_call_key_apart for a
 * copy-out whose buffers overlap. */
int map_copy_key_apart(struct bpfmap *map, const void *key, void *value)
	__attribute__((cold));

/* Install @copy as @map's copy-out (bpfmap_lookup_elem's tail call), or
 * for a BPFMAP_F_WRONLY map a refusal (-EPERM), so that the entry point
 * tests no flag.  Tables that specialise a copy-out install it so. */
void map_set_copy(struct bpfmap *map, map_copy_fn copy);
/* Fill the generic part of a freshly allocated map. */
void map_init_common(struct bpfmap *map, const struct map_params *p,
		     const struct map_ops *ops, map_lookup_fn lookup);

static inline bool map_is_percpu(const struct bpfmap *map)
{
	return map->cpus != 0;
}

/* A per-CPU map made where the possible CPUs' list has gaps: its syscall
 * value holds fewer slots than it keeps (util/cpu.h's cpu_ranked()). */
static inline bool map_cpus_gapped(const struct bpfmap *map)
{
	return map->value_size != (uint32_t)map->cpus * map->cpu_stride;
}

/* Whether CPU number @cpu names a possible CPU's slot of per-CPU @map. */
static inline bool map_cpu_possible(const struct bpfmap *map, uint32_t cpu)
{
	return cpu < map->cpus && (!map_cpus_gapped(map) || cpu_rank_of(cpu) != UINT32_MAX);
}

/* The calling CPU, for its slot in a per-CPU value: any answer is correct
 * (a thread may move on at once), so a CPU number past the possible ones
 * (none should be) only wraps. */
static ALWAYS_INLINE uint32_t map_cpu_current(const struct bpfmap *map)
{
	uint32_t cpu = cpu_current();

	if (unlikely(cpu >= map->cpus))
		cpu %= map->cpus;
	return cpu;
}

char *map_pcpu_here_slow(const struct bpfmap *map, char *slot0, size_t region);

/*
 * The calling CPU's slot of a per-CPU value whose CPU 0 slot is @slot0 and
 * whose CPU c slot is @region bytes per CPU further.  @rseq (a constant in
 * each caller; true only where cpu_rseq_indexes held when the map was
 * created): rseq's cpu_id_start, one load and no check.  Else the rseq
 * area's cpu_id, checked against the map's CPUs, and anything else out of
 * line (a tail call, so that the lookups ending here set up no frame for
 * it).  The check cost the per-CPU lookups of 8- and 32-byte keys 5-10%.
 */
static ALWAYS_INLINE char *map_pcpu_here(const struct bpfmap *map, char *slot0, size_t region,
					 bool rseq)
{
	uint32_t cpu;

	if (rseq)
		return slot0 + cpu_current_rseq() * region;
	cpu = (uint32_t)cpu_current_raw();
	if (likely(cpu < map->cpus))
		return slot0 + cpu * region;
	return map_pcpu_here_slow(map, slot0, region);
}

/* An add into the calling CPU's 64-bit slot of a per-CPU value whose CPU 0
 * slot is @slot0 and whose CPU c slot is @region bytes per CPU further: a
 * restartable sequence where there is one (util/rseq_add.h), else an
 * atomic add.  Either way no add is lost. */
static ALWAYS_INLINE void map_pcpu_add(const struct bpfmap *map, char *slot0, size_t region,
				       uint64_t delta)
{
#ifdef RSEQ_ADD
	if (likely(rseq_add_u64(slot0, region, delta)))
		return;
#endif
	__atomic_fetch_add((uint64_t *)(void *)(slot0 + map_cpu_current(map) * region), delta,
			   __ATOMIC_RELAXED);
}

static inline bool map_has_lock(const struct bpfmap *map)
{
	return map->lock_off >= 0;
}

/* A value of at most 8 bytes as the word that one atomic store writes (the
 * bytes past value_size zero); the common 8-byte case is one load. */
static ALWAYS_INLINE uint64_t map_value_word(const struct bpfmap *map, const void *value)
{
	uint64_t w = 0;

	if (map->value_size == 8)
		memcpy(&w, value, 8);
	else
		memcpy(&w, value, map->value_size);
	return w;
}

/* The inverse for values shorter than 8 bytes: @w copied out to @dst.
 * Returns 0, so that copy-outs can end with a tail call to it. */
int map_value_word_out_short(const struct bpfmap *map, void *dst, uint64_t w);

/*
 * A map type, as core/types.h lists it: the checks and the allocation that
 * the type's file in maps/ supplies.  alloc picks a table and returns a map
 * whose ops are that table's, so no operation pays for the type's indirection.
 */
struct map_type {
	/* Type-specific checks after the generic ones (the kernel's
	 * map_alloc_check); 0 or -errno. */
	int (*alloc_check)(const struct map_params *p);
	/* What the kernel's map_alloc refuses before it allocates, after the
	 * token is looked at; NULL if nothing.  0 or -errno. */
	int (*alloc_limits)(const struct map_params *p);
	/* Allocate the map; NULL with *err = -errno on failure. */
	struct bpfmap *(*alloc)(const struct map_params *p, int *err);
	/* Its values may hold a struct bpfmap_spin_lock (the kernel's
	 * map_check_btf: EOPNOTSUPP for the other types). */
	bool spin_lock;
};

#define MAP_TYPE_ENTRY(type, name) extern const struct map_type name;
#include "core/types.h"
#undef MAP_TYPE_ENTRY

#endif
