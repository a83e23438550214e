/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fuzz harness's shared state: the map under test, the model of what it
 * holds, the input being decoded, and the helpers every operation uses to
 * predict and check results.  fuzz_map_ops.c describes the design.
 */
#ifndef BPFMAP_TESTS_FUZZ_INTERNAL_H
#define BPFMAP_TESTS_FUZZ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpfmap.h>

#define NKEYS 40     /* the keys of most inputs */
#define MAX_KEYS 256 /* of one input in eight: maps of up to 255 entries fill */
#define MAX_OPS 400
#define MAX_BATCH 20 /* elements per update/delete batch and bulk lookup */
#define BIG_CAP 512  /* a batch capacity that holds every key */

/* The CPU this thread is pinned to in per-CPU maps: its program view. */
#define THIS_CPU 0u

struct input {
	const uint8_t *p;
	size_t n, i;
};

struct model {
	bool present[MAX_KEYS];
	/* vs bytes each (per-CPU: the syscall view's slots, CPU c's at
	 * c * slot, padding included), the lock word zero */
	uint8_t *val[MAX_KEYS];
	/* Per-CPU: the slots' padding (bytes value_size .. round_up(value_size,
	 * 8) of each) is open, the element having been created by a one-slot
	 * write; a whole-value write makes it known again. */
	bool pad_open[MAX_KEYS];
	uint32_t count;
};

struct fuzz {
	struct bpfmap *map;
	enum bpfmap_type type;
	const char *name; /* as given to bpfmap_create() */
	/* vs: the syscall view's bytes per value; pvs: the program view's
	 * and one CPU's (value_size); slot: round_up(pvs, 8), a CPU's stride
	 * in the syscall view of a per-CPU map. */
	uint32_t ks, vs, pvs, slot, ncpus, nkeys, max_entries, flags;
	bool percpu;
	bool rhash; /* BPFMAP_TYPE_RHASH */
	bool lru;   /* LRU_HASH, or LRU_PERCPU_HASH with percpu */
	uint32_t lru_cap; /* LRU: elements before inserts evict (per-CPU lists: CPU 0's) */
	uint32_t cs; /* a batch cursor's bytes: 4, RHASH's key_size */
	int32_t lock_off;
	uint8_t *key[MAX_KEYS]; /* ks bytes each, separately allocated (ASan bounds) */
	uint8_t *vbuf;       /* vs bytes */
	uint8_t *sbuf;       /* pvs bytes: one slot, exactly (ASan bounds) */
	uint8_t *kbuf;       /* ks bytes */
	uint8_t *abuf;       /* 2 * vs + ks bytes: a key and a value that overlap it */
	struct model m;
	unsigned op_index;
	bool flat; /* made with flat_create() */
};

extern bool trace_on;
extern struct fuzz *cur_fuzz;

void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *type_name(const struct fuzz *f);
void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- input decoding ---- */
bool more(const struct input *in);
uint8_t u8(struct input *in);
uint16_t u16(struct input *in);
unsigned key_id(const struct fuzz *f, struct input *in);

/* ---- errno expectations: a set of acceptable errnos, as bits ---- */
typedef uint32_t errset;

enum { B_EINVAL, B_EPERM, B_ENOENT, B_EEXIST, B_E2BIG, B_ENOSPC, B_ENOMEM, B_ERANGE, B_OTHER };

unsigned err_bit(int err);
#define ERR(e) ((errset)1 << err_bit(e))
void check_errno_matches(const char *what, int ret, int saved_errno);
void expect_err(const char *what, int ret, int saved_errno, errset errs);
void expect_ret(const char *what, int ret, int saved_errno, int want);

/* ---- keys, values, model ---- */
bool has_lock(const struct fuzz *f);
bool can_read(const struct fuzz *f);
bool can_write(const struct fuzz *f);
bool prog_can_read(const struct fuzz *f);
bool prog_can_write(const struct fuzz *f);
void make_keys(struct fuzz *f, unsigned style);
unsigned id_of_key(const struct fuzz *f, const void *key, const char *what);
void gen_bytes(uint8_t *out, uint32_t n, uint16_t seed);
void gen_value(const struct fuzz *f, uint8_t *out, uint16_t seed);
void clear_lock(const struct fuzz *f, uint8_t *v);
void model_store(struct fuzz *f, unsigned id, const uint8_t *value);
void model_store_slot(struct fuzz *f, unsigned id, uint32_t cpu, const uint8_t *v);
void model_store_all_cpus(struct fuzz *f, unsigned id, const uint8_t *v);
uint8_t *model_slot(const struct fuzz *f, unsigned id, uint32_t cpu);
void model_remove(struct fuzz *f, unsigned id);
unsigned learn_evictions(struct fuzz *f, unsigned keep);
void check_lru_update(struct fuzz *f, unsigned id, bool was_new);
bool pad_byte(const struct fuzz *f, unsigned id, uint32_t i);
void check_value(const struct fuzz *f, unsigned id, const uint8_t *got, const char *what);
void check_slot(const struct fuzz *f, unsigned id, uint32_t cpu, const uint8_t *got,
		const char *what);
void check_value_in_place(const struct fuzz *f, unsigned id, const uint8_t *p,
			  const char *what);

/* ---- flags: the per-CPU ones (BPFMAP_F_CPU | cpu << 32, F_ALL_CPUS) ---- */
uint32_t pick_cpu(const struct fuzz *f, uint8_t b);
uint64_t gen_cpu_flags(const struct fuzz *f, uint8_t b, uint8_t cpu_byte);
errset flags_errs(const struct fuzz *f, uint64_t flags, uint64_t takes);

/* A value buffer of one slot (value_size bytes): BPFMAP_F_CPU or F_ALL_CPUS. */
static inline bool one_slot(uint64_t flags)
{
	return flags & (BPFMAP_F_CPU | BPFMAP_F_ALL_CPUS);
}

/* ---- updates (fuzz_single.c), shared by the batch and the program view ---- */
uint64_t decode_update_flags(const struct fuzz *f, struct input *in);
int update_want(const struct fuzz *f, unsigned id, uint64_t flags);
void model_update(struct fuzz *f, unsigned id, uint64_t flags, const uint8_t *v);

/* ---- operations ---- */
void op_update(struct fuzz *f, struct input *in);
void op_lookup(struct fuzz *f, struct input *in);
void op_delete(struct fuzz *f, struct input *in, bool with_lookup);
void op_get_next_key(struct fuzz *f, struct input *in);
void op_null_args(struct fuzz *f, struct input *in);
void op_lookup_batch(struct fuzz *f, struct input *in, bool do_delete);
void op_update_batch(struct fuzz *f, struct input *in);
void op_delete_batch(struct fuzz *f, struct input *in);
uint8_t *prog_lookup(struct fuzz *f, unsigned id);
void op_prog_view(struct fuzz *f, struct input *in);
void op_prog_write(struct fuzz *f, struct input *in);
void op_get_info(struct fuzz *f, struct input *in);

#endif
