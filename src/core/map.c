/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The public entry points per key and per batch: argument and permission
 * checks in the kernel's order, dispatch to the map type's operations,
 * errno on the way out.  The generic batch update/delete loops live here
 * too, as in the kernel, because they are the same for every type.
 * Creating and freeing a map are in core/map_create.c, apart from these:
 * this host runs a loop of updates 7-10% slower or faster as the entry
 * points move by 32 bytes in their cache lines, and cold code above them
 * moved them.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "core/map.h"
#include "core/opts.h"
#include "core/percpu.h"
#include "sync/reentry.h"
#include "util/compiler.h"

/* Calls that may hold a lock run with the thread marked (REENTRY_GUARDED,
 * sync/reentry.h).  Updates are not marked here but by the tables, on
 * their locked paths only, so that lock-free overwrites pay nothing. */

static bool can_read(const struct bpfmap *map)
{
	return !(map->map_flags & BPFMAP_F_WRONLY);
}

static bool can_write(const struct bpfmap *map)
{
	return !(map->map_flags & BPFMAP_F_RDONLY);
}

int bpfmap_lookup_elem_flags(struct bpfmap *map, const void *key, void *value,
			     uint64_t flags)
{
	int err;

	if (!map || !key || !value)
		return map_fail(-EINVAL);
	/* The kernel rejects unknown flags before it looks at access rights. */
	if (((uint32_t)flags & ~(BPFMAP_F_LOCK | (map_is_percpu(map) ? BPFMAP_F_CPU : 0))) ||
	    (!(flags & BPFMAP_F_CPU) && (flags >> 32)))
		return map_fail(-EINVAL);
	if (!can_read(map))
		return map_fail(-EPERM);
	err = percpu_check_flags(map, flags, BPFMAP_F_LOCK | BPFMAP_F_CPU);
	if (err)
		return map_fail(err);
	if (!flags)
		return map->copy(map, key, value);
	if (unlikely(map_value_overlaps_key(map, key, value)))
		return map_call_key_apart(bpfmap_lookup_elem_flags, map, key, value, flags);
	if (flags & BPFMAP_F_CPU)
		return map_answer(percpu_lookup_cpu(map, key, value, percpu_flags_cpu(flags)));
	return map_answer(map->ops->lookup_elem(map, key, value, flags));
}

/* bpfmap_lookup_elem_flags(.., 0), the checks in the same order, then a
 * tail call of the map's own copy-out (it sets errno): no flag dispatch. */
int bpfmap_lookup_elem(struct bpfmap *map, const void *key, void *value)
{
	/* Three tests and branches, which fuse, where gcc would combine them
	 * with setcc and or (the empty asm keeps them apart); and no access
	 * test: a write-only map's copy-out refuses (map_set_copy). */
	if (unlikely(!map) || unlikely(!key))
		return map_fail(-EINVAL);
	__asm__ volatile("");
	if (unlikely(!value))
		return map_fail(-EINVAL);
	return map->copy(map, key, value);
}

/* The update flags: a mode (ANY, NOEXIST, EXIST) and those of @extra
 * (F_LOCK; for the syscall view on per-CPU maps F_CPU or F_ALL_CPUS). */
static ALWAYS_INLINE int check_update_flags(const struct bpfmap *map, uint64_t flags,
					    uint64_t extra)
{
	int err;

	if (likely(flags <= BPFMAP_EXIST)) /* the modes alone: no call */
		return 0;
	err = percpu_check_flags(map, flags, BPFMAP_NOEXIST | BPFMAP_EXIST | extra);
	if (err)
		return err;
	if (((uint32_t)flags & ~(BPFMAP_F_LOCK | PERCPU_FLAGS)) > BPFMAP_EXIST)
		return -EINVAL;
	return 0;
}

int bpfmap_update_elem(struct bpfmap *map, const void *key, const void *value,
		       uint64_t flags)
{
	int err;

	if (!map || !key || !value)
		return map_fail(-EINVAL);
	if (!can_write(map))
		return map_fail(-EPERM);
	err = check_update_flags(map, flags, BPFMAP_F_LOCK | PERCPU_FLAGS);
	if (err)
		return map_fail(err);
	if (unlikely(flags & PERCPU_FLAGS))
		return map_answer(percpu_update(map, key, value, flags));
	return map_answer(map->ops->update_elem(map, key, value, flags));
}

int bpfmap_delete_elem(struct bpfmap *map, const void *key)
{
	if (!map || !key)
		return map_fail(-EINVAL);
	if (!can_write(map))
		return map_fail(-EPERM);
	return map_answer(REENTRY_GUARDED(map->ops->delete_elem(map, key)));
}

int bpfmap_lookup_and_delete_elem_flags(struct bpfmap *map, const void *key, void *value,
					uint64_t flags)
{
	if (!map || !key || !value)
		return map_fail(-EINVAL);
	/* The kernel's order: unknown flags, then the access rights, then a
	 * lock flag on a map without a lock.  Neither per-CPU flag is taken. */
	if (flags & ~(uint64_t)BPFMAP_F_LOCK)
		return map_fail(-EINVAL);
	if (!can_read(map) || !can_write(map))
		return map_fail(-EPERM);
	if ((flags & BPFMAP_F_LOCK) && !map_has_lock(map))
		return map_fail(-EINVAL);
	/* An F_LOCK copy that finds the value's lock taken under it looks the
	 * key up again. */
	if (unlikely(map_value_overlaps_key(map, key, value)))
		return map_call_key_apart(bpfmap_lookup_and_delete_elem_flags, map, key, value,
					  flags);
	return map_answer(REENTRY_GUARDED(map->ops->lookup_and_delete_elem(map, key, value, flags)));
}

int bpfmap_lookup_and_delete_elem(struct bpfmap *map, const void *key, void *value)
{
	return bpfmap_lookup_and_delete_elem_flags(map, key, value, 0);
}

int bpfmap_get_next_key(struct bpfmap *map, const void *key, void *next_key)
{
	if (!map || !next_key)
		return map_fail(-EINVAL);
	if (!can_read(map))
		return map_fail(-EPERM);
	return map_answer(REENTRY_GUARDED(map->ops->get_next_key(map, key, next_key)));
}

void *bpfmap_lookup(struct bpfmap *map, const void *key)
{
	if (unlikely(!map || !key)) {
		errno = EINVAL;
		return NULL;
	}
	/* A tail call: EPERM for BPFMAP_F_WRONLY_PROG maps and ENOENT for
	 * misses come from the lookup function itself (map_init_common). */
	return map->lookup(map, key);
}

void *bpfmap_lookup_percpu(struct bpfmap *map, const void *key, uint32_t cpu)
{
	if (unlikely(!map || !key || !map_is_percpu(map))) {
		errno = EINVAL;
		return NULL;
	}
	/* Also a CPU in a gap of the possible CPUs' list: its slot is no CPU's. */
	if (unlikely(!map_cpu_possible(map, cpu))) {
		errno = ERANGE;
		return NULL;
	}
	if (unlikely(map->map_flags & BPFMAP_F_WRONLY_PROG)) {
		errno = EPERM;
		return NULL;
	}
	return map->ops->lookup_percpu(map, key, cpu); /* ENOENT set there */
}

/* The program view's writes: BPFMAP_F_RDONLY_PROG refuses them (the
 * kernel's verifier would not load a program that makes them). */
static bool prog_can_write(const struct bpfmap *map)
{
	return !(map->map_flags & BPFMAP_F_RDONLY_PROG);
}

int bpfmap_update(struct bpfmap *map, const void *key, const void *value, uint64_t flags)
{
	int err;

	if (unlikely(!map || !key || !value))
		return map_fail(-EINVAL);
	if (unlikely(!prog_can_write(map)))
		return map_fail(-EPERM);
	err = check_update_flags(map, flags, BPFMAP_F_LOCK); /* no per-CPU flags: a program's */
	if (unlikely(err))
		return map_fail(err);
	/* A program writes its own CPU's slot; a new element's others are 0. */
	if (map_is_percpu(map))
		return map_answer(map->ops->update_part(map, key, value, map->prog_value_size,
							map_cpu_current(map) * map->cpu_stride, 0, 1,
							flags));
	return map_answer(map->ops->update_elem(map, key, value, flags));
}

int bpfmap_percpu_add(struct bpfmap *map, const void *key, uint64_t delta)
{
	if (unlikely(!map || !key || !map_is_percpu(map) || map->prog_value_size < 8))
		return map_fail(-EINVAL);
	if (unlikely(!prog_can_write(map)))
		return map_fail(-EPERM);
	return map_answer(map->ops->percpu_add(map, key, delta));
}

int bpfmap_delete(struct bpfmap *map, const void *key)
{
	if (unlikely(!map || !key))
		return map_fail(-EINVAL);
	if (unlikely(!prog_can_write(map)))
		return map_fail(-EPERM);
	return map_answer(REENTRY_GUARDED(map->ops->delete_elem(map, key)));
}

bpfmap_lookup_fn bpfmap_lookup_func(const struct bpfmap *map)
{
	if (unlikely(!map)) {
		errno = EINVAL;
		return NULL;
	}
	return map->lookup;
}

int bpfmap_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n, void **values)
{
	int found = 0;

	if (unlikely(!map || (n && (!keys || !values))))
		return map_fail(-EINVAL);
	if (unlikely(map->map_flags & BPFMAP_F_WRONLY_PROG))
		return map_fail(-EPERM);
	/* The count found must fit the int returned. */
	if (unlikely(n > INT_MAX))
		return map_fail(-E2BIG);
	if (map->ops->lookup_bulk)
		return map->ops->lookup_bulk(map, keys, n, values);
	for (uint32_t i = 0; i < n; i++) {
		values[i] = map->lookup(map, (const char *)keys + (size_t)i * map->key_size);
		found += values[i] != NULL;
	}
	return found;
}

int bpfmap_get_info(const struct bpfmap *map, struct bpfmap_info *info, uint32_t *info_len)
{
	struct bpfmap_info i = { 0 };
	uint32_t len;

	if (!map || !info || !info_len)
		return map_fail(-EINVAL);
	/* A caller's newer, larger struct: what this library does not know of
	 * must be zero, and the whole at most a page, as the kernel's
	 * bpf_check_uarg_tail_zero() has it. */
	if (*info_len > 4096 || !opts_tail_zero(info, sizeof(i), *info_len))
		return map_fail(-E2BIG);
	i.type = map->type;
	i.key_size = map->key_size;
	i.value_size = map->prog_value_size;
	i.max_entries = map->max_entries;
	/* Less the fd's access flags, as the kernel keeps them
	 * (bpf_map_flags_retain_permanent). */
	i.map_flags = map->map_flags & ~(BPFMAP_F_RDONLY | BPFMAP_F_WRONLY);
	memcpy(i.name, map->name, sizeof(i.name));
	i.map_extra = map->ops->map_extra ? map->ops->map_extra(map) : 0;
	len = *info_len < sizeof(i) ? *info_len : (uint32_t)sizeof(i);
	memcpy(info, &i, len);
	*info_len = len;
	return 0;
}

int bpfmap_get_lock_off(const struct bpfmap *map)
{
	if (!map)
		return map_fail(-EINVAL);
	return map_has_lock(map) ? map->lock_off : map_fail(-ENOENT);
}

size_t bpfmap_mem_usage(const struct bpfmap *map)
{
	return map ? map->ops->mem_usage(map) : 0;
}

/* Batch options: elem_flags within @allowed (F_LOCK with a lock; F_CPU and
 * F_ALL_CPUS where the operation takes them, on per-CPU maps); flags 0
 * where the kernel checks it (the lookup batches: htab's own batch code),
 * ignored where it does not (update and delete batches:
 * generic_map_*_batch). */
static int check_batch_opts(const struct bpfmap *map, const struct bpfmap_batch_opts *opts,
			    bool check_flags, uint64_t allowed, uint64_t *elem_flags)
{
	int err = opts_check(opts, sizeof(*opts));

	if (err)
		return err;
	*elem_flags = OPTS_GET(opts, elem_flags, 0);
	err = percpu_check_flags(map, *elem_flags, allowed);
	if (err)
		return err;
	if (check_flags && OPTS_GET(opts, flags, 0))
		return -EINVAL;
	return 0;
}

/* The checks every batch operation starts with, in the kernel's order:
 * arguments, access rights, options; then 0 when *count is 0 (nothing to do,
 * nothing touched) and 1 when there is work. */
static int batch_prologue(struct bpfmap *map, const uint32_t *count,
			  const struct bpfmap_batch_opts *opts, bool reads, bool writes,
			  uint64_t allowed, uint64_t *elem_flags)
{
	int err;

	if (!map || !count)
		return -EINVAL;
	if ((reads && !can_read(map)) || (writes && !can_write(map)))
		return -EPERM;
	err = check_batch_opts(map, opts, reads, allowed, elem_flags);
	if (err)
		return err;
	return *count ? 1 : 0;
}

static int do_lookup_batch(struct bpfmap *map, void *in_batch, void *out_batch, void *keys,
			   void *values, uint32_t *count,
			   const struct bpfmap_batch_opts *opts, bool do_delete)
{
	uint64_t elem_flags = 0;
	int err;

	err = batch_prologue(map, count, opts, true, do_delete,
			     do_delete ? BPFMAP_F_LOCK : BPFMAP_F_LOCK | BPFMAP_F_CPU, &elem_flags);
	if (err <= 0)
		return map_result(err);
	/* After the kernel's checks (access, flags, a zero count), as its
	 * -EFAULT comes after them, with nothing copied. */
	if (!out_batch || !keys || !values) {
		*count = 0;
		return map_fail(-EINVAL);
	}
	if (elem_flags & BPFMAP_F_CPU)
		return map_answer(REENTRY_GUARDED(percpu_lookup_batch_cpu(
			map, in_batch, out_batch, keys, values, count, percpu_flags_cpu(elem_flags))));
	return map_answer(REENTRY_GUARDED(map->ops->lookup_batch(map, in_batch, out_batch, keys, values,
						     count, elem_flags, do_delete)));
}

int bpfmap_lookup_batch(struct bpfmap *map, void *in_batch, void *out_batch, void *keys,
			void *values, uint32_t *count, const struct bpfmap_batch_opts *opts)
{
	return do_lookup_batch(map, in_batch, out_batch, keys, values, count, opts, false);
}

int bpfmap_lookup_and_delete_batch(struct bpfmap *map, void *in_batch, void *out_batch,
				   void *keys, void *values, uint32_t *count,
				   const struct bpfmap_batch_opts *opts)
{
	return do_lookup_batch(map, in_batch, out_batch, keys, values, count, opts, true);
}

/* The generic update (@update) or delete batch (the kernel's
 * generic_map_*_batch): apply one operation per element in order, stop at
 * the first error, report in *count how many succeeded.  *count == 0
 * touches nothing and returns 0 (NULL buffers included), as the lookup
 * batches and the kernel do. */
static int batch_write(struct bpfmap *map, const void *keys, const void *values, bool update,
		       uint32_t *count, const struct bpfmap_batch_opts *opts)
{
	uint64_t elem_flags = 0;
	uint32_t n, done, stride;
	int err;

	/* EXIST as bpf-next's BPF_F_CPU series allows it (Linux 6.18: EINVAL). */
	err = batch_prologue(map, count, opts, false, true,
			     update ? BPFMAP_EXIST | BPFMAP_F_LOCK | PERCPU_FLAGS : BPFMAP_F_LOCK,
			     &elem_flags);
	if (err <= 0)
		return map_result(err);
	if (!keys || (update && !values))
		return map_fail(-EINVAL);
	n = *count;
	stride = percpu_buffer_size(map, elem_flags);
	/* Updates mark themselves (the tables); deletes are marked here. */
	if (!update && !reentry_begin()) {
		*count = 0;
		return map_fail(-EBUSY);
	}
	for (done = 0; done < n; done++) {
		const char *k = (const char *)keys + (size_t)done * map->key_size;

		if (update)
			err = percpu_update(map, k, (const char *)values + (size_t)done * stride,
					    elem_flags);
		else
			err = map->ops->delete_elem(map, k);
		if (err)
			break;
	}
	if (!update)
		reentry_end();
	*count = done;
	return map_result(err);
}

int bpfmap_update_batch(struct bpfmap *map, const void *keys, const void *values,
			uint32_t *count, const struct bpfmap_batch_opts *opts)
{
	return batch_write(map, keys, values, true, count, opts);
}

int bpfmap_delete_batch(struct bpfmap *map, const void *keys, uint32_t *count,
			const struct bpfmap_batch_opts *opts)
{
	return batch_write(map, keys, NULL, false, count, opts);
}
