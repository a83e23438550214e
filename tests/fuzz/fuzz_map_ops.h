/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz harness's entry points, shared by libFuzzer and the replay driver. */
#ifndef BPFMAP_TESTS_FUZZ_MAP_OPS_H
#define BPFMAP_TESTS_FUZZ_MAP_OPS_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: one input, one map, one operation sequence.
 * Returns 0; a disagreement with the model traps. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Free the maps the harness keeps for freeing in groups (see free_later()). */
void fuzz_map_ops_flush(void);

#endif
