/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading caller-sized option structs (libbpf's convention): a caller built
 * against an older header passes a smaller `sz` and gets defaults for the
 * fields it does not know; a newer caller's unknown trailing bytes must be 0.
 */
#ifndef BPFMAP_CORE_OPTS_H
#define BPFMAP_CORE_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include <bpfmap.h>

/* 0, or -EINVAL when opts is malformed.  NULL opts is valid (defaults). */
int opts_check(const void *opts, size_t known_size);

/* Are the bytes [@known_size, @sz) of a caller's struct at @p all zero: a
 * newer caller's fields this library does not know, left unset? */
bool opts_tail_zero(const void *p, size_t known_size, size_t sz);

/* Does the caller's struct (of size sz) contain the field ending at end? */
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

#endif
