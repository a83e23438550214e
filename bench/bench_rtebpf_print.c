// SPDX-License-Identifier: BSD-2-Clause
/*
 * rte-bpf's figures and output: a column's figure is the median of its
 * rounds, its ratio to the JIT the median of the rounds' ratios (the
 * kernel's net of the empty program's, round by round); then the table (the
 * trace, how each side ran, a row per column with its check), the verdict
 * against the target (JIT >= 3.0x the kernel's net packets/s) and with
 * --json an object per column.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rtebpf.h"
#include "json.h"

/* ---- figures ---- */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* The median of @n figures (sorts a copy); NAN when none. */
double rb_median(const double *v, int n)
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

/* Per round: @col's ns per packet (the kernel's net of the empty program's
 * when @net) over the JIT's; their median and range. */
struct rb_fig rb_figure(const struct rb_run *rr, int col, bool net)
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
	f.ns = rb_median(v, rr->rounds);
	f.vs_jit = rb_median(r, n);
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
			rb_is_kern(col) && rr->kern_why[0] ? "(above)" : c->why);
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
	jw_str(&w, "program", rb_is_kern(col) ? (col == RB_KERN ? "flow_xdp" : "xdp_empty")
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

void rb_print_table(const struct rb_run *rr, const char *name)
{
	FILE *f = rr->env->out;
	struct rb_fig g[RB_NCOLS], raw = rb_figure(rr, RB_KERN, false);

	for (int i = 0; i < RB_NCOLS; i++)
		g[i] = rb_figure(rr, i, i == RB_KERN);
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
		if (rr->env->backends & (rb_is_kern(i) ? BACKEND_KERNEL : BACKEND_LIB))
			json_col(rr, i, &g[i], &raw, &g[RB_EMPTY]);
}
