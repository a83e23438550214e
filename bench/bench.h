/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfmap-bench: types shared by the framework, the benchmarks and the output.
 *
 * A benchmark is run as one or more *cells*: one workload (bench_args) on one
 * backend (bpfmap, or the running kernel's BPF maps), measured by the
 * framework (framework.c) the way the kernel's selftests bench does it:
 * producer threads, a sample a second, warm-up samples dropped, mean ± stddev.
 */
#ifndef BPFMAP_BENCH_H
#define BPFMAP_BENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_PRODUCERS 64

enum backend {
	BACKEND_LIB = 1 << 0,
	BACKEND_KERNEL = 1 << 1,
	BACKEND_BOTH = BACKEND_LIB | BACKEND_KERNEL,
};

/* Framework settings: the kernel bench's global flags plus ours. */
struct bench_env {
	double warmup_s;   /* -w */
	double duration_s; /* -d */
	bool warmup_set, duration_set;
	int producers;     /* -p */
	bool affinity;     /* -a: pin producer i to CPU i (or the i-th of prod_cpus) */
	int prod_cpus[BENCH_MAX_PRODUCERS]; /* --prod-affinity list */
	int nr_prod_cpus;
	unsigned backends; /* enum backend bits, --backend */
	bool json;         /* --json: cells on stdout as JSON lines */
	bool verbose;      /* -v: a line per sample */
	bool progress;     /* the framework's own progress line on stderr */
	FILE *out;         /* tables: stdout, or stderr under --json */
};

/* Workload parameters: the union of every benchmark's own flags.  Zero means
 * "not given": each benchmark fills in its defaults. */
/* Most keys per bpfmap_lookup_bulk() call in the lookup benchmark. */
#define BENCH_MAX_BULK 64

struct bench_args {
	uint32_t map_type;   /* enum bpfmap_type; both backends use the same number */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t nr_entries;
	uint32_t nr_loops;
	uint32_t map_flags;
	bool map_flags_set;
	bool full_width_keys; /* write the key with full-width stores (see lookup) */
	bool via_lookup;      /* lookup, bpfmap side: bpfmap_lookup(), not the map's function */
	bool percpu_add;      /* percpu-count: bpfmap_percpu_add(), not lookup + atomic add */
	bool copy_out;        /* lookup, bpfmap side: bpfmap_lookup_elem() into a buffer */
#define BENCH_MAX_VALUE 4096  /* --copy_out's buffer */
	uint32_t bulk;        /* lookup, bpfmap side: keys per bpfmap_lookup_bulk(), 0 = single */
	bool writer;          /* lookup: one more thread overwrites present keys non-stop */
	char tag[32];         /* the report: what the cell is for, in its JSON ("" none) */
	int update_mode;      /* update cells: enum update_mode (bpf/bench_shared.h) */
	bool preallocated;    /* htab-mem: preallocate (default NO_PREALLOC) */
	char use_case[32];    /* htab-mem use case */
	char hash[16];        /* hash bench: the function measured */
	char isa[16];         /* str-kfuncs: bpfmap's versions to show ("all", "avx2", ...) */
};

/* What one producer-driven measurement accumulates; cumulative totals over
 * every producer (or CPU), read by the framework at each sample. */
struct counters {
	uint64_t events;
	uint64_t ns;     /* time spent producing them, as timed by the workload */
	uint64_t errors; /* events that did not do what they should (misses, ...) */
};

/* The outcome of one cell. */
struct cell_result {
	bool ok;
	char error[256];    /* why the cell did not run (ok == false) */
	char note[160];     /* how it ran, e.g. the kernel trigger used */
	const char *unit;   /* what an event is ("op" when NULL; htab-mem: "batch") */
	double mops;        /* mean of the samples: M events/s per producer */
	double mops_stddev;
	double mops_total;  /* mops x producers */
	int samples;
	int producers;
	uint64_t events;    /* events in the measured window */
	uint64_t errors;
	/* Extras; NAN when the bench does not measure them. */
	double bytes_per_elem;
	double mem_bytes;
	double mem_peak_bytes;
	/* The lookup benchmark's --writer thread (writer_mops NAN without one):
	 * M updates/s over its CPU time, updates done, updates that failed. */
	double writer_mops;
	uint64_t writer_updates, writer_errors;
	char writer_note[128];
};

/* One backend of one benchmark. */
struct cell_ops {
	const char *backend; /* "lib" or "kernel" */
	/* Build the map and state; on failure return NULL with r->error set. */
	void *(*setup)(const struct bench_args *a, const struct bench_env *env,
		       struct cell_result *r);
	/* Called in producer thread @idx (0-based); runs until *stop. */
	void (*producer)(void *st, int idx, int nr_producers, atomic_bool *stop);
	/* Cumulative counters, callable while producers run. */
	void (*measure)(void *st, struct counters *c);
	/* Optional: after every sample (e.g. to track peak memory). */
	void (*sample)(void *st, struct cell_result *r);
	/* Optional: after the producers stopped, before teardown. */
	void (*finish)(void *st, struct cell_result *r);
	void (*teardown)(void *st);
	/* Rate from wall-clock time (events / (elapsed x producers)) instead
	 * of the time the workload timed itself (events / ns). */
	bool wall_clock;
};

/* A benchmark of the registry. */
struct bench {
	const char *name;
	const char *summary;
	/* Runs the benchmark with the parsed flags; returns the exit status. */
	int (*run)(const struct bench *b, const struct bench_env *env, struct bench_args *a);
	/* NULL when available; otherwise fills @why and returns false. */
	bool (*available)(char *why, size_t len);
	/* Defaults for -w/-d when not given (0: the kernel bench's 1 s / 5 s). */
	double default_warmup_s, default_duration_s;
};

/* registry.c */
const struct bench *bench_find(const char *name);
void bench_list(FILE *f);
extern const struct bench *const bench_registry[];

/* framework.c: measure one cell.  Returns 0 when measured (r->ok), -1 when
 * setup refused (r->error says why). */
int cell_run(const struct cell_ops *ops, const struct bench_args *a,
	     const struct bench_env *env, const char *label, struct cell_result *r);

/* Pin the calling thread to CPU @cpu (nothing for -1): 0 or -errno. */
int bench_pin_self(int cpu);

/* The CPU producer @i runs on: -1 when not pinned (no -a, no --prod-affinity). */
int bench_producer_cpu(const struct bench_env *env, int i);
/* A CPU this process may run on that no producer is pinned to; -1 when the
 * producers are not pinned or every such CPU has one. */
int bench_spare_cpu(const struct bench_env *env);

/* The benchmarks (bench_*.c) */
extern const struct bench bench_lookup, bench_rlookup;
extern const struct bench bench_full_update, bench_rfull_update, bench_overwrite,
	bench_lru_full_update;
extern const struct bench bench_htab_mem, bench_rhtab_mem;
extern const struct bench bench_hash, bench_churn;
extern const struct bench bench_str_kfuncs, bench_lru_hit, bench_percpu_count;
extern const struct bench bench_rhash_grow, bench_rhash_mem;

/* Cell ops the report reuses. */
extern const struct cell_ops percpu_count_lib_ops;
extern const struct cell_ops lookup_lib_ops, lookup_kernel_ops;
extern const struct cell_ops update_lib_ops, update_kernel_ops;
/* Defaults and validation shared by the lookup bench and the report. */
int lookup_args_fill(struct bench_args *a, char *err, size_t len);
/* full update (overwrite == false) or overwrite defaults */
int update_args_fill(struct bench_args *a, int mode, char *err, size_t len);

/* The lookup benchmark's keys (the selftest's pattern): lookup_key_pattern()
 * fills the fixed words (word j >= 1 = 2654435761 * j) of a LOOKUP_MAX_KEY
 * buffer, lookup_key_set() writes word 0 = i + 1 with one 4-byte store. */
void lookup_key_pattern(uint8_t *key);
void lookup_key_set(uint8_t *key, uint32_t i);

/* The bytes of one value as the syscall view of @type copies it: a
 * round_up(value_size, 8) slot per possible CPU for the per-CPU types. */
uint32_t bench_value_bytes(uint32_t type, uint32_t value_size);
/* Store @v (8 bytes) at the start of every slot of such a buffer. */
void bench_value_fill(void *buf, uint32_t type, uint32_t value_size, uint64_t v);

/* lru-hit (bench_lru_hit.c), for the report: one stream's hit ratios. */
struct lru_hit_side {
	bool ok;
	double ratio, mops; /* hit ratio, M ops/s */
	char error[160];
};
struct lru_hit_row {
	double exact; /* an exact LRU's hit ratio */
	struct lru_hit_side lib, kern;
};
void lru_hit_args_fill(struct bench_args *a);
int lru_hit_measure(const struct bench_env *env, const struct bench_args *a, bool scan,
		    struct lru_hit_row *row);

/* rhash-grow and rhash-mem (bench_rhash.c), for the report. */
struct rhash_grow_side {
	/* floor_us: the longest gap of the reader's empty loop (bench_rhash.c) */
	double insert_s, max_us, p99999_us, floor_us;
	uint64_t lookups, misses, insert_errors;
	bool fifo; /* the reader ran SCHED_FIFO */
};
struct rhash_grow_row {
	uint32_t n;
	int rounds;
	double ratio; /* the median of each round's RHASH / HASH insert time */
	struct rhash_grow_side rhash, hash;
};
struct rhash_mem_row {
	/* back_1k: at once; back_1k_settled: once reclamation ran, after
	 * settle_ms. */
	size_t at_1k, at_500k, back_1k, back_1k_settled;
	double settle_ms;
	double peak_per_elem, per_elem_1m;
	uint32_t peak_at;
};
int rhash_grow_measure(const struct bench_env *env, uint32_t n, struct rhash_grow_row *row);
int rhash_mem_measure(struct rhash_mem_row *row);
void rhash_grow_print(FILE *f, const struct rhash_grow_row *row);
void rhash_mem_print(FILE *f, const struct rhash_mem_row *row);

/*
 * rte-bpf (bench_rtebpf.c, built only with DPDK's rte_bpf): one run of
 * flow_count.bpf.c over its trace, for the report's row.  M packets/s, NAN
 * where a column did not run (@why_lib / @why_kern say why).  The trace,
 * synthetic (flow_trace_make()), of the defaults:
 */
#define RTEBPF_PACKETS 4096 /* the trace's packets (rte-bpf's --nr_loops) */
#define RTEBPF_FLOWS 1024   /* its flows (--nr_entries) */
struct rtebpf_figs {
	double jit_mpps;  /* rte_bpf's JIT on bpfmap's maps */
	double kern_mpps; /* the kernel's XDP, net of an empty program's run */
	char why_lib[256], why_kern[256];
};
/* 0, or -1 when setup failed or a column's maps differ from the C
 * reference (why_lib says which). */
int rtebpf_measure(const struct bench_env *env, struct rtebpf_figs *out);

/* True when bpfmap_create() accepts @type; otherwise says why. */
bool bench_map_type_available(uint32_t type, char *why, size_t len);
/* The same for BPFMAP_TYPE_RHASH: the .available hook of the RHASH benchmarks. */
bool bench_rhash_available(char *why, size_t len);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/*
 * CPU time of the calling thread in nanoseconds: what the library side's
 * timed runs are measured in.  The kernel's benchmark programs run in a
 * syscall that other tasks do not preempt (PREEMPT_NONE/VOLUNTARY), so their
 * bpf_ktime_get_ns() figure leaves out time other processes take; a user
 * thread's wall time would not, and a shared machine would make bpfmap look
 * slower than it is.  Spinning on a lock still counts, as in the kernel.
 */
uint64_t thread_cpu_ns(void);

#endif
