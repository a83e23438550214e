/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One 64-bit add into the calling CPU's slot, without a locked instruction:
 * a restartable sequence (rseq(2)).  The kernel restarts the sequence if the
 * thread is preempted, migrated or signalled before the add commits, so the
 * add lands, exactly once, in the slot of the CPU it ran on, and no other
 * thread can be on that CPU meanwhile: two threads' adds never race, though
 * neither is atomic.  (A write to that slot from another CPU, such as a
 * syscall-view update, is not ordered against it: as the kernel's programs'
 * per-CPU increments.)  Needs glibc's rseq registration (2.35 and later) on
 * x86-64; rseq_add_u64() answers false where it cannot run, and the caller
 * adds atomically instead.
 */
#ifndef BPFMAP_UTIL_RSEQ_ADD_H
#define BPFMAP_UTIL_RSEQ_ADD_H

#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"
#include "util/cpu.h"

#if defined(CPU_HAVE_RSEQ) && defined(__x86_64__) && !defined(BPFMAP_TSAN)
#define RSEQ_ADD 1

/*
 * *(uint64_t *)(@base + cpu * @cpu_bytes) += @delta for the CPU this thread
 * runs on.  The sequence: publish the descriptor (rseq_cs), read cpu_id,
 * compute the slot, add (the commit); abort_ip, after the signature glibc
 * registered (RSEQ_SIG), restarts it.  The descriptor is cleared after the
 * commit, so that no thread points the kernel into this library after it
 * is unloaded.
 */
static ALWAYS_INLINE bool rseq_add_u64(char *base, uint64_t cpu_bytes, uint64_t delta)
{
	struct rseq *rs;

	/* cpu_id below indexes the slots unchecked: see cpu_rseq_indexes. */
	if (unlikely(!cpu_rseq_usable()))
		return false;
	rs = (struct rseq *)(void *)((char *)__builtin_thread_pointer() + __rseq_offset);
	for (;;) {
		__asm__ __volatile__ goto(
			".pushsection __rseq_cs, \"aw\"\n\t"
			".balign 32\n\t"
			"3:\n\t"
			".long 0x0, 0x0\n\t"
			".quad 1f, (2f - 1f), 4f\n\t"
			".popsection\n\t"
			"leaq 3b(%%rip), %%rax\n\t"
			"movq %%rax, %[rseq_cs]\n\t"
			"1:\n\t"
			"movl %[cpu_id], %%eax\n\t"
			"imulq %[cpu_bytes], %%rax\n\t"
			"addq %[delta], (%[base], %%rax, 1)\n\t"
			"2:\n\t"
			".pushsection __rseq_failure, \"ax\"\n\t"
			".long 0x53053053\n\t" /* RSEQ_SIG */
			"4:\n\t"
			"jmp %l[abort]\n\t"
			".popsection\n\t"
			:
			: [rseq_cs] "m"(rs->rseq_cs), [cpu_id] "m"(rs->cpu_id),
			  [cpu_bytes] "r"(cpu_bytes), [delta] "r"(delta), [base] "r"(base)
			: "memory", "cc", "rax"
			: abort);
		__atomic_store_n(&rs->rseq_cs, 0, __ATOMIC_RELAXED);
		return true;
abort:
		/* Preempted, migrated or signalled before the commit: nothing
		 * was added (the kernel cleared rseq_cs); again. */
		continue;
	}
}
#endif

#endif
