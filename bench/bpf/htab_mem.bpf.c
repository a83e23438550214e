// SPDX-License-Identifier: BSD-2-Clause
/*
 * htab-mem, kernel side.  Each trigger runs one batch of HTAB_MEM_BATCH
 * operations for the calling thread: the thread finds its slot by thread id,
 * and the slot says which operation and which keys (key_base + i * stride,
 * so threads never share keys).  Timed with bpf_ktime_get_ns per batch.
 */
#include "bench_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Value size, max_entries and flags are set by user space before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__uint(value_size, 8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} htab SEC(".maps");

struct htab_mem_state state;

/* The error count is in .bss, not here: see lookup.bpf.c. */
struct batch_ctx {
	__u32 base;
	__u32 stride;
	__u64 flags;
	volatile __u64 *errors;
};

static int batch_update(__u32 i, struct batch_ctx *c)
{
	__u32 key = c->base + i * c->stride;

	if (bpf_map_update_elem(&htab, &key, state.value, c->flags))
		*c->errors += 1;
	return 0;
}

static int batch_delete(__u32 i, struct batch_ctx *c)
{
	__u32 key = c->base + i * c->stride;

	if (bpf_map_delete_elem(&htab, &key))
		*c->errors += 1;
	return 0;
}

static __always_inline void htab_mem_body(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct htab_mem_slot *slot = 0;
	struct batch_ctx c = {};
	__u64 t0, dt, done = 1;
	__u32 i, n = state.nr_slots;

	for (i = 0; i < HTAB_MEM_MAX_SLOTS; i++) {
		if (i >= n)
			return;
		if (state.slot[i].tid == tid) {
			slot = &state.slot[i];
			break;
		}
	}
	if (!slot)
		return;
	c.errors = &slot->stats.errors;
	c.base = slot->key_base;
	c.stride = slot->key_stride;

	t0 = bpf_ktime_get_ns();
	switch (slot->op) {
	case HTAB_MEM_OP_OVERWRITE:
		c.flags = BPF_ANY;
		bpf_loop(HTAB_MEM_BATCH, batch_update, &c, 0);
		break;
	case HTAB_MEM_OP_ADD_DEL:
		c.flags = BPF_ANY;
		bpf_loop(HTAB_MEM_BATCH, batch_update, &c, 0);
		bpf_loop(HTAB_MEM_BATCH, batch_delete, &c, 0);
		done = 2;
		break;
	case HTAB_MEM_OP_ADD:
		c.flags = BPF_NOEXIST;
		bpf_loop(HTAB_MEM_BATCH, batch_update, &c, 0);
		break;
	case HTAB_MEM_OP_DEL:
		bpf_loop(HTAB_MEM_BATCH, batch_delete, &c, 0);
		break;
	default:
		return;
	}
	dt = bpf_ktime_get_ns() - t0;

	{
		volatile struct bench_cpu_stats *s = &slot->stats;

		s->seq++;
		s->events += done;
		s->ns += dt;
		s->seq++;
	}
}

BENCH_ENTRIES(htab_mem, &state.gate, htab_mem_body)
