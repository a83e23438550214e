// SPDX-License-Identifier: BSD-2-Clause
/*
 * A per-flow packet counter with an HTTP "Host: " match, written as for the
 * kernel: maps in SEC(".maps"), bpf_map_lookup_elem() and
 * bpf_map_update_elem() as helpers 1 and 2, bpf_strnstr() as a kfunc.  The
 * same object runs in the kernel (flow_xdp, an XDP program) and in DPDK's
 * rte_bpf on bpfmap's maps (flow_rte, whose argument is a struct flow_pkt);
 * both entry points run the same count_frame().
 *
 * What rte_bpf's validator needs, and the kernel's accepts too: one function
 * (everything inlined), no loops, no global data or string literals (the
 * needle is built on the stack), no 32-bit jumps (clang -mcpu=v2), offsets
 * bounded by masks so that every access stays inside the packet buffer.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flow_count.h"

extern int bpf_strnstr(const char *s1, const char *s2, __SIZE_TYPE__ len) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FLOW_MAX_ENTRIES);
	__type(key, struct flow_key);
	__type(value, struct flow_val);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FLOW_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Kfuncs may be called from GPL-compatible programs only. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* How far into the payload the Host: header is looked for. */
#define HOST_SCAN 512

static __always_inline void stat_add(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* 1 if the TCP payload from @pl to @end holds "Host: ". */
static __always_inline int has_host(const __u8 *pl, const __u8 *end)
{
	/* "Host: " and its NUL, little-endian, on the stack. */
	__u64 needle = 0x00203a74736f48ULL;
	__u64 n;

	if (pl >= end)
		return 0;
	n = end - pl;
	if (n > HOST_SCAN)
		n = HOST_SCAN;
	return bpf_strnstr((const char *)pl, (const char *)&needle, n) >= 0;
}

static __always_inline int count_frame(const __u8 *data, const __u8 *end)
{
	struct flow_key key = {};
	struct flow_val *v;
	const __u8 *l4;
	__u32 ihl, len = end - data;
	int host = 0;

	/* Ethernet + the fixed part of IPv4 */
	if (data + 34 > end || data[12] != 0x08 || data[13] != 0x00)
		goto other;
	ihl = (data[14] & 0xf) * 4;
	key.proto = data[23];
	if (ihl < 20 || (key.proto != 6 && key.proto != 17))
		goto other;
	l4 = data + 14 + ihl;
	if (l4 + 20 > end)
		goto other;
	key.saddr = *(const __u32 *)(data + 26);
	key.daddr = *(const __u32 *)(data + 30);
	key.sport = *(const __u16 *)l4;
	key.dport = *(const __u16 *)(l4 + 2);
	if (key.proto == 6 && key.dport == __builtin_bswap16(80))
		host = has_host(l4 + (l4[12] >> 4) * 4, end);

	v = bpf_map_lookup_elem(&flows, &key);
	if (!v) {
		struct flow_val init = { .packets = 1, .bytes = len, .host_hits = host };

		if (bpf_map_update_elem(&flows, &key, &init, BPF_NOEXIST) == 0) {
			stat_add(FLOW_STAT_NEW_FLOWS);
			goto counted;
		}
		/* Another thread inserted it first. */
		v = bpf_map_lookup_elem(&flows, &key);
		if (!v)
			goto other;
	}
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, len);
	if (host)
		__sync_fetch_and_add(&v->host_hits, 1);
counted:
	stat_add(FLOW_STAT_FLOW_PACKETS);
	return 1;
other:
	stat_add(FLOW_STAT_OTHER);
	return 0;
}

SEC("xdp")
int flow_xdp(struct xdp_md *ctx)
{
	count_frame((const __u8 *)(long)ctx->data, (const __u8 *)(long)ctx->data_end);
	return XDP_PASS;
}

SEC("rte")
int flow_rte(struct flow_pkt *pkt)
{
	__u32 len = pkt->len;

	if (len > FLOW_PKT_MAX)
		len = FLOW_PKT_MAX;
	return count_frame(pkt->data, pkt->data + len);
}
