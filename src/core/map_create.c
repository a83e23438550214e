/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfmap_create() and bpfmap_free(): the generic checks in the kernel's
 * order (map_create()), then the type's own checks and allocation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "core/map.h"
#include "core/opts.h"
#include "sync/rcu.h"
#include "sync/store_window.h"
#include "util/compiler.h"

/* The types of core/types.h by uapi value; NULL where none is built. */
static const struct map_type *const map_types[] = {
#define MAP_TYPE_ENTRY(type, name) [type] = &name,
#include "core/types.h"
#undef MAP_TYPE_ENTRY
};

static const struct map_type *map_type_of(enum bpfmap_type type)
{
	if ((unsigned int)type >= ARRAY_SIZE(map_types))
		return NULL;
	return map_types[type];
}

/* The kernel's name alphabet: ASCII letters and digits, '_', '.', and the
 * Latin-1 letters 0xc0-0xff except 0xd7 and 0xf7 (its ctype is Latin-1). */
static bool name_char_ok(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '_' || c == '.')
		return true;
	return c >= 0xc0 && c != 0xd7 && c != 0xf7;
}

/* Longer names keep their first 15 bytes, as libbpf's bpf_map_create()
 * copies them (libbpf_strlcpy) before the kernel checks what it got; a
 * 15-byte name needs no NUL after it. */
static int check_name(const char *name, char out[BPFMAP_OBJ_NAME_LEN])
{
	memset(out, 0, BPFMAP_OBJ_NAME_LEN);
	if (!name)
		return 0;
	for (size_t i = 0; i < BPFMAP_OBJ_NAME_LEN - 1 && name[i]; i++) {
		char c = name[i];

		if (!name_char_ok((unsigned char)c))
			return -EINVAL;
		out[i] = c;
	}
	return 0;
}

/*
 * The value's spin lock, which the kernel finds in the value's BTF once
 * the map is allocated and named (map_check_btf): a lock that is not a
 * whole aligned field of the value is EINVAL; then EACCES if programs'
 * access is restricted either way, EOPNOTSUPP in a type that allows none.
 */
static int check_lock(const struct map_type *mt, const struct map_params *p)
{
	if (p->lock_off == -1)
		return 0;
	if (p->lock_off < -1 || (p->lock_off & 3) ||
	    (uint64_t)p->lock_off + sizeof(struct bpfmap_spin_lock) > p->value_size)
		return -EINVAL;
	if (p->map_flags & (BPFMAP_F_RDONLY_PROG | BPFMAP_F_WRONLY_PROG))
		return -EACCES;
	return mt->spin_lock ? 0 : -EOPNOTSUPP;
}

/* BPF_F_TOKEN_FD: map_token_fd names a BPF token (map_create()). */
#define MAP_F_TOKEN_FD (1U << 16)

static int check_access_flags(uint32_t flags)
{
	if ((flags & BPFMAP_F_RDONLY) && (flags & BPFMAP_F_WRONLY))
		return -EINVAL;
	if ((flags & BPFMAP_F_RDONLY_PROG) && (flags & BPFMAP_F_WRONLY_PROG))
		return -EINVAL;
	return 0;
}

struct bpfmap *bpfmap_create(enum bpfmap_type type, const char *name, uint32_t key_size,
			     uint32_t value_size, uint32_t max_entries,
			     const struct bpfmap_create_opts *opts)
{
	const struct map_type *mt = map_type_of(type);
	struct map_params p = {
		.type = type,
		.key_size = key_size,
		.value_size = value_size,
		.max_entries = max_entries,
	};
	struct bpfmap *map;
	bool token;
	int err;

	if (!mt) {
		errno = EINVAL;
		return NULL;
	}
	err = opts_check(opts, sizeof(*opts));
	if (err)
		goto out_err;
	p.map_flags = OPTS_GET(opts, map_flags, 0);
	p.lock_off = OPTS_GET(opts, lock_off, -1);
	p.map_extra = OPTS_GET(opts, map_extra, 0);

	/* The kernel's map_create() takes BPF_F_TOKEN_FD out first and looks
	 * at the token only after the type's map_alloc_check(); bpfmap has no
	 * tokens, so it answers what the kernel answers for an fd that is
	 * none.  The access flags come before map_alloc_check() too. */
	token = p.map_flags & MAP_F_TOKEN_FD;
	p.map_flags &= ~MAP_F_TOKEN_FD;
	err = check_access_flags(p.map_flags);
	if (!err)
		err = mt->alloc_check(&p);
	if (!err && token)
		err = -EINVAL;
	if (!err && mt->alloc_limits)
		err = mt->alloc_limits(&p);
	if (!err)
		err = check_name(name, p.name);
	if (!err)
		err = check_lock(mt, &p);
	if (err)
		goto out_err;

	/* What a map's calls may need once, set up where no signal handler
	 * runs (bpfmap.h: handlers may call everything but create and free).
	 * No cancellation in here: reading the CPU list and the seed are
	 * cancellation points, and a thread cancelled there left what it had
	 * allocated behind. */
	int cancel;

	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	store_window_prepare();
	rcu_prepare();
	map = mt->alloc(&p, &err);
	(void)pthread_setcancelstate(cancel, NULL);
	if (!map)
		goto out_err;
	return map;

out_err:
	errno = -err;
	return NULL;
}

void bpfmap_free(struct bpfmap *map)
{
	if (map)
		map->ops->free(map);
}
