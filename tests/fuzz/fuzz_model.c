/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz harness's model: input decoding, expected errnos, keys, values
 * and what the map holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "fuzz_internal.h"

bool trace_on;
struct fuzz *cur_fuzz;

void trace(const char *fmt, ...)
{
	va_list ap;

	if (!trace_on)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *type_name(const struct fuzz *f)
{
	if (f->percpu)
		return f->lru ? "LRU_PERCPU_HASH" : "PERCPU_HASH";
	return f->lru ? "LRU_HASH" : f->rhash ? "RHASH" : "HASH";
}

void mismatch(const char *fmt, ...)
{
	va_list ap;
	struct fuzz *f = cur_fuzz;

	fprintf(stderr, "fuzz_map_ops: MISMATCH: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (f)
		fprintf(stderr,
			"\n  map: %s%s key_size %u value_size %u lock_off %d max_entries %u "
			"map_flags %#x; model holds %u; operation #%u\n"
			"  (rerun the input with FUZZ_TRACE=1 for the operation log)\n",
			type_name(f), f->flat ? " (flat layout)" : "", f->ks,
			f->pvs, f->lock_off,
			f->max_entries, f->flags, f->m.count, f->op_index);
	else
		fputc('\n', stderr);
	__builtin_trap();
}

/* ---- input decoding ---- */

bool more(const struct input *in)
{
	return in->i < in->n;
}

uint8_t u8(struct input *in)
{
	return in->i < in->n ? in->p[in->i++] : 0;
}

uint16_t u16(struct input *in)
{
	uint16_t lo = u8(in);

	return (uint16_t)(lo | (uint16_t)u8(in) << 8);
}

unsigned key_id(const struct fuzz *f, struct input *in)
{
	return u8(in) % f->nkeys;
}

/* ---- errno expectations ---- */

unsigned err_bit(int err)
{
	switch (err) {
	case EINVAL: return B_EINVAL;
	case EPERM: return B_EPERM;
	case ENOENT: return B_ENOENT;
	case EEXIST: return B_EEXIST;
	case E2BIG: return B_E2BIG;
	case ENOSPC: return B_ENOSPC;
	case ENOMEM: return B_ENOMEM;
	case ERANGE: return B_ERANGE;
	default: return B_OTHER;
	}
}

/* A failing call must return -errno and leave errno set to match. */
void check_errno_matches(const char *what, int ret, int saved_errno)
{
	if (ret < 0 && saved_errno != -ret)
		mismatch("%s returned %d but errno is %d", what, ret, saved_errno);
}

/* ret must be 0 or (when errs is not empty) one of errs, negated. */
void expect_err(const char *what, int ret, int saved_errno, errset errs)
{
	check_errno_matches(what, ret, saved_errno);
	if (ret >= 0 || !(errs & ERR(-ret)) || err_bit(-ret) == B_OTHER)
		mismatch("%s returned %d, expected an error from set %#x", what, ret, errs);
}

void expect_ret(const char *what, int ret, int saved_errno, int want)
{
	check_errno_matches(what, ret, saved_errno);
	if (ret != want)
		mismatch("%s returned %d, expected %d", what, ret, want);
}

/* ---- keys, values, model ---- */

bool has_lock(const struct fuzz *f)
{
	return f->lock_off >= 0;
}

bool can_read(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_WRONLY);
}

bool can_write(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_RDONLY);
}

bool prog_can_read(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_WRONLY_PROG);
}

bool prog_can_write(const struct fuzz *f)
{
	return !(f->flags & BPFMAP_F_RDONLY_PROG);
}

void make_keys(struct fuzz *f, unsigned style)
{
	/* Every style keeps the keys distinct: 37 is odd, so id * 37 differs
	 * mod 256 for up to 256 ids. */
	for (unsigned id = 0; id < f->nkeys; id++) {
		uint8_t *k = f->key[id];

		for (uint32_t i = 0; i < f->ks; i++) {
			switch (style) {
			case 0: /* every byte differs */
				k[i] = (uint8_t)(id * 37 + i * 101 + (id >> 3) * i);
				break;
			case 1: /* a shared prefix, the difference in the last byte */
				k[i] = 0xa5;
				break;
			case 2: /* zeros but the first byte: key 0 is all zero */
				k[i] = 0;
				break;
			default: /* ones but the first byte */
				k[i] = 0xff;
				break;
			}
		}
		if (style == 1)
			k[f->ks - 1] = (uint8_t)(id * 37);
		else if (style >= 2)
			k[0] = (uint8_t)(style == 2 ? id : id * 37);
		else
			k[0] = (uint8_t)(id * 37);
	}
}

/* The id of a key the map handed back, or a mismatch if it is none of ours. */
unsigned id_of_key(const struct fuzz *f, const void *key, const char *what)
{
	for (unsigned id = 0; id < f->nkeys; id++)
		if (!memcmp(f->key[id], key, f->ks))
			return id;
	mismatch("%s returned a key that was never inserted", what);
}

void gen_bytes(uint8_t *out, uint32_t n, uint16_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = (uint8_t)(seed * 131u + i * 17u + (seed >> 8) * i + 1);
}

void gen_value(const struct fuzz *f, uint8_t *out, uint16_t seed)
{
	gen_bytes(out, f->vs, seed);
}

/* What a copy-out of a stored value @v gives: the lock word reads as zero. */
void clear_lock(const struct fuzz *f, uint8_t *v)
{
	if (has_lock(f))
		memset(v + f->lock_off, 0, sizeof(struct bpfmap_spin_lock));
}

void model_store(struct fuzz *f, unsigned id, const uint8_t *value)
{
	if (!f->m.present[id]) {
		f->m.present[id] = true;
		f->m.count++;
	}
	memcpy(f->m.val[id], value, f->vs);
	clear_lock(f, f->m.val[id]);
	f->m.pad_open[id] = false; /* the syscall view copies padding in and out */
}

/* CPU @cpu's slot of a per-CPU value, in the syscall view's layout (the
 * possible CPUs are 0..ncpus-1 here: setup() checks). */
uint8_t *model_slot(const struct fuzz *f, unsigned id, uint32_t cpu)
{
	return f->m.val[id] + (size_t)cpu * f->slot;
}

/* An element a one-slot write creates: the contract zeroes every other
 * slot; the padding of the slots (its own's, and whether the zeroed ones'
 * includes theirs) it does not name, so any padding is accepted until a
 * whole-value write (pad_open). */
static void model_create_zeroed(struct fuzz *f, unsigned id)
{
	if (!f->m.present[id]) {
		f->m.present[id] = true;
		f->m.count++;
		memset(f->m.val[id], 0, f->vs);
		f->m.pad_open[id] = f->slot != f->pvs;
	}
}

/* Is byte @i of @id's syscall-view value padding the model does not know? */
bool pad_byte(const struct fuzz *f, unsigned id, uint32_t i)
{
	return f->percpu && f->m.pad_open[id] && i % f->slot >= f->pvs;
}

/* One slot written (BPFMAP_F_CPU, or the program view): pvs bytes, the
 * slot's padding left as it was; an element it creates as above. */
void model_store_slot(struct fuzz *f, unsigned id, uint32_t cpu, const uint8_t *v)
{
	model_create_zeroed(f, id);
	memcpy(model_slot(f, id, cpu), v, f->pvs);
}

/* BPFMAP_F_ALL_CPUS: the same pvs bytes into every slot (padding as for
 * one slot). */
void model_store_all_cpus(struct fuzz *f, unsigned id, const uint8_t *v)
{
	model_create_zeroed(f, id);
	for (uint32_t cpu = 0; cpu < f->ncpus; cpu++)
		memcpy(model_slot(f, id, cpu), v, f->pvs);
}

void model_remove(struct fuzz *f, unsigned id)
{
	if (f->m.present[id]) {
		f->m.present[id] = false;
		f->m.count--;
	}
}

void check_value(const struct fuzz *f, unsigned id, const uint8_t *got,
			const char *what);

/* ---- the per-CPU flags ---- */

/* Mostly a possible CPU; else the first impossible one, one further out,
 * or the largest number the flags' upper half holds. */
uint32_t pick_cpu(const struct fuzz *f, uint8_t b)
{
	switch (b & 7) {
	case 5:
		return f->ncpus;
	case 6:
		return f->ncpus + 1 + (uint32_t)(b >> 3) * 977u;
	case 7:
		return UINT32_MAX;
	default:
		return (uint32_t)(b >> 3) % (f->ncpus ? f->ncpus : 1);
	}
}

/* The per-CPU flags as a caller may pass them, right or wrong: none most
 * of the time on maps that are not per-CPU. */
uint64_t gen_cpu_flags(const struct fuzz *f, uint8_t b, uint8_t cpu_byte)
{
	uint64_t cpu = pick_cpu(f, cpu_byte);

	switch (f->percpu ? b & 7 : (b & 0x38) ? 0 : b & 7) {
	case 3:
	case 4:
		return BPFMAP_F_CPU | cpu << 32;
	case 5:
		return BPFMAP_F_ALL_CPUS;
	case 6:
		return BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS | cpu << 32;
	case 7: /* CPU bits without F_CPU (CPU 0 would be no bits: make one) */
		return (cpu | 1) << 32 | (b & 8 ? BPFMAP_F_ALL_CPUS : 0);
	default:
		return 0;
	}
}

/*
 * The error @flags alone make a call answer that takes the flag bits @takes
 * (update modes, BPFMAP_F_LOCK, and where it takes them BPFMAP_F_CPU and
 * BPFMAP_F_ALL_CPUS, which only per-CPU maps accept), as a set of one errno
 * (empty if none): the first in the README's order, bpf-next's
 * (bpf_map_check_op_flags(), then the hash map's test of the update mode).
 * -EINVAL for an unknown bit, F_LOCK without a spin lock, CPU bits without
 * F_CPU, a per-CPU flag where it is not taken or both at once; then -ERANGE
 * for F_CPU with a CPU that is not possible; then -EINVAL for the update
 * mode 3 (NOEXIST | EXIST).  The access check and, for lookups, the bits no
 * kernel takes come before these (the callers').
 */
errset flags_errs(const struct fuzz *f, uint64_t flags, uint64_t takes)
{
	uint64_t low = flags & 0xffffffffu, hi = flags >> 32;

	if (!f->percpu)
		takes &= ~(BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS);
	if ((low & ~takes) || ((low & BPFMAP_F_LOCK) && !has_lock(f)) ||
	    (!(low & BPFMAP_F_CPU) && hi) ||
	    ((low & BPFMAP_F_CPU) && (low & BPFMAP_F_ALL_CPUS)))
		return ERR(EINVAL);
	if ((low & BPFMAP_F_CPU) && hi >= f->ncpus)
		return ERR(ERANGE);
	if ((low & 3) == 3)
		return ERR(EINVAL);
	return 0;
}

/* learn_evictions() on a map the syscall view may not read: is @id still
 * there (its every slot as the model has it)?  Only per-CPU maps get
 * WRONLY with an LRU, and no WRONLY_PROG with it. */
static bool learn_by_program(struct fuzz *f, unsigned id, unsigned keep)
{
	bool there;
	uint8_t *p;

	bpfmap_read_lock();
	errno = 0;
	p = bpfmap_lookup(f->map, f->key[id]);
	there = p != NULL;
	if (!p && (errno != ENOENT || id == keep))
		mismatch("bpfmap_lookup (after an LRU update) of key %u gave NULL errno %d", id,
			 errno);
	for (uint32_t cpu = 0; there && f->percpu && cpu < f->ncpus; cpu++) {
		p = bpfmap_lookup_percpu(f->map, f->key[id], cpu);
		if (!p)
			mismatch("bpfmap_lookup_percpu (after an LRU update) of key %u: NULL", id);
		check_slot(f, id, cpu, p, "bpfmap_lookup_percpu (after an LRU update)");
	}
	bpfmap_read_unlock();
	if (!there)
		model_remove(f, id);
	return there;
}

/* An LRU map after updates that the model applied as if it had room: the
 * keys the map evicted instead, learned by looking up every key the model
 * holds, checked (values included) and dropped.  The map then holds
 * exactly what the model does; @keep, the key written last, must be
 * there.  Returns how many went. */
unsigned learn_evictions(struct fuzz *f, unsigned keep)
{
	unsigned gone = 0;

	for (unsigned id = 0; id < f->nkeys; id++) {
		int ret;

		if (!f->m.present[id])
			continue;
		if (!can_read(f)) { /* a WRONLY map: the program view looks */
			if (!learn_by_program(f, id, keep))
				gone++;
			continue;
		}
		ret = bpfmap_lookup_elem(f->map, f->key[id], f->vbuf);
		if (ret == -ENOENT && id != keep) {
			model_remove(f, id);
			gone++;
			continue;
		}
		expect_ret("lookup_elem (after an LRU update)", ret, errno, 0);
		check_value(f, id, f->vbuf, "lookup_elem (after an LRU update)");
	}
	if (gone)
		trace("  LRU: %u evicted", gone);
	return gone;
}

/* After an LRU map's update of one key that the model applied: a new key
 * into a full map evicted exactly one other, anything else none. */
void check_lru_update(struct fuzz *f, unsigned id, bool was_new)
{
	bool evicts = was_new && f->m.count > f->lru_cap;
	unsigned gone;

	if (!f->lru || f->m.count < f->lru_cap)
		return;
	gone = learn_evictions(f, id);
	if (gone != (evicts ? 1u : 0u))
		mismatch("LRU update of key %u (%s) evicted %u keys", id,
			 was_new ? "new, map full" : "present", gone);
}

void check_value(const struct fuzz *f, unsigned id, const uint8_t *got,
			const char *what)
{
	if (memcmp(got, f->m.val[id], f->vs)) {
		for (uint32_t i = 0; i < f->vs; i++)
			if (got[i] != f->m.val[id][i] && !pad_byte(f, id, i))
				mismatch("%s: key %u value byte %u is %#x, expected %#x", what, id,
					 i, got[i], f->m.val[id][i]);
	}
}

/* One CPU's slot (pvs bytes) as a one-slot copy-out gives it. */
void check_slot(const struct fuzz *f, unsigned id, uint32_t cpu, const uint8_t *got,
		const char *what)
{
	const uint8_t *want = model_slot(f, id, cpu);

	for (uint32_t i = 0; i < f->pvs; i++)
		if (got[i] != want[i])
			mismatch("%s: key %u CPU %u's slot byte %u is %#x, expected %#x", what, id,
				 cpu, i, got[i], want[i]);
}

/* A program-view value: as check_value() but the lock word is the map's own
 * (left alone: it may be anything a lock implementation keeps there). */
void check_value_in_place(const struct fuzz *f, unsigned id, const uint8_t *p,
				 const char *what)
{
	uint8_t *copy = f->vbuf;

	if ((uintptr_t)p % 8)
		mismatch("%s: value of key %u at %p is not 8-byte aligned", what, id, (void *)p);
	/* per-CPU: the calling CPU's slot; the others as the model's */
	memcpy(copy, f->m.val[id], f->vs);
	memcpy(copy + (size_t)THIS_CPU * f->slot, p, f->pvs);
	clear_lock(f, copy);
	check_value(f, id, copy, what);
}

