#!/usr/bin/env bash
# Fuzz the maps: build the libFuzzer harness tests/fuzz/fuzz_map_ops.c with
# clang, AddressSanitizer and UBSan (library sources instrumented too) into
# build-fuzz/, then run it.
#
#   scripts/fuzz.sh [SECONDS] [libFuzzer flags...]   run (default 60 s; 600 for a long run)
#   scripts/fuzz.sh --merge                         minimise build-fuzz/corpus into tests/fuzz/corpus
#   scripts/fuzz.sh --build                         build only
#   scripts/fuzz.sh --ci [SECONDS]                  the bounded run of scripts/test.sh
#   scripts/fuzz.sh --rtebpf [SECONDS]              fuzz libbpfmap-rtebpf's loader instead
#                                                   (tests/fuzz/fuzz_rtebpf_load.c; needs DPDK)
#
# The run starts from the committed corpus (tests/fuzz/corpus, read only) and
# keeps what it finds in build-fuzz/corpus (or $FUZZ_CORPUS); a failing input is written to
# build-fuzz/artifacts/ (replay it with build-fuzz/tests/fuzz/fuzz_map_ops FILE,
# and FUZZ_TRACE=1 for the operation log).  Exits 77 with "skipped: why" when
# clang or libFuzzer (Debian: clang-14, libclang-rt-14-dev) is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-fuzz

skip() {
	echo "fuzz: skipped: $*" >&2
	exit 77
}

# --ci SECONDS: the bounded run of scripts/test.sh.  Quiet; ends with one line
# in ctest's format ("Test #1: fuzz_map_ops ... Passed|***Failed|***Skipped")
# so that test.sh's summary counts it; exits 0 when skipped.
if [[ ${1:-} == --ci ]]; then
	secs=${2:-60}
	ci_log=$dir/fuzz-ci.log
	mkdir -p "$dir"
	result() { printf '    Test #1: fuzz_map_ops (libFuzzer, %ss) ..........   %s\n' "$secs" "$1"; }
	# A fresh working corpus: the run starts from the committed seeds only,
	# so its length does not grow with what earlier runs kept.
	rm -rf "$dir/corpus-ci"
	set +e
	FUZZ_CORPUS=$dir/corpus-ci "$0" "$secs" >"$ci_log" 2>&1
	rc=$?
	set -e
	case $rc in
	0)
		grep -E '^#[0-9]+[[:space:]]+DONE' "$ci_log" | tail -1 | sed 's/^/fuzz: /' || true
		grep -E 'average_exec_per_sec' "$ci_log" | sed 's/^stat::/fuzz: /' || true
		result Passed
		;;
	77)
		grep 'skipped:' "$ci_log" || true
		result '***Skipped'
		;;
	*)
		grep -E 'MISMATCH|^  |ERROR|SUMMARY|Test unit written' "$ci_log" | head -20 || true
		echo "fuzz: full log in $ci_log"
		result '***Failed'
		exit 1
		;;
	esac
	exit 0
fi

cc=""
for c in clang clang-16 clang-15 clang-14; do
	if command -v "$c" >/dev/null; then cc=$(command -v "$c"); break; fi
done
[[ -n $cc ]] || skip "no clang found (install clang and libclang-rt-14-dev: scripts/deps.sh)"
probe=$(mktemp -d)
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n > 1 && d[0] == 1; }' >"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>/dev/null; then
	rm -rf "$probe"
	skip "$cc cannot link -fsanitize=fuzzer,address (libFuzzer runtime missing: install libclang-rt-14-dev)"
fi
rm -rf "$probe"

build() {
	CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DBPFMAP_SANITIZE=address \
		-DBPFMAP_FUZZ=ON -DBPFMAP_BUILD_BENCH=OFF -DBPFMAP_BUILD_TESTS=ON -DBPFMAP_WERROR=ON \
		-DCMAKE_C_FLAGS="-O1 -fsanitize=fuzzer-no-link" >/dev/null
	cmake --build "$dir" -j"$(nproc)" --target fuzz_map_ops >/dev/null
}

bin=$dir/tests/fuzz/fuzz_map_ops
mkdir -p "$dir"
case ${1:-} in
--rtebpf)
	# Seeds: the BPF objects the build makes; finds go to build-fuzz/rtebpf-corpus.
	secs=${2:-60}
	build
	cmake --build "$dir" -j"$(nproc)" --target fuzz_rtebpf_load flow_count_bpf \
		rtebpf_test_objs >/dev/null 2>&1 ||
		skip "fuzz_rtebpf_load not built (libbpfmap-rtebpf needs DPDK's rte_bpf)"
	mkdir -p "$dir/rtebpf-seeds" "$dir/rtebpf-corpus" "$dir/artifacts"
	cp "$dir"/examples/*.bpf.o "$dir"/tests/*.bpf.o "$dir/rtebpf-seeds/"
	exec "$dir/tests/fuzz/fuzz_rtebpf_load" -max_total_time="$secs" -timeout=20 \
		-error_exitcode=1 -timeout_exitcode=1 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$dir/artifacts/" "$dir/rtebpf-corpus" "$dir/rtebpf-seeds"
	;;
--build)
	build
	echo "fuzz: built $bin" >&2
	exit 0
	;;
--merge)
	# Keep the corpus at a few dozen inputs: -merge=1 (edges only) first,
	# then each survivor's own coverage and a greedy cover of every edge.
	build
	mkdir -p "$dir/corpus"
	work=$dir/merge && rm -rf "$work" && mkdir -p "$work/merged" "$work/ctl"
	"$bin" -merge=1 -use_counters=0 -use_value_profile=0 "$work/merged" tests/fuzz/corpus \
		"$dir/corpus" 2>&1 | grep 'MERGE-OUTER: [0-9]* new' >&2
	n=0
	for f in "$work/merged"/*; do
		printf '1\n0\n%s\n' "$f" >"$work/ctl/$n"
		"$bin" -merge_inner=1 -use_counters=0 -use_value_profile=0 \
			-merge_control_file="$work/ctl/$n" >/dev/null 2>&1 || true
		n=$((n + 1))
	done
	# Greedy set cover: repeatedly take the input that adds most edges.
	keep=$(awk '
		FNR == 3 { file[FILENAME] = $0 }
		$1 == "COV" { for (i = 3; i <= NF; i++) { has[FILENAME, $i] = 1; pcs[FILENAME] = pcs[FILENAME] " " $i } }
		END {
			for (;;) {
				best = ""; gain = 0
				for (f in pcs) {
					g = 0; m = split(pcs[f], e, " ")
					for (i = 1; i <= m; i++) if (!(e[i] in done)) g++
					if (g > gain) { gain = g; best = f }
				}
				if (best == "") break
				m = split(pcs[best], e, " ")
				for (i = 1; i <= m; i++) done[e[i]] = 1
				print file[best]; delete pcs[best]
			}
		}' "$work/ctl"/*)
	rm -f tests/fuzz/corpus/*
	for f in $keep; do cp "$f" tests/fuzz/corpus/; done
	echo "fuzz: tests/fuzz/corpus now holds $(ls tests/fuzz/corpus | wc -l) inputs" >&2
	exit 0
	;;
esac

secs=${1:-60}
[[ $secs =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [libFuzzer flags...] | --merge | --build" >&2; exit 2; }
shift || true
build
corpus=${FUZZ_CORPUS:-$dir/corpus}
mkdir -p "$corpus" "$dir/artifacts"
echo "fuzz: running $bin for ${secs}s (corpus $corpus, seeds tests/fuzz/corpus)" >&2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# -timeout: an input runs in milliseconds; seconds mean a hang.
# -max_len/-len_control: operation sequences need room (an operation is 2-60
# bytes); libFuzzer's default starts near 4 bytes and grows slowly.
# -error_exitcode/-timeout_exitcode: libFuzzer's own defaults include 77,
# which --ci reads as "skipped" (a crash once passed CI as a skip).
exec "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-max_len=1024 -len_control=20 \
	-artifact_prefix="$dir/artifacts/" "$@" "$corpus" tests/fuzz/corpus
