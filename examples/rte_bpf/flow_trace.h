/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A synthetic packet trace for flow_count.bpf.c, and the program's logic in
 * plain C twice over: as a reference that counts into arrays (what a test
 * compares the maps with) and as a twin that counts into the same bpfmap
 * maps through the C API (the benchmark's "same logic in C" column).
 */
#ifndef FLOW_TRACE_H
#define FLOW_TRACE_H

#include <stdint.h>

#include <bpfmap.h>

#include "flow_count.h"

struct flow_trace {
	struct flow_pkt *pkts; /* n packets */
	int32_t *flow_of;      /* each packet's flow, or -1 (not counted in a flow) */
	struct flow_key *keys; /* nr_flows keys */
	uint32_t n;
	uint32_t nr_flows;
};

/* @n packets over @nr_flows flows (TCP to port 80 with and without a Host:
 * header, other TCP, UDP) and about 5% frames that are not IPv4 flows.
 * 0 or -ENOMEM. */
int flow_trace_make(struct flow_trace *t, uint32_t n, uint32_t nr_flows, uint64_t seed);
void flow_trace_free(struct flow_trace *t);

/* The reference: count_frame()'s parse, written from the frame format.
 * Returns 1 and fills @key and @host for an IPv4 TCP/UDP frame, else 0. */
int flow_ref_parse(const uint8_t *data, uint32_t len, struct flow_key *key, int *host);

/* What the program must leave in the maps after running the whole trace
 * @times times: per flow, and in the stats slots. */
struct flow_expect {
	struct flow_val *flows; /* nr_flows values */
	uint64_t stats[FLOW_STAT_NR];
};
int flow_expect_make(const struct flow_trace *t, uint32_t times, struct flow_expect *e);
void flow_expect_free(struct flow_expect *e);

/* Compare the maps with @e: 0, or -1 after printing the first difference
 * to stderr. */
int flow_expect_check(const struct flow_trace *t, const struct flow_expect *e,
		      struct bpfmap *flows, struct bpfmap *stats);

/* Create the two maps as the object declares them (stats' slots zeroed).
 * 0 or -errno. */
int flow_maps_create(struct bpfmap **flows, struct bpfmap **stats);

/* The program's logic in C on bpfmap's program view; call it inside a
 * read-side section.  Returns what flow_rte returns. */
int flow_count_c(struct bpfmap *flows, struct bpfmap *stats, const struct flow_pkt *pkt);

#endif
