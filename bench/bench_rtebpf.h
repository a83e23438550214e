/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rte-bpf: examples/rte_bpf/flow_count.bpf.c over one synthetic trace in
 * DPDK's rte_bpf (JIT, interpreter) on bpfmap's maps, the same logic in C,
 * and the kernel's XDP.  Shared by:
 *   bench_rtebpf.c         the bpfmap columns' passes, setup, the rounds in
 *                          which the columns take turns, bpfmap's checks, the
 *                          entry points (the bench, rtebpf_measure())
 *   bench_rtebpf_kernel.c  the kernel's columns: the object loaded with
 *                          libbpf, the programs held in the XDP dispatcher,
 *                          their pass (BPF_PROG_TEST_RUN), the kernel's check
 *   bench_rtebpf_print.c   the figures (medians, ratios to the JIT) and the
 *                          output: table, verdict, JSON
 * bench_rtebpf.c calls into the other two; they call neither it nor each other.
 */
#ifndef BPFMAP_BENCH_RTEBPF_H
#define BPFMAP_BENCH_RTEBPF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <bpfmap.h>
#include <bpfmap_rtebpf.h>

#include "bench.h"
#include "flow_trace.h"

/* The embedded objects: flow_count as examples/ builds it, and ours. */
extern const unsigned char bpf_obj_flow_count[], bpf_obj_xdp_empty[];
extern const size_t bpf_obj_flow_count_len, bpf_obj_xdp_empty_len;

#define RB_BURST 32     /* packets per read-side section */
/* Runs of each packet per BPF_PROG_TEST_RUN.  A call's first run finds
 * the caches and TLB as the syscall's entry left them (here 680-750 ns net
 * of the empty program, against 420-435 from 16 repeats on: the plateau),
 * so the kernel gets repeats; few enough that each packet of the trace
 * still takes its turn rather than one hot packet standing for all. */
#define RB_REPEAT 16
/* A column's turn in a round: untimed passes for RB_SETTLE_NS (after another
 * column, above all the kernel's test runs, this machine took up to 6 ms to
 * run the JIT at its own pace again), then timed passes for RB_TURN_NS. */
#define RB_SETTLE_NS 5000000ull
#define RB_TURN_NS 10000000ull

enum { RB_JIT, RB_INTERP, RB_C, RB_KERN, RB_EMPTY, RB_NCOLS };

struct rb_col {
	const char *label;    /* in the table */
	const char *name;     /* in the JSON */
	const char *backend;  /* "lib" or "kernel" */
	bool ok;
	char why[200];        /* why it did not run, or went wrong */
	double *ns;           /* ns per packet in each measured round */
	uint64_t passes;      /* runs of each packet so far, untimed passes too */
	struct bpfmap *flows, *stats;
	struct bpfmap_rtebpf_prog *prog;
	int fd;               /* kernel: the program */
};

struct bpf_object;

struct rb_kern {
	struct bpf_object *obj, *empty;
	int flows_fd, stats_fd;
	int nsfd[2];        /* the network namespaces holding the programs (-1: none) */
	char hold_why[160]; /* why they are not held ("" when they are) */
};

struct rb_run {
	const struct bench_env *env;
	struct flow_trace t;
	struct flow_expect once; /* what one pass leaves */
	void **ctx;              /* &t.pkts[i], for run_burst */
	uint64_t *rc;
	bpfmap_rtebpf_jit_fn jit;
	struct rb_kern kern;
	struct rb_col col[RB_NCOLS];
	uint32_t repeat;          /* the kernel's timed passes */
	double *turn;             /* the passes of a turn, RB_TURN_MAX */
	int rounds;               /* measured */
	int cpu;                  /* the thread's (-1: not pinned) */
	bool bad;                 /* a column computed something else */
	char kern_why[200];       /* why the kernel's columns did not run at all */
};

/* What one column's rounds come to. */
struct rb_fig {
	double ns;              /* median ns per packet */
	double vs_jit;          /* the median over the rounds of ns / JIT's ns */
	double vs_lo, vs_hi;    /* their range */
};

static inline bool rb_is_kern(int c)
{
	return c == RB_KERN || c == RB_EMPTY;
}

/* Column @c did not run or went wrong: why, in its row. */
static inline void rb_col_fail(struct rb_col *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void rb_col_fail(struct rb_col *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	c->ok = false;
}

/* bench_rtebpf_kernel.c */
/* Load both objects and hold their programs; on failure both kernel
 * columns fail and rr->kern_why says why. */
void rb_kern_setup(struct rb_run *rr);
/* Every packet through BPF_PROG_TEST_RUN, @repeat runs each: ns per packet,
 * or NAN when the column failed. */
double rb_pass_kern(struct rb_run *rr, struct rb_col *c, uint32_t repeat);
/* The kernel's maps against the C reference for c->passes passes. */
void rb_kern_check(struct rb_run *rr, struct rb_col *c);
/* Release the namespaces (and with them the attachments) and the objects. */
void rb_kern_close(struct rb_kern *k);

/* bench_rtebpf_print.c */
/* The median of @n figures (sorts a copy); NAN when none. */
double rb_median(const double *v, int n);
/* Per round: @col's ns per packet (the kernel's net of the empty program's
 * when @net) over the JIT's; their median and range. */
struct rb_fig rb_figure(const struct rb_run *rr, int col, bool net);
/* The table (and with --json an object per column) of a finished run. */
void rb_print_table(const struct rb_run *rr, const char *name);

#endif
