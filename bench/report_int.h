/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --report's insides: what it measured (report.c measures, report_print.c
 * prints the tables and checks the targets of issue #4).
 */
#ifndef BPFMAP_BENCH_REPORT_INT_H
#define BPFMAP_BENCH_REPORT_INT_H

#include "bench.h"
#include "table.h"

#define MAX_FAILURES 128
#define REPORT_MAX_BIG 8   /* 1M/1M key sizes */
#define REPORT_MAX_MEM 12  /* key/value sizes of the memory table */
#define REPORT_MAX_CONC 4  /* workloads of the concurrency table */
#define REPORT_BIG_BULK 16 /* keys per bpfmap_lookup_bulk() in the 1M/1M row */
#define REPORT_BIG_ENTRIES 1000000
#define REPORT_MEM_ENTRIES 1000000
/* Quick: the other memory rows at 1M / 8, whose buckets round up to a power
 * of two by the same factor as 1M's (1.049), in an eighth of the time. */
#define REPORT_MEM_ENTRIES_QUICK 125000

/* A cell that did not run, for the footnotes. */
struct failure {
	char what[48];
	const char *backend;
	char error[256];
};

/* bpfmap and the kernel on the same row. */
struct pair {
	double lib, kern;
};

/* Lookups in a 1M/1M map: single lookups on both sides, --bulk on bpfmap's. */
struct big_row {
	uint32_t key_size;
	double lib, bulk, kern;
};

/* Bytes per element of a full preallocated map of @entries. */
struct mem_row {
	uint32_t key_size, value_size, entries;
	double lib, kern;
	double target; /* the bound for bpfmap */
};

/*
 * One side of a concurrency row: M lookups/s per producer.  Each CPU's single
 * producer rate is its own base (a shared machine may load one CPU more than
 * the other): 2 producers on CPUs 0 and 1 are compared with the mean of the
 * single rates on CPU 0 and on CPU 1, the producer on CPU 0 that has a
 * writer beside it with the single rate on CPU 0.
 */
struct conc_side {
	double one;         /* 1 producer on CPU 0: the mean of a cell before and
			     * one after the others */
	double one_cpu1;    /* 1 producer on CPU 1 */
	double two_total;   /* 2 producers, pinned to CPUs 0 and 1: their sum */
	double with_writer; /* 1 producer on CPU 0, a writer overwriting on CPU 1 */
	double writer_mops; /* the writer's own rate */
	uint64_t misses;    /* lookups that missed under the writer */
};

/* two_total over the mean single rate of CPUs 0 and 1 (2.0: perfect). */
static inline double conc_scaling(const struct conc_side *s)
{
	return s->two_total / ((s->one + s->one_cpu1) / 2);
}

struct conc_row {
	char label[32]; /* "medium k=8" */
	struct conc_side lib, kern;
};

struct report {
	struct bench_env *env; /* the user's flags (out, json, backends) */
	struct bench_env cenv; /* what each cell runs with */
	const struct bench_args *user;
	bool full;
	int cell, cells;
	char kernel_note[160]; /* how the kernel side ran, from its first cell */
	struct failure failures[MAX_FAILURES];
	int nfail;

	struct grid lib, kern, ratio; /* lookups: small/medium/large (+ 1M/1M) x key size */
	struct big_row big[REPORT_MAX_BIG];
	int nbig;
	struct pair upd, ovw;
	struct mem_row mem[REPORT_MAX_MEM];
	int nmem;
	struct conc_row conc[REPORT_MAX_CONC];
	int nconc;
	bool conc_two; /* the 2-producer cells ran (2 CPUs or more) */
};

static inline bool report_want(const struct report *rp, enum backend b)
{
	return rp->env->backends & b;
}

/* report_print.c */
void report_print(struct report *rp, double load0, double load1, double wall_s);

#endif
