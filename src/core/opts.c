/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "core/opts.h"

int opts_check(const void *opts, size_t known_size)
{
	size_t sz;
	const unsigned char *p = opts;

	if (!opts)
		return 0;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = known_size; i < sz; i++)
		if (p[i])
			return -EINVAL;
	return 0;
}
