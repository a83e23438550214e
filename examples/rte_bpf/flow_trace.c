// SPDX-License-Identifier: BSD-2-Clause
/*
 * The trace and the two C versions of flow_count.bpf.c (see flow_trace.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_trace.h"

static uint64_t next_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void put16(uint8_t *p, uint16_t v) /* network order */
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A frame of flow @k (or a non-IPv4 frame for k NULL) into @p. */
static void make_frame(struct flow_pkt *p, const struct flow_key *k, uint64_t *rng)
{
	uint8_t *d = p->data;
	uint32_t len = 64 + (uint32_t)(next_rand(rng) % (1514 - 64 + 1));
	uint32_t ihl = 5 + (next_rand(rng) % 4 == 0 ? (uint32_t)(next_rand(rng) % 3) : 0);
	uint32_t l4 = 14 + ihl * 4, doff, pl;

	memset(p, 0, sizeof(*p));
	p->len = len;
	for (uint32_t i = 0; i < len; i++) /* printable payload, no NUL */
		d[i] = (uint8_t)('a' + next_rand(rng) % 26);
	memset(d, 0x02, 12); /* MACs */
	if (!k) {
		d[12] = 0x08, d[13] = 0x06; /* ARP */
		return;
	}
	d[12] = 0x08, d[13] = 0x00;
	d[14] = (uint8_t)(0x40 | ihl);
	put16(d + 16, (uint16_t)(len - 14));
	d[22] = 64;
	d[23] = k->proto;
	memcpy(d + 26, &k->saddr, 4);
	memcpy(d + 30, &k->daddr, 4);
	memcpy(d + l4, &k->sport, 2);
	memcpy(d + l4 + 2, &k->dport, 2);
	if (k->proto != 6)
		return;
	doff = 5 + (uint32_t)(next_rand(rng) % 4);
	d[l4 + 12] = (uint8_t)(doff << 4);
	pl = l4 + doff * 4;
	switch (next_rand(rng) % 4) {
	case 0: /* a Host: header somewhere in the first 400 bytes */
	case 1: {
		static const char host[] = "Host: example.org\r\n";
		uint32_t at = pl + (uint32_t)(next_rand(rng) % 400);

		if (at + sizeof(host) <= len)
			memcpy(d + at, host, sizeof(host) - 1);
		break;
	}
	case 2: /* "Host: " behind a NUL: strnstr stops at the NUL */
		if (pl + 40 <= len) {
			d[pl + 10] = 0;
			memcpy(d + pl + 20, "Host: ", 6);
		}
		break;
	default: /* "Host" without its ": " */
		if (pl + 10 <= len)
			memcpy(d + pl + 2, "Host x", 6);
		break;
	}
}

int flow_trace_make(struct flow_trace *t, uint32_t n, uint32_t nr_flows, uint64_t seed)
{
	uint64_t rng = seed;

	memset(t, 0, sizeof(*t));
	t->pkts = aligned_alloc(64, ((size_t)n * sizeof(*t->pkts) + 63) / 64 * 64);
	t->flow_of = calloc(n ? n : 1, sizeof(*t->flow_of));
	t->keys = calloc(nr_flows ? nr_flows : 1, sizeof(*t->keys));
	if (!t->pkts || !t->flow_of || !t->keys || !nr_flows) {
		flow_trace_free(t);
		return -ENOMEM;
	}
	t->n = n;
	t->nr_flows = nr_flows;
	for (uint32_t f = 0; f < nr_flows; f++) {
		struct flow_key *k = &t->keys[f];
		uint64_t r = next_rand(&rng);

		k->saddr = (uint32_t)r;
		k->daddr = (uint32_t)(r >> 32);
		r = next_rand(&rng);
		k->proto = r % 4 == 0 ? 17 : 6;
		k->sport = (uint16_t)(r >> 16);
		/* Half the TCP flows go to port 80 (network order). */
		k->dport = k->proto == 6 && r % 8 < 4 ? (uint16_t)(80 << 8) : (uint16_t)(r >> 32);
		if (k->dport == (80 << 8) && k->proto == 17)
			k->dport++;
	}
	for (uint32_t i = 0; i < n; i++) {
		bool other = next_rand(&rng) % 20 == 0;
		uint32_t f = (uint32_t)(next_rand(&rng) % nr_flows);

		t->flow_of[i] = other ? -1 : (int32_t)f;
		make_frame(&t->pkts[i], other ? NULL : &t->keys[f], &rng);
	}
	return 0;
}

void flow_trace_free(struct flow_trace *t)
{
	free(t->pkts);
	free(t->flow_of);
	free(t->keys);
	memset(t, 0, sizeof(*t));
}

/* strnstr(payload, "Host: ", n) >= 0, as the kernel defines it: the search
 * stops at a NUL in the payload. */
static int ref_host(const uint8_t *p, uint32_t n)
{
	static const char needle[] = "Host: ";

	for (uint32_t i = 0; i < n && p[i]; i++) {
		uint32_t j = 0;

		while (j < 6 && i + j < n && p[i + j] == (uint8_t)needle[j])
			j++;
		if (j == 6)
			return 1;
	}
	return 0;
}

/* count_frame()'s parse: 1 for an IPv4 TCP/UDP frame, with @key filled and
 * the payload a Host: header is looked for in (@pl_len 0: none). */
static int parse(const uint8_t *d, uint32_t len, struct flow_key *key, uint32_t *pl,
		 uint32_t *pl_len)
{
	uint32_t ihl, l4;

	memset(key, 0, sizeof(*key));
	*pl = *pl_len = 0;
	if (len < 34 || d[12] != 0x08 || d[13] != 0x00)
		return 0;
	ihl = (d[14] & 0xfu) * 4;
	key->proto = d[23];
	if (ihl < 20 || (key->proto != 6 && key->proto != 17))
		return 0;
	l4 = 14 + ihl;
	if (l4 + 20 > len)
		return 0;
	memcpy(&key->saddr, d + 26, 4);
	memcpy(&key->daddr, d + 30, 4);
	memcpy(&key->sport, d + l4, 2);
	memcpy(&key->dport, d + l4 + 2, 2);
	if (key->proto == 6 && key->dport == (80 << 8)) {
		*pl = l4 + (d[l4 + 12] >> 4) * 4;
		if (*pl < len)
			*pl_len = len - *pl < 512 ? len - *pl : 512;
	}
	return 1;
}

int flow_ref_parse(const uint8_t *d, uint32_t len, struct flow_key *key, int *host)
{
	uint32_t pl, pl_len;
	int ret = parse(d, len, key, &pl, &pl_len);

	*host = pl_len ? ref_host(d + pl, pl_len) : 0;
	return ret;
}

int flow_expect_make(const struct flow_trace *t, uint32_t times, struct flow_expect *e)
{
	e->flows = calloc(t->nr_flows, sizeof(*e->flows));
	memset(e->stats, 0, sizeof(e->stats));
	if (!e->flows)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct flow_pkt *p = &t->pkts[i];
		struct flow_key key;
		int host;

		if (!flow_ref_parse(p->data, p->len, &key, &host)) {
			e->stats[FLOW_STAT_OTHER] += times;
			continue;
		}
		if (t->flow_of[i] < 0 || memcmp(&key, &t->keys[t->flow_of[i]], sizeof(key))) {
			fprintf(stderr, "flow_trace: packet %u does not parse as its flow\n", i);
			flow_expect_free(e);
			return -EINVAL;
		}
		e->flows[t->flow_of[i]].packets += times;
		e->flows[t->flow_of[i]].bytes += (uint64_t)p->len * times;
		e->flows[t->flow_of[i]].host_hits += (uint64_t)host * times;
		e->stats[FLOW_STAT_FLOW_PACKETS] += times;
	}
	for (uint32_t f = 0; f < t->nr_flows; f++)
		e->stats[FLOW_STAT_NEW_FLOWS] += e->flows[f].packets != 0;
	return 0;
}

void flow_expect_free(struct flow_expect *e)
{
	free(e->flows);
	e->flows = NULL;
}

int flow_expect_check(const struct flow_trace *t, const struct flow_expect *e,
		      struct bpfmap *flows, struct bpfmap *stats)
{
	uint32_t present = 0;
	struct flow_key k, next;
	const void *cur = NULL;

	for (uint32_t f = 0; f < t->nr_flows; f++) {
		struct flow_val v = { 0 };
		int ret = bpfmap_lookup_elem(flows, &t->keys[f], &v);

		if (!e->flows[f].packets && ret == -ENOENT)
			continue;
		if (ret || memcmp(&v, &e->flows[f], sizeof(v))) {
			fprintf(stderr, "flow %u: lookup %d, packets %llu bytes %llu host %llu; "
					"expected packets %llu bytes %llu host %llu\n",
				f, ret, (unsigned long long)v.packets, (unsigned long long)v.bytes,
				(unsigned long long)v.host_hits,
				(unsigned long long)e->flows[f].packets,
				(unsigned long long)e->flows[f].bytes,
				(unsigned long long)e->flows[f].host_hits);
			return -1;
		}
	}
	/* Nothing else in the table. */
	while (bpfmap_get_next_key(flows, cur, &next) == 0) {
		k = next;
		cur = &k;
		present++;
	}
	if (present != e->stats[FLOW_STAT_NEW_FLOWS]) {
		fprintf(stderr, "flows holds %u keys, expected %llu\n", present,
			(unsigned long long)e->stats[FLOW_STAT_NEW_FLOWS]);
		return -1;
	}
	for (uint32_t s = 0; s < FLOW_STAT_NR; s++) {
		uint64_t v = 0;

		if (bpfmap_lookup_elem(stats, &s, &v) || v != e->stats[s]) {
			fprintf(stderr, "stats[%u] = %llu, expected %llu\n", s,
				(unsigned long long)v, (unsigned long long)e->stats[s]);
			return -1;
		}
	}
	return 0;
}

int flow_maps_create(struct bpfmap **flows, struct bpfmap **stats)
{
	uint64_t zero = 0;

	*flows = bpfmap_create(BPFMAP_TYPE_LRU_HASH, "flows", sizeof(struct flow_key),
			       sizeof(struct flow_val), FLOW_MAX_ENTRIES, NULL);
	*stats = bpfmap_create(BPFMAP_TYPE_HASH, "stats", sizeof(uint32_t), sizeof(uint64_t),
			       FLOW_STAT_NR, NULL);
	if (!*flows || !*stats) {
		int err = -errno;

		bpfmap_free(*flows);
		bpfmap_free(*stats);
		*flows = *stats = NULL;
		return err;
	}
	for (uint32_t s = 0; s < FLOW_STAT_NR; s++)
		bpfmap_update_elem(*stats, &s, &zero, BPFMAP_ANY);
	return 0;
}

static void stat_add(struct bpfmap *stats, uint32_t slot)
{
	uint64_t *v = bpfmap_lookup(stats, &slot);

	if (v)
		__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

int flow_count_c(struct bpfmap *flows, struct bpfmap *stats, const struct flow_pkt *pkt)
{
	uint32_t len = pkt->len > FLOW_PKT_MAX ? FLOW_PKT_MAX : pkt->len;
	struct flow_val *v;
	struct flow_key key;
	uint32_t pl, pl_len;
	int host;

	if (!parse(pkt->data, len, &key, &pl, &pl_len))
		goto other;
	host = pl_len && bpfmap_strnstr((const char *)pkt->data + pl, "Host: ", pl_len) >= 0;
	v = bpfmap_lookup(flows, &key);
	if (!v) {
		struct flow_val init = { .packets = 1, .bytes = len, .host_hits = (__u64)host };

		if (bpfmap_update(flows, &key, &init, BPFMAP_NOEXIST) == 0) {
			stat_add(stats, FLOW_STAT_NEW_FLOWS);
			goto counted;
		}
		v = bpfmap_lookup(flows, &key);
		if (!v)
			goto other;
	}
	__atomic_fetch_add(&v->packets, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&v->bytes, len, __ATOMIC_RELAXED);
	if (host)
		__atomic_fetch_add(&v->host_hits, 1, __ATOMIC_RELAXED);
counted:
	stat_add(stats, FLOW_STAT_FLOW_PACKETS);
	return 1;
other:
	stat_add(stats, FLOW_STAT_OTHER);
	return 0;
}
