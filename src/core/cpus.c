/* SPDX-License-Identifier: BSD-2-Clause */
/* bpfmap_num_possible_cpus: util/cpu.c reads them. */
#include <errno.h>

#include <bpfmap.h>

#include "util/cpu.h"

int bpfmap_num_possible_cpus(void)
{
	int n = cpu_possible();

	if (n <= 0)
		errno = -n;
	return n;
}
