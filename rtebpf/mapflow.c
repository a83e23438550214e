// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which map each helper call receives in r1: a forward dataflow over the
 * program's control-flow graph, which also refuses what would let a program
 * reach a map's handle (the 16-byte variable its map loads point at: the
 * lookup function it calls, and the map) other than by passing it to a
 * helper.
 *
 * Every register and every 8-byte stack slot holds a fact: "map k", or what
 * it may be, as bits: a pointer into the stack, a map's handle, the context
 * (the program's argument, when rte_bpf is told its size), a lookup's
 * result, a number; and whether a pointer's offset was computed.  Where
 * paths join, facts that differ become the union of their bits.  64-bit immediate
 * loads of a map variable create map facts; register moves and 8-byte
 * spills and fills through r10 carry them.  A store through a register
 * that may point into the stack may change any slot: each slot may then
 * hold what it held or what was stored.  Whatever is computed from a
 * register or read from a slot keeps what it may be: the validator types a
 * fill of any size or alignment by the slot its offset falls in, and keeps
 * a pointer's type through arithmetic, so a half of a spilled map pointer,
 * shifted and or-ed with the other half, is to it a map pointer again.
 *
 * The validator only checks sizes, so this is what keeps handles out of
 * reach: an access through a register that may hold a handle, and a store
 * of one anywhere but whole into an r10 slot, are refused, so that memory
 * other than the stack never holds a handle.  The result chooses which
 * sizes the validator is told; a call whose r1 is not one map on every
 * path is refused by the caller, as is one that passes what may be a map
 * in any other argument (load.c).  What a lookup in a map that programs
 * may only read (BPFMAP_F_RDONLY_PROG) returns may not be written through,
 * as the kernel's verifier has it, nor what one in a map with a spin lock
 * returns (the lock word is bpfmap_spin_lock()'s).  Numbers whose bounds
 * the validator gets wrong (MAY_UNSOUND) may not move a pointer.  The
 * validator narrows both operands
 * of a conditional jump from each other whatever their types: a compare
 * that would give a pointer bounds that are not its offset's is refused
 * (compare_refusal).  It keeps the first operand's type through arithmetic
 * and takes a second operand's pointer offset for its value, so a pointer
 * may not be an ALU operation's second operand (but in the distance
 * between two pointers into one object, a number here), and a number may
 * not be read or written through.  A jump into the second half of a 64-bit
 * immediate load is refused here: the validator does not look there, and
 * the helper binding would skip a call hidden in it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtebpf.h"

/* What each refusal of a compare the validator would narrow unsoundly adds. */
#define NARROW " (rte_bpf's validator would take the bounds of one for the other's)"

#define NREGS 11
#define NSLOTS 64 /* 512 bytes of stack */

/* A fact: a map's index (>= 0), or minus a set of these bits. */
#define MAY_STACK 1
#define MAY_MAP 2
#define MAY_NUM 4     /* a number */
#define MAY_RDONLY 8  /* into the value of a map programs may only read */
#define MAY_CTX 16    /* the program's argument, when it is a pointer */
#define MAY_VALUE 32  /* what a map lookup returned */
#define MAY_VAROFF 64 /* a pointer whose offset was computed */
/* A pointer to the validator that no offset describes: changed by an
 * operation other than adding or subtracting a number (a multiply, a mask,
 * a negation, any 32-bit operation), whose constant offset the validator
 * keeps (0 * 3, 0 & x, -0) while the register holds anything. */
#define MAY_GARBLED 128
/* A number whose bounds rte_bpf's validator may have wrong: a product or
 * an arithmetic shift's result, or what was computed from one or compared
 * with one (the compare narrows both operands from each other's bounds).
 * Its multiply takes the first operand's minimum squared and checks no
 * overflow of a 64-bit product (`msk >> opsz` with opsz 64), so
 * 3 * 0x5555555555555556 came out in [0, 2]: added to a map value's
 * pointer, it let a program write into another key's value.  Its 32-bit
 * arithmetic shift bounds the result as a 64-bit number's, 0x80000000 >> 1
 * at most 0x40000000 (the result: 0xc0000000).  Such a number may not move
 * a pointer. */
#define MAY_UNSOUND 256
/* Into the value of a map with a spin lock: only bpfmap_spin_lock() may
 * write its lock word, and rte_bpf's programs cannot call it. */
#define MAY_LOCKED 512
#define MAY_PTR (MAY_STACK | MAY_MAP | MAY_CTX | MAY_VALUE)
#define F_STACK (-MAY_STACK)
#define F_NUM (-MAY_NUM)
/* What the registers hold that the validator takes as undefined (before
 * they are written, r1-r5 after a call): it refuses any use but a store
 * over them, so no compare of them reaches its narrowing. */
#define F_ANY (-(MAY_PTR | MAY_NUM | MAY_RDONLY | MAY_LOCKED))

struct state {
	int16_t reg[NREGS];
	int16_t slot[NSLOTS];
	bool reached;
};

static int bits(int16_t f)
{
	return f >= 0 ? MAY_MAP : -f;
}

static int16_t join1(int16_t a, int16_t b)
{
	return a == b ? a : (int16_t)-(bits(a) | bits(b));
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

/* A store of @f through a pointer somewhere into the stack. */
static void store_anywhere(struct state *s, int16_t f)
{
	for (int k = 0; k < NSLOTS; k++)
		s->slot[k] = join1(s->slot[k], f);
}

static bool whole_slot(const struct ebpf_insn *in)
{
	return BPF_SIZE(in->code) == EBPF_DW && in->off % 8 == 0 && slot_of(in->off) >= 0;
}

static unsigned int size_bytes(const struct ebpf_insn *in)
{
	switch (BPF_SIZE(in->code)) {
	case BPF_B:
		return 1;
	case BPF_H:
		return 2;
	case BPF_W:
		return 4;
	default:
		return 8;
	}
}

/* What a fill through r10 that is not one whole slot may load: anything
 * the slots it touches may hold, and their neighbours' (the validator
 * rounds the offset to a slot its own way), or any slot's if it reaches
 * outside the frame. */
static int16_t partial_fill(const struct state *s, const struct ebpf_insn *in)
{
	int first = slot_of((int16_t)(in->off + (int)size_bytes(in) - 1)), last = slot_of(in->off);
	int16_t f = F_NUM;

	if (first < 0 || last < 0) {
		first = 0;
		last = NSLOTS - 1;
	}
	for (int k = first - 1; k <= last + 1; k++)
		if (k >= 0 && k < NSLOTS)
			f = join1(f, s->slot[k]);
	return f;
}

static void regs(uint8_t *dst, uint8_t *src, const struct ebpf_insn *in)
{
	*dst = in->dst_reg & 0xf;
	*src = in->src_reg & 0xf;
	if (*dst >= NREGS)
		*dst = NREGS - 1;
	if (*src >= NREGS)
		*src = NREGS - 1;
}

/* Whether facts' bits @a and @b are both pointers into the context, or
 * both into the stack, at any offsets: one object each (two values from
 * lookups may be in different elements). */
static bool one_object(int a, int b)
{
	a &= ~MAY_VAROFF;
	b &= ~MAY_VAROFF;
	return a == b && (a == MAY_CTX || a == MAY_STACK);
}

/*
 * Why conditional jump @in, whose destination holds @d and source @s, may
 * not run, or NULL.  The validator narrows each operand's bounds from the
 * other's (or from the immediate) whatever their types, and a pointer's
 * bounds are its offset in its object.  That holds only when the compare
 * is between what it compares: two numbers, or two pointers into one
 * object, where the offsets differ as the addresses do.  A pointer moved by
 * a computed number and compared with a constant, or with a pointer into
 * another object, would be taken for one at a checked offset while it may
 * point anywhere; a number compared with a pointer would get the pointer's
 * offset as its bounds.  A pointer whose offset is known compared with a
 * constant is let through: addresses are never small, so the path the
 * validator narrows it on never runs, or it narrows nothing it checks.
 */
static const char *compare_refusal(const struct ebpf_insn *in, int16_t d, int16_t s)
{
	int bd = bits(d), bs = bits(s), pd = bd & MAY_PTR, ps = bs & MAY_PTR;

	/* A garbled pointer against a constant narrows only a register that
	 * can never be followed (an alignment test, `(long)p & 3`). */
	if (BPF_SRC(in->code) == BPF_K)
		return bd & MAY_VAROFF ? "compares a pointer with a computed offset" NARROW : NULL;
	if ((bd | bs) & MAY_GARBLED)
		return "compares a pointer changed by more than an offset" NARROW;
	if ((bd | bs) & MAY_MAP)
		return "compares what may be a map pointer" RTEBPF_REACH;
	if (!pd && !ps)
		return NULL; /* two numbers */
	if (!pd || !ps || ((bd | bs) & MAY_NUM))
		return "compares a pointer with a number" NARROW;
	if (one_object(bd, bs))
		return NULL;
	if (pd == MAY_VALUE && ps == MAY_VALUE)
		return "compares two map values' pointers (they may be in different elements)" NARROW;
	return "compares pointers that may be into different objects" NARROW;
}

/* Whether ALU instruction @in reads its source register (NEG and the byte
 * swaps do not, whatever their source bit). */
static bool alu_reads_src(const struct ebpf_insn *in)
{
	return BPF_SRC(in->code) == BPF_X && BPF_OP(in->code) != BPF_NEG &&
	       BPF_OP(in->code) != EBPF_END;
}

/* Why instruction @in may not run in state @s, or NULL. */
static const char *refusal(const struct ebpf_insn *in, const struct state *s)
{
	uint8_t cls = in->code & 0x07, dst, src;

	regs(&dst, &src, in);
	switch (cls) {
	case BPF_LDX:
		if (bits(s->reg[src]) & MAY_MAP)
			return "reads through a map pointer" RTEBPF_REACH;
		if (bits(s->reg[src]) & MAY_GARBLED)
			return "reads through a pointer changed by more than an offset" NARROW;
		/* A number the validator may still type as a pointer: the
		 * distance between two pointers keeps the first one's type. */
		if (!(bits(s->reg[src]) & MAY_PTR))
			return "reads through a number" NARROW;
		break;
	case BPF_ST:
	case BPF_STX:
		if (bits(s->reg[dst]) & MAY_MAP)
			return "writes through a map pointer" RTEBPF_REACH;
		if (bits(s->reg[dst]) & MAY_GARBLED)
			return "writes through a pointer changed by more than an offset" NARROW;
		if (!(bits(s->reg[dst]) & MAY_PTR))
			return "writes through a number" NARROW;
		if (bits(s->reg[dst]) & MAY_RDONLY)
			return "writes into the value of a map that programs may only read "
			       "(BPFMAP_F_RDONLY_PROG)";
		if (bits(s->reg[dst]) & MAY_LOCKED)
			return "writes into the value of a map with a spin lock (only "
			       "bpfmap_spin_lock() may write its lock word, and a program "
			       "cannot take the lock; the kernel refuses writes to the lock)";
		if (cls == BPF_STX && (bits(s->reg[src]) & MAY_MAP) &&
		    (dst != EBPF_REG_10 || BPF_MODE(in->code) != BPF_MEM || !whole_slot(in)))
			return "stores a map pointer other than whole into a stack slot" RTEBPF_REACH;
		/* so that memory other than the stack never holds a pointer
		 * into it, and what is loaded from there is not one */
		if (cls == BPF_STX && (bits(s->reg[src]) & MAY_STACK) &&
		    (bits(s->reg[dst]) & ~MAY_STACK))
			return "stores a pointer into the stack outside the stack" RTEBPF_REACH;
		break;
	case BPF_JMP:
	case 0x06: /* jmp32 */
		if (BPF_OP(in->code) == BPF_JA || BPF_OP(in->code) == EBPF_CALL ||
		    BPF_OP(in->code) == EBPF_EXIT)
			break;
		return compare_refusal(in, s->reg[dst], s->reg[src]);
	case EBPF_ALU64:
	case BPF_ALU:
		/* It negates a number's range end by end: an unknown number
		 * comes out in [0, 1], which then bounds any offset. */
		if (BPF_OP(in->code) == BPF_NEG && (bits(s->reg[dst]) & MAY_NUM))
			return "negates a number (rte_bpf's validator bounds a negation wrongly)";
		if (alu_reads_src(in) && (BPF_OP(in->code) == BPF_ADD || BPF_OP(in->code) == BPF_SUB) &&
		    (bits(s->reg[src]) & MAY_UNSOUND) && (bits(s->reg[dst]) & MAY_PTR))
			return "moves a pointer by a product or an arithmetic shift, or by a "
			       "number computed from or compared with one (rte_bpf's validator "
			       "bounds them wrongly)";
		/* The validator keeps the destination's type and takes the
		 * source pointer's offset for its value: a number plus a
		 * pointer is a number whose bounds are that offset, which
		 * added to another pointer moves it where the validator does
		 * not see.  Only the distance between two pointers into one
		 * object is a number it sees right; a program that adds to a
		 * pointer puts the pointer first. */
		if (alu_reads_src(in) && BPF_OP(in->code) != EBPF_MOV &&
		    (bits(s->reg[src]) & (MAY_PTR | MAY_GARBLED)) &&
		    !(BPF_OP(in->code) == BPF_SUB && cls == EBPF_ALU64 &&
		      one_object(bits(s->reg[dst]), bits(s->reg[src]))))
			return "computes with a pointer as the second operand" NARROW;
		break;
	default:
		break;
	}
	return NULL;
}

/* Whether call @in (by helper number here) is a map lookup: its result
 * points into a map's value. */
static bool is_lookup(const struct ebpf_insn *in)
{
	return rtebpf_helper_is_lookup(rtebpf_helper_of(in->imm));
}

/* What call @in leaves in r0, r1 holding @f: a lookup's result points into
 * a value of map @f, which programs may only read or which holds a spin
 * lock as @mb says. */
static int16_t call_result(const struct ebpf_insn *in, int16_t f, const struct rtebpf_map_bits *mb)
{
	int b = MAY_VALUE;

	if (!is_lookup(in))
		return F_NUM;
	if (f >= 0 && f < 64 && (mb->rdonly >> f & 1))
		b |= MAY_RDONLY;
	if (f >= 0 && f < 64 && (mb->locked >> f & 1))
		b |= MAY_LOCKED;
	return (int16_t)-b;
}

/* A compare of two registers narrows each from the other: what may be a
 * number takes the other's MAY_UNSOUND. */
static void compare_taints(struct state *s, uint8_t dst, uint8_t src)
{
	int16_t *r[2] = { &s->reg[dst], &s->reg[src] };

	if (!((bits(*r[0]) | bits(*r[1])) & MAY_UNSOUND))
		return;
	for (int k = 0; k < 2; k++)
		if (*r[k] < 0 && (-*r[k] & MAY_NUM))
			*r[k] = (int16_t)-(-*r[k] | MAY_UNSOUND);
}

/* What ALU instruction @in leaves in its destination, which held @d (@s
 * its source register's fact).  The validator keeps the destination's type
 * whatever the operation, 32-bit ones included, and its bounds then no
 * longer say where a pointer points unless it only moved by a constant. */
static int16_t alu_bits(const struct ebpf_insn *in, int16_t d, int16_t s)
{
	uint8_t op = BPF_OP(in->code);
	bool reg = alu_reads_src(in);
	bool alu64 = BPF_CLASS(in->code) == EBPF_ALU64;
	int bd = bits(d), bs = reg ? bits(s) : MAY_NUM;

	if (op == EBPF_MOV) {
		if (!reg)
			return F_NUM;
		if (alu64 || !(bs & (MAY_PTR | MAY_GARBLED)))
			return s;
		/* the low half of a pointer */
		return (int16_t)-((bs & (MAY_NUM | MAY_MAP)) | MAY_GARBLED);
	}
	if (alu64 && !reg && (op == BPF_ADD || op == BPF_SUB))
		return d == F_STACK ? F_STACK : (int16_t)-bd; /* moved by a constant */
	/* The distance between two pointers into one object: its bounds are
	 * what it holds (the packet length of a bounds check). */
	if (alu64 && reg && op == BPF_SUB && one_object(bd, bs))
		return F_NUM;
	if (!((bd | bs) & (MAY_PTR | MAY_GARBLED)))
		return F_NUM;
	/* A pointer moved by a number (data + ihl): where it points is
	 * computed, and bounded by compares with its own object. */
	if (alu64 && (op == BPF_ADD || op == BPF_SUB) && !(bs & (MAY_PTR | MAY_GARBLED)) &&
	    !(bd & MAY_GARBLED))
		return (int16_t)-(bd | MAY_VAROFF);
	/* Anything else done to a pointer garbles it (a pointer as the
	 * source is refused: refusal()).  What may be a map stays so. */
	return (int16_t)-((bd & (MAY_NUM | MAY_MAP)) | ((bd | bs) & MAY_PTR ? MAY_GARBLED : 0) |
			  (bd & MAY_GARBLED));
}

/* alu_bits(), and what may be a number comes out MAY_UNSOUND from a
 * multiply, an arithmetic shift, or an operand that may be. */
static int16_t alu(const struct ebpf_insn *in, int16_t d, int16_t s)
{
	int16_t r = alu_bits(in, d, s);
	uint8_t op = BPF_OP(in->code);
	int from = (op == EBPF_MOV ? 0 : bits(d)) | (alu_reads_src(in) ? bits(s) : 0);

	if (r < 0 && (-r & MAY_NUM) && (op == BPF_MUL || op == EBPF_ARSH || (from & MAY_UNSOUND)))
		r = (int16_t)-(-r | MAY_UNSOUND);
	return r;
}

/* The state after instruction @i. */
static void step(const struct ebpf_insn *ins, const int *map_load,
		 const struct rtebpf_map_bits *mb, uint32_t i, struct state *s)
{
	const struct ebpf_insn *in = &ins[i];
	uint8_t cls = in->code & 0x07, dst, src;
	int16_t f;
	int k;

	regs(&dst, &src, in);
	switch (cls) {
	case BPF_LD:
		if (rtebpf_is_imm64(in)) {
			s->reg[dst] = (int16_t)(map_load[i] >= 0 ? map_load[i] : F_NUM);
		} else {
			/* packet loads: r0 set, r1-r5 clobbered */
			for (int r = 1; r <= 5; r++)
				s->reg[r] = F_ANY;
			s->reg[0] = F_NUM;
		}
		break;
	case BPF_LDX:
		/* Memory other than the stack holds neither handles nor stack
		 * pointers (refusal). */
		if (src == EBPF_REG_10) {
			s->reg[dst] = whole_slot(in) ? s->slot[slot_of(in->off)] : partial_fill(s, in);
		} else if (bits(s->reg[src]) & MAY_STACK) {
			f = F_NUM;
			for (k = 0; k < NSLOTS; k++)
				f = join1(f, s->slot[k]);
			s->reg[dst] = f;
		} else {
			s->reg[dst] = F_NUM;
		}
		break;
	case BPF_ST:
	case BPF_STX:
		/* A store of part of a register (or an atomic add of one)
		 * leaves what it may be in the slot as well: the validator
		 * types the slot by the register whatever the size, and a
		 * later fill, or halves put back together, are that pointer
		 * to it again. */
		f = cls == BPF_STX ? join1(s->reg[src], F_NUM) : F_NUM;
		if (dst == EBPF_REG_10) {
			k = slot_of(in->off);
			if (k < 0)
				break;
			s->slot[k] = BPF_MODE(in->code) == BPF_MEM && whole_slot(in)
					     ? (cls == BPF_STX ? s->reg[src] : F_NUM)
					     : join1(s->slot[k], f);
			if (in->off % 8 && k > 0)
				s->slot[k - 1] = join1(s->slot[k - 1], f);
		} else if (bits(s->reg[dst]) & MAY_STACK) {
			store_anywhere(s, f);
		}
		break;
	case EBPF_ALU64:
	case BPF_ALU:
		s->reg[dst] = alu(in, s->reg[dst], s->reg[src]);
		break;
	default: /* jumps: calls clobber r0-r5 */
		if (in->code == (BPF_JMP | EBPF_CALL)) {
			s->reg[0] = call_result(in, s->reg[EBPF_REG_1], mb);
			for (int r = 1; r <= 5; r++)
				s->reg[r] = F_ANY;
		} else if (BPF_SRC(in->code) == BPF_X && BPF_OP(in->code) != BPF_JA &&
			   BPF_OP(in->code) != EBPF_EXIT) {
			compare_taints(s, dst, src);
		}
		break;
	}
	s->reg[EBPF_REG_10] = F_STACK;
}

/* Successors of @i: up to two, -1 for none. */
static void successors(const struct ebpf_insn *ins, uint32_t i, int64_t next[2])
{
	const struct ebpf_insn *in = &ins[i];
	uint8_t cls = in->code & 0x07;

	next[0] = i + 1;
	next[1] = -1;
	if (rtebpf_is_imm64(in)) {
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

/* The first jump into the second half of a 64-bit immediate load, or -1. */
static int64_t jump_into_lddw(const struct ebpf_insn *ins, uint32_t n)
{
	bool *second = calloc(n ? n : 1, sizeof(*second));
	int64_t bad = -1;

	if (!second)
		return -2;
	for (uint32_t i = 0; i + 1 < n; i++)
		if (rtebpf_is_imm64(&ins[i]))
			second[++i] = true;
	for (uint32_t i = 0; i < n && bad < 0; i++) {
		int64_t next[2];

		if (second[i])
			continue;
		successors(ins, i, next);
		for (int j = 0; j < 2; j++)
			if (next[j] >= 0 && next[j] < n && second[next[j]])
				bad = i;
	}
	free(second);
	return bad;
}

int rtebpf_mapflow(const struct ebpf_insn *insns, uint32_t n, const int *map_load,
		   const struct rtebpf_map_bits *mb, bool ctx_ptr, int *call_map, uint8_t *arg_maps,
		   uint8_t *arg_nums, uint32_t *bad, const char **why)
{
	int64_t into = jump_into_lddw(insns, n);

	if (into == -2)
		return -ENOMEM;
	if (into >= 0) {
		*bad = (uint32_t)into;
		*why = "jumps into the middle of a 64-bit immediate load";
		return -EINVAL;
	}

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
		/* r1 the context (a number when it has no size).  The other
		 * registers hold what the caller left there: a map helper call
		 * or a store here would refuse them (and the validator refuses
		 * reads of them before they are written).  The stack holds no
		 * pointer the validator lets the program use before it is
		 * written. */
		for (int r = 0; r < NREGS; r++)
			st[0].reg[r] = F_ANY;
		for (int k = 0; k < NSLOTS; k++)
			st[0].slot[k] = F_NUM;
		st[0].reg[EBPF_REG_1] = ctx_ptr ? (int16_t)-MAY_CTX : F_NUM;
		st[0].reg[EBPF_REG_10] = F_STACK;
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
		step(insns, map_load, mb, i, &s);
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
	*why = NULL;
	for (uint32_t i = 0; i < n; i++) {
		call_map[i] = !st[i].reached		? RTEBPF_MAP_UNREACHED
			      : st[i].reg[EBPF_REG_1] >= 0 ? st[i].reg[EBPF_REG_1]
							   : RTEBPF_MAP_UNKNOWN;
		arg_maps[i] = arg_nums[i] = 0;
		for (int r = 1; st[i].reached && r <= 5; r++) {
			if (bits(st[i].reg[r]) & (MAY_MAP | MAY_GARBLED))
				arg_maps[i] |= (uint8_t)(1u << r);
			if (bits(st[i].reg[r]) & MAY_NUM)
				arg_nums[i] |= (uint8_t)(1u << r);
		}
		if (st[i].reached && !*why && (*why = refusal(&insns[i], &st[i])))
			*bad = i;
	}
	free(st);
	free(work);
	free(queued);
	return *why ? -EINVAL : 0;
}
