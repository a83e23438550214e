/* SPDX-License-Identifier: BSD-2-Clause */
/* The calling thread's CPU (util/cpu.h): the rseq offset's copy, the
 * possible CPUs and whether rseq's CPU numbers index per-CPU slots, and the
 * fallback. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cpu.h"

#ifdef CPU_HAVE_RSEQ
ptrdiff_t cpu_rseq_offset;

__attribute__((constructor)) static void cpu_rseq_offset_init(void)
{
	cpu_rseq_offset = __rseq_offset;
}
#endif

bool cpu_rseq_indexes;

/* Possible CPUs, read the way libbpf reads them (a range list such as
 * "0-3,8") so that per-CPU buffers have the same size for this library and
 * the kernel. */
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
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int n = -ENOENT;

	/* The whole line or nothing: a count from part of it would be too
	 * low for the CPU numbers rseq gives. */
	if (f) {
		if (fgets(buf, sizeof(buf), f) && (strchr(buf, '\n') || feof(f)))
			n = parse_cpu_list(buf);
		fclose(f);
	}
	if (n > 0) {
#ifdef CPU_HAVE_RSEQ
		/* The offset first: a constructor of the program's may make a
		 * per-CPU map before this library's own copied it, and an
		 * unchecked index read at offset 0 is no CPU number. */
		if (__rseq_size) { /* glibc registered rseq */
			__atomic_store_n(&cpu_rseq_offset, __rseq_offset, __ATOMIC_RELAXED);
			__atomic_store_n(&cpu_rseq_indexes, true, __ATOMIC_RELEASE);
		}
#endif
		return n;
	}
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	return conf > 0 ? (int)conf : -ENODEV;
}

int cpu_possible(void)
{
	static int cached;
	int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (n > 0)
		return n;
	n = read_possible_cpus();
	if (n > 0)
		__atomic_store_n(&cached, n, __ATOMIC_RELAXED);
	return n;
}

uint32_t cpu_current_slow(void)
{
	return (uint32_t)sched_getcpu();
}

uint32_t cpu_shards(void)
{
	int cpus = cpu_possible();
	uint32_t n = 1;

	if (cpus < 2)
		return 0;
	while (n < (uint32_t)cpus && n < 64)
		n *= 2;
	return n;
}
