// SPDX-License-Identifier: BSD-2-Clause
/* Loading, attaching and talking to the benchmark BPF programs (libbpf). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel_backend.h"

/*
 * libbpf's own messages (e.g. "permission error while running as root") go to
 * stderr by default and would interleave with the tables; keep the first one
 * of a load (the cause; later ones are consequences) to quote in the reason.
 */
static __thread char libbpf_msg[200];

static int kbpf_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *nl;

	if (level == LIBBPF_DEBUG || libbpf_msg[0])
		return 0;
	vsnprintf(libbpf_msg, sizeof(libbpf_msg), fmt, ap);
	nl = strchr(libbpf_msg, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

void kbpf_quiet_libbpf(void)
{
	libbpf_set_print(kbpf_libbpf_print);
	libbpf_msg[0] = '\0';
}

const char *kbpf_libbpf_message(void)
{
	return libbpf_msg;
}

/* The kernel symbol of the getpgid syscall for this architecture. */
static const char *getpgid_symbol(void)
{
#if defined(__x86_64__)
	return "__x64_sys_getpgid";
#elif defined(__aarch64__)
	return "__arm64_sys_getpgid";
#elif defined(__s390x__)
	return "__s390x_sys_getpgid";
#else
	return "sys_getpgid";
#endif
}

enum trigger { TRIGGER_FENTRY, TRIGGER_RAWTP, NR_TRIGGERS };

static int try_load(struct kbpf *k, const unsigned char *data, size_t len, const char *entry,
		    enum trigger trig, kbpf_configure_fn configure, void *arg, char *err,
		    size_t errlen)
{
	char want[64];
	struct bpf_program *prog, *chosen = NULL;
	struct bpf_map *map;
	int ret;

	snprintf(want, sizeof(want), "%s_%s", entry, trig == TRIGGER_FENTRY ? "fentry" : "rawtp");
	k->obj = bpf_object__open_mem(data, len, NULL);
	if (!k->obj) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		return ret;
	}
	ret = configure(k->obj, arg, err, errlen);
	if (ret)
		goto fail;
	bpf_object__for_each_program(prog, k->obj) {
		bool mine = strcmp(bpf_program__name(prog), want) == 0;

		bpf_program__set_autoload(prog, mine);
		if (mine)
			chosen = prog;
	}
	if (!chosen) {
		ret = -ENOENT;
		snprintf(err, errlen, "no program %s in the object", want);
		goto fail;
	}
	if (trig == TRIGGER_FENTRY) {
		ret = bpf_program__set_attach_target(chosen, 0, getpgid_symbol());
		if (ret) {
			snprintf(err, errlen, "%s: %s", getpgid_symbol(), strerror(-ret));
			goto fail;
		}
	}
	libbpf_msg[0] = '\0';
	ret = bpf_object__load(k->obj);
	if (ret) {
		/* libbpf's log may not fit: cut, on purpose. */
		if (snprintf(err, errlen, "load: %s%s%s", strerror(-ret),
			     libbpf_msg[0] ? " -- " : "", libbpf_msg) >= (int)errlen)
			err[errlen - 1] = '\0';
		goto fail;
	}
	k->link = bpf_program__attach(chosen);
	if (!k->link) {
		ret = -errno;
		snprintf(err, errlen, "attach: %s", strerror(-ret));
		goto fail;
	}
	bpf_object__for_each_map(map, k->obj) {
		const char *name = bpf_map__name(map);
		size_t nlen = strlen(name);

		void *p;

		if (nlen < 4 || strcmp(name + nlen - 4, ".bss"))
			continue;
		/* Map it ourselves: libbpf before 1.5 keeps a private copy
		 * for non-skeleton users. */
		k->bss_size = bpf_map__value_size(map);
		k->bss_map_len = (k->bss_size + (size_t)getpagesize() - 1) &
				 ~((size_t)getpagesize() - 1);
		p = mmap(NULL, k->bss_map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(map), 0);
		if (p == MAP_FAILED) {
			ret = -errno;
			snprintf(err, errlen, "mmap .bss: %s", strerror(-ret));
			goto fail;
		}
		k->bss = p;
	}
	if (!k->bss) {
		ret = -ENOENT;
		snprintf(err, errlen, "the object has no .bss");
		goto fail;
	}
	snprintf(k->trigger, sizeof(k->trigger), "%s",
		 trig == TRIGGER_FENTRY ? "fentry" : "raw_tp/sys_enter");
	return 0;
fail:
	bpf_link__destroy(k->link);
	bpf_object__close(k->obj);
	k->link = NULL;
	k->obj = NULL;
	return ret;
}

int kbpf_load(struct kbpf *k, const unsigned char *data, size_t len, const char *entry,
	      kbpf_configure_fn configure, void *arg, char *err, size_t errlen)
{
	char why[NR_TRIGGERS][160];
	int ret[NR_TRIGGERS];

	memset(k, 0, sizeof(*k));
	kbpf_quiet_libbpf();
	for (int t = 0; t < NR_TRIGGERS; t++) {
		ret[t] = try_load(k, data, len, entry, (enum trigger)t, configure, arg, why[t],
				  sizeof(why[t]));
		if (ret[t])
			continue;
		if (t == TRIGGER_FENTRY)
			snprintf(k->note, sizeof(k->note), "trigger fentry/%s", getpgid_symbol());
		else
			snprintf(k->note, sizeof(k->note),
				 "trigger raw_tp/sys_enter; fentry refused (%s)",
				 strerror(-ret[TRIGGER_FENTRY]));
		return 0;
	}
	/* As root, EACCES is the verifier's (a program the map's flags
	 * forbid, say BPF_F_RDONLY_PROG): its reasons, not a permission. */
	if ((ret[0] == -EPERM || ret[0] == -EACCES) && (ret[1] == -EPERM || ret[1] == -EACCES) &&
	    geteuid() != 0)
		snprintf(err, errlen,
			 "BPF not permitted here: loading a program failed with %s "
			 "(needs root, or CAP_BPF and CAP_PERFMON)", strerror(-ret[1]));
	else
		snprintf(err, errlen, "kernel BPF backend failed (fentry: %.100s; raw_tp: %.100s)",
			 why[TRIGGER_FENTRY], why[TRIGGER_RAWTP]);
	return ret[TRIGGER_RAWTP];
}

void kbpf_close(struct kbpf *k)
{
	if (k->bss)
		munmap(k->bss, k->bss_map_len);
	bpf_link__destroy(k->link);
	bpf_object__close(k->obj);
	memset(k, 0, sizeof(*k));
}

int kbpf_map_fd(struct kbpf *k, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(k->obj, name);

	return map ? bpf_map__fd(map) : -1;
}

void kbpf_gate_open(struct bench_gate *g)
{
	g->tgid = (uint32_t)getpid();
	g->trigger_nr = SYS_getpgid;
	__atomic_store_n(&g->enabled, 1, __ATOMIC_RELEASE);
}

void kbpf_gate_close(struct bench_gate *g)
{
	__atomic_store_n(&g->enabled, 0, __ATOMIC_RELEASE);
}

void kbpf_trigger(void)
{
	syscall(SYS_getpgid, 0);
}

void kbpf_producer(void *st, int idx, int nr, atomic_bool *stop)
{
	(void)st;
	(void)idx;
	(void)nr;
	do
		kbpf_trigger();
	while (!atomic_load_explicit(stop, memory_order_relaxed));
}

/* Elements per BPF_MAP_UPDATE_BATCH call. */
#define FILL_CHUNK 4096

static int fill_one_by_one(int fd, uint32_t n, uint8_t *key, uint8_t *value, kbpf_make_fn make,
			   void *arg, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		make(key, value, i, arg);
		if (bpf_map_update_elem(fd, key, value, BPF_ANY)) {
			int e = errno;

			snprintf(err, errlen, "inserting element %u: %s", i, strerror(e));
			return -e;
		}
	}
	return 0;
}

int kbpf_fill(int fd, uint32_t n, uint32_t key_size, uint32_t value_size, kbpf_make_fn make,
	      void *arg, char *err, size_t errlen)
{
	uint8_t *keys = calloc(FILL_CHUNK, key_size), *values = calloc(FILL_CHUNK, value_size);
	int ret = 0;

	if (!keys || !values) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t base = 0; base < n; base += FILL_CHUNK) {
		uint32_t m = n - base < FILL_CHUNK ? n - base : FILL_CHUNK, done = m;

		for (uint32_t j = 0; j < m; j++)
			make(keys + (size_t)j * key_size, values + (size_t)j * value_size,
			     base + j, arg);
		if (!bpf_map_update_batch(fd, keys, values, &done, NULL))
			continue;
		if (base == 0) {
			/* No batch ops for this map or kernel: the slow way, which
			 * also names the element a real failure is about. */
			ret = fill_one_by_one(fd, n, keys, values, make, arg, err, errlen);
			goto out;
		}
		ret = -errno;
		snprintf(err, errlen, "inserting elements %u..%u: %s", base, base + m - 1,
			 strerror(errno));
		goto out;
	}
out:
	free(keys);
	free(values);
	return ret;
}

long long kbpf_memlock(int map_fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", map_fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}
