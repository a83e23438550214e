/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel-differential test of what map creation answers when a value holds
 * a spin lock, which the kernel learns from the value's BTF: bpfmap's
 * lock_off against a BTF struct with a struct bpf_spin_lock at that offset,
 * over the four hash types, the access flags, names, the token flag and
 * max_entries, so that the order of the checks is compared too (the
 * kernel looks at the lock last, in map_check_btf, after it allocated and
 * named the map).  Also what bpfmap_get_info() and the kernel's map info
 * say of the creation flags.  Skips (exit 77, with the reason) where BPF
 * maps or BTF cannot be created.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <bpfmap.h>

#include "kernel_btf.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static unsigned long g_mismatches, g_checks;

/* BTF for a @ks-byte key and a @vs-byte value with a struct bpf_spin_lock
 * at @lock_off (none if negative); its fd, or -errno. */
static int make_btf(uint32_t ks, uint32_t vs, int lock_off, uint32_t *kid, uint32_t *vid)
{
	struct btf *b = btf__new_empty();
	int i_int, i_char, i_lock, i_val;
	int post = lock_off >= 0 ? (int)vs - lock_off - 4 : (int)vs;

	if (!b)
		return -errno;
	i_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	i_char = btf__add_int(b, "char", 1, BTF_INT_CHAR);
	i_lock = btf__add_struct(b, "bpf_spin_lock", 4);
	btf__add_field(b, "val", i_int, 0, 0);
	*kid = (uint32_t)btf__add_array(b, i_int, i_char, ks);
	int i_pre = lock_off > 0 ? btf__add_array(b, i_int, i_char, (uint32_t)lock_off) : -1;
	int i_post = post > 0 ? btf__add_array(b, i_int, i_char, (uint32_t)post) : -1;

	i_val = btf__add_struct(b, "val", vs);
	if (lock_off > 0)
		btf__add_field(b, "pre", i_pre, 0, 0);
	if (lock_off >= 0)
		btf__add_field(b, "lock", i_lock, (uint32_t)lock_off * 8, 0);
	if (post > 0)
		btf__add_field(b, "post", i_post, (uint32_t)(lock_off >= 0 ? lock_off + 4 : 0) * 8,
			       0);
	*vid = (uint32_t)i_val;
	return kernel_btf_load(b);
}

struct ccase {
	int type;
	uint32_t ks, vs, me, flags;
	int lock_off;
	const char *name;
};

static int kernel_create(const struct ccase *c)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = c->flags);
	uint32_t kid, vid;
	int btf = make_btf(c->ks, c->vs, c->lock_off, &kid, &vid), fd, e;

	if (btf < 0)
		return btf;
	o.btf_fd = (uint32_t)btf;
	o.btf_key_type_id = kid;
	o.btf_value_type_id = vid;
	fd = bpf_map_create(c->type, c->name, c->ks, c->vs, c->me, &o);
	e = errno;
	close(btf);
	if (fd < 0)
		return -e;
	close(fd);
	return 0;
}

static int ours_create(const struct ccase *c)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = c->flags, .lock_off = c->lock_off);
	struct bpfmap *m = bpfmap_create((enum bpfmap_type)c->type, c->name, c->ks, c->vs, c->me,
					 &o);

	if (!m)
		return -errno;
	bpfmap_free(m);
	return 0;
}

static void compare(const struct ccase *c)
{
	int rk = kernel_create(c), rb = ours_create(c);

	g_checks++;
	if (rk == rb || rk == -ENOMEM || rb == -ENOMEM)
		return;
	if (g_mismatches++ < 30)
		fprintf(stderr, "MISMATCH create type %d ks=%u vs=%u me=%u flags=%#x lock_off=%d "
			"name=%s: kernel %d, bpfmap %d\n", c->type, c->ks, c->vs, c->me, c->flags,
			c->lock_off, c->name ? c->name : "(none)", rk, rb);
}

#define TOKEN_FD (1U << 16)

static void run_lock_create(void)
{
	static const int types[] = { BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_PERCPU_HASH,
				     BPF_MAP_TYPE_LRU_HASH, BPF_MAP_TYPE_LRU_PERCPU_HASH };
	static const uint32_t flags[] = {
		0, BPF_F_NO_PREALLOC, BPF_F_RDONLY, BPF_F_WRONLY, BPF_F_RDONLY_PROG,
		BPF_F_WRONLY_PROG, BPF_F_RDONLY_PROG | BPF_F_NO_PREALLOC, TOKEN_FD,
		BPF_F_RDONLY_PROG | TOKEN_FD, BPF_F_ZERO_SEED | BPF_F_WRONLY_PROG,
	};
	static const uint32_t max_entries[] = { 16, (1U << 27) + 1 };
	static const char *const names[] = { NULL, "ok_name", "bad-name" };
	static const int lock_offs[] = { -1, 0, 4, 8 };

	for (size_t t = 0; t < ARRAY_LEN(types); t++)
		for (size_t f = 0; f < ARRAY_LEN(flags); f++)
			for (size_t e = 0; e < ARRAY_LEN(max_entries); e++)
				for (size_t n = 0; n < ARRAY_LEN(names); n++)
					for (size_t l = 0; l < ARRAY_LEN(lock_offs); l++) {
						struct ccase c = { types[t], 4, 16, max_entries[e],
								   flags[f], lock_offs[l],
								   names[n] };

						compare(&c);
					}
}

/* The flags each side reports for a map created with @flags. */
static void run_info_flags(void)
{
	static const uint32_t flags[] = {
		0, BPF_F_RDONLY, BPF_F_WRONLY, BPF_F_RDONLY_PROG, BPF_F_RDONLY | BPF_F_RDONLY_PROG,
		BPF_F_WRONLY | BPF_F_WRONLY_PROG, BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED,
	};

	for (size_t f = 0; f < ARRAY_LEN(flags); f++) {
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags[f]);
		BPFMAP_CREATE_OPTS(bo, .map_flags = flags[f]);
		struct bpf_map_info ki = { 0 };
		struct bpfmap_info bi;
		uint32_t len = sizeof(ki);
		int fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 8, 16, &o);
		struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, NULL, 4, 8, 16, &bo);

		g_checks++;
		if (fd < 0 || !m || bpf_obj_get_info_by_fd(fd, &ki, &len) ||
		    bpfmap_get_info(m, &bi, &(uint32_t){ sizeof(bi) }) || ki.map_flags != bi.map_flags) {
			if (g_mismatches++ < 30)
				fprintf(stderr, "MISMATCH info flags of a map created with %#x: kernel "
					"%#x, bpfmap %#x\n", flags[f], fd < 0 ? 0 : ki.map_flags,
					m ? bi.map_flags : 0);
		}
		if (fd >= 0)
			close(fd);
		bpfmap_free(m);
	}
}

int main(void)
{
	uint32_t kid, vid;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 4, 4, NULL), btf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fd < 0) {
		printf("SKIP: BPF maps cannot be created here: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	btf = make_btf(4, 16, 0, &kid, &vid);
	if (btf < 0) {
		printf("SKIP: BTF cannot be loaded here: %s\n", strerror(-btf));
		return 77;
	}
	close(btf);
	run_lock_create();
	run_info_flags();
	printf("summary: %lu checks, %lu mismatches\n", g_checks, g_mismatches);
	printf("%s\n", g_mismatches ? "FAIL" : "PASS");
	return g_mismatches ? 1 : 0;
}
