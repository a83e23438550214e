/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The public string calls as one more version (struct str_ops), for the
 * tests that run every version the dispatcher offers.  Include after
 * strings/str_internal.h.
 */
#ifndef BPFMAP_TESTS_STRINGS_PUBLIC_H
#define BPFMAP_TESTS_STRINGS_PUBLIC_H

#include <bpfmap.h>

/* The public calls, as one more version. */
static const struct str_ops strings_public_ops = {
	.name = "public",
	.strcmp = bpfmap_strcmp,
	.strcasecmp = bpfmap_strcasecmp,
	.strncasecmp = bpfmap_strncasecmp,
	.strchr = bpfmap_strchr,
	.strchrnul = bpfmap_strchrnul,
	.strnchr = bpfmap_strnchr,
	.strrchr = bpfmap_strrchr,
	.strlen = bpfmap_strlen,
	.strnlen = bpfmap_strnlen,
	.strspn = bpfmap_strspn,
	.strcspn = bpfmap_strcspn,
	.strstr = bpfmap_strstr,
	.strnstr = bpfmap_strnstr,
	.strcasestr = bpfmap_strcasestr,
	.strncasestr = bpfmap_strncasestr,
};

#endif
