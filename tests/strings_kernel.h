/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by tests/test_strings_kernel.c (the BPF set-up, the comparison and
 * the ordinary cases) and tests/strings_kernel_adv.c (the adversarial ones).
 */
#ifndef BPFMAP_TESTS_STRINGS_KERNEL_H
#define BPFMAP_TESTS_STRINGS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/strings_kfuncs.h"
#include "strings_reference.h"

#define M REF_STR_MAX
#define BIG 70000
#define REGION (STR_BUF_SIZE / 2) /* a's strings in the first half, b's in the second */

/* The strings the kernel reads: the program's .bss, mapped here. */
extern char *buf;

/* Strings live in buf: a's at A + off, b's at B + off. */
#define A (buf)
#define B (buf + REGION)

/*
 * The kernel's answer on ka, kb (in buf) against the library's and the
 * reference's on la, lb: the same bytes, possibly elsewhere.  check(): at
 * the same place.  Both return the kernel's answer (the reference's where
 * the kernel lacks the kfunc).
 */
int check_at(enum str_fn_id fn, const char *ka, const char *kb, const char *la, const char *lb,
	     size_t n, int c, const char *ctx);
int check(enum str_fn_id fn, const char *a, const char *b, size_t n, int c, const char *ctx);

/* The library on la, lb against a known answer (the kernel's, from check()
 * on the same bytes elsewhere). */
void check_known(enum str_fn_id fn, int want, const char *la, const char *lb, size_t n, int c,
		 const char *ctx);

/* Also compare the reference where the kernel answers (default; the costly
 * cases turn it off: the reference is as quadratic as the kernel). */
extern bool ref_too;

/* s copied to at with its NUL; len bytes of ch and a NUL at at. */
char *put(char *at, const char *s);
char *make(char *at, size_t len, char ch);

/* tests/strings_kernel_adv.c */
void adversarial_strings(void);

#endif
