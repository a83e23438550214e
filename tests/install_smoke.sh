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
	BPFMAP_CREATE_OPTS(dflt); /* no designators: -pedantic clean */
	BPFMAP_BATCH_OPTS(batch);
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, "smoke", 4, 8, 16, &opts);
	unsigned k = 1;
	unsigned long long v = 42, out = 0;
	if (!m || bpfmap_update_elem(m, &k, &v, BPFMAP_ANY) || bpfmap_lookup_elem(m, &k, &out) || out != 42)
		return 1;
	if (dflt.lock_off != -1 || dflt.sz != sizeof(dflt) || batch.sz != sizeof(batch))
		return 1;
	bpfmap_free(m);
	puts("consumer OK");
	return 0;
}
C
cc -std=c11 -Wall -Wextra -pedantic -Werror "$prefix/consumer.c" -o "$prefix/dyn" $(pkg-config --cflags --libs bpfmap)
LD_LIBRARY_PATH=$(pkg-config --variable=libdir bpfmap) "$prefix/dyn"
libdir=$(pkg-config --variable=libdir bpfmap)
# static SRC OUT: SRC linked against the installed archive.
static() {
	cc -std=c11 -Wall -Wextra -pedantic -Werror "$1" -o "$2" $(pkg-config --cflags bpfmap) \
		"$libdir/libbpfmap.a" $(pkg-config --libs --static liburcu-bp libxxhash) -lpthread
}
static "$prefix/consumer.c" "$prefix/static"
"$prefix/static"

# The installed archives define nothing global but the API: a consumer's
# own count_init() and cpu_possible() neither clash with the library's
# internal ones nor take their calls.
for a in "$libdir"/libbpfmap*.a; do
	stray=$(nm "$a" | awk '$2 ~ /^[TDBRVWG]$/ && $3 !~ /^bpfmap_/ {print $3}')
	if [[ -n $stray ]]; then
		echo "$(basename "$a") defines internal symbols: $(echo "$stray" | head -5)" >&2
		exit 1
	fi
done
cat > "$prefix/clash.c" <<'C'
#include <bpfmap.h>
#include <stdio.h>
int count_init(void) { return 7; }
int cpu_possible(void) { return 1000; }
int main(void)
{
	int n = bpfmap_num_possible_cpus();
	if (count_init() != 7 || n <= 0 || n >= 1000)
		return 1;
	puts("clash consumer OK");
	return 0;
}
C
static "$prefix/clash.c" "$prefix/clash"
"$prefix/clash"

# C++ consumers: the option macros with C++20's designated initializers
# (in declaration order; the defaults come from the structs), -Werror clean.
if command -v c++ >/dev/null; then
	cat > "$prefix/cxx.cpp" <<'C'
#include <bpfmap.h>
#include <cstdio>
struct val { unsigned long long a; struct bpfmap_spin_lock lock; unsigned pad; };
int main()
{
	BPFMAP_CREATE_OPTS(plain, .map_flags = BPFMAP_F_NO_PREALLOC);
	BPFMAP_CREATE_OPTS(locked, .lock_off = 8);
	BPFMAP_BATCH_OPTS(batch, .elem_flags = BPFMAP_F_LOCK);
	BPFMAP_CREATE_OPTS(dflt);
	if (plain.lock_off != -1 || plain.sz != sizeof(plain) || batch.sz != sizeof(batch) ||
	    dflt.lock_off != -1)
		return 1;
	struct bpfmap *m = bpfmap_create(BPFMAP_TYPE_HASH, "cxx", 4, sizeof(val), 16, &locked);
	if (!m || bpfmap_get_lock_off(m) != 8)
		return 2;
	bpfmap_free(m);
	std::puts("c++ consumer OK");
	return 0;
}
C
	c++ -std=c++20 -Wall -Wextra -pedantic -Werror "$prefix/cxx.cpp" -o "$prefix/cxx" \
		$(pkg-config --cflags --libs bpfmap)
	LD_LIBRARY_PATH=$libdir "$prefix/cxx"
else
	echo "skipped the C++ consumer: no c++ compiler"
fi

# dlclose() leaves the library loaded (and liburcu-bp with it): a thread that
# had used it crashed at its exit after an unload.
cat > "$prefix/dl.c" <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static pthread_barrier_t used, closed;
static void *worker(void *h)
{
	void (*lock_fn)(void) = (void (*)(void))dlsym(h, "bpfmap_read_lock");
	void (*unlock_fn)(void) = (void (*)(void))dlsym(h, "bpfmap_read_unlock");

	lock_fn();
	unlock_fn();
	pthread_barrier_wait(&used);
	pthread_barrier_wait(&closed); /* then exits, after the dlclose */
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t;
	void *h = dlopen(argv[1], RTLD_NOW);

	(void)argc;
	if (!h || !dlsym(h, "bpfmap_read_lock"))
		return 1;
	pthread_barrier_init(&used, NULL, 2);
	pthread_barrier_init(&closed, NULL, 2);
	pthread_create(&t, NULL, worker, h);
	pthread_barrier_wait(&used);
	if (dlclose(h))
		return 2;
	pthread_barrier_wait(&closed);
	pthread_join(t, NULL);
	puts("dlclose consumer OK");
	return 0;
}
C
cc -std=gnu11 -Wall -Wextra -Werror "$prefix/dl.c" -o "$prefix/dl" -ldl -lpthread
"$prefix/dl" "$libdir/libbpfmap.so.0"

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
	BPFMAP_RTEBPF_OPTS(opts); /* no designators: -pedantic clean */
	if (!syms || n < 196 || opts.sz != sizeof(opts))
		return 1;
	bpfmap_rtebpf_syms_free(syms);
	bpfmap_free(m);
	puts("rtebpf consumer OK");
	return 0;
}
C
	cc -std=c11 -Wall -Wextra -pedantic -Werror "$prefix/rte_consumer.c" -o "$prefix/rte_dyn" \
		$(pkg-config --cflags --libs bpfmap-rtebpf)
	LD_LIBRARY_PATH=$(pkg-config --variable=libdir bpfmap) "$prefix/rte_dyn"
fi
