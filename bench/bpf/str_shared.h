/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The str-kfuncs benchmark's BPF side (str.bpf.c) and user space
 * (bench_str_kernel.c) share this .bss layout: the arguments of the kfunc
 * call, the strings it reads, and the result it gave.
 */
#ifndef BPFMAP_BENCH_BPF_STR_SHARED_H
#define BPFMAP_BENCH_BPF_STR_SHARED_H

#include <linux/types.h>

/* Room for the strings of one scenario: two 2048-byte strings and their
 * NULs, at page-relative offsets chosen by user space. */
#define STR_BENCH_BUF 8192

struct str_bench_state {
	__u32 off_a; /* offsets into buf of the first and second string arguments */
	__u32 off_b;
	__u64 n;     /* the size_t argument (strnchr's count, strnstr's len) */
	__s32 c;     /* strnchr's character */
	__s32 ret;   /* out: what the kfunc returned the last time */
	char buf[STR_BENCH_BUF] __attribute__((aligned(64)));
};

#endif
