// SPDX-License-Identifier: BSD-2-Clause
/*
 * Calls the running kernel's string kfuncs for tests/test_strings_kernel.c.
 * User space writes the strings into buf (this object's .bss, mapped into
 * the test), then runs the syscall program with a struct str_call as its
 * context: which kfunc, the offsets of the string arguments in buf (or
 * STR_CALL_NULL for a NULL pointer), the size_t and the character.  The
 * kfunc's result comes back in the context.
 *
 * Built twice: without STR_NEW_KFUNCS for the twelve kfuncs of 6.18, and with
 * it for the three added later (strncasecmp, strcasestr, strncasestr), which
 * the test loads only where the kernel's BTF has them.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "strings_kfuncs.h"

#ifndef STR_NEW_KFUNCS
extern int bpf_strcmp(const char *s1, const char *s2) __ksym;
extern int bpf_strcasecmp(const char *s1, const char *s2) __ksym;
extern int bpf_strchr(const char *s, char c) __ksym;
extern int bpf_strchrnul(const char *s, char c) __ksym;
extern int bpf_strnchr(const char *s, __SIZE_TYPE__ count, char c) __ksym;
extern int bpf_strrchr(const char *s, int c) __ksym;
extern int bpf_strlen(const char *s) __ksym;
extern int bpf_strnlen(const char *s, __SIZE_TYPE__ count) __ksym;
extern int bpf_strspn(const char *s, const char *accept) __ksym;
extern int bpf_strcspn(const char *s, const char *reject) __ksym;
extern int bpf_strstr(const char *s1, const char *s2) __ksym;
extern int bpf_strnstr(const char *s1, const char *s2, __SIZE_TYPE__ len) __ksym;
#else
extern int bpf_strncasecmp(const char *s1, const char *s2, __SIZE_TYPE__ len) __ksym;
extern int bpf_strcasestr(const char *s1, const char *s2) __ksym;
extern int bpf_strncasestr(const char *s1, const char *s2, __SIZE_TYPE__ len) __ksym;
#endif

char buf[STR_BUF_SIZE];

static __always_inline const char *arg(__u32 off)
{
	if (off == STR_CALL_NULL)
		return (const char *)0;
	return buf + (off & (STR_BUF_SIZE - 1));
}

SEC("syscall")
int str_call(struct str_call *k)
{
	const char *a = arg(k->off_a), *b = arg(k->off_b);
	__u64 n = k->n;
	int r;

	switch (k->fn) {
#ifndef STR_NEW_KFUNCS
	case STR_FN_STRCMP:
		r = bpf_strcmp(a, b);
		break;
	case STR_FN_STRCASECMP:
		r = bpf_strcasecmp(a, b);
		break;
	case STR_FN_STRCHR:
		r = bpf_strchr(a, (char)k->c);
		break;
	case STR_FN_STRCHRNUL:
		r = bpf_strchrnul(a, (char)k->c);
		break;
	case STR_FN_STRNCHR:
		r = bpf_strnchr(a, n, (char)k->c);
		break;
	case STR_FN_STRRCHR:
		r = bpf_strrchr(a, k->c);
		break;
	case STR_FN_STRLEN:
		r = bpf_strlen(a);
		break;
	case STR_FN_STRNLEN:
		r = bpf_strnlen(a, n);
		break;
	case STR_FN_STRSPN:
		r = bpf_strspn(a, b);
		break;
	case STR_FN_STRCSPN:
		r = bpf_strcspn(a, b);
		break;
	case STR_FN_STRSTR:
		r = bpf_strstr(a, b);
		break;
	case STR_FN_STRNSTR:
		r = bpf_strnstr(a, b, n);
		break;
#else
	case STR_FN_STRNCASECMP:
		r = bpf_strncasecmp(a, b, n);
		break;
	case STR_FN_STRCASESTR:
		r = bpf_strcasestr(a, b);
		break;
	case STR_FN_STRNCASESTR:
		r = bpf_strncasestr(a, b, n);
		break;
#endif
	default:
		return 1; /* not in this object */
	}
	k->ret = r;
	return 0;
}

/* Kfuncs may only be called from GPL-compatible programs. */
char _license[] SEC("license") = "Dual BSD/GPL";
