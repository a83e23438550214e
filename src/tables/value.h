/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A value's bytes, as both tables move them: the spin lock word inside a
 * value (BPFMAP_F_LOCK) is the map's, not the caller's, so it is never
 * overwritten by a store and reads back as zero in every copy out.
 */
#ifndef BPFMAP_TABLES_VALUE_H
#define BPFMAP_TABLES_VALUE_H

#include <string.h>

#include "core/map.h"
#include "sync/spin_lock.h"
#include "util/compiler.h"
#include "util/shared_copy.h"

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

/* Copy live value @src out under its spin lock (BPFMAP_F_LOCK readers). */
static inline void value_copy_out_locked(const struct bpfmap *map, void *dst, void *src)
{
	struct bpfmap_spin_lock *l = value_lock(map, src);

	spin_lock_word(&l->val);
	shared_copy_out(dst, src, map->value_size);
	spin_unlock_word(&l->val);
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

#endif
