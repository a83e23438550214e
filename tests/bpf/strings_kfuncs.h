/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by tests/bpf/strings_kfuncs.bpf.c and tests/test_strings_kernel.c. */
#ifndef BPFMAP_TESTS_STRINGS_KFUNCS_H
#define BPFMAP_TESTS_STRINGS_KFUNCS_H

#include <linux/types.h>

#define STR_BUF_SIZE (1 << 18) /* room for two strings past 65536 bytes */
#define STR_CALL_NULL 0xffffffffu

enum str_fn_id {
	STR_FN_STRCMP,
	STR_FN_STRCASECMP,
	STR_FN_STRNCASECMP,
	STR_FN_STRCHR,
	STR_FN_STRCHRNUL,
	STR_FN_STRNCHR,
	STR_FN_STRRCHR,
	STR_FN_STRLEN,
	STR_FN_STRNLEN,
	STR_FN_STRSPN,
	STR_FN_STRCSPN,
	STR_FN_STRSTR,
	STR_FN_STRNSTR,
	STR_FN_STRCASESTR,
	STR_FN_STRNCASESTR,
	STR_FN_COUNT
};

/* The syscall program's context. */
struct str_call {
	__u32 fn;    /* enum str_fn_id */
	__u32 off_a; /* offsets of the string arguments in buf, or STR_CALL_NULL */
	__u32 off_b;
	__s32 c;     /* the character (char or int argument) */
	__u64 n;     /* the size_t argument */
	__s32 ret;   /* out: the kfunc's result */
	__u32 pad;
};

#endif
