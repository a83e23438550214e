/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "core/opts.h"

bool opts_tail_zero(const void *p, size_t known_size, size_t sz)
{
	for (size_t i = known_size; i < sz; i++)
		if (((const unsigned char *)p)[i])
			return false;
	return true;
}

int opts_check(const void *opts, size_t known_size)
{
	size_t sz;

	if (!opts)
		return 0;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	return opts_tail_zero(opts, known_size, sz) ? 0 : -EINVAL;
}
