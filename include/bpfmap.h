/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfmap — the Linux kernel's BPF hash maps rebuilt as a user-space library.
 *
 * Every map function returns 0 (or a non-negative result) on success and a
 * negative errno on failure; it also stores the positive errno in `errno`.
 * bpfmap_create() returns NULL and sets `errno`.  Constants carry the kernel's
 * uapi values, so code moves between <linux/bpf.h> and this header unchanged.
 *
 * Two ways in, as in BPF itself:
 *  - the syscall view (bpfmap_lookup_elem(), bpfmap_update_elem(), ... and the
 *    batch operations) copies keys and values in and out; it is safe to call
 *    from any thread at any time without further ceremony;
 *  - the program view (bpfmap_lookup()) hands out a pointer to the value
 *    stored in the map, valid inside a read-side section opened with
 *    bpfmap_read_lock() and closed with bpfmap_read_unlock(), for in-place
 *    atomics on counters.
 *
 * Concurrency contract shared by every map function (individual functions
 * state what they add to it):
 *  - any function may be called from any thread at any time, concurrently with
 *    any other function on the same map, except bpfmap_free();
 *  - lookups (both views) take no lock and never wait for a writer to
 *    finish its operation, with three exceptions: a BPFMAP_F_LOCK copy
 *    takes the value's own spin lock; a copy-out that overlaps in-place
 *    updates of its value retries that copy, but once writers have spoiled
 *    its copies for some tens of microseconds it takes the key's bucket
 *    lock for one copy, so that a stream of writes cannot hold it off; and
 *    in maps on the flat table (docs/MAPS.md says which), a copy-out, a
 *    lookup of a key over 8 bytes and get_next_key wait while an insert or
 *    delete of a key of the same eight-slot bucket is between its first
 *    and last store (a lookup whose home has an overflow chain, also while
 *    an insert inside a read-side section relinks a reused node anywhere in
 *    the map), in preallocated maps on the chained table a miss or a
 *    copy-out waits while an insert relinks a deleted element it reuses at
 *    once, in LRU maps on the chained table (NO_COMMON_LRU ones, or keys
 *    over 8 bytes in maps under 16384) and in RHASH maps a miss or a
 *    copy-out waits while any writer of its bucket is between its first
 *    and last store: a few stores, longer only if that writer's thread is
 *    preempted there (such waits pause, then yield, then sleep, so that a
 *    writer of lower priority gets to run);
 *  - writers lock one bucket at a time, never the whole map;
 *  - memory a reader may still see is reclaimed only after every read-side
 *    section that could see it has ended (userspace RCU, liburcu's
 *    "bulletproof" flavour: threads need no registration);
 *  - a copy-out lookup never returns a torn value: it returns the value as it
 *    was either before or after any concurrent update, never a mix;
 *  - a copy-out, lookup-and-delete or get_next_key may write into the key's
 *    own buffer (bpfmap_lookup_elem(map, buf, buf), or any overlap), as the
 *    kernel's syscall allows by copying the key in first; a copy-out or
 *    lookup-and-delete then copies a key over 512 bytes to the heap
 *    (-ENOMEM possible);
 *  - from a signal handler (any function but bpfmap_create() and
 *    bpfmap_free()): a call that would wait for a writing call the handler
 *    interrupted on its own thread (or for a copy-out that holds a lock)
 *    answers -EBUSY instead (program view: NULL, errno EBUSY).  While the
 *    interrupted call holds a lock or a lock-free store, writing calls
 *    (updates, deletes, lookup-and-delete, batches, get_next_key) all
 *    answer -EBUSY and change nothing; lookups and bpfmap_percpu_add do
 *    only where they would wait.  The calls that may allocate (README,
 *    "Signal handlers") are not async-signal-safe; the rest allocate
 *    nothing, a thread's first call included.
 */
#ifndef BPFMAP_H
#define BPFMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BPFMAP_API __attribute__((visibility("default")))
#else
#define BPFMAP_API
#endif

/* The library's version (0.3: struct bpfmap_info gained map_extra).  The
 * ABI keeps its soname, libbpfmap.so.0, across 0.x: calls only gain
 * arguments through structs sized by their callers. */
#define BPFMAP_VERSION_MAJOR 0
#define BPFMAP_VERSION_MINOR 3

/* Map types; numeric values are the kernel's enum bpf_map_type. */
enum bpfmap_type {
	BPFMAP_TYPE_HASH = 1,
	BPFMAP_TYPE_PERCPU_HASH = 5,
	BPFMAP_TYPE_LRU_HASH = 9,
	BPFMAP_TYPE_LRU_PERCPU_HASH = 10,
	/* The resizable hash, bpf-next's BPF_MAP_TYPE_RHASH (after
	 * BPF_MAP_TYPE_INSN_ARRAY = 34); Linux 6.18 does not have it. */
	BPFMAP_TYPE_RHASH = 35,
};

/* Map flags (bpfmap_create_opts.map_flags), the kernel's BPF_F_* values. */
#define BPFMAP_F_NO_PREALLOC (1U << 0)
#define BPFMAP_F_NO_COMMON_LRU (1U << 1)
#define BPFMAP_F_NUMA_NODE (1U << 2) /* accepted, no effect in user space */
#define BPFMAP_F_RDONLY (1U << 3)    /* syscall view may not write: -EPERM */
#define BPFMAP_F_WRONLY (1U << 4)    /* syscall view may not read: -EPERM */
/* Fixed, public hash parameters instead of random ones: a deterministic
 * layout, and no protection against keys an attacker chooses (README,
 * "Hashing and untrusted keys"). */
#define BPFMAP_F_ZERO_SEED (1U << 6)
/* bpfmap_update(), bpfmap_delete() and bpfmap_percpu_add() refuse with EPERM;
 * stores through a pointer from bpfmap_lookup() cannot be refused (but
 * libbpfmap-rtebpf refuses, at load, a program that makes them). */
#define BPFMAP_F_RDONLY_PROG (1U << 7)
#define BPFMAP_F_WRONLY_PROG (1U << 8) /* bpfmap_lookup() refuses: NULL, errno EPERM */

/* Update flags (bpfmap_update_elem(), batch elem_flags), the kernel's values. */
#define BPFMAP_ANY 0ULL     /* create a new element or update an existing one */
#define BPFMAP_NOEXIST 1ULL /* create a new element only if it did not exist */
#define BPFMAP_EXIST 2ULL   /* update an existing element only */
#define BPFMAP_F_LOCK 4ULL  /* copy the value under its bpfmap_spin_lock */
/* Per-CPU maps only (bpf-next's values): one CPU's slot, the CPU number in
 * the upper 32 bits of the flags (BPFMAP_F_CPU | (uint64_t)cpu << 32;
 * -ERANGE for a number that is no possible CPU), or
 * the same value into every CPU's slot (updates).  The value buffer is then
 * value_size bytes, one slot.  A one-CPU copy-out copies the whole value
 * first, through the heap when it is over 512 bytes (and always for
 * lookup_batch, 1 MiB of whole values at a time): -ENOMEM is then
 * possible, as from the kernel's syscall. */
#define BPFMAP_F_CPU 8ULL
#define BPFMAP_F_ALL_CPUS 16ULL

/* The kernel's internal "operation not supported" errno (not EOPNOTSUPP). */
#define BPFMAP_ENOTSUPP 524

/* Kernel limit on one element: key_size + value_size must stay below this
 * (4 MiB, the kernel's largest kmalloc, less its 48-byte element header). */
#define BPFMAP_MAX_ELEM_BYTES ((4U << 20) - 48)

/* Most elements a hash-family map (HASH, PERCPU_HASH, LRU_*) may hold. */
#define BPFMAP_HTAB_MAX_ENTRIES (1U << 27)

/* Longest map name, terminating NUL included (the kernel's BPF_OBJ_NAME_LEN). */
#define BPFMAP_OBJ_NAME_LEN 16

struct bpfmap;

/*
 * A spin lock embedded in a map value, the user-space twin of
 * struct bpf_spin_lock.  Place one inside the value, give its offset as
 * bpfmap_create_opts.lock_off, and BPFMAP_F_LOCK copies values under it.
 * The map never copies the lock word itself: a copy-out leaves zeros in its
 * place, an update leaves the map's lock untouched.
 */
struct bpfmap_spin_lock {
	uint32_t val;
};

/* C++: the options' defaults as default member initializers, so that its
 * designated initializers (C++20: in declaration order, each at most once)
 * need not name them; C keeps a plain struct. */
#ifdef __cplusplus
#define BPFMAP__DEFAULT(v) = v
#else
#define BPFMAP__DEFAULT(v)
#endif

/*
 * Options for bpfmap_create().  Declare them with BPFMAP_CREATE_OPTS(), which
 * sets `sz` and the defaults (notably lock_off = -1); a hand-rolled zeroed
 * struct would mean "spin lock at offset 0".
 */
struct bpfmap_create_opts {
	size_t sz BPFMAP__DEFAULT(0);          /* sizeof(struct bpfmap_create_opts) of the caller */
	uint32_t map_flags BPFMAP__DEFAULT(0); /* BPFMAP_F_* */
	int32_t lock_off BPFMAP__DEFAULT(-1);  /* offset of a struct bpfmap_spin_lock in the value, or -1 */
	uint64_t map_extra BPFMAP__DEFAULT(0); /* kernel's map_extra; must be 0 for HASH; RHASH size hint */
};

/*
 * Options for the batch operations; all-zero is the default.
 * elem_flags: 0 or BPFMAP_F_LOCK, for every batch operation (the kernel's
 * rule).  flags: must be 0 for the lookup batches; update_batch and
 * delete_batch ignore it, as the kernel does.
 */
struct bpfmap_batch_opts {
	size_t sz BPFMAP__DEFAULT(0); /* sizeof(struct bpfmap_batch_opts) of the caller */
	uint64_t elem_flags BPFMAP__DEFAULT(0);
	uint64_t flags BPFMAP__DEFAULT(0);
};

/* The macros set `sz` and the defaults; later designators override them. */
#ifdef __cplusplus
#define BPFMAP__STATIC_ASSERT static_assert
#else
#define BPFMAP__STATIC_ASSERT _Static_assert
#endif
#if defined(__clang__)
#define BPFMAP__OPTS_PUSH _Pragma("clang diagnostic push") \
	_Pragma("clang diagnostic ignored \"-Winitializer-overrides\"")
#define BPFMAP__OPTS_POP _Pragma("clang diagnostic pop")
#elif defined(__GNUC__)
#define BPFMAP__OPTS_PUSH _Pragma("GCC diagnostic push") \
	_Pragma("GCC diagnostic ignored \"-Woverride-init\"")
#define BPFMAP__OPTS_POP _Pragma("GCC diagnostic pop")
#else
#define BPFMAP__OPTS_PUSH
#define BPFMAP__OPTS_POP
#endif

/* Usage: BPFMAP_CREATE_OPTS(opts, .map_flags = BPFMAP_F_NO_PREALLOC), or
 * BPFMAP_CREATE_OPTS(opts) for the defaults.  The name travels inside the
 * variadic arguments, followed by an empty one, so that a call without
 * designators still gives '...' an argument (ISO C before C23 requires one:
 * -pedantic warned); the initializer then ends in a comma, which C and C++
 * allow.  The trailing static assertion only gives the caller's ';'
 * something to end, so that the pragmas can close around the initializer.
 * C++ (C++20's designated initializers) takes the defaults from the struct. */
#define BPFMAP_CREATE_OPTS(...) BPFMAP__CREATE_OPTS(__VA_ARGS__, )
#ifdef __cplusplus
#define BPFMAP__CREATE_OPTS(NAME, ...)                                       \
	struct bpfmap_create_opts NAME = { .sz = sizeof(struct bpfmap_create_opts), __VA_ARGS__ }
#else
#define BPFMAP__CREATE_OPTS(NAME, ...)                                       \
	BPFMAP__OPTS_PUSH struct bpfmap_create_opts NAME = {                  \
		.sz = sizeof(struct bpfmap_create_opts),                      \
		.lock_off = -1,                                               \
		__VA_ARGS__                                                   \
	};                                                                    \
	BPFMAP__OPTS_POP BPFMAP__STATIC_ASSERT(1, "bpfmap opts")
#endif

/* Usage: BPFMAP_BATCH_OPTS(opts, .elem_flags = BPFMAP_F_LOCK), or
 * BPFMAP_BATCH_OPTS(opts). */
#define BPFMAP_BATCH_OPTS(...) BPFMAP__BATCH_OPTS(__VA_ARGS__, )
#define BPFMAP__BATCH_OPTS(NAME, ...)                                        \
	struct bpfmap_batch_opts NAME = {                                     \
		.sz = sizeof(struct bpfmap_batch_opts),                       \
		__VA_ARGS__                                                   \
	}

/*
 * bpfmap_create - create a map.
 * @type:        BPFMAP_TYPE_*; other values are refused.
 * @name:        NULL, or ASCII letters, digits, '_', '.', or Latin-1 letters
 *               (0xc0-0xff but 0xd7, 0xf7), as the kernel; only the first 15
 *               bytes are kept and checked, as libbpf's bpf_map_create() does.
 * @key_size:    bytes per key, > 0.
 * @value_size:  bytes per value, > 0.
 * @max_entries: the most elements the map holds, 1 .. BPFMAP_HTAB_MAX_ENTRIES
 *               (BPFMAP_TYPE_RHASH: up to 2^31; a cap, not a size).
 * @opts:        NULL for the defaults, or options from BPFMAP_CREATE_OPTS().
 *
 * Preallocated maps (the default) allocate every element now, so updates
 * allocate only while deleted elements wait for reclamation beyond the
 * pool's slack (chained maps, docs/CONCURRENCY.md); BPFMAP_F_NO_PREALLOC
 * allocates per element instead.  The hash
 * function and element layout are chosen here, once.  The hash's parameters
 * are random (getrandom()), so that keys chosen without knowing them collide
 * no more than random keys; BPFMAP_F_ZERO_SEED fixes them instead, and such a
 * map must not hold attacker-chosen keys.
 *
 * BPFMAP_TYPE_RHASH needs BPFMAP_F_NO_PREALLOC and refuses ZERO_SEED; its
 * memory grows and shrinks with its elements, and map_extra (at most 65535,
 * at most max_entries) is the number of elements its first table is sized
 * for.
 *
 * Returns the map, or NULL with errno set to:
 *  EINVAL  unknown type or one not implemented yet, zero key_size, value_size
 *          or max_entries, an unknown flag, RDONLY with WRONLY (or their _PROG
 *          twins), NO_COMMON_LRU on a non-LRU map, map_extra != 0 on HASH,
 *          a bad name, opts->sz too small or unknown trailing bytes non-zero,
 *          lock_off not 4-aligned or the lock not inside the value; RHASH
 *          without NO_PREALLOC or with ZERO_SEED, map_extra with its upper 32
 *          bits set or above max_entries;
 *  E2BIG   key_size + value_size >= BPFMAP_MAX_ELEM_BYTES, or max_entries >
 *          BPFMAP_HTAB_MAX_ENTRIES (both as Linux 6.18); RHASH: key_size >
 *          65535, map_extra > 65535, max_entries > 2^31;
 *  EACCES  a spin lock (lock_off >= 0) with BPFMAP_F_RDONLY_PROG or
 *          BPFMAP_F_WRONLY_PROG;
 *  EOPNOTSUPP  a spin lock in a per-CPU or LRU map;
 *  ENODEV  a per-CPU map, and bpfmap_num_possible_cpus() failed with it;
 *  ENOMEM  allocation failed.
 * When several apply, the kernel's order decides: the type's checks, then
 * max_entries, the name, and the spin lock last (the kernel finds it in
 * the value's BTF).
 * Concurrency: the new map is private to the caller until published.
 */
BPFMAP_API struct bpfmap *bpfmap_create(enum bpfmap_type type, const char *name,
					uint32_t key_size, uint32_t value_size,
					uint32_t max_entries,
					const struct bpfmap_create_opts *opts);

/*
 * What bpfmap_get_info() reports: the map as created, the counterpart of the
 * kernel's struct bpf_map_info.  value_size is the program's view (one
 * CPU's slot in a per-CPU map); max_entries after BPFMAP_F_NO_COMMON_LRU's
 * rounding.
 */
struct bpfmap_info {
	uint32_t type; /* enum bpfmap_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t map_flags;
	char name[BPFMAP_OBJ_NAME_LEN];
	uint32_t reserved; /* 0 (the alignment of map_extra, named) */
	uint64_t map_extra; /* as created: RHASH's size hint; 0 for the other types */
};

/*
 * bpfmap_get_info - fill @info with @map's type, sizes, flags and name
 * (bpf_map_get_info_by_fd()'s part that applies to a user-space map; as
 * there, map_flags leaves out BPFMAP_F_RDONLY and BPFMAP_F_WRONLY, which
 * the kernel keeps with a file descriptor, not with the map).
 * *@info_len is the size of the caller's struct, sizeof(struct bpfmap_info)
 * as the caller's header has it; as in the kernel's call, at most that many
 * bytes are written, and *@info_len is set to the bytes filled, so that
 * struct bpfmap_info can grow: a caller built against a smaller one gets
 * its part, and one built against a larger one must have zeroed the bytes
 * past this library's struct.
 * Returns 0; -EINVAL for a NULL argument; -E2BIG (nothing written) when
 * *@info_len is over 4096 or the caller's struct has a nonzero byte past
 * this library's.
 * Concurrency: reads only what never changes after creation.
 */
BPFMAP_API int bpfmap_get_info(const struct bpfmap *map, struct bpfmap_info *info,
			       uint32_t *info_len);

/*
 * bpfmap_get_lock_off - the offset in @map's values of their struct
 * bpfmap_spin_lock (bpfmap_create_opts.lock_off), which the kernel finds in
 * a map's BTF: a runtime's verifier refuses programs' loads and stores
 * there, as the kernel's does.
 * Returns the offset (>= 0), -ENOENT if the values hold no spin lock, or
 * -EINVAL for a NULL @map.
 * Concurrency: reads only what never changes after creation.
 */
BPFMAP_API int bpfmap_get_lock_off(const struct bpfmap *map);

/*
 * bpfmap_free - destroy a map and everything it holds.  NULL is a no-op.
 * Concurrency: no other thread may use the map during or after this call, and
 * no pointer from bpfmap_lookup() may be used after it.  It does not wait for
 * reclamation already queued for this map (in any BPFMAP_TYPE_HASH map): the
 * last of it to run releases the map's memory, so that memory may outlive the
 * call by a grace period or two.  It must not be called inside a read-side
 * section.
 */
BPFMAP_API void bpfmap_free(struct bpfmap *map);

/*
 * bpfmap_lookup_elem - copy the value stored under @key into @value
 * (value_size bytes; a spin lock field, if configured, reads as zero).
 * Returns 0, or -EINVAL (NULL argument), -EPERM (map is BPFMAP_F_WRONLY),
 * -ENOENT (no such key).
 * Concurrency: the value copied is one some update stored, never a mix of
 * two updates.  A copy that overlaps an in-place update of the same key is
 * retried without a lock, until writers have spoiled its copies for some
 * tens of microseconds: it then copies under the key's bucket lock.
 */
BPFMAP_API int bpfmap_lookup_elem(struct bpfmap *map, const void *key, void *value);

/*
 * bpfmap_lookup_elem_flags - bpfmap_lookup_elem() with @flags: 0 or
 * BPFMAP_F_LOCK (copy while holding the value's spin lock).
 * Returns as bpfmap_lookup_elem(), plus -EINVAL for an unknown flag or
 * BPFMAP_F_LOCK on a map without a spin lock, -ERANGE for BPFMAP_F_CPU with
 * a CPU that is not possible.  The first that applies, in this order (Linux
 * 6.18's, and bpf-next's for the per-CPU flags): a bit other than F_LOCK
 * (and F_CPU on a per-CPU map) or CPU bits without F_CPU, -EINVAL; a
 * BPFMAP_F_WRONLY map, -EPERM; F_LOCK without a lock, -EINVAL; the CPU,
 * -ERANGE; then -ENOENT.
 * Concurrency: with BPFMAP_F_LOCK it spins on the value's lock (held only by
 * other F_LOCK copies or by program-view code that took it); otherwise as
 * bpfmap_lookup_elem().
 */
BPFMAP_API int bpfmap_lookup_elem_flags(struct bpfmap *map, const void *key,
					void *value, uint64_t flags);

/*
 * bpfmap_update_elem - store @value under @key.
 * @flags: BPFMAP_ANY, BPFMAP_NOEXIST or BPFMAP_EXIST, optionally with
 *         BPFMAP_F_LOCK (copy under the value's spin lock).
 * An existing element's value is overwritten in place, so replacing a key in a
 * full map always succeeds; on an LRU map that marks the element used, as a
 * program-view lookup does (the kernel's LRU updates do the same).  The spin
 * lock field, if any, is never copied: a new element's lock starts free, an
 * existing one keeps its state (a
 * deleted key's position reused at once by an insert inside a read-side
 * section is free once the deleted key's holder, if any, lets it go).
 * Returns 0, or:
 *  -EINVAL  NULL argument, unknown flags (anything above BPFMAP_EXIST besides
 *           BPFMAP_F_LOCK and the per-CPU flags), NOEXIST with EXIST,
 *           BPFMAP_F_LOCK without a spin lock configured, a per-CPU flag
 *           misused (BPFMAP_F_CPU, above);
 *  -ERANGE  BPFMAP_F_CPU with a CPU that is not possible;
 *  -EPERM   the map is BPFMAP_F_RDONLY;
 *  -EEXIST  BPFMAP_NOEXIST and the key is present;
 *  -ENOENT  BPFMAP_EXIST and the key is absent;
 *  -E2BIG   the key is absent and the map already holds max_entries;
 *  -ENOMEM  allocation failed (BPFMAP_F_NO_PREALLOC, or a chained HASH or
 *           PERCPU_HASH map's insert while its pool's free elements all
 *           await reclamation and malloc fails), or an insert inside a
 *           read-side section found too many deleted elements still
 *           awaiting reclamation (RHASH and NO_PREALLOC PERCPU_HASH maps;
 *           docs/CONCURRENCY.md gives the counts; a chained
 *           LRU_PERCPU_HASH only when it has no key left to evict and
 *           every deleted element's reclamation is under way, rarely:
 *           docs/MAPS.md), or an RHASH map whose
 *           max_entries elements would take more than 1 TiB, or more
 *           address space than the process had at creation, holds what
 *           fits (docs/RHASH.md); the key is not stored
 *           (a full LRU map, which fails only if malloc does, may have
 *           evicted an element for it first).
 * When several apply, the first in the kernel's order: -EINVAL for a NULL
 * argument, -EPERM, then the flags (-EINVAL for any of theirs but NOEXIST
 * with EXIST, then -ERANGE, then -EINVAL for NOEXIST with EXIST), then the
 * key's own answer.
 * Concurrency: locks the key's bucket.  Copy-out readers see the old or the new
 * value; program-view readers holding a pointer see the bytes change in place
 * (use the spin lock or atomics for multi-word consistency there).  A value
 * with a spin lock is stored under it, BPFMAP_F_LOCK or not: the update
 * waits while a program holds that lock, with the bucket unlocked.
 */
BPFMAP_API int bpfmap_update_elem(struct bpfmap *map, const void *key,
				  const void *value, uint64_t flags);

/*
 * bpfmap_delete_elem - remove @key.
 * Returns 0, or -EINVAL (NULL argument), -EPERM (BPFMAP_F_RDONLY), -ENOENT.
 * Concurrency: locks the key's bucket.  A program-view pointer to the deleted
 * value stays readable until the holder's read-side section ends; its memory is
 * reused only after that.
 */
BPFMAP_API int bpfmap_delete_elem(struct bpfmap *map, const void *key);

/*
 * bpfmap_lookup_and_delete_elem - copy the value of @key into @value, then
 * remove the element, atomically with respect to other writers.
 * Returns 0, or -EINVAL (NULL argument), -EPERM (map is RDONLY or WRONLY:
 * this needs both rights), -ENOENT.
 * Concurrency: locks the key's bucket.  The value's spin lock, if any, is not
 * taken (as in the kernel): a program holding it may be halfway through a
 * change, which BPFMAP_F_LOCK (below) waits for.
 */
BPFMAP_API int bpfmap_lookup_and_delete_elem(struct bpfmap *map, const void *key,
					     void *value);

/*
 * bpfmap_lookup_and_delete_elem_flags - bpfmap_lookup_and_delete_elem() with
 * @flags: 0 or BPFMAP_F_LOCK (copy the value as under its spin lock, the
 * lock field reading as zero; libbpf's bpf_map_lookup_and_delete_elem_flags).
 * Returns as bpfmap_lookup_and_delete_elem(), plus -EINVAL for any other flag
 * bit (checked before the access rights, as the kernel does) or for
 * BPFMAP_F_LOCK on a map without a spin lock (checked after them).
 * Concurrency: with BPFMAP_F_LOCK, while a program holds the value's lock the
 * call waits for it with the bucket unlocked and outside any read-side
 * section of its own, then looks the key up again.
 */
BPFMAP_API int bpfmap_lookup_and_delete_elem_flags(struct bpfmap *map, const void *key,
						   void *value, uint64_t flags);

/*
 * bpfmap_get_next_key - iterate over the keys.
 * @key:      NULL, or a key; NULL or a key not in the map start from the first.
 * @next_key: receives the key after @key (key_size bytes).
 * Returns 0, or -ENOENT after the last key (or on an empty map), -EINVAL
 * (NULL map or next_key), -EPERM (BPFMAP_F_WRONLY), -ENOMEM (preallocated
 * maps with keys over 256 bytes: no memory to compare keys in; the kernel's
 * syscall allocates here too).
 * Order: bucket by bucket (maps on the flat table: each bucket's keys in
 * byte order; on the chained table, which preallocated maps of keys over
 * 8 bytes under 16384 elements, NO_PREALLOC and NO_COMMON_LRU maps use: by
 * position in the bucket; RHASH: by hash, then key bytes); it depends on
 * the seed.
 * Concurrency: lock-free, but on an LRU map on the chained table (per-CPU
 * lists, or keys over 8 bytes in maps under 16384 elements), whose
 * elements are reused at once, each step locks the bucket it reads.  A walk
 * visits every key exactly once when nothing changes meanwhile; under
 * concurrent updates it may miss keys added or removed during the walk, and
 * restarts from the first key if @key has been deleted (as the kernel does).
 * BPFMAP_TYPE_RHASH: exact.  Its order is (hash, key bytes), the same at
 * every table size; a walk returns every key present for the whole walk
 * exactly once and none twice, while the map grows and shrinks, and a @key
 * not in the map (deleted since, say) resumes from its place in that order,
 * not from the first key.  Each call reads one bucket or more without a
 * lock, and reads a bucket again if a writer changed it meanwhile; a
 * bucket that writers changed three times running it reads under the
 * bucket's lock (for fork(), such a call counts as writing: README).
 */
BPFMAP_API int bpfmap_get_next_key(struct bpfmap *map, const void *key, void *next_key);

/*
 * bpfmap_lookup_batch - copy out many elements, whole buckets at a time.
 * @in_batch:  NULL to start, else the cursor a previous call left in
 *             @out_batch; an opaque 4-byte bucket index (buffers of at least
 *             4 bytes, whatever the key size; RHASH: key_size bytes, a key).
 * @out_batch: receives the cursor to resume from.
 * @keys, @values: room for *@count keys and values, packed.
 * @count:     in: capacity in elements; out: elements copied, also on error
 *             (left as it was when the map, count, access or opts are
 *             refused).
 * @opts:      NULL, or elem_flags 0 / BPFMAP_F_LOCK, flags 0.
 * Returns 0 (more may follow: call again with in_batch = out_batch), or:
 *  -ENOENT  the end was reached; *count elements (possibly > 0) were copied;
 *  -ENOSPC  the next bucket holds more elements than *count; nothing copied;
 *  -EINVAL  NULL map or count, bad opts, or (checked last, *count set to 0)
 *           out_batch, keys or values NULL with *count > 0;
 *  -EPERM   BPFMAP_F_WRONLY.
 *  -ERANGE  elem_flags' BPFMAP_F_CPU with a CPU that is not possible.
 * Checked in this order (the kernel's): NULL map or count, the access
 * (-EPERM), malformed opts, elem_flags (-EINVAL, then -ERANGE), flags.
 * *count == 0 on entry returns 0 and touches nothing.  A cursor past the last
 * bucket returns -ENOENT with *count = 0.
 * Concurrency: locks one bucket at a time; each bucket is copied as a
 * consistent snapshot, the map as a whole is not.
 * BPFMAP_TYPE_RHASH: element by element, in get_next_key's exact order; the
 * cursor is the last key returned (key_size bytes), any *count >= 1 makes
 * progress (never -ENOSPC), and a cursor whose key was deleted since goes on
 * from its place (a call that returns nothing leaves @out_batch as it
 * was).  Each element is read as get_next_key reads it, with no
 * lock; lookup_and_delete_batch locks the bucket it deletes from.
 */
BPFMAP_API int bpfmap_lookup_batch(struct bpfmap *map, void *in_batch, void *out_batch,
				   void *keys, void *values, uint32_t *count,
				   const struct bpfmap_batch_opts *opts);

/*
 * bpfmap_lookup_and_delete_batch - bpfmap_lookup_batch() that also deletes
 * what it returns.  Errors as bpfmap_lookup_batch(), -EPERM if the map is
 * RDONLY or WRONLY.
 */
BPFMAP_API int bpfmap_lookup_and_delete_batch(struct bpfmap *map, void *in_batch,
					      void *out_batch, void *keys, void *values,
					      uint32_t *count,
					      const struct bpfmap_batch_opts *opts);

/*
 * bpfmap_update_batch - bpfmap_update_elem(..., elem_flags) for *@count keys
 * and values in turn (packed arrays); stops at the first error.
 * @opts:  NULL, or elem_flags 0, BPFMAP_EXIST, BPFMAP_F_LOCK and the per-CPU
 *         flags, as bpf-next's BPF_F_CPU series takes them (Linux 6.18
 *         refuses EXIST here; neither takes NOEXIST); flags is ignored, as
 *         in the kernel.
 * @count: in: number of elements; out: number updated before the error (a
 *         call refused before any element, -EINVAL, -EPERM or -ERANGE for
 *         BPFMAP_F_CPU with a CPU that is not possible, leaves it as it
 *         was, as the kernel's does).
 * Returns 0 or the first error, as bpfmap_update_elem(); -EINVAL also for bad
 * opts or NULL keys/values.  *@count == 0 returns 0 and touches nothing.
 * Concurrency: each element is one bpfmap_update_elem(); the batch as a whole
 * is not atomic.
 */
BPFMAP_API int bpfmap_update_batch(struct bpfmap *map, const void *keys,
				   const void *values, uint32_t *count,
				   const struct bpfmap_batch_opts *opts);

/*
 * bpfmap_delete_batch - bpfmap_delete_elem() for *@count keys in turn; stops at
 * the first error (-ENOENT for an absent key).
 * @opts:  NULL, or elem_flags 0 or BPFMAP_F_LOCK (accepted, as in the kernel,
 *         where values have a spin lock, -EINVAL elsewhere; it changes
 *         nothing for a delete); flags is ignored, as in the kernel.
 * @count: in: number of keys; out: number deleted before the error (a call
 *         refused before any key, -EINVAL or -EPERM, leaves it as it was).
 * Returns 0 or the first error; -EINVAL for bad opts or NULL keys.  *@count ==
 * 0 returns 0 and touches nothing.
 * Concurrency: each key is one bpfmap_delete_elem(); not atomic as a whole.
 */
BPFMAP_API int bpfmap_delete_batch(struct bpfmap *map, const void *keys,
				   uint32_t *count, const struct bpfmap_batch_opts *opts);

/*
 * bpfmap_lookup - program view: a pointer to the value stored under @key, or
 * NULL if it is absent (errno ENOENT; EINVAL for NULL arguments, EPERM for a
 * BPFMAP_F_WRONLY_PROG map).
 * Concurrency: call it between bpfmap_read_lock() and bpfmap_read_unlock();
 * the pointer stays valid until that section ends, even if the element is
 * deleted meanwhile (the memory is reused only after the section).  Writes
 * through it are visible to every reader at once; use atomics (or the value's
 * spin lock) when other threads write the same value.  Outside a section the
 * pointer is valid only while no thread deletes the key (the lookup itself
 * is safe there: a BPFMAP_F_NO_PREALLOC map's, whose elements go back to
 * malloc, takes a section of its own for its walk).
 */
BPFMAP_API void *bpfmap_lookup(struct bpfmap *map, const void *key);

/*
 * bpfmap_lookup_percpu - program view of a per-CPU map's slot for @cpu (the
 * kernel's bpf_map_lookup_percpu_elem()): as bpfmap_lookup(), but the slot
 * of CPU @cpu whatever CPU the caller runs on.  NULL with errno, the first
 * of these that applies: EINVAL (NULL arguments, a map that is not
 * per-CPU), ERANGE (@cpu is no possible CPU), EPERM (BPFMAP_F_WRONLY_PROG),
 * ENOENT.  On an LRU map it marks the element used, as bpfmap_lookup() does.
 */
BPFMAP_API void *bpfmap_lookup_percpu(struct bpfmap *map, const void *key, uint32_t cpu);

/*
 * bpfmap_percpu_add - add @delta to the calling CPU's counter of @key in a
 * per-CPU map: the first 8 bytes of its slot, as a uint64_t.  Exact without
 * a locked instruction where the kernel and glibc provide restartable
 * sequences (x86-64, glibc 2.35 and later): the add is restarted if the
 * thread is preempted or moves to another CPU before it lands, so it lands
 * once, in the slot of the CPU it ran on, and never races with another
 * thread's add.  Elsewhere it is an atomic add.  The slots add up to every
 * delta added, however threads move.  It is not ordered against writes of
 * the same slot from the syscall view (an update of the key), as the
 * kernel's programs' per-CPU increments are not, nor against writes
 * through a program-view pointer to the slot from another CPU (a thread
 * that moved after its bpfmap_lookup(), or bpfmap_lookup_percpu()): its
 * unlocked add and such an atomic add can overwrite each other, so count
 * a key by one of the two ways, not both.  A lookup_and_delete of the
 * key (single or batch) returns every delta of the adds that returned
 * before it, and of those that found the key before it took it: the
 * first one on a map waits for adds in flight, and the map's adds take
 * its bucket lock from then on, which costs them a locked instruction or
 * two (docs/CONCURRENCY.md).  Except on an LRU_PERCPU_HASH on the chained
 * table, whose adds such a take may miss, as the kernel's take misses a
 * program's increment.
 * Returns 0, or -EINVAL (NULL arguments, a map that is not per-CPU or whose
 * value_size is below 8), -EPERM (BPFMAP_F_RDONLY_PROG), -ENOENT; from a
 * signal handler -EBUSY only if the key's bucket lock is held (after a
 * lookup_and_delete), as the kernel's programs meet their CPU's bucket lock.
 * Concurrency: lock-free until the map's first lookup_and_delete, then under
 * the key's bucket lock; callable inside or outside a read-side section.
 * On an LRU map it marks the element used.
 */
BPFMAP_API int bpfmap_percpu_add(struct bpfmap *map, const void *key, uint64_t delta);

/*
 * bpfmap_update - program view of an update (bpf_map_update_elem() called
 * from a BPF program): as bpfmap_update_elem(), with @value value_size
 * bytes.  In a per-CPU map it stores the calling CPU's slot only; an element
 * it creates has every other CPU's slot zeroed.
 * Returns as bpfmap_update_elem(), but -EPERM for a BPFMAP_F_RDONLY_PROG map
 * (BPFMAP_F_RDONLY limits the syscall view only), and the per-CPU flags are
 * -EINVAL, as for a program.
 * Concurrency: as bpfmap_update_elem(); it may be called inside or outside
 * a read-side section.
 */
BPFMAP_API int bpfmap_update(struct bpfmap *map, const void *key, const void *value,
			     uint64_t flags);

/*
 * bpfmap_delete - program view of a delete (bpf_map_delete_elem() called
 * from a BPF program): as bpfmap_delete_elem(), but -EPERM for a
 * BPFMAP_F_RDONLY_PROG map rather than a BPFMAP_F_RDONLY one.
 */
BPFMAP_API int bpfmap_delete(struct bpfmap *map, const void *key);

/*
 * bpfmap_lookup_fn - the type of a resolved program-view lookup (see
 * bpfmap_lookup_func()).
 */
typedef void *(*bpfmap_lookup_fn)(struct bpfmap *map, const void *key);

/*
 * bpfmap_lookup_func - the lookup function bpfmap_lookup() runs for @map,
 * specialised for its key size and hash when the map was created.  A JIT or
 * interpreter that resolves its map calls once, at program load, calls it
 * directly and saves bpfmap_lookup()'s argument checks and indirect jump on
 * every lookup (what the kernel's verifier does when it inlines a hash map's
 * lookup into the program).  fn(@map, key) behaves exactly as
 * bpfmap_lookup(@map, key) for a non-NULL key; it must be called with @map
 * itself and only until bpfmap_free(@map).
 * Returns the function, or NULL with errno EINVAL for a NULL @map.
 */
BPFMAP_API bpfmap_lookup_fn bpfmap_lookup_func(const struct bpfmap *map);

/*
 * bpfmap_lookup_bulk - program view for @n keys at once: @values[i] receives
 * the address of the value stored under the i-th key (@keys holds them
 * packed, key_size bytes apart), or NULL where that key is absent; @values
 * must not overlap @keys (it is written while later keys are read).  The
 * lookups' memory accesses overlap (hash all, prefetch, then compare), so on
 * maps larger than the caches this beats @n calls of bpfmap_lookup(); in maps
 * the caches hold, single calls of bpfmap_lookup_func()'s function are faster.
 * Returns how many keys were found (0 .. @n), or -EINVAL (NULL map, or NULL
 * keys/values with @n > 0), -EPERM (BPFMAP_F_WRONLY_PROG), -E2BIG (@n over
 * INT_MAX, whose count the result could not hold), nothing read or written.
 * Concurrency: as bpfmap_lookup(): call it inside a read-side section; every
 * pointer stays valid until that section ends.
 */
BPFMAP_API int bpfmap_lookup_bulk(struct bpfmap *map, const void *keys, uint32_t n,
				  void **values);

/*
 * bpfmap_read_lock / bpfmap_read_unlock - open and close a read-side section
 * (an RCU read-side critical section).  Sections nest.  Cheap (no atomic
 * read-modify-write, no lock); a thread is registered automatically on first
 * use.  Inside a section do not call bpfmap_free(), and do not block for long:
 * memory reclamation waits for sections to end.
 */
BPFMAP_API void bpfmap_read_lock(void);
BPFMAP_API void bpfmap_read_unlock(void);

/*
 * bpfmap_spin_lock / bpfmap_spin_unlock - take and release a value's spin lock
 * from program-view code, the twins of bpf_spin_lock()/bpf_spin_unlock().  They
 * exclude BPFMAP_F_LOCK copies of the same value.  Not recursive.  As in the
 * kernel, where a program holding a bpf_spin_lock may call no helper, call
 * nothing on the map while holding one: BPFMAP_F_LOCK copies and batches
 * wait for the lock, some with a bucket locked or in a read-side section.
 */
BPFMAP_API void bpfmap_spin_lock(struct bpfmap_spin_lock *lock);
BPFMAP_API void bpfmap_spin_unlock(struct bpfmap_spin_lock *lock);

/*
 * bpfmap_mem_usage - bytes this map holds (elements, buckets, bookkeeping),
 * the counterpart of the kernel's memlock figure.  0 for NULL.
 * Concurrency: a snapshot; it may lag concurrent updates of
 * BPFMAP_F_NO_PREALLOC maps by the elements waiting to be reclaimed.
 */
BPFMAP_API size_t bpfmap_mem_usage(const struct bpfmap *map);

/*
 * bpfmap_num_possible_cpus - the number of possible CPUs, read once from
 * /sys/devices/system/cpu/possible and counted as libbpf's
 * libbpf_num_possible_cpus() counts them ("0-3,8" is 5; falls back to the
 * configured CPU count).  A per-CPU value in the syscall view is this many
 * slots, the possible CPUs in their order, as the kernel lays it out.
 * Returns a positive count, or a negative errno if neither source works:
 * -ENOMEM, or -ENODEV (neither readable, or both naming CPUs numbered 65535
 * or more).
 */
BPFMAP_API int bpfmap_num_possible_cpus(void);

/*
 * String functions: the kernel's string kfuncs (bpf_strcmp() ... in
 * kernel/bpf/helpers.c) with their parameters, results and error codes, so a
 * user-space BPF runtime can expose them to programs unchanged.  Word-at-a-time
 * (SWAR) everywhere, SSE2, AVX2 and AVX-512BW on x86, chosen once per process
 * by CPU features (on glibc the symbols are resolved by the dynamic linker,
 * so a call costs what a C library string call costs).
 *
 * Shared contract (each function below states what it adds):
 *  - results are indices (>= 0), never pointers; comparisons give -1, 0, 1;
 *  - a NULL string argument gives -ERANGE (the kernel's code for an address
 *    it may not read), checked before anything is read;
 *  - STR_MAX = 65536 (the kernel's XATTR_SIZE_MAX) bytes at most are examined
 *    per string: where the answer depends on a string that has no NUL among
 *    its first 65536 bytes, the result is -E2BIG (the exact cases follow the
 *    kernel and are listed per function);
 *  - bytes compare as unsigned char; the case-insensitive functions fold
 *    'A'-'Z' and the Latin-1 capitals 0xC0-0xDE (except 0xD7) to lower case,
 *    as the kernel's ctype tolower() does, and are independent of the locale;
 *  - no read touches a page that the string (up to its NUL) or the bounded
 *    range does not reach: blocks of up to 64 bytes are read around the bytes
 *    examined (aligned blocks, and unaligned ones only where they stay inside
 *    the page of a byte that is examined), never reaching into another page.
 *    These reads are excluded from AddressSanitizer and ThreadSanitizer;
 *    under Valgrind (detected at run time, which then keeps every read to
 *    aligned blocks) use --partial-loads-ok=yes;
 *  - the kernel's -EFAULT (a fault while reading) has no user-space
 *    equivalent: an unreadable string crashes, as with the C library;
 *  - so every string argument must be NUL-terminated (within its bound, for
 *    the bounded functions, or readable up to the bound).  The kernel reads
 *    byte by byte and stops where the answer is settled: at strcmp()'s first
 *    difference, at strspn()'s first byte outside the set, or at a needle's
 *    first mismatch, so it answers for a char array that has no NUL.  These
 *    read ahead (a whole set or needle string first, the next block of the
 *    other string) and may then read past such an array's end, into an
 *    unmapped page; a runtime that passes a program's fixed-size buffers
 *    should use the bounded functions, or make sure of the NUL;
 *  - errno is left untouched.
 * Concurrency: pure functions of the bytes they read; any thread may call
 * any of them at any time.  A string modified while it is being read gives
 * an unspecified result (but still reads only as described above).
 */

/*
 * bpfmap_strcmp - compare two strings.
 * Returns 0 if equal, -1 if @s1 sorts first, 1 if @s2 does (first differing
 * byte, unsigned); -ERANGE if either is NULL; -E2BIG if their first 65536
 * bytes are equal and contain no NUL.
 */
BPFMAP_API int bpfmap_strcmp(const char *s1, const char *s2);

/*
 * bpfmap_strcasecmp - bpfmap_strcmp() on case-folded bytes (see above):
 * "ABC" equals "abc", and 'A' (folded to 'a') sorts after '_'.
 */
BPFMAP_API int bpfmap_strcasecmp(const char *s1, const char *s2);

/*
 * bpfmap_strncasecmp - bpfmap_strcasecmp() on at most @len bytes.
 * Returns 0, -1, 1 as bpfmap_strcasecmp(); 0 when the first @len bytes are
 * equal (so always 0 for @len == 0, after the NULL check); -ERANGE for a NULL
 * string; -E2BIG when @len >= 65536 and the first 65536 bytes are equal with
 * no NUL.  Reads nothing at or past @s1 + @len and @s2 + @len (page-wise, see
 * above).
 */
BPFMAP_API int bpfmap_strncasecmp(const char *s1, const char *s2, size_t len);

/*
 * bpfmap_strchr - the index of the first @c in @s; the terminating NUL is part
 * of the string, so @c == 0 finds its index.
 * Returns the index, -ENOENT if @c is not in @s, -ERANGE for NULL, -E2BIG if
 * neither @c nor a NUL is among the first 65536 bytes.
 */
BPFMAP_API int bpfmap_strchr(const char *s, char c);

/*
 * bpfmap_strchrnul - the index of the first @c in @s, or of its NUL if @c is
 * absent.  Returns that index, -ERANGE for NULL, -E2BIG if neither is among
 * the first 65536 bytes.
 */
BPFMAP_API int bpfmap_strchrnul(const char *s, char c);

/*
 * bpfmap_strnchr - bpfmap_strchr() within the first @count bytes.
 * Returns the index (< @count), -ENOENT if @c is not there (also for
 * @count == 0, and when the NUL comes first), -ERANGE for NULL, -E2BIG if
 * @count >= 65536 and neither @c nor a NUL is among the first 65536 bytes.
 * Reads nothing at or past @s + @count (page-wise).
 */
BPFMAP_API int bpfmap_strnchr(const char *s, size_t count, char c);

/*
 * bpfmap_strrchr - the index of the last @c in @s.  @c is an int compared
 * with the unsigned byte values: 0 finds the NUL, 0x80 finds byte 0x80, and
 * values outside 0..255 (-128 included) find nothing.
 * Returns the index, -ENOENT if absent, -ERANGE for NULL, -E2BIG if @s has no
 * NUL among its first 65536 bytes (whatever it contains).
 */
BPFMAP_API int bpfmap_strrchr(const char *s, int c);

/*
 * bpfmap_strlen - the length of @s.
 * Returns 0..65535, -ERANGE for NULL, -E2BIG if there is no NUL among the
 * first 65536 bytes.
 */
BPFMAP_API int bpfmap_strlen(const char *s);

/*
 * bpfmap_strnlen - the length of @s, at most @count.
 * Returns min(length, @count) when that is below 65536, -ERANGE for NULL,
 * -E2BIG if @count >= 65536 and there is no NUL among the first 65536 bytes.
 * Reads nothing at or past @s + @count (page-wise).
 */
BPFMAP_API int bpfmap_strnlen(const char *s, size_t count);

/*
 * bpfmap_strspn - the length of the initial part of @s made only of bytes in
 * @accept.
 * Returns it, -ERANGE if either is NULL, -E2BIG if 65536 bytes of @s are all
 * in @accept, or if the span ends at a byte of @s not in @accept while
 * @accept has no NUL among its first 65536 bytes (the kernel looks the byte
 * up there first).  An empty @accept gives 0.
 */
BPFMAP_API int bpfmap_strspn(const char *s, const char *accept);

/*
 * bpfmap_strcspn - the length of the initial part of @s made only of bytes
 * not in @reject.
 * Returns it, -ERANGE if either is NULL, -E2BIG if 65536 bytes of @s avoid
 * @reject; if @reject has no NUL among its first 65536 bytes the kernel
 * answers only an empty @s or an @s[0] found there (0) and gives -E2BIG
 * otherwise, and so does this.
 */
BPFMAP_API int bpfmap_strcspn(const char *s, const char *reject);

/*
 * bpfmap_strnstr - the index of the first occurrence of @s2 that lies wholly
 * within the first @len bytes of @s1.
 * Returns:
 *  >= 0     the index; an empty @s2 matches at 0 (even for @len == 0);
 *  -ENOENT  not found, including when a partial match runs into the end of
 *           @s1 or into @len first (no later match can exist);
 *  -ERANGE  either string is NULL;
 *  -E2BIG   all of the first 65536 positions were tried (@s1 and @len both
 *           reach that far) without a match or a partial match running
 *           into the end; or @s2 has no NUL among its first 65536 bytes and
 *           those match @s1 at some position (a longer needle that
 *           mismatches earlier gives -ENOENT, as in the kernel).
 * Candidate positions are 0..65535 only; a match starting at one of them may
 * end anywhere within @len.  Reads nothing at or past @s1 + @len (page-wise).
 */
BPFMAP_API int bpfmap_strnstr(const char *s1, const char *s2, size_t len);

/*
 * bpfmap_strstr - bpfmap_strnstr() with @len = 65536: a match counts only if
 * it ends within the first 65536 bytes of @s1.
 */
BPFMAP_API int bpfmap_strstr(const char *s1, const char *s2);

/*
 * bpfmap_strncasestr - bpfmap_strnstr() on case-folded bytes.
 */
BPFMAP_API int bpfmap_strncasestr(const char *s1, const char *s2, size_t len);

/*
 * bpfmap_strcasestr - bpfmap_strstr() on case-folded bytes.
 */
BPFMAP_API int bpfmap_strcasestr(const char *s1, const char *s2);

#ifdef __cplusplus
}
#endif

#endif /* BPFMAP_H */
