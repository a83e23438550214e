/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfmap_rtebpf's internals.  A load runs in four steps, a file each:
 *  - elf.c reads the program's instructions and relocations from the object;
 *  - syms.c builds the rte_bpf_xsym table (helper slots, per-map helpers,
 *    map variables, kfuncs) and owns the helpers' C side;
 *  - mapflow.c finds, for every helper call, the map its r1 holds;
 *  - load.c applies the relocations, rewrites each helper call to its map's
 *    own entry, and hands the result to rte_bpf_load(), collecting what the
 *    validator says.
 * log.c gathers the messages a failed load gives back.
 */
#ifndef BPFMAP_RTEBPF_INTERNAL_H
#define BPFMAP_RTEBPF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf_def.h>

#include <bpfmap.h>
#include <bpfmap_rtebpf.h>

#define RTEBPF_HIDDEN __attribute__((visibility("hidden")))

/* ---- log.c: the explanation of a failed load ---- */
struct rtebpf_log {
	char *buf;   /* the caller's opts->log_buf, or NULL */
	size_t size;
	size_t len;  /* bytes written so far, excluding the NUL */
};

RTEBPF_HIDDEN void rtebpf_log_init(struct rtebpf_log *log, char *buf, size_t size);
/* Append one line (a newline is added); always returns -EINVAL, the errno of
 * every refusal it explains. */
RTEBPF_HIDDEN int rtebpf_log(struct rtebpf_log *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A short description of instruction @ins ("call 5", "r1 = *(u64 *)(r10 - 8)"
 * is rte_bpf_dump()'s job; this names its class and operation) into @buf. */
RTEBPF_HIDDEN const char *rtebpf_insn_str(const struct ebpf_insn *ins, char *buf, size_t size);

/* ---- elf.c: one program section of a BPF ELF object ---- */
struct rtebpf_reloc {
	uint32_t insn;        /* index of the instruction it patches */
	uint32_t type;        /* R_BPF_* */
	const char *sym;      /* the symbol's name; a section symbol: its section's */
	const char *section;  /* the section the symbol lives in; NULL: undefined */
	bool sym_is_section;
	bool section_exec;    /* the symbol is code (a BPF-to-BPF call target) */
};

struct rtebpf_elf {
	void *elf;                /* Elf * */
	const char *section;      /* the program's section */
	struct ebpf_insn *insns;  /* a private copy, to be patched */
	uint32_t nb_insns;
	struct rtebpf_reloc *relocs;
	uint32_t nb_relocs;
};

/* 0, or -EINVAL (with @log saying why) / -ENOMEM.  @section NULL: the
 * object's only program section. */
RTEBPF_HIDDEN int rtebpf_elf_read(const void *obj, size_t size, const char *section,
				  struct rtebpf_elf *out, struct rtebpf_log *log);
RTEBPF_HIDDEN void rtebpf_elf_release(struct rtebpf_elf *e);

/* ---- syms.c: the external symbols ---- */

/* The kernel's helper numbers rte_bpf programs may call. */
enum rtebpf_helper {
	RTEBPF_MAP_LOOKUP,
	RTEBPF_MAP_UPDATE,
	RTEBPF_MAP_DELETE,
	RTEBPF_MAP_LOOKUP_PERCPU,
	RTEBPF_NR_HELPERS,
};
#define RTEBPF_HELPER_SLOTS 196 /* entries 0..195 answer `call N` */
#define RTEBPF_MAX_MAPS 64
#define RTEBPF_MAX_NAME 64

/* What a program's map variable points to: the lookup resolved once. */
struct rtebpf_map {
	bpfmap_lookup_fn lookup;
	struct bpfmap *map;
};

/* The helper behind kernel helper number @nr, or -1. */
RTEBPF_HIDDEN int rtebpf_helper_of(int32_t nr);
RTEBPF_HIDDEN const char *rtebpf_helper_name(enum rtebpf_helper h);
/* Whether helper @h (rtebpf_helper_of's) returns a pointer into a value. */
static inline bool rtebpf_helper_is_lookup(int h)
{
	return h == RTEBPF_MAP_LOOKUP || h == RTEBPF_MAP_LOOKUP_PERCPU;
}
/* The kernel's number of the map helper called @name, or -1. */
RTEBPF_HIDDEN int rtebpf_helper_named(const char *name);
/* The index of map @name in the table's maps, or -1. */
RTEBPF_HIDDEN int rtebpf_syms_map(const struct rte_bpf_xsym *syms, const char *name);
RTEBPF_HIDDEN const char *rtebpf_syms_map_name(const struct rte_bpf_xsym *syms, int map);
RTEBPF_HIDDEN const struct bpfmap_info *rtebpf_syms_map_info(const struct rte_bpf_xsym *syms,
							   int map);
/* The address a program's `r = map ll` must load for map @map. */
RTEBPF_HIDDEN uint64_t rtebpf_syms_map_addr(const struct rte_bpf_xsym *syms, int map);
/* The entry of helper @h declared with map @map's sizes. */
RTEBPF_HIDDEN uint32_t rtebpf_syms_map_helper(const struct rte_bpf_xsym *syms, int map,
					      enum rtebpf_helper h);
/* The entry of the kfunc called @name, or -1 (the map helpers are called by
 * number, or by name through rtebpf_helper_named(), and bound to a map). */
RTEBPF_HIDDEN int rtebpf_syms_func(const struct rte_bpf_xsym *syms, const char *name);
/* The kernel's number of the helper whose per-map entry is called @name
 * ("<helper>__<map>"), with *@map its map; or -1. */
RTEBPF_HIDDEN int rtebpf_syms_map_helper_named(const struct rte_bpf_xsym *syms, const char *name,
					       int *map);
RTEBPF_HIDDEN uint32_t rtebpf_syms_count(const struct rte_bpf_xsym *syms);
/* Whether @addr lies in a map's handle (what a map load points at). */
RTEBPF_HIDDEN bool rtebpf_syms_in_handles(const struct rte_bpf_xsym *syms, uint64_t addr);
/* Bit k of each field set for map k (at most 64 maps). */
struct rtebpf_map_bits {
	uint64_t rdonly; /* BPFMAP_F_RDONLY_PROG: programs may only read its values */
	uint64_t locked; /* its values hold a spin lock */
};
RTEBPF_HIDDEN struct rtebpf_map_bits rtebpf_syms_map_bits(const struct rte_bpf_xsym *syms);
/* Bit r set for each of r1-r5 that entry @e's function takes as a
 * pointer. */
RTEBPF_HIDDEN uint8_t rtebpf_syms_ptr_args(const struct rte_bpf_xsym *syms, int e);
/* How many arguments entry @e's function takes. */
RTEBPF_HIDDEN uint32_t rtebpf_syms_nb_args(const struct rte_bpf_xsym *syms, int e);
/* The kfuncs' names, comma-separated, into @buf (for messages); @buf. */
RTEBPF_HIDDEN const char *rtebpf_kfunc_list(char *buf, size_t size);

/* ---- paths.c: the validator's work, bounded before it starts ---- */

/* The instructions rte_bpf's validator will visit on the program of @n
 * instructions at @ins, which walks every path (saturating); 0 where it
 * refuses the program's shape itself (a loop, a jump out of it).  0 or
 * -ENOMEM. */
RTEBPF_HIDDEN int rtebpf_validator_work(const struct ebpf_insn *ins, uint32_t n, uint64_t *work);

/* ---- mapflow.c: which map each helper call receives ---- */

/* A 64-bit immediate load: two instructions, the second only its upper
 * half. */
static inline bool rtebpf_is_imm64(const struct ebpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | EBPF_DW);
}

/* What each refusal of a way to a map's handle adds to its message. */
#define RTEBPF_REACH " (a program may reach a map only by passing it to the map helpers)"
#define RTEBPF_MAP_UNKNOWN (-1) /* r1 may hold anything, or different maps */
#define RTEBPF_MAP_UNREACHED (-2)

/* @map_load[i]: the map that instruction i (a 64-bit immediate load) loads,
 * or -1; @mb: which maps' values programs may only read, and which hold a
 * spin lock (helper calls are by number here); @ctx_ptr: whether the program's
 * argument is a pointer (rte_bpf's prog_arg has a size).  Fills
 * @call_map[i], for every instruction i, with the map r1 holds on entry to
 * it, @arg_maps[i] with bit r set for each of r1-r5 that may hold a map or
 * a garbled pointer there, and @arg_nums[i] for each that may hold a
 * number (all meaningful at calls).  0, -ENOMEM, or
 * -EINVAL with *@bad the first instruction that would reach a map's handle
 * other than through a helper, that compares what rte_bpf's validator would
 * narrow unsoundly, that moves a pointer by what it bounds wrongly, that
 * writes where programs may not (a read-only value, a value with a spin
 * lock), or that jumps into the second half of a 64-bit immediate load,
 * and *@why what it does. */
RTEBPF_HIDDEN int rtebpf_mapflow(const struct ebpf_insn *insns, uint32_t n, const int *map_load,
				 const struct rtebpf_map_bits *mb, bool ctx_ptr, int *call_map,
				 uint8_t *arg_maps, uint8_t *arg_nums, uint32_t *bad,
				 const char **why);

#endif
