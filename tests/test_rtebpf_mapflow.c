// SPDX-License-Identifier: BSD-2-Clause
/*
 * rtebpf/mapflow.c on hand-built instruction sequences: which map r1 holds
 * at each helper call, through moves, spills and fills, calls that clobber
 * r1-r5, paths that join with the same or different maps, stores through a
 * pointer into the stack, and a loop; and the refusal of every way to reach
 * a map's handle other than passing it to a helper, and of compares rte_bpf's
 * validator would narrow a pointer by.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "rtebpf.h"

#define MAPS 2 /* map_load values used below: 0 and 1 */

/* Instruction builders (eBPF encoding). */
#define LD_MAP(dst) { BPF_LD | BPF_IMM | EBPF_DW, dst, 0, 0, 0 }, { 0, 0, 0, 0, 0 }
#define MOV_REG(dst, src) { EBPF_ALU64 | EBPF_MOV | BPF_X, dst, src, 0, 0 }
#define MOV_IMM(dst, imm) { EBPF_ALU64 | EBPF_MOV | BPF_K, dst, 0, 0, imm }
#define ADD_IMM(dst, imm) { EBPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm }
#define STX_DW(dst, off, src) { BPF_STX | BPF_MEM | EBPF_DW, dst, src, off, 0 }
#define STX_W(dst, off, src) { BPF_STX | BPF_MEM | BPF_W, dst, src, off, 0 }
#define LDX_DW(dst, src, off) { BPF_LDX | BPF_MEM | EBPF_DW, dst, src, off, 0 }
#define CALL(n) { BPF_JMP | EBPF_CALL, 0, 0, 0, n }
#define JEQ_IMM(dst, imm, off) { BPF_JMP | 0x10 | BPF_K, dst, 0, off, imm }
#define JA(off) { BPF_JMP | BPF_JA, 0, 0, off, 0 }
#define EXIT() { BPF_JMP | EBPF_EXIT, 0, 0, 0, 0 }
#define ST_DW(dst, off, imm) { BPF_ST | BPF_MEM | EBPF_DW, dst, 0, off, imm }
#define ADD_REG(dst, src) { EBPF_ALU64 | BPF_ADD | BPF_X, dst, src, 0, 0 }

/* Run the analysis; map_load[i] = @maps_at[i] for the LD_MAPs (by index). */
static uint8_t arg_maps[64], arg_nums[64];
static struct rtebpf_map_bits mb; /* read-only and locked maps, by bit */

static void flow(const struct ebpf_insn *ins, uint32_t n, const int *loads, int *call_map)
{
	int map_load[64];

	assert_true(n <= 64);
	for (uint32_t i = 0; i < n; i++)
		map_load[i] = -1;
	for (uint32_t i = 0; loads[i] >= 0; i += 2)
		map_load[loads[i]] = loads[i + 1];
	uint32_t bad = 0;
	const char *why = NULL;

	int ret = rtebpf_mapflow(ins, n, map_load, &mb, true, call_map, arg_maps, arg_nums, &bad, &why);

	if (ret)
		print_message("refused at %u: %s\n", bad, why);
	assert_int_equal(ret, 0);
}

/* The same, refused at instruction @at. */
static void refused(const struct ebpf_insn *ins, uint32_t n, const int *loads, uint32_t at)
{
	int map_load[64], call_map[64];
	uint32_t bad = UINT32_MAX;
	const char *why = NULL;

	assert_true(n <= 64);
	for (uint32_t i = 0; i < n; i++)
		map_load[i] = -1;
	for (uint32_t i = 0; loads[i] >= 0; i += 2)
		map_load[loads[i]] = loads[i + 1];
	assert_int_equal(
		rtebpf_mapflow(ins, n, map_load, &mb, true, call_map, arg_maps, arg_nums, &bad, &why),
		-EINVAL);
	assert_non_null(why);
	assert_int_equal(bad, at);
}

#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static void test_moves_spills_calls(void **state)
{
	const struct ebpf_insn ins[] = {
		LD_MAP(EBPF_REG_6),		      /* 0: r6 = map 1 */
		LD_MAP(EBPF_REG_1),		      /* 2: r1 = map 0 */
		STX_DW(EBPF_REG_10, -8, EBPF_REG_1),  /* 4: spill map 0 */
		MOV_IMM(EBPF_REG_1, 0),		      /* 5 */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8),  /* 6: fill */
		CALL(1),			      /* 7: map 0 */
		CALL(1),			      /* 8: r1 clobbered by the call */
		MOV_REG(EBPF_REG_1, EBPF_REG_6),      /* 9 */
		CALL(1),			      /* 10: map 1, r6 survives calls */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8),  /* 11: the spill survives calls */
		CALL(2),			      /* 12: map 0 */
		STX_W(EBPF_REG_10, -8, EBPF_REG_0),   /* 13: half of the slot overwritten */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8),  /* 14 */
		CALL(3),			      /* 15: unknown */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -16), /* 16: a slot never written */
		CALL(1),			      /* 17: unknown */
		ADD_IMM(EBPF_REG_6, 8),		      /* 18: no longer the map itself */
		MOV_REG(EBPF_REG_1, EBPF_REG_6),      /* 19 */
		CALL(1),			      /* 20: unknown */
		EXIT(),
	};
	const int loads[] = { 0, 1, 2, 0, -1 };
	int m[N(ins)];

	(void)state;
	flow(ins, N(ins), loads, m);
	assert_int_equal(m[7], 0);
	assert_int_equal(m[8], RTEBPF_MAP_UNKNOWN);
	assert_int_equal(m[10], 1);
	assert_int_equal(m[12], 0);
	assert_int_equal(m[15], RTEBPF_MAP_UNKNOWN);
	assert_int_equal(m[17], RTEBPF_MAP_UNKNOWN);
	assert_int_equal(m[20], RTEBPF_MAP_UNKNOWN);
}

/* A store through a copy of r10 may hit any slot: every spill is forgotten;
 * a store through another pointer (a map value) is not into the stack. */
static void test_stack_alias(void **state)
{
	const struct ebpf_insn ins[] = {
		CALL(1),			     /* 0: r0 a map value (or NULL) */
		MOV_IMM(EBPF_REG_3, 7),		     /* 1 */
		LD_MAP(EBPF_REG_1),		     /* 2 */
		STX_DW(EBPF_REG_10, -8, EBPF_REG_1), /* 4 */
		STX_DW(EBPF_REG_0, 0, EBPF_REG_3),   /* 5: into a map value */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8), /* 6 */
		CALL(1),			     /* 7: map 0 */
		MOV_IMM(EBPF_REG_3, 7),		     /* 8 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),    /* 9 */
		ADD_IMM(EBPF_REG_2, -8),	     /* 10: still into the stack */
		STX_DW(EBPF_REG_2, 0, EBPF_REG_3),   /* 11: overwrites the spill */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8), /* 12 */
		CALL(1),			     /* 13: unknown */
		EXIT(),
	};
	const int loads[] = { 2, 0, -1 };
	int m[N(ins)];

	(void)state;
	flow(ins, N(ins), loads, m);
	assert_int_equal(m[7], 0);
	assert_int_equal(m[13], RTEBPF_MAP_UNKNOWN);
}

/* Paths that join: the same map stays known, different maps do not; code
 * no path reaches is said so; a loop's back edge reaches a fixed point. */
static void test_joins_and_loops(void **state)
{
	const struct ebpf_insn ins[] = {
		LD_MAP(EBPF_REG_1),		 /* 0: map 0 */
		JEQ_IMM(EBPF_REG_2, 0, 2),	 /* 2: -> 5 */
		LD_MAP(EBPF_REG_1),		 /* 3: map 0 again */
		CALL(1),			 /* 5: map 0 on both paths */
		LD_MAP(EBPF_REG_1),		 /* 6: map 0 */
		JEQ_IMM(EBPF_REG_2, 0, 2),	 /* 8: -> 11 */
		LD_MAP(EBPF_REG_1),		 /* 9: map 1 */
		CALL(1),			 /* 11: map 0 or map 1 */
		JA(1),				 /* 12: -> 14 */
		CALL(1),			 /* 13: unreachable */
		LD_MAP(EBPF_REG_6),		 /* 14: map 1 */
		MOV_REG(EBPF_REG_1, EBPF_REG_6), /* 16: loop head */
		CALL(1),			 /* 17: map 1 on every turn */
		ADD_IMM(EBPF_REG_7, 1),		 /* 18 */
		JEQ_IMM(EBPF_REG_7, 10, 1),	 /* 19: -> 21 */
		JA(-5),				 /* 20: -> 16 */
		LD_MAP(EBPF_REG_1),		 /* 21: map 0 */
		JEQ_IMM(EBPF_REG_0, 0, 1),	 /* 23: -> 25 */
		MOV_REG(EBPF_REG_1, EBPF_REG_6), /* 24: map 1 in the loop... */
		CALL(1),			 /* 25: ...or map 0 */
		EXIT(),
	};
	const int loads[] = { 0, 0, 3, 0, 6, 0, 9, 1, 14, 1, 21, 0, -1 };
	int m[N(ins)];

	(void)state;
	flow(ins, N(ins), loads, m);
	assert_int_equal(m[5], 0);
	assert_int_equal(m[11], RTEBPF_MAP_UNKNOWN);
	assert_int_equal(m[13], RTEBPF_MAP_UNREACHED);
	assert_int_equal(m[17], 1);
	assert_int_equal(m[25], RTEBPF_MAP_UNKNOWN);
}

/* Jumps out of the program are the validator's to refuse; the analysis
 * must only stay in bounds.  A jump into the second half of a 64-bit load
 * is refused here: the validator does not evaluate what is there, and a
 * `call 1` hidden there (a helper's probe: its r1 a fake handle on the
 * stack) was left unbound, as the second half of a load is skipped. */
static void test_wild_jumps(void **state)
{
	const struct ebpf_insn ins[] = {
		JEQ_IMM(EBPF_REG_1, 0, 100),  /* 0: past the end */
		JEQ_IMM(EBPF_REG_1, 1, -100), /* 1: before the start */
		JEQ_IMM(EBPF_REG_1, 2, 2),    /* 2: -> 5 */
		LD_MAP(EBPF_REG_1),	      /* 3 */
		CALL(1),		      /* 5 */
		EXIT(),
	};
	const int loads[] = { 3, 0, -1 };
	struct ebpf_insn into[N(ins)];
	int m[N(ins)];

	(void)state;
	flow(ins, N(ins), loads, m);
	assert_int_equal(m[5], RTEBPF_MAP_UNKNOWN);
	memcpy(into, ins, sizeof(into));
	into[2].off = 1; /* -> 4, the second half of the load */
	refused(into, N(into), loads, 2);
	into[2].off = 2;
	into[4] = (struct ebpf_insn)CALL(1); /* the second half, never jumped to */
	flow(into, N(into), loads, m);
	uint32_t bad;
	const char *why;

	assert_int_equal(rtebpf_mapflow(ins, 0, NULL, &mb, true, m, arg_maps, arg_nums, &bad, &why), 0);
}

#define LDX_W(dst, src, off) { BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0 }
#define LSH_IMM(dst, imm) { EBPF_ALU64 | BPF_LSH | BPF_K, dst, 0, 0, imm }
#define RSH_IMM(dst, imm) { EBPF_ALU64 | BPF_RSH | BPF_K, dst, 0, 0, imm }
#define OR_REG(dst, src) { EBPF_ALU64 | BPF_OR | BPF_X, dst, src, 0, 0 }
#define MOV32_REG(dst, src) { BPF_ALU | EBPF_MOV | BPF_X, dst, src, 0, 0 }
#define ADD32_IMM(dst, imm) { BPF_ALU | BPF_ADD | BPF_K, dst, 0, 0, imm }

/*
 * rte_bpf's validator gives a fill of any size or alignment the type of
 * the slot its offset falls in, and keeps a pointer's type through
 * arithmetic: a map pointer rebuilt from parts of its spill, or from one
 * fill astride two spills, is one to it, and reads through it were let
 * through (a helper's probes read and overwrote the handle).  So is the low
 * half of a map pointer, and of a stack pointer, through 32-bit operations.
 */
static void test_partial_fills(void **state)
{
	(void)state;
	const int loads[] = { 0, 0, -1 };
	const struct ebpf_insn halves[] = {
		LD_MAP(EBPF_REG_1),		     /* 0 */
		STX_DW(EBPF_REG_10, -16, EBPF_REG_1), /* 2 */
		LDX_W(EBPF_REG_1, EBPF_REG_10, -16),  /* 3 */
		LDX_W(EBPF_REG_2, EBPF_REG_10, -12),  /* 4 */
		LSH_IMM(EBPF_REG_2, 32),	      /* 5 */
		OR_REG(EBPF_REG_1, EBPF_REG_2),	      /* 6 */
		LDX_DW(EBPF_REG_0, EBPF_REG_1, 0),    /* 7: the handle */
		EXIT(),
	};
	const struct ebpf_insn astride[] = {
		LD_MAP(EBPF_REG_1),		     /* 0 */
		STX_DW(EBPF_REG_10, -16, EBPF_REG_1), /* 2 */
		STX_DW(EBPF_REG_10, -8, EBPF_REG_1),  /* 3 */
		LDX_DW(EBPF_REG_2, EBPF_REG_10, -12), /* 4: half of each */
		MOV_REG(EBPF_REG_3, EBPF_REG_2),      /* 5 */
		RSH_IMM(EBPF_REG_3, 32),	      /* 6 */
		LSH_IMM(EBPF_REG_2, 32),	      /* 7 */
		OR_REG(EBPF_REG_2, EBPF_REG_3),	      /* 8 */
		ST_DW(EBPF_REG_2, 0, 0x41414141),     /* 9: the handle */
		EXIT(),
	};
	const struct ebpf_insn low32[] = {
		LD_MAP(EBPF_REG_1),		 /* 0 */
		MOV32_REG(EBPF_REG_2, EBPF_REG_1), /* 2 */
		ADD32_IMM(EBPF_REG_2, 8),	 /* 3 */
		LDX_DW(EBPF_REG_0, EBPF_REG_2, 0), /* 4 */
		EXIT(),
	};
	/* A stack pointer's halves put back together and a map stored
	 * through it: a store that may hit the spill, and may not be of a
	 * map. */
	const struct ebpf_insn stack_halves[] = {
		LD_MAP(EBPF_REG_7),		     /* 0 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),     /* 2 */
		ADD_IMM(EBPF_REG_2, -8),	     /* 3 */
		STX_DW(EBPF_REG_10, -16, EBPF_REG_2), /* 4 */
		LDX_W(EBPF_REG_3, EBPF_REG_10, -16),  /* 5 */
		LDX_W(EBPF_REG_4, EBPF_REG_10, -12),  /* 6 */
		LSH_IMM(EBPF_REG_4, 32),	      /* 7 */
		OR_REG(EBPF_REG_3, EBPF_REG_4),	      /* 8 */
		STX_DW(EBPF_REG_3, 0, EBPF_REG_7),    /* 9 */
		EXIT(),
	};
	/* A part of a slot that holds no pointer is a number, as before. */
	const struct ebpf_insn numbers[] = {
		MOV_IMM(EBPF_REG_3, 5),		      /* 0 */
		STX_DW(EBPF_REG_10, -8, EBPF_REG_3),  /* 1 */
		LD_MAP(EBPF_REG_6),		      /* 2 */
		STX_DW(EBPF_REG_10, -24, EBPF_REG_6), /* 4: two slots away */
		LDX_W(EBPF_REG_2, EBPF_REG_10, -4),   /* 5 */
		STX_DW(EBPF_REG_1, 0, EBPF_REG_2),    /* 6: into the context */
		EXIT(),
	};
	int m[16];

	/* Refused where the parts are put back together: a pointer as the
	 * second operand of an ALU operation (what the fills carry). */
	refused(halves, N(halves), loads, 6);
	refused(astride, N(astride), loads, 8);
	refused(low32, N(low32), loads, 4);
	refused(stack_halves, N(stack_halves), loads, 8);
	flow(numbers, N(numbers), (const int[]){ 2, 0, -1 }, m);
}

/* Which registers may hold a map at each call: the loader refuses a map in
 * any argument but a map helper's first (its function would read or copy
 * the handle's bytes). */
static void test_map_arguments(void **state)
{
	const struct ebpf_insn ins[] = {
		LD_MAP(EBPF_REG_1),		  /* 0 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10), /* 2 */
		ADD_IMM(EBPF_REG_2, -8),	  /* 3 */
		LD_MAP(EBPF_REG_3),		  /* 4 */
		MOV_IMM(EBPF_REG_4, 0),		  /* 6 */
		MOV_IMM(EBPF_REG_5, 0),		  /* 7 */
		CALL(2),			  /* 8: map 0, key, map 1 as the value */
		CALL(1),			  /* 9: r1-r5 clobbered */
		EXIT(),
	};
	int m[N(ins)];

	(void)state;
	flow(ins, N(ins), (const int[]){ 0, 0, 4, 1, -1 }, m);
	assert_int_equal(m[8], 0);
	assert_int_equal(arg_maps[8], 1u << 1 | 1u << 3);
	/* After a call r1-r5 may be anything (the validator's to refuse if
	 * read). */
	assert_int_equal(arg_maps[9], 0x3e);
}


/* A map pointer may not be read or written through, nor stored other than
 * whole into a stack slot (the handle holds the function a lookup calls). */
static void test_handles_out_of_reach(void **state)
{
	(void)state;
	const int loads[] = { 0, 0, -1 };
	const struct ebpf_insn write[] = {
		LD_MAP(EBPF_REG_1), ST_DW(EBPF_REG_1, 0, 0x41414141), EXIT(),
	};
	const struct ebpf_insn read[] = {
		LD_MAP(EBPF_REG_1), LDX_DW(EBPF_REG_0, EBPF_REG_1, 8), EXIT(),
	};
	const struct ebpf_insn to_ctx[] = {
		MOV_REG(EBPF_REG_6, EBPF_REG_1), LD_MAP(EBPF_REG_1),
		STX_DW(EBPF_REG_6, 0, EBPF_REG_1), EXIT(),
	};
	const struct ebpf_insn half[] = {
		LD_MAP(EBPF_REG_1), STX_W(EBPF_REG_10, -8, EBPF_REG_1), EXIT(),
	};
	const struct ebpf_insn moved[] = {
		LD_MAP(EBPF_REG_1), ADD_IMM(EBPF_REG_1, 8), LDX_DW(EBPF_REG_0, EBPF_REG_1, 0),
		EXIT(),
	};
	/* r2 the map on one path, the context on the other. */
	const struct ebpf_insn joined[] = {
		MOV_REG(EBPF_REG_2, EBPF_REG_1), JEQ_IMM(EBPF_REG_3, 0, 2), LD_MAP(EBPF_REG_2),
		ST_DW(EBPF_REG_2, 0, 1), EXIT(),
	};

	refused(write, N(write), loads, 2);
	refused(read, N(read), loads, 2);
	refused(to_ctx, N(to_ctx), (const int[]){ 1, 0, -1 }, 3);
	refused(half, N(half), loads, 2);
	refused(moved, N(moved), loads, 3);
	refused(joined, N(joined), (const int[]){ 2, 0, -1 }, 4);
}

/*
 * A store through a pointer the analysis cannot place may hit any slot, so
 * a spilled map is no longer known: a stack pointer made by register
 * arithmetic, and one that is the context on another path (a helper
 * found both used to swap the map a call received, and so to call an
 * update checked against one map's sizes on another's).
 */
static void test_stores_through_lost_pointers(void **state)
{
	(void)state;
	const struct ebpf_insn arith[] = {
		LD_MAP(EBPF_REG_6),		     /* 0: map 0 */
		LD_MAP(EBPF_REG_7),		     /* 2: map 1 */
		STX_DW(EBPF_REG_10, -8, EBPF_REG_6), /* 4 */
		MOV_IMM(EBPF_REG_3, -8),	     /* 5 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),    /* 6 */
		ADD_REG(EBPF_REG_2, EBPF_REG_3),     /* 7: r10 - 8, by a register */
		STX_DW(EBPF_REG_2, 0, EBPF_REG_3),   /* 8: a scalar over the spill */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8), /* 9 */
		CALL(2),			     /* 10: map 0 or not one */
		EXIT(),
	};
	const struct ebpf_insn joined[] = {
		LD_MAP(EBPF_REG_6),		     /* 0: map 0 */
		LD_MAP(EBPF_REG_7),		     /* 2: map 1 */
		STX_DW(EBPF_REG_10, -8, EBPF_REG_6), /* 4 */
		MOV_IMM(EBPF_REG_3, 0),		     /* 5 */
		MOV_REG(EBPF_REG_2, EBPF_REG_1),     /* 6: the context */
		JEQ_IMM(EBPF_REG_8, 0, 2),	     /* 7: -> 10 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),    /* 8 */
		ADD_IMM(EBPF_REG_2, -8),	     /* 9 */
		STX_DW(EBPF_REG_2, 0, EBPF_REG_3),   /* 10: the spill, on one path */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -8), /* 11 */
		CALL(2),			     /* 12: map 0 or not one */
		EXIT(),
	};
	struct ebpf_insn swap[N(arith)];
	int m[16];

	flow(arith, N(arith), (const int[]){ 0, 0, 2, 1, -1 }, m);
	assert_int_equal(m[10], RTEBPF_MAP_UNKNOWN);
	flow(joined, N(joined), (const int[]){ 0, 0, 2, 1, -1 }, m);
	assert_int_equal(m[12], RTEBPF_MAP_UNKNOWN);
	/* Map 1 stored over the spill that way: refused at the store. */
	memcpy(swap, arith, sizeof(swap));
	swap[8].src_reg = EBPF_REG_7;
	refused(swap, N(swap), (const int[]){ 0, 0, 2, 1, -1 }, 8);
	/* And a pointer into the stack may not leave it (a fake handle
	 * written through one read back from the context). */
	const struct ebpf_insn leak[] = {
		MOV_REG(EBPF_REG_2, EBPF_REG_10), ADD_IMM(EBPF_REG_2, -8),
		STX_DW(EBPF_REG_1, 0, EBPF_REG_2), EXIT(),
	};

	refused(leak, N(leak), (const int[]){ -1 }, 2);
}

#define STX_W_AT(dst, off, src) { BPF_STX | BPF_MEM | BPF_W, dst, src, off, 0 }

/*
 * A store of part of a register leaves what it may be in the slot: the
 * validator types the slot by the register whatever the size, so halves
 * stored and put back together are the pointer again (a helper's probe
 * rebuilt a pointer to a spilled map's slot that way, wrote the context
 * over the spill, and had the call bound to the map take the context as
 * its handle; or rebuilt a read-only value's pointer and wrote through it).
 */
static void test_partial_stores(void **state)
{
	(void)state;
	const struct ebpf_insn stack_halves[] = {
		MOV_REG(EBPF_REG_6, EBPF_REG_1),       /* 0: the context */
		LD_MAP(EBPF_REG_1),		      /* 1 */
		STX_DW(EBPF_REG_10, -160, EBPF_REG_1), /* 3: the spill */
		MOV_REG(EBPF_REG_3, EBPF_REG_10),      /* 4 */
		ADD_IMM(EBPF_REG_3, -160),	      /* 5 */
		STX_W_AT(EBPF_REG_10, -8, EBPF_REG_3), /* 6: low half */
		MOV_REG(EBPF_REG_4, EBPF_REG_3),       /* 7 */
		RSH_IMM(EBPF_REG_4, 32),	      /* 8 */
		STX_W_AT(EBPF_REG_10, -16, EBPF_REG_4), /* 9: high half */
		LDX_W(EBPF_REG_1, EBPF_REG_10, -8),    /* 10 */
		LDX_W(EBPF_REG_2, EBPF_REG_10, -16),   /* 11 */
		LSH_IMM(EBPF_REG_2, 32),	      /* 12 */
		OR_REG(EBPF_REG_1, EBPF_REG_2),	      /* 13: r10 - 160 again */
		STX_DW(EBPF_REG_1, 0, EBPF_REG_6),     /* 14: over the spill */
		LDX_DW(EBPF_REG_1, EBPF_REG_10, -160), /* 15 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),      /* 16 */
		ADD_IMM(EBPF_REG_2, -24),	      /* 17 */
		CALL(1),			      /* 18: not map 0 for sure */
		EXIT(),
	};
	const struct ebpf_insn value_halves[] = {
		LD_MAP(EBPF_REG_1),		     /* 0: map 1, read-only */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),     /* 2 */
		ADD_IMM(EBPF_REG_2, -24),	     /* 3 */
		CALL(1),			     /* 4 */
		JEQ_IMM(EBPF_REG_0, 0, 9),	     /* 5: -> 15 */
		STX_W_AT(EBPF_REG_10, -8, EBPF_REG_0), /* 6 */
		MOV_REG(EBPF_REG_4, EBPF_REG_0),      /* 7 */
		RSH_IMM(EBPF_REG_4, 32),	     /* 8 */
		STX_W_AT(EBPF_REG_10, -16, EBPF_REG_4), /* 9 */
		LDX_W(EBPF_REG_1, EBPF_REG_10, -8),   /* 10 */
		LDX_W(EBPF_REG_2, EBPF_REG_10, -16),  /* 11 */
		LSH_IMM(EBPF_REG_2, 32),	     /* 12 */
		OR_REG(EBPF_REG_1, EBPF_REG_2),	     /* 13 */
		ST_DW(EBPF_REG_1, 0, 0x666),	     /* 14: the value, written */
		EXIT(),				     /* 15 */
	};

	/* Refused where the halves are put back together (what the stores
	 * left in the slots carries the pointer). */
	refused(stack_halves, N(stack_halves), (const int[]){ 1, 0, -1 }, 13);
	mb.rdonly = 1u << 1;
	refused(value_halves, N(value_halves), (const int[]){ 0, 1, -1 }, 13);
	mb.rdonly = 0;
}

/* What a lookup in a BPFMAP_F_RDONLY_PROG map returns may be read, and
 * passed on (here as an update's value), but not written through, however
 * it was moved or spilled: the kernel's verifier refuses such writes. */
static void test_rdonly_values(void **state)
{
	const struct ebpf_insn ins[] = {
		LD_MAP(EBPF_REG_1),		     /* 0: map 1 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),     /* 2 */
		ADD_IMM(EBPF_REG_2, -8),	     /* 3 */
		CALL(1),			     /* 4: r0 into map 1's value */
		JEQ_IMM(EBPF_REG_0, 0, 6),	     /* 5: -> 12 */
		LDX_DW(EBPF_REG_3, EBPF_REG_0, 0),    /* 6: a read */
		STX_DW(EBPF_REG_10, -16, EBPF_REG_0), /* 7: spilled */
		LDX_DW(EBPF_REG_4, EBPF_REG_10, -16), /* 8: filled */
		MOV_REG(EBPF_REG_5, EBPF_REG_4),      /* 9 */
		ST_DW(EBPF_REG_5, 0, 1),	     /* 10: a write */
		MOV_IMM(EBPF_REG_0, 0),		     /* 11 */
		EXIT(),				     /* 12 */
	};
	const int loads[] = { 0, 1, -1 };
	struct ebpf_insn reads[N(ins)];
	int m[N(ins)];

	(void)state;
	flow(ins, N(ins), loads, m); /* map 1 writable */
	mb.rdonly = 1u << 1;
	refused(ins, N(ins), loads, 10);
	memcpy(reads, ins, sizeof(reads));
	reads[10] = (struct ebpf_insn)MOV_IMM(EBPF_REG_5, 0);
	flow(reads, N(reads), loads, m);
	mb.rdonly = 1u << 0; /* another map read-only */
	flow(ins, N(ins), loads, m);
	mb.rdonly = 0;
}

#define JNE_REG(dst, src, off) { BPF_JMP | EBPF_JNE | BPF_X, dst, src, off, 0 }
#define JGT_REG(dst, src, off) { BPF_JMP | BPF_JGT | BPF_X, dst, src, off, 0 }
#define JSLT_IMM(dst, imm, off) { BPF_JMP | EBPF_JSLT | BPF_K, dst, 0, off, imm }
#define JLT_IMM(dst, imm, off) { BPF_JMP | EBPF_JLT | BPF_K, dst, 0, off, imm }
#define SUB_REG(dst, src) { EBPF_ALU64 | BPF_SUB | BPF_X, dst, src, 0, 0 }

/* The refusal of @ins at @at, whose message holds @what. */
static void refused_saying(const struct ebpf_insn *ins, uint32_t n, uint32_t at,
			   const char *what)
{
	int map_load[64], call_map[64];
	uint32_t bad = UINT32_MAX;
	const char *why = NULL;

	for (uint32_t i = 0; i < n; i++)
		map_load[i] = -1;
	for (uint32_t i = 0; i + 1 < n; i++)
		if (ins[i].code == (BPF_LD | BPF_IMM | EBPF_DW))
			map_load[i++] = 0; /* map 0 */
	assert_int_equal(rtebpf_mapflow(ins, n, map_load, &mb, true, call_map, arg_maps, arg_nums, &bad, &why),
			 -EINVAL);
	assert_int_equal(bad, at);
	if (!strstr(why, what))
		fail_msg("insn %u: \"%s\" is not \"%s\"", at, why, what);
}

/*
 * rte_bpf's validator narrows each operand of a conditional jump from the
 * other whatever their types: a value pointer moved by a number read from
 * memory, compared with a map pointer (`!=`) or with a stack pointer and 0,
 * was taken on one path to be at offset 0 while it held a handle's address
 * (a helper's probes read and overwrote the handle that way).  Compares of
 * numbers, of pointers into the context or the stack however computed, and
 * of a lookup's result with 0 stay allowed.
 */
static void test_compares(void **state)
{
	(void)state;
	/* 0-10: r9 = a value pointer + a number from memory, r4 = r10 - 511 */
#define VAROFF_VALUE                                                                   \
	LD_MAP(EBPF_REG_1), MOV_REG(EBPF_REG_2, EBPF_REG_10), ADD_IMM(EBPF_REG_2, -8),   \
		CALL(1), MOV_IMM(EBPF_REG_3, 0), LDX_DW(EBPF_REG_5, EBPF_REG_0, 0),   \
		MOV_REG(EBPF_REG_9, EBPF_REG_0), ADD_REG(EBPF_REG_9, EBPF_REG_5),        \
		MOV_REG(EBPF_REG_4, EBPF_REG_10), ADD_IMM(EBPF_REG_4, -511)
	const struct ebpf_insn to_map[] = {
		VAROFF_VALUE, LD_MAP(EBPF_REG_1), JNE_REG(EBPF_REG_9, EBPF_REG_1, 1), /* 13 */
		LDX_DW(EBPF_REG_2, EBPF_REG_9, 0), MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	const struct ebpf_insn to_stack[] = {
		VAROFF_VALUE, JGT_REG(EBPF_REG_9, EBPF_REG_4, 2), /* 11 */
		LDX_DW(EBPF_REG_2, EBPF_REG_9, 0), MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	const struct ebpf_insn to_zero[] = {
		VAROFF_VALUE, JSLT_IMM(EBPF_REG_9, 0, 2), /* 11 */
		LDX_DW(EBPF_REG_2, EBPF_REG_9, 0), MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	/* A number compared with a pointer would get its offset as bounds. */
	const struct ebpf_insn number[] = {
		VAROFF_VALUE, JNE_REG(EBPF_REG_5, EBPF_REG_0, 2), /* 11 */
		ADD_REG(EBPF_REG_0, EBPF_REG_5), MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	/* Two lookups' results may be in different elements. */
	const struct ebpf_insn values[] = {
		VAROFF_VALUE, MOV_REG(EBPF_REG_6, EBPF_REG_0), LD_MAP(EBPF_REG_1),
		MOV_REG(EBPF_REG_2, EBPF_REG_10), ADD_IMM(EBPF_REG_2, -8), CALL(1),
		JGT_REG(EBPF_REG_6, EBPF_REG_0, 0), /* 17 */
		MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	/* A number made of a pointer: refused where it is made (the
	 * validator would take the pointer's offset for its bounds). */
	const struct ebpf_insn made[] = {
		VAROFF_VALUE, MOV_IMM(EBPF_REG_3, 0), ADD_REG(EBPF_REG_3, EBPF_REG_0), /* 12 */
		JGT_REG(EBPF_REG_3, EBPF_REG_5, 0),
		MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};

	refused_saying(to_map, N(to_map), 13, "compares what may be a map pointer");
	refused_saying(to_stack, N(to_stack), 11, "compares pointers that may be into different");
	refused_saying(to_zero, N(to_zero), 11, "compares a pointer with a computed offset");
	refused_saying(number, N(number), 11, "compares a pointer with a number");
	refused_saying(values, N(values), 17, "compares two map values' pointers");
	refused_saying(made, N(made), 12, "computes with a pointer as the second operand");
	/* The distance between two pointers into one object is a number here
	 * and a pointer to the validator (the first one's type, the distance
	 * as its offset): reading through it read a small address. */
	const struct ebpf_insn distance[] = {
		MOV_REG(EBPF_REG_3, EBPF_REG_1), ADD_IMM(EBPF_REG_3, 16),
		SUB_REG(EBPF_REG_3, EBPF_REG_1), LDX_DW(EBPF_REG_0, EBPF_REG_3, 0), /* 3 */
		EXIT(),
	};

	refused_saying(distance, N(distance), 3, "reads through a number");

	/* The packet bounds check of examples/rte_bpf/flow_count.bpf.c:
	 * data and end both into the context, at computed offsets, and
	 * their distance (a number) bounded; numbers compared; a lookup's
	 * result checked for NULL. */
	const struct ebpf_insn packet[] = {
		LDX_W(EBPF_REG_7, EBPF_REG_1, 0),  /* 0: len */
		LDX_W(EBPF_REG_5, EBPF_REG_1, 4),  /* 1: a header length */
		JGT_REG(EBPF_REG_5, EBPF_REG_7, 15), /* 2: two numbers */
		MOV_REG(EBPF_REG_3, EBPF_REG_1),   /* 3 */
		ADD_REG(EBPF_REG_3, EBPF_REG_7),   /* 4: end */
		MOV_REG(EBPF_REG_4, EBPF_REG_1),   /* 5 */
		ADD_IMM(EBPF_REG_4, 8),		   /* 6 */
		ADD_REG(EBPF_REG_4, EBPF_REG_5),   /* 7: data + hlen */
		JGT_REG(EBPF_REG_4, EBPF_REG_3, 9), /* 8: -> 18 */
		SUB_REG(EBPF_REG_3, EBPF_REG_4),   /* 9: the distance */
		JLT_IMM(EBPF_REG_3, 512, 7),	   /* 10: -> 18 */
		LD_MAP(EBPF_REG_1),		   /* 11 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10),  /* 13 */
		ADD_IMM(EBPF_REG_2, -8),	   /* 14 */
		CALL(1),			   /* 15 */
		JEQ_IMM(EBPF_REG_0, 0, 1),	   /* 16: -> 18 */
		STX_DW(EBPF_REG_0, 0, EBPF_REG_7), /* 17 */
		MOV_IMM(EBPF_REG_0, 0),		   /* 18 */
		EXIT(),
	};
	int m[N(packet)];

	flow(packet, N(packet), (const int[]){ 11, 0, -1 }, m);
	assert_int_equal(m[15], 0);
	/* Without a size the argument is a number: compared with one. */
	const struct ebpf_insn raw[] = {
		MOV_IMM(EBPF_REG_2, 7), JGT_REG(EBPF_REG_1, EBPF_REG_2, 0), MOV_IMM(EBPF_REG_0, 0),
		EXIT(),
	};
	uint32_t bad = 0;
	const char *why = NULL;
	int none[N(raw)];

	assert_int_equal(rtebpf_mapflow(raw, N(raw), none, &mb, false, m, arg_maps, arg_nums, &bad, &why), 0);
	/* ... and with a size a pointer, which may not be compared with one. */
	assert_int_equal(rtebpf_mapflow(raw, N(raw), none, &mb, true, m, arg_maps, arg_nums, &bad, &why),
			 -EINVAL);
	assert_non_null(strstr(why, "compares a pointer with a number"));
}

#define MUL_IMM(dst, imm) { EBPF_ALU64 | BPF_MUL | BPF_K, dst, 0, 0, imm }
#define AND_IMM(dst, imm) { EBPF_ALU64 | BPF_AND | BPF_K, dst, 0, 0, imm }
#define NEG(dst) { EBPF_ALU64 | BPF_NEG, dst, 0, 0, 0 }
#define MOD_REG(dst, src) { EBPF_ALU64 | BPF_MOD | BPF_X, dst, src, 0, 0 }
#define JNE_IMM(dst, imm, off) { BPF_JMP | EBPF_JNE | BPF_K, dst, 0, off, imm }

/*
 * The validator keeps a pointer's type, and its constant offset, through
 * operations other than adding and subtracting (0 * 3, 0 & x, -0, 0 % x,
 * any 32-bit one) while the register holds anything: a helper's probe made
 * any address out of its context pointer (`r3 = -ctx; r3 %= -ctx - T`)
 * and read and wrote there.  Such a pointer may not be followed, compared
 * with a register or passed to a function; against a constant it may be
 * (an alignment test, `(long)p & 3`).
 */
static void test_garbled(void **state)
{
	(void)state;
	const struct ebpf_insn mul[] = {
		MOV_REG(EBPF_REG_3, EBPF_REG_1), MUL_IMM(EBPF_REG_3, 3),
		LDX_DW(EBPF_REG_0, EBPF_REG_3, 0), /* 2 */
		EXIT(),
	};
	const struct ebpf_insn neg_mod[] = {
		MOV_REG(EBPF_REG_6, EBPF_REG_1),   /* 0 */
		LDX_DW(EBPF_REG_2, EBPF_REG_6, 8), /* 1: a number (-ctx - T) */
		MOV_REG(EBPF_REG_3, EBPF_REG_6),   /* 2 */
		NEG(EBPF_REG_3),		   /* 3 */
		MOD_REG(EBPF_REG_3, EBPF_REG_2),   /* 4: T */
		ST_DW(EBPF_REG_3, 0, 0x41414141),  /* 5 */
		EXIT(),
	};
	const struct ebpf_insn low32[] = {
		MOV_REG(EBPF_REG_3, EBPF_REG_1), ADD32_IMM(EBPF_REG_3, 0), ADD_IMM(EBPF_REG_3, 0),
		LDX_DW(EBPF_REG_0, EBPF_REG_3, 0), /* 3 */
		EXIT(),
	};
	const struct ebpf_insn with_reg[] = {
		MOV_REG(EBPF_REG_3, EBPF_REG_1), AND_IMM(EBPF_REG_3, -8),
		LDX_DW(EBPF_REG_2, EBPF_REG_1, 8), JNE_REG(EBPF_REG_2, EBPF_REG_3, 0), /* 3 */
		EXIT(),
	};
	/* An alignment test, as clang emits it, then a read through the
	 * pointer itself. */
	const struct ebpf_insn aligned[] = {
		MOV_REG(EBPF_REG_2, EBPF_REG_1), AND_IMM(EBPF_REG_2, 3), JNE_IMM(EBPF_REG_2, 0, 1),
		LDX_W(EBPF_REG_0, EBPF_REG_1, 12), MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	const struct ebpf_insn as_key[] = {
		LD_MAP(EBPF_REG_1),		  /* 0 */
		MOV_REG(EBPF_REG_2, EBPF_REG_10), /* 2 */
		MUL_IMM(EBPF_REG_2, 1),		  /* 3 */
		CALL(1),			  /* 4 */
		EXIT(),
	};
	int m[16]; /* call_map of the longest program here */

	refused_saying(mul, N(mul), 2, "reads through a pointer changed by more than an offset");
	refused_saying(neg_mod, N(neg_mod), 5,
		       "writes through a pointer changed by more than an offset");
	refused_saying(low32, N(low32), 3, "reads through a pointer changed by more than");
	refused_saying(with_reg, N(with_reg), 3, "compares a pointer changed by more than");
	flow(aligned, N(aligned), (const int[]){ -1 }, m);
	/* A number negated: the validator negates its range end by end, so an
	 * unknown number came out in [0, 1] and bounded any offset (a
	 * helper's probe read and wrote the heap through ctx + (mask & -x)). */
	const struct ebpf_insn negated[] = {
		LDX_DW(EBPF_REG_2, EBPF_REG_1, 0), NEG(EBPF_REG_2), /* 1 */
		MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	/* The distance between two context pointers as a lookup's key: a
	 * pointer at its offset to the validator, the small number in fact. */
	const struct ebpf_insn distance_key[] = {
		MOV_REG(EBPF_REG_2, EBPF_REG_1), ADD_IMM(EBPF_REG_2, 64),
		SUB_REG(EBPF_REG_2, EBPF_REG_1), LD_MAP(EBPF_REG_1), CALL(1), /* 5 */
		EXIT(),
	};
	struct ebpf_insn plain_key[N(as_key)];

	refused_saying(negated, N(negated), 1, "negates a number");
	flow(distance_key, N(distance_key), (const int[]){ 3, 0, -1 }, m);
	assert_true(arg_nums[5] & 1u << 2); /* refused by the loader */

	flow(as_key, N(as_key), (const int[]){ 0, 0, -1 }, m);
	assert_true(arg_maps[4] & 1u << 2); /* refused by the loader, as a map would be */
	memcpy(plain_key, as_key, sizeof(plain_key));
	plain_key[3] = (struct ebpf_insn)ADD_IMM(EBPF_REG_2, -8);
	flow(plain_key, N(plain_key), (const int[]){ 0, 0, -1 }, m);
	assert_false(arg_maps[4] & 1u << 2);
	assert_false(arg_nums[4] & 1u << 2);
}

#define XADD_DW(dst, off, src) { BPF_STX | EBPF_XADD | EBPF_DW, dst, src, off, 0 }
#define JGT_IMM(dst, imm, off) { BPF_JMP | BPF_JGT | BPF_K, dst, 0, off, imm }
#define ARSH32_IMM(dst, imm) { BPF_ALU | EBPF_ARSH | BPF_K, dst, 0, 0, imm }

/* A lookup in map 0 whose result, if any, is in r0 from instruction 7 on
 * (r6 the context); instructions 7-9 are @a, @b, @c; then exit 0. */
#define AFTER_LOOKUP(a, b, c)                                                          \
	MOV_REG(EBPF_REG_6, EBPF_REG_1), LD_MAP(EBPF_REG_1),                           \
	MOV_REG(EBPF_REG_2, EBPF_REG_10), ADD_IMM(EBPF_REG_2, -8), CALL(1), /* 5 */    \
	JEQ_IMM(EBPF_REG_0, 0, 3), a, b, c, MOV_IMM(EBPF_REG_0, 0), EXIT()

/*
 * rte_bpf's validator bounds a multiply wrongly: it squares the first
 * operand's minimum and, for 64 bits, checks no overflow, so a product of
 * a number it knew in [0, 3] and 0x5555555555555556 came out in [0, 2]
 * (really 0x556 for 3), and added to a map value's pointer it let a
 * program write into another key's value (an adversarial helper's
 * program, in the JIT and the interpreter alike).  A product, and what is
 * computed from one or compared with one, may not move a pointer; it may
 * still be stored, compared, or passed on.
 */
static void test_unsound_numbers(void **state)
{
	(void)state;
	const struct ebpf_insn product[] = {
		MOV_REG(EBPF_REG_6, EBPF_REG_1), LDX_DW(EBPF_REG_3, EBPF_REG_6, 0),
		MUL_IMM(EBPF_REG_3, 0x55555556), AND_IMM(EBPF_REG_3, 4095), /* 3 */
		LD_MAP(EBPF_REG_1), MOV_REG(EBPF_REG_2, EBPF_REG_10),	 /* 6 */
		ADD_IMM(EBPF_REG_2, -8), STX_DW(EBPF_REG_10, -16, EBPF_REG_3),    /* 8: spilled */
		CALL(1), JEQ_IMM(EBPF_REG_0, 0, 3),			      /* 10 */
		LDX_DW(EBPF_REG_3, EBPF_REG_10, -16), ADD_REG(EBPF_REG_0, EBPF_REG_3), /* 12 */
		ST_DW(EBPF_REG_0, 0, 0x41), MOV_IMM(EBPF_REG_0, 0), EXIT(),
	};
	/* r4, a number read from the context, narrowed by a compare with a
	 * product, then an offset. */
	const struct ebpf_insn compared[] = { AFTER_LOOKUP(
		LDX_DW(EBPF_REG_3, EBPF_REG_6, 0), MUL_IMM(EBPF_REG_3, 3),
		LDX_DW(EBPF_REG_4, EBPF_REG_6, 8)) };
	struct ebpf_insn cmp_then_add[N(compared) + 3];
	const struct ebpf_insn masked[] = { AFTER_LOOKUP(LDX_DW(EBPF_REG_3, EBPF_REG_6, 0),
							 AND_IMM(EBPF_REG_3, 4095),
							 ADD_REG(EBPF_REG_0, EBPF_REG_3)) };
	/* a 32-bit arithmetic shift: 0x80000000 >> 1 bounded at 0x40000000 */
	const struct ebpf_insn shifted[] = { AFTER_LOOKUP(LDX_W(EBPF_REG_3, EBPF_REG_6, 0),
							  ARSH32_IMM(EBPF_REG_3, 1),
							  ADD_REG(EBPF_REG_0, EBPF_REG_3)) };
	const struct ebpf_insn stored[] = { AFTER_LOOKUP(LDX_DW(EBPF_REG_3, EBPF_REG_6, 0),
							 MUL_IMM(EBPF_REG_3, 3),
							 STX_DW(EBPF_REG_0, 0, EBPF_REG_3)) };
	int m[N(cmp_then_add)];

	refused_saying(product, N(product), 12, "moves a pointer by a product");
	/* compared: ... 9 r4 = ctx[1]; 10 if r4 > r3 goto 11; 11 r0 += r4 */
	memcpy(cmp_then_add, compared, 10 * sizeof(compared[0]));
	cmp_then_add[10] = (struct ebpf_insn)JGT_REG(EBPF_REG_4, EBPF_REG_3, 0);
	cmp_then_add[11] = (struct ebpf_insn)ADD_REG(EBPF_REG_0, EBPF_REG_4);
	cmp_then_add[12] = (struct ebpf_insn)ST_DW(EBPF_REG_0, 0, 1);
	memcpy(&cmp_then_add[13], &compared[10], 2 * sizeof(compared[0]));
	cmp_then_add[6] = (struct ebpf_insn)JEQ_IMM(EBPF_REG_0, 0, 6);
	refused_saying(cmp_then_add, N(cmp_then_add), 11, "or compared with one");
	/* the same compare against a constant instead: r4 stays sound */
	cmp_then_add[10] = (struct ebpf_insn)JGT_IMM(EBPF_REG_4, 64, 0);
	flow(cmp_then_add, N(cmp_then_add), (const int[]){ 1, 0, -1 }, m);
	flow(masked, N(masked), (const int[]){ 1, 0, -1 }, m);
	refused_saying(shifted, N(shifted), 9, "or an arithmetic shift");
	flow(stored, N(stored), (const int[]){ 1, 0, -1 }, m);
}

/*
 * The lock word of a map value with a spin lock is bpfmap_spin_lock()'s:
 * a program's whole-struct copy into such a value wrote an odd word, and
 * the next bpfmap_update_elem of that key waited for ever (the kernel's
 * verifier refuses any load or store there; rte_bpf's programs have no
 * spin lock helper, so they may not write such values at all).  Reads
 * stay allowed, and writes into another map's values.
 */
static void test_locked_values(void **state)
{
	(void)state;
	const struct ebpf_insn store[] = { AFTER_LOOKUP(MOV_IMM(EBPF_REG_3, 1),
							STX_DW(EBPF_REG_0, 8, EBPF_REG_3),
							MOV_IMM(EBPF_REG_3, 0)) };
	const struct ebpf_insn add[] = { AFTER_LOOKUP(MOV_IMM(EBPF_REG_3, 1),
						      XADD_DW(EBPF_REG_0, 0, EBPF_REG_3),
						      MOV_IMM(EBPF_REG_3, 0)) };
	const struct ebpf_insn read[] = { AFTER_LOOKUP(LDX_DW(EBPF_REG_3, EBPF_REG_0, 0),
						       LDX_DW(EBPF_REG_4, EBPF_REG_0, 8),
						       ADD_REG(EBPF_REG_3, EBPF_REG_4)) };
	int m[N(store)];

	mb.locked = 1u << 0;
	refused_saying(store, N(store), 8, "a map with a spin lock");
	refused_saying(add, N(add), 8, "a map with a spin lock");
	flow(read, N(read), (const int[]){ 1, 0, -1 }, m);
	mb.locked = 1u << 1; /* another map's values */
	flow(store, N(store), (const int[]){ 1, 0, -1 }, m);
	flow(add, N(add), (const int[]){ 1, 0, -1 }, m);
	mb.locked = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_moves_spills_calls),
		test_entry(test_stack_alias),
		test_entry(test_joins_and_loops),
		test_entry(test_wild_jumps),
		test_entry(test_partial_fills),
		test_entry(test_map_arguments),
		test_entry(test_rdonly_values),
		test_entry(test_unsound_numbers),
		test_entry(test_locked_values),
		test_entry(test_partial_stores),
		test_entry(test_handles_out_of_reach),
		test_entry(test_stores_through_lost_pointers),
		test_entry(test_compares),
		test_entry(test_garbled),
	};

	return run_test_group(tests);
}
