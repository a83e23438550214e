/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every table calls when it builds a map: the generic fields, and the
 * miss and refusal paths of the program-view lookup.  Apart from core/map.c
 * so that the tables depend on core without core/map.c depending on them
 * in a circle (core/map.c -> maps/ -> tables/ -> here).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "util/compiler.h"

void *map_lookup_miss(void)
{
	errno = ENOENT;
	return NULL;
}

void *map_lookup_busy(void)
{
	errno = EBUSY;
	return NULL;
}

/* The program-view lookup of a BPFMAP_F_WRONLY_PROG map. */
static void *map_lookup_refused(struct bpfmap *map, const void *key)
{
	(void)map;
	(void)key;
	errno = EPERM;
	return NULL;
}

/* The copy-out of a map whose table specialised none: the tables' general
 * copy-outs may retry with the key after writing the value. */
static int map_copy_generic(struct bpfmap *map, const void *key, void *value)
{
	if (unlikely(map_value_overlaps_key(map, key, value)))
		return map_copy_key_apart(map, key, value);
	return map_result(map->ops->lookup_elem(map, key, value, 0));
}

/* Keys up to this size are copied on the stack (map_call_key_apart). */
#define KEY_APART_STACK 512

int map_call_key_apart(map_keyed_fn call, struct bpfmap *map, const void *key, void *value,
		       uint64_t flags)
{
	unsigned char stack[KEY_APART_STACK];
	void *copy = map->key_size <= sizeof(stack) ? stack : malloc(map->key_size);
	int ret, saved;

	if (!copy)
		return map_fail(-ENOMEM);
	memcpy(copy, key, map->key_size);
	ret = call(map, copy, value, flags);
	if (copy != stack) {
		saved = errno;
		free(copy);
		errno = saved;
	}
	return ret;
}

static int map_copy_call(struct bpfmap *map, const void *key, void *value, uint64_t flags)
{
	(void)flags;
	return map->copy(map, key, value);
}

int map_copy_key_apart(struct bpfmap *map, const void *key, void *value)
{
	return map_call_key_apart(map_copy_call, map, key, value, 0);
}

/* The copy-out of a BPFMAP_F_WRONLY map. */
static int map_copy_refused(struct bpfmap *map, const void *key, void *value)
{
	(void)map;
	(void)key;
	(void)value;
	return map_fail(-EPERM);
}

void map_set_copy(struct bpfmap *map, map_copy_fn copy)
{
	map->copy = map->map_flags & BPFMAP_F_WRONLY ? map_copy_refused : copy;
}

int map_fail(int err)
{
	errno = -err;
	return err;
}

void map_init_common(struct bpfmap *map, const struct map_params *p,
		     const struct map_ops *ops, map_lookup_fn lookup)
{
	map->lookup = p->map_flags & BPFMAP_F_WRONLY_PROG ? map_lookup_refused : lookup;
	map->ops = ops;
	map->key_size = p->key_size;
	map->value_size = map_params_value_bytes(p);
	map->prog_value_size = p->value_size;
	map->cpus = (uint16_t)p->cpus;
	map->cpu_stride = (uint16_t)(p->cpus ? ROUND_UP(p->value_size, 8) : 0);
	memcpy(map->name, p->name, sizeof(map->name));
	map->max_entries = p->max_entries;
	map->map_flags = p->map_flags;
	map->lock_off = p->lock_off;
	map->type = p->type;
	map_set_copy(map, map_copy_generic);
}

__attribute__((noinline)) char *map_pcpu_here_slow(const struct bpfmap *map, char *slot0,
						   size_t region)
{
	return slot0 + map_cpu_current(map) * region;
}

int map_value_word_out_short(const struct bpfmap *map, void *dst, uint64_t w)
{
	memcpy(dst, &w, map->value_size);
	return 0;
}
