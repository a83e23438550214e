/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --report's insides: what it measured (report.c measures, report_print.c
 * prints the tables and checks the targets of issue #4).
 */
#ifndef BPFMAP_BENCH_REPORT_INT_H
#define BPFMAP_BENCH_REPORT_INT_H

#include <bpfmap.h>

#include "bench.h"
#include "bench_churn.h"
#include "report.h"
#include "table.h"

#define MAX_FAILURES 128
#define REPORT_MAX_BIG 8   /* 1M/1M key sizes */
#define REPORT_MAX_MEM 12  /* key/value sizes of the memory table */
#define REPORT_MAX_CONC 4  /* workloads of the concurrency table */
#define REPORT_MAX_CHURN 3 /* map sizes of the churn table */
#define REPORT_BIG_BULK 16 /* keys per bpfmap_lookup_bulk() in the 1M/1M row */
#define REPORT_BIG_ENTRIES 1000000
/* Least warm-up of a 1M/1M cell: the first passes over a freshly filled
 * map run slower (report.c), a 1M pass takes 7-50 ms here. */
#define REPORT_BIG_WARMUP_S 0.5
#define REPORT_MEM_ENTRIES 1000000
/* Quick: the other memory rows at 1M / 8, whose buckets round up to a power
 * of two by the same factor as 1M's (1.049), in an eighth of the time. */
#define REPORT_MEM_ENTRIES_QUICK 125000

/* A cell that did not run, for the footnotes. */
struct failure {
	char what[48];
	const char *backend;
	char error[256];
	int count, of; /* rounds it failed in, of rounds run (memory: 1) */
};

#define REPORT_PRESETS 3        /* small, medium, large */
#define REPORT_MAX_KEYS 10      /* key sizes of the lookup grid */

/*
 * One row of bpfmap against the kernel, measured in rounds: each round runs
 * both back to back (which goes first alternates), so the per-round ratio
 * compares figures taken under the same load.  NaN: not measured.
 */
struct rounds {
	double lib[REPORT_MAX_ROUNDS], kern[REPORT_MAX_ROUNDS];
	int n; /* rounds run */
};

void rounds_init(struct rounds *s);
double rounds_lib(const struct rounds *s);   /* the median of bpfmap's rounds */
double rounds_kern(const struct rounds *s);  /* the median of the kernel's */
double rounds_ratio(const struct rounds *s); /* the median of the per-round ratios */
/* The lowest and highest per-round ratio (NaN when none). */
void rounds_ratio_range(const struct rounds *s, double *lo, double *hi);

/* Lookups in a 1M/1M map: single lookups on both sides; bpfmap's --bulk
 * against the same rounds' kernel single lookups. */
struct big_row {
	uint32_t key_size;
	struct rounds single, bulk;
};

/* Bytes per element of a full preallocated map of @entries. */
struct mem_row {
	uint32_t type; /* 0: HASH */
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
	double scaling;     /* two_total over the mean single rate of CPUs 0 and
			     * 1 (2.0: perfect) */
	double writer_ratio; /* with_writer over one */
	uint64_t misses;    /* lookups that missed under the writer */
};

/* One side of a row over the rounds: the median of each figure and of each
 * round's ratios, the misses of all rounds. */
void conc_median(const struct conc_side *v, int n, struct conc_side *out);

struct conc_row {
	char label[32]; /* "medium k=8" */
	struct conc_side lib_r[REPORT_MAX_ROUNDS], kern_r[REPORT_MAX_ROUNDS];
	int n;                 /* rounds run */
	struct conc_side lib, kern; /* their medians */
};

/*
 * --json prints one object per cell after the last round: the round whose
 * figure is the median (with the median as its figure), so --compare reads
 * one cell as before.  Each measured round is kept here until then.
 */
struct report_slot {
	char what[64];
	const char *bench, *backend;
	struct bench_args a;
	struct cell_result r[REPORT_MAX_ROUNDS];
	int n;
};

/*
 * Issue 16's rows: lookups on the three newer types over the presets and
 * four key sizes, evicting inserts by 1 and 2 producers, the lru-hit
 * streams, per-CPU counter increments by 1 and 2 threads, and bytes per
 * element (report_types.c).
 */
#define TYPES_N 3    /* PERCPU_HASH, LRU_HASH, LRU_PERCPU_HASH */
#define TYPES_KEYS 4 /* 4, 8, 32, 256 */
struct types_rows {
	struct rounds look[TYPES_N][REPORT_PRESETS][TYPES_KEYS];
	/* bpfmap's HASH on the same cell, measured just before each type's
	 * (bpfmap alone: the other side of the "vs bpfmap's HASH" row). */
	struct rounds look_hash[TYPES_N][REPORT_PRESETS][TYPES_KEYS];
	struct rounds evict1, evict2; /* per producer; 2: their total */
	struct rounds count1, count2; /* bpfmap alone (kern NaN); 2: the total */
	uint64_t count_errors;        /* increments lost, every round */
	struct lru_hit_row hit[2];    /* zipf, zipf + scan */
	struct mem_row mem[2];        /* LRU_HASH 8 + 8, PERCPU_HASH 8 + 8 */
};
extern const enum bpfmap_type types_of_rows[TYPES_N];
extern const uint32_t types_keys[TYPES_KEYS];

/* RHASH (issue 17): lookups of 8-byte keys against the kernel's HASH, the
 * grid and the update rows against bpfmap's HASH, memory and growth
 * (report_rhash.c). */
#define RHASH_BIG 4
struct rhash_big {
	uint32_t max_entries, nr_entries;
};
extern const struct rhash_big rhash_bigs[RHASH_BIG];
struct rhash_rows {
	struct rounds big[RHASH_BIG];
	/* bpfmap alone: RHASH, and bpfmap's HASH on the same cell measured
	 * just before it in the same round (the ratio's other side). */
	struct rounds look[REPORT_PRESETS][REPORT_MAX_KEYS];
	struct rounds look_hash[REPORT_PRESETS][REPORT_MAX_KEYS];
	struct rounds upd, ovw, upd_hash, ovw_hash;
	struct rhash_mem_row mem;
	struct rhash_grow_row grow;
	bool mem_ok, grow_ok;
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

	int rounds;           /* --rounds */
	struct report_slot *slots; /* every cell's rounds, for --json */
	int nslots, slots_cap;

	struct rounds look[REPORT_PRESETS][REPORT_MAX_KEYS];
	/* bpfmap alone, issue 15: copy-out lookups (bpfmap_lookup_elem) in the
	 * lib slots, the same cell through bpfmap_lookup() in the kern slots,
	 * so that the rounds' ratio is copy-out / program view. */
	struct rounds copy[REPORT_PRESETS][REPORT_MAX_KEYS];
	struct grid copy_ratio;
	/* Lookups: small/medium/large (+ 1M/1M) x key size: the medians, and the
	 * range of the per-round ratios. */
	struct grid lib, kern, ratio, ratio_lo, ratio_hi;
	struct big_row big[REPORT_MAX_BIG];
	int nbig;
	struct rounds upd, ovw;
	struct mem_row mem[REPORT_MAX_MEM];
	int nmem;
	struct conc_row conc[REPORT_MAX_CONC];
	int nconc;
	bool conc_two; /* the 2-producer cells ran (2 CPUs or more) */
	struct churn_result churn[REPORT_MAX_CHURN]; /* bpfmap's own, fresh against churned */
	int nchurn;
	struct types_rows types;
	struct rhash_rows rhash;
	struct rounds rte; /* rte_bpf's JIT (lib) against the kernel's XDP, M packets/s */
};


static inline bool report_want(const struct report *rp, enum backend b)
{
	return rp->env->backends & b;
}

/* report.c, for report_types.c */
struct preset {
	const char *name;
	uint32_t max_entries, nr_entries, nr_loops;
};
extern const struct preset presets[REPORT_PRESETS];
struct failure *failed(struct report *rp, const char *what, const char *backend,
		       const char *error);
void progress(struct report *rp, const char *what, const char *backend);
double run_env(struct report *rp, const struct bench_env *env, const char *bench,
	       const char *what, const struct cell_ops *ops, const struct bench_args *a,
	       struct cell_result *out);
void run_round_lib(struct report *rp, int round, const char *bench, const char *what,
		   const struct cell_ops *ops, const struct bench_args *a, struct rounds *s);
void run_rounds_pair(struct report *rp, int round, const struct bench_env *env,
		     const char *bench, const char *what, const struct cell_ops *lib,
		     const struct bench_args *la, const struct cell_ops *kern,
		     const struct bench_args *ka, struct rounds *s);
int lookup_args(struct report *rp, struct bench_args *a, uint32_t key_size, uint32_t max,
		uint32_t nr, uint32_t nr_loops);
uint32_t preset_loops(const struct report *rp, const struct preset *ps);
/* The lookup grid's key sizes (quick or --full): their number, *@keys. */
size_t report_grid_keys(const struct report *rp, const uint32_t **keys);
struct bench_args kernel_args(const struct bench_args *a);

/* report_mem.c: bytes per element, for report.c and report_types.c */
double mem_lib(struct report *rp, const struct mem_row *m, const char *what);
double mem_kernel(struct report *rp, const struct mem_row *m, const char *what);
void report_mem(struct report *rp);
int report_mem_rows(const struct report *rp); /* quick or --full */

/* report_types.c */
void types_setup(struct report *rp);
void types_round(struct report *rp, int round);
void types_once(struct report *rp);
int types_cells(const struct report *rp, bool per_round);
void types_print(FILE *f, const struct report *rp);
double types_vs_hash(const struct report *rp, int i, int p, int k);

/* report_rhash.c */
void rhash_setup(struct report *rp);
void rhash_round(struct report *rp, int round);
void rhash_once(struct report *rp);
int rhash_cells(const struct report *rp, bool per_round);
void rhash_print(FILE *f, const struct report *rp);
double rhash_vs_hash(const struct report *rp, int p, int k);
/* The median over rounds of @num's bpfmap figure over @den's. */
double rounds_lib_ratio(const struct rounds *num, const struct rounds *den);

/* report_rtebpf.c; the row's name in Targets and in its report-ratio object */
#define RTEBPF_TARGET "rte_bpf JIT vs kernel XDP, flow_count"

void rtebpf_setup(struct report *rp);
void rtebpf_round(struct report *rp, int round);
int rtebpf_cells(const struct report *rp);

/* report_rounds.c: --json of the rounds */
void report_slot_add(struct report *rp, const char *bench, const char *what,
		     const char *backend, const struct bench_args *a, const struct cell_result *r);
/* One object per cell (its median round), then one per row of bpfmap
 * against the kernel ("bench": "report-ratio"). */
void report_slots_json(struct report *rp);
void report_ratio_json(const struct report *rp, const char *what, const struct rounds *s);

/* report_print.c */
/* @v with @fmt, or "-" as wide as a figure when it is not finite. */
void report_print_fig(FILE *f, double v, const char *fmt);
void report_print(struct report *rp, double load0, double load1, double wall_s);

#endif
