/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the benchmark programs.  Every benchmark has two entry
 * points with the same body: fentry on the getpgid syscall (what the kernel's
 * selftests use), and raw_tp/sys_enter filtered to getpgid, for kernels that
 * refuse BPF trampolines.  User space loads whichever the kernel accepts; the
 * body times itself, so the trigger does not change the figure.
 */
#ifndef BPFMAP_BENCH_BPF_H
#define BPFMAP_BENCH_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bench_shared.h"

static __always_inline int bench_gate_open(const volatile struct bench_gate *g)
{
	if (!g->enabled)
		return 0;
	return (__u32)(bpf_get_current_pid_tgid() >> 32) == g->tgid;
}

static __always_inline __u32 bench_cpu_slot(void)
{
	return bpf_get_smp_processor_id() & (BENCH_MAX_CPUS - 1);
}

/* raw_tp/sys_enter passes (struct pt_regs *, long syscall_nr). */
static __always_inline int bench_is_trigger(const struct bpf_raw_tracepoint_args *ctx,
					    const volatile struct bench_gate *g)
{
	return ctx->args[1] == g->trigger_nr;
}

/* Declares NAME_fentry and NAME_rawtp, both running BODY(). */
#define BENCH_ENTRIES(NAME, GATE, BODY)                                        \
	SEC("fentry")                                                          \
	int NAME##_fentry(void *ctx)                                           \
	{                                                                      \
		if (!bench_gate_open(GATE))                                    \
			return 0;                                              \
		BODY();                                                        \
		return 0;                                                      \
	}                                                                      \
	SEC("raw_tp/sys_enter")                                                \
	int NAME##_rawtp(struct bpf_raw_tracepoint_args *ctx)                  \
	{                                                                      \
		if (!bench_is_trigger(ctx, GATE) || !bench_gate_open(GATE))    \
			return 0;                                              \
		BODY();                                                        \
		return 0;                                                      \
	}

#endif
