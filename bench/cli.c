// SPDX-License-Identifier: BSD-2-Clause
/*
 * Command-line parsing.  The flags mirror the kernel's selftests bench, so its
 * command lines work unchanged apart from the program name:
 *   bench -w3 -d10 -a bpf-hashmap-lookup --key_size 4 --map_flags 0x40
 * There, as here, -a is "pin producers to CPUs" and the benchmark is the
 * positional argument; -a with no benchmark lists them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap.h>

#include "cli.h"
#include "report.h"

enum {
	OPT_LIST = 256,
	OPT_BACKEND,
	OPT_JSON,
	OPT_REPORT,
	OPT_FULL,
	OPT_ROUNDS,
	OPT_COMPARE,
	OPT_PROD_AFFINITY,
	OPT_KEY_SIZE,
	OPT_VALUE_SIZE,
	OPT_MAX_ENTRIES,
	OPT_NR_ENTRIES,
	OPT_NR_LOOPS,
	OPT_MAP_FLAGS,
	OPT_FULL_WIDTH,
	OPT_BULK,
	OPT_VIA_LOOKUP,
	OPT_COPY_OUT,
	OPT_WRITER,
	OPT_USE_CASE,
	OPT_PREALLOC,
	OPT_HASH,
	OPT_ISA,
	OPT_MAP_TYPE,
	OPT_PERCPU_ADD,
};

static const struct option long_opts[] = {
	{ "warmup", required_argument, NULL, 'w' },
	{ "duration", required_argument, NULL, 'd' },
	{ "producers", required_argument, NULL, 'p' },
	{ "affinity", no_argument, NULL, 'a' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "quiet", no_argument, NULL, 'q' },
	{ "consumers", required_argument, NULL, 'c' },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "report", no_argument, NULL, OPT_REPORT },
	{ "full", no_argument, NULL, OPT_FULL },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "prod-affinity", required_argument, NULL, OPT_PROD_AFFINITY },
	{ "key_size", required_argument, NULL, OPT_KEY_SIZE },
	{ "value_size", required_argument, NULL, OPT_VALUE_SIZE },
	{ "value-size", required_argument, NULL, OPT_VALUE_SIZE },
	{ "max_entries", required_argument, NULL, OPT_MAX_ENTRIES },
	{ "nr_entries", required_argument, NULL, OPT_NR_ENTRIES },
	{ "nr_loops", required_argument, NULL, OPT_NR_LOOPS },
	{ "map_flags", required_argument, NULL, OPT_MAP_FLAGS },
	{ "full_width_keys", no_argument, NULL, OPT_FULL_WIDTH },
	{ "bulk", required_argument, NULL, OPT_BULK },
	{ "via_lookup", no_argument, NULL, OPT_VIA_LOOKUP },
	{ "copy_out", no_argument, NULL, OPT_COPY_OUT },
	{ "writer", no_argument, NULL, OPT_WRITER },
	{ "use-case", required_argument, NULL, OPT_USE_CASE },
	{ "use_case", required_argument, NULL, OPT_USE_CASE },
	{ "preallocated", no_argument, NULL, OPT_PREALLOC },
	{ "hash", required_argument, NULL, OPT_HASH },
	{ "isa", required_argument, NULL, OPT_ISA },
	{ "map_type", required_argument, NULL, OPT_MAP_TYPE },
	{ "percpu_add", no_argument, NULL, OPT_PERCPU_ADD },
	{ "map-type", required_argument, NULL, OPT_MAP_TYPE },
	{ NULL, 0, NULL, 0 },
};

void cli_usage(FILE *f)
{
	fprintf(f,
		"usage: bpfmap-bench [-w SECS] [-d SECS] [-p N] [-a] [--backend lib|kernel|both]\n"
		"                    [--json] [-v] BENCHMARK [benchmark flags]\n"
		"       bpfmap-bench -a | --list\n"
		"       bpfmap-bench --report [--full] [--rounds R] [--json] [-w SECS -d SECS]\n"
		"       bpfmap-bench --compare BASE.json[,BASE2.json...] NEW.json[,NEW2.json...]\n"
		"\n"
		"  -w, --warmup SECS     warm-up, dropped (default 1; fractions allowed)\n"
		"  -d, --duration SECS   measured time (default 5)\n"
		"  -p, --producers N     producer threads (default 1)\n"
		"  -a, --affinity        pin producer i to CPU i; alone: list the benchmarks\n"
		"  -l, --list            list the benchmarks\n"
		"  -q, --quiet           no progress line\n"
		"  -c, --consumers 0     accepted for the selftests' command lines\n"
		"  --prod-affinity CPUS  pin producers to these CPUs (e.g. 0,2-3)\n"
		"  --backend B           lib (bpfmap), kernel (the running kernel's BPF maps)\n"
		"                        or both (default; run one after the other, ratio)\n"
		"  --json                one JSON object per measured cell on stdout;\n"
		"                        tables go to stderr\n"
		"  -v, --verbose         a line per sample on stderr\n"
		"  --rounds R            --report: measure every bpfmap/kernel row R times\n"
		"                        (1..%d, default %d), print the medians\n"
		"\n"
		"  map benchmarks:   --key_size N --value_size N --max_entries N --nr_entries N\n"
		"                    --nr_loops N --map_flags N (e.g. 0x40 = ZERO_SEED)\n"
		"                    --map_type hash|percpu_hash|lru_hash|lru_percpu_hash|rhash\n"
		"                    (lookup, full-update, overwrite, lru-full-update)\n"
		"                    --percpu_add (percpu-count: bpfmap_percpu_add(), restartable\n"
		"                    sequences, instead of the pointer's atomic add)\n"
		"                    --full_width_keys (lookup, bpfmap side: write the key with\n"
		"                    full-width stores instead of the selftest's 4-byte patch)\n"
		"                    --bulk N (lookup, bpfmap side: N keys per\n"
		"                    bpfmap_lookup_bulk() call, up to 64)\n"
		"                    --via_lookup (lookup, bpfmap side: each key through\n"
		"                    bpfmap_lookup() instead of the map's own lookup function\n"
		"                    from bpfmap_lookup_func(), which a runtime's JIT calls)\n"
		"                    --copy_out (lookup, bpfmap side: each key through\n"
		"                    bpfmap_lookup_elem(), the syscall view, into a buffer)\n"
		"                    --writer (lookup: one more thread, on a CPU of its own\n"
		"                    with -a, overwrites present keys' values non-stop)\n"
		"  htab-mem:         --use-case overwrite|batch_add_batch_del|add_del_on_diff_cpu\n"
		"                    --value-size N --preallocated\n"
		"  hash:             --key_size N (default: a range) --hash NAME (default: all)\n"
		"  str-kfuncs:       --isa all|swar|sse2|avx2|avx512 (also each of bpfmap's\n"
		"                    versions, called directly; default: the dispatched one)\n"
		"\n",
		REPORT_MAX_ROUNDS, REPORT_DEFAULT_ROUNDS);
	bench_list(f);
}

static int parse_u32(const char *opt, const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0); /* 0x40 as the seeds write flags */
	if (errno || end == s || *end || v > UINT32_MAX || s[0] == '-') {
		fprintf(stderr, "bpfmap-bench: %s: '%s' is not a number in 0..%u\n", opt, s,
			UINT32_MAX);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_secs(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 86400) {
		fprintf(stderr, "bpfmap-bench: %s: '%s' is not a number of seconds\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* "0,2-3" -> {0, 2, 3} */
static int parse_cpus(const char *s, struct bench_env *env)
{
	const char *p = s;

	env->nr_prod_cpus = 0;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		/* Past CPU_SETSIZE no cpu_set_t names the CPU: refused, not wrapped. */
		if (end == p || a < 0 || a >= CPU_SETSIZE)
			goto bad;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b >= CPU_SETSIZE)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (env->nr_prod_cpus == BENCH_MAX_PRODUCERS)
				goto bad;
			env->prod_cpus[env->nr_prod_cpus++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (env->nr_prod_cpus) {
		cpu_set_t allowed;

		/* A producer that cannot be pinned would run anywhere under a
		 * header that says "pinned". */
		if (sched_getaffinity(0, sizeof(allowed), &allowed))
			return 0;
		for (int i = 0; i < env->nr_prod_cpus; i++)
			if (!CPU_ISSET(env->prod_cpus[i], &allowed)) {
				fprintf(stderr,
					"bpfmap-bench: --prod-affinity: CPU %d is not one this process may run on\n",
					env->prod_cpus[i]);
				return -1;
			}
		return 0;
	}
bad:
	fprintf(stderr, "bpfmap-bench: --prod-affinity: '%s' is not a CPU list like 0,2-3\n", s);
	return -1;
}

int cli_parse(int argc, char **argv, struct cli *c)
{
	struct bench_env *env = &c->env;
	struct bench_args *a = &c->args;
	uint32_t n;
	int opt;

	memset(c, 0, sizeof(*c));
	env->warmup_s = 1;
	env->duration_s = 5;
	env->producers = 1;
	env->backends = BACKEND_BOTH;
	env->out = stdout;

	while ((opt = getopt_long(argc, argv, "w:d:p:c:avhlq", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			if (parse_secs("-w", optarg, &env->warmup_s))
				return 2;
			env->warmup_set = true;
			break;
		case 'd':
			if (parse_secs("-d", optarg, &env->duration_s))
				return 2;
			if (env->duration_s <= 0) {
				fprintf(stderr, "bpfmap-bench: -d must be more than 0\n");
				return 2;
			}
			env->duration_set = true;
			break;
		case 'p':
			if (parse_u32("-p", optarg, &n))
				return 2;
			if (n < 1 || n > BENCH_MAX_PRODUCERS) {
				fprintf(stderr, "bpfmap-bench: -p must be 1..%d\n",
					BENCH_MAX_PRODUCERS);
				return 2;
			}
			env->producers = (int)n;
			break;
		case 'a': env->affinity = true; break;
		case 'v': env->verbose = true; break;
		case 'h': c->help = true; break;
		case 'l':
		case OPT_LIST: c->list = true; break;
		case 'q': c->quiet = true; break;
		case 'c':
			/* The selftests' flag: their map benchmarks take no consumer
			 * and refuse any other count, and so do these. */
			if (parse_u32("-c", optarg, &n))
				return 2;
			if (n) {
				fprintf(stderr, "bpfmap-bench: -c: these benchmarks take no "
						"consumers (-c 0)\n");
				return 2;
			}
			break;
		case OPT_BACKEND:
			if (!strcmp(optarg, "lib") || !strcmp(optarg, "bpfmap"))
				env->backends = BACKEND_LIB;
			else if (!strcmp(optarg, "kernel"))
				env->backends = BACKEND_KERNEL;
			else if (!strcmp(optarg, "both"))
				env->backends = BACKEND_BOTH;
			else {
				fprintf(stderr, "bpfmap-bench: --backend: lib, kernel or both\n");
				return 2;
			}
			break;
		case OPT_JSON: env->json = true; break;
		case OPT_REPORT: c->report = true; break;
		case OPT_FULL: c->full = c->report = true; break;
		case OPT_ROUNDS:
			if (parse_u32("--rounds", optarg, &n))
				return 2;
			if (n < 1 || n > REPORT_MAX_ROUNDS) {
				fprintf(stderr, "bpfmap-bench: --rounds must be 1..%d\n",
					REPORT_MAX_ROUNDS);
				return 2;
			}
			c->rounds = (int)n;
			break;
		case OPT_COMPARE:
			/* Two operands: BASE is optarg, NEW the next word. */
			if (optind >= argc) {
				fprintf(stderr, "bpfmap-bench: --compare BASE.json[,...] NEW.json[,...]\n");
				return 2;
			}
			c->compare_base = optarg;
			c->compare_new = argv[optind++];
			break;
		case OPT_PROD_AFFINITY:
			if (parse_cpus(optarg, env))
				return 2;
			break;
		case OPT_KEY_SIZE:
			if (parse_u32("--key_size", optarg, &a->key_size))
				return 2;
			if (!a->key_size) {
				fprintf(stderr, "bpfmap-bench: --key_size must be at least 1\n");
				return 2;
			}
			break;
		case OPT_VALUE_SIZE:
			if (parse_u32("--value_size", optarg, &a->value_size))
				return 2;
			if (!a->value_size) {
				fprintf(stderr, "bpfmap-bench: --value_size must be at least 1\n");
				return 2;
			}
			break;
		case OPT_MAX_ENTRIES:
			if (parse_u32("--max_entries", optarg, &a->max_entries))
				return 2;
			if (!a->max_entries) {
				fprintf(stderr, "bpfmap-bench: --max_entries must be at least 1\n");
				return 2;
			}
			break;
		case OPT_NR_ENTRIES:
			if (parse_u32("--nr_entries", optarg, &a->nr_entries))
				return 2;
			if (!a->nr_entries) {
				fprintf(stderr, "bpfmap-bench: --nr_entries must be at least 1\n");
				return 2;
			}
			break;
		case OPT_NR_LOOPS:
			if (parse_u32("--nr_loops", optarg, &a->nr_loops))
				return 2;
			if (!a->nr_loops) {
				fprintf(stderr, "bpfmap-bench: --nr_loops must be at least 1\n");
				return 2;
			}
			break;
		case OPT_MAP_FLAGS:
			if (parse_u32("--map_flags", optarg, &a->map_flags))
				return 2;
			a->map_flags_set = true;
			break;
		case OPT_MAP_TYPE:
			if (!strcmp(optarg, "hash"))
				a->map_type = BPFMAP_TYPE_HASH;
			else if (!strcmp(optarg, "percpu_hash"))
				a->map_type = BPFMAP_TYPE_PERCPU_HASH;
			else if (!strcmp(optarg, "lru_hash"))
				a->map_type = BPFMAP_TYPE_LRU_HASH;
			else if (!strcmp(optarg, "lru_percpu_hash"))
				a->map_type = BPFMAP_TYPE_LRU_PERCPU_HASH;
			else if (!strcmp(optarg, "rhash"))
				a->map_type = BPFMAP_TYPE_RHASH;
			else {
				fprintf(stderr, "bpfmap-bench: --map_type: hash, percpu_hash, "
						"lru_hash, lru_percpu_hash or rhash\n");
				return 2;
			}
			break;
		case OPT_PERCPU_ADD: a->percpu_add = true; break;
		case OPT_FULL_WIDTH: a->full_width_keys = true; break;
		case OPT_VIA_LOOKUP: a->via_lookup = true; break;
		case OPT_COPY_OUT: a->copy_out = true; break;
		case OPT_BULK:
			if (parse_u32("--bulk", optarg, &a->bulk))
				return 2;
			if (a->bulk < 1 || a->bulk > BENCH_MAX_BULK) {
				fprintf(stderr, "bpfmap-bench: --bulk must be 1..%d\n", BENCH_MAX_BULK);
				return 2;
			}
			break;
		case OPT_WRITER: a->writer = true; break;
		case OPT_USE_CASE:
			snprintf(a->use_case, sizeof(a->use_case), "%s", optarg);
			break;
		case OPT_PREALLOC: a->preallocated = true; break;
		case OPT_HASH:
			snprintf(a->hash, sizeof(a->hash), "%s", optarg);
			break;
		case OPT_ISA:
			snprintf(a->isa, sizeof(a->isa), "%s", optarg);
			break;
		default:
			fprintf(stderr, "Try 'bpfmap-bench --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		c->bench_name = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "bpfmap-bench: unexpected argument '%s' (one benchmark per run)\n",
			argv[optind]);
		return 2;
	}
	if (c->rounds && !c->report) {
		fprintf(stderr, "bpfmap-bench: --rounds applies to --report only\n");
		return 2;
	}
	if (!c->bench_name && env->affinity && !c->report && !c->compare_base)
		c->list = true;
	if (env->json)
		env->out = stderr;
	return 0;
}
