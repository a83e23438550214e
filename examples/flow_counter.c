/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flow_counter - count packets and bytes per network flow from several threads.
 *
 * Each thread plays a packet-processing worker: for every packet it finds the
 * flow's counters with the program view (bpfmap_lookup() inside a read-side
 * section) and bumps them with atomics, the way a BPF program would.  The
 * first packet of a flow creates it with BPFMAP_NOEXIST; if another thread
 * wins that race (-EEXIST), we simply look the flow up again.  Afterwards the
 * main thread walks the table with the syscall view and prints the top flows.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#define NTHREADS 4
#define PACKETS_PER_THREAD 100000
#define NFLOWS 64      /* distinct flows in the synthetic traffic */
#define MAX_FLOWS 1024 /* table capacity */
#define TOP 5
#define IP4(a) (a) >> 24, ((a) >> 16) & 255, ((a) >> 8) & 255, (a) & 255 /* for "%u.%u.%u.%u" */

/* Keys are compared as raw bytes, so padding must be explicit and zeroed. */
struct flow_key {
	uint32_t src_ip, dst_ip; /* IPv4, host byte order here for simplicity */
	uint16_t src_port, dst_port;
	uint8_t proto;           /* 6 = TCP, 17 = UDP */
	uint8_t pad[3];          /* always zero */
};

struct flow_stats {
	uint64_t packets;
	uint64_t bytes;
};

struct worker {
	pthread_t thread;
	struct bpfmap *map;
	uint64_t rng;
	uint64_t packets, bytes; /* what this thread sent */
	int err;
};

static uint64_t next_rand(uint64_t *s) /* xorshift64 */
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Synthetic flow number idx; memset first so the padding is zero. */
static void make_flow(uint32_t idx, struct flow_key *k)
{
	static const uint16_t services[] = { 80, 443, 53 };

	memset(k, 0, sizeof(*k));
	k->src_ip = 0x0a000001 + idx;           /* 10.0.0.x */
	k->dst_ip = 0xc0a80101 + idx % 4;       /* 192.168.1.1-4 */
	k->src_port = (uint16_t)(1024 + idx * 7);
	k->dst_port = services[idx % 3];
	k->proto = k->dst_port == 53 ? 17 : 6;
}

/* Count one packet of len bytes for flow k: 0, or a negative errno. */
static int count_packet(struct bpfmap *map, const struct flow_key *k, uint64_t len)
{
	for (;;) {
		bpfmap_read_lock();
		struct flow_stats *s = bpfmap_lookup(map, k);
		int found = s != NULL;

		if (found) { /* s stays valid until bpfmap_read_unlock() */
			__atomic_fetch_add(&s->packets, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&s->bytes, len, __ATOMIC_RELAXED);
		}
		bpfmap_read_unlock();
		if (found)
			return 0;

		/* New flow: create it with this packet already counted. */
		struct flow_stats first = { .packets = 1, .bytes = len };
		int err = bpfmap_update_elem(map, k, &first, BPFMAP_NOEXIST);
		if (err != -EEXIST)
			return err; /* 0, or e.g. -E2BIG when the table is full */
		/* Another thread created it meanwhile: add to theirs. */
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct flow_key k;

	for (int i = 0; i < PACKETS_PER_THREAD && !w->err; i++) {
		uint64_t r = next_rand(&w->rng);
		uint32_t idx = (uint32_t)(r % NFLOWS);
		uint64_t len = 64 + (r >> 32) % 1437;

		if (r & (1ULL << 40))
			idx %= 8; /* skew: half the traffic goes to 8 flows */
		make_flow(idx, &k);
		w->err = count_packet(w->map, &k, len);
		if (!w->err) {
			w->packets++;
			w->bytes += len;
		}
	}
	return NULL;
}

/* Flows read back from the table, sorted by packets for printing. */
struct flow {
	struct flow_key key;
	struct flow_stats stats;
};

static int by_packets_desc(const void *a, const void *b)
{
	const struct flow *x = a, *y = b;

	return (y->stats.packets > x->stats.packets) - (y->stats.packets < x->stats.packets);
}

int main(void)
{
	static struct flow flows[MAX_FLOWS];
	struct bpfmap *map = bpfmap_create(BPFMAP_TYPE_HASH, "flows", sizeof(struct flow_key),
					   sizeof(struct flow_stats), MAX_FLOWS, NULL);
	struct worker w[NTHREADS] = { 0 };
	uint64_t sent = 0, sent_bytes = 0, seen = 0, seen_bytes = 0;
	const struct flow_key *prev = NULL; /* NULL: start from the first key */
	size_t n = 0;
	int ok = 1;

	if (!map) {
		perror("bpfmap_create");
		return 1;
	}
	for (int i = 0; i < NTHREADS; i++) {
		w[i].map = map;
		w[i].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
			return 1;
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].err) {
			fprintf(stderr, "thread %d: %s\n", i, strerror(-w[i].err));
			ok = 0;
		}
		sent += w[i].packets;
		sent_bytes += w[i].bytes;
	}

	/* Read the table back with the syscall view: walk the keys, copy each
	 * value out.  Nothing writes any more, so the walk sees every flow once. */
	while (n < MAX_FLOWS && bpfmap_get_next_key(map, prev, &flows[n].key) == 0) {
		prev = &flows[n].key;
		if (bpfmap_lookup_elem(map, prev, &flows[n].stats) != 0)
			ok = 0;
		seen += flows[n].stats.packets;
		seen_bytes += flows[n].stats.bytes;
		n++;
	}
	qsort(flows, n, sizeof(flows[0]), by_packets_desc);

	printf("%zu flows, top %d by packets:\n", n, TOP);
	for (size_t i = 0; i < n && i < TOP; i++) {
		const struct flow *f = &flows[i];

		printf("  %u.%u.%u.%u:%-5u -> %u.%u.%u.%u:%-5u %s %8" PRIu64 " pkts %10" PRIu64
		       " bytes\n", IP4(f->key.src_ip), f->key.src_port, IP4(f->key.dst_ip),
		       f->key.dst_port, f->key.proto == 17 ? "udp" : "tcp", f->stats.packets,
		       f->stats.bytes);
	}
	printf("counted %" PRIu64 " packets, %" PRIu64 " bytes; threads sent %" PRIu64
	       " packets, %" PRIu64 " bytes\n", seen, seen_bytes, sent, sent_bytes);
	bpfmap_free(map);
	return ok && seen == sent && seen_bytes == sent_bytes ? 0 : 1;
}
