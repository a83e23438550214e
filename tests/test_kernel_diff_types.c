/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel-differential test of PERCPU_HASH, LRU_HASH and LRU_PERCPU_HASH:
 * creation checks case by case against the running kernel, random syscall
 * operations on PERCPU_HASH compared return code by return code and byte by
 * byte (the per-CPU layout included), and the LRU maps compared in
 * aggregate, since their victims differ by design: neither answers -E2BIG,
 * bpfmap's count stays exactly at capacity where the kernel's may fall
 * below it, the most recently inserted keys survive in both, and every key
 * present in either holds the value last written.  BPFMAP_F_CPU and
 * BPFMAP_F_ALL_CPUS are left out: Linux 6.18 lacks them.  Skips (exit 77,
 * with the reason) where BPF maps cannot be created.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <bpfmap.h>

static unsigned long g_mismatches, g_checks;
static uint64_t g_rng = 0x9e3779b97f4a7c15ULL;
static uint32_t g_cpus;

static uint64_t rnd64(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static uint32_t rn(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

#define CHECK(cond, ...)                                         \
	do {                                                     \
		g_checks++;                                      \
		if (!(cond)) {                                   \
			g_mismatches++;                          \
			if (g_mismatches < 30) {                 \
				fprintf(stderr, "MISMATCH: ");  \
				fprintf(stderr, __VA_ARGS__);    \
				fprintf(stderr, "\n");           \
			}                                        \
		}                                                \
	} while (0)

static int kernel_create(int type, uint32_t ks, uint32_t vs, uint32_t me, uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd = bpf_map_create(type, NULL, ks, vs, me, &o);

	return fd < 0 ? -errno : fd;
}

static struct bpfmap *ours_create(int type, uint32_t ks, uint32_t vs, uint32_t me,
				  uint32_t flags, int *err)
{
	BPFMAP_CREATE_OPTS(o, .map_flags = flags);
	struct bpfmap *m = bpfmap_create(type, NULL, ks, vs, me, &o);

	*err = m ? 0 : -errno;
	return m;
}

static const int types[] = { BPF_MAP_TYPE_PERCPU_HASH, BPF_MAP_TYPE_LRU_HASH,
			     BPF_MAP_TYPE_LRU_PERCPU_HASH };

/* HASH too: the flag, access, walk and size comparisons take all four. */
static const int hash_types[] = { BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_PERCPU_HASH,
				  BPF_MAP_TYPE_LRU_HASH, BPF_MAP_TYPE_LRU_PERCPU_HASH };

/* One creation on both sides: the same answer, or -ENOMEM on either. */
static void compare_create(int type, uint32_t ks, uint32_t vs, uint32_t me, uint32_t flags)
{
	int rk = kernel_create(type, ks, vs, me, flags), rb;
	struct bpfmap *m = ours_create(type, ks, vs, me, flags, &rb);

	if (rk >= 0) {
		close(rk);
		rk = 0;
	}
	bpfmap_free(m);
	CHECK(rk == rb || rk == -ENOMEM || rb == -ENOMEM,
	      "create type %d ks=%u vs=%u me=%u flags=%#x: kernel %d, bpfmap %d", type, ks, vs,
	      me, flags, rk, rb);
}

/*
 * A kernel map and a bpfmap map of one shape, and three buffers of @bytes
 * (a value, and the two sides' outputs) for the comparisons below.
 */
struct pair {
	int fd;
	struct bpfmap *m;
	uint8_t *v, *out_k, *out_b;
};

static bool pair_open(struct pair *p, int type, uint32_t me, uint32_t flags, size_t bytes)
{
	int err;

	p->fd = kernel_create(type, 4, 8, me, flags);
	p->m = ours_create(type, 4, 8, me, flags, &err);
	p->v = calloc(1, bytes);
	p->out_k = calloc(1, bytes);
	p->out_b = calloc(1, bytes);
	if (p->fd >= 0 && p->m && p->v && p->out_k && p->out_b)
		return true;
	CHECK(0, "type %d flags %#x max_entries %u: kernel %d, bpfmap %d", type, flags, me,
	      p->fd, err);
	return false;
}

static void pair_close(struct pair *p)
{
	if (p->fd >= 0)
		close(p->fd);
	bpfmap_free(p->m);
	free(p->v);
	free(p->out_k);
	free(p->out_b);
}

static void run_create(void)
{
	static const struct {
		uint32_t ks, vs, me, flags;
	} cases[] = {
		{ 4, 8, 16, 0 },
		{ 4, 8, 16, BPF_F_NO_PREALLOC },
		{ 4, 8, 16, BPF_F_NO_COMMON_LRU },
		{ 4, 8, 16, BPF_F_NO_COMMON_LRU | BPF_F_NO_PREALLOC },
		{ 4, 8, 7, BPF_F_NO_COMMON_LRU },
		{ 4, 8, 16, BPF_F_ZERO_SEED },
		{ 4, 8, 16, BPF_F_NUMA_NODE },
		{ 4, 8, 16, BPF_F_NUMA_NODE | BPF_F_NO_COMMON_LRU },
		{ 4, 8, 16, BPF_F_RDONLY | BPF_F_WRONLY },
		{ 4, 8, 16, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG },
		{ 4, 8, 16, 1U << 5 },
		{ 4, 8, 16, 1U << 12 },
		{ 0, 8, 16, 0 },
		{ 4, 0, 16, 0 },
		{ 4, 8, 0, 0 },
		{ 4, 32768, 4, 0 },
		{ 4, 32769, 4, 0 },
		{ 4, 40000, 4, BPF_F_NO_PREALLOC },
		{ 64, 1, 4, 0 },
		{ 1000, 8, 4, BPF_F_NO_PREALLOC },
	};

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			compare_create(types[t], cases[i].ks, cases[i].vs, cases[i].me,
				       cases[i].flags);
}

/*
 * Every flag bit of every call that takes flags, on HASH and these three
 * types, answer by answer against the kernel: map_flags at creation (each of
 * bits 0-31, alone and with NO_PREALLOC), and bits 0-63 of update_elem's and
 * lookup_elem_flags' and lookup_and_delete_elem_flags' flags and of each
 * batch call's elem_flags and flags,
 * and every mix of bits 0-2 there (reported as bits 64-71: the mix b - 64).
 * Bits 3 and 4 (BPFMAP_F_CPU, BPFMAP_F_ALL_CPUS) are left out: Linux 6.18
 * lacks them.  A call that changes the maps changes both the same way, and
 * key 1 is put back where a call took it, so that every call finds the
 * same map on both sides.
 */
#define FB_MAX 16

static void fb_put_back(int fd, struct bpfmap *m, const uint32_t *k, const void *v)
{
	bpf_map_update_elem(fd, k, v, BPF_ANY);
	bpfmap_update_elem(m, k, v, BPFMAP_ANY);
}

static void run_flag_bits_ops(int type)
{
	bool percpu = type != BPF_MAP_TYPE_HASH && type != BPF_MAP_TYPE_LRU_HASH;
	struct pair p;
	uint32_t one = 1, two = 2, three = 3, keys_k[FB_MAX], keys_b[FB_MAX];

	if (!pair_open(&p, type, FB_MAX, 0, FB_MAX * 8 * (percpu ? g_cpus : 1)))
		goto out;
	fb_put_back(p.fd, p.m, &one, p.v);
	/* Each bit alone (b < 64), then every mix of bits 0-2 (b - 64). */
	for (int b = 0; b < 64 + 8; b++) {
		uint64_t f = b < 64 ? 1ULL << b : (uint64_t)(b - 64);
		uint32_t ck, cb, bk, bb;
		int rk, rb;

		if (b == 3 || b == 4)
			continue;
#define FB_CHECK(what)                                                                     \
	CHECK(rk == rb, "type %d, %s, bit %d: kernel %d, bpfmap %d", type, what, b, rk, rb)
		rk = bpf_map_update_elem(p.fd, &one, p.v, f) ? -errno : 0;
		rb = bpfmap_update_elem(p.m, &one, p.v, f);
		FB_CHECK("update of a present key");
		rk = bpf_map_update_elem(p.fd, &two, p.v, f) ? -errno : 0;
		rb = bpfmap_update_elem(p.m, &two, p.v, f);
		FB_CHECK("update of an absent key");
		bpf_map_delete_elem(p.fd, &two);
		bpfmap_delete_elem(p.m, &two);
		rk = bpf_map_lookup_elem_flags(p.fd, &one, p.out_k, f) ? -errno : 0;
		rb = bpfmap_lookup_elem_flags(p.m, &one, p.out_b, f);
		FB_CHECK("lookup_elem_flags");
		rk = bpf_map_lookup_and_delete_elem_flags(p.fd, &one, p.out_k, f) ? -errno : 0;
		rb = bpfmap_lookup_and_delete_elem_flags(p.m, &one, p.out_b, f);
		FB_CHECK("lookup_and_delete_elem_flags");
		fb_put_back(p.fd, p.m, &one, p.v);
		for (int which = 0; which < 2; which++) {
			LIBBPF_OPTS(bpf_map_batch_opts, ko, .elem_flags = which ? 0 : f,
				    .flags = which ? f : 0);
			BPFMAP_BATCH_OPTS(bo, .elem_flags = which ? 0 : f, .flags = which ? f : 0);
			const char *field = which ? "flags" : "elem_flags";
			char what[64];

			ck = cb = FB_MAX;
			rk = bpf_map_lookup_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko) ? -errno : 0;
			rb = bpfmap_lookup_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
			snprintf(what, sizeof(what), "lookup_batch %s", field);
			FB_CHECK(what);
			ck = cb = 1;
			/* EXIST alone: 6.18 refuses what bpf-next takes. */
			if (which || f != BPF_EXIST) {
				rk = bpf_map_update_batch(p.fd, &one, p.v, &ck, &ko) ? -errno : 0;
				rb = bpfmap_update_batch(p.m, &one, p.v, &cb, &bo);
				snprintf(what, sizeof(what), "update_batch %s", field);
				FB_CHECK(what);
			}
			ck = cb = 1;
			rk = bpf_map_delete_batch(p.fd, &three, &ck, &ko) ? -errno : 0;
			rb = bpfmap_delete_batch(p.m, &three, &cb, &bo);
			snprintf(what, sizeof(what), "delete_batch (absent key) %s", field);
			FB_CHECK(what);
			ck = cb = FB_MAX;
			rk = bpf_map_lookup_and_delete_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko)
				     ? -errno
				     : 0;
			rb = bpfmap_lookup_and_delete_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
			snprintf(what, sizeof(what), "lookup_and_delete_batch %s", field);
			FB_CHECK(what);
			fb_put_back(p.fd, p.m, &one, p.v);
		}
#undef FB_CHECK
	}
out:
	pair_close(&p);
}

static void run_flag_bits(void)
{
	unsigned long before = g_checks;

	for (size_t t = 0; t < sizeof(hash_types) / sizeof(hash_types[0]); t++) {
		for (int b = 0; b < 32; b++) {
			compare_create(hash_types[t], 4, 8, 16, 1U << b);
			compare_create(hash_types[t], 4, 8, 16, 1U << b | BPF_F_NO_PREALLOC);
		}
		run_flag_bits_ops(hash_types[t]);
	}
	printf("flag bits: %lu answers compared\n", g_checks - before);
}

/*
 * Access flags on each type: every syscall-view call on a RDONLY, WRONLY,
 * RDONLY_PROG and WRONLY_PROG map (each also with a key present, put in
 * before the flag could refuse it: a map made without the flag is not the
 * same map, so the present key comes from an update the flag allows, or
 * the case runs empty).
 */
static void run_access_types(void)
{
	static const uint32_t access[] = { BPF_F_RDONLY, BPF_F_WRONLY, BPF_F_RDONLY_PROG,
					   BPF_F_WRONLY_PROG };
	unsigned long before = g_checks;

	for (size_t t = 0; t < sizeof(hash_types) / sizeof(hash_types[0]); t++)
		for (size_t a = 0; a < sizeof(access) / sizeof(access[0]); a++) {
			const int type = hash_types[t];
			struct pair p;
			uint32_t one = 1, two = 2, keys_k[4], keys_b[4], nk, nb, bk, bb, ck, cb;
			int rk, rb;

			if (!pair_open(&p, type, 4, access[a], 8 * g_cpus * 4))
				goto next;
#define AC_CHECK(what)                                                                     \
	CHECK(rk == rb, "type %d, access %#x, %s: kernel %d, bpfmap %d", type, access[a], what,   \
	      rk, rb)
			rk = bpf_map_update_elem(p.fd, &one, p.v, BPF_ANY) ? -errno : 0;
			rb = bpfmap_update_elem(p.m, &one, p.v, BPFMAP_ANY);
			AC_CHECK("update");
			rk = bpf_map_lookup_elem(p.fd, &one, p.out_k) ? -errno : 0;
			rb = bpfmap_lookup_elem(p.m, &one, p.out_b);
			AC_CHECK("lookup");
			rk = bpf_map_get_next_key(p.fd, NULL, &nk) ? -errno : 0;
			rb = bpfmap_get_next_key(p.m, NULL, &nb);
			AC_CHECK("get_next_key");
			{
				LIBBPF_OPTS(bpf_map_batch_opts, ko);
				BPFMAP_BATCH_OPTS(bo);

				ck = cb = 4;
				rk = bpf_map_lookup_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko)
					     ? -errno
					     : 0;
				rb = bpfmap_lookup_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
				AC_CHECK("lookup_batch");
				ck = cb = 1;
				rk = bpf_map_update_batch(p.fd, &two, p.v, &ck, &ko) ? -errno : 0;
				rb = bpfmap_update_batch(p.m, &two, p.v, &cb, &bo);
				AC_CHECK("update_batch");
				ck = cb = 1;
				rk = bpf_map_delete_batch(p.fd, &two, &ck, &ko) ? -errno : 0;
				rb = bpfmap_delete_batch(p.m, &two, &cb, &bo);
				AC_CHECK("delete_batch");
				ck = cb = 4;
				rk = bpf_map_lookup_and_delete_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko)
					     ? -errno
					     : 0;
				rb = bpfmap_lookup_and_delete_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
				AC_CHECK("lookup_and_delete_batch");
			}
			bpf_map_update_elem(p.fd, &one, p.v, BPF_ANY);
			bpfmap_update_elem(p.m, &one, p.v, BPFMAP_ANY);
			rk = bpf_map_lookup_and_delete_elem(p.fd, &one, p.out_k) ? -errno : 0;
			rb = bpfmap_lookup_and_delete_elem(p.m, &one, p.out_b);
			AC_CHECK("lookup_and_delete");
			rk = bpf_map_delete_elem(p.fd, &one) ? -errno : 0;
			rb = bpfmap_delete_elem(p.m, &one);
			AC_CHECK("delete");
#undef AC_CHECK
next:
			pair_close(&p);
		}
	printf("access flags: %lu answers compared\n", g_checks - before);
}

/*
 * Edges of the walks on each type, answer by answer against the kernel: an
 * empty map, one key (get_next_key from NULL, from an absent key, from the
 * last key), batch calls with a count of 0, and a full walk by batches of
 * one element at a time count (the kernel's -ENOSPC where a bucket holds
 * more; bpfmap's buckets differ, so only the answers' kinds are compared).
 */
static void run_walk_edges(void)
{
	unsigned long before = g_checks;

	for (size_t t = 0; t < sizeof(hash_types) / sizeof(hash_types[0]); t++) {
		const int type = hash_types[t];
		struct pair p;
		uint32_t one = 1, absent = 77, nk, nb, bk, bb, ck, cb, keys_k[8], keys_b[8];
		int rk, rb;
		LIBBPF_OPTS(bpf_map_batch_opts, ko);
		BPFMAP_BATCH_OPTS(bo);

		if (!pair_open(&p, type, 8, 0, 8 * g_cpus * 8))
			goto next;
#define WE_CHECK(what)                                                                    \
	CHECK(rk == rb, "type %d, %s: kernel %d, bpfmap %d", type, what, rk, rb)
#define WE_COUNTS(what)                                                                   \
	CHECK(ck == cb, "type %d, %s: count kernel %u, bpfmap %u", type, what, ck, cb)
		for (int round = 0; round < 2; round++) {
			const char *tag = round ? "one key" : "empty";
			char what[80];

			rk = bpf_map_get_next_key(p.fd, NULL, &nk) ? -errno : 0;
			rb = bpfmap_get_next_key(p.m, NULL, &nb);
			snprintf(what, sizeof(what), "%s: get_next_key(NULL)", tag);
			WE_CHECK(what);
			if (!rk && !rb)
				CHECK(nk == nb, "type %d, %s: keys %u and %u", type, what, nk, nb);
			rk = bpf_map_get_next_key(p.fd, &absent, &nk) ? -errno : 0;
			rb = bpfmap_get_next_key(p.m, &absent, &nb);
			snprintf(what, sizeof(what), "%s: get_next_key(absent)", tag);
			WE_CHECK(what);
			rk = bpf_map_get_next_key(p.fd, &one, &nk) ? -errno : 0;
			rb = bpfmap_get_next_key(p.m, &one, &nb);
			snprintf(what, sizeof(what), "%s: get_next_key(the only key)", tag);
			WE_CHECK(what);
			for (int del = 0; del < 2; del++) {
				ck = cb = 0;
				rk = (del ? bpf_map_lookup_and_delete_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko)
					  : bpf_map_lookup_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko))
					     ? -errno
					     : 0;
				rb = del ? bpfmap_lookup_and_delete_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo)
					 : bpfmap_lookup_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
				snprintf(what, sizeof(what), "%s: %s, count 0", tag,
					 del ? "lookup_and_delete_batch" : "lookup_batch");
				WE_CHECK(what);
				WE_COUNTS(what);
			}
			ck = cb = 0;
			rk = bpf_map_update_batch(p.fd, &one, p.v, &ck, &ko) ? -errno : 0;
			rb = bpfmap_update_batch(p.m, &one, p.v, &cb, &bo);
			snprintf(what, sizeof(what), "%s: update_batch, count 0", tag);
			WE_CHECK(what);
			ck = cb = 0;
			rk = bpf_map_delete_batch(p.fd, &one, &ck, &ko) ? -errno : 0;
			rb = bpfmap_delete_batch(p.m, &one, &cb, &bo);
			snprintf(what, sizeof(what), "%s: delete_batch, count 0", tag);
			WE_CHECK(what);
			ck = cb = 8;
			rk = bpf_map_lookup_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko) ? -errno : 0;
			rb = bpfmap_lookup_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
			snprintf(what, sizeof(what), "%s: lookup_batch, count 8", tag);
			WE_CHECK(what);
			WE_COUNTS(what);
			bpf_map_update_elem(p.fd, &one, p.v, BPF_ANY);
			bpfmap_update_elem(p.m, &one, p.v, BPFMAP_ANY);
		}
		/* Full: every key once by batches of 8, then lookup_and_delete. */
		for (uint32_t k = 2; k <= 8; k++) {
			bpf_map_update_elem(p.fd, &k, p.v, BPF_ANY);
			bpfmap_update_elem(p.m, &k, p.v, BPFMAP_ANY);
		}
		ck = cb = 8;
		rk = bpf_map_lookup_and_delete_batch(p.fd, NULL, &bk, keys_k, p.out_k, &ck, &ko) ? -errno : 0;
		rb = bpfmap_lookup_and_delete_batch(p.m, NULL, &bb, keys_b, p.out_b, &cb, &bo);
		CHECK((rk == 0 || rk == -ENOENT) && (rb == 0 || rb == -ENOENT),
		      "type %d, full: lookup_and_delete_batch of 8: kernel %d, bpfmap %d", type,
		      rk, rb);
		rk = bpf_map_get_next_key(p.fd, NULL, &nk) ? -errno : 0;
		rb = bpfmap_get_next_key(p.m, NULL, &nb);
		CHECK(rk == rb || (rk == 0 && ck < 8) || (rb == 0 && cb < 8),
		      "type %d, after the batch took %u / %u: get_next_key kernel %d, bpfmap %d",
		      type, ck, cb, rk, rb);
#undef WE_CHECK
#undef WE_COUNTS
next:
		pair_close(&p);
	}
	printf("walk edges: %lu answers compared\n", g_checks - before);
}

/*
 * Key and value sizes at their limits, on each type, preallocated and not:
 * creation answer by answer against the kernel (max_entries 1, so that the
 * kernel's preallocation stays small).
 */
static void run_size_edges(void)
{
	static const uint32_t sizes[] = { 1, 4, 5, 8, 9, 256, 257, 32768, 32769, 65535, 65536,
					  (4u << 20) - 49, (4u << 20) - 48, UINT32_MAX };
	unsigned long before = g_checks;
	size_t n = sizeof(sizes) / sizeof(sizes[0]);

	for (size_t t = 0; t < sizeof(hash_types) / sizeof(hash_types[0]); t++)
		for (int np = 0; np < 2; np++) {
			uint32_t flags = np ? BPF_F_NO_PREALLOC : 0;

			if (np && (hash_types[t] == BPF_MAP_TYPE_LRU_HASH ||
				   hash_types[t] == BPF_MAP_TYPE_LRU_PERCPU_HASH))
				continue; /* ENOTSUPP whatever the sizes (run_create) */
			for (size_t a = 0; a < n; a++)
				for (size_t b = 0; b < n; b++) {
					/* A key and a value both past 32 KiB only
					 * repeat one E2BIG (and cost the kernel
					 * large allocations). */
					if (sizes[a] > 32769 && sizes[b] > 32769)
						continue;
					compare_create(hash_types[t], sizes[a], sizes[b], 1, flags);
				}
		}
	printf("size edges: %lu answers compared\n", g_checks - before);
}

/* PERCPU_HASH: random operations, every answer and byte compared. */
static void run_percpu(uint32_t ks, uint32_t vs, uint32_t me, uint32_t flags, uint32_t ops)
{
	uint32_t stride = (vs + 7) / 8 * 8, bytes = stride * g_cpus, npool = me * 2;
	int fd = kernel_create(BPF_MAP_TYPE_PERCPU_HASH, ks, vs, me, flags), err;
	struct bpfmap *m = ours_create(BPF_MAP_TYPE_PERCPU_HASH, ks, vs, me, flags, &err);
	uint8_t *keys = malloc((size_t)npool * ks), *v = malloc(bytes);
	uint8_t *ok = malloc(bytes), *ob = malloc(bytes), *nk = malloc(ks), *nb = malloc(ks);
	/* A key and a value overlapping it, per side: 2 * bytes + ks. */
	size_t alen = 2 * (size_t)bytes + ks;
	uint8_t *ak = malloc(alen), *ab = malloc(alen);

	if (fd < 0 || !m) {
		CHECK(0, "percpu map ks=%u vs=%u me=%u: kernel %d, bpfmap %d", ks, vs, me, fd, err);
		goto out;
	}
	for (size_t i = 0; i < (size_t)npool * ks; i++)
		keys[i] = (uint8_t)rnd64();
	for (uint32_t op = 0; op < ops; op++) {
		const uint8_t *k = keys + (size_t)rn(npool) * ks;
		int rk, rb;

		switch (rn(5)) {
		case 0:
		case 1: {
			uint64_t f = rn(3); /* ANY, NOEXIST, EXIST */

			for (uint32_t b = 0; b < bytes; b++)
				v[b] = (uint8_t)rnd64();
			rk = bpf_map_update_elem(fd, k, v, f) ? -errno : 0;
			rb = bpfmap_update_elem(m, k, v, f);
			CHECK(rk == rb, "update flags %llu: kernel %d, bpfmap %d",
			      (unsigned long long)f, rk, rb);
			break;
		}
		case 2:
			if (rn(3) == 0) { /* into a buffer that overlaps the key */
				uint32_t d = rn(ks + bytes - 1);

				memset(ak, 0xa5, alen);
				memset(ab, 0xa5, alen);
				memcpy(ak + bytes, k, ks);
				memcpy(ab + bytes, k, ks);
				rk = bpf_map_lookup_elem(fd, ak + bytes, ak + 1 + d) ? -errno : 0;
				rb = bpfmap_lookup_elem(m, ab + bytes, ab + 1 + d);
				CHECK(rk == rb, "lookup into the key: kernel %d, bpfmap %d", rk, rb);
				CHECK(!memcmp(ak, ab, alen), "lookup into the key: buffers differ");
				break;
			}
			memset(ok, 0, bytes);
			memset(ob, 0, bytes);
			rk = bpf_map_lookup_elem(fd, k, ok) ? -errno : 0;
			rb = bpfmap_lookup_elem(m, k, ob);
			CHECK(rk == rb, "lookup: kernel %d, bpfmap %d", rk, rb);
			if (!rk && !rb)
				CHECK(!memcmp(ok, ob, bytes), "lookup: values differ");
			break;
		case 3:
			rk = bpf_map_delete_elem(fd, k) ? -errno : 0;
			rb = bpfmap_delete_elem(m, k);
			CHECK(rk == rb, "delete: kernel %d, bpfmap %d", rk, rb);
			break;
		default:
			memset(ok, 0, bytes);
			memset(ob, 0, bytes);
			rk = bpf_map_lookup_and_delete_elem(fd, k, ok) ? -errno : 0;
			rb = bpfmap_lookup_and_delete_elem(m, k, ob);
			CHECK(rk == rb, "lookup_and_delete: kernel %d, bpfmap %d", rk, rb);
			if (!rk && !rb)
				CHECK(!memcmp(ok, ob, bytes), "lookup_and_delete: values differ");
			break;
		}
		/* A lock flag is EINVAL on both (no spin lock in per-CPU values). */
		if (op % 97 == 0) {
			rk = bpf_map_update_elem(fd, k, v, BPF_F_LOCK) ? -errno : 0;
			rb = bpfmap_update_elem(m, k, v, BPFMAP_F_LOCK);
			CHECK(rk == rb, "update F_LOCK: kernel %d, bpfmap %d", rk, rb);
			rk = bpf_map_lookup_elem_flags(fd, k, ok, BPF_F_LOCK) ? -errno : 0;
			rb = bpfmap_lookup_elem_flags(m, k, ob, BPFMAP_F_LOCK);
			CHECK(rk == rb, "lookup F_LOCK: kernel %d, bpfmap %d", rk, rb);
		}
	}
	/* Both hold the same keys: every key bpfmap walks, the kernel has. */
	{
		uint32_t nk_count = 0, nb_count = 0;
		const void *prev = NULL;

		while (!bpf_map_get_next_key(fd, prev, nk)) {
			nk_count++;
			memcpy(nb, nk, ks);
			prev = nb;
		}
		prev = NULL;
		while (!bpfmap_get_next_key(m, prev, nk)) {
			nb_count++;
			CHECK(!bpf_map_lookup_elem(fd, nk, ok), "walked key absent in the kernel");
			memcpy(nb, nk, ks);
			prev = nb;
		}
		CHECK(nk_count == nb_count, "walks: kernel %u keys, bpfmap %u", nk_count, nb_count);
	}
out:
	if (fd >= 0)
		close(fd);
	bpfmap_free(m);
	free(keys);
	free(v);
	free(ok);
	free(ob);
	free(nk);
	free(nb);
	free(ak);
	free(ab);
}

/* The LRU maps in aggregate: fill to three times the size, then check. */
static void run_lru(int type, uint32_t me, uint32_t flags)
{
	uint32_t bytes = type == BPF_MAP_TYPE_LRU_PERCPU_HASH ? 8 * g_cpus : 8;
	int fd = kernel_create(type, 8, 8, me, flags), err;
	struct bpfmap *m = ours_create(type, 8, 8, me, flags, &err);
	uint64_t *v = calloc(g_cpus, 8), *ok = calloc(g_cpus, 8), *ob = calloc(g_cpus, 8);
	uint64_t n = 3ULL * me, key, cursor;
	uint32_t count_k = 0, count_b = 0;
	/* Per-CPU lists: all inserts come from one CPU, whose list holds
	 * max_entries / CPUs, in both. */
	uint32_t cap = flags & BPF_F_NO_COMMON_LRU ? me / g_cpus : me;
	/* The newest keys survive in both.  In bpfmap those in the probation
	 * queue, a tenth of a list at least: every 7th key's update marks it
	 * used, and used keys go before unused ones older than that
	 * (docs/MAPS.md, "LRU maps"). */
	uint32_t recent = cap / 16;

	if (fd < 0 || !m) {
		CHECK(0, "lru type %d me=%u: kernel %d, bpfmap %d", type, me, fd, err);
		goto out;
	}
	for (key = 1; key <= n; key++) {
		int rk, rb;

		for (uint32_t c = 0; c < bytes / 8; c++)
			v[c] = key * 1000 + c;
		rk = bpf_map_update_elem(fd, &key, v, BPF_NOEXIST) ? -errno : 0;
		rb = bpfmap_update_elem(m, &key, v, BPFMAP_NOEXIST);
		CHECK(rk == 0 && rb == 0, "lru insert %llu: kernel %d, bpfmap %d",
		      (unsigned long long)key, rk, rb);
		/* An update of a present key: both succeed. */
		if (key % 7 == 0) {
			v[0] += 1;
			rk = bpf_map_update_elem(fd, &key, v, BPF_EXIST) ? -errno : 0;
			rb = bpfmap_update_elem(m, &key, v, BPFMAP_EXIST);
			CHECK(rb == 0, "lru overwrite %llu: bpfmap %d (kernel %d)",
			      (unsigned long long)key, rb, rk);
		}
	}
	for (key = 1; key <= n; key++) {
		int rk = bpf_map_lookup_elem(fd, &key, ok) ? -errno : 0;
		int rb = bpfmap_lookup_elem(m, &key, ob);

		count_k += rk == 0;
		count_b += rb == 0;
		for (uint32_t c = 0; c < bytes / 8; c++) {
			uint64_t want = key * 1000 + c + (c == 0 && key % 7 == 0);

			if (!rk)
				CHECK(ok[c] == want, "kernel value of %llu", (unsigned long long)key);
			if (!rb)
				CHECK(ob[c] == want, "bpfmap value of %llu", (unsigned long long)key);
		}
		if (key > n - recent)
			CHECK(rk == 0 && rb == 0, "recent key %llu: kernel %d, bpfmap %d",
			      (unsigned long long)key, rk, rb);
	}
	CHECK(count_b == cap && count_k <= cap, "lru count: kernel %u, bpfmap %u, capacity %u",
	      count_k, count_b, cap);
	/* The same through the batch: bpfmap holds exactly max_entries. */
	{
		uint64_t *keys = calloc(me, 8), *vals = calloc(me, bytes);
		uint32_t cnt = me;
		int ret = bpfmap_lookup_batch(m, NULL, &cursor, keys, vals, &cnt, NULL);

		CHECK((ret == 0 || ret == -ENOENT) && cnt == cap, "lru batch: %d, %u", ret, cnt);
		free(keys);
		free(vals);
	}
out:
	if (fd >= 0)
		close(fd);
	bpfmap_free(m);
	free(v);
	free(ok);
	free(ob);
}

int main(void)
{
	cpu_set_t set;
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, NULL, 4, 4, 4, NULL);
	int n = libbpf_num_possible_cpus();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fd < 0) {
		printf("SKIP: BPF maps cannot be created here: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	if (n <= 0 || n != bpfmap_num_possible_cpus()) {
		printf("possible CPUs: libbpf %d, bpfmap %d\n", n, bpfmap_num_possible_cpus());
		return 1;
	}
	g_cpus = (uint32_t)n;
	/* One CPU: the kernel's per-CPU LRU lists are then those of one CPU. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	g_rng ^= (uint64_t)getpid() << 20;
	printf("seed %#llx, %u possible CPUs\n", (unsigned long long)g_rng, g_cpus);

	run_create();
	run_flag_bits();
	run_access_types();
	run_walk_edges();
	run_size_edges();
	run_percpu(4, 8, 16, 0, 4000);
	run_percpu(8, 4, 64, BPF_F_NO_PREALLOC, 4000);
	run_percpu(13, 12, 32, 0, 4000);
	run_percpu(8, 100, 8, BPF_F_ZERO_SEED, 2000);
	run_lru(BPF_MAP_TYPE_LRU_HASH, 1000, 0);
	run_lru(BPF_MAP_TYPE_LRU_PERCPU_HASH, 1000, 0);
	run_lru(BPF_MAP_TYPE_LRU_HASH, 1024, BPF_F_NO_COMMON_LRU);
	run_lru(BPF_MAP_TYPE_LRU_PERCPU_HASH, 1024, BPF_F_NO_COMMON_LRU);
	printf("summary: %lu checks, %lu mismatches\n", g_checks, g_mismatches);
	printf("%s\n", g_mismatches ? "FAIL" : "PASS");
	return g_mismatches ? 1 : 0;
}
