// SPDX-License-Identifier: BSD-2-Clause
/*
 * Loading a program onto bpfmap's maps: relocations applied here rather
 * than by rte_bpf_elf_load(), because rte_bpf declares a helper's sizes per
 * external symbol, and one `call 1` serves every map in a kernel program.
 * So each helper call is pointed at the entry of the map it is called with
 * (mapflow.c finds which), and the validator checks keys, values and the
 * lookup's result against that map's own sizes.  Everything rte_bpf itself
 * would only log is turned into a message in the caller's buffer.
 */
#define ALLOW_EXPERIMENTAL_API 1 /* rte_bpf_dump(), to show a refused instruction */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_bpf.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "rtebpf.h"

struct bpfmap_rtebpf_prog {
	struct rte_bpf *bpf;
	bpfmap_rtebpf_jit_fn jit;
	struct rte_bpf_xsym *syms; /* the map variables the code points to */
};

static bool is_call(const struct ebpf_insn *ins)
{
	return ins->code == (BPF_JMP | EBPF_CALL);
}

static const char *given_maps(const struct bpfmap_rtebpf_map *maps, uint32_t n, char *buf,
			      size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n && len + 1 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", maps[i].name);
	return n ? buf : "none";
}

/* Resolve one relocation of the program: 0, 1 for a map helper's call left
 * for bind_helpers(), or -errno. */
static int apply_reloc(struct rtebpf_elf *e, const struct rtebpf_reloc *r,
		       const struct rte_bpf_xsym *syms, const struct bpfmap_rtebpf_map *maps,
		       uint32_t nb_maps, int *map_load, int *named_map, const bool *second_half,
		       struct rtebpf_log *log)
{
	struct ebpf_insn *ins = &e->insns[r->insn];
	char list[512];

	/* Its code byte is any number the object says: a patch there would
	 * write the 64-bit load's upper half, or the next instruction. */
	if (second_half[r->insn])
		return rtebpf_log(log, "insn %u: a relocation against \"%s\" at the second half "
				       "of a 64-bit load",
				  r->insn, r->sym);
	if (rtebpf_is_imm64(ins)) {
		uint64_t addr;
		int k;

		if (r->type != R_BPF_64_64)
			return rtebpf_log(log, "insn %u: relocation type %u against \"%s\" on a "
					       "64-bit load (R_BPF_64_64 expected)",
					  r->insn, r->type, r->sym);
		if (r->insn + 1 >= e->nb_insns)
			return rtebpf_log(log, "insn %u: a 64-bit load cut off by the end", r->insn);
		if (!r->section)
			return rtebpf_log(log, "insn %u: the extern variable \"%s\" is not provided "
					       "(a program gets maps and kfuncs only)",
					  r->insn, r->sym);
		if (strcmp(r->section, ".maps") && strcmp(r->section, "maps"))
			return rtebpf_log(log, "insn %u takes the address of \"%s\" in section %s: "
					       "rte_bpf programs have no global data or string "
					       "literals (.rodata, .data, .bss); build constants "
					       "on the stack",
					  r->insn, r->sym, r->section);
		k = rtebpf_syms_map(syms, r->sym);
		if (k < 0)
			return rtebpf_log(log, "insn %u uses map \"%s\", which is not among the maps "
					       "given (%s)",
					  r->insn, r->sym, given_maps(maps, nb_maps, list, sizeof(list)));
		addr = rtebpf_syms_map_addr(syms, k);
		ins[0].imm = (int32_t)(uint32_t)addr;
		ins[1].imm = (int32_t)(uint32_t)(addr >> 32);
		ins[0].src_reg = 0;
		map_load[r->insn] = k;
		return 0;
	}
	if (is_call(ins)) {
		int f;

		if (r->type != R_BPF_64_32)
			return rtebpf_log(log, "insn %u: relocation type %u against \"%s\" on a call "
					       "(R_BPF_64_32 expected)",
					  r->insn, r->type, r->sym);
		if (r->section_exec)
			return rtebpf_log(log, "insn %u: a BPF-to-BPF call (to %s%s): rte_bpf runs "
					       "one function; mark the callee __always_inline",
					  r->insn, r->sym_is_section ? "a function in " : "", r->sym);
		if (r->section)
			return rtebpf_log(log, "insn %u calls \"%s\" in section %s, which is not "
					       "code",
					  r->insn, r->sym, r->section);
		/* A map helper called by name is bound to its map below, as a
		 * call by number is; one named for a map ("<helper>__<map>")
		 * must receive that map. */
		f = rtebpf_helper_named(r->sym);
		if (f < 0)
			f = rtebpf_syms_map_helper_named(syms, r->sym, &named_map[r->insn]);
		if (f >= 0) {
			ins->imm = f;
			ins->src_reg = 0;
			return 1;
		}
		f = rtebpf_syms_func(syms, r->sym);
		if (f < 0)
			return rtebpf_log(log, "insn %u calls \"%s\", which is not provided (the "
					       "kfuncs are %s)",
					  r->insn, r->sym, rtebpf_kfunc_list(list, sizeof(list)));
		ins->imm = f;
		ins->src_reg = 0;
		return 0;
	}
	return rtebpf_log(log, "insn %u: relocation type %u against \"%s\" is not supported",
			  r->insn, r->type, r->sym);
}

/* Why a number may not be a pointer argument, though the validator checks
 * those: the distance between two pointers keeps the first one's type to
 * it, and a helper handed one reads at that small address. */
#define NUMBER_AS_POINTER " (rte_bpf's validator may take it for a pointer)"

/* The registers of arguments @from .. @nb_args, as rtebpf_mapflow's bits. */
static uint8_t arg_regs(uint32_t from, uint32_t nb_args)
{
	uint8_t m = 0;

	for (uint32_t r = from; r <= nb_args && r <= 5; r++)
		m |= (uint8_t)(1u << r);
	return m;
}

/* Point every helper call at the entry of the map it receives.  A map goes
 * to a map helper's first argument only: in another, or in a kfunc's, the
 * function would read or copy the handle's bytes. */
static int bind_helpers(struct rtebpf_elf *e, const struct rte_bpf_xsym *syms,
			const bool *relocated, const int *map_load, const int *named_map,
			bool ctx_ptr, struct rtebpf_log *log)
{
	size_t n = e->nb_insns ? e->nb_insns : 1;
	int *call_map = malloc(n * sizeof(*call_map));
	uint8_t *arg_maps = malloc(n), *arg_nums = malloc(n);
	int err = 0;

	if (!call_map || !arg_maps || !arg_nums) {
		free(call_map);
		free(arg_maps);
		free(arg_nums);
		return -ENOMEM;
	}
	uint32_t bad = 0;
	const char *why = NULL;

	const struct rtebpf_map_bits mb = rtebpf_syms_map_bits(syms);

	err = rtebpf_mapflow(e->insns, e->nb_insns, map_load, &mb, ctx_ptr, call_map, arg_maps,
			     arg_nums, &bad, &why);
	if (err == -EINVAL)
		err = rtebpf_log(log, "insn %u %s", bad, why);
	for (uint32_t i = 0; !err && i < e->nb_insns; i++) {
		struct ebpf_insn *ins = &e->insns[i];
		const struct bpfmap_info *info;
		int h, k;

		if (rtebpf_is_imm64(ins)) {
			i++;
			continue;
		}
		if (!is_call(ins))
			continue;
		if (relocated[i]) { /* a kfunc (apply_reloc resolves nothing else) */
			if (call_map[i] != RTEBPF_MAP_UNREACHED &&
			    (arg_maps[i] & arg_regs(1, rtebpf_syms_nb_args(syms, ins->imm)))) {
				err = rtebpf_log(log, "insn %u passes a map, or a pointer "
						      "changed by more than an offset, to the "
						      "kfunc %s" RTEBPF_REACH,
						 i, syms[ins->imm].name);
				break;
			}
			if (call_map[i] != RTEBPF_MAP_UNREACHED &&
			    (arg_nums[i] & rtebpf_syms_ptr_args(syms, ins->imm))) {
				err = rtebpf_log(log, "insn %u passes what may be a number as a "
						      "string to the kfunc %s%s",
						 i, syms[ins->imm].name, NUMBER_AS_POINTER);
				break;
			}
			continue;
		}
		if (ins->src_reg != 0) {
			err = rtebpf_log(log, "insn %u: a BPF-to-BPF call (offset %d): rte_bpf runs "
					      "one function; mark the callee __always_inline",
					 i, ins->imm);
			break;
		}
		h = rtebpf_helper_of(ins->imm);
		if (h < 0) {
			err = rtebpf_log(log, "insn %u calls helper %d, which is not provided (the "
					      "helpers are bpf_map_lookup_elem (1), "
					      "bpf_map_update_elem (2), bpf_map_delete_elem (3) and "
					      "bpf_map_lookup_percpu_elem (195))",
					 i, ins->imm);
			break;
		}
		k = call_map[i];
		if (k == RTEBPF_MAP_UNREACHED)
			continue; /* dead code: the validator has its say */
		if (k < 0) {
			err = rtebpf_log(log, "insn %u calls %s with a map that cannot be told from "
					      "the code (r1 is not the same map on every path): "
					      "load the map right before the call",
					 i, rtebpf_helper_name((enum rtebpf_helper)h));
			break;
		}
		if (named_map[i] >= 0 && named_map[i] != k) {
			err = rtebpf_log(log, "insn %u calls %s__%s with map \"%s\"", i,
					 rtebpf_helper_name((enum rtebpf_helper)h),
					 rtebpf_syms_map_name(syms, named_map[i]),
					 rtebpf_syms_map_name(syms, k));
			break;
		}
		info = rtebpf_syms_map_info(syms, k);
		if (h == RTEBPF_MAP_LOOKUP_PERCPU && info->type != BPFMAP_TYPE_PERCPU_HASH &&
		    info->type != BPFMAP_TYPE_LRU_PERCPU_HASH) {
			err = rtebpf_log(log, "insn %u calls bpf_map_lookup_percpu_elem on map "
					      "\"%s\", which is not per-CPU",
					 i, rtebpf_syms_map_name(syms, k));
			break;
		}
		/* bpfmap's program-view lookup refuses them (EPERM); the
		 * kernel's returns a value its verifier lets the program only
		 * write.  Refused rather than NULL at run time, which would
		 * drop the program's writes without a word. */
		if (rtebpf_helper_is_lookup(h) && (info->map_flags & BPFMAP_F_WRONLY_PROG)) {
			err = rtebpf_log(log, "insn %u calls %s on map \"%s\", which programs may "
					      "only write (BPFMAP_F_WRONLY_PROG): bpfmap's "
					      "program-view lookup refuses such maps",
					 i, rtebpf_helper_name((enum rtebpf_helper)h),
					 rtebpf_syms_map_name(syms, k));
			break;
		}
		/* The kernel's verifier: "write into map forbidden". */
		if ((h == RTEBPF_MAP_UPDATE || h == RTEBPF_MAP_DELETE) &&
		    (info->map_flags & BPFMAP_F_RDONLY_PROG)) {
			err = rtebpf_log(log, "insn %u calls %s on map \"%s\", which programs may "
					      "only read (BPFMAP_F_RDONLY_PROG)",
					 i, rtebpf_helper_name((enum rtebpf_helper)h),
					 rtebpf_syms_map_name(syms, k));
			break;
		}
		ins->imm = (int32_t)rtebpf_syms_map_helper(syms, k, (enum rtebpf_helper)h);
		if (arg_maps[i] & arg_regs(2, rtebpf_syms_nb_args(syms, ins->imm))) {
			err = rtebpf_log(log, "insn %u passes a map, or a pointer changed by "
					      "more than an offset, to %s other than as its "
					      "first argument" RTEBPF_REACH,
					 i, rtebpf_helper_name((enum rtebpf_helper)h));
			break;
		}
		if (arg_nums[i] & rtebpf_syms_ptr_args(syms, ins->imm) & ~(1u << 1)) {
			err = rtebpf_log(log, "insn %u passes what may be a number as a key or "
					      "value to %s%s",
					 i, rtebpf_helper_name((enum rtebpf_helper)h),
					 NUMBER_AS_POINTER);
			break;
		}
	}
	free(call_map);
	free(arg_maps);
	free(arg_nums);
	return err;
}

/*
 * The most instruction visits a program may cost rte_bpf's validator,
 * which walks every path (paths.c): about a second of this machine's
 * time, spent under log_lock, which every other load waits for.  A
 * program of 22 diamonds (if x then y = c) in a row passes (0.6 s here),
 * one of 23 not; the example's flow counter costs 22,920.
 */
#define RTEBPF_VALIDATOR_WORK_MAX (1ULL << 28)

/* -E2BIG, the kernel's answer for a program past its verifier's limit. */
static int check_work(const struct rtebpf_elf *e, struct rtebpf_log *log)
{
	uint64_t work;

	if (rtebpf_validator_work(e->insns, e->nb_insns, &work)) {
		rtebpf_log(log, "no memory to count the program's paths");
		return -ENOMEM;
	}
	if (work <= RTEBPF_VALIDATOR_WORK_MAX)
		return 0;
	rtebpf_log(log, "the program has too many paths: rte_bpf's validator walks each one, "
			"%llu instruction visits in all (at most %llu here); branches that "
			"join again (if x then y = c) double them each",
		   (unsigned long long)work, (unsigned long long)RTEBPF_VALIDATOR_WORK_MAX);
	return -E2BIG;
}

/* DPDK's validator reports through its log; collect what it says during one
 * rte_bpf_load() by pointing the log at a memory stream. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static struct rte_bpf *load_logged(const struct rte_bpf_prm *prm, char **said)
{
	struct rte_bpf *bpf;
	size_t len = 0;
	FILE *mem, *old;

	*said = NULL;
	pthread_mutex_lock(&log_lock);
	mem = open_memstream(said, &len);
	old = rte_log_get_stream();
	if (mem)
		rte_openlog_stream(mem);
	bpf = rte_bpf_load(prm);
	if (mem) {
		rte_openlog_stream(old);
		fclose(mem);
	}
	pthread_mutex_unlock(&log_lock);
	return bpf;
}

/* The validator's lines, each "at pc: N" followed by instruction N. */
static void explain_refusal(const char *said, const struct ebpf_insn *insns, uint32_t n,
			    struct rtebpf_log *log)
{
	const char *line = said ? said : "";
	bool jmp32 = false;

	rtebpf_log(log, "rte_bpf refused the program (rte_errno %d: %s):", rte_errno,
		   rte_strerror(rte_errno));
	while (*line) {
		const char *end = strchr(line, '\n'), *pc;
		int len = end ? (int)(end - line) : (int)strlen(line);
		unsigned long at;

		rtebpf_log(log, "  %.*s", len, line);
		pc = strstr(line, "at pc: ");
		if (pc && pc < line + len && (at = strtoul(pc + 7, NULL, 10)) < n) {
			char *text = NULL, desc[96];
			size_t tlen = 0;
			FILE *f = open_memstream(&text, &tlen);

			/* A 64-bit immediate load is dumped with its second
			 * half, which a truncated program lacks. */
			if (f && (!rtebpf_is_imm64(&insns[at]) || at + 1 < n))
				rte_bpf_dump(f, &insns[at], 1);
			if (f)
				fclose(f);
			/* rte_bpf_dump() numbers the one instruction "L0:\t". */
			if (text && tlen && strchr(text, '\t'))
				rtebpf_log(log, "    insn %lu: %s", at, strtok(strchr(text, '\t') + 1, "\n"));
			else
				rtebpf_log(log, "    insn %lu: %s", at,
					   rtebpf_insn_str(&insns[at], desc, sizeof(desc)));
			free(text);
		}
		line += len + (end ? 1 : 0);
	}
	if (said && strstr(said, "loop"))
		rtebpf_log(log, "  rte_bpf accepts no loops: unroll them (#pragma unroll with a "
				"constant bound)");
	for (uint32_t i = 0; i < n; i++)
		jmp32 |= BPF_CLASS(insns[i].code) == 0x06;
	if (jmp32)
		rtebpf_log(log, "  the program uses 32-bit jumps (clang -mcpu=v3), which this "
				"rte_bpf may not know: build it with -mcpu=v2");
}

static int prepare(struct rtebpf_elf *e, const struct rte_bpf_xsym *syms,
		   const struct bpfmap_rtebpf_map *maps, uint32_t nb_maps, bool ctx_ptr,
		   struct rtebpf_log *log)
{
	size_t n = e->nb_insns ? e->nb_insns : 1;
	int *map_load = malloc(n * sizeof(*map_load)), *named_map = malloc(n * sizeof(*named_map));
	bool *relocated = calloc(n, sizeof(*relocated)), *second_half = calloc(n, 1);
	int err = 0;

	if (!map_load || !named_map || !relocated || !second_half) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		map_load[i] = named_map[i] = -1;
	for (uint32_t i = 0; i + 1 < e->nb_insns; i++)
		if (rtebpf_is_imm64(&e->insns[i]))
			second_half[++i] = true;
	for (uint32_t r = 0; r < e->nb_relocs && err >= 0; r++) {
		err = apply_reloc(e, &e->relocs[r], syms, maps, nb_maps, map_load, named_map,
				  second_half, log);
		relocated[e->relocs[r].insn] = err == 0;
	}
	if (err > 0)
		err = 0;
	/* The validator gives a 64-bit constant equal to a variable's address
	 * that variable's type: a handle's address written out, rather than
	 * relocated, would be a map pointer the analysis does not know. */
	for (uint32_t i = 0; !err && i + 1 < e->nb_insns; i++) {
		const struct ebpf_insn *ins = &e->insns[i];

		if (!rtebpf_is_imm64(ins))
			continue;
		if (map_load[i] < 0 &&
		    rtebpf_syms_in_handles(syms, (uint32_t)ins[0].imm |
							 (uint64_t)(uint32_t)ins[1].imm << 32))
			err = rtebpf_log(log, "insn %u loads the address of a map's handle without "
					      "naming the map",
					 i);
		i++;
	}
	if (!err)
		err = bind_helpers(e, syms, relocated, map_load, named_map, ctx_ptr, log);
out:
	free(map_load);
	free(named_map);
	free(relocated);
	free(second_half);
	return err;
}

/* The caller's log buffer, where its options are whole enough to hold one. */
static void log_from_opts(struct rtebpf_log *log, const struct bpfmap_rtebpf_opts *opts)
{
	if (opts && opts->sz >= sizeof(*opts))
		rtebpf_log_init(log, opts->log_buf, opts->log_size);
}

struct bpfmap_rtebpf_prog *bpfmap_rtebpf_load(const void *obj, size_t size,
					      const struct bpfmap_rtebpf_map *maps,
					      uint32_t nb_maps,
					      const struct bpfmap_rtebpf_opts *opts)
{
	struct bpfmap_rtebpf_prog *prog = NULL;
	struct rtebpf_log log = { 0 };
	struct rtebpf_elf e = { 0 };
	struct rte_bpf_jit jit = { 0 };
	struct rte_bpf_prm prm = { 0 };
	struct rte_bpf_xsym *syms = NULL;
	char *said = NULL;
	uint32_t nb_xsym;
	int err;

	log_from_opts(&log, opts);
	if (!obj || !size) {
		err = rtebpf_log(&log, "bad arguments: no object");
		goto fail;
	}
	if (opts && opts->sz < sizeof(*opts)) {
		err = rtebpf_log(&log, "opts.sz %zu is smaller than this library's options (%zu)",
				 opts->sz, sizeof(*opts));
		goto fail;
	}
	syms = bpfmap_rtebpf_syms(maps, nb_maps, &nb_xsym);
	if (!syms) {
		err = errno == ENOMEM ? -ENOMEM
				      : rtebpf_log(&log, "the maps given are not usable: each needs "
							 "a map and a distinct name of 1-%d bytes, "
							 "%d maps at most",
						   RTEBPF_MAX_NAME, RTEBPF_MAX_MAPS);
		goto fail;
	}
	err = rtebpf_elf_read(obj, size, opts ? opts->section : NULL, &e, &log);
	if (err)
		goto fail;
	/* rte_bpf's argument is a pointer when it has a size (prm.prog_arg
	 * below), a number otherwise. */
	err = prepare(&e, syms, maps, nb_maps, opts && opts->ctx_size, &log);
	if (err)
		goto fail;
	prog = calloc(1, sizeof(*prog));
	if (!prog) {
		err = -ENOMEM;
		goto fail;
	}
	prm.ins = e.insns;
	prm.nb_ins = e.nb_insns;
	prm.xsym = syms;
	prm.nb_xsym = nb_xsym;
	prm.prog_arg.type = opts && opts->ctx_size ? RTE_BPF_ARG_PTR : RTE_BPF_ARG_RAW;
	prm.prog_arg.size = opts && opts->ctx_size ? opts->ctx_size : sizeof(uint64_t);
	err = check_work(&e, &log);
	if (err)
		goto fail;
	prog->bpf = load_logged(&prm, &said);
	if (!prog->bpf) {
		err = rte_errno == ENOMEM ? -ENOMEM : -EINVAL;
		explain_refusal(said, e.insns, e.nb_insns, &log);
		goto fail;
	}
	if (rte_bpf_get_jit(prog->bpf, &jit) == 0)
		prog->jit = jit.func;
	prog->syms = syms;
	free(said);
	rtebpf_elf_release(&e);
	return prog;
fail:
	free(said);
	free(prog);
	rtebpf_elf_release(&e);
	bpfmap_rtebpf_syms_free(syms);
	errno = -err;
	return NULL;
}

struct bpfmap_rtebpf_prog *bpfmap_rtebpf_load_file(const char *path,
						   const struct bpfmap_rtebpf_map *maps,
						   uint32_t nb_maps,
						   const struct bpfmap_rtebpf_opts *opts)
{
	struct bpfmap_rtebpf_prog *prog = NULL;
	struct rtebpf_log log = { 0 };
	char *buf = NULL;
	long size = -1;
	FILE *f;
	int fd, err;

	log_from_opts(&log, opts);
	/* Without blocking: opening a FIFO with no writer waits for one. */
	fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		err = path ? errno : EINVAL;
		rtebpf_log(&log, "%s: %s", path ? path : "(null)", strerror(err));
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	struct stat st;

	/* An object is a file: its size is read first (devices, FIFOs and
	 * sockets have none to read). */
	err = fstat(fd, &st) ? errno : S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? EINVAL : 0;
	if (err) {
		rtebpf_log(&log, "%s: %s", path, err == EINVAL ? "not a regular file" : strerror(err));
		fclose(f);
		errno = err;
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0)
		size = ftell(f);
	if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) &&
	    fread(buf, 1, (size_t)size, f) == (size_t)size) {
		fclose(f);
		prog = bpfmap_rtebpf_load(buf, (size_t)size, maps, nb_maps, opts);
		err = errno;
		free(buf);
		errno = err;
		return prog;
	}
	err = buf || size <= 0 ? (size == 0 ? EINVAL : EIO) : ENOMEM;
	rtebpf_log(&log, "%s: %s", path, size == 0 ? "empty file" : strerror(err));
	free(buf);
	fclose(f);
	errno = err;
	return NULL;
}

uint64_t bpfmap_rtebpf_run(const struct bpfmap_rtebpf_prog *prog, void *ctx)
{
	uint64_t rc;

	bpfmap_read_lock();
	rc = rte_bpf_exec(prog->bpf, ctx);
	bpfmap_read_unlock();
	return rc;
}

uint32_t bpfmap_rtebpf_run_burst(const struct bpfmap_rtebpf_prog *prog, void *ctx[],
				 uint64_t rc[], uint32_t n, int jit)
{
	bpfmap_read_lock();
	if (jit && prog->jit) {
		for (uint32_t i = 0; i < n; i++)
			rc[i] = prog->jit(ctx[i]);
	} else {
		n = rte_bpf_exec_burst(prog->bpf, ctx, rc, n);
	}
	bpfmap_read_unlock();
	return n;
}

bpfmap_rtebpf_jit_fn bpfmap_rtebpf_jit(const struct bpfmap_rtebpf_prog *prog)
{
	return prog ? prog->jit : NULL;
}

struct rte_bpf *bpfmap_rtebpf_rte(const struct bpfmap_rtebpf_prog *prog)
{
	return prog ? prog->bpf : NULL;
}

void bpfmap_rtebpf_free(struct bpfmap_rtebpf_prog *prog)
{
	if (!prog)
		return;
	rte_bpf_destroy(prog->bpf);
	bpfmap_rtebpf_syms_free(prog->syms);
	free(prog);
}
