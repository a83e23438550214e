/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel-differential tests' BTF for maps whose values hold a struct
 * bpf_spin_lock (the kernel finds the lock there; bpfmap takes lock_off).
 */
#ifndef BPFMAP_TESTS_KERNEL_BTF_H
#define BPFMAP_TESTS_KERNEL_BTF_H

#include <errno.h>
#include <unistd.h>

#include <bpf/btf.h>

/* @b loaded into the kernel and freed: a BTF fd of the caller's own, or
 * -errno. */
static inline int kernel_btf_load(struct btf *b)
{
	int fd;

	if (btf__load_into_kernel(b)) {
		fd = -errno;
		btf__free(b);
		return fd;
	}
	fd = dup(btf__fd(b));
	btf__free(b);
	return fd < 0 ? -errno : fd;
}

#endif
