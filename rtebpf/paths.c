// SPDX-License-Identifier: BSD-2-Clause
/*
 * How much work rte_bpf's validator will do on a program, bounded before it
 * starts.  The validator walks every path from the first instruction to an
 * exit, one after the other, with no pruning (the kernel's verifier prunes
 * states it has seen), so a program of n diamonds (if x then y = c) has
 * 2^n paths: 40 of them, 82 instructions, would run for days, holding the
 * lock under which loads collect the validator's log.  The work is the sum
 * over all paths of their lengths, counted here in one pass over the
 * instruction graph in topological order.
 */
#include <errno.h>
#include <stdlib.h>

#include "rtebpf.h"

/* Instruction @i's successors into @s (at most 2); -1 for an edge outside
 * the program (the validator refuses those itself). */
static int successors(const struct ebpf_insn *ins, uint32_t n, uint32_t i, uint32_t s[2])
{
	const struct ebpf_insn *in = &ins[i];
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	int64_t to;
	int k = 0;

	if (rtebpf_is_imm64(in)) {
		s[k++] = i + 2;
	} else if (cls == BPF_JMP || cls == 0x06 /* JMP32 */) {
		if (op == EBPF_EXIT)
			return 0;
		to = (int64_t)i + 1 + in->off;
		if (op != BPF_JA && op != EBPF_CALL)
			s[k++] = i + 1;
		if (op != EBPF_CALL) {
			if (to < 0 || to >= n)
				return -1;
			s[k++] = (uint32_t)to;
		} else {
			s[k++] = i + 1;
		}
	} else {
		s[k++] = i + 1;
	}
	for (int j = 0; j < k; j++)
		if (s[j] >= n)
			return -1;
	return k;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int rtebpf_validator_work(const struct ebpf_insn *ins, uint32_t n, uint64_t *work)
{
	uint32_t *indeg = calloc(n ? n : 1, sizeof(*indeg));
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint64_t *paths = calloc(n ? n : 1, sizeof(*paths)); /* from each to an exit */
	uint64_t *walk = calloc(n ? n : 1, sizeof(*walk));   /* their lengths' sum */
	uint32_t s[2], head = 0, tail = 0;
	int err = 0, k;

	*work = 0;
	if (!indeg || !order || !paths || !walk) {
		err = -ENOMEM;
		goto out;
	}
	if (!n)
		goto out;
	/* What the first instruction reaches (the validator walks nothing
	 * else), and each such instruction's edges from such instructions:
	 * one reached first by its first edge. */
	order[tail++] = 0;
	while (head < tail) {
		uint32_t i = order[head++];

		k = successors(ins, n, i, s);
		if (k < 0)
			goto out; /* a jump out of the program: rte_bpf refuses it */
		for (int j = 0; j < k; j++)
			if (indeg[s[j]]++ == 0 && s[j] != 0)
				order[tail++] = s[j];
	}
	/* Kahn's order of those. */
	head = tail = 0;
	order[tail++] = 0;
	while (head < tail) {
		uint32_t i = order[head++];

		k = successors(ins, n, i, s);
		for (int j = 0; j < k; j++)
			if (--indeg[s[j]] == 0)
				order[tail++] = s[j];
	}
	/* Not all ordered: a cycle, a loop, which the validator refuses. */
	for (uint32_t i = 0; i < n; i++)
		if (indeg[i])
			goto out;
	for (uint32_t x = tail; x-- > 0;) {
		uint32_t i = order[x];

		k = successors(ins, n, i, s);
		paths[i] = k ? 0 : 1;
		for (int j = 0; j < k; j++) {
			paths[i] = add_sat(paths[i], paths[s[j]]);
			walk[i] = add_sat(walk[i], walk[s[j]]);
		}
		walk[i] = add_sat(walk[i], paths[i]); /* each path visits i once */
	}
	*work = walk[0];
out:
	free(indeg);
	free(order);
	free(paths);
	free(walk);
	return err;
}
