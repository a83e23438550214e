// SPDX-License-Identifier: BSD-2-Clause
/*
 * Programs for tests/test_rtebpf.c, one per section: "helpers" calls every
 * map helper and every string kfunc and stores what each answered; "single"
 * uses one map only (for rte_bpf_elf_load() with bpfmap_rtebpf_syms()); each
 * other section breaks one rule of rte_bpf or of the loader, which must
 * refuse it with a message naming the cause.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "rtebpf_cases.h"
#include "rtebpf_maps.h"

#define KF(ret, name, ...) extern ret name(__VA_ARGS__) __ksym
KF(int, bpf_strcmp, const char *, const char *);
KF(int, bpf_strcasecmp, const char *, const char *);
KF(int, bpf_strncasecmp, const char *, const char *, __SIZE_TYPE__);
KF(int, bpf_strchr, const char *, char);
KF(int, bpf_strchrnul, const char *, char);
KF(int, bpf_strnchr, const char *, __SIZE_TYPE__, char);
KF(int, bpf_strrchr, const char *, int);
KF(int, bpf_strlen, const char *);
KF(int, bpf_strnlen, const char *, __SIZE_TYPE__);
KF(int, bpf_strspn, const char *, const char *);
KF(int, bpf_strcspn, const char *, const char *);
KF(int, bpf_strstr, const char *, const char *);
KF(int, bpf_strnstr, const char *, const char *, __SIZE_TYPE__);
KF(int, bpf_strcasestr, const char *, const char *);
KF(int, bpf_strncasestr, const char *, const char *, __SIZE_TYPE__);
KF(int, bpf_strfoo, const char *); /* no such kfunc */
/* A per-map helper called by name: it must receive its own map. */
KF(void *, bpf_map_lookup_elem__other, void *, const void *);


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} ghost SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("rte/helpers")
int helpers(struct case_ctx *c)
{
	__u32 k = 1;
	__u64 v = 7, wk = 3, *p;
	struct case_wide w = { 11, 12 }, *wp;

	c->out[0] = bpf_map_update_elem(&small, &k, &v, BPF_NOEXIST);
	c->out[1] = bpf_map_update_elem(&small, &k, &v, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&small, &k);
	c->out[2] = p ? (__s64)*p : -1;
	c->out[3] = bpf_map_delete_elem(&small, &k);
	c->out[4] = bpf_map_delete_elem(&small, &k);
	c->out[5] = bpf_map_lookup_elem(&small, &k) != 0;
	c->out[6] = bpf_map_update_elem(&pcpu, &k, &v, BPF_ANY);
	p = bpf_map_lookup_percpu_elem(&pcpu, &k, c->in[0]);
	c->out[7] = p ? (__s64)*p : -1;
	c->out[8] = bpf_map_lookup_percpu_elem(&pcpu, &k, c->in[1]) != 0;
	c->out[9] = bpf_map_update_elem(&other, &wk, &w, BPF_ANY);
	wp = bpf_map_lookup_elem(&other, &wk);
	c->out[25] = wp ? (__s64)wp->b : -1;
	c->out[26] = bpf_map_update_elem(&small, &k, &v, BPF_EXIST);

	c->out[10] = bpf_strcmp(c->str, c->str2);
	c->out[11] = bpf_strcasecmp(c->str, c->str2);
	c->out[12] = bpf_strncasecmp(c->str, c->str2, c->in[2]);
	c->out[13] = bpf_strchr(c->str, (char)c->in[3]);
	c->out[14] = bpf_strchrnul(c->str, (char)c->in[3]);
	c->out[15] = bpf_strnchr(c->str, c->in[2], (char)c->in[3]);
	c->out[16] = bpf_strrchr(c->str, (int)c->in[3]);
	c->out[17] = bpf_strlen(c->str);
	c->out[18] = bpf_strnlen(c->str, c->in[2]);
	c->out[19] = bpf_strspn(c->str, c->str2);
	c->out[20] = bpf_strcspn(c->str, c->str2);
	c->out[21] = bpf_strstr(c->str, c->str2);
	c->out[22] = bpf_strnstr(c->str, c->str2, c->in[2]);
	c->out[23] = bpf_strcasestr(c->str, c->str2);
	c->out[24] = bpf_strncasestr(c->str, c->str2, c->in[2]);
	return 0;
}

SEC("rte/single")
int single(struct case_ctx *c)
{
	__u32 k = (__u32)c->in[0];
	__u64 *p = bpf_map_lookup_elem(&small, &k);

	if (!p)
		return 1;
	__sync_fetch_and_add(p, 1);
	return 0;
}

SEC("rte/ktime")
int ktime(struct case_ctx *c)
{
	c->out[0] = bpf_ktime_get_ns();
	return 0;
}

SEC("rte/rodata")
int rodata(struct case_ctx *c)
{
	c->out[0] = bpf_strlen("a string literal lives in .rodata");
	return 0;
}

static __attribute__((noinline)) int sub(struct case_ctx *c)
{
	return (int)c->in[0] + 1;
}

SEC("rte/subprog")
int subprog(struct case_ctx *c)
{
	return sub(c);
}

SEC("rte/badkfunc")
int badkfunc(struct case_ctx *c)
{
	c->out[0] = bpf_strfoo(c->str);
	return 0;
}

SEC("rte/ghost")
int use_ghost(struct case_ctx *c)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&ghost, &k) != 0;
}

SEC("rte/percpu_on_hash")
int percpu_on_hash(struct case_ctx *c)
{
	__u32 k = 0;

	return bpf_map_lookup_percpu_elem(&small, &k, 0) != 0;
}

SEC("rte/ambiguous")
int ambiguous(struct case_ctx *c)
{
	void *m = c->in[0] ? (void *)&small : (void *)&pcpu;
	__u32 k = 0;

	return bpf_map_lookup_elem(m, &k) != 0;
}

SEC("rte/oob")
int oob(struct case_ctx *c)
{
	__u32 k = 0;
	__u64 *p = bpf_map_lookup_elem(&small, &k);

	if (p)
		c->out[0] = (__s64)p[1]; /* one past the 8-byte value */
	return 0;
}

/* A map's handle is the function a lookup calls: writing it redirected
 * the next lookup anywhere (a helper's rip = 0x41414141). */
SEC("rte/handle_write")
int handle_write(struct case_ctx *c)
{
	__u32 k = 0;

	*(volatile __u64 *)(void *)&small = (__u64)c->in[0];
	return bpf_map_lookup_elem(&small, &k) != 0;
}

/* Swapping the map a call receives behind the analysis's back: the spill
 * of one map overwritten through a stack pointer made by arithmetic. */
SEC("rte/handle_swap")
int handle_swap(struct case_ctx *c)
{
	void *slot[2];
	volatile __s64 i = 0;
	__u32 k = 0;
	__u64 v = 0;

	slot[0] = &small;
	slot[i] = &pcpu;
	return bpf_map_update_elem(slot[0], &k, &v, 0);
}

/* A program written as instructions, ending in `return 0` (a body may jump
 * there as `goto 1f`): each breaks one rule the loader's analysis keeps.
 * %[small] is the map. */
#define ASM_PROG(name, body)                                                   \
	SEC("rte/" #name)                                                      \
	__attribute__((naked)) int name(struct case_ctx *c)                   \
	{                                                                      \
		asm volatile(body "1:\n"                                       \
				  "r0 = 0\n"                                   \
				  "exit\n" ::[small] "i"(&small));             \
	}

/* The two halves of a spilled map, filled 4 bytes at a time and put back
 * together: rte_bpf's validator types each fill by its slot, so the result
 * was the map pointer to it, and the handle was read (a helper's probe). */
ASM_PROG(half_fills,
	 "r6 = r1\n"
	 "r0 = %[small] ll\n"
	 "*(u64 *)(r10 - 16) = r0\n"
	 "r1 = *(u32 *)(r10 - 16)\n"
	 "r2 = *(u32 *)(r10 - 12)\n"
	 "r2 <<= 32\n"
	 "r1 |= r2\n"
	 "r3 = *(u64 *)(r1 + 0)\n"
	 "*(u64 *)(r6 + 32) = r3\n")

/* One 8-byte fill astride two slots that both hold the map, rotated. */
ASM_PROG(astride_fill,
	 "r6 = r1\n"
	 "r1 = %[small] ll\n"
	 "*(u64 *)(r10 - 16) = r1\n"
	 "*(u64 *)(r10 - 8) = r1\n"
	 "r2 = *(u64 *)(r10 - 12)\n"
	 "r3 = r2\n"
	 "r3 >>= 32\n"
	 "r2 <<= 32\n"
	 "r2 |= r3\n"
	 "r4 = *(u64 *)(r2 + 8)\n"
	 "*(u64 *)(r6 + 32) = r4\n")

/* A per-map helper called by name with another map: it took any r1, and a
 * neighbour's value was written through a result sized for map "other". */
SEC("rte/helper_by_entry_name")
int helper_by_entry_name(struct case_ctx *c)
{
	__u64 k = c->in[0], *p = bpf_map_lookup_elem__other(&small, &k);

	if (p)
		p[1] = c->in[1];
	return 0;
}

/* A map as an update's value: the handle's bytes copied into a map. */
SEC("rte/map_as_value")
int map_as_value(struct case_ctx *c)
{
	__u64 k = 1;

	return bpf_map_update_elem(&other, &k, &small, BPF_ANY);
}

/* A map as a kfunc's string: the handle's bytes read. */
SEC("rte/map_to_kfunc")
int map_to_kfunc(struct case_ctx *c)
{
	c->out[0] = bpf_strnlen((const char *)&small, 16);
	return 0;
}

/* A write into a looked-up value: refused when the map is
 * BPFMAP_F_RDONLY_PROG, as the kernel's verifier refuses it. */
SEC("rte/value_write")
int value_write(struct case_ctx *c)
{
	__u32 k = 0;
	__u64 *p = bpf_map_lookup_elem(&small, &k);

	if (!p)
		return 1;
	c->out[0] = (__s64)*p;
	*p = (__u64)c->in[0];
	return 0;
}

/* A value pointer moved by a product: rte_bpf's validator took
 * (in[0] & 3) * 0x5555555555555556 & 4095 to be at most 3 (the product
 * wraps to 2 in its bounds), while it is 0x556 for 3, and the byte landed
 * in another key's value (an adversarial helper's program). */
ASM_PROG(mul_offset,
	 "r6 = r1\n"
	 "r2 = 0\n"
	 "*(u64 *)(r10 - 8) = r2\n"
	 "r2 = r10\n"
	 "r2 += -8\n"
	 "r1 = %[small] ll\n"
	 "call 1\n"
	 "if r0 == 0 goto 1f\n"
	 "r3 = *(u64 *)(r6 + 0)\n"
	 "r3 &= 3\n"
	 "r4 = 0x5555555555555556 ll\n"
	 "r3 *= r4\n"
	 "r3 &= 4095\n"
	 "r0 += r3\n"
	 "r5 = 0x41\n"
	 "*(u8 *)(r0 + 0) = r5\n")

/* The distance between two context pointers as a lookup's key: a context
 * pointer at offset 64 to the validator, the number 64 in fact. */
ASM_PROG(distance_key,
	 "r2 = r1\n"
	 "r2 += 64\n"
	 "r2 -= r1\n"
	 "r1 = %[small] ll\n"
	 "call 1\n")

SEC("rte/loop")
int loop(struct case_ctx *c)
{
	__u64 n = c->in[0] & 15;

#pragma clang loop unroll(disable)
	for (__u64 i = 0; i < n; i++)
		c->out[i] = (__s64)i;
	return 0;
}

/* rte_bpf's validator narrows each operand of a conditional jump from the
 * other whatever their types.  A lookup's result moved by a number from the
 * context (a helper's probe used the handle's address minus the value's)
 * and compared with the map is, where they are equal, at offset 0 to the
 * validator: the handle was read there. */
#define VALUE_PLUS_IN0                                                                   \
	"r6 = r1\n"                                                                      \
	"r1 = 1\n"                                                                       \
	"*(u64 *)(r10 - 8) = r1\n"                                                       \
	"r1 = %[small] ll\n"                                                             \
	"r2 = r10\n"                                                                     \
	"r2 += -8\n"                                                                     \
	"call 1\n"                                                                       \
	"if r0 == 0 goto 1f\n"                                                           \
	"r5 = *(u64 *)(r6 + 0)\n"                                                        \
	"r9 = r0\n"                                                                      \
	"r9 += r5\n"
ASM_PROG(cmp_with_map,
	 VALUE_PLUS_IN0
	 "r1 = %[small] ll\n"
	 "if r9 != r1 goto 1f\n"
	 "r2 = *(u64 *)(r9 + 0)\n"
	 "*(u64 *)(r6 + 32) = r2\n")

/* The same pointer bounded by compares with a stack pointer and with 0, no
 * map in sight: to the validator at offset 0, it wrote wherever the
 * number put it. */
ASM_PROG(cmp_anchor,
	 VALUE_PLUS_IN0
	 "r4 = r10\n"
	 "r4 += -511\n"
	 "if r9 >= r4 goto 1f\n"
	 "if r9 s>= r4 goto 1f\n"
	 "if r9 s< 0 goto 1f\n"
	 "r2 = *(u64 *)(r6 + 8)\n"
	 "*(u64 *)(r9 + 0) = r2\n")
