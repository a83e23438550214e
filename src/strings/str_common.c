/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The data every implementation table reads: the case-folding table and the
 * careful-mode flag (str_internal.h).  Apart from str_dispatch.c, which names
 * the tables, so that no file of strings/ depends on another in a circle.
 */
#include <stdbool.h>

#define STR_TARGET
#include "strings/str_internal.h"

/* The kernel's ctype tolower(): 'A'-'Z' and Latin-1 0xC0-0xDE but 0xD7. */
#define F1(c)                                                                       \
	(unsigned char)((((c) >= 'A' && (c) <= 'Z') || ((c) >= 0xc0 && (c) <= 0xde && (c) != 0xd7)) \
				? (c) + 0x20                                                \
				: (c))
#define F4(c) F1(c), F1((c) + 1), F1((c) + 2), F1((c) + 3)
#define F16(c) F4(c), F4((c) + 4), F4((c) + 8), F4((c) + 12)
#define F64(c) F16(c), F16((c) + 16), F16((c) + 32), F16((c) + 48)
const unsigned char bpfmap_str_fold[256] = {F64(0), F64(64), F64(128), F64(192)};

bool bpfmap_str_careful;
