// SPDX-License-Identifier: BSD-2-Clause
/*
 * rte-bpf: one BPF program, examples/rte_bpf/flow_count.bpf.c (embedded as
 * built for the kernel), over one synthetic trace, in packets/s:
 *   JIT          its flow_rte entry in DPDK's rte_bpf on bpfmap's maps,
 *                JIT-compiled and called directly, one read-side section
 *                per burst of 32 packets
 *   interpreter  the same in rte_bpf's interpreter (bpfmap_rtebpf_run_burst)
 *   C            flow_count_c(): the same logic written in C on bpfmap's
 *                program view
 *   kernel       its flow_xdp entry in the running kernel, on the kernel's
 *                own LRU_HASH and HASH, with BPF_PROG_TEST_RUN per packet and
 *                a repeat count; the kernel times the repeat loop itself
 *   empty        an empty XDP program run the same way: the test run's own
 *                per-run cost, which "net" takes off the kernel's figure
 * Each column has maps of its own and runs the trace once before timing (the
 * flows are in the tables: a warm trace).  Then, for -w (dropped) and -d
 * seconds, rounds in which every column takes a turn of passes over the
 * trace (turn()); a figure is the median over the rounds, a ratio the median
 * of the rounds' ratios.  bpfmap's passes are timed in the thread's CPU
 * time, as the other benchmarks' (the kernel's clock does not run while it
 * reschedules either).  Afterwards every column's maps must hold exactly
 * what the C reference (flow_expect_make) says its passes leave; anything
 * else fails the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <bpfmap.h>
#include <bpfmap_rtebpf.h>

#include "bench.h"
#include "flow_trace.h"
#include "json.h"
#include "kernel_backend.h"
#include "report_int.h"

/* The embedded objects: flow_count as examples/ builds it, and ours. */
extern const unsigned char bpf_obj_flow_count[], bpf_obj_xdp_empty[];
extern const size_t bpf_obj_flow_count_len, bpf_obj_xdp_empty_len;

#define RB_SEED 42
#define RB_BURST 32     /* packets per read-side section */
/* Runs of each packet per BPF_PROG_TEST_RUN.  A call's first run finds
 * the caches and TLB as the syscall's entry left them (here 680-750 ns net
 * of the empty program, against 420-435 from 16 repeats on: the plateau),
 * so the kernel gets repeats; few enough that each packet of the trace
 * still takes its turn rather than one hot packet standing for all. */
#define RB_REPEAT 16
/* A column's turn in a round: untimed passes for RB_SETTLE_NS (after another
 * column, above all the kernel's test runs, this machine took up to 6 ms to
 * run the JIT at its own pace again), then timed passes for RB_TURN_NS. */
#define RB_SETTLE_NS 5000000ull
#define RB_TURN_NS 10000000ull
#define RB_TURN_MAX 4096 /* timed passes in one turn */
#define RB_MIN_ROUNDS 3
#define RB_MAX_ROUNDS 100000
#define RB_PROGRESS_NS 250000000ull

enum { RB_JIT, RB_INTERP, RB_C, RB_KERN, RB_EMPTY, RB_NCOLS };

struct rb_col {
	const char *label;    /* in the table */
	const char *name;     /* in the JSON */
	const char *backend;  /* "lib" or "kernel" */
	bool ok;
	char why[200];        /* why it did not run, or went wrong */
	double *ns;           /* ns per packet in each measured round */
	uint64_t passes;      /* runs of each packet so far, untimed passes too */
	struct bpfmap *flows, *stats;
	struct bpfmap_rtebpf_prog *prog;
	int fd;               /* kernel: the program */
};

struct rb_kern {
	struct bpf_object *obj, *empty;
	int flows_fd, stats_fd;
	int nsfd[2];        /* the network namespaces holding the programs (-1: none) */
	char hold_why[160]; /* why they are not held ("" when they are) */
};

struct rb_run {
	const struct bench_env *env;
	struct flow_trace t;
	struct flow_expect once; /* what one pass leaves */
	void **ctx;              /* &t.pkts[i], for run_burst */
	uint64_t *rc;
	bpfmap_rtebpf_jit_fn jit;
	struct rb_kern kern;
	struct rb_col col[RB_NCOLS];
	uint32_t repeat;          /* the kernel's timed passes */
	double *turn;             /* the passes of a turn, RB_TURN_MAX */
	int rounds;               /* measured */
	int cpu;                  /* the thread's (-1: not pinned) */
	bool bad;                 /* a column computed something else */
	char kern_why[200];       /* why the kernel's columns did not run at all */
};

static const struct rb_col col_init[RB_NCOLS] = {
	[RB_JIT] = { "rte_bpf JIT", "jit", "lib" },
	[RB_INTERP] = { "rte_bpf interpreter", "interpreter", "lib" },
	[RB_C] = { "C, flow_count_c()", "c", "lib" },
	[RB_KERN] = { "kernel XDP", "kernel", "kernel" },
	[RB_EMPTY] = { "kernel empty XDP", "empty", "kernel" },
};

static bool is_kern(int c)
{
	return c == RB_KERN || c == RB_EMPTY;
}

static void col_fail(struct rb_col *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void col_fail(struct rb_col *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	c->ok = false;
}

/* ---- the passes: each runs the whole trace once and returns ns per packet
 * (NAN when the column failed) ---- */

/* A pass of a bpfmap column counted @counted packets in flows: the C
 * reference's figure, or the column is wrong. */
static double lib_pass_done(struct rb_run *rr, struct rb_col *c, uint64_t counted, uint64_t ns)
{
	c->passes++;
	if (counted != rr->once.stats[FLOW_STAT_FLOW_PACKETS]) {
		col_fail(c, "a pass returned 1 for %llu packets, the C reference counts %llu in "
			    "flows", (unsigned long long)counted,
			 (unsigned long long)rr->once.stats[FLOW_STAT_FLOW_PACKETS]);
		rr->bad = true;
		return NAN;
	}
	return (double)ns / rr->t.n;
}

static double pass_jit(struct rb_run *rr, struct rb_col *c)
{
	const struct flow_trace *t = &rr->t;
	bpfmap_rtebpf_jit_fn fn = rr->jit;
	uint64_t counted = 0, t0 = thread_cpu_ns();

	for (uint32_t i = 0; i < t->n; i += RB_BURST) {
		uint32_t end = t->n - i < RB_BURST ? t->n : i + RB_BURST;

		bpfmap_read_lock();
		for (uint32_t j = i; j < end; j++)
			counted += fn(&t->pkts[j]);
		bpfmap_read_unlock();
	}
	return lib_pass_done(rr, c, counted, thread_cpu_ns() - t0);
}

static double pass_interp(struct rb_run *rr, struct rb_col *c)
{
	uint32_t n = rr->t.n;
	uint64_t counted = 0, t0 = thread_cpu_ns(), ns;

	for (uint32_t i = 0; i < n; i += RB_BURST)
		bpfmap_rtebpf_run_burst(c->prog, &rr->ctx[i], &rr->rc[i],
					n - i < RB_BURST ? n - i : RB_BURST, 0);
	ns = thread_cpu_ns() - t0;
	for (uint32_t i = 0; i < n; i++)
		counted += rr->rc[i];
	return lib_pass_done(rr, c, counted, ns);
}

static double pass_c(struct rb_run *rr, struct rb_col *c)
{
	const struct flow_trace *t = &rr->t;
	uint64_t counted = 0, t0 = thread_cpu_ns();

	for (uint32_t i = 0; i < t->n; i += RB_BURST) {
		uint32_t end = t->n - i < RB_BURST ? t->n : i + RB_BURST;

		bpfmap_read_lock();
		for (uint32_t j = i; j < end; j++)
			counted += (uint64_t)flow_count_c(c->flows, c->stats, &t->pkts[j]);
		bpfmap_read_unlock();
	}
	return lib_pass_done(rr, c, counted, thread_cpu_ns() - t0);
}

/* Every packet through BPF_PROG_TEST_RUN, @repeat runs each: the mean of
 * the kernel's per-run means (whole ns, rounded down by the kernel). */
static double pass_kern(struct rb_run *rr, struct rb_col *c, uint32_t repeat)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < rr->t.n; i++) {
		const struct flow_pkt *p = &rr->t.pkts[i];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->data, .data_size_in = p->len,
			    .repeat = repeat);

		if (bpf_prog_test_run_opts(c->fd, &o)) {
			col_fail(c, "BPF_PROG_TEST_RUN of packet %u: %s", i, strerror(errno));
			return NAN;
		}
		if (o.retval != XDP_PASS) {
			col_fail(c, "packet %u: the program returned %u, not XDP_PASS", i,
				 o.retval);
			rr->bad = true;
			return NAN;
		}
		sum += o.duration;
	}
	c->passes += repeat;
	return (double)sum / rr->t.n;
}

/* One pass of column @col; @untimed: the kernel runs each packet once. */
static double pass(struct rb_run *rr, int col, bool untimed)
{
	struct rb_col *c = &rr->col[col];

	switch (col) {
	case RB_JIT:
		return pass_jit(rr, c);
	case RB_INTERP:
		return pass_interp(rr, c);
	case RB_C:
		return pass_c(rr, c);
	default:
		return pass_kern(rr, c, untimed ? 1 : rr->repeat);
	}
}

/* ---- setup ---- */

static int trace_setup(struct rb_run *rr, uint32_t packets, uint32_t flows)
{
	if (flow_trace_make(&rr->t, packets, flows, RB_SEED) ||
	    flow_expect_make(&rr->t, 1, &rr->once))
		return -1;
	rr->ctx = calloc(packets, sizeof(*rr->ctx));
	rr->rc = calloc(packets, sizeof(*rr->rc));
	if (!rr->ctx || !rr->rc)
		return -1;
	for (uint32_t i = 0; i < packets; i++)
		rr->ctx[i] = &rr->t.pkts[i];
	return 0;
}

/* flow_rte, from the same embedded object as the kernel's, onto @c's maps. */
static int rte_load(struct rb_col *c)
{
	struct bpfmap_rtebpf_map maps[] = { { "flows", c->flows }, { "stats", c->stats } };
	char log[2048] = "";
	BPFMAP_RTEBPF_OPTS(opts, .section = "rte", .ctx_size = sizeof(struct flow_pkt),
			   .log_buf = log, .log_size = sizeof(log));

	c->prog = bpfmap_rtebpf_load(bpf_obj_flow_count, bpf_obj_flow_count_len, maps, 2, &opts);
	if (c->prog)
		return 0;
	col_fail(c, "bpfmap_rtebpf_load: %s: %s", strerror(errno), log);
	return -1;
}

/* A bpfmap column's maps, and for rte_bpf its program loaded onto them. */
static void lib_setup(struct rb_run *rr, int col)
{
	struct rb_col *c = &rr->col[col];
	int err = flow_maps_create(&c->flows, &c->stats);

	if (err) {
		col_fail(c, "flow_maps_create: %s", strerror(-err));
		return;
	}
	if (col == RB_C)
		return;
	if (rte_load(c)) {
		rr->bad = true;
		return;
	}
	if (col == RB_JIT) {
		rr->jit = bpfmap_rtebpf_jit(c->prog);
		if (!rr->jit)
			col_fail(c, "rte_bpf has no JIT for this program or CPU");
	}
}

/* Whether the kernel has the kfunc flow_count calls; @why says when not. */
static bool kernel_has_strnstr(char *why, size_t len)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool ok;

	if (!vmlinux) {
		snprintf(why, len, "no kernel BTF (/sys/kernel/btf/vmlinux): %s", strerror(errno));
		return false;
	}
	ok = btf__find_by_name_kind(vmlinux, "bpf_strnstr", BTF_KIND_FUNC) >= 0;
	btf__free(vmlinux);
	if (!ok)
		snprintf(why, len, "the kernel lacks the kfunc bpf_strnstr (string kfuncs came "
				   "with Linux 6.17)");
	return ok;
}

/* Open and load an embedded object, but not its programs in SEC(@skip). */
static struct bpf_object *kern_load(const unsigned char *data, size_t len, const char *skip,
				    char *why, size_t wlen)
{
	struct bpf_object *obj = bpf_object__open_mem(data, len, NULL);
	struct bpf_program *p;
	int err;

	if (!obj) {
		snprintf(why, wlen, "cannot open the BPF object: %s", strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(p, obj)
		if (skip && !strcmp(bpf_program__section_name(p), skip))
			bpf_program__set_autoload(p, false);
	err = bpf_object__load(obj);
	if (!err)
		return obj;
	if (err == -EPERM || err == -EACCES)
		snprintf(why, wlen, "BPF not permitted here: loading a program failed with %s "
				    "(needs root, or CAP_BPF and CAP_NET_ADMIN)", strerror(-err));
	else
		snprintf(why, wlen, "load: %s%s%s", strerror(-err),
			 kbpf_libbpf_message()[0] ? " -- " : "", kbpf_libbpf_message());
	bpf_object__close(obj);
	return NULL;
}

static int prog_fd(struct bpf_object *obj, const char *name, char *why, size_t len)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);
	int fd = p ? bpf_program__fd(p) : -1;

	if (fd < 0)
		snprintf(why, len, "no program %s in the object", name);
	return fd;
}

/* The kernel's stats slots start at zero, as flow_maps_create() leaves
 * bpfmap's: the program only adds to slots that exist. */
static int kern_stats_zero(int fd, char *why, size_t len)
{
	uint64_t zero = 0;

	for (uint32_t s = 0; s < FLOW_STAT_NR; s++)
		if (bpf_map_update_elem(fd, &s, &zero, BPF_ANY)) {
			snprintf(why, len, "stats slot %u: %s", s, strerror(errno));
			return -1;
		}
	return 0;
}

static int kern_setup_objs(struct rb_run *rr, char *why, size_t len)
{
	struct rb_kern *k = &rr->kern;

	if (!kernel_has_strnstr(why, len))
		return -1;
	kbpf_quiet_libbpf();
	k->obj = kern_load(bpf_obj_flow_count, bpf_obj_flow_count_len, "rte", why, len);
	if (!k->obj)
		return -1;
	k->empty = kern_load(bpf_obj_xdp_empty, bpf_obj_xdp_empty_len, NULL, why, len);
	if (!k->empty)
		return -1;
	rr->col[RB_KERN].fd = prog_fd(k->obj, "flow_xdp", why, len);
	rr->col[RB_EMPTY].fd = prog_fd(k->empty, "xdp_empty", why, len);
	k->flows_fd = bpf_object__find_map_fd_by_name(k->obj, "flows");
	k->stats_fd = bpf_object__find_map_fd_by_name(k->obj, "stats");
	if (rr->col[RB_KERN].fd < 0 || rr->col[RB_EMPTY].fd < 0)
		return -1;
	if (k->flows_fd < 0 || k->stats_fd < 0) {
		snprintf(why, len, "no flows or stats map in the object");
		return -1;
	}
	return kern_stats_zero(k->stats_fd, why, len);
}

/*
 * A test run with repeat > 1 registers its XDP program with the kernel's
 * XDP dispatcher for the length of the call, and each change of the
 * dispatcher waits for an RCU grace period: 8-20 ms a call here, minutes for
 * a trace.  A program attached to a device stays registered, and then the
 * test runs change nothing.  So each program is attached (generic XDP) to
 * the loopback device of a network namespace of its own, which is down and
 * which nothing uses: no packet ever reaches the programs but the test
 * runs'.  A thread makes the namespaces, so the process stays in its own;
 * an open fd keeps each alive until rb_teardown() closes it, and with it
 * the attachment.
 */
struct rb_hold_arg {
	int prog_fd[2];
	int nsfd[2];
	char why[160];
};

static int hold_one(struct rb_hold_arg *h, int i)
{
	unsigned int lo;
	int err;

	if (unshare(CLONE_NEWNET)) {
		snprintf(h->why, sizeof(h->why), "unshare(CLONE_NEWNET): %s", strerror(errno));
		return -1;
	}
	lo = if_nametoindex("lo");
	err = lo ? bpf_xdp_attach((int)lo, h->prog_fd[i], XDP_FLAGS_SKB_MODE, NULL) : -errno;
	if (err) {
		snprintf(h->why, sizeof(h->why), "attaching to a namespace's lo: %s",
			 strerror(-err));
		return -1;
	}
	h->nsfd[i] = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (h->nsfd[i] < 0) {
		snprintf(h->why, sizeof(h->why), "/proc/thread-self/ns/net: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void *hold_thread(void *arg)
{
	struct rb_hold_arg *h = arg;

	for (int i = 0; i < 2 && !hold_one(h, i); i++)
		;
	return NULL;
}

/* Hold both programs; without that, the kernel's passes run each packet
 * once per call (rr->repeat 1), and the header says why. */
static void kern_hold(struct rb_run *rr)
{
	struct rb_hold_arg h = { { rr->col[RB_KERN].fd, rr->col[RB_EMPTY].fd }, { -1, -1 }, "" };
	pthread_t tid;
	int err = pthread_create(&tid, NULL, hold_thread, &h);

	if (err)
		snprintf(h.why, sizeof(h.why), "pthread_create: %s", strerror(err));
	else
		pthread_join(tid, NULL);
	rr->kern.nsfd[0] = h.nsfd[0];
	rr->kern.nsfd[1] = h.nsfd[1];
	snprintf(rr->kern.hold_why, sizeof(rr->kern.hold_why), "%s", h.why);
	if (h.why[0])
		rr->repeat = 1;
}

static void kern_setup(struct rb_run *rr)
{
	char *why = rr->kern_why;

	if (!kern_setup_objs(rr, why, sizeof(rr->kern_why))) {
		kern_hold(rr);
		return;
	}
	col_fail(&rr->col[RB_KERN], "%s", why);
	col_fail(&rr->col[RB_EMPTY], "%s", why);
}

static int rb_setup(struct rb_run *rr, const struct bench_env *env, uint32_t packets,
		    uint32_t flows)
{
	memset(rr, 0, sizeof(*rr));
	rr->env = env;
	rr->repeat = RB_REPEAT;
	rr->kern.flows_fd = rr->kern.stats_fd = -1;
	rr->kern.nsfd[0] = rr->kern.nsfd[1] = -1;
	for (int i = 0; i < RB_NCOLS; i++) {
		rr->col[i] = col_init[i];
		rr->col[i].fd = -1;
		rr->col[i].ok = env->backends & (is_kern(i) ? BACKEND_KERNEL : BACKEND_LIB);
		if (!rr->col[i].ok)
			snprintf(rr->col[i].why, sizeof(rr->col[i].why), "not run (--backend)");
	}
	rr->turn = calloc(RB_TURN_MAX, sizeof(double));
	if (!rr->turn || trace_setup(rr, packets, flows))
		return -1;
	for (int i = 0; i < RB_NCOLS; i++) {
		rr->col[i].ns = calloc(RB_MAX_ROUNDS, sizeof(double));
		if (!rr->col[i].ns)
			return -1;
	}
	for (int i = RB_JIT; i <= RB_C; i++)
		if (rr->col[i].ok)
			lib_setup(rr, i);
	if (rr->col[RB_KERN].ok)
		kern_setup(rr);
	else
		snprintf(rr->kern_why, sizeof(rr->kern_why), "not run (--backend lib)");
	return 0;
}

static void rb_teardown(struct rb_run *rr)
{
	for (int i = 0; i < RB_NCOLS; i++) {
		struct rb_col *c = &rr->col[i];

		bpfmap_rtebpf_free(c->prog);
		bpfmap_free(c->flows);
		bpfmap_free(c->stats);
		free(c->ns);
	}
	for (int i = 0; i < 2; i++)
		if (rr->kern.nsfd[i] >= 0)
			close(rr->kern.nsfd[i]);
	bpf_object__close(rr->kern.obj);
	bpf_object__close(rr->kern.empty);
	free(rr->turn);
	free(rr->ctx);
	free(rr->rc);
	flow_expect_free(&rr->once);
	flow_trace_free(&rr->t);
}

/* ---- the rounds ---- */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* The median of @n figures (sorts a copy); NAN when none. */
static double median(const double *v, int n)
{
	double *s;
	double m;

	if (n <= 0)
		return NAN;
	s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static void show_progress(const struct rb_run *rr, bool warm, uint64_t now, uint64_t end)
{
	fprintf(stderr, "\r\033[K[rte-bpf] %s, round %d, %.1f s left",
		warm ? "warm-up" : "measuring", rr->rounds + 1,
		(double)(end > now ? end - now : 0) / 1e9);
	fflush(stderr);
}

/* Every column over the trace once, untimed: the flows go in. */
static void first_pass(struct rb_run *rr)
{
	for (int i = 0; i < RB_NCOLS; i++)
		if (rr->col[i].ok)
			(void)pass(rr, i, true);
}

/* Column @col's turn: passes untimed for RB_SETTLE_NS, then timed for
 * RB_TURN_NS (at least one each); the median of the timed ones, ns per
 * packet, or NAN when the column failed. */
static double turn(struct rb_run *rr, int col)
{
	const struct rb_col *c = &rr->col[col];
	uint64_t t0 = now_ns();
	int n = 0;

	do
		(void)pass(rr, col, true);
	while (c->ok && now_ns() - t0 < RB_SETTLE_NS);
	t0 = now_ns();
	while (c->ok && n < RB_TURN_MAX) {
		double ns = pass(rr, col, false);

		if (!c->ok)
			break;
		rr->turn[n++] = ns;
		if (now_ns() - t0 >= RB_TURN_NS)
			break;
	}
	return c->ok ? median(rr->turn, n) : NAN;
}

static void measure(struct rb_run *rr)
{
	const struct bench_env *env = rr->env;
	uint64_t t_warm = now_ns() + (uint64_t)(env->warmup_s * 1e9), shown = 0;
	uint64_t t_end = t_warm + (uint64_t)(env->duration_s * 1e9);
	bool warm = env->warmup_s > 0;

	first_pass(rr);
	for (;;) {
		uint64_t t = now_ns();

		if (warm && t >= t_warm) {
			warm = false;
			t_end = t + (uint64_t)(env->duration_s * 1e9);
		}
		if (!warm && ((t >= t_end && rr->rounds >= RB_MIN_ROUNDS) ||
			      rr->rounds == RB_MAX_ROUNDS))
			break;
		if (env->progress && t - shown >= RB_PROGRESS_NS) {
			show_progress(rr, warm, t, warm ? t_warm : t_end);
			shown = t;
		}
		/* Start each round at another column: none always runs first. */
		for (int j = 0; j < RB_NCOLS; j++) {
			int i = (j + rr->rounds) % RB_NCOLS;
			struct rb_col *c = &rr->col[i];
			double ns;

			if (!c->ok)
				continue;
			ns = turn(rr, i);
			if (!warm && c->ok)
				c->ns[rr->rounds] = ns;
		}
		if (!warm)
			rr->rounds++;
	}
	if (env->progress)
		fprintf(stderr, "\r\033[K");
}

/* ---- the checks ---- */

/* A bpfmap column's maps against the reference for its passes. */
static void lib_check(struct rb_run *rr, struct rb_col *c)
{
	struct flow_expect e;
	uint64_t v[FLOW_STAT_NR] = { 0 };

	if (!c->ok)
		return;
	if (flow_expect_make(&rr->t, (uint32_t)c->passes, &e)) {
		col_fail(c, "out of memory for the check");
		return;
	}
	for (uint32_t s = 0; s < FLOW_STAT_NR; s++)
		bpfmap_lookup_elem(c->stats, &s, &v[s]);
	if (v[FLOW_STAT_FLOW_PACKETS] + v[FLOW_STAT_OTHER] != (uint64_t)rr->t.n * c->passes)
		col_fail(c, "stats count %llu packets, %llu were run",
			 (unsigned long long)(v[FLOW_STAT_FLOW_PACKETS] + v[FLOW_STAT_OTHER]),
			 (unsigned long long)rr->t.n * c->passes);
	else if (flow_expect_check(&rr->t, &e, c->flows, c->stats))
		col_fail(c, "its maps differ from the C reference (above)");
	flow_expect_free(&e);
	rr->bad |= !c->ok;
}

/* The kernel's flows map against the reference: a line in @why at the
 * first difference. */
static int kern_check_flows(struct rb_run *rr, const struct flow_expect *e, char *why, size_t len)
{
	uint32_t present = 0;
	struct flow_key k, next;
	const void *cur = NULL;

	for (uint32_t f = 0; f < rr->t.nr_flows; f++) {
		struct flow_val v = { 0 };
		int err = bpf_map_lookup_elem(rr->kern.flows_fd, &rr->t.keys[f], &v);

		if (!e->flows[f].packets && err)
			continue;
		if (err || memcmp(&v, &e->flows[f], sizeof(v))) {
			snprintf(why, len, "flow %u: %s, packets %llu bytes %llu host %llu; "
					   "expected %llu %llu %llu", f,
				 err ? strerror(errno) : "found",
				 (unsigned long long)v.packets, (unsigned long long)v.bytes,
				 (unsigned long long)v.host_hits,
				 (unsigned long long)e->flows[f].packets,
				 (unsigned long long)e->flows[f].bytes,
				 (unsigned long long)e->flows[f].host_hits);
			return -1;
		}
	}
	while (!bpf_map_get_next_key(rr->kern.flows_fd, cur, &next)) {
		k = next;
		cur = &k;
		present++;
	}
	if (present != e->stats[FLOW_STAT_NEW_FLOWS]) {
		snprintf(why, len, "flows holds %u keys, expected %llu", present,
			 (unsigned long long)e->stats[FLOW_STAT_NEW_FLOWS]);
		return -1;
	}
	return 0;
}

static int kern_check_stats(struct rb_run *rr, const struct flow_expect *e, char *why, size_t len)
{
	for (uint32_t s = 0; s < FLOW_STAT_NR; s++) {
		uint64_t v = 0;

		if (bpf_map_lookup_elem(rr->kern.stats_fd, &s, &v) || v != e->stats[s]) {
			snprintf(why, len, "stats[%u] = %llu, expected %llu", s,
				 (unsigned long long)v, (unsigned long long)e->stats[s]);
			return -1;
		}
	}
	return 0;
}

/* The kernel ran every packet c->passes times: its maps must say so too,
 * flow for flow, as bpfmap's do. */
static void kern_check(struct rb_run *rr, struct rb_col *c)
{
	struct flow_expect e;
	char why[200];

	if (!c->ok)
		return;
	if (flow_expect_make(&rr->t, (uint32_t)c->passes, &e)) {
		col_fail(c, "out of memory for the check");
		return;
	}
	if (kern_check_flows(rr, &e, why, sizeof(why)) ||
	    kern_check_stats(rr, &e, why, sizeof(why))) {
		col_fail(c, "its maps differ from the C reference: %s", why);
		rr->bad = true;
	}
	flow_expect_free(&e);
}

/* ---- figures ---- */

/* What one column's rounds come to. */
struct rb_fig {
	double ns;              /* median ns per packet */
	double vs_jit;          /* the median over the rounds of ns / JIT's ns */
	double vs_lo, vs_hi;    /* their range */
};

/* Per round: @col's ns per packet (the kernel's net of the empty program's
 * when @net) over the JIT's; their median and range. */
static struct rb_fig figure(const struct rb_run *rr, int col, bool net)
{
	const struct rb_col *c = &rr->col[col], *j = &rr->col[RB_JIT], *e = &rr->col[RB_EMPTY];
	struct rb_fig f = { NAN, NAN, NAN, NAN };
	double *v = calloc((size_t)rr->rounds + 1, sizeof(double));
	double *r = calloc((size_t)rr->rounds + 1, sizeof(double));
	int n = 0;

	if (!v || !r || !c->ok || (net && !e->ok))
		goto out;
	for (int i = 0; i < rr->rounds; i++) {
		v[i] = c->ns[i] - (net ? e->ns[i] : 0);
		if (!j->ok)
			continue;
		r[n] = v[i] / j->ns[i];
		if (!(f.vs_lo <= r[n]))
			f.vs_lo = r[n];
		if (!(f.vs_hi >= r[n]))
			f.vs_hi = r[n];
		n++;
	}
	f.ns = median(v, rr->rounds);
	f.vs_jit = median(r, n);
out:
	free(v);
	free(r);
	return f;
}

/* ---- output ---- */

struct trace_desc {
	double mean_len;
	uint32_t min_len, max_len;
	uint32_t to_80, host; /* TCP packets to port 80; of them with "Host: " */
};

static void trace_describe(const struct flow_trace *t, struct trace_desc *d)
{
	uint64_t bytes = 0;

	memset(d, 0, sizeof(*d));
	d->min_len = UINT32_MAX;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct flow_pkt *p = &t->pkts[i];
		struct flow_key k;
		int host;

		bytes += p->len;
		d->min_len = p->len < d->min_len ? p->len : d->min_len;
		d->max_len = p->len > d->max_len ? p->len : d->max_len;
		if (flow_ref_parse(p->data, p->len, &k, &host) && k.proto == 6 &&
		    k.dport == (80 << 8)) {
			d->to_80++;
			d->host += host != 0;
		}
	}
	d->mean_len = (double)bytes / t->n;
}

/* How the kernel's passes ran. */
static void print_kernel_how(FILE *f, const struct rb_run *rr)
{
	if (!rr->col[RB_KERN].ok && rr->kern_why[0]) {
		fprintf(f, "  kernel: not measured: %s\n\n", rr->kern_why);
		return;
	}
	fprintf(f, "  kernel: BPF_PROG_TEST_RUN of each packet's frame, repeat %u (the kernel's "
		   "mean per run, whole ns),\n", rr->repeat);
	if (rr->kern.hold_why[0])
		fprintf(f, "  not %u: the programs could not be held in the XDP dispatcher (%s);\n",
			RB_REPEAT, rr->kern.hold_why);
	else if (rr->col[RB_KERN].ok)
		fprintf(f, "  the programs held in the XDP dispatcher (each attached to the lo "
			   "of a network namespace of its own);\n");
	fprintf(f, "  empty: an empty XDP program run the same way (the test run's own cost); "
		   "net = kernel - empty.\n\n");
}

static void print_head(const struct rb_run *rr, const char *name)
{
	const struct bench_env *env = rr->env;
	const struct flow_trace *t = &rr->t;
	char where[32] = "not pinned";
	struct trace_desc d;
	FILE *f = env->out;

	trace_describe(t, &d);
	if (rr->cpu >= 0)
		snprintf(where, sizeof(where), "on CPU %d", rr->cpu);
	fprintf(f, "%s: examples/rte_bpf/flow_count.bpf.c, one object: flow_rte in DPDK's rte_bpf "
		   "on bpfmap's maps, flow_xdp in the\nkernel on its own (flows: LRU_HASH of %u, "
		   "stats: HASH); packets/s, higher is better.\n", name, FLOW_MAX_ENTRIES);
	fprintf(f, "  trace: %u packets over %u flows, %u-%u B (mean %.0f); %.1f%% IPv4 TCP/UDP, "
		   "%u TCP packets to port 80\n  searched for \"Host: \" (%u have it); warm: each "
		   "column ran it once first, inserting the flows.\n",
		t->n, t->nr_flows, d.min_len, d.max_len, d.mean_len,
		100.0 * (double)rr->once.stats[FLOW_STAT_FLOW_PACKETS] / t->n, d.to_80, d.host);
	fprintf(f, "  %d rounds (-w %g dropped, -d %g), one thread %s%s.  In a round each "
		   "column takes a turn:\n  passes over the whole trace, untimed for %.0f ms, then "
		   "timed for %.0f ms; a turn's figure is the median of\n  its timed passes, a "
		   "column's the median of its turns, a ratio the median of the rounds' ratios.\n",
		rr->rounds, env->warmup_s, env->duration_s, where,
		env->producers > 1 ? " (-p ignored)" : "", RB_SETTLE_NS / 1e6, RB_TURN_NS / 1e6);
	fprintf(f, "  bpfmap: thread CPU time around each pass; JIT and C: one bpfmap_read_lock() "
		   "section per %d packets.\n", RB_BURST);
	print_kernel_how(f, rr);
	fprintf(f, "  %-34s %9s %10s %13s  %s\n", "", "ns/pkt", "M pkts/s", "JIT faster",
		"counters");
}

/* The check's outcome, on the row of the figure it vouches for. */
static void print_counters(FILE *f, const struct rb_run *rr, int col, bool raw)
{
	const struct rb_col *c = &rr->col[col];

	if (col == RB_EMPTY || raw)
		fprintf(f, "-\n");
	else if (c->ok)
		fprintf(f, "as the C reference, %llu x %u packets\n", (unsigned long long)c->passes,
			rr->t.n);
	else
		fprintf(f, "-\n");
}

static void print_row(FILE *f, const struct rb_run *rr, const char *label, int col,
		      const struct rb_fig *g, bool raw)
{
	const struct rb_col *c = &rr->col[col];

	fprintf(f, "  %-34s", label);
	if (!c->ok || !isfinite(g->ns)) {
		fprintf(f, " %9s %10s %13s  %s\n", "-", "-", "-",
			is_kern(col) && rr->kern_why[0] ? "(above)" : c->why);
		return;
	}
	fprintf(f, " %9.1f %10.2f", g->ns, 1e3 / g->ns);
	if (col == RB_EMPTY || !isfinite(g->vs_jit))
		fprintf(f, " %13s  ", "-");
	else
		fprintf(f, " %12.2fx  ", g->vs_jit);
	print_counters(f, rr, col, raw);
}

static void print_verdict(FILE *f, const struct rb_run *rr, const struct rb_fig *net)
{
	if (!isfinite(net->vs_jit)) {
		fprintf(f, "\n  rte_bpf JIT / kernel XDP: not measured (%s)\n",
			!rr->col[RB_JIT].ok ? rr->col[RB_JIT].why
					    : "the kernel's side did not run");
		return;
	}
	fprintf(f, "\n  rte_bpf JIT / kernel XDP (net), packets/s: %.2fx (rounds %.2f-%.2fx); "
		   "target >= 3.0x: %s\n", net->vs_jit, net->vs_lo, net->vs_hi,
		net->vs_jit >= 3.0 ? "met" : "NOT MET");
}

static void json_col(const struct rb_run *rr, int col, const struct rb_fig *g,
		     const struct rb_fig *raw, const struct rb_fig *empty)
{
	const struct rb_col *c = &rr->col[col];
	struct jw w;

	jw_begin(&w, stdout);
	jw_str(&w, "bench", "rte-bpf");
	jw_str(&w, "backend", c->backend);
	jw_str(&w, "column", c->name);
	jw_str(&w, "program", is_kern(col) ? (col == RB_KERN ? "flow_xdp" : "xdp_empty")
					   : col == RB_C ? "flow_count_c" : "flow_rte");
	jw_u64(&w, "packets", rr->t.n);
	jw_u64(&w, "flows", rr->t.nr_flows);
	jw_u64(&w, "producers", 1);
	jw_u64(&w, "rounds", (uint64_t)rr->rounds);
	if (!c->ok || !isfinite(g->ns)) {
		jw_str(&w, "error", c->why[0] ? c->why : "not run");
		jw_end(&w);
		return;
	}
	jw_num(&w, "ns_per_pkt", g->ns);
	jw_num(&w, "mpps", 1e3 / g->ns);
	jw_u64(&w, "passes", c->passes);
	if (col == RB_KERN) {
		jw_u64(&w, "repeat", rr->repeat);
		jw_bool(&w, "dispatcher_held", !rr->kern.hold_why[0]);
		jw_num(&w, "ns_raw", raw->ns);
		jw_num(&w, "ns_overhead", empty->ns);
		jw_num(&w, "jit_ratio_raw", raw->vs_jit);
	}
	if (col != RB_EMPTY) {
		jw_num(&w, "jit_ratio", g->vs_jit);
		jw_num(&w, "jit_ratio_min", g->vs_lo);
		jw_num(&w, "jit_ratio_max", g->vs_hi);
	}
	jw_end(&w);
}

static void print_table(const struct rb_run *rr, const char *name)
{
	FILE *f = rr->env->out;
	struct rb_fig g[RB_NCOLS], raw = figure(rr, RB_KERN, false);

	for (int i = 0; i < RB_NCOLS; i++)
		g[i] = figure(rr, i, i == RB_KERN);
	print_head(rr, name);
	print_row(f, rr, "rte_bpf JIT", RB_JIT, &g[RB_JIT], false);
	print_row(f, rr, "rte_bpf interpreter", RB_INTERP, &g[RB_INTERP], false);
	print_row(f, rr, "C, flow_count_c()", RB_C, &g[RB_C], false);
	print_row(f, rr, "kernel XDP, net of the empty run", RB_KERN, &g[RB_KERN], false);
	print_row(f, rr, "kernel XDP, raw", RB_KERN, &raw, true);
	print_row(f, rr, "kernel empty XDP (test-run cost)", RB_EMPTY, &g[RB_EMPTY], false);
	print_verdict(f, rr, &g[RB_KERN]);
	if (rr->bad)
		fprintf(f, "  FAILED: a column's results differ from the C reference "
			   "(see above)\n");
	fflush(f);
	for (int i = 0; rr->env->json && i < RB_NCOLS; i++)
		if (rr->env->backends & (is_kern(i) ? BACKEND_KERNEL : BACKEND_LIB))
			json_col(rr, i, &g[i], &raw, &g[RB_EMPTY]);
}

/* ---- entry points ---- */

/* The thread on -a's / --prod-affinity's first CPU, else CPU 0; the mask it
 * had goes back into @old. */
static int pin(const struct bench_env *env, cpu_set_t *old)
{
	int cpu = env->nr_prod_cpus ? env->prod_cpus[0] : 0, err;

	CPU_ZERO(old);
	if (sched_getaffinity(0, sizeof(*old), old))
		CPU_ZERO(old);
	err = bench_pin_self(cpu);
	if (err)
		fprintf(stderr, "rte-bpf: cannot pin to CPU %d: %s\n", cpu, strerror(-err));
	return err ? -1 : cpu;
}

static void unpin(const cpu_set_t *old)
{
	if (CPU_COUNT(old))
		sched_setaffinity(0, sizeof(*old), old);
}

/* Setup, the rounds, the checks: 0, or -1 when setup ran out of memory. */
static int rb_measure(struct rb_run *rr, const struct bench_env *env, uint32_t packets,
		      uint32_t flows)
{
	cpu_set_t old;
	int cpu = pin(env, &old), ret;

	ret = rb_setup(rr, env, packets, flows);
	rr->cpu = cpu;
	if (!ret) {
		measure(rr);
		for (int i = RB_JIT; i <= RB_C; i++)
			lib_check(rr, &rr->col[i]);
		kern_check(rr, &rr->col[RB_KERN]);
	}
	unpin(&old);
	return ret;
}

int rtebpf_measure(const struct bench_env *env, struct rtebpf_figs *out)
{
	struct rb_run *rr = malloc(sizeof(*rr));
	struct rb_fig jit, kern;
	int ret = -1;

	*out = (struct rtebpf_figs){ .jit_mpps = NAN, .kern_mpps = NAN };
	if (!rr || rb_measure(rr, env, RTEBPF_PACKETS, RTEBPF_FLOWS)) {
		snprintf(out->why_lib, sizeof(out->why_lib), "out of memory");
		goto done;
	}
	jit = figure(rr, RB_JIT, false);
	kern = figure(rr, RB_KERN, true);
	out->jit_mpps = 1e3 / jit.ns;
	out->kern_mpps = 1e3 / kern.ns;
	snprintf(out->why_lib, sizeof(out->why_lib), "%s", rr->col[RB_JIT].why);
	snprintf(out->why_kern, sizeof(out->why_kern), "%s", rr->col[RB_KERN].why);
	for (int i = 0; i < RB_NCOLS && rr->bad; i++)
		if (!rr->col[i].ok && rr->col[i].why[0])
			snprintf(out->why_lib, sizeof(out->why_lib), "%s: %s", rr->col[i].label,
				 rr->col[i].why);
	ret = rr->bad ? -1 : 0;
done:
	if (rr)
		rb_teardown(rr);
	free(rr);
	return ret;
}

static int rtebpf_run(const struct bench *b, const struct bench_env *env, struct bench_args *a)
{
	uint32_t packets = a->nr_loops ? a->nr_loops : RTEBPF_PACKETS;
	uint32_t flows = a->nr_entries ? a->nr_entries : RTEBPF_FLOWS;
	struct rb_run *rr;
	int status;

	/* The flow table must never fill: every count is checked exactly. */
	if (packets > 65536 || flows > FLOW_MAX_ENTRIES / 4) {
		fprintf(stderr, "%s: --nr_loops (packets) up to 65536, --nr_entries (flows) up to "
				"%u\n", b->name, FLOW_MAX_ENTRIES / 4);
		return 2;
	}
	rr = malloc(sizeof(*rr));
	if (!rr || rb_measure(rr, env, packets, flows)) {
		fprintf(stderr, "%s: out of memory\n", b->name);
		if (rr)
			rb_teardown(rr);
		free(rr);
		return 1;
	}
	print_table(rr, b->name);
	status = rr->bad ? 1 : 0;
	rb_teardown(rr);
	free(rr);
	return status;
}

const struct bench bench_rtebpf = {
	.name = "rte-bpf",
	.summary = "flow_count.bpf.c over a warm trace: rte_bpf JIT, interpreter, the same C, "
		   "the kernel's XDP (BPF_PROG_TEST_RUN); packets/s",
	.run = rtebpf_run,
	.default_warmup_s = 0.2,
	.default_duration_s = 2,
};
