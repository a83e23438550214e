// SPDX-License-Identifier: BSD-2-Clause
/*
 * str-kfuncs' "bytewise" column: the kfuncs as a plain loop over one byte at
 * a time, written from their documented semantics (bpfmap.h, the kernel's
 * kfunc documentation): indices, -ENOENT, -E2BIG after BSTR_MAX bytes.  This
 * is what the kernel's kfuncs do, minus their per-byte fault-tolerant loads.
 * It lives in its own file (built with -fno-tree-vectorize) so the compiler
 * neither inlines it into the timing loop nor vectorizes it.
 */
#include <errno.h>

#include "bench_str.h"

int bytewise_strnchr(const char *s, size_t count, char c)
{
	size_t i;

	for (i = 0; i < count && i < BSTR_MAX; i++) {
		if (s[i] == c)
			return (int)i;
		if (!s[i])
			return -ENOENT;
	}
	return i == BSTR_MAX ? -E2BIG : -ENOENT;
}

int bytewise_strcmp(const char *s1, const char *s2)
{
	for (size_t i = 0; i < BSTR_MAX; i++) {
		unsigned char c1 = (unsigned char)s1[i], c2 = (unsigned char)s2[i];

		if (c1 != c2)
			return c1 < c2 ? -1 : 1;
		if (!c1)
			return 0;
	}
	return -E2BIG;
}

int bytewise_strcspn(const char *s, const char *reject)
{
	for (size_t i = 0; i < BSTR_MAX; i++) {
		size_t j;

		if (!s[i])
			return (int)i;
		for (j = 0; j < BSTR_MAX && reject[j]; j++)
			if (reject[j] == s[i])
				return (int)i;
		if (j == BSTR_MAX)
			return -E2BIG;
	}
	return -E2BIG;
}

int bytewise_strnstr(const char *s1, const char *s2, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < BSTR_MAX; i++) {
		for (size_t j = 0;; j++) {
			if (j == BSTR_MAX)
				return -E2BIG;
			if (!s2[j])
				return (int)i; /* the whole needle matched */
			if (i + j == len || !s1[i + j])
				return -ENOENT; /* no room left for a match */
			if (s1[i + j] != s2[j])
				break;
		}
	}
	/* An empty needle matches at 0 even when len is 0. */
	if (!len && !s2[0])
		return 0;
	return i == BSTR_MAX ? -E2BIG : -ENOENT;
}
