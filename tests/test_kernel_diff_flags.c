/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel-differential test of every flag bit: each syscall-view operation
 * (update, lookup, lookup-and-delete and the four batches, their elem_flags
 * and their flags; delete and get_next_key, which take none, once, from a
 * present key, an absent one and NULL) with flags 0, each bit 0..63
 * alone, the pairs of the meaningful bits (NOEXIST, EXIST, K_LOCK, K_CPU,
 * F_ALL_CPUS) and K_CPU with possible and impossible CPU numbers, alone and
 * with the others, on every hash type, on a value with a spin lock and on
 * maps with each access flag; on a present and an absent key of a map with
 * room and of a full one.  Return code, *count, the output and the map
 * afterwards are compared with the running kernel's, so that when several
 * errors apply the same one wins.
 *
 * Linux 6.18 lacks BPF_F_CPU and BPF_F_ALL_CPUS (and update_batch's
 * BPF_EXIST), which bpfmap takes as bpf-next does.  Where a kernel without
 * them would refuse such flags, the expected answer comes from bpf-next's
 * checks (bpf_map_check_op_flags() and its callers, model_check() below),
 * and when those pass, from the running kernel doing the same operation
 * without the flag on whole values (a one-CPU slot read or written in the
 * whole value).  A flag no kernel takes is refused before the access check
 * on lookups, as 6.18 does (measured), and after it elsewhere.
 *
 * LRU victims differ by design (README): on full LRU maps only the probed
 * key is compared afterwards.  Skips (exit 77, with the reason) where BPF
 * maps or BTF cannot be created.  BPFMAP_FLAGS_VERBOSE=1 prints each column.
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
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <bpfmap.h>

#include "kernel_btf.h"

#include "core/map.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define K_NOEXIST 1ULL
#define K_EXIST 2ULL
#define K_LOCK 4ULL
#define K_CPU 8ULL
#define K_ALL 16ULL

#define ME 8           /* max_entries */
#define NU (ME + 1)    /* the key universe: 1..ME and ABSENT */
#define ABSENT 1000u
#define VMAX (8 * 256) /* a whole value: 8 bytes a CPU, at most 256 CPUs */

enum op { OP_UPDATE, OP_LOOKUP, OP_LDEL, OP_DELETE, OP_NEXT, OP_LBATCH, OP_LDBATCH,
	  OP_UBATCH, OP_DBATCH, OP_N };
static const char *const op_names[OP_N] = { "update", "lookup", "lookup_and_delete", "delete",
					    "get_next_key", "lookup_batch", "lookup_and_del_batch",
					    "update_batch", "delete_batch" };
enum role { R_ELEM, R_FLAGS }; /* which batch field carries the flags */

struct col {
	const char *name;
	int type;
	uint32_t flags; /* map flags; RDONLY/WRONLY: the kernel's fd is opened so */
	bool lock;      /* a struct bpf_spin_lock at offset 0 of the value */
};

static const struct col cols[] = {
	{ "HASH", BPF_MAP_TYPE_HASH, 0, false },
	{ "PERCPU_HASH", BPF_MAP_TYPE_PERCPU_HASH, 0, false },
	{ "LRU_HASH", BPF_MAP_TYPE_LRU_HASH, 0, false },
	{ "LRU_PERCPU_HASH", BPF_MAP_TYPE_LRU_PERCPU_HASH, 0, false },
	{ "HASH NO_PREALLOC", BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, false },
	{ "PERCPU_HASH NO_PREALLOC", BPF_MAP_TYPE_PERCPU_HASH, BPF_F_NO_PREALLOC, false },
	{ "HASH+lock", BPF_MAP_TYPE_HASH, 0, true },
	{ "HASH+lock NO_PREALLOC", BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, true },
	{ "HASH RDONLY", BPF_MAP_TYPE_HASH, BPF_F_RDONLY, false },
	{ "HASH WRONLY", BPF_MAP_TYPE_HASH, BPF_F_WRONLY, false },
	{ "HASH RDONLY_PROG", BPF_MAP_TYPE_HASH, BPF_F_RDONLY_PROG, false },
	{ "HASH WRONLY_PROG", BPF_MAP_TYPE_HASH, BPF_F_WRONLY_PROG, false },
	{ "HASH+lock RDONLY", BPF_MAP_TYPE_HASH, BPF_F_RDONLY, true },
	{ "HASH+lock WRONLY", BPF_MAP_TYPE_HASH, BPF_F_WRONLY, true },
	{ "PERCPU_HASH RDONLY", BPF_MAP_TYPE_PERCPU_HASH, BPF_F_RDONLY, false },
	{ "PERCPU_HASH WRONLY", BPF_MAP_TYPE_PERCPU_HASH, BPF_F_WRONLY, false },
	{ "LRU_PERCPU_HASH RDONLY", BPF_MAP_TYPE_LRU_PERCPU_HASH, BPF_F_RDONLY, false },
	{ "LRU_PERCPU_HASH WRONLY", BPF_MAP_TYPE_LRU_PERCPU_HASH, BPF_F_WRONLY, false },
};

/* What one side answered, and its map afterwards. */
struct res {
	int rc;
	uint32_t count;
	uint32_t next;
	uint8_t val[VMAX];
	bool got[NU];
	uint8_t gval[NU][VMAX];
	bool present[NU];
	uint8_t pval[NU][VMAX];
};

struct mismatch {
	uint16_t col, op, role, state;
	uint64_t flags;
	int rk, rb;
	const char *what;
};

static struct mismatch g_mm[4096];
static unsigned long g_nmm, g_checks, g_modelled;
static uint32_t g_cpus;      /* possible CPUs */
static bool g_kernel_cpu;    /* the running kernel takes BPF_F_CPU */
static bool g_plain;         /* lookups: the calls without a flags argument */
static bool g_count0;        /* batches: *count 0, which the flag checks precede */
static struct res g_rk, g_rb;

/* The column being compared. */
static const struct col *c;
static int g_fd, g_rw_fd;
static struct bpfmap *g_m;
static bool g_percpu, g_lru;
static size_t g_vbytes;

static uint32_t key_of(int i)
{
	return i < ME ? (uint32_t)i + 1 : ABSENT;
}

static int idx_of(uint32_t k)
{
	return k >= 1 && k <= ME ? (int)k - 1 : k == ABSENT ? ME : -1;
}

/* Key @k's value as the set-up writes it; @salt changes it for updates. */
static void fill_value(uint8_t *v, uint32_t k, uint32_t salt)
{
	memset(v, 0, VMAX);
	for (uint32_t cpu = 0; cpu < (g_percpu ? g_cpus : 1); cpu++) {
		uint64_t x = ((uint64_t)k << 24) | ((uint64_t)salt << 8) | cpu;

		memcpy(v + 8 * cpu, &x, 8);
		if (c->lock) /* the lock word is neither written nor read */
			memset(v + 8 * cpu, 0, 4);
	}
}

static int make_btf(uint32_t *kid, uint32_t *vid)
{
	struct btf *b = btf__new_empty();
	int i_int, i_lock;

	if (!b)
		return -errno;
	i_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	i_lock = btf__add_struct(b, "bpf_spin_lock", 4);
	btf__add_field(b, "val", i_int, 0, 0);
	*kid = (uint32_t)i_int;
	*vid = (uint32_t)btf__add_struct(b, "val", 8);
	btf__add_field(b, "lock", i_lock, 0, 0);
	btf__add_field(b, "data", i_int, 32, 0);
	return kernel_btf_load(b);
}

/* Both maps of column @col; false (reason printed) if the kernel's cannot be made. */
static bool col_open(const struct col *col)
{
	uint32_t access = col->flags & (BPF_F_RDONLY | BPF_F_WRONLY);
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = col->flags & ~access);
	BPFMAP_CREATE_OPTS(bo, .map_flags = col->flags, .lock_off = col->lock ? 0 : -1);
	int btf = -1;

	c = col;
	g_percpu = col->type == BPF_MAP_TYPE_PERCPU_HASH ||
		   col->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	g_lru = col->type == BPF_MAP_TYPE_LRU_HASH || col->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	g_vbytes = g_percpu ? 8 * g_cpus : 8;
	if (col->lock) {
		btf = make_btf(&o.btf_key_type_id, &o.btf_value_type_id);
		if (btf < 0) {
			printf("NOTE: %s: BTF refused (%s), column skipped\n", col->name,
			       strerror(-btf));
			return false;
		}
		o.btf_fd = (uint32_t)btf;
	}
	g_rw_fd = bpf_map_create(col->type, NULL, 4, 8, ME, &o);
	if (btf >= 0)
		close(btf);
	if (g_rw_fd < 0) {
		printf("NOTE: %s: kernel refuses the map (%s), column skipped\n", col->name,
		       strerror(errno));
		return false;
	}
	g_fd = g_rw_fd;
	if (access) { /* the same map through a read-only or write-only fd */
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info);
		LIBBPF_OPTS(bpf_get_fd_by_id_opts, fo, .open_flags = access);

		if (bpf_obj_get_info_by_fd(g_rw_fd, &info, &len) ||
		    (g_fd = bpf_map_get_fd_by_id_opts(info.id, &fo)) < 0) {
			printf("NOTE: %s: cannot reopen the map (%s), column skipped\n",
			       col->name, strerror(errno));
			close(g_rw_fd);
			return false;
		}
	}
	g_m = bpfmap_create((enum bpfmap_type)col->type, NULL, 4, 8, ME, &bo);
	if (!g_m) {
		fprintf(stderr, "FAIL: %s: bpfmap_create: %s\n", col->name, strerror(errno));
		exit(1);
	}
	return true;
}

static void col_close(void)
{
	if (g_fd != g_rw_fd)
		close(g_fd);
	close(g_rw_fd);
	bpfmap_free(g_m);
}

/* Empty both maps, then insert keys 1..@n.  bpfmap's access flags are lifted
 * meanwhile (the kernel's set-up goes through the read-write fd). */
static void reset(uint32_t n)
{
	uint32_t saved = g_m->map_flags;
	uint8_t v[VMAX];

	g_m->map_flags &= ~(BPFMAP_F_RDONLY | BPFMAP_F_WRONLY);
	for (int i = 0; i < NU; i++) {
		uint32_t k = key_of(i);

		bpf_map_delete_elem(g_rw_fd, &k);
		bpfmap_delete_elem(g_m, &k);
	}
	for (uint32_t k = 1; k <= n; k++) {
		fill_value(v, k, 0);
		if (bpf_map_update_elem(g_rw_fd, &k, v, 0) || bpfmap_update_elem(g_m, &k, v, 0)) {
			fprintf(stderr, "FAIL: %s: set-up insert of key %u failed\n", c->name, k);
			exit(1);
		}
	}
	g_m->map_flags = saved;
}

/* Each side's map after the call, read through the read-write fd and, on
 * bpfmap's side, the program view where the syscall view may not read. */
static void dump(struct res *r, bool kernel)
{
	for (int i = 0; i < NU; i++) {
		uint32_t k = key_of(i);
		uint8_t *v = r->pval[i];

		memset(v, 0, VMAX);
		if (kernel) {
			r->present[i] = !bpf_map_lookup_elem(g_rw_fd, &k, v);
		} else if (!(c->flags & BPF_F_WRONLY)) {
			r->present[i] = !bpfmap_lookup_elem(g_m, &k, v);
		} else {
			bpfmap_read_lock();
			r->present[i] = false;
			for (uint32_t cpu = 0; cpu < (g_percpu ? g_cpus : 1); cpu++) {
				void *p = g_percpu ? bpfmap_lookup_percpu(g_m, &k, cpu)
						   : bpfmap_lookup(g_m, &k);

				if (p) {
					memcpy(v + 8 * cpu, p, 8);
					r->present[i] = true;
				}
			}
			bpfmap_read_unlock();
		}
		if (c->lock) /* the word is also a version on bpfmap's side */
			memset(v, 0, 4);
	}
}

/* A batch's keys and values into r->got/gval, @vb bytes a value. */
static void take_batch(struct res *r, const uint32_t *keys, const uint8_t *vals, uint32_t n,
		       size_t vb)
{
	for (uint32_t i = 0; i < n && i < ME; i++) {
		int x = idx_of(keys[i]);

		if (x < 0 || r->got[x]) { /* a key twice, or one never inserted */
			r->rc = 999;
			return;
		}
		r->got[x] = true;
		memcpy(r->gval[x], vals + i * vb, vb);
		if (c->lock)
			memset(r->gval[x], 0, 4);
	}
}

static uint8_t g_keys[ME * 2 * sizeof(uint32_t)], g_vals[ME * 2 * VMAX], g_cursor[64];

/* One operation on the kernel's map, flags passed as they are. */
static void kernel_op(int op, int role, uint64_t f, uint32_t key, const uint8_t *in,
		      struct res *r)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo, .elem_flags = role == R_ELEM ? f : 0,
		    .flags = role == R_FLAGS ? f : 0);
	int ret = 0;

	r->count = g_count0 ? 0 : op == OP_LBATCH || op == OP_LDBATCH ? ME : 1;
	switch (op) {
	case OP_UPDATE: ret = bpf_map_update_elem(g_fd, &key, in, f); break;
	case OP_LOOKUP: ret = bpf_map_lookup_elem_flags(g_fd, &key, r->val, f); break;
	case OP_LDEL: ret = bpf_map_lookup_and_delete_elem_flags(g_fd, &key, r->val, f); break;
	case OP_DELETE: ret = bpf_map_delete_elem(g_fd, &key); break;
	case OP_NEXT:
		ret = bpf_map_get_next_key(g_fd, key == ABSENT + 1 ? NULL : &key, &r->next);
		break;
	case OP_LBATCH:
	case OP_LDBATCH:
		ret = (op == OP_LBATCH ? bpf_map_lookup_batch : bpf_map_lookup_and_delete_batch)(
			g_fd, NULL, g_cursor, g_keys, g_vals, &r->count, &bo);
		break;
	case OP_UBATCH: ret = bpf_map_update_batch(g_fd, &key, in, &r->count, &bo); break;
	case OP_DBATCH: ret = bpf_map_delete_batch(g_fd, &key, &r->count, &bo); break;
	}
	r->rc = ret < 0 ? -errno : 0;
	if ((op == OP_LBATCH || op == OP_LDBATCH) && (r->rc == 0 || r->rc == -ENOENT))
		take_batch(r, (uint32_t *)g_keys, g_vals, r->count, g_vbytes);
}

static void bpfmap_op(int op, int role, uint64_t f, uint32_t key, const uint8_t *in,
		      struct res *r)
{
	BPFMAP_BATCH_OPTS(bo, .elem_flags = role == R_ELEM ? f : 0,
			  .flags = role == R_FLAGS ? f : 0);
	bool slot = (role == R_ELEM || op < OP_LBATCH) && (f & (K_CPU | K_ALL)) && g_percpu;

	r->count = g_count0 ? 0 : op == OP_LBATCH || op == OP_LDBATCH ? ME : 1;
	switch (op) {
	case OP_UPDATE: r->rc = bpfmap_update_elem(g_m, &key, in, f); break;
	case OP_LOOKUP: /* its own entry point without flags (no flag dispatch) */
		r->rc = g_plain ? bpfmap_lookup_elem(g_m, &key, r->val)
				: bpfmap_lookup_elem_flags(g_m, &key, r->val, f);
		break;
	case OP_LDEL:
		r->rc = g_plain ? bpfmap_lookup_and_delete_elem(g_m, &key, r->val)
				: bpfmap_lookup_and_delete_elem_flags(g_m, &key, r->val, f);
		break;
	case OP_DELETE: r->rc = bpfmap_delete_elem(g_m, &key); break;
	case OP_NEXT:
		r->rc = bpfmap_get_next_key(g_m, key == ABSENT + 1 ? NULL : &key, &r->next);
		break;
	case OP_LBATCH:
	case OP_LDBATCH:
		r->rc = (op == OP_LBATCH ? bpfmap_lookup_batch : bpfmap_lookup_and_delete_batch)(
			g_m, NULL, g_cursor, g_keys, g_vals, &r->count, &bo);
		break;
	case OP_UBATCH: r->rc = bpfmap_update_batch(g_m, &key, in, &r->count, &bo); break;
	case OP_DBATCH: r->rc = bpfmap_delete_batch(g_m, &key, &r->count, &bo); break;
	}
	if ((op == OP_LBATCH || op == OP_LDBATCH) && (r->rc == 0 || r->rc == -ENOENT))
		take_batch(r, (uint32_t *)g_keys, g_vals, r->count, slot ? 8 : g_vbytes);
}

/* Whether the running kernel cannot answer @f on @op as bpf-next would. */
static bool model_applies(int op, int role, uint64_t f)
{
	if (g_kernel_cpu)
		return false;
	switch (op) {
	case OP_LOOKUP: return g_percpu && (f & K_CPU);
	case OP_UPDATE: return g_percpu && (f & (K_CPU | K_ALL));
	case OP_LBATCH: return role == R_ELEM && g_percpu && (f & K_CPU);
	case OP_UBATCH:
		return role == R_ELEM && ((f & K_EXIST) || (g_percpu && (f & (K_CPU | K_ALL))));
	default: return false;
	}
}

/* bpf-next's checks for the cases model_applies() takes: the access check,
 * then bpf_map_check_op_flags() with the operation's allowed flags; lookups
 * refuse a bit neither kernel takes first, as 6.18 does. */
static int model_check(int op, uint64_t f)
{
	bool rd = !(c->flags & BPF_F_WRONLY), wr = !(c->flags & BPF_F_RDONLY);
	uint64_t allowed = 0;

	switch (op) {
	case OP_LOOKUP:
		if (((uint32_t)f & ~(K_LOCK | K_CPU)) || (!(f & K_CPU) && (f >> 32)))
			return -EINVAL;
		/* fall through */
	case OP_LBATCH:
		if (!rd)
			return -EPERM;
		allowed = K_LOCK | K_CPU;
		break;
	case OP_UPDATE:
		if (!wr)
			return -EPERM;
		allowed = K_NOEXIST | K_EXIST | K_LOCK | K_CPU | K_ALL;
		break;
	case OP_UBATCH:
		if (!wr)
			return -EPERM;
		allowed = K_EXIST | K_LOCK | K_CPU | K_ALL;
		break;
	}
	if ((uint32_t)f & ~allowed)
		return -EINVAL;
	if ((f & K_LOCK) && !c->lock)
		return -EINVAL;
	if (!(f & K_CPU) && (f >> 32))
		return -EINVAL;
	if (f & (K_CPU | K_ALL)) {
		if (!g_percpu || ((f & K_CPU) && (f & K_ALL)))
			return -EINVAL;
		if ((f & K_CPU) && (f >> 32) >= g_cpus)
			return -ERANGE;
	}
	/* the hash map's own test of the mode (htab_map_update_elem) */
	if (op == OP_UPDATE && ((uint32_t)f & ~(K_LOCK | K_CPU | K_ALL)) > K_EXIST)
		return -EINVAL;
	return 0;
}

/* The kernel's side of a case model_applies() takes: bpf-next's checks,
 * then the operation on whole values, the one CPU's slot taken from or
 * written into them. */
static void kernel_modelled(int op, uint64_t f, uint32_t key, const uint8_t *in,
			    struct res *r)
{
	uint32_t cpu = (uint32_t)(f >> 32);
	uint8_t whole[VMAX] = { 0 };
	int ret;

	g_modelled++;
	r->count = g_count0 ? 0 : op == OP_LBATCH ? ME : 1;
	r->rc = model_check(op, f);
	if (r->rc || (g_count0 && op == OP_UBATCH)) /* refused, or nothing to do */
		return;
	switch (op) {
	case OP_LOOKUP:
		ret = bpf_map_lookup_elem_flags(g_fd, &key, whole, f & K_LOCK);
		r->rc = ret < 0 ? -errno : 0;
		memcpy(r->val, whole + 8 * cpu, 8);
		return;
	case OP_LBATCH:
		ret = bpf_map_lookup_batch(g_fd, NULL, g_cursor, g_keys, g_vals, &r->count, NULL);
		r->rc = ret < 0 ? -errno : 0;
		if (r->rc && r->rc != -ENOENT)
			return;
		for (uint32_t i = 0; i < r->count; i++) /* each value's slot, packed */
			memmove(g_vals + 8 * i, g_vals + i * g_vbytes + 8 * cpu, 8);
		take_batch(r, (uint32_t *)g_keys, g_vals, r->count, 8);
		return;
	case OP_UPDATE:
	case OP_UBATCH:
		if (f & K_CPU) { /* the slot into the value there is, or zeros */
			bpf_map_lookup_elem(g_rw_fd, &key, whole);
			memcpy(whole + 8 * cpu, in, 8);
		} else if (f & K_ALL) {
			for (uint32_t i = 0; i < g_cpus; i++)
				memcpy(whole + 8 * i, in, 8);
		} else {
			memcpy(whole, in, g_vbytes);
		}
		ret = bpf_map_update_elem(g_fd, &key, whole, f & (K_NOEXIST | K_EXIST | K_LOCK));
		r->rc = ret < 0 ? -errno : 0;
		r->count = !r->rc;
		return;
	}
}

static const char *ename(int rc)
{
	static char buf[4][16];
	static int n;

	switch (rc) {
	case 0: return "0";
	case -EINVAL: return "EINVAL";
	case -EPERM: return "EPERM";
	case -ERANGE: return "ERANGE";
	case -ENOENT: return "ENOENT";
	case -EEXIST: return "EEXIST";
	case -E2BIG: return "E2BIG";
	case -ENOSPC: return "ENOSPC";
	}
	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%d", rc);
	return buf[n];
}

static void mismatch(int ci, int op, int role, int state, uint64_t f, const char *what)
{
	if (g_nmm < ARRAY_LEN(g_mm))
		g_mm[g_nmm] = (struct mismatch){ (uint16_t)ci, (uint16_t)op, (uint16_t)role,
						 (uint16_t)state, f, g_rk.rc, g_rb.rc, what };
	g_nmm++;
}

static const char *const state_names[5] = { "room,present", "room,absent", "full,present",
					    "full,absent", "count 0" };

/* One case: both maps in @state (bit 0: the probed key is absent; bit 1:
 * the map is full; 4: a batch of *count 0 on a map with room), the same
 * call on each, everything compared. */
static void run_case(int ci, int op, int role, int state, uint64_t f)
{
	bool full = state & 2, absent = state & 1, modelled;
	uint32_t n = full ? ME : ME / 2, key = absent ? ABSENT : n;
	bool slot = g_percpu && (f & (K_CPU | K_ALL)) && (op < OP_LBATCH || role == R_ELEM);
	size_t vb = slot ? 8 : g_vbytes;
	uint8_t in[VMAX];

	g_count0 = state == 4;
	modelled = model_applies(op, role, f);
	if (op == OP_NEXT && absent && full)
		key = ABSENT + 1; /* "full, absent" is NULL, the first key, here */
	fill_value(in, key, 77);
	memset(&g_rk, 0, sizeof(g_rk));
	memset(&g_rb, 0, sizeof(g_rb));
	reset(n);
	if (modelled)
		kernel_modelled(op, f, key, in, &g_rk);
	else
		kernel_op(op, role, f, key, in, &g_rk);
	dump(&g_rk, true);
	bpfmap_op(op, role, f, key, in, &g_rb);
	dump(&g_rb, false);
	g_checks++;

	if (op == OP_NEXT && !absent && !g_rk.rc != !g_rb.rc &&
	    (g_rk.rc == -ENOENT || g_rb.rc == -ENOENT)) {
		/* from a present key: the order differs, so may the end */
	} else if (g_rk.rc != g_rb.rc) {
		mismatch(ci, op, role, state, f, "return code");
		return;
	}
	if ((op >= OP_LBATCH) && g_rk.count != g_rb.count)
		mismatch(ci, op, role, state, f, "count");
	if ((op == OP_LOOKUP || op == OP_LDEL) && !g_rk.rc && memcmp(g_rk.val, g_rb.val, vb))
		mismatch(ci, op, role, state, f, "value");
	if (op == OP_NEXT && !g_rb.rc && (idx_of(g_rb.next) < 0 || g_rb.next > n))
		mismatch(ci, op, role, state, f, "next key");
	if ((op == OP_LBATCH || op == OP_LDBATCH) &&
	    (memcmp(g_rk.got, g_rb.got, sizeof(g_rk.got)) ||
	     memcmp(g_rk.gval, g_rb.gval, sizeof(g_rk.gval))))
		mismatch(ci, op, role, state, f, "batch output");
	if (g_lru && full) {
		int x = idx_of(key);

		if (x >= 0 && (g_rk.present[x] != g_rb.present[x] ||
			       memcmp(g_rk.pval[x], g_rb.pval[x], g_vbytes)))
			mismatch(ci, op, role, state, f, "probed key after");
	} else if (memcmp(g_rk.present, g_rb.present, sizeof(g_rk.present)) ||
		   memcmp(g_rk.pval, g_rb.pval, sizeof(g_rk.pval))) {
		mismatch(ci, op, role, state, f, "map after");
	}
}

/* The flags tried: 0, each bit, the pairs of the meaningful bits, and
 * K_CPU with possible and impossible CPUs, alone and with each other bit
 * that matters, so that every check's order shows. */
static size_t flag_list(uint64_t *out)
{
	static const uint64_t meaningful[] = { K_NOEXIST, K_EXIST, K_LOCK, K_CPU, K_ALL };
	static const uint64_t others[] = { 0, K_NOEXIST, K_EXIST, K_NOEXIST | K_EXIST, K_LOCK,
					   K_ALL, 1ULL << 5, 1ULL << 31 };
	uint64_t cpus[] = { 0, g_cpus - 1, g_cpus, 0xffffffffULL };
	size_t n = 0;

	out[n++] = 0; /* the calls without flags (g_plain) */
	out[n++] = 0;
	for (int b = 0; b < 64; b++)
		out[n++] = 1ULL << b;
	for (size_t i = 0; i < ARRAY_LEN(meaningful); i++)
		for (size_t j = i + 1; j < ARRAY_LEN(meaningful); j++)
			out[n++] = meaningful[i] | meaningful[j];
	for (size_t i = 0; i < ARRAY_LEN(cpus); i++)
		for (size_t j = 0; j < ARRAY_LEN(others); j++)
			out[n++] = K_CPU | others[j] | cpus[i] << 32;
	out[n++] = K_ALL | 1ULL << 32;
	out[n++] = K_LOCK | 1ULL << 32;
	return n;
}

static void print_table(void)
{
	printf("%lu mismatches (kernel/bpfmap per state: %s | %s | %s | %s | %s):\n", g_nmm,
	       state_names[0], state_names[1], state_names[2], state_names[3], state_names[4]);
	for (size_t i = 0, lines = 0; i < g_nmm && i < ARRAY_LEN(g_mm); i++, lines++) {
		const struct mismatch *a = &g_mm[i];
		char cells[5][40] = { "-", "-", "-", "-", "-" };
		size_t j = i;

		if (lines == 150) {
			printf("  ... (the first 150 lines)\n");
			break;
		}
		/* one line per column, operation, role and flags */
		for (; j < g_nmm && j < ARRAY_LEN(g_mm) && g_mm[j].col == a->col &&
		       g_mm[j].op == a->op && g_mm[j].role == a->role && g_mm[j].flags == a->flags;
		     j++)
			snprintf(cells[g_mm[j].state], sizeof(cells[0]), "%s/%s%s%s",
				 ename(g_mm[j].rk), ename(g_mm[j].rb),
				 strcmp(g_mm[j].what, "return code") ? " " : "",
				 strcmp(g_mm[j].what, "return code") ? g_mm[j].what : "");
		printf("  %-22s %-20s %-5s %#18llx  %s | %s | %s | %s | %s\n", cols[a->col].name,
		       op_names[a->op], a->op >= OP_LBATCH ? (a->role ? "flags" : "elem") : "",
		       (unsigned long long)a->flags, cells[0], cells[1], cells[2], cells[3],
		       cells[4]);
		i = j - 1;
	}
}

int main(void)
{
	static uint64_t flags[256];
	size_t nflags;
	cpu_set_t set;
	int fd, ncpu = libbpf_num_possible_cpus();
	bool verbose = getenv("BPFMAP_FLAGS_VERBOSE") != NULL;
	unsigned long cols_run = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 4, 1, NULL);
	if (fd < 0) {
		printf("SKIP: BPF not permitted here: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	if (ncpu <= 0 || ncpu != bpfmap_num_possible_cpus() || ncpu > (int)(VMAX / 8)) {
		printf("SKIP: %d possible CPUs (bpfmap counts %d); this test takes 1..%d\n", ncpu,
		       bpfmap_num_possible_cpus(), VMAX / 8);
		return 77;
	}
	g_cpus = (uint32_t)ncpu;
	/* One CPU: the kernel's LRU then fills to max_entries before it evicts. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, NULL, 4, 8, 1, NULL);
	if (fd >= 0) {
		uint64_t k = 1, v = 0; /* key: its first 4 bytes */

		g_kernel_cpu = bpf_map_lookup_elem_flags(fd, &k, &v, K_CPU) != 0 && errno == ENOENT;
		close(fd);
	}
	printf("%u possible CPUs; the kernel %s BPF_F_CPU%s\n", g_cpus,
	       g_kernel_cpu ? "takes" : "lacks", g_kernel_cpu ? "" : " (bpf-next's checks decide)");
	nflags = flag_list(flags);

	for (size_t ci = 0; ci < ARRAY_LEN(cols); ci++) {
		unsigned long before = g_nmm, checks = g_checks;

		if (!col_open(&cols[ci]))
			continue;
		cols_run++;
		for (int op = 0; op < OP_N; op++) {
			int roles = op >= OP_LBATCH ? 2 : 1, states = op >= OP_LBATCH ? 5 : 4;
			size_t nf = op == OP_DELETE || op == OP_NEXT ? 1 : nflags;

			for (int role = R_ELEM; role < roles; role++)
				for (size_t fi = 0; fi < nf; fi++)
					for (int state = 0; state < states; state++) {
						g_plain = fi == 0;
						run_case((int)ci, op, role, state, flags[fi]);
					}
		}
		if (verbose || g_nmm != before)
			printf("%-24s %lu cases, %lu mismatches\n", cols[ci].name,
			       g_checks - checks, g_nmm - before);
		col_close();
	}
	printf("summary: %lu columns, %zu flag values, %lu cases (%lu with bpf-next's checks), "
	       "%lu mismatches\n", cols_run, nflags, g_checks, g_modelled, g_nmm);
	if (g_nmm) {
		print_table();
		printf("FAIL\n");
		return 1;
	}
	if (!cols_run) {
		printf("SKIP: no column could be created\n");
		return 77;
	}
	printf("PASS\n");
	return 0;
}
