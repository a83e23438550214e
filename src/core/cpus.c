/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Possible CPUs, read the way libbpf reads them (a range list such as "0-3,8")
 * so that per-CPU buffers have the same size for this library and the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpfmap.h>

static int parse_cpu_list(const char *s)
{
	int highest = -1;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		if (b > highest)
			highest = (int)b;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return highest < 0 ? -EINVAL : highest + 1;
}

static int read_possible_cpus(void)
{
	char buf[256];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int n = -ENOENT;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			n = parse_cpu_list(buf);
		fclose(f);
	}
	if (n > 0)
		return n;
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	return conf > 0 ? (int)conf : -ENODEV;
}

int bpfmap_num_possible_cpus(void)
{
	static int cached;
	int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (n > 0)
		return n;
	n = read_possible_cpus();
	if (n > 0)
		__atomic_store_n(&cached, n, __ATOMIC_RELAXED);
	else
		errno = -n;
	return n;
}
