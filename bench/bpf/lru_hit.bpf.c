// SPDX-License-Identifier: BSD-2-Clause
/*
 * lru-hit, kernel side: replay a key trace (an array map filled by user
 * space) against an LRU map as a caching program would: look the key up, and
 * on a miss insert it.  Lookups from a program set the kernel's reference
 * bit, as they do in production.  Hits and misses of the trace's non-scan
 * keys are counted; one trigger replays the whole trace, timed.
 */
#include "bench_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Type, size and flags set by user space before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10000);
	__type(key, __u32);
	__type(value, __u64);
} lru_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} trace SEC(".maps");

struct lru_hit_state state;

static int replay_one(__u32 i, void *ctx)
{
	__u32 *k = bpf_map_lookup_elem(&trace, &i), key;
	__u64 one = 1;

	(void)ctx;
	if (!k)
		return 1;
	key = *k;
	if (bpf_map_lookup_elem(&lru_map, &key)) {
		if (!(key & LRU_HIT_SCAN_BIT))
			state.hits++;
		return 0;
	}
	if (!(key & LRU_HIT_SCAN_BIT))
		state.misses++;
	if (bpf_map_update_elem(&lru_map, &key, &one, BPF_ANY))
		state.errors++;
	return 0;
}

static __always_inline void replay_body(void)
{
	__u64 t0 = bpf_ktime_get_ns();

	bpf_loop(state.n, replay_one, NULL, 0);
	state.ns = bpf_ktime_get_ns() - t0;
	state.done++;
}

BENCH_ENTRIES(lru_hit, &state.gate, replay_body)
