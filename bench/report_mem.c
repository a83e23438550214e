// SPDX-License-Identifier: BSD-2-Clause
/*
 * --report's bytes per element: full preallocated maps of several key and
 * value sizes on each side, bpfmap's bpfmap_mem_usage() against the
 * kernel's memlock figure from /proc/self/fdinfo.  Memory is deterministic,
 * so each row is measured once, not per round.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfmap.h>

#include "json.h"
#include "kernel_backend.h"
#include "output.h"
#include "report_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct kv {
	uint32_t key_size, value_size;
};

/* 8 + 8 first: the 24-byte row. */
static const struct kv quick_mem[] = { { 8, 8 },   { 4, 8 },  { 16, 16 },
				       { 64, 64 }, { 8, 256 }, { 256, 8 } };
static const struct kv full_mem[] = { { 8, 8 },   { 4, 8 },   { 16, 16 }, { 32, 32 },
				      { 64, 64 }, { 16, 64 }, { 128, 128 }, { 8, 256 },
				      { 256, 8 } };

/* ---- bytes per element ---- */

static uint32_t mem_type(const struct mem_row *m)
{
	return m->type ? m->type : BPFMAP_TYPE_HASH;
}

static void mem_json(struct report *rp, const char *backend, const struct mem_row *m, double bpe,
		     const char *error)
{
	struct jw w;

	if (!rp->env->json)
		return;
	jw_begin(&w, stdout);
	jw_str(&w, "bench", "mem-per-elem");
	jw_str(&w, "backend", backend);
	jw_str(&w, "map_type", map_type_name(mem_type(m)));
	jw_u64(&w, "key_size", m->key_size);
	jw_u64(&w, "value_size", m->value_size);
	jw_u64(&w, "max_entries", m->entries);
	jw_u64(&w, "nr_entries", m->entries);
	jw_u64(&w, "map_flags", 0);
	jw_u64(&w, "producers", 1);
	jw_num(&w, "bytes_per_elem", bpe);
	jw_num(&w, "mem_bytes", bpe * m->entries);
	if (!strcmp(backend, "lib"))
		jw_num(&w, "target_bytes_per_elem", m->target);
	if (error)
		jw_str(&w, "error", error);
	jw_end(&w);
}

/* Key i: i's low bytes (4 or more hold a million), the rest zero; value i. */

static void mem_make(void *key, void *value, uint32_t i, void *arg)
{
	const struct mem_row *m = arg;
	uint64_t v = i;

	memset(key, 0, m->key_size);
	memcpy(key, &v, m->key_size < sizeof(v) ? m->key_size : sizeof(v));
	memset(value, 0, bench_value_bytes(mem_type(m), m->value_size));
	memcpy(value, &v, m->value_size < sizeof(v) ? m->value_size : sizeof(v));
}

double mem_lib(struct report *rp, const struct mem_row *m, const char *what)
{
	uint8_t *key = calloc(1, m->key_size);
	uint8_t *value = calloc(1, bench_value_bytes(mem_type(m), m->value_size));
	struct bpfmap *map = NULL;
	double bpe = NAN;
	char err[160] = "";

	progress(rp, what, "lib");
	if (key && value)
		map = bpfmap_create(mem_type(m), "mem", m->key_size, m->value_size, m->entries,
				    NULL);
	if (!map) {
		snprintf(err, sizeof(err), "bpfmap_create: %s", strerror(errno));
	} else {
		for (uint32_t i = 0; i < m->entries; i++) {
			int ret;

			mem_make(key, value, i, (void *)m);
			ret = bpfmap_update_elem(map, key, value, BPFMAP_ANY);
			if (ret) {
				snprintf(err, sizeof(err), "filling: %s", strerror(-ret));
				break;
			}
		}
		if (!err[0])
			bpe = (double)bpfmap_mem_usage(map) / m->entries;
		bpfmap_free(map);
	}
	free(key);
	free(value);
	if (err[0])
		failed(rp, what, "lib", err);
	mem_json(rp, "lib", m, bpe, err[0] ? err : NULL);
	return bpe;
}

double mem_kernel(struct report *rp, const struct mem_row *m, const char *what)
{
	double bpe = NAN;
	char err[160] = "";
	int fd;

	progress(rp, what, "kernel");
	fd = bpf_map_create(mem_type(m), "bench_mem", m->key_size, m->value_size, m->entries,
			    NULL);
	if (fd < 0) {
		snprintf(err, sizeof(err), "bpf_map_create: %s", strerror(errno));
	} else if (!kbpf_fill(fd, m->entries, m->key_size,
			      bench_value_bytes(mem_type(m), m->value_size), mem_make, (void *)m,
			      err, sizeof(err))) {
		long long b = kbpf_memlock(fd);

		if (b < 0)
			snprintf(err, sizeof(err), "no memlock in /proc/self/fdinfo");
		else
			bpe = (double)b / m->entries;
	}
	if (fd >= 0)
		close(fd);
	if (err[0])
		failed(rp, what, "kernel", err);
	mem_json(rp, "kernel", m, bpe, err[0] ? err : NULL);
	return bpe;
}

static uint32_t round8(uint32_t n)
{
	return (n + 7) & ~7u;
}

void report_mem(struct report *rp)
{
	const struct kv *kv = rp->full ? full_mem : quick_mem;
	size_t n = rp->full ? N(full_mem) : N(quick_mem);

	for (size_t i = 0; i < n && rp->nmem < REPORT_MAX_MEM; i++) {
		struct mem_row *m = &rp->mem[rp->nmem++];
		char what[48];

		*m = (struct mem_row){ .key_size = kv[i].key_size, .value_size = kv[i].value_size,
				       .entries = REPORT_MEM_ENTRIES, .lib = NAN, .kern = NAN };
		if (!rp->full && i > 0)
			m->entries = REPORT_MEM_ENTRIES_QUICK;
		/* The issue: 24 B for 8 + 8; else the padded key and value + 16. */
		if (m->key_size == 8 && m->value_size == 8)
			m->target = 24;
		else
			m->target = round8(m->key_size) + round8(m->value_size) + 16;
		snprintf(what, sizeof(what), "bytes/elem %u+%u", m->key_size, m->value_size);
		if (report_want(rp, BACKEND_LIB))
			m->lib = mem_lib(rp, m, what);
		if (report_want(rp, BACKEND_KERNEL))
			m->kern = mem_kernel(rp, m, what);
	}
}

int report_mem_rows(const struct report *rp)
{
	return (int)(rp->full ? N(full_mem) : N(quick_mem));
}
