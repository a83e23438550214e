// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which map each helper call receives in r1: a forward dataflow over the
 * program's control-flow graph.  Every register and every 8-byte stack slot
 * holds "map k", "a pointer into the stack", "unknown", or nothing yet;
 * where paths join, different facts become unknown.  64-bit immediate loads
 * of a map variable create map facts, register moves and 8-byte spills and
 * fills through r10 carry them, anything else that writes a register makes
 * it unknown, and a store through a stack pointer other than r10 forgets
 * every slot.  The result only chooses which sizes the validator is told:
 * at run time a helper uses whatever map r1 holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtebpf.h"

#define NREGS 11
#define NSLOTS 64 /* 512 bytes of stack */
#define STACK_PTR (-3)

struct state {
	int16_t reg[NREGS];
	int16_t slot[NSLOTS];
	bool reached;
};

static int16_t join1(int16_t a, int16_t b)
{
	return a == b ? a : RTEBPF_MAP_UNKNOWN;
}

/* Merge @in into @s; true if @s changed. */
static bool join(struct state *s, const struct state *in)
{
	struct state old = *s;

	if (!s->reached) {
		*s = *in;
		return true;
	}
	for (int r = 0; r < NREGS; r++)
		s->reg[r] = join1(s->reg[r], in->reg[r]);
	for (int k = 0; k < NSLOTS; k++)
		s->slot[k] = join1(s->slot[k], in->slot[k]);
	return memcmp(&old, s, sizeof(old)) != 0;
}

/* The slot an 8-byte access at r10 + @off covers, or -1. */
static int slot_of(int16_t off)
{
	if (off >= 0 || off < -8 * NSLOTS)
		return -1;
	return (-off - 1) / 8;
}

static void forget_stack(struct state *s)
{
	for (int k = 0; k < NSLOTS; k++)
		s->slot[k] = RTEBPF_MAP_UNKNOWN;
}

/* The state after instruction @i. */
static void step(const struct ebpf_insn *ins, const int *map_load, uint32_t i, struct state *s)
{
	const struct ebpf_insn *in = &ins[i];
	uint8_t cls = in->code & 0x07, dst = in->dst_reg & 0xf, src = in->src_reg & 0xf;
	int k;

	if (dst >= NREGS)
		dst = NREGS - 1;
	if (src >= NREGS)
		src = NREGS - 1;
	switch (cls) {
	case BPF_LD:
		if (in->code == (BPF_LD | BPF_IMM | EBPF_DW)) {
			s->reg[dst] = (int16_t)(map_load[i] >= 0 ? map_load[i] : RTEBPF_MAP_UNKNOWN);
		} else {
			/* packet loads: r0 set, r1-r5 clobbered */
			for (int r = 0; r <= 5; r++)
				s->reg[r] = RTEBPF_MAP_UNKNOWN;
		}
		break;
	case BPF_LDX:
		k = slot_of(in->off);
		s->reg[dst] = src == EBPF_REG_10 && BPF_SIZE(in->code) == EBPF_DW && k >= 0 &&
					      in->off % 8 == 0
				      ? s->slot[k]
				      : RTEBPF_MAP_UNKNOWN;
		break;
	case BPF_ST:
	case BPF_STX:
		if (dst == EBPF_REG_10) {
			k = slot_of(in->off);
			if (k < 0)
				break;
			if (cls == BPF_STX && BPF_MODE(in->code) == BPF_MEM &&
			    BPF_SIZE(in->code) == EBPF_DW && in->off % 8 == 0)
				s->slot[k] = s->reg[src];
			else
				s->slot[k] = RTEBPF_MAP_UNKNOWN;
			if (in->off % 8 && k > 0)
				s->slot[k - 1] = RTEBPF_MAP_UNKNOWN;
		} else if (s->reg[dst] == STACK_PTR) {
			forget_stack(s);
		}
		break;
	case EBPF_ALU64:
		if (BPF_OP(in->code) == EBPF_MOV && BPF_SRC(in->code) == BPF_X)
			s->reg[dst] = src == EBPF_REG_10 ? STACK_PTR : s->reg[src];
		else if (s->reg[dst] == STACK_PTR &&
			 (BPF_OP(in->code) == BPF_ADD || BPF_OP(in->code) == BPF_SUB) &&
			 BPF_SRC(in->code) == BPF_K)
			; /* still a pointer into the stack */
		else
			s->reg[dst] = RTEBPF_MAP_UNKNOWN;
		break;
	case BPF_ALU:
		s->reg[dst] = RTEBPF_MAP_UNKNOWN;
		break;
	default: /* jumps: calls clobber r0-r5 */
		if (in->code == (BPF_JMP | EBPF_CALL))
			for (int r = 0; r <= 5; r++)
				s->reg[r] = RTEBPF_MAP_UNKNOWN;
		break;
	}
	s->reg[EBPF_REG_10] = STACK_PTR;
}

/* Successors of @i: up to two, -1 for none. */
static void successors(const struct ebpf_insn *ins, uint32_t i, int64_t next[2])
{
	const struct ebpf_insn *in = &ins[i];
	uint8_t cls = in->code & 0x07;

	next[0] = i + 1;
	next[1] = -1;
	if (in->code == (BPF_LD | BPF_IMM | EBPF_DW)) {
		next[0] = i + 2;
	} else if (cls == BPF_JMP || cls == 0x06 /* jmp32 */) {
		if (in->code == (BPF_JMP | EBPF_EXIT))
			next[0] = -1;
		else if (in->code == (BPF_JMP | BPF_JA))
			next[0] = (int64_t)i + 1 + in->off;
		else if (in->code != (BPF_JMP | EBPF_CALL))
			next[1] = (int64_t)i + 1 + in->off;
	}
}

int rtebpf_mapflow(const struct ebpf_insn *insns, uint32_t n, const int *map_load, int *call_map)
{
	struct state *st = calloc(n ? n : 1, sizeof(*st));
	uint32_t *work = malloc((n ? n : 1) * sizeof(*work));
	bool *queued = calloc(n ? n : 1, sizeof(*queued));
	uint32_t head = 0, count = 0;

	if (!st || !work || !queued) {
		free(st);
		free(work);
		free(queued);
		return -ENOMEM;
	}
	if (n) {
		for (int r = 0; r < NREGS; r++)
			st[0].reg[r] = RTEBPF_MAP_UNKNOWN;
		forget_stack(&st[0]);
		st[0].reg[EBPF_REG_10] = STACK_PTR;
		st[0].reached = true;
		work[0] = 0;
		queued[0] = true;
		count = 1;
	}
	/* A ring of pending instructions; each is queued at most once. */
	while (count) {
		uint32_t i = work[head];
		struct state s = st[i];
		int64_t next[2];

		head = (head + 1) % n;
		count--;
		queued[i] = false;
		step(insns, map_load, i, &s);
		successors(insns, i, next);
		for (int j = 0; j < 2; j++) {
			uint32_t t;

			if (next[j] < 0 || next[j] >= n)
				continue;
			t = (uint32_t)next[j];
			if (join(&st[t], &s) && !queued[t]) {
				work[(head + count) % n] = t;
				queued[t] = true;
				count++;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		call_map[i] = !st[i].reached		? RTEBPF_MAP_UNREACHED
			      : st[i].reg[EBPF_REG_1] >= 0 ? st[i].reg[EBPF_REG_1]
							   : RTEBPF_MAP_UNKNOWN;
	free(st);
	free(work);
	free(queued);
	return 0;
}
