#!/usr/bin/env bash
# Run every test: the whole suite under AddressSanitizer + UBSan, the
# concurrency tests again under ThreadSanitizer, and the unit tests against a
# release build, the single-threaded ones also under Valgrind (warnings are
# errors in all three builds).  Ends with one summary line: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
build_failures=0
run() { # label, build config, ctest args...
	local label=$1 cfg=$2
	shift 2
	echo "== $label" | tee -a "$log"
	if ! scripts/build.sh "$cfg" >/dev/null; then
		echo "BUILD FAILED: $cfg" | tee -a "$log"
		scripts/build.sh "$cfg" 2>&1 | tail -30
		build_failures=$((build_failures + 1))
		status=1
		return
	fi
	local dir=build-$cfg
	[[ $cfg == release ]] && dir=build
	# One test per CPU: none measures time, and the concurrency tests must
	# hold however the scheduler shares the CPUs out.
	ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" "$@" 2>&1 | tee -a "$log"
	[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run "release build (+ Valgrind)" release -L "unit|valgrind"
# The unit tests again with every hash map on the chained table, which is
# the default only for maps of keys over 8 bytes under 16384 entries, and
# which most tests' 8-byte keys never reach; tests of the flat table's own
# internals skip there, saying so.
export BPFMAP_TABLE=chain
run "release build, BPFMAP_TABLE=chain (unit tests)" release -L unit
unset BPFMAP_TABLE
run "AddressSanitizer + UBSan" asan
run "ThreadSanitizer (concurrency tests)" tsan -L concurrency
echo "== libFuzzer (tests/fuzz, ${FUZZ_SECS:-60} s)" | tee -a "$log"; scripts/fuzz.sh --ci "${FUZZ_SECS:-60}" 2>&1 | tee -a "$log"; [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

passed=$(grep -cE 'Test +#[0-9]+: .* +Passed' "$log")
failed=$(grep -cE 'Test +#[0-9]+: .*\*\*\*(Failed|Exception|Timeout)|Test +#[0-9]+: .*(Not Run|SEGFAULT|Child aborted)' "$log")
skipped=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped' "$log")
failed=$((failed + build_failures))
if ((failed)); then status=1; fi
echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $status
