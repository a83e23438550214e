// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reading one program out of a BPF ELF object (clang -target bpf): its
 * instructions, copied so that they can be patched, and the relocations of
 * its section, each with the symbol it names and where that symbol lives.
 * libelf does the ELF parsing; this file only picks the pieces.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "rtebpf.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

static const char *section_name(Elf *elf, size_t shstrndx, Elf_Scn *scn)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return NULL;
	return elf_strptr(elf, shstrndx, sh.sh_name);
}

static bool is_program(const GElf_Shdr *sh)
{
	return sh->sh_type == SHT_PROGBITS && (sh->sh_flags & SHF_EXECINSTR) && sh->sh_size;
}

/* The program section: @want, or the only executable section other than
 * .text (which holds functions that were not inlined). */
static Elf_Scn *find_program(Elf *elf, size_t shstrndx, const char *want, struct rtebpf_log *log)
{
	Elf_Scn *scn = NULL, *found = NULL;
	char names[256] = "";
	int count = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name = section_name(elf, shstrndx, scn);

		if (!name || !gelf_getshdr(scn, &sh) || !is_program(&sh))
			continue;
		if (want) {
			if (!strcmp(name, want))
				return scn;
		} else if (strcmp(name, ".text")) {
			found = scn;
			count++;
		}
		if (strlen(names) + strlen(name) + 3 < sizeof(names)) {
			if (names[0])
				strcat(names, ", ");
			strcat(names, name);
		}
	}
	if (want)
		rtebpf_log(log, "no program section \"%s\" in the object (its program sections: %s)",
			   want, names[0] ? names : "none");
	else if (count == 1)
		return found;
	else if (count == 0)
		rtebpf_log(log, "the object has no program section");
	else
		rtebpf_log(log, "the object has several program sections (%s): name one in "
				"opts.section", names);
	return NULL;
}

/* The relocations of section @prog_idx: an SHT_REL section pointing at it. */
static int read_relocs(Elf *elf, size_t shstrndx, size_t prog_idx, struct rtebpf_elf *out,
		       struct rtebpf_log *log)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *syms;
		Elf_Scn *symscn;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_REL || sh.sh_info != prog_idx)
			continue;
		data = elf_getdata(scn, NULL);
		symscn = elf_getscn(elf, sh.sh_link);
		if (!data || !symscn || !gelf_getshdr(symscn, &symsh) ||
		    !(syms = elf_getdata(symscn, NULL)) || !sh.sh_entsize)
			return rtebpf_log(log, "the relocations of section \"%s\" are malformed",
					  out->section);
		if (out->relocs)
			return rtebpf_log(log, "section \"%s\" has more than one relocation "
					       "section", out->section);
		n = sh.sh_size / sh.sh_entsize;
		out->relocs = calloc(n ? n : 1, sizeof(*out->relocs));
		if (!out->relocs)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			struct rtebpf_reloc *r = &out->relocs[out->nb_relocs];
			GElf_Rel rel;
			GElf_Sym sym;
			Elf_Scn *home;

			if (!gelf_getrel(data, (int)i, &rel) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(rel.r_info), &sym))
				return rtebpf_log(log, "relocation %zu of \"%s\" is malformed", i,
						  out->section);
			if (rel.r_offset % sizeof(struct ebpf_insn) ||
			    rel.r_offset / sizeof(struct ebpf_insn) >= out->nb_insns)
				return rtebpf_log(log, "relocation %zu of \"%s\" points outside "
						       "the program", i, out->section);
			r->insn = (uint32_t)(rel.r_offset / sizeof(struct ebpf_insn));
			r->type = (uint32_t)GELF_R_TYPE(rel.r_info);
			r->sym = elf_strptr(elf, symsh.sh_link, sym.st_name);
			r->sym_is_section = GELF_ST_TYPE(sym.st_info) == STT_SECTION;
			home = sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE
				       ? elf_getscn(elf, sym.st_shndx) : NULL;
			if (home) {
				GElf_Shdr hsh;

				r->section = section_name(elf, shstrndx, home);
				r->section_exec = gelf_getshdr(home, &hsh) &&
						  (hsh.sh_flags & SHF_EXECINSTR);
			}
			if (r->sym_is_section || !r->sym || !r->sym[0])
				r->sym = r->section ? r->section : "?";
			out->nb_relocs++;
		}
	}
	return 0;
}

int rtebpf_elf_read(const void *obj, size_t size, const char *section, struct rtebpf_elf *out,
		    struct rtebpf_log *log)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Data *data;
	Elf_Scn *prog;
	size_t shstrndx;
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return rtebpf_log(log, "libelf: %s", elf_errmsg(-1));
	/* libelf reads in place and never writes through a read-only handle. */
	elf = elf_memory((char *)(uintptr_t)obj, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		return rtebpf_log(log, "not an ELF object");
	}
	out->elf = elf;
	if (eh.e_machine != EM_BPF || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		err = rtebpf_log(log, "not a little-endian 64-bit BPF object (e_machine %u); "
				      "build it with clang -target bpf",
				 eh.e_machine);
		goto fail;
	}
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		err = rtebpf_log(log, "libelf: %s", elf_errmsg(-1));
		goto fail;
	}
	prog = find_program(elf, shstrndx, section, log);
	if (!prog) {
		err = -EINVAL;
		goto fail;
	}
	out->section = section_name(elf, shstrndx, prog);
	data = elf_getdata(prog, NULL);
	if (!gelf_getshdr(prog, &sh) || !data || data->d_size != sh.sh_size ||
	    sh.sh_size % sizeof(struct ebpf_insn)) {
		err = rtebpf_log(log, "section \"%s\" is not a whole number of instructions",
				 out->section);
		goto fail;
	}
	out->nb_insns = (uint32_t)(sh.sh_size / sizeof(struct ebpf_insn));
	out->insns = malloc(sh.sh_size);
	if (!out->insns) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(out->insns, data->d_buf, sh.sh_size);
	err = read_relocs(elf, shstrndx, elf_ndxscn(prog), out, log);
	if (err)
		goto fail;
	return 0;
fail:
	rtebpf_elf_release(out);
	return err;
}

void rtebpf_elf_release(struct rtebpf_elf *e)
{
	free(e->insns);
	free(e->relocs);
	if (e->elf)
		elf_end(e->elf);
	memset(e, 0, sizeof(*e));
}
