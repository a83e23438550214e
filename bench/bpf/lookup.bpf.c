// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf-hashmap-lookup, kernel side: what the selftests' lookup program does.
 * One run = bpf_loop(nr_outer) of bpf_loop(nr_entries) of {patch word 0 of the
 * key with i + 1; bpf_map_lookup_elem}, timed with bpf_ktime_get_ns around the
 * outer loop, so the figure covers the lookups, the loops and the key patch,
 * and not the trigger.
 */
#include "bench_bpf.h"

/* "Dual BSD/GPL": the code is BSD-2-Clause; the dual string lets the kernel
 * treat it as GPL-compatible, which some helpers and attach types demand. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Key size, value size, max_entries and flags are set by user space before
 * loading (bpf_map__set_*); these are placeholders. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1000);
	__uint(key_size, 4);
	__uint(value_size, 8);
} hash_map SEC(".maps");

struct lookup_state state;

/*
 * Counters live in the map value (.bss), not in this context: the verifier
 * tracks stack scalars exactly and would walk every value of a counter
 * incremented in a callback ("sequence of jumps is too complex").
 */
struct lookup_ctx {
	__u8 *key;              /* this CPU's key buffer */
	volatile __u64 *misses; /* this CPU's error count */
};

static int lookup_one(__u32 i, struct lookup_ctx *c)
{
	/* One 4-byte store, as the selftest does: for keys shorter than 4
	 * bytes only the low bytes count (little-endian). */
	*(__u32 *)c->key = i + 1;
	/* Every lookup should hit; a miss is counted and reported by user
	 * space, and the run goes on, so its events are all done.  (With
	 * --writer the kernel's lookups do miss now and then: an overwrite of a
	 * preallocated map recycles the old element at once, under a reader
	 * that may still be walking it.) */
	if (!bpf_map_lookup_elem(&hash_map, c->key))
		*c->misses += 1;
	return 0;
}

static int lookup_pass(__u32 i, struct lookup_ctx *c)
{
	bpf_loop(state.nr_entries, lookup_one, c, 0);
	return 0;
}

static __always_inline void lookup_body(void)
{
	__u32 slot = bench_cpu_slot();
	volatile struct bench_cpu_stats *s = &state.cpu[slot];
	struct lookup_ctx c = { .key = state.key[slot], .misses = &s->errors };
	__u32 nr_outer = state.nr_outer;
	__u64 t0, dt;

	t0 = bpf_ktime_get_ns();
	bpf_loop(nr_outer, lookup_pass, &c, 0);
	dt = bpf_ktime_get_ns() - t0;

	/* Sequence count (odd while writing) so user space reads events and
	 * ns of the same runs. */
	s->seq++;
	s->events += (__u64)nr_outer * state.nr_entries;
	s->ns += dt;
	s->seq++;
}

BENCH_ENTRIES(lookup, &state.gate, lookup_body)
