/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A value's bytes, as both tables move them: the spin lock word inside a
 * value (BPFMAP_F_LOCK) is the map's, not the caller's, so it is never
 * overwritten by a store and reads back as zero in every copy out.  A
 * per-CPU value's slots live apart, one region per CPU (so that two CPUs'
 * counters never share a line): CPU c's slot at slot0 + c * region, where
 * the syscall view lays them out at c * cpu_stride.
 */
#ifndef BPFMAP_TABLES_VALUE_H
#define BPFMAP_TABLES_VALUE_H

#include <string.h>

#include "core/map.h"
#include "sync/reentry.h"
#include "sync/spin_lock.h"
#include "util/compiler.h"
#include "util/shared_copy.h"
#include "util/test_hook.h"

static ALWAYS_INLINE struct bpfmap_spin_lock *value_lock(const struct bpfmap *map, void *value)
{
	return (struct bpfmap_spin_lock *)(void *)((char *)value + map->lock_off);
}

/* A copy's lock field zeroed, as the kernel's copy_map_value does. */
static ALWAYS_INLINE void value_clear_lock(const struct bpfmap *map, void *dst)
{
	if (map_has_lock(map))
		memset((char *)dst + map->lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

/* Copy live value @src out and release its spin lock, which the caller
 * took (BPFMAP_F_LOCK batches).  The copy's lock field is not cleared. */
static inline void value_copy_out_held(const struct bpfmap *map, void *dst, void *src)
{
	shared_copy_out(dst, src, map->value_size);
	value_lock_drop(&value_lock(map, src)->val);
}

/* Copy live value @src out as its lock's holders left it, without taking
 * the lock (sync/spin_lock.h): true if the word was even and the same
 * around the copy.  TSan builds never: a program's plain stores under the
 * lock race with the copy by design, which the check makes harmless. */
static inline bool value_copy_out_seen(const struct bpfmap *map, void *dst, void *src)
{
#ifdef BPFMAP_TSAN
	(void)map, (void)dst, (void)src;
	return false;
#else
	const uint32_t *word = &value_lock(map, src)->val;
	uint32_t s = seq_spin_read_begin(word);

	if (s & 1)
		return false;
	shared_copy_out(dst, src, map->value_size);
	TEST_HOOK(HOOK_FLOCK_COPIED, src);
	return seq_spin_read_valid(word, s);
#endif
}

/* Copy live value @src out as under its spin lock (BPFMAP_F_LOCK copy-outs):
 * unlocked reads first, a few times, then the lock.  False, nothing
 * copied, for a @lookup whose thread is marked (sync/reentry.h): the lock's
 * holder may be the operation its signal handler interrupted.  A @lookup
 * marks its thread while it holds the lock, so that a handler's F_LOCK call
 * on the same value answers -EBUSY rather than wait for it (a caller that
 * is not a lookup holds a bucket lock, and is marked already). */
static inline bool value_copy_out_locked(const struct bpfmap *map, void *dst, void *src,
					 bool lookup)
{
	uint32_t *word = &value_lock(map, src)->val;

	for (int tries = 0; tries < 4; tries++) {
		if (value_copy_out_seen(map, dst, src))
			return true;
		cpu_relax();
	}
	if (lookup && !reentry_begin())
		return false;
	value_lock_take(word);
	TEST_HOOK(HOOK_FLOCK_HELD, src);
	value_copy_out_held(map, dst, src);
	if (lookup)
		reentry_end();
	return true;
}

/* The same only if the lock is free now: false, nothing copied, when it
 * is held.  A caller that holds a bucket lock copies this way, and waits
 * for a held one with the bucket unlocked (sync/spin_lock.h). */
static inline bool value_copy_out_trylocked(const struct bpfmap *map, void *dst, void *src)
{
	if (value_copy_out_seen(map, dst, src))
		return true;
	if (!value_lock_try(&value_lock(map, src)->val))
		return false;
	value_copy_out_held(map, dst, src);
	return true;
}

/* An F_LOCK copy by a caller that holds @src's bucket locked and will
 * remove it: NULL once copied (the lock field zeroed), else the lock word,
 * which someone else holds, for the caller to wait on with the bucket
 * unlocked before it looks the key up again. */
static inline uint32_t *value_copy_out_or_busy(const struct bpfmap *map, void *dst, void *src)
{
	if (!value_copy_out_trylocked(map, dst, src))
		return &value_lock(map, src)->val;
	value_clear_lock(map, dst);
	return NULL;
}

/* @value into a value that no key holds yet, its lock free: the lock word
 * with one atomic store, since a waiter from the value's last life may
 * still read it (chained preallocated maps wait on it outside any section,
 * chain_value_wait, and their elements stay theirs). */
static inline void value_fill(const struct bpfmap *map, void *dst, const void *value)
{
	if (map_has_lock(map)) {
		uint32_t tail = (uint32_t)map->lock_off + sizeof(struct bpfmap_spin_lock);

		memcpy(dst, value, (size_t)map->lock_off);
		memcpy((char *)dst + tail, (const char *)value + tail, map->value_size - tail);
		__atomic_store_n(&value_lock(map, dst)->val, 0, __ATOMIC_RELAXED);
	} else {
		memcpy(dst, value, map->value_size);
	}
}

/* Store @value into live value @dst, its lock word untouched (other threads
 * may hold it).  The caller keeps readers out (a seq, or the lock). */
static inline void value_store(const struct bpfmap *map, void *dst, const void *value)
{
	if (map_has_lock(map)) {
		uint32_t tail = (uint32_t)map->lock_off + sizeof(struct bpfmap_spin_lock);

		shared_copy_in(dst, 0, value, (size_t)map->lock_off);
		shared_copy_in(dst, tail, (const char *)value + tail, map->value_size - tail);
	} else {
		shared_copy_in(dst, 0, value, map->value_size);
	}
}

/*
 * Part of a value, as update_part stores it: @len bytes of @src at @off +
 * i * @step, i < @n; per-CPU maps (the program view's update, BPFMAP_F_CPU,
 * BPFMAP_F_ALL_CPUS), CPU c's slot at c * cpu_stride, by CPU number.
 */
struct value_part {
	const void *src;
	uint32_t len, off, step, n;
};

/* The copies where the possible CPUs' list has gaps (map_cpus_gapped):
 * out of line, so that the copies of every other list keep their
 * registers. */
static __attribute__((noinline, cold, unused)) void
value_pcpu_out_ranked(const struct bpfmap *map, void *dst, const char *slot0, size_t region)
{
	const uint32_t *ranked = cpu_ranked();
	uint32_t stride = map->cpu_stride;

	for (uint32_t r = 0; r < map->value_size / stride; r++)
		shared_copy_out((char *)dst + (size_t)r * stride, slot0 + ranked[r] * region,
				stride);
}

static __attribute__((noinline, cold, unused)) void
value_pcpu_in_ranked(const struct bpfmap *map, char *slot0, size_t region, const void *value)
{
	const uint32_t *ranked = cpu_ranked();
	uint32_t stride = map->cpu_stride;

	for (uint32_t r = 0; r < map->value_size / stride; r++)
		shared_copy_in(slot0 + ranked[r] * region, 0, (const char *)value + (size_t)r * stride,
			       stride);
}

/* Per-CPU value at @slot0 (CPU c's slot at @slot0 + c * @region) out to
 * @dst in the syscall layout: the possible CPUs' slots in their order. */
static inline void value_pcpu_out(const struct bpfmap *map, void *dst, const char *slot0,
				  size_t region)
{
	if (unlikely(map_cpus_gapped(map))) {
		value_pcpu_out_ranked(map, dst, slot0, region);
		return;
	}
	for (uint32_t cpu = 0; cpu < map->cpus; cpu++)
		shared_copy_out((char *)dst + (size_t)cpu * map->cpu_stride,
				slot0 + cpu * region, map->cpu_stride);
}

/* Store a per-CPU value: all of @value (syscall layout), or @part of it;
 * @fresh: an element not yet published, whose slots outside @part are
 * zeroed (the kernel's new element from a program's update). */
static inline void value_pcpu_in(const struct bpfmap *map, char *slot0, size_t region,
				 const void *value, const struct value_part *part, bool fresh)
{
	uint32_t stride = map->cpu_stride;

	if (!part) {
		if (unlikely(map_cpus_gapped(map))) {
			value_pcpu_in_ranked(map, slot0, region, value);
			return;
		}
		for (uint32_t cpu = 0; cpu < map->cpus; cpu++)
			shared_copy_in(slot0 + cpu * region, 0,
				       (const char *)value + (size_t)cpu * stride, stride);
		return;
	}
	if (fresh) /* atomic: a pointer from before an in-place reuse may read it */
		for (uint32_t cpu = 0; cpu < map->cpus; cpu++)
			for (uint32_t o = 0; o < stride; o += 8)
				__atomic_store_n((uint64_t *)(void *)(slot0 + cpu * region + o), 0,
						 __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < part->n; i++) {
		size_t at = part->off + (size_t)i * part->step;

		shared_copy_in(slot0 + at / stride * region, at % stride, part->src, part->len);
	}
}

#endif
