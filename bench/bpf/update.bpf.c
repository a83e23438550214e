// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf-hashmap-full-update and bpf-hashmap-overwrite, kernel side.  A u32 ->
 * u64 HASH map, filled by user space.  One run = bpf_loop(nr_updates) of
 * bpf_map_update_elem(BPF_ANY), timed with bpf_ktime_get_ns:
 *  - full update: the key is cpu + max_entries, absent from the full map, so
 *    every update fails with -E2BIG (the selftest's workload);
 *  - overwrite: keys cycle over the present keys 0 .. max_entries - 1, so
 *    every update replaces a value;
 *  - evict (LRU maps): each update inserts a key never seen before, so
 *    every update evicts one.
 */
#include "bench_bpf.h"

#define E2BIG 7

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1000);
	__type(key, __u32);
	__type(value, __u64);
} hash_map SEC(".maps");

struct update_state state;

/* The error count is in .bss, not here: see lookup.bpf.c. */
struct update_ctx {
	__u32 key;
	__u32 slot, n;
	__u32 max_entries;
	volatile __u64 *errors;
};

static int update_absent(__u32 i, struct update_ctx *c)
{
	__u64 v = i;

	if (bpf_map_update_elem(&hash_map, &c->key, &v, BPF_ANY) != -E2BIG)
		*c->errors += 1;
	return 0;
}

static int update_present(__u32 i, struct update_ctx *c)
{
	__u64 v = i;

	if (bpf_map_update_elem(&hash_map, &c->key, &v, BPF_ANY))
		*c->errors += 1;
	if (++c->key >= c->max_entries)
		c->key = 0;
	return 0;
}

static int update_new(__u32 i, struct update_ctx *c)
{
	__u64 v = i;
	__u32 key = UPDATE_EVICT_KEY(c->slot, c->n);

	c->n++;
	if (bpf_map_update_elem(&hash_map, &key, &v, BPF_ANY))
		*c->errors += 1;
	return 0;
}

static __always_inline void update_body(void)
{
	__u32 slot = bench_cpu_slot();
	volatile struct bench_cpu_stats *s = &state.cpu[slot];
	struct update_ctx c = { .max_entries = state.max_entries, .errors = &s->errors };
	__u32 n = state.nr_updates;
	__u64 t0, dt;

	if (!c.max_entries)
		return;
	t0 = bpf_ktime_get_ns();
	if (state.mode == UPDATE_FULL) {
		c.key = slot + c.max_entries;
		bpf_loop(n, update_absent, &c, 0);
	} else if (state.mode == UPDATE_EVICT) {
		c.slot = slot;
		c.n = state.evict_next[slot & (BENCH_MAX_CPUS - 1)];
		bpf_loop(n, update_new, &c, 0);
		state.evict_next[slot & (BENCH_MAX_CPUS - 1)] = c.n;
	} else {
		/* Producers start at different keys to spread over buckets. */
		c.key = (slot * 97) % c.max_entries;
		bpf_loop(n, update_present, &c, 0);
	}
	dt = bpf_ktime_get_ns() - t0;

	s->seq++;
	s->events += n;
	s->ns += dt;
	s->seq++;
}

BENCH_ENTRIES(update, &state.gate, update_body)
