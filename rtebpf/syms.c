// SPDX-License-Identifier: BSD-2-Clause
/*
 * The external symbols a program sees, as one rte_bpf_xsym table in one
 * allocation: the table itself, then a header rte_bpf never reads (the map
 * handles, their infos, the names).  Entry N < 196 answers `call N`; the map
 * helpers there carry sizes every map admits, and each map has its own
 * copies carrying its exact sizes, which load.c points each call to.
 * The helpers' C side is here too: rte_bpf calls every external function
 * as uint64_t f(r1, ..., r5), so each one unpacks its registers, and int
 * results are sign-extended so that a program sees -ENOENT as negative in
 * 64-bit compares as well as 32-bit ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bpf.h>

#include "rtebpf.h"

#define UNUSED __attribute__((unused))
/* DPDK 22.11's x86-64 JIT calls external functions with the stack 8 bytes
 * off the ABI's 16-byte alignment, and compiled C may keep SSE values on the
 * stack with aligned moves (a per-CPU update crashed in movaps): every
 * function rte_bpf calls realigns its stack on entry. */
#define XFUNC __attribute__((force_align_arg_pointer))

/* ---- the map helpers (r1: the map variable's address) ---- */

static XFUNC uint64_t h_lookup(uint64_t m, uint64_t key, uint64_t r3 UNUSED, uint64_t r4 UNUSED,
			 uint64_t r5 UNUSED)
{
	const struct rtebpf_map *h = (const void *)(uintptr_t)m;

	return (uintptr_t)h->lookup(h->map, (const void *)(uintptr_t)key);
}

static XFUNC uint64_t h_update(uint64_t m, uint64_t key, uint64_t value, uint64_t flags,
			 uint64_t r5 UNUSED)
{
	const struct rtebpf_map *h = (const void *)(uintptr_t)m;

	return (uint64_t)(int64_t)bpfmap_update(h->map, (const void *)(uintptr_t)key,
						(const void *)(uintptr_t)value, flags);
}

static XFUNC uint64_t h_delete(uint64_t m, uint64_t key, uint64_t r3 UNUSED, uint64_t r4 UNUSED,
			 uint64_t r5 UNUSED)
{
	const struct rtebpf_map *h = (const void *)(uintptr_t)m;

	return (uint64_t)(int64_t)bpfmap_delete(h->map, (const void *)(uintptr_t)key);
}

static XFUNC uint64_t h_lookup_percpu(uint64_t m, uint64_t key, uint64_t cpu, uint64_t r4 UNUSED,
				uint64_t r5 UNUSED)
{
	const struct rtebpf_map *h = (const void *)(uintptr_t)m;

	/* The kernel's helper takes a u32: the register's upper half is
	 * dropped, as there. */
	return (uintptr_t)bpfmap_lookup_percpu(h->map, (const void *)(uintptr_t)key,
					       (uint32_t)cpu);
}

typedef uint64_t (*xfunc)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

static const struct {
	const char *name;
	int32_t nr; /* the kernel's BPF_FUNC_* number */
	xfunc fn;
	uint32_t nb_args;
} helpers[RTEBPF_NR_HELPERS] = {
	[RTEBPF_MAP_LOOKUP] = { "bpf_map_lookup_elem", 1, h_lookup, 2 },
	[RTEBPF_MAP_UPDATE] = { "bpf_map_update_elem", 2, h_update, 4 },
	[RTEBPF_MAP_DELETE] = { "bpf_map_delete_elem", 3, h_delete, 2 },
	[RTEBPF_MAP_LOOKUP_PERCPU] = { "bpf_map_lookup_percpu_elem", 195, h_lookup_percpu, 3 },
};

int rtebpf_helper_of(int32_t nr)
{
	for (int h = 0; h < RTEBPF_NR_HELPERS; h++)
		if (helpers[h].nr == nr)
			return h;
	return -1;
}

int rtebpf_helper_named(const char *name)
{
	for (int h = 0; h < RTEBPF_NR_HELPERS; h++)
		if (!strcmp(helpers[h].name, name))
			return helpers[h].nr;
	return -1;
}

const char *rtebpf_helper_name(enum rtebpf_helper h)
{
	return helpers[h].name;
}

/* ---- the string kfuncs ---- */

#define P(x) ((const char *)(uintptr_t)(x))
#define RET(expr) return (uint64_t)(int64_t)(expr)
/* One wrapper per kfunc; A, B, C are r1..r3. */
#define KFUNC(name, call)                                                      \
	static XFUNC uint64_t kf_##name(uint64_t A, uint64_t B, uint64_t C,          \
				  uint64_t r4 UNUSED, uint64_t r5 UNUSED)      \
	{                                                                      \
		(void)A, (void)B, (void)C;                                     \
		RET(call);                                                     \
	}
KFUNC(strcmp, bpfmap_strcmp(P(A), P(B)))
KFUNC(strcasecmp, bpfmap_strcasecmp(P(A), P(B)))
KFUNC(strncasecmp, bpfmap_strncasecmp(P(A), P(B), C))
KFUNC(strchr, bpfmap_strchr(P(A), (char)B))
KFUNC(strchrnul, bpfmap_strchrnul(P(A), (char)B))
KFUNC(strnchr, bpfmap_strnchr(P(A), B, (char)C))
KFUNC(strrchr, bpfmap_strrchr(P(A), (int)B))
KFUNC(strlen, bpfmap_strlen(P(A)))
KFUNC(strnlen, bpfmap_strnlen(P(A), B))
KFUNC(strspn, bpfmap_strspn(P(A), P(B)))
KFUNC(strcspn, bpfmap_strcspn(P(A), P(B)))
KFUNC(strstr, bpfmap_strstr(P(A), P(B)))
KFUNC(strnstr, bpfmap_strnstr(P(A), P(B), C))
KFUNC(strcasestr, bpfmap_strcasestr(P(A), P(B)))
KFUNC(strncasestr, bpfmap_strncasestr(P(A), P(B), C))

/* Argument kinds, one letter each: p a string (a pointer to at least one
 * byte; the function reads as far as the string or its bound reaches,
 * which the validator cannot check), n a number. */
static const struct {
	const char *name;
	xfunc fn;
	const char *args;
} kfuncs[] = {
	{ "bpf_strcmp", kf_strcmp, "pp" },         { "bpf_strcasecmp", kf_strcasecmp, "pp" },
	{ "bpf_strncasecmp", kf_strncasecmp, "ppn" }, { "bpf_strchr", kf_strchr, "pn" },
	{ "bpf_strchrnul", kf_strchrnul, "pn" },   { "bpf_strnchr", kf_strnchr, "pnn" },
	{ "bpf_strrchr", kf_strrchr, "pn" },       { "bpf_strlen", kf_strlen, "p" },
	{ "bpf_strnlen", kf_strnlen, "pn" },       { "bpf_strspn", kf_strspn, "pp" },
	{ "bpf_strcspn", kf_strcspn, "pp" },       { "bpf_strstr", kf_strstr, "pp" },
	{ "bpf_strnstr", kf_strnstr, "ppn" },      { "bpf_strcasestr", kf_strcasestr, "pp" },
	{ "bpf_strncasestr", kf_strncasestr, "ppn" },
};
#define NR_KFUNCS (sizeof(kfuncs) / sizeof(kfuncs[0]))

const char *rtebpf_kfunc_list(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < NR_KFUNCS && len + 1 < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ", " : "",
					kfuncs[k].name);
	return buf;
}

/* ---- the table ---- */

/* What follows the table in its allocation. */
struct syms_tail {
	uint32_t nb_xsym;
	uint32_t nb_maps;
	uint32_t first_map_helper; /* entry of map 0's first helper */
	uint32_t first_map_var;
	uint32_t first_kfunc;
	struct rtebpf_map handles[RTEBPF_MAX_MAPS];
	struct bpfmap_info info[RTEBPF_MAX_MAPS];
	char names[RTEBPF_MAX_MAPS][RTEBPF_NR_HELPERS + 1][RTEBPF_MAX_NAME + 32];
	uint64_t filler; /* what the non-function helper slots point to */
};

static uint32_t table_len(uint32_t nb_maps)
{
	return RTEBPF_HELPER_SLOTS + RTEBPF_NR_HELPERS + nb_maps * (RTEBPF_NR_HELPERS + 1) +
	       (uint32_t)NR_KFUNCS;
}

/* The tail sits after the table, which rte_bpf only reads through the
 * pointer and length it is given. */
static struct syms_tail *tail_of(const struct rte_bpf_xsym *syms)
{
	/* Entry 0 is a filler variable whose value is &tail->filler. */
	return (struct syms_tail *)((char *)syms[0].var.val - offsetof(struct syms_tail, filler));
}

static struct rte_bpf_arg arg(enum rte_bpf_arg_type type, size_t size)
{
	return (struct rte_bpf_arg){ .type = type, .size = size };
}

static void set_func(struct rte_bpf_xsym *x, const char *name, xfunc fn, uint32_t nb_args)
{
	x->name = name;
	x->type = RTE_BPF_XTYPE_FUNC;
	x->func.val = fn;
	x->func.nb_args = nb_args;
	x->func.ret = arg(RTE_BPF_ARG_RAW, sizeof(uint64_t));
}

/* Helper @h declared with these sizes: the map (a variable of ours), the
 * key, the value (update) and the lookups' result. */
static void set_helper(struct rte_bpf_xsym *x, const char *name, enum rtebpf_helper h,
		       size_t key, size_t value, size_t result)
{
	set_func(x, name, helpers[h].fn, helpers[h].nb_args);
	x->func.args[0] = arg(RTE_BPF_ARG_PTR, sizeof(struct rtebpf_map));
	x->func.args[1] = arg(RTE_BPF_ARG_PTR, key);
	if (h == RTEBPF_MAP_UPDATE) {
		x->func.args[2] = arg(RTE_BPF_ARG_PTR, value);
		x->func.args[3] = arg(RTE_BPF_ARG_RAW, sizeof(uint64_t));
	}
	if (h == RTEBPF_MAP_LOOKUP_PERCPU)
		x->func.args[2] = arg(RTE_BPF_ARG_RAW, sizeof(uint64_t));
	if (h == RTEBPF_MAP_LOOKUP || h == RTEBPF_MAP_LOOKUP_PERCPU)
		x->func.ret = arg(RTE_BPF_ARG_PTR, result);
}

static int check_maps(const struct bpfmap_rtebpf_map *maps, uint32_t nb_maps)
{
	if (nb_maps > RTEBPF_MAX_MAPS || (nb_maps && !maps))
		return -EINVAL;
	for (uint32_t i = 0; i < nb_maps; i++) {
		size_t len = maps[i].name ? strlen(maps[i].name) : 0;

		if (!maps[i].map || !len || len > RTEBPF_MAX_NAME)
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(maps[i].name, maps[j].name))
				return -EINVAL;
	}
	return 0;
}

struct rte_bpf_xsym *bpfmap_rtebpf_syms(const struct bpfmap_rtebpf_map *maps, uint32_t nb_maps,
					uint32_t *nb_xsym)
{
	size_t key_max = 0, value_max = 0, value_min = SIZE_MAX;
	uint32_t len = table_len(nb_maps), e;
	struct rte_bpf_xsym *x;
	struct syms_tail *t;

	if (!nb_xsym || check_maps(maps, nb_maps)) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, len * sizeof(*x) + sizeof(*t));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	t = (struct syms_tail *)(x + len);
	t->nb_xsym = len;
	t->nb_maps = nb_maps;
	for (uint32_t i = 0; i < nb_maps; i++) {
		uint32_t info_len = sizeof(t->info[i]);

		t->handles[i].map = maps[i].map;
		t->handles[i].lookup = bpfmap_lookup_func(maps[i].map);
		bpfmap_get_info(maps[i].map, &t->info[i], &info_len);
		key_max = t->info[i].key_size > key_max ? t->info[i].key_size : key_max;
		value_max = t->info[i].value_size > value_max ? t->info[i].value_size : value_max;
		value_min = t->info[i].value_size < value_min ? t->info[i].value_size : value_min;
	}

	/* Slots of helper numbers: not functions unless a map helper, so the
	 * validator refuses `call N` for any other N. */
	for (e = 0; e < RTEBPF_HELPER_SLOTS; e++) {
		x[e].name = "bpf_helper_not_provided";
		x[e].type = RTE_BPF_XTYPE_VAR;
		x[e].var.val = &t->filler;
		x[e].var.desc = arg(RTE_BPF_ARG_RAW, sizeof(t->filler));
	}
	/* The map helpers by name, as the slots declare them. */
	for (int h = 0; h < RTEBPF_NR_HELPERS; h++, e++) {
		if (nb_maps) {
			set_helper(&x[helpers[h].nr], helpers[h].name, (enum rtebpf_helper)h,
				   key_max, value_max, value_min);
			x[e] = x[helpers[h].nr];
		} else {
			x[e] = x[0];
		}
	}
	t->first_map_helper = e;
	for (uint32_t i = 0; i < nb_maps; i++)
		for (int h = 0; h < RTEBPF_NR_HELPERS; h++, e++) {
			char *name = t->names[i][h];

			snprintf(name, sizeof(t->names[i][h]), "%s__%s", helpers[h].name,
				 maps[i].name);
			set_helper(&x[e], name, (enum rtebpf_helper)h, t->info[i].key_size,
				   t->info[i].value_size, t->info[i].value_size);
		}
	t->first_map_var = e;
	for (uint32_t i = 0; i < nb_maps; i++, e++) {
		char *name = t->names[i][RTEBPF_NR_HELPERS];

		snprintf(name, sizeof(t->names[i][RTEBPF_NR_HELPERS]), "%s", maps[i].name);
		x[e].name = name;
		x[e].type = RTE_BPF_XTYPE_VAR;
		x[e].var.val = &t->handles[i];
		x[e].var.desc = arg(RTE_BPF_ARG_PTR, sizeof(t->handles[i]));
	}
	t->first_kfunc = e;
	for (size_t k = 0; k < NR_KFUNCS; k++, e++) {
		uint32_t nargs = (uint32_t)strlen(kfuncs[k].args);

		set_func(&x[e], kfuncs[k].name, kfuncs[k].fn, nargs);
		for (uint32_t a = 0; a < nargs; a++)
			x[e].func.args[a] = kfuncs[k].args[a] == 'p' ? arg(RTE_BPF_ARG_PTR, 1)
								   : arg(RTE_BPF_ARG_RAW,
									 sizeof(uint64_t));
	}
	*nb_xsym = len;
	return x;
}

void bpfmap_rtebpf_syms_free(struct rte_bpf_xsym *syms)
{
	free(syms);
}

int rtebpf_syms_map(const struct rte_bpf_xsym *syms, const char *name)
{
	const struct syms_tail *t = tail_of(syms);

	for (uint32_t i = 0; i < t->nb_maps; i++)
		if (!strcmp(syms[t->first_map_var + i].name, name))
			return (int)i;
	return -1;
}

const char *rtebpf_syms_map_name(const struct rte_bpf_xsym *syms, int map)
{
	return syms[tail_of(syms)->first_map_var + (uint32_t)map].name;
}

const struct bpfmap_info *rtebpf_syms_map_info(const struct rte_bpf_xsym *syms, int map)
{
	return &tail_of(syms)->info[map];
}

uint64_t rtebpf_syms_map_addr(const struct rte_bpf_xsym *syms, int map)
{
	return (uintptr_t)&tail_of(syms)->handles[map];
}

uint32_t rtebpf_syms_map_helper(const struct rte_bpf_xsym *syms, int map, enum rtebpf_helper h)
{
	return tail_of(syms)->first_map_helper + (uint32_t)map * RTEBPF_NR_HELPERS + h;
}

int rtebpf_syms_func(const struct rte_bpf_xsym *syms, const char *name)
{
	const struct syms_tail *t = tail_of(syms);

	/* Only the kfuncs: a per-map helper's entry called by its name would
	 * take any r1 unchecked. */
	for (uint32_t e = t->first_kfunc; e < t->nb_xsym; e++)
		if (!strcmp(syms[e].name, name))
			return (int)e;
	return -1;
}

int rtebpf_syms_map_helper_named(const struct rte_bpf_xsym *syms, const char *name, int *map)
{
	const struct syms_tail *t = tail_of(syms);

	for (uint32_t i = 0; i < t->nb_maps; i++)
		for (int h = 0; h < RTEBPF_NR_HELPERS; h++)
			if (!strcmp(t->names[i][h], name)) {
				*map = (int)i;
				return helpers[h].nr;
			}
	return -1;
}

bool rtebpf_syms_in_handles(const struct rte_bpf_xsym *syms, uint64_t addr)
{
	const struct syms_tail *t = tail_of(syms);

	return addr >= (uintptr_t)&t->handles[0] && addr < (uintptr_t)&t->handles[t->nb_maps];
}

struct rtebpf_map_bits rtebpf_syms_map_bits(const struct rte_bpf_xsym *syms)
{
	const struct syms_tail *t = tail_of(syms);
	struct rtebpf_map_bits mb = { 0, 0 };

	for (uint32_t i = 0; i < t->nb_maps; i++) {
		if (t->info[i].map_flags & BPFMAP_F_RDONLY_PROG)
			mb.rdonly |= 1ULL << i;
		if (bpfmap_get_lock_off(t->handles[i].map) >= 0)
			mb.locked |= 1ULL << i;
	}
	return mb;
}

uint8_t rtebpf_syms_ptr_args(const struct rte_bpf_xsym *syms, int e)
{
	uint8_t m = 0;

	for (uint32_t a = 0; a < syms[e].func.nb_args && a < 5; a++)
		if (syms[e].func.args[a].type == RTE_BPF_ARG_PTR)
			m |= (uint8_t)(1u << (a + 1));
	return m;
}

uint32_t rtebpf_syms_nb_args(const struct rte_bpf_xsym *syms, int e)
{
	return syms[e].func.nb_args;
}

uint32_t rtebpf_syms_count(const struct rte_bpf_xsym *syms)
{
	return tail_of(syms)->nb_xsym;
}
