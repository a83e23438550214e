/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPFMAP_TYPE_RHASH: the resizable hash map of bpf-next, on the resizable
 * table (tables/rtab.h).  Its creation checks are the merged kernel's, in
 * its order; max_entries caps the elements and is no bucket count, so the
 * HASH ceiling of 2^27 does not apply, only the maps' 2^31.
 */
#include <errno.h>

#include "maps/hash_family.h"
#include "tables/rtab.h"

#define RHASH_MAX_KEY_SIZE 65535u
#define RHASH_MAX_HINT 65535u
#define RHASH_MAX_ENTRIES (1u << 31)

static int rhash_alloc_check(const struct map_params *p)
{
	int err;

	if (!(p->map_flags & BPFMAP_F_NO_PREALLOC))
		return -EINVAL;
	if (p->map_flags & BPFMAP_F_ZERO_SEED)
		return -EINVAL;
	if (p->key_size > RHASH_MAX_KEY_SIZE)
		return -E2BIG;
	if (p->map_extra >> 32)
		return -EINVAL;
	if (p->map_extra > RHASH_MAX_HINT)
		return -E2BIG;
	if (p->map_extra > p->max_entries)
		return -EINVAL;
	err = hash_family_check_common(p, false, false);
	if (!err && p->max_entries > RHASH_MAX_ENTRIES)
		err = -E2BIG;
	return err;
}

const struct map_type rhash_map_type = {
	.alloc_check = rhash_alloc_check,
	.alloc = rtab_create,
	.spin_lock = true,
};
