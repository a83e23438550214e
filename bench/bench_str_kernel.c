// SPDX-License-Identifier: BSD-2-Clause
/*
 * str-kfuncs, the kernel column: the running kernel's string kfuncs, each
 * called once per run by a tc program (bpf/str.bpf.c) on strings placed in
 * its .bss, run with BPF_PROG_TEST_RUN and a repeat count.  The kernel times
 * the repeat loop itself and reports the mean per run, which includes the
 * test run's own per-run cost; the empty program, run the same way, measures
 * that cost.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bench_str.h"
#include "kernel_backend.h"
#include "str_shared.h"

static const char *const prog_names[BSTR_NKINDS + 1] = {
	[BSTR_SCAN] = "str_strnchr", [BSTR_CMP] = "str_strcmp",   [BSTR_SPAN] = "str_strcspn",
	[BSTR_SUBSTR] = "str_strnstr", [BSTR_KEMPTY] = "str_empty",
};
static const char *const kfunc_names[BSTR_NKINDS] = { "bpf_strnchr", "bpf_strcmp", "bpf_strcspn",
						      "bpf_strnstr" };

struct bstr_kernel {
	struct bpf_object *obj;
	int prog_fd[BSTR_NKINDS + 1];
	struct str_bench_state *st; /* the .bss, shared with the kernel */
	size_t map_len;
};

/* The kfuncs this kernel lacks, listed in @why; true when it has them all. */
static bool kernel_has_kfuncs(char *why, size_t len)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	size_t n = 0;

	if (!vmlinux) {
		snprintf(why, len, "no kernel BTF (/sys/kernel/btf/vmlinux): %s", strerror(errno));
		return false;
	}
	why[0] = '\0';
	for (int i = 0; i < BSTR_NKINDS; i++)
		if (btf__find_by_name_kind(vmlinux, kfunc_names[i], BTF_KIND_FUNC) < 0 && n < len)
			n += (size_t)snprintf(why + n, len - n, "%s%s", n ? ", " : "the kernel lacks ",
					      kfunc_names[i]);
	btf__free(vmlinux);
	if (n && n < len)
		snprintf(why + n, len - n, " (string kfuncs came with Linux 6.17)");
	return n == 0;
}

struct bstr_kernel *bstr_kernel_open(char *why, size_t len)
{
	struct bstr_kernel *k;
	struct bpf_map *map;
	int err;

	if (!kernel_has_kfuncs(why, len))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	kbpf_quiet_libbpf();
	k->obj = bpf_object__open_mem(bpf_obj_str, bpf_obj_str_len, NULL);
	if (!k->obj) {
		snprintf(why, len, "cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	err = bpf_object__load(k->obj);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			snprintf(why, len, "BPF not permitted here: loading a program failed with "
					   "%s (needs root, or CAP_BPF and CAP_NET_ADMIN)",
				 strerror(-err));
		else
			snprintf(why, len, "load: %s%s%s", strerror(-err),
				 kbpf_libbpf_message()[0] ? " -- " : "", kbpf_libbpf_message());
		goto fail;
	}
	for (int i = 0; i <= BSTR_NKINDS; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(k->obj, prog_names[i]);

		k->prog_fd[i] = p ? bpf_program__fd(p) : -1;
		if (k->prog_fd[i] < 0) {
			snprintf(why, len, "no program %s in the object", prog_names[i]);
			goto fail;
		}
	}
	bpf_object__for_each_map(map, k->obj) {
		const char *name = bpf_map__name(map);
		size_t nlen = strlen(name), page = (size_t)getpagesize();
		void *p;

		if (nlen < 4 || strcmp(name + nlen - 4, ".bss"))
			continue;
		if (bpf_map__value_size(map) < sizeof(*k->st))
			break;
		/* Map it ourselves: libbpf before 1.5 keeps a private copy for
		 * non-skeleton users. */
		k->map_len = (sizeof(*k->st) + page - 1) & ~(page - 1);
		p = mmap(NULL, k->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
		if (p != MAP_FAILED)
			k->st = p;
	}
	if (!k->st) {
		snprintf(why, len, "cannot map the programs' .bss");
		goto fail;
	}
	return k;
fail:
	bstr_kernel_close(k);
	return NULL;
}

void bstr_kernel_close(struct bstr_kernel *k)
{
	if (!k)
		return;
	if (k->st)
		munmap(k->st, k->map_len);
	bpf_object__close(k->obj);
	free(k);
}

void bstr_kernel_place(struct bstr_kernel *k, const struct bstr_case *c)
{
	struct str_bench_state *st = k->st;

	memset(st->buf, 0, sizeof(st->buf));
	memcpy(st->buf + c->koff_a, c->a, c->alen);
	memcpy(st->buf + c->koff_b, c->b, c->blen);
	st->off_a = c->koff_a;
	st->off_b = c->koff_b;
	st->n = c->n;
	st->c = c->c;
	st->ret = 0;
}

int bstr_kernel_run(struct bstr_kernel *k, int prog, uint32_t repeat, double *ns, int *ret,
		    char *why, size_t len)
{
	/* A tc program needs a packet: an Ethernet frame's worth of zeros. */
	static const unsigned char pkt[64];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = repeat ? repeat : 1);
	int err;

	k->st->ret = 0x7fffffff;
	err = bpf_prog_test_run_opts(k->prog_fd[prog], &opts);
	if (err) {
		snprintf(why, len, "BPF_PROG_TEST_RUN of %s: %s", prog_names[prog], strerror(errno));
		return -1;
	}
	*ns = opts.duration;
	*ret = prog == BSTR_KEMPTY ? 0 : __atomic_load_n(&k->st->ret, __ATOMIC_RELAXED);
	return 0;
}
