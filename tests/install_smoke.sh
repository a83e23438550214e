#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then build a consumer with
# pkg-config against it, link it both dynamically and statically, and run it.
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch)/pkgconfig
cat > "$prefix/consumer.c" <<'C'
#include <bpfmap.h>
#include <stdio.h>
int main(void)
{
	BPFMAP_CREATE_OPTS(opts, .map_flags = BPFMAP_F_NO_PREALLOC);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, "smoke", 4, 8, 16, &opts);
	unsigned k = 1;
	unsigned long long v = 42, out = 0;
	if (!m || bpfmap_update_elem(m, &k, &v, BPFMAP_ANY) || bpfmap_lookup_elem(m, &k, &out) || out != 42)
		return 1;
	bpfmap_free(m);
	puts("consumer OK");
	return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror "$prefix/consumer.c" -o "$prefix/dyn" $(pkg-config --cflags --libs bpfmap)
LD_LIBRARY_PATH=$(pkg-config --variable=libdir bpfmap) "$prefix/dyn"
cc -std=c11 -Wall -Wextra -Werror "$prefix/consumer.c" -o "$prefix/static" \
	$(pkg-config --cflags bpfmap) "$(pkg-config --variable=libdir bpfmap)/libbpfmap.a" \
	$(pkg-config --libs --static liburcu-bp libxxhash) -lpthread
"$prefix/static"

# The optional rte_bpf component, where it was built.
if [[ -f $prefix/include/bpfmap_rtebpf.h ]]; then
	cat > "$prefix/rte_consumer.c" <<'C'
#include <bpfmap_rtebpf.h>
#include <stdio.h>
int main(void)
{
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, "smoke", 4, 8, 16, NULL);
	struct bpfmap_rtebpf_map maps[] = { { "smoke", m } };
	unsigned n = 0;
	struct rte_bpf_xsym *syms = bpfmap_rtebpf_syms(maps, 1, &n);
	if (!syms || n < 196)
		return 1;
	bpfmap_rtebpf_syms_free(syms);
	bpfmap_free(m);
	puts("rtebpf consumer OK");
	return 0;
}
C
	cc -std=c11 -Wall -Wextra -Werror "$prefix/rte_consumer.c" -o "$prefix/rte_dyn" \
		$(pkg-config --cflags --libs bpfmap-rtebpf)
	LD_LIBRARY_PATH=$(pkg-config --variable=libdir bpfmap) "$prefix/rte_dyn"
fi
