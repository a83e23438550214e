/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Layouts shared by the BPF programs (clang -target bpf) and bpfmap-bench
 * (user space).  Each program keeps all its globals in one struct in .bss so
 * both sides agree on offsets; user space reads and writes it through libbpf's
 * mmap of the .bss map while the program runs.
 */
#ifndef BPFMAP_BENCH_BPF_SHARED_H
#define BPFMAP_BENCH_BPF_SHARED_H

#include <linux/types.h>

/* CPU slots: results are kept per CPU, indexed by cpu & (BENCH_MAX_CPUS - 1). */
#define BENCH_MAX_CPUS 128

/* Longest key of the lookup benchmark (the selftest's limit). */
#define LOOKUP_MAX_KEY 1024

/* What one CPU accumulated: events done, nanoseconds spent doing them (timed
 * inside the program with bpf_ktime_get_ns), and events that went wrong.
 * A cache line each, so CPUs do not share one. */
struct bench_cpu_stats {
	__u64 events;
	__u64 ns;
	__u64 errors;
	__u64 seq; /* sequence count: odd while a run's results are being added */
	__u64 pad[4];
} __attribute__((aligned(64)));

/* Header common to every program: whether to run, and who may trigger it. */
struct bench_gate {
	__u32 enabled;    /* 0: the program returns at once */
	__u32 tgid;       /* only this process triggers it */
	__u32 trigger_nr; /* syscall number seen by the raw_tp/sys_enter entry */
	__u32 pad;
};

struct lookup_state {
	struct bench_gate gate;
	__u32 key_size;
	__u32 nr_entries; /* inner loop: keys 0 .. nr_entries - 1 */
	__u32 nr_outer;   /* outer loop: nr_loops / nr_entries */
	__u32 pad;
	struct bench_cpu_stats cpu[BENCH_MAX_CPUS];
	/* One key buffer per CPU, so producers on different CPUs never patch
	 * each other's key (the selftest has one global key and one producer). */
	__u8 key[BENCH_MAX_CPUS][LOOKUP_MAX_KEY];
};

enum update_mode {
	UPDATE_FULL = 0,      /* absent key into a full map: every update fails */
	UPDATE_OVERWRITE = 1, /* present keys, BPF_ANY: every update succeeds */
	UPDATE_EVICT = 2,     /* new keys into a full LRU map: every update evicts */
};

/* UPDATE_EVICT: producer p's n-th key, never present before (the map is
 * filled with keys 0 .. max_entries - 1, below 1 << UPDATE_EVICT_BITS). */
#define UPDATE_EVICT_BITS 24
#define UPDATE_EVICT_KEY(p, n) \
	((((__u32)(p) + 1) << UPDATE_EVICT_BITS) | ((n) & ((1u << UPDATE_EVICT_BITS) - 1)))

struct update_state {
	struct bench_gate gate;
	__u32 mode;        /* enum update_mode */
	__u32 nr_updates;  /* updates per run (the selftest: 10,000) */
	__u32 max_entries; /* keys 0 .. max_entries - 1 are present */
	__u32 pad;
	struct bench_cpu_stats cpu[BENCH_MAX_CPUS];
	__u32 evict_next[BENCH_MAX_CPUS]; /* UPDATE_EVICT: each CPU's next n */
};

/* lru-hit: the trace's keys; a scan key (never seen again) has this bit. */
#define LRU_HIT_SCAN_BIT 0x80000000u

struct lru_hit_state {
	struct bench_gate gate;
	__u32 n;      /* trace entries to replay per trigger */
	__u32 done;   /* triggers completed */
	__u64 hits;   /* lookups of non-scan keys that hit */
	__u64 misses; /* lookups of non-scan keys that missed (then inserted) */
	__u64 errors; /* failed inserts */
	__u64 ns;     /* the last replay's time */
};

/* htab-mem: one batch of HTAB_MEM_BATCH operations per trigger. */
#define HTAB_MEM_BATCH 64
#define HTAB_MEM_MAX_SLOTS 64

enum htab_mem_op {
	HTAB_MEM_OP_NONE = 0,
	HTAB_MEM_OP_OVERWRITE = 1, /* 64 updates, BPF_ANY */
	HTAB_MEM_OP_ADD_DEL = 2,   /* 64 updates then 64 deletes: counts 2 */
	HTAB_MEM_OP_ADD = 3,       /* 64 updates, BPF_NOEXIST */
	HTAB_MEM_OP_DEL = 4,       /* 64 deletes */
};

struct htab_mem_slot {
	__u32 tid;       /* the producer thread owning this slot */
	__u32 op;        /* enum htab_mem_op, set up before the run starts */
	__u32 key_base;  /* keys key_base + i * key_stride */
	__u32 key_stride;
	__u32 pad[4];
	struct bench_cpu_stats stats;
};

/* Largest value the kernel side handles (the update needs a buffer that big). */
#define HTAB_MEM_MAX_VALUE 4096

struct htab_mem_state {
	struct bench_gate gate;
	__u32 nr_slots;
	__u32 pad[3];
	struct htab_mem_slot slot[HTAB_MEM_MAX_SLOTS];
	__u8 value[HTAB_MEM_MAX_VALUE]; /* the value every update stores */
};

#endif
