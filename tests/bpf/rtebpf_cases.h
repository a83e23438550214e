/* SPDX-License-Identifier: BSD-2-Clause */
/* The context of tests/bpf/rtebpf_cases.bpf.c's programs. */
#ifndef RTEBPF_CASES_H
#define RTEBPF_CASES_H

#include <linux/types.h>

struct case_ctx {
	__u64 in[4];
	__s64 out[32];
	char str[64];
	char str2[16];
};

/* The value of map "other" */
struct case_wide {
	__u64 a, b;
};

#endif
