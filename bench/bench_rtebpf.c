// SPDX-License-Identifier: BSD-2-Clause
/*
 * rte-bpf: one BPF program, examples/rte_bpf/flow_count.bpf.c (embedded as
 * built for the kernel), over one synthetic trace, in packets/s:
 *   JIT          its flow_rte entry in DPDK's rte_bpf on bpfmap's maps,
 *                JIT-compiled and called directly, one read-side section
 *                per burst of 32 packets
 *   interpreter  the same in rte_bpf's interpreter (bpfmap_rtebpf_run_burst)
 *   C            flow_count_c(): the same logic written in C on bpfmap's
 *                program view
 *   kernel       its flow_xdp entry in the running kernel, on the kernel's
 *                own LRU_HASH and HASH, with BPF_PROG_TEST_RUN per packet and
 *                a repeat count; the kernel times the repeat loop itself
 *   empty        an empty XDP program run the same way: the test run's own
 *                per-run cost, which "net" takes off the kernel's figure
 * Each column has maps of its own and runs the trace once before timing (the
 * flows are in the tables: a warm trace).  Then, for -w (dropped) and -d
 * seconds, rounds in which every column takes a turn of passes over the
 * trace (turn()); a figure is the median over the rounds, a ratio the median
 * of the rounds' ratios.  bpfmap's passes are timed in the thread's CPU
 * time, as the other benchmarks' (the kernel's clock does not run while it
 * reschedules either).  Afterwards every column's maps must hold exactly
 * what the C reference (flow_expect_make) says its passes leave; anything
 * else fails the run.  This file: the bpfmap columns, setup, the rounds,
 * bpfmap's checks and the entry points; the kernel's columns are in
 * bench_rtebpf_kernel.c, the figures and output in bench_rtebpf_print.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rtebpf.h"

#define RB_SEED 42
#define RB_TURN_MAX 4096 /* timed passes in one turn */
#define RB_MIN_ROUNDS 3
#define RB_MAX_ROUNDS 100000
#define RB_PROGRESS_NS 250000000ull

static const struct rb_col col_init[RB_NCOLS] = {
	[RB_JIT] = { .label = "rte_bpf JIT", .name = "jit", .backend = "lib" },
	[RB_INTERP] = { .label = "rte_bpf interpreter", .name = "interpreter", .backend = "lib" },
	[RB_C] = { .label = "C, flow_count_c()", .name = "c", .backend = "lib" },
	[RB_KERN] = { .label = "kernel XDP", .name = "kernel", .backend = "kernel" },
	[RB_EMPTY] = { .label = "kernel empty XDP", .name = "empty", .backend = "kernel" },
};

/* ---- the passes: each runs the whole trace once and returns ns per packet
 * (NAN when the column failed) ---- */

/* A pass of a bpfmap column counted @counted packets in flows: the C
 * reference's figure, or the column is wrong. */
static double lib_pass_done(struct rb_run *rr, struct rb_col *c, uint64_t counted, uint64_t ns)
{
	c->passes++;
	if (counted != rr->once.stats[FLOW_STAT_FLOW_PACKETS]) {
		rb_col_fail(c, "a pass returned 1 for %llu packets, the C reference counts %llu "
			       "in flows", (unsigned long long)counted,
			    (unsigned long long)rr->once.stats[FLOW_STAT_FLOW_PACKETS]);
		rr->bad = true;
		return NAN;
	}
	return (double)ns / rr->t.n;
}

static double pass_jit(struct rb_run *rr, struct rb_col *c)
{
	const struct flow_trace *t = &rr->t;
	bpfmap_rtebpf_jit_fn fn = rr->jit;
	uint64_t counted = 0, t0 = thread_cpu_ns();

	for (uint32_t i = 0; i < t->n; i += RB_BURST) {
		uint32_t end = t->n - i < RB_BURST ? t->n : i + RB_BURST;

		bpfmap_read_lock();
		for (uint32_t j = i; j < end; j++)
			counted += fn(&t->pkts[j]);
		bpfmap_read_unlock();
	}
	return lib_pass_done(rr, c, counted, thread_cpu_ns() - t0);
}

static double pass_interp(struct rb_run *rr, struct rb_col *c)
{
	uint32_t n = rr->t.n;
	uint64_t counted = 0, t0 = thread_cpu_ns(), ns;

	for (uint32_t i = 0; i < n; i += RB_BURST)
		bpfmap_rtebpf_run_burst(c->prog, &rr->ctx[i], &rr->rc[i],
					n - i < RB_BURST ? n - i : RB_BURST, 0);
	ns = thread_cpu_ns() - t0;
	for (uint32_t i = 0; i < n; i++)
		counted += rr->rc[i];
	return lib_pass_done(rr, c, counted, ns);
}

static double pass_c(struct rb_run *rr, struct rb_col *c)
{
	const struct flow_trace *t = &rr->t;
	uint64_t counted = 0, t0 = thread_cpu_ns();

	for (uint32_t i = 0; i < t->n; i += RB_BURST) {
		uint32_t end = t->n - i < RB_BURST ? t->n : i + RB_BURST;

		bpfmap_read_lock();
		for (uint32_t j = i; j < end; j++)
			counted += (uint64_t)flow_count_c(c->flows, c->stats, &t->pkts[j]);
		bpfmap_read_unlock();
	}
	return lib_pass_done(rr, c, counted, thread_cpu_ns() - t0);
}

/* One pass of column @col; @untimed: the kernel runs each packet once. */
static double pass(struct rb_run *rr, int col, bool untimed)
{
	struct rb_col *c = &rr->col[col];

	switch (col) {
	case RB_JIT:
		return pass_jit(rr, c);
	case RB_INTERP:
		return pass_interp(rr, c);
	case RB_C:
		return pass_c(rr, c);
	default:
		return rb_pass_kern(rr, c, untimed ? 1 : rr->repeat);
	}
}

/* ---- setup ---- */

static int trace_setup(struct rb_run *rr, uint32_t packets, uint32_t flows)
{
	if (flow_trace_make(&rr->t, packets, flows, RB_SEED) ||
	    flow_expect_make(&rr->t, 1, &rr->once))
		return -1;
	rr->ctx = calloc(packets, sizeof(*rr->ctx));
	rr->rc = calloc(packets, sizeof(*rr->rc));
	if (!rr->ctx || !rr->rc)
		return -1;
	for (uint32_t i = 0; i < packets; i++)
		rr->ctx[i] = &rr->t.pkts[i];
	return 0;
}

/* flow_rte, from the same embedded object as the kernel's, onto @c's maps. */
static int rte_load(struct rb_col *c)
{
	struct bpfmap_rtebpf_map maps[] = { { "flows", c->flows }, { "stats", c->stats } };
	char log[2048] = "";
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte", .ctx_size = sizeof(struct flow_pkt),
			   .log_buf = log, .log_size = sizeof(log));

	c->prog = bpfmap_rtebpf_load(bpf_obj_flow_count, bpf_obj_flow_count_len, maps, 2, &opts);
	if (c->prog)
		return 0;
	rb_col_fail(c, "bpfmap_rtebpf_load: %s: %s", strerror(errno), log);
	return -1;
}

/* A bpfmap column's maps, and for rte_bpf its program loaded onto them. */
static void lib_setup(struct rb_run *rr, int col)
{
	struct rb_col *c = &rr->col[col];
	int err = flow_maps_create(&c->flows, &c->stats);

	if (err) {
		rb_col_fail(c, "flow_maps_create: %s", strerror(-err));
		return;
	}
	if (col == RB_C)
		return;
	if (rte_load(c)) {
		rr->bad = true;
		return;
	}
	if (col == RB_JIT) {
		rr->jit = bpfmap_rtebpf_jit(c->prog);
		if (!rr->jit)
			rb_col_fail(c, "rte_bpf has no JIT for this program or CPU");
	}
}

static int rb_setup(struct rb_run *rr, const struct bench_env *env, uint32_t packets,
		    uint32_t flows)
{
	memset(rr, 0, sizeof(*rr));
	rr->env = env;
	rr->repeat = RB_REPEAT;
	rr->kern.flows_fd = rr->kern.stats_fd = -1;
	rr->kern.nsfd[0] = rr->kern.nsfd[1] = -1;
	for (int i = 0; i < RB_NCOLS; i++) {
		rr->col[i] = col_init[i];
		rr->col[i].fd = -1;
		rr->col[i].ok = env->backends & (rb_is_kern(i) ? BACKEND_KERNEL : BACKEND_LIB);
		if (!rr->col[i].ok)
			snprintf(rr->col[i].why, sizeof(rr->col[i].why), "not run (--backend)");
	}
	rr->turn = calloc(RB_TURN_MAX, sizeof(double));
	if (!rr->turn || trace_setup(rr, packets, flows))
		return -1;
	for (int i = 0; i < RB_NCOLS; i++) {
		rr->col[i].ns = calloc(RB_MAX_ROUNDS, sizeof(double));
		if (!rr->col[i].ns)
			return -1;
	}
	for (int i = RB_JIT; i <= RB_C; i++)
		if (rr->col[i].ok)
			lib_setup(rr, i);
	if (rr->col[RB_KERN].ok)
		rb_kern_setup(rr);
	else
		snprintf(rr->kern_why, sizeof(rr->kern_why), "not run (--backend lib)");
	return 0;
}

static void rb_teardown(struct rb_run *rr)
{
	for (int i = 0; i < RB_NCOLS; i++) {
		struct rb_col *c = &rr->col[i];

		bpfmap_rtebpf_free(c->prog);
		bpfmap_free(c->flows);
		bpfmap_free(c->stats);
		free(c->ns);
	}
	rb_kern_close(&rr->kern);
	free(rr->turn);
	free(rr->ctx);
	free(rr->rc);
	flow_expect_free(&rr->once);
	flow_trace_free(&rr->t);
}

/* ---- the rounds ---- */

static void show_progress(const struct rb_run *rr, bool warm, uint64_t now, uint64_t end)
{
	fprintf(stderr, "\r\033[K[rte-bpf] %s, round %d, %.1f s left",
		warm ? "warm-up" : "measuring", rr->rounds + 1,
		(double)(end > now ? end - now : 0) / 1e9);
	fflush(stderr);
}

/* Every column over the trace once, untimed: the flows go in. */
static void first_pass(struct rb_run *rr)
{
	for (int i = 0; i < RB_NCOLS; i++)
		if (rr->col[i].ok)
			(void)pass(rr, i, true);
}

/* Column @col's turn: passes untimed for RB_SETTLE_NS, then timed for
 * RB_TURN_NS (at least one each); the median of the timed ones, ns per
 * packet, or NAN when the column failed. */
static double turn(struct rb_run *rr, int col)
{
	const struct rb_col *c = &rr->col[col];
	uint64_t t0 = now_ns();
	int n = 0;

	do
		(void)pass(rr, col, true);
	while (c->ok && now_ns() - t0 < RB_SETTLE_NS);
	t0 = now_ns();
	while (c->ok && n < RB_TURN_MAX) {
		double ns = pass(rr, col, false);

		if (!c->ok)
			break;
		rr->turn[n++] = ns;
		if (now_ns() - t0 >= RB_TURN_NS)
			break;
	}
	return c->ok ? rb_median(rr->turn, n) : NAN;
}

static void measure(struct rb_run *rr)
{
	const struct bench_env *env = rr->env;
	uint64_t t_warm = now_ns() + (uint64_t)(env->warmup_s * 1e9), shown = 0;
	uint64_t t_end = t_warm + (uint64_t)(env->duration_s * 1e9);
	bool warm = env->warmup_s > 0;

	first_pass(rr);
	for (;;) {
		uint64_t t = now_ns();

		if (warm && t >= t_warm) {
			warm = false;
			t_end = t + (uint64_t)(env->duration_s * 1e9);
		}
		if (!warm && ((t >= t_end && rr->rounds >= RB_MIN_ROUNDS) ||
			      rr->rounds == RB_MAX_ROUNDS))
			break;
		if (env->progress && t - shown >= RB_PROGRESS_NS) {
			show_progress(rr, warm, t, warm ? t_warm : t_end);
			shown = t;
		}
		/* Start each round at another column: none always runs first. */
		for (int j = 0; j < RB_NCOLS; j++) {
			int i = (j + rr->rounds) % RB_NCOLS;
			struct rb_col *c = &rr->col[i];
			double ns;

			if (!c->ok)
				continue;
			ns = turn(rr, i);
			if (!warm && c->ok)
				c->ns[rr->rounds] = ns;
		}
		if (!warm)
			rr->rounds++;
	}
	if (env->progress)
		fprintf(stderr, "\r\033[K");
}

/* ---- the checks ---- */

/* A bpfmap column's maps against the reference for its passes. */
static void lib_check(struct rb_run *rr, struct rb_col *c)
{
	struct flow_expect e;
	uint64_t v[FLOW_STAT_NR] = { 0 };

	if (!c->ok)
		return;
	if (flow_expect_make(&rr->t, (uint32_t)c->passes, &e)) {
		rb_col_fail(c, "out of memory for the check");
		return;
	}
	for (uint32_t s = 0; s < FLOW_STAT_NR; s++)
		bpfmap_lookup_elem(c->stats, &s, &v[s]);
	if (v[FLOW_STAT_FLOW_PACKETS] + v[FLOW_STAT_OTHER] != (uint64_t)rr->t.n * c->passes)
		rb_col_fail(c, "stats count %llu packets, %llu were run",
			    (unsigned long long)(v[FLOW_STAT_FLOW_PACKETS] + v[FLOW_STAT_OTHER]),
			    (unsigned long long)rr->t.n * c->passes);
	else if (flow_expect_check(&rr->t, &e, c->flows, c->stats))
		rb_col_fail(c, "its maps differ from the C reference (above)");
	flow_expect_free(&e);
	rr->bad |= !c->ok;
}

/* ---- entry points ---- */

/* The thread on -a's / --prod-affinity's first CPU, else CPU 0; the mask it
 * had goes back into @old. */
static int pin(const struct bench_env *env, cpu_set_t *old)
{
	int cpu = env->nr_prod_cpus ? env->prod_cpus[0] : 0, err;

	CPU_ZERO(old);
	if (sched_getaffinity(0, sizeof(*old), old))
		CPU_ZERO(old);
	err = bench_pin_self(cpu);
	if (err)
		fprintf(stderr, "rte-bpf: cannot pin to CPU %d: %s\n", cpu, strerror(-err));
	return err ? -1 : cpu;
}

static void unpin(const cpu_set_t *old)
{
	if (CPU_COUNT(old))
		sched_setaffinity(0, sizeof(*old), old);
}

/* Setup, the rounds, the checks: 0, or -1 when setup ran out of memory. */
static int rb_measure(struct rb_run *rr, const struct bench_env *env, uint32_t packets,
		      uint32_t flows)
{
	cpu_set_t old;
	int cpu = pin(env, &old), ret;

	ret = rb_setup(rr, env, packets, flows);
	rr->cpu = cpu;
	if (!ret) {
		measure(rr);
		for (int i = RB_JIT; i <= RB_C; i++)
			lib_check(rr, &rr->col[i]);
		rb_kern_check(rr, &rr->col[RB_KERN]);
	}
	unpin(&old);
	return ret;
}

int rtebpf_measure(const struct bench_env *env, struct rtebpf_figs *out)
{
	struct rb_run *rr = malloc(sizeof(*rr));
	struct rb_fig jit, kern;
	int ret = -1;

	*out = (struct rtebpf_figs){ .jit_mpps = NAN, .kern_mpps = NAN };
	if (!rr || rb_measure(rr, env, RTEBPF_PACKETS, RTEBPF_FLOWS)) {
		snprintf(out->why_lib, sizeof(out->why_lib), "out of memory");
		goto done;
	}
	jit = rb_figure(rr, RB_JIT, false);
	kern = rb_figure(rr, RB_KERN, true);
	out->jit_mpps = 1e3 / jit.ns;
	out->kern_mpps = 1e3 / kern.ns;
	snprintf(out->why_lib, sizeof(out->why_lib), "%s", rr->col[RB_JIT].why);
	snprintf(out->why_kern, sizeof(out->why_kern), "%s", rr->col[RB_KERN].why);
	for (int i = 0; i < RB_NCOLS && rr->bad; i++)
		if (!rr->col[i].ok && rr->col[i].why[0])
			snprintf(out->why_lib, sizeof(out->why_lib), "%s: %s", rr->col[i].label,
				 rr->col[i].why);
	ret = rr->bad ? -1 : 0;
done:
	if (rr)
		rb_teardown(rr);
	free(rr);
	return ret;
}

static int rtebpf_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	uint32_t packets = a->nr_loops ? a->nr_loops : RTEBPF_PACKETS;
	uint32_t flows = a->nr_entries ? a->nr_entries : RTEBPF_FLOWS;
	struct rb_run *rr;
	int status;

	/* The flow table must never fill: every count is checked exactly. */
	if (packets > 65536 || flows > FLOW_MAX_ENTRIES / 4) {
		fprintf(stderr, "%s: --nr_loops (packets) up to 65536, --nr_entries (flows) up to "
				"%u\n", b->name, FLOW_MAX_ENTRIES / 4);
		return 2;
	}
	rr = malloc(sizeof(*rr));
	if (!rr || rb_measure(rr, env, packets, flows)) {
		fprintf(stderr, "%s: out of memory\n", b->name);
		if (rr)
			rb_teardown(rr);
		free(rr);
		return 1;
	}
	rb_print_table(rr, b->name);
	status = rr->bad ? 1 : 0;
	rb_teardown(rr);
	free(rr);
	return status;
}

const struct bench bench_rtebpf = {
	.name = "rte-bpf",
	.summary = "flow_count.bpf.c over a warm trace: rte_bpf JIT, interpreter, the same C, "
		   "the kernel's XDP (BPF_PROG_TEST_RUN); packets/s",
	.run = rtebpf_run,
	.default_warmup_s = 0.2,
	.default_duration_s = 2,
};
