// SPDX-License-Identifier: BSD-2-Clause
/*
 * libbpfmap-rtebpf: a BPF program built for the kernel
 * (examples/rte_bpf/flow_count.bpf.o) runs in DPDK's rte_bpf on bpfmap's
 * maps, interpreted and JIT-ed from several threads at once, and leaves
 * exactly the counters a C reference computes; every helper and kfunc
 * answers what the library answers; every program the loader or rte_bpf's
 * validator refuses is refused with a message naming the cause, without a
 * crash (tests/bpf/rtebpf_cases.bpf.c, one section per case).
 */
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rte_bpf.h>

#include <bpfmap_rtebpf.h>

#include "test_util.h"
#include "flow_trace.h"
#include "bpf/rtebpf_cases.h"

#define THREADS 4

static char log_buf[8192];

/* ---- flow_count.bpf.o from several threads ---- */

struct worker {
	pthread_t tid;
	const struct bpfmap_rtebpf_prog *prog;
	const struct flow_trace *trace;
	int mode; /* 0 interpreter, 1 JIT through run_burst, 2 JIT called directly */
};

static void *run_trace(void *arg)
{
	const struct worker *w = arg;
	bpfmap_rtebpf_jit_fn fn = bpfmap_rtebpf_jit(w->prog);

	for (uint32_t i = 0; i < w->trace->n; i += 16) {
		uint32_t n = w->trace->n - i < 16 ? w->trace->n - i : 16;
		void *ctx[16];
		uint64_t rc[16];

		for (uint32_t j = 0; j < n; j++)
			ctx[j] = &w->trace->pkts[i + j];
		if (w->mode == 2) {
			bpfmap_read_lock();
			for (uint32_t j = 0; j < n; j++)
				rc[j] = fn(ctx[j]);
			bpfmap_read_unlock();
		} else {
			bpfmap_rtebpf_run_burst(w->prog, ctx, rc, n, w->mode);
		}
		for (uint32_t j = 0; j < n; j++)
			if (rc[j] != (w->trace->flow_of[i + j] >= 0))
				return (void *)1;
	}
	return NULL;
}

static struct bpfmap_rtebpf_prog *load_flow_count(struct bpfmap *flows, struct bpfmap *stats)
{
	struct bpfmap_rtebpf_map maps[] = { { "stats", stats }, { "flows", flows } };
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte", .ctx_size = sizeof(struct flow_pkt),
			   .log_buf = log_buf, .log_size = sizeof(log_buf));
	struct bpfmap_rtebpf_prog *prog = bpfmap_rtebpf_load_file(FLOW_COUNT_OBJ, maps, 2, &opts);

	if (!prog)
		fail_msg("loading %s: %s", FLOW_COUNT_OBJ, log_buf);
	return prog;
}

static void test_flow_count_threads(void **state)
{
	struct flow_trace trace;
	struct flow_expect expect;
	struct bpfmap *flows, *stats;
	struct bpfmap_rtebpf_prog *prog;
	struct worker w[THREADS];

	(void)state;
	assert_int_equal(flow_trace_make(&trace, 20000, 1500, 7), 0);
	assert_int_equal(flow_expect_make(&trace, THREADS, &expect), 0);
	assert_int_equal(flow_maps_create(&flows, &stats), 0);
	prog = load_flow_count(flows, stats);
	assert_non_null(bpfmap_rtebpf_jit(prog));
	assert_non_null(bpfmap_rtebpf_rte(prog));
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .prog = prog, .trace = &trace, .mode = i % 3 };
		assert_int_equal(pthread_create(&w[i].tid, NULL, run_trace, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		void *bad;

		pthread_join(w[i].tid, &bad);
		assert_null(bad);
	}
	assert_int_equal(flow_expect_check(&trace, &expect, flows, stats), 0);
	/* The flows a C reference finds: both Host: cases occur. */
	assert_true(expect.stats[FLOW_STAT_OTHER] > 0);
	bpfmap_rtebpf_free(prog);
	bpfmap_free(flows);
	bpfmap_free(stats);
	flow_expect_free(&expect);
	flow_trace_free(&trace);
}

/* The C twin (the benchmark's third column) counts the same. */
static void test_flow_count_c_twin(void **state)
{
	struct flow_trace trace;
	struct flow_expect expect;
	struct bpfmap *flows, *stats;

	(void)state;
	assert_int_equal(flow_trace_make(&trace, 5000, 300, 9), 0);
	assert_int_equal(flow_expect_make(&trace, 1, &expect), 0);
	assert_int_equal(flow_maps_create(&flows, &stats), 0);
	bpfmap_read_lock();
	for (uint32_t i = 0; i < trace.n; i++)
		flow_count_c(flows, stats, &trace.pkts[i]);
	bpfmap_read_unlock();
	assert_int_equal(flow_expect_check(&trace, &expect, flows, stats), 0);
	bpfmap_free(flows);
	bpfmap_free(stats);
	flow_expect_free(&expect);
	flow_trace_free(&trace);
}

/* ---- the cases object ---- */

struct case_maps {
	struct bpfmap *small, *pcpu, *other;
	struct bpfmap_rtebpf_map list[3];
};

static void case_maps_create(struct case_maps *m)
{
	m->small = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, 0);
	m->pcpu = must_create(BPFMAP_TYPE_PERCPU_HASH, 4, 8, 16, 0);
	m->other = must_create(BPFMAP_TYPE_HASH, 8, sizeof(struct case_wide), 16, 0);
	m->list[0] = (struct bpfmap_rtebpf_map){ "small", m->small };
	m->list[1] = (struct bpfmap_rtebpf_map){ "pcpu", m->pcpu };
	m->list[2] = (struct bpfmap_rtebpf_map){ "other", m->other };
}

static void case_maps_free(struct case_maps *m)
{
	bpfmap_free(m->small);
	bpfmap_free(m->pcpu);
	bpfmap_free(m->other);
}

static struct bpfmap_rtebpf_prog *load_case(struct case_maps *m, const char *section)
{
	BPFMAP_RTEBPF_OPTS(opts, .section = section, .ctx_size = sizeof(struct case_ctx),
			   .log_buf = log_buf, .log_size = sizeof(log_buf));

	return bpfmap_rtebpf_load_file(CASES_OBJ, m->list, 3, &opts);
}

static void test_helpers_and_kfuncs(void **state)
{
	static const struct {
		const char *s1, *s2;
		uint64_t n, c;
	} strs[] = {
		{ "Hello, World", "hello, world", 64, 'o' },
		{ "abcabc", "bca", 4, 'c' },
		{ "", "", 0, 0 },
		{ "xyz", "zzzzzzzzzzzzzzz", 2, 'q' },
		{ "MiXeD cAsE", "cAsE", 10, 0x80 },
	};
	struct case_maps m;
	struct bpfmap_rtebpf_prog *prog;

	(void)state;
	pin_to(0);
	case_maps_create(&m);
	prog = load_case(&m, "rte/helpers");
	if (!prog)
		fail_msg("%s", log_buf);
	for (size_t t = 0; t < sizeof(strs) / sizeof(strs[0]); t++) {
		/* CPU 0 with the upper half set: the per-CPU lookup's CPU is a
		 * u32, as the kernel's helper's. */
		struct case_ctx c = { .in = { 1ULL << 32, 100000, strs[t].n, strs[t].c } };
		const char *s = c.str, *s2 = c.str2;
		char ch = (char)strs[t].c;
		size_t n = strs[t].n;

		strcpy(c.str, strs[t].s1);
		strcpy(c.str2, strs[t].s2);
		for (int jit = 0; jit <= 1; jit++) {
			void *ctx = &c;
			uint64_t rc;
			uint32_t k = 1;

			bpfmap_delete_elem(m.small, &k);
			memset(c.out, 0x55, sizeof(c.out));
			assert_int_equal(bpfmap_rtebpf_run_burst(prog, &ctx, &rc, 1, jit), 1);
			assert_int_equal(rc, 0);
			assert_int_equal(c.out[0], 0);
			assert_int_equal(c.out[1], -EEXIST);
			assert_int_equal(c.out[2], 7);
			assert_int_equal(c.out[3], 0);
			assert_int_equal(c.out[4], -ENOENT);
			assert_int_equal(c.out[5], 0);
			assert_int_equal(c.out[6], 0);
			assert_int_equal(c.out[7], 7); /* CPU 0's slot, written from CPU 0 */
			assert_int_equal(c.out[8], 0); /* no CPU 100000: ERANGE, NULL */
			assert_int_equal(c.out[9], 0);
			assert_int_equal(c.out[25], 12);
			assert_int_equal(c.out[26], -ENOENT);
			assert_int_equal(c.out[10], bpfmap_strcmp(s, s2));
			assert_int_equal(c.out[11], bpfmap_strcasecmp(s, s2));
			assert_int_equal(c.out[12], bpfmap_strncasecmp(s, s2, n));
			assert_int_equal(c.out[13], bpfmap_strchr(s, ch));
			assert_int_equal(c.out[14], bpfmap_strchrnul(s, ch));
			assert_int_equal(c.out[15], bpfmap_strnchr(s, n, ch));
			assert_int_equal(c.out[16], bpfmap_strrchr(s, (int)strs[t].c));
			assert_int_equal(c.out[17], bpfmap_strlen(s));
			assert_int_equal(c.out[18], bpfmap_strnlen(s, n));
			assert_int_equal(c.out[19], bpfmap_strspn(s, s2));
			assert_int_equal(c.out[20], bpfmap_strcspn(s, s2));
			assert_int_equal(c.out[21], bpfmap_strstr(s, s2));
			assert_int_equal(c.out[22], bpfmap_strnstr(s, s2, n));
			assert_int_equal(c.out[23], bpfmap_strcasestr(s, s2));
			assert_int_equal(c.out[24], bpfmap_strncasestr(s, s2, n));
		}
	}
	bpfmap_rtebpf_free(prog);
	case_maps_free(&m);
	test_unpin();
}

/* The map helpers called by name (extern __ksym functions): bound to the
 * map they receive as calls by number are. */
static void test_helpers_by_name(void **state)
{
	struct case_maps m;
	struct case_ctx c = { 0 };
	struct bpfmap_rtebpf_prog *prog;

	(void)state;
	case_maps_create(&m);
	BPFMAP_RTEBPF_OPTS(opts, .ctx_size = sizeof(struct case_ctx), .log_buf = log_buf,
			   .log_size = sizeof(log_buf));
	prog = bpfmap_rtebpf_load_file(NAMES_OBJ, m.list, 3, &opts);
	if (!prog)
		fail_msg("%s", log_buf);
	assert_int_equal(bpfmap_rtebpf_run(prog, &c), 0);
	assert_int_equal(c.out[0], 0);
	assert_int_equal(c.out[1], 0);
	assert_int_equal(c.out[2], 5);
	assert_int_equal(c.out[3], 22);
	assert_int_equal(c.out[4], 21);
	bpfmap_rtebpf_free(prog);
	case_maps_free(&m);
}

/* Callers who load with DPDK's own rte_bpf_elf_load() use the table as is:
 * with one map the helper slots carry its sizes. */
static void test_syms_with_rte_elf_load(void **state)
{
	struct bpfmap *small = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, 0);
	struct bpfmap_rtebpf_map map = { "small", small };
	struct rte_bpf_prm prm = { .prog_arg = { .type = RTE_BPF_ARG_PTR,
						 .size = sizeof(struct case_ctx) } };
	struct case_ctx c = { .in = { 5 } };
	uint32_t nb, k = 5;
	uint64_t v = 41;
	struct rte_bpf_xsym *syms = bpfmap_rtebpf_syms(&map, 1, &nb);
	struct rte_bpf *bpf;

	(void)state;
	assert_non_null(syms);
	assert_true(nb > 196);
	assert_int_equal(syms[1].type, RTE_BPF_XTYPE_FUNC);
	assert_string_equal(syms[1].name, "bpf_map_lookup_elem");
	assert_int_equal(syms[1].func.ret.size, 8);
	assert_int_equal(syms[1].func.args[1].size, 4);
	assert_int_equal(syms[5].type, RTE_BPF_XTYPE_VAR); /* bpf_ktime_get_ns: none */
	prm.xsym = syms;
	prm.nb_xsym = nb;
	bpf = rte_bpf_elf_load(&prm, CASES_OBJ, "rte/single");
	assert_non_null(bpf);
	assert_int_equal(bpfmap_update_elem(small, &k, &v, BPFMAP_ANY), 0);
	bpfmap_read_lock();
	assert_int_equal(rte_bpf_exec(bpf, &c), 0);
	bpfmap_read_unlock();
	assert_int_equal(bpfmap_lookup_elem(small, &k, &v), 0);
	assert_int_equal(v, 42);
	c.in[0] = 6; /* absent: the program sees NULL */
	bpfmap_read_lock();
	assert_int_equal(rte_bpf_exec(bpf, &c), 1);
	bpfmap_read_unlock();
	rte_bpf_destroy(bpf);
	bpfmap_rtebpf_syms_free(syms);
	bpfmap_free(small);

	/* Bad map lists */
	struct bpfmap_rtebpf_map dup[2] = { { "a", small }, { "a", small } };
	errno = 0;
	assert_null(bpfmap_rtebpf_syms(dup, 2, &nb));
	assert_int_equal(errno, EINVAL);
	assert_null(bpfmap_rtebpf_syms(NULL, 1, &nb));
	assert_null(bpfmap_rtebpf_syms(&map, 1, NULL));
}

/* Each refused program: NULL, errno, and a message holding @why. */
static void expect_refused(struct case_maps *m, const char *section, int err, const char *why)
{
	struct bpfmap_rtebpf_prog *prog;

	errno = 0;
	memset(log_buf, 'X', sizeof(log_buf));
	prog = load_case(m, section);
	if (prog)
		fail_msg("section %s was loaded", section);
	assert_int_equal(errno, err);
	assert_non_null(memchr(log_buf, '\0', sizeof(log_buf)));
	if (!strstr(log_buf, why))
		fail_msg("section %s: \"%s\" not in the message:\n%s", section, why, log_buf);
}

static void test_refusals(void **state)
{
	struct case_maps m;

	(void)state;
	case_maps_create(&m);
	expect_refused(&m, "rte/ktime", EINVAL, "calls helper 5, which is not provided");
	expect_refused(&m, "rte/rodata", EINVAL, "in section .rodata.str1.1: rte_bpf programs "
						 "have no global data");
	expect_refused(&m, "rte/subprog", EINVAL, "a BPF-to-BPF call");
	expect_refused(&m, "rte/badkfunc", EINVAL, "calls \"bpf_strfoo\", which is not provided");
	expect_refused(&m, "rte/ghost", EINVAL,
		       "uses map \"ghost\", which is not among the maps given (small, pcpu, other)");
	expect_refused(&m, "rte/percpu_on_hash", EINVAL, "on map \"small\", which is not per-CPU");
	expect_refused(&m, "rte/ambiguous", EINVAL, "with a map that cannot be told from the code");
	/* The validator's own refusals, with the instruction at fault. */
	expect_refused(&m, "rte/oob", EINVAL, "rte_bpf refused the program");
	expect_refused(&m, "rte/oob", EINVAL, "memory boundary violation at pc: ");
	expect_refused(&m, "rte/oob", EINVAL, "    insn ");
	expect_refused(&m, "rte/loop", EINVAL, "rte_bpf accepts no loops");
	expect_refused(&m, "rte/handle_write", EINVAL, "writes through a map pointer");
	expect_refused(&m, "rte/handle_swap", EINVAL, "other than whole into a stack slot");
	/* Handles reached by partial or straddling fills, by a per-map
	 * helper's name, or as an argument other than a map helper's first. */
	expect_refused(&m, "rte/half_fills", EINVAL,
		       "insn 7 computes with a pointer as the second operand");
	expect_refused(&m, "rte/astride_fill", EINVAL,
		       "insn 9 computes with a pointer as the second operand");
	expect_refused(&m, "rte/helper_by_entry_name", EINVAL,
		       "calls bpf_map_lookup_elem__other with map \"small\"");
	expect_refused(&m, "rte/map_as_value", EINVAL,
		       "to bpf_map_update_elem other than as its first argument");
	expect_refused(&m, "rte/map_to_kfunc", EINVAL, "offset, to the kfunc bpf_strnlen");
	expect_refused(&m, "rte/distance_key", EINVAL,
		       "passes what may be a number as a key or value to bpf_map_lookup_elem");
	expect_refused(&m, "rte/oob", EINVAL, "insn 9: ldxdw r1, [r0 + 8]");
	/* Compares the validator would narrow a pointer by: a value moved
	 * by a number compared with the map, or with the stack and 0. */
	expect_refused(&m, "rte/cmp_with_map", EINVAL,
		       "insn 14 compares what may be a map pointer");
	expect_refused(&m, "rte/cmp_anchor", EINVAL,
		       "insn 14 compares pointers that may be into different objects");
	expect_refused(&m, "rte/nosuch", EINVAL, "no program section \"rte/nosuch\"");
	expect_refused(&m, NULL, EINVAL, "several program sections");
	case_maps_free(&m);
}

/* A program may write into a looked-up value unless the map is
 * BPFMAP_F_RDONLY_PROG: then loading refuses it, as the kernel's verifier
 * does, where the program view could not (bpfmap.h). */
static void test_rdonly_prog_values(void **state)
{
	struct case_maps m;
	struct bpfmap_rtebpf_prog *prog;
	struct case_ctx c = { .in = { 42 } };
	uint32_t k = 0;
	uint64_t v = 7;

	(void)state;
	case_maps_create(&m);
	assert_int_equal(bpfmap_update_elem(m.small, &k, &v, BPFMAP_ANY), 0);
	prog = load_case(&m, "rte/value_write");
	if (!prog)
		fail_msg("%s", log_buf);
	assert_int_equal(bpfmap_rtebpf_run(prog, &c), 0);
	assert_int_equal(c.out[0], 7);
	assert_int_equal(bpfmap_lookup_elem(m.small, &k, &v), 0);
	assert_int_equal(v, 42);
	bpfmap_rtebpf_free(prog);
	bpfmap_free(m.small);
	m.small = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, BPFMAP_F_RDONLY_PROG);
	m.list[0].map = m.small;
	expect_refused(&m, "rte/value_write", EINVAL,
		       "writes into the value of a map that programs may only read");
	/* Updates and deletes of it too, where they answered -EPERM at run
	 * time (an adversarial helper's). */
	expect_refused(&m, "rte/helpers", EINVAL, "on map \"small\", which programs may only read");
	case_maps_free(&m);
}

/*
 * Three ways an adversarial helper's programs passed the loader: a value
 * pointer moved by a product, which rte_bpf's validator bounds wrongly,
 * wrote into another key's value; a write into a value with a spin lock
 * set its lock word, and the next bpfmap_update_elem of that key waited
 * for ever; a lookup in a BPFMAP_F_WRONLY_PROG map loaded and returned
 * NULL, so the program's writes were lost without a word.  All three are
 * refused at load now.
 */
static void test_value_rules(void **state)
{
	struct case_maps m;
	BPFMAP_CREATE_OPTS(locked, .lock_off = 0);
	struct bpfmap_rtebpf_prog *prog;

	(void)state;
	case_maps_create(&m);
	expect_refused(&m, "rte/mul_offset", EINVAL, "moves a pointer by a product");
	prog = load_case(&m, "rte/value_write");
	if (!prog)
		fail_msg("%s", log_buf);
	bpfmap_rtebpf_free(prog);
	bpfmap_free(m.small);
	m.small = bpfmap_create(BPFMAP_TYPE_HASH, "small", 4, 8, 16, &locked);
	assert_non_null(m.small);
	assert_int_equal(bpfmap_get_lock_off(m.small), 0);
	m.list[0].map = m.small;
	expect_refused(&m, "rte/value_write", EINVAL,
		       "writes into the value of a map with a spin lock");
	bpfmap_free(m.small);
	m.small = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, BPFMAP_F_WRONLY_PROG);
	assert_int_equal(bpfmap_get_lock_off(m.small), -ENOENT);
	m.list[0].map = m.small;
	expect_refused(&m, "rte/value_write", EINVAL,
		       "on map \"small\", which programs may only write");
	case_maps_free(&m);
	assert_int_equal(bpfmap_get_lock_off(NULL), -EINVAL);
}

static void test_bad_objects(void **state)
{
	static const char junk[] = "\177ELF but not really an object at all";
	struct bpfmap *small = must_create(BPFMAP_TYPE_HASH, 4, 8, 16, 0);
	struct bpfmap_rtebpf_map map = { "small", small }, unnamed = { "", small };
	BPFMAP_RTEBPF_OPTS(opts, .log_buf = log_buf, .log_size = sizeof(log_buf));
	struct bpfmap_rtebpf_opts small_opts = { .sz = 4 };
	char tiny[8];

	(void)state;
	errno = 0;
	assert_null(bpfmap_rtebpf_load(junk, sizeof(junk), &map, 1, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "not an ELF object"));
	/* An x86-64 ELF file: the test binary itself is not a BPF object. */
	assert_null(bpfmap_rtebpf_load_file("/proc/self/exe", &map, 1, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "not a little-endian 64-bit BPF object"));
	assert_null(bpfmap_rtebpf_load_file("/", &map, 1, &opts));
	assert_int_equal(errno, EISDIR);
	assert_non_null(strstr(log_buf, "Is a directory"));
	/* Not a file: a device, and a FIFO no one writes (opening one
	 * waited for a writer). */
	assert_null(bpfmap_rtebpf_load_file("/dev/zero", &map, 1, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "not a regular file"));
	char fifo[] = "/tmp/bpfmap_rtebpf_fifo_XXXXXX";
	int tmp = mkstemp(fifo);

	assert_true(tmp >= 0);
	close(tmp);
	assert_int_equal(unlink(fifo), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(bpfmap_rtebpf_load_file(fifo, &map, 1, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "not a regular file"));
	unlink(fifo);
	assert_null(bpfmap_rtebpf_load_file("/nonexistent/x.bpf.o", &map, 1, &opts));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(log_buf, "/nonexistent/x.bpf.o"));
	assert_null(bpfmap_rtebpf_load(NULL, 10, &map, 1, &opts));
	assert_int_equal(errno, EINVAL);
	assert_null(bpfmap_rtebpf_load_file(FLOW_COUNT_OBJ, &unnamed, 1, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "distinct name"));
	assert_null(bpfmap_rtebpf_load_file(FLOW_COUNT_OBJ, &map, 1, &small_opts));
	assert_int_equal(errno, EINVAL);
	/* A log too small for the message is cut, and still terminated. */
	opts.log_buf = tiny;
	opts.log_size = sizeof(tiny);
	assert_null(bpfmap_rtebpf_load(junk, sizeof(junk), &map, 1, &opts));
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	/* No log at all */
	assert_null(bpfmap_rtebpf_load(junk, sizeof(junk), &map, 1, NULL));
	assert_int_equal(errno, EINVAL);
	bpfmap_rtebpf_free(NULL);
	assert_null(bpfmap_rtebpf_jit(NULL));
	bpfmap_free(small);
}

static void *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*size = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *size, f), *size);
	fclose(f);
	return buf;
}

/* Found by tests/fuzz/fuzz_rtebpf_load.c: a second relocation section for
 * the same program overflowed the relocation array.  Here the relocations
 * of another program are pointed at "rte/single". */
static void test_two_reloc_sections(void **state)
{
	struct case_maps m;
	size_t size;
	uint8_t *obj = read_file(CASES_OBJ, &size);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)obj;
	Elf64_Shdr *sh = (Elf64_Shdr *)(obj + eh->e_shoff);
	const char *names = (const char *)obj + sh[eh->e_shstrndx].sh_offset;
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte/single", .ctx_size = sizeof(struct case_ctx),
			   .log_buf = log_buf, .log_size = sizeof(log_buf));
	unsigned target = 0, moved = 0;

	(void)state;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, "rte/single"))
			target = i;
	assert_true(target > 0);
	/* One after the program's own, so that its own is read first. */
	for (unsigned i = target + 1; i < eh->e_shnum && !moved; i++)
		if (sh[i].sh_type == SHT_REL && sh[i].sh_info != target &&
		    (sh[sh[i].sh_info].sh_flags & SHF_EXECINSTR)) {
			sh[i].sh_info = target;
			moved = i;
		}
	assert_true(moved > 0);
	case_maps_create(&m);
	errno = 0;
	assert_null(bpfmap_rtebpf_load(obj, size, m.list, 3, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "more than one relocation section"));
	case_maps_free(&m);
	free(obj);
}

/* Section @name of the ELF object @obj, its relocation section in *@rel
 * (NULL: none). */
static Elf64_Shdr *obj_section(uint8_t *obj, const char *name, Elf64_Shdr **rel)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)obj;
	Elf64_Shdr *sh = (Elf64_Shdr *)(obj + eh->e_shoff);
	const char *names = (const char *)obj + sh[eh->e_shstrndx].sh_offset;
	unsigned target = 0;

	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			target = i;
	assert_true(target > 0);
	*rel = NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_REL && sh[i].sh_info == target)
			*rel = &sh[i];
	return &sh[target];
}

/* The relocation of "rte/single"'s map load, in @obj (an adversarial
 * helper's objects, made here): its Elf64_Rel and the instructions. */
static Elf64_Rel *single_map_reloc(uint8_t *obj, struct ebpf_insn **insns)
{
	Elf64_Shdr *rel, *sec = obj_section(obj, "rte/single", &rel);

	assert_non_null(rel);
	*insns = (struct ebpf_insn *)(obj + sec->sh_offset);
	return (Elf64_Rel *)(obj + rel->sh_offset);
}

/* A relocation at the second half of a 64-bit load, whose code byte says
 * 64-bit load too, was applied: it wrote that half and the instruction
 * after it, silently.  And a relocation of a type no BPF code has. */
static void test_bad_relocations(void **state)
{
	struct case_maps m;
	size_t size;
	uint8_t *obj = read_file(CASES_OBJ, &size), *copy = malloc(size);
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte/single", .ctx_size = sizeof(struct case_ctx),
			   .log_buf = log_buf, .log_size = sizeof(log_buf));
	struct ebpf_insn *insns;
	Elf64_Rel *rel;
	uint64_t at;

	(void)state;
	assert_non_null(copy);
	case_maps_create(&m);
	memcpy(copy, obj, size);
	rel = single_map_reloc(copy, &insns);
	at = rel->r_offset / sizeof(*insns);
	assert_int_equal(insns[at].code, BPF_LD | BPF_IMM | EBPF_DW);
	insns[at + 1].code = BPF_LD | BPF_IMM | EBPF_DW;
	rel->r_offset += sizeof(*insns);
	errno = 0;
	assert_null(bpfmap_rtebpf_load(copy, size, m.list, 3, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "second half of a 64-bit load"));

	memcpy(copy, obj, size);
	rel = single_map_reloc(copy, &insns);
	rel->r_info = ELF64_R_INFO(ELF64_R_SYM(rel->r_info), 2 /* R_BPF_64_ABS64 */);
	errno = 0;
	assert_null(bpfmap_rtebpf_load(copy, size, m.list, 3, &opts));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(log_buf, "relocation type 2"));

	/* The object as built loads. */
	struct bpfmap_rtebpf_prog *prog = bpfmap_rtebpf_load(obj, size, m.list, 3, &opts);

	assert_non_null(prog);
	assert_string_equal(log_buf, ""); /* cleared, as the header says */
	bpfmap_rtebpf_free(prog);
	case_maps_free(&m);
	free(copy);
	free(obj);
}

/* rtebpf_cases' rte/helpers (215 instructions) rewritten in @obj as @n
 * diamonds, "if r1 > i goto +1; r0 = i", then moves and an exit, its
 * relocations dropped. */
static void diamonds_in_helpers(uint8_t *obj, unsigned n)
{
	Elf64_Shdr *rel, *sec = obj_section(obj, "rte/helpers", &rel);
	struct ebpf_insn *ins = (struct ebpf_insn *)(obj + sec->sh_offset);
	unsigned count;

	if (rel)
		rel->sh_size = 0;
	count = (unsigned)(sec->sh_size / sizeof(*ins));
	assert_true(count >= 2 * n + 2);
	memset(ins, 0, count * sizeof(*ins));
	for (unsigned i = 0; i + 1 < count; i++)
		ins[i].code = EBPF_ALU64 | EBPF_MOV | BPF_K; /* r0 = 0 */
	for (unsigned i = 0; i < n; i++) {
		ins[2 * i] = (struct ebpf_insn){ .code = BPF_JMP | BPF_JGT | BPF_K, .dst_reg = 1,
						 .off = 1, .imm = (int32_t)i };
		ins[2 * i + 1].imm = (int32_t)i;
	}
	ins[count - 1].code = BPF_JMP | EBPF_EXIT;
}

/* rte_bpf's validator walks every path: an object of 40 diamonds held a
 * load, and every other load behind its lock, for days (an adversarial
 * helper's).  The loader counts the visits first and refuses past 2^28. */
static void test_too_many_paths(void **state)
{
	struct case_maps m;
	size_t size;
	uint8_t *obj = read_file(CASES_OBJ, &size), *copy = malloc(size);
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte/helpers", .log_buf = log_buf,
			   .log_size = sizeof(log_buf));
	struct bpfmap_rtebpf_prog *prog;
	uint64_t arg = 5;

	(void)state;
	assert_non_null(copy);
	case_maps_create(&m);
	memcpy(copy, obj, size);
	diamonds_in_helpers(copy, 40);
	errno = 0;
	assert_null(bpfmap_rtebpf_load(copy, size, m.list, 3, &opts));
	assert_int_equal(errno, E2BIG);
	assert_non_null(strstr(log_buf, "too many paths"));
	memcpy(copy, obj, size);
	diamonds_in_helpers(copy, 23);
	assert_null(bpfmap_rtebpf_load(copy, size, m.list, 3, &opts));
	assert_int_equal(errno, E2BIG);
	/* 10 diamonds: 2^10 paths, validated and run. */
	memcpy(copy, obj, size);
	diamonds_in_helpers(copy, 10);
	prog = bpfmap_rtebpf_load(copy, size, m.list, 3, &opts);
	assert_non_null(prog);
	assert_int_equal(bpfmap_rtebpf_run(prog, (void *)(uintptr_t)arg), 0);
	bpfmap_rtebpf_free(prog);
	case_maps_free(&m);
	free(copy);
	free(obj);
}

/* flow_count built with -mcpu=v3: refused by this rte_bpf's validator for
 * its 32-bit jumps, and the message says how to build it. */
static void test_jmp32_hint(void **state)
{
	struct bpfmap *flows, *stats;
	struct bpfmap_rtebpf_map maps[2];
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte", .ctx_size = sizeof(struct flow_pkt),
			   .log_buf = log_buf, .log_size = sizeof(log_buf));
	struct bpfmap_rtebpf_prog *prog;

	(void)state;
	assert_int_equal(flow_maps_create(&flows, &stats), 0);
	maps[0] = (struct bpfmap_rtebpf_map){ "flows", flows };
	maps[1] = (struct bpfmap_rtebpf_map){ "stats", stats };
	prog = bpfmap_rtebpf_load_file(FLOW_COUNT_V3_OBJ, maps, 2, &opts);
	if (prog) {
		/* A DPDK that knows 32-bit jumps: then it must run. */
		printf("NOTE: this rte_bpf accepts -mcpu=v3\n");
		bpfmap_rtebpf_free(prog);
	} else {
		assert_non_null(strstr(log_buf, "build it with -mcpu=v2"));
	}
	bpfmap_free(flows);
	bpfmap_free(stats);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		test_entry(test_flow_count_threads), test_entry(test_flow_count_c_twin),
		test_entry(test_helpers_and_kfuncs), test_entry(test_helpers_by_name),
		test_entry(test_syms_with_rte_elf_load),
		test_entry(test_refusals),	     test_entry(test_rdonly_prog_values),
		test_entry(test_value_rules),
		test_entry(test_bad_objects),
		test_entry(test_jmp32_hint),	     test_entry(test_two_reloc_sections),
		test_entry(test_bad_relocations),
		test_entry(test_too_many_paths),
	};

	return run_test_group(tests);
}
