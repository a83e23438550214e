// SPDX-License-Identifier: BSD-2-Clause
/*
 * For tests/test_rtebpf.c: the map helpers called by name, as extern
 * functions (generic and per map), on two maps of different sizes.  Without
 * <bpf/bpf_helpers.h>, whose helper definitions would take these names.
 */
#include <linux/bpf.h>

#include "rtebpf_cases.h"

#define SEC(name) __attribute__((section(name), used))
#define __ksym __attribute__((section(".ksyms")))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name

#include "rtebpf_maps.h"

extern void *bpf_map_lookup_elem(void *map, const void *key) __ksym;
extern long bpf_map_update_elem(void *map, const void *key, const void *value,
				__u64 flags) __ksym;
extern void *bpf_map_lookup_elem__other(void *map, const void *key) __ksym;

SEC("rte/by_name")
int by_name(struct case_ctx *c)
{
	__u32 k = 2;
	__u64 v = 5, wk = 4, *p;
	struct case_wide w = { 21, 22 }, *wp;

	c->out[0] = bpf_map_update_elem(&small, &k, &v, BPF_ANY);
	c->out[1] = bpf_map_update_elem(&other, &wk, &w, BPF_ANY);
	p = bpf_map_lookup_elem(&small, &k);
	c->out[2] = p ? (__s64)*p : -1;
	wp = bpf_map_lookup_elem(&other, &wk);
	c->out[3] = wp ? (__s64)wp->b : -1;
	wp = bpf_map_lookup_elem__other(&other, &wk);
	c->out[4] = wp ? (__s64)wp->a : -1;
	return 0;
}
