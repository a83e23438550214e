/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A plain byte-at-a-time model of the kernel's string kfuncs (6.18
 * kernel/bpf/helpers.c semantics, plus the later strncasecmp/strcasestr/
 * strncasestr), the oracle the string tests compare bpfmap_str*() against.
 * Same signatures and results as the library; no cleverness on purpose.
 */
#ifndef BPFMAP_TESTS_STRINGS_REFERENCE_H
#define BPFMAP_TESTS_STRINGS_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#define REF_STR_MAX 65536 /* XATTR_SIZE_MAX */

/* The kernel's tolower() on one byte (ASCII and Latin-1). */
unsigned char ref_fold(unsigned char c);

int ref_strcmp(const char *s1, const char *s2);
int ref_strcasecmp(const char *s1, const char *s2);
int ref_strncasecmp(const char *s1, const char *s2, size_t len);
int ref_strchr(const char *s, char c);
int ref_strchrnul(const char *s, char c);
int ref_strnchr(const char *s, size_t count, char c);
int ref_strrchr(const char *s, int c);
int ref_strlen(const char *s);
int ref_strnlen(const char *s, size_t count);
int ref_strspn(const char *s, const char *accept);
int ref_strcspn(const char *s, const char *reject);
int ref_strstr(const char *s1, const char *s2);
int ref_strnstr(const char *s1, const char *s2, size_t len);
int ref_strcasestr(const char *s1, const char *s2);
int ref_strncasestr(const char *s1, const char *s2, size_t len);

/*
 * The substring searches' loop from candidate position start on (0: the
 * functions above), for tests of a search that resumes where another left
 * off; *where (if not NULL) is set to the position that decided
 * (REF_STR_MAX if none did).
 */
int ref_search_from(const char *hay, const char *needle, size_t len, size_t start, bool fold,
		    size_t *where);

#endif
