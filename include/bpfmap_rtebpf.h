/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfmap_rtebpf — bpfmap's maps and string kfuncs for DPDK's rte_bpf, so
 * that a BPF program built by clang for the kernel runs unmodified in user
 * space, interpreted or JIT-compiled by librte_bpf.  An optional component:
 * link -lbpfmap-rtebpf (pkg-config bpfmap-rtebpf); libbpfmap itself does
 * not depend on DPDK.  No EAL initialisation is needed.
 *
 * What a program may use:
 *  - maps defined in SEC(".maps"), matched by name to the bpfmap maps the
 *    caller passes (struct bpfmap_rtebpf_map); the definitions in the object
 *    are not read: the bpfmap maps decide type and sizes;
 *  - the map helpers by their kernel numbers: bpf_map_lookup_elem (1),
 *    bpf_map_update_elem (2), bpf_map_delete_elem (3),
 *    bpf_map_lookup_percpu_elem (195), with the semantics of bpfmap_lookup(),
 *    bpfmap_update(), bpfmap_delete() and bpfmap_lookup_percpu();
 *  - the string kfuncs under their kernel names (bpf_strcmp ... bpf_strnstr,
 *    declared __ksym), with the results of bpfmap_strcmp() ... .  Unlike
 *    the kernel's, which stop at a fault, they read the strings in place,
 *    so their arguments must be NUL-terminated within memory the program
 *    may read (or within the bound the kfunc takes): the validator checks
 *    one byte of each;
 *  - atomic adds (lock *(u64 *)(r + off) += r), which rte_bpf supports.
 *
 * What rte_bpf (DPDK 22.11) does not accept, so neither does this: global
 * data and string literals (.rodata, .data, .bss), BPF-to-BPF calls (inline
 * every function), loops its validator cannot prove end (unroll them),
 * 32-bit jumps (build with clang -mcpu=v2 or lower), and helpers other than
 * the four above.  Its validator does not track NULL: a program that uses a
 * lookup's result without checking it is accepted and crashes on a miss.
 * Nor does it keep a program from the 16-byte handles its map loads point
 * at (they name the function a lookup calls): loading refuses any read or
 * write through a map pointer (or through a part of one, however it was
 * loaded or put back together), a map pointer stored anywhere but whole in
 * a stack slot or passed in any argument but a map helper's first, a stack
 * pointer stored outside the stack, and a jump into the second half of a
 * 64-bit immediate load.  It also refuses, as the kernel's verifier does,
 * a write through what a lookup in a BPFMAP_F_RDONLY_PROG map returned.
 * Loading reports each of these with the instruction at fault.
 *
 * Not a sandbox.  rte_bpf's validator narrows a register's bounds from the
 * other operand of a conditional jump whatever their types; loading refuses
 * the compares where that would be wrong (a pointer moved by a computed
 * number compared with a constant, a pointer with a number, pointers into
 * different objects or map values, anything that may be a map), so a
 * pointer cannot pass for one at a checked offset that way.  The validator
 * also keeps the first operand's type through arithmetic, and a constant
 * offset through any operation (0 * 3, 0 & x, -0): loading refuses an ALU
 * operation with a pointer as its second operand (but the distance between
 * two pointers into one object), a read or write through what is a number
 * and its use as a pointer argument, the negation of a number (whose range
 * it gets wrong), and any use but a compare with a constant of a pointer
 * changed by more than an offset.  These close every way in that
 * adversarial probes found; the validator was not written against hostile
 * programs and this check is not proven complete against it (products,
 * arithmetic shifts and writes into values with a spin lock are refused
 * too: docs/RTEBPF.md).  Load programs you would trust inside the process
 * (your own, or ones the kernel's verifier accepted).  One pattern the
 * validator accepts is refused: comparing two pointers into one map value
 * (`p < &v->a[15]`); compare an index instead.
 *
 * Concurrency: a loaded program may run in any number of threads at once.
 * Pointers its lookups return are valid inside a bpfmap read-side section;
 * bpfmap_rtebpf_run() and bpfmap_rtebpf_run_burst() open one around the
 * run, a caller of the JIT-ed function opens its own (bpfmap_read_lock()).
 */
#ifndef BPFMAP_RTEBPF_H
#define BPFMAP_RTEBPF_H

#include <stddef.h>
#include <stdint.h>

#include <bpfmap.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_bpf;
struct rte_bpf_xsym;

/* A map as a program names it: @name is the symbol of its definition in
 * SEC(".maps"). */
struct bpfmap_rtebpf_map {
	const char *name;
	struct bpfmap *map;
};

/*
 * bpfmap_rtebpf_syms - the external symbols (struct rte_bpf_xsym) that give
 * a program the maps @maps and every helper and kfunc above, for callers who
 * load programs with rte_bpf_load() or rte_bpf_elf_load() themselves.
 * Layout:
 *  - entries 0 .. 195 are the kernel's helper numbers: a program's `call N`
 *    runs entry N; 1, 2, 3 and 195 are the map helpers, declared to the
 *    validator with the sizes all maps admit (keys and update values of the
 *    largest key and value sizes, lookup results of the smallest value
 *    size); the other numbers are not functions, so the validator refuses
 *    calls to them;
 *  - per map, "<helper>__<map name>" (bpf_map_lookup_elem__flows, ...)
 *    declared with that map's own sizes: bpfmap_rtebpf_load() rewrites each
 *    helper call to its map's entry (and a program may call one by name,
 *    with that map only);
 *  - the maps as variables, by name, and the string kfuncs, by name.
 * @maps: @nb_maps maps with distinct names (at most 64); they must outlive
 * every program loaded with the table.
 * Only bpfmap_rtebpf_load() checks that a program reaches a map's handle
 * (the variable a map load points at: the lookup function and the map) in
 * no other way than by passing it to a helper as its map, and that each
 * call receives the map it was declared for: rte_bpf's validator checks
 * sizes only.  A program loaded with this table by rte_bpf_elf_load() or
 * rte_bpf_load() is trusted not to read, write or fake a handle, which
 * would let it call any address.
 * Returns the table (free it with bpfmap_rtebpf_syms_free()), with its
 * length in *@nb_xsym, or NULL with errno EINVAL (NULL arguments, an empty
 * or duplicate name, a name over 64 bytes, too many maps) or ENOMEM.
 */
BPFMAP_API struct rte_bpf_xsym *bpfmap_rtebpf_syms(const struct bpfmap_rtebpf_map *maps,
						   uint32_t nb_maps, uint32_t *nb_xsym);
BPFMAP_API void bpfmap_rtebpf_syms_free(struct rte_bpf_xsym *syms);

/* Options of bpfmap_rtebpf_load(); all-zero is the default. */
struct bpfmap_rtebpf_opts {
	size_t sz BPFMAP__DEFAULT(0); /* sizeof(struct bpfmap_rtebpf_opts) of the caller */
	const char *section BPFMAP__DEFAULT(NULL); /* the program's ELF section; NULL: the only one */
	/* The program's argument: a pointer to ctx_size bytes it may read and
	 * write (the validator checks every access against it); 0: a plain
	 * 64-bit value. */
	size_t ctx_size BPFMAP__DEFAULT(0);
	/* Where a failed load explains itself: the cause, the instruction at
	 * fault and what the validator printed, NUL-terminated and cut to
	 * log_size bytes.  Cleared (an empty string) when a load begins, so that
	 * it holds "" after one that succeeds. */
	char *log_buf BPFMAP__DEFAULT(NULL);
	size_t log_size BPFMAP__DEFAULT(0);
};

/* Usage: BPFMAP_RTEBPF_OPTS(opts, .log_buf = buf, .log_size = n), or
 * BPFMAP_RTEBPF_OPTS(opts); the name is split off as in bpfmap.h's
 * BPFMAP_CREATE_OPTS. */
#define BPFMAP_RTEBPF_OPTS(...) BPFMAP__RTEBPF_OPTS(__VA_ARGS__, )
#define BPFMAP__RTEBPF_OPTS(NAME, ...)                                        \
	struct bpfmap_rtebpf_opts NAME = {                                    \
		.sz = sizeof(struct bpfmap_rtebpf_opts),                      \
		__VA_ARGS__                                                   \
	}

struct bpfmap_rtebpf_prog;

/*
 * bpfmap_rtebpf_load - load one program of a BPF ELF object (as clang
 * -target bpf writes it) from @obj, @size bytes, onto the maps @maps:
 * resolve its maps, helpers and kfuncs, give each helper call the entry of
 * the map it is called with, then hand it to rte_bpf_load(), which
 * validates it and JIT-compiles it where DPDK can (x86-64, arm64).
 * bpfmap_rtebpf_load_file() reads the object from @path first.
 * Returns the program, or NULL with errno:
 *  - EINVAL: not a BPF ELF object, no such section (or several and none
 *    named), a map or kfunc the program names that is not given or not
 *    provided, a helper that is not provided, a helper call whose map
 *    cannot be told from the code, an access that would reach a map's
 *    handle, global data, a BPF-to-BPF call, or the validator refused the
 *    program; opts->log_buf says which; also a @path that is not a regular
 *    file;
 *  - E2BIG: more paths than rte_bpf's validator, which walks each one,
 *    goes through in about a second (2^28 instruction visits; 22 diamonds
 *    "if x then y = c" in a row pass, 23 do not);
 *  - ENOENT, EACCES, EISDIR...: @path cannot be read; ENOMEM.
 * Concurrency: loads may run in parallel, but each validation holds a
 * process-wide lock while it redirects DPDK's log stream
 * (rte_openlog_stream()) to collect the validator's messages, so
 * validations run one at a time (at most about a second each, above), and
 * DPDK messages of other threads may land in the log then.
 */
BPFMAP_API struct bpfmap_rtebpf_prog *
bpfmap_rtebpf_load(const void *obj, size_t size, const struct bpfmap_rtebpf_map *maps,
		   uint32_t nb_maps, const struct bpfmap_rtebpf_opts *opts);
BPFMAP_API struct bpfmap_rtebpf_prog *
bpfmap_rtebpf_load_file(const char *path, const struct bpfmap_rtebpf_map *maps,
			uint32_t nb_maps, const struct bpfmap_rtebpf_opts *opts);

/*
 * bpfmap_rtebpf_run - run @prog on @ctx with rte_bpf's interpreter, inside
 * a read-side section.  Returns the program's r0.  @prog must be a loaded
 * program (no NULL check: this is the per-packet call).
 */
BPFMAP_API uint64_t bpfmap_rtebpf_run(const struct bpfmap_rtebpf_prog *prog, void *ctx);

/*
 * bpfmap_rtebpf_run_burst - run @prog on @n contexts, @rc[i] the result of
 * @ctx[i], in one read-side section; JIT-compiled code if @jit and DPDK
 * produced it, else the interpreter.  Returns @n.  @prog must be a loaded
 * program, as for bpfmap_rtebpf_run().
 */
BPFMAP_API uint32_t bpfmap_rtebpf_run_burst(const struct bpfmap_rtebpf_prog *prog, void *ctx[],
					    uint64_t rc[], uint32_t n, int jit);

/*
 * bpfmap_rtebpf_jit - the JIT-compiled program, or NULL (no JIT for this
 * CPU, or DPDK's JIT declined the program).  Call it inside a read-side
 * section: fn(ctx) returns the program's r0.
 */
typedef uint64_t (*bpfmap_rtebpf_jit_fn)(void *ctx);
BPFMAP_API bpfmap_rtebpf_jit_fn bpfmap_rtebpf_jit(const struct bpfmap_rtebpf_prog *prog);

/* bpfmap_rtebpf_rte - the rte_bpf handle, for rte_bpf's own calls. */
BPFMAP_API struct rte_bpf *bpfmap_rtebpf_rte(const struct bpfmap_rtebpf_prog *prog);

/* bpfmap_rtebpf_free - unload; no thread may be running it.  NULL is a no-op. */
BPFMAP_API void bpfmap_rtebpf_free(struct bpfmap_rtebpf_prog *prog);

#ifdef __cplusplus
}
#endif

#endif /* BPFMAP_RTEBPF_H */
