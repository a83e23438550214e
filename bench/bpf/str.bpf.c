// SPDX-License-Identifier: BSD-2-Clause
/*
 * str-kfuncs, kernel side: one tc program per string kfunc the benchmark
 * measures, each making exactly one call on the strings user space placed in
 * .bss, and an empty tc program.  User space runs them with
 * BPF_PROG_TEST_RUN and a repeat count; the kernel reports the mean time per
 * run, which includes the test run's own per-run cost -- what the empty
 * program's run measures, and what user space subtracts.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "str_shared.h"

extern int bpf_strnchr(const char *s, __SIZE_TYPE__ count, char c) __ksym;
extern int bpf_strcmp(const char *s1, const char *s2) __ksym;
extern int bpf_strcspn(const char *s, const char *reject) __ksym;
extern int bpf_strnstr(const char *s1, const char *s2, __SIZE_TYPE__ len) __ksym;

struct str_bench_state state;

/* Kfuncs may only be called from GPL-compatible programs. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline const char *arg_a(void)
{
	return state.buf + (state.off_a & (STR_BENCH_BUF - 1));
}

static __always_inline const char *arg_b(void)
{
	return state.buf + (state.off_b & (STR_BENCH_BUF - 1));
}

SEC("tc")
int str_empty(struct __sk_buff *skb)
{
	return 0;
}

SEC("tc")
int str_strnchr(struct __sk_buff *skb)
{
	state.ret = bpf_strnchr(arg_a(), state.n, (char)state.c);
	return 0;
}

SEC("tc")
int str_strcmp(struct __sk_buff *skb)
{
	state.ret = bpf_strcmp(arg_a(), arg_b());
	return 0;
}

SEC("tc")
int str_strcspn(struct __sk_buff *skb)
{
	state.ret = bpf_strcspn(arg_a(), arg_b());
	return 0;
}

SEC("tc")
int str_strnstr(struct __sk_buff *skb)
{
	state.ret = bpf_strnstr(arg_a(), arg_b(), state.n);
	return 0;
}
