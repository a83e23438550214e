/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Byte-at-a-time model of the kernel's string kfuncs.  Each function walks
 * the strings the way the kernel's loops do (one byte per step, at most
 * REF_STR_MAX steps per loop), so the order in which it meets the terminator,
 * the bound and the step limit decides the result exactly as there.
 * A NULL pointer stands for an address the kernel may not read: -ERANGE.
 */
#include <errno.h>
#include <stdbool.h>

#include "strings_reference.h"

typedef unsigned char uchar;

unsigned char ref_fold(unsigned char c)
{
	bool ascii_upper = c >= 'A' && c <= 'Z';
	bool latin_upper = c >= 0xc0 && c <= 0xde && c != 0xd7;

	return ascii_upper || latin_upper ? (unsigned char)(c + 0x20) : c;
}

static uchar at(const char *s, size_t i)
{
	return (uchar)s[i];
}

static int ref_cmp(const char *s1, const char *s2, size_t len, bool fold)
{
	if (!s1 || !s2)
		return -ERANGE;
	size_t steps = len < REF_STR_MAX ? len : REF_STR_MAX;

	for (size_t i = 0; i < steps; i++) {
		uchar a = at(s1, i), b = at(s2, i);

		if (fold) {
			a = ref_fold(a);
			b = ref_fold(b);
		}
		if (a != b)
			return a < b ? -1 : 1;
		if (!a)
			return 0;
	}
	/* Ran out of steps: the bound (fine) or the kernel's limit. */
	return len < REF_STR_MAX ? 0 : -E2BIG;
}

int ref_strcmp(const char *s1, const char *s2)
{
	return ref_cmp(s1, s2, REF_STR_MAX, false);
}

int ref_strcasecmp(const char *s1, const char *s2)
{
	return ref_cmp(s1, s2, REF_STR_MAX, true);
}

int ref_strncasecmp(const char *s1, const char *s2, size_t len)
{
	return ref_cmp(s1, s2, len, true);
}

int ref_strnchr(const char *s, size_t count, char c)
{
	if (!s)
		return -ERANGE;
	size_t i;

	for (i = 0; i < count && i < REF_STR_MAX; i++) {
		if (at(s, i) == (uchar)c)
			return (int)i;
		if (!at(s, i))
			return -ENOENT;
	}
	return i == REF_STR_MAX ? -E2BIG : -ENOENT;
}

int ref_strchr(const char *s, char c)
{
	return ref_strnchr(s, REF_STR_MAX, c);
}

int ref_strchrnul(const char *s, char c)
{
	if (!s)
		return -ERANGE;
	for (size_t i = 0; i < REF_STR_MAX; i++)
		if (!at(s, i) || at(s, i) == (uchar)c)
			return (int)i;
	return -E2BIG;
}

int ref_strrchr(const char *s, int c)
{
	if (!s)
		return -ERANGE;
	int last = -ENOENT;

	for (size_t i = 0; i < REF_STR_MAX; i++) {
		/* An int against a byte value 0..255: -128 never matches. */
		if ((int)at(s, i) == c)
			last = (int)i;
		if (!at(s, i))
			return last;
	}
	return -E2BIG;
}

int ref_strnlen(const char *s, size_t count)
{
	if (!s)
		return -ERANGE;
	size_t i;

	for (i = 0; i < count && i < REF_STR_MAX; i++)
		if (!at(s, i))
			return (int)i;
	return i == REF_STR_MAX ? -E2BIG : (int)i;
}

int ref_strlen(const char *s)
{
	return ref_strnlen(s, REF_STR_MAX);
}

/*
 * strspn (want_in) and strcspn: for each byte of s, look it up in set,
 * byte by byte, until found or the set's NUL; the set lookup is itself
 * limited to REF_STR_MAX steps.
 */
static int ref_span(const char *s, const char *set, bool want_in)
{
	if (!s || !set)
		return -ERANGE;
	for (size_t i = 0; i < REF_STR_MAX; i++) {
		uchar c = at(s, i);
		size_t j;

		if (!c)
			return (int)i;
		for (j = 0; j < REF_STR_MAX; j++)
			if (at(set, j) == c || !at(set, j))
				break;
		if (j == REF_STR_MAX)
			return -E2BIG;
		bool in = at(set, j) != 0;

		if (in != want_in)
			return (int)i;
	}
	return -E2BIG;
}

int ref_strspn(const char *s, const char *accept)
{
	return ref_span(s, accept, true);
}

int ref_strcspn(const char *s, const char *reject)
{
	return ref_span(s, reject, false);
}

/*
 * For each start i (at most REF_STR_MAX of them) compare the needle byte by
 * byte; within one attempt, in this order: the needle's NUL means found; the
 * bound means nothing can be found; the haystack's NUL likewise; a mismatch
 * moves the start on.  An attempt may take at most REF_STR_MAX steps.
 */
int ref_search_from(const char *hay, const char *needle, size_t len, size_t start, bool fold,
		    size_t *where)
{
	size_t dummy;

	if (!where)
		where = &dummy;
	*where = REF_STR_MAX;
	if (!hay || !needle)
		return -ERANGE;
	for (size_t i = start; i < REF_STR_MAX; i++) {
		*where = i;
		size_t j;

		for (j = 0; i + j <= len && j < REF_STR_MAX; j++) {
			uchar n = at(needle, j);

			if (!n)
				return (int)i;
			if (i + j == len)
				return -ENOENT;
			uchar h = at(hay, i + j);

			if (fold) {
				h = ref_fold(h);
				n = ref_fold(n);
			}
			if (!h)
				return -ENOENT;
			if (h != n)
				break;
		}
		if (j == REF_STR_MAX)
			return -E2BIG;
	}
	*where = REF_STR_MAX;
	return -E2BIG;
}

static int ref_search(const char *hay, const char *needle, size_t len, bool fold)
{
	return ref_search_from(hay, needle, len, 0, fold, NULL);
}

int ref_strnstr(const char *s1, const char *s2, size_t len)
{
	return ref_search(s1, s2, len, false);
}

int ref_strstr(const char *s1, const char *s2)
{
	return ref_search(s1, s2, REF_STR_MAX, false);
}

int ref_strncasestr(const char *s1, const char *s2, size_t len)
{
	return ref_search(s1, s2, len, true);
}

int ref_strcasestr(const char *s1, const char *s2)
{
	return ref_search(s1, s2, REF_STR_MAX, true);
}
