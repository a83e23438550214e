/* SPDX-License-Identifier: BSD-2-Clause */
/* bpf-hashmap-churn's measurement of one map size, for --report too. */
#ifndef BPFMAP_BENCH_CHURN_H
#define BPFMAP_BENCH_CHURN_H

#include <stdbool.h>
#include <stdint.h>

enum churn_op { CHURN_PRESENT, CHURN_ABSENT, CHURN_E2BIG, CHURN_BATCH, CHURN_OPS };

extern const char *const churn_op_names[CHURN_OPS];

/* What the issue bounds each churned / fresh ratio by. */
#define CHURN_PRESENT_BOUND 1.2
#define CHURN_OTHER_BOUND 1.5

struct churn_result {
	uint32_t key_size, max_entries, map_flags;
	uint64_t pairs;
	/* ns per operation (batch: ms per pass); -1: an operation answered
	 * wrongly, NAN: not measured */
	double fresh[CHURN_OPS], churned[CHURN_OPS];
	double per_pair; /* ns per delete + insert pair, or -1 */
};

/* Fills a HASH map of @r->max_entries (@r->key_size, value 8,
 * @r->map_flags), measures, turns @r->pairs pairs over, measures again.
 * 0, or 1 with errno's message printed when the map could not be made or
 * an operation answered wrongly (its figure is then -1). */
int churn_measure_size(struct churn_result *r, bool progress);

/* One JSON object per op of @r (and one for the churn itself). */
void churn_json(const struct churn_result *r);

#endif
