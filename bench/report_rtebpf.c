// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report's row for rte_bpf: examples/rte_bpf/flow_count.bpf.c JIT-compiled
 * by DPDK's rte_bpf on bpfmap's maps, against the same object's XDP entry in
 * the kernel (bench_rtebpf.c, "bpfmap-bench rte-bpf").  One short run of that
 * benchmark per round: its columns already take turns inside the run, and
 * the rounds give the row a median and a range like the report's others.
 * Built without DPDK's rte_bpf, the row says so and is not measured.
 */
#include <math.h>
#include <stdio.h>

#include "report_int.h"

#define RTEBPF_ROW "rte-bpf flow_count"

void rtebpf_setup(struct report *rp)
{
	rounds_init(&rp->rte);
}

int rtebpf_cells(const struct report *rp)
{
#ifdef BPFMAP_BENCH_RTEBPF
	return report_want(rp, BACKEND_LIB) || report_want(rp, BACKEND_KERNEL);
#else
	(void)rp;
	return 0;
#endif
}

#ifdef BPFMAP_BENCH_RTEBPF
/* A side that did not run: a footnote, once per reason. */
static void side_failed(struct report *rp, enum backend b, const char *backend, double v,
			const char *why)
{
	struct failure *f;

	if (isfinite(v) || !report_want(rp, b))
		return;
	f = failed(rp, RTEBPF_ROW, backend, why[0] ? why : "not run");
	if (f)
		f->of = rp->rounds;
}

void rtebpf_round(struct report *rp, int round)
{
	struct rtebpf_figs figs;

	rp->rte.n = round + 1;
	if (!rtebpf_cells(rp))
		return;
	progress(rp, RTEBPF_ROW, report_want(rp, BACKEND_LIB) ? "lib" : "kernel");
	if (rtebpf_measure(&rp->cenv, &figs))
		fprintf(stderr, "\r\033[K%s: %s\n", RTEBPF_ROW, figs.why_lib);
	rp->rte.lib[round] = figs.jit_mpps;
	rp->rte.kern[round] = figs.kern_mpps;
	side_failed(rp, BACKEND_LIB, "lib", figs.jit_mpps, figs.why_lib);
	side_failed(rp, BACKEND_KERNEL, "kernel", figs.kern_mpps, figs.why_kern);
}
#else
void rtebpf_round(struct report *rp, int round)
{
	rp->rte.n = round + 1;
	if (!round && report_want(rp, BACKEND_LIB))
		failed(rp, RTEBPF_ROW, "lib",
		       "bpfmap-bench was built without DPDK's rte_bpf (libdpdk-dev, libelf-dev)");
}
#endif
