// SPDX-License-Identifier: BSD-2-Clause
/*
 * rte-bpf, the kernel's columns: flow_count.bpf.c's flow_xdp entry on the
 * kernel's own LRU_HASH and HASH, and an empty XDP program (the test run's
 * own cost), loaded with libbpf from the embedded objects; both held in the
 * XDP dispatcher so that test runs with a repeat count stay cheap; a pass is
 * BPF_PROG_TEST_RUN of every packet; afterwards the kernel's maps are
 * checked against the C reference as bpfmap's are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bench_rtebpf.h"
#include "kernel_backend.h"

/* ---- setup ---- */

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

void rb_kern_setup(struct rb_run *rr)
{
	char *why = rr->kern_why;

	if (!kern_setup_objs(rr, why, sizeof(rr->kern_why))) {
		kern_hold(rr);
		return;
	}
	rb_col_fail(&rr->col[RB_KERN], "%s", why);
	rb_col_fail(&rr->col[RB_EMPTY], "%s", why);
}

void rb_kern_close(struct rb_kern *k)
{
	for (int i = 0; i < 2; i++)
		if (k->nsfd[i] >= 0)
			close(k->nsfd[i]);
	bpf_object__close(k->obj);
	bpf_object__close(k->empty);
}

/* ---- the pass ---- */

/* Every packet through BPF_PROG_TEST_RUN, @repeat runs each: the mean of
 * the kernel's per-run means (whole ns, rounded down by the kernel). */
double rb_pass_kern(struct rb_run *rr, struct rb_col *c, uint32_t repeat)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < rr->t.n; i++) {
		const struct flow_pkt *p = &rr->t.pkts[i];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->data, .data_size_in = p->len,
			    .repeat = repeat);

		if (bpf_prog_test_run_opts(c->fd, &o)) {
			rb_col_fail(c, "BPF_PROG_TEST_RUN of packet %u: %s", i, strerror(errno));
			return NAN;
		}
		if (o.retval != XDP_PASS) {
			rb_col_fail(c, "packet %u: the program returned %u, not XDP_PASS", i,
				    o.retval);
			rr->bad = true;
			return NAN;
		}
		sum += o.duration;
	}
	c->passes += repeat;
	return (double)sum / rr->t.n;
}

/* ---- the check ---- */

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
void rb_kern_check(struct rb_run *rr, struct rb_col *c)
{
	struct flow_expect e;
	char why[200];

	if (!c->ok)
		return;
	if (flow_expect_make(&rr->t, (uint32_t)c->passes, &e)) {
		rb_col_fail(c, "out of memory for the check");
		return;
	}
	if (kern_check_flows(rr, &e, why, sizeof(why)) ||
	    kern_check_stats(rr, &e, why, sizeof(why))) {
		rb_col_fail(c, "its maps differ from the C reference: %s", why);
		rr->bad = true;
	}
	flow_expect_free(&e);
}
