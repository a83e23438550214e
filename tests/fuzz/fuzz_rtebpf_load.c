// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer harness for libbpfmap-rtebpf's loader: each input is taken as a
 * BPF ELF object and loaded onto three maps, section by section as the
 * object names them, so that the ELF reader, the relocations, the map
 * dataflow and the error messages see malformed objects and odd programs.
 * A load must either succeed or fail with EINVAL/ENOMEM and a terminated
 * message; nothing it loads is run (rte_bpf's validator does not track
 * NULL, so a program it accepts may crash by design).  Seeds: the BPF
 * objects the build makes (scripts/fuzz.sh --rtebpf SECONDS runs it so).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpfmap_rtebpf.h>

static struct bpfmap_rtebpf_map maps[3];

static void make_maps(void)
{
	maps[0] = (struct bpfmap_rtebpf_map){
		"small", bpfmap_create(BPFMAP_TYPE_HASH, "small", 4, 8, 16, NULL)
	};
	maps[1] = (struct bpfmap_rtebpf_map){
		"pcpu", bpfmap_create(BPFMAP_TYPE_PERCPU_HASH, "pcpu", 4, 8, 16, NULL)
	};
	maps[2] = (struct bpfmap_rtebpf_map){
		"flows", bpfmap_create(BPFMAP_TYPE_LRU_HASH, "flows", 16, 24, 64, NULL)
	};
	for (int i = 0; i < 3; i++)
		if (!maps[i].map)
			abort();
}

static void load(const uint8_t *data, size_t size, const char *section)
{
	char log[2048];
	BPFMAP_RTEBPF_OPTS(opts, .section = section, .ctx_size = 1544, .log_buf = log,
			   .log_size = sizeof(log));
	struct bpfmap_rtebpf_prog *prog;

	memset(log, 'X', sizeof(log));
	errno = 0;
	prog = bpfmap_rtebpf_load(data, size, maps, 3, &opts);
	if (prog) {
		bpfmap_rtebpf_free(prog);
		return;
	}
	if ((errno != EINVAL && errno != ENOMEM) || !memchr(log, '\0', sizeof(log)) ||
	    (errno == EINVAL && !log[0]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sections[] = { NULL, "rte", "xdp", "rte/helpers", "rte/single",
						"rte/ambiguous" };

	if (!maps[0].map)
		make_maps();
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		load(data, size, sections[i]);
	return 0;
}
