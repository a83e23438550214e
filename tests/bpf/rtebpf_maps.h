/* SPDX-License-Identifier: BSD-2-Clause */
/* The maps both test programs use (BPF C; SEC, __uint and __type come from
 * <bpf/bpf_helpers.h> or the includer). */
#ifndef RTEBPF_MAPS_H
#define RTEBPF_MAPS_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} small SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, struct case_wide);
} other SEC(".maps");

#endif
