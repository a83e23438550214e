#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Smoke test of bpfmap-bench: every benchmark it lists runs for a fraction of
# a second on both backends and exits 0; --json prints one valid JSON object
# per cell; the report and --compare run.  No timing is checked: this only
# keeps the tool from rotting.  Where BPF is not permitted the kernel cells say
# why and the rest still has to pass.
#
# usage: tests/bench_smoke.sh path/to/bpfmap-bench
set -uo pipefail

bench=${1:?usage: $0 path/to/bpfmap-bench}
[[ -x $bench ]] || { echo "bench_smoke: $bench is not executable" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
W=(-w 0 -d 0.1)

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# run NAME ARGS...: must exit 0; output kept in $tmp/out, JSON in $tmp/json.
run() {
	local what=$1
	shift
	echo "== $what: bpfmap-bench $*"
	if ! "$bench" "$@" >"$tmp/out" 2>"$tmp/err"; then
		fail "$what exited $? ($*)"
		sed 's/^/    /' "$tmp/err" "$tmp/out" >&2
		return 1
	fi
	cat "$tmp/out"
	return 0
}

# JSON lines must parse (python3 when present; else our own reader via
# --compare, which needs at least one measured cell to match itself).
check_json() {
	local what=$1 file=$2
	if [[ ! -s $file ]]; then
		fail "$what: --json printed nothing"
		return
	fi
	if command -v python3 >/dev/null; then
		python3 - "$file" <<'EOF' || fail "$what: invalid JSON"
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    obj = json.loads(line)
    assert isinstance(obj, dict), f"line {n} is not an object"
    for k in ("bench", "backend", "map_type", "producers"):
        assert k in obj, f"line {n} lacks {k}"
    assert ("mops" in obj or "bytes_per_elem" in obj or "error" in obj), f"line {n}: no figure"
EOF
	fi
}

# 1. The list: `-a` alone and --list.
run "list (-a)" -a || true
names=$(sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p' "$tmp/out")
[[ -n $names ]] || fail "-a listed no benchmark"
run "list (--list)" --list >/dev/null || true
for want in bpf-hashmap-lookup bpf-hashmap-full-update bpf-hashmap-overwrite htab-mem hash \
	bpf-rhashmap-lookup bpf-rhashmap-full-update rhtab-mem str-kfuncs lru-hit; do
	grep -qx "$want" <<<"$names" || fail "-a does not list $want"
done

# 2. Every benchmark, both backends, with --json.
for name in $names; do
	case $name in
	bpf-hashmap-lookup | bpf-rhashmap-lookup)
		args=(--key_size 16 --max_entries 1000 --nr_entries 500 --nr_loops 50000 --map_flags 0x40) ;;
	hash) args=(--key_size 16) ;;
	*) args=() ;;
	esac
	if run "$name" "${W[@]}" --json "$name" "${args[@]}"; then
		if grep -q "not available yet" "$tmp/err" "$tmp/out"; then
			cat "$tmp/err"
			continue
		fi
		check_json "$name" "$tmp/out"
		grep -q '"backend": "lib"' "$tmp/out" || fail "$name: no bpfmap cell"
		[[ $name == hash ]] || grep -q '"backend": "kernel"' "$tmp/out" ||
			fail "$name: no kernel cell"
		cat "$tmp/err"
	fi
done

# 3. Variants: the wide-key switch, bulk lookups, several producers, each htab-mem use case.
run "lookup, full-width keys" "${W[@]}" --backend lib bpf-hashmap-lookup --key_size 32 \
	--nr_loops 50000 --full_width_keys >/dev/null
run "lookup, tiny keys" "${W[@]}" bpf-hashmap-lookup --key_size 1 --nr_loops 50000 >/dev/null
run "lookup, bulk 16" "${W[@]}" --backend lib bpf-hashmap-lookup --key_size 8 --nr_loops 50000 \
	--bulk 16 >/dev/null
run "lookup, bulk not dividing nr_entries" "${W[@]}" --backend lib bpf-hashmap-lookup \
	--key_size 13 --nr_entries 100 --nr_loops 50000 --bulk 7 >/dev/null
run "overwrite, -p 2 -a" "${W[@]}" -p 2 -a bpf-hashmap-overwrite >/dev/null
for uc in overwrite batch_add_batch_del add_del_on_diff_cpu; do
	run "htab-mem $uc" "${W[@]}" -p 2 htab-mem --use-case "$uc" >/dev/null
done
run "htab-mem preallocated" "${W[@]}" htab-mem --preallocated --value-size 64 >/dev/null

# 4. Bad command lines fail with a message, not a crash.
for bad in "--key_size 0 bpf-hashmap-lookup" "-p 0 bpf-hashmap-lookup" "no-such-bench" \
	"--nr_entries 2000 bpf-hashmap-lookup" "-p 3 htab-mem --use-case add_del_on_diff_cpu" \
	"--bulk 0 bpf-hashmap-lookup" "--bulk 65 bpf-hashmap-lookup"; do
	# shellcheck disable=SC2086
	"$bench" "${W[@]}" $bad >/dev/null 2>"$tmp/err"
	rc=$?
	if [[ $rc -ne 2 ]] || [[ ! -s $tmp/err ]]; then
		fail "'$bad' exited $rc (want 2 and a message)"
	fi
done

# 5. The report (tiny cells) and --compare on its JSON.
if run "report" -w 0 -d 0.02 --report --json; then
	cp "$tmp/out" "$tmp/report.json"
	check_json "report" "$tmp/report.json"
	grep -q "bpfmap / kernel:" "$tmp/err" || grep -q "kernel:" "$tmp/err" ||
		fail "report printed no kernel table"
	grep -q "bytes/elem" "$tmp/err" || fail "report printed no memory line"
	grep -v '^\[' "$tmp/err"
	if run "compare" --compare "$tmp/report.json" "$tmp/report.json"; then
		grep -q "Change:" "$tmp/out" || fail "--compare printed no Change table"
	fi
fi

if ((failures)); then
	echo "bench_smoke: $failures failure(s)" >&2
	exit 1
fi
echo "bench_smoke: all passed"
