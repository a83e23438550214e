/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The types flow_count.bpf.c shares with the programs that run it: the
 * packet buffer the rte_bpf entry point reads, the flow table's key and
 * value, and the slots of the stats map.  Included by BPF C (clang -target
 * bpf, where <linux/types.h> gives __u32...) and by host C.
 */
#ifndef FLOW_COUNT_H
#define FLOW_COUNT_H

#include <linux/types.h>

/* The largest frame the rte_bpf entry reads: DPDK's validator checks every
 * access against the size of the buffer it is given, so the packet lives in
 * a fixed-size buffer with its length in front. */
#define FLOW_PKT_MAX 1536

struct flow_pkt {
	__u32 len; /* bytes of data[] that are the frame (<= FLOW_PKT_MAX) */
	__u32 pad;
	__u8 data[FLOW_PKT_MAX];
};

/* IPv4 5-tuple, addresses and ports in network byte order. */
struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct flow_val {
	__u64 packets;
	__u64 bytes;
	__u64 host_hits; /* TCP packets to port 80 whose payload has "Host: " */
};

/* Keys of the stats map (HASH, __u32 -> __u64), created by the host. */
enum flow_stat {
	FLOW_STAT_FLOW_PACKETS, /* IPv4 TCP/UDP packets counted in flows */
	FLOW_STAT_OTHER,        /* frames that are not IPv4, or too short */
	FLOW_STAT_NEW_FLOWS,    /* flows this program inserted */
	FLOW_STAT_NR,
};

/* The flow table's size in the object (LRU_HASH) */
#define FLOW_MAX_ENTRIES 65536

#endif
