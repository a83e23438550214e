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
