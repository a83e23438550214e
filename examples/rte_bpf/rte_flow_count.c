// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs flow_count.bpf.o -- a BPF program written and built for the kernel --
 * in DPDK's rte_bpf on bpfmap's maps: interpreted, then JIT-compiled, over a
 * synthetic trace, from several threads; checks the counters against a C
 * reference and prints the rate of each.
 *
 *   rte_flow_count [flow_count.bpf.o] [threads]
 */
#include <err.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <bpfmap_rtebpf.h>

#include "flow_trace.h"

#ifndef FLOW_COUNT_OBJ
#define FLOW_COUNT_OBJ "flow_count.bpf.o"
#endif

struct worker {
	pthread_t tid;
	const struct bpfmap_rtebpf_prog *prog;
	const struct flow_trace *trace;
	int jit;
};

static void *run_trace(void *arg)
{
	const struct worker *w = arg;
	enum { BURST = 32 };
	void *ctx[BURST];
	uint64_t rc[BURST];

	for (uint32_t i = 0; i < w->trace->n; i += BURST) {
		uint32_t n = w->trace->n - i < BURST ? w->trace->n - i : BURST;

		for (uint32_t j = 0; j < n; j++)
			ctx[j] = &w->trace->pkts[i + j];
		bpfmap_rtebpf_run_burst(w->prog, ctx, rc, n, w->jit);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : FLOW_COUNT_OBJ;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	struct flow_trace trace;
	struct flow_expect expect;
	char log[4096];

	if (threads < 1 || threads > 64)
		errx(2, "usage: %s [flow_count.bpf.o] [threads 1-64]", argv[0]);
	if (flow_trace_make(&trace, 200000, 5000, 42) ||
	    flow_expect_make(&trace, (uint32_t)threads, &expect))
		errx(1, "cannot build the trace");
	for (int jit = 0; jit <= 1; jit++) {
		struct bpfmap *flows, *stats;
		struct worker w[64];
		double t0, t1;

		if (flow_maps_create(&flows, &stats))
			err(1, "bpfmap_create");
		struct bpfmap_rtebpf_map maps[] = { { "flows", flows }, { "stats", stats } };
		BPFMAP_RTEBPF_OPTS(opts, .section = "rte", .ctx_size = sizeof(struct flow_pkt),
				   .log_buf = log, .log_size = sizeof(log));
		struct bpfmap_rtebpf_prog *prog = bpfmap_rtebpf_load_file(path, maps, 2, &opts);

		if (!prog)
			errx(1, "loading %s failed:\n%s", path, log);
		if (jit && !bpfmap_rtebpf_jit(prog))
			errx(1, "rte_bpf has no JIT for this program or CPU");
		t0 = now();
		for (int i = 0; i < threads; i++) {
			w[i] = (struct worker){ .prog = prog, .trace = &trace, .jit = jit };
			if (pthread_create(&w[i].tid, NULL, run_trace, &w[i]))
				errx(1, "pthread_create");
		}
		for (int i = 0; i < threads; i++)
			pthread_join(w[i].tid, NULL);
		t1 = now();
		printf("%-11s %d threads: %u packets each, %.1f M packets/s in all; ",
		       jit ? "JIT" : "interpreter", threads, trace.n,
		       (double)trace.n * threads / (t1 - t0) / 1e6);
		if (flow_expect_check(&trace, &expect, flows, stats))
			errx(1, "the counters differ from the C reference");
		unsigned long long hosts = 0;

		for (uint32_t f = 0; f < trace.nr_flows; f++)
			hosts += expect.flows[f].host_hits;
		printf("counters match the C reference (%llu flows, %llu packets with Host:)\n",
		       (unsigned long long)expect.stats[FLOW_STAT_NEW_FLOWS], hosts);
		bpfmap_rtebpf_free(prog);
		bpfmap_free(flows);
		bpfmap_free(stats);
	}
	flow_expect_free(&expect);
	flow_trace_free(&trace);
	return 0;
}
