// SPDX-License-Identifier: BSD-2-Clause
/*
 * rte-bpf, kernel side: an XDP program that does nothing.  Run with
 * BPF_PROG_TEST_RUN exactly as flow_count's flow_xdp is, its mean per run is
 * the test run's own cost (the repeat loop, the program's entry and exit),
 * which the benchmark subtracts from the kernel's figure.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
