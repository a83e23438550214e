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

/*
 * The possible CPUs: their count, libbpf's (the CPUs the kernel lists in
 * /sys/devices/system/cpu/possible, "0-3,8" being five), which sizes the
 * syscall view's per-CPU buffers; the slots, the highest one's number + 1,
 * which per-CPU maps keep so that a CPU number indexes them; and, only
 * where the list has gaps, the CPU of each rank in it, the buffers' layout
 * (the kernel's for_each_possible_cpu order).
 */
struct cpu_list {
	int count, slots;
	uint32_t *ranked;  /* NULL: dense, CPU r is rank r */
	uint32_t *rank_of; /* with ranked: each CPU number's rank, UINT32_MAX: none */
};

/* The list, published whole once read (atomic). */
static struct cpu_list *cpu_list_pub;

/* A range list such as "0-3,8" into *@l (its ranks allocated where it has
 * gaps); -errno if malformed or out of memory. */
static int parse_cpu_list(const char *list, struct cpu_list *l)
{
	int highest = -1, err = -EINVAL;
	bool *mask = NULL;

	/* Two passes over the same text: the first validates and finds the
	 * highest CPU, the second marks each. */
	for (int pass = 0; pass < 2; pass++) {
		const char *s = list;

		if (pass) {
			mask = calloc((size_t)highest + 1, sizeof(*mask));
			if (!mask)
				return -ENOMEM;
		}
		while (*s && *s != '\n') {
			char *end;
			long a = strtol(s, &end, 10), b = a;

			if (end == s || a < 0 || a >= CPU_SLOTS_MAX)
				goto bad;
			s = end;
			if (*s == '-') {
				b = strtol(s + 1, &end, 10);
				if (end == s + 1 || b < a || b >= CPU_SLOTS_MAX)
					goto bad;
				s = end;
			}
			if (pass)
				for (long c = a; c <= b; c++)
					mask[c] = true;
			else if (b > highest)
				highest = (int)b;
			if (*s == ',')
				s++;
			else if (*s && *s != '\n')
				goto bad;
		}
		if (highest < 0)
			goto bad;
	}
	l->slots = highest + 1;
	l->count = 0;
	for (int c = 0; c < l->slots; c++)
		l->count += mask[c];
	l->ranked = l->rank_of = NULL;
	err = 0;
	if (l->count < l->slots) {
		l->ranked = malloc((size_t)l->count * sizeof(*l->ranked));
		l->rank_of = malloc((size_t)l->slots * sizeof(*l->rank_of));
		if (!l->ranked || !l->rank_of) {
			free(l->ranked);
			free(l->rank_of);
			err = -ENOMEM;
			goto bad;
		}
		for (uint32_t c = 0, r = 0; c < (uint32_t)l->slots; c++) {
			l->rank_of[c] = mask[c] ? r : UINT32_MAX;
			if (mask[c])
				l->ranked[r++] = c;
		}
	}
bad:
	free(mask);
	return err;
}

static int read_possible_cpus(struct cpu_list *l)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int err = -ENOENT;

	/* The whole line or nothing: a count from part of it would be too
	 * low for the CPU numbers rseq gives. */
	if (f) {
		if (fgets(buf, sizeof(buf), f) && (strchr(buf, '\n') || feof(f)))
			err = parse_cpu_list(buf, l);
		fclose(f);
	}
	if (!err) {
#ifdef CPU_HAVE_RSEQ
		/* The offset first: a constructor of the program's may make a
		 * per-CPU map before this library's own copied it, and an
		 * unchecked index read at offset 0 is no CPU number. */
		if (__rseq_size) { /* glibc registered rseq */
			__atomic_store_n(&cpu_rseq_offset, __rseq_offset, __ATOMIC_RELAXED);
			__atomic_store_n(&cpu_rseq_indexes, true, __ATOMIC_RELEASE);
		}
#endif
		return 0;
	}
	if (err == -ENOMEM)
		return err;
	long conf = sysconf(_SC_NPROCESSORS_CONF);

	if (conf <= 0 || conf >= CPU_SLOTS_MAX)
		return -ENODEV;
	l->count = l->slots = (int)conf;
	l->ranked = l->rank_of = NULL;
	return 0;
}

/* The list, read once.  Threads that race read it alike; one publishes
 * its copy, and the others take that one without waiting for anything (a
 * signal handler may have interrupted the publisher on its own thread). */
static const struct cpu_list *cpu_list_get(int *err)
{
	struct cpu_list *l = __atomic_load_n(&cpu_list_pub, __ATOMIC_ACQUIRE), *expected = NULL;

	if (l)
		return l;
	l = malloc(sizeof(*l));
	if (!l) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = read_possible_cpus(l);
	if (*err) {
		free(l);
		return NULL;
	}
	if (__atomic_compare_exchange_n(&cpu_list_pub, &expected, l, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return l;
	free(l->ranked);
	free(l->rank_of);
	free(l);
	return expected;
}

int cpu_possible(void)
{
	int err;
	const struct cpu_list *l = cpu_list_get(&err);

	return l ? l->count : err;
}

int cpu_slots(void)
{
	int err;
	const struct cpu_list *l = cpu_list_get(&err);

	return l ? l->slots : err;
}

uint32_t cpu_rank_of(uint32_t cpu)
{
	int err;
	const struct cpu_list *l = cpu_list_get(&err);

	if (!l || cpu >= (uint32_t)l->slots)
		return UINT32_MAX;
	return l->rank_of ? l->rank_of[cpu] : cpu;
}

const uint32_t *cpu_ranked(void)
{
	int err;
	const struct cpu_list *l = cpu_list_get(&err);

	return l ? l->ranked : NULL;
}

uint32_t cpu_current_slow(void)
{
	return (uint32_t)sched_getcpu();
}

uint32_t cpu_shards(void)
{
	int cpus = cpu_slots();
	uint32_t n = 1;

	if (cpus < 2)
		return 0;
	while (n < (uint32_t)cpus && n < 64)
		n *= 2;
	return n;
}
