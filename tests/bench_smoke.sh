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
    if obj.get("bench") == "report-ratio":
        # the report's rounds of one bpfmap/kernel row
        for k in ("row", "rounds"):
            assert k in obj, f"line {n} lacks {k}"
        continue
    if obj.get("bench") == "report-target":
        # the report's verdict on one target of issue #4
        for k in ("target", "bound", "goal", "cells", "cells_met"):
            assert k in obj, f"line {n} lacks {k}"
        continue
    if obj.get("bench") == "bpf-hashmap-churn":
        # fresh against churned, ns per op (batch: ms per pass)
        for k in ("backend", "key_size", "max_entries", "pairs", "op", "churned"):
            assert k in obj, f"line {n} lacks {k}"
        assert obj["churned"] > 0, f"line {n}: a wrong answer"
        continue
    if obj.get("bench") == "lru-hit":
        # hit ratios of a replayed Zipf stream, beside an exact LRU's
        for k in ("backend", "stream", "map_type", "exact_lru"):
            assert k in obj, f"line {n} lacks {k}"
        assert 0 < obj["exact_lru"] < 1, f"line {n}: exact LRU ratio out of range"
        assert "error" in obj or 0 < obj["hit_ratio"] < 1, f"line {n}: no hit ratio"
        continue
    if obj.get("bench") == "rhash-grow":
        # RHASH (and a preallocated HASH) grown to nr_entries, a reader on
        # another CPU: no lookup of a present key may miss
        for k in ("backend", "map_type", "nr_entries", "insert_s", "lookups", "misses",
                  "empty_loop_max_gap_us"):
            assert k in obj, f"line {n} lacks {k}"
        assert obj["misses"] == 0, f"line {n}: a lookup missed a present key"
        continue
    if obj.get("bench") == "rhash-mem":
        for k in ("backend", "mem_1k_bytes", "peak_bytes_per_elem", "bytes_per_elem_1m"):
            assert k in obj, f"line {n} lacks {k}"
        continue
    if obj.get("bench") == "rte-bpf":
        # packets/s of one program: rte_bpf's JIT and interpreter, C, the kernel's XDP
        for k in ("backend", "column", "program", "packets", "flows", "producers", "rounds"):
            assert k in obj, f"line {n} lacks {k}"
        assert "ns_per_pkt" in obj or "error" in obj, f"line {n}: no figure"
        # bpfmap's columns always run (the JIT where rte_bpf has one); the kernel's say why not
        assert (obj["backend"] == "kernel" or "ns_per_pkt" in obj or
                "no JIT" in obj.get("error", "")), f"line {n}: {obj.get('error')}"
        if obj["column"] == "kernel" and "ns_per_pkt" in obj:
            for k in ("repeat", "ns_raw", "ns_overhead", "jit_ratio"):
                assert k in obj, f"line {n} lacks {k}"
        continue
    if obj.get("bench") == "str-kfuncs":
        # ns per call per (function, scenario) cell
        for k in ("backend", "function", "table", "kfunc", "scenario", "bytes", "producers"):
            assert k in obj, f"line {n} lacks {k}"
        assert "ns_per_op" in obj or "error" in obj, f"line {n}: no figure"
        continue
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
run "list (-l, the selftests' flag)" -l >/dev/null || true
for want in bpf-hashmap-lookup bpf-hashmap-full-update bpf-hashmap-overwrite htab-mem hash \
	bpf-rhashmap-lookup bpf-rhashmap-full-update rhtab-mem str-kfuncs lru-hit \
	rte-bpf; do
	grep -qx "$want" <<<"$names" || fail "-a does not list $want"
done

# 2. Every benchmark, both backends, with --json.
for name in $names; do
	case $name in
	bpf-hashmap-lookup | bpf-rhashmap-lookup)
		args=(--key_size 16 --max_entries 1000 --nr_entries 500 --nr_loops 50000 --map_flags 0x40) ;;
	hash) args=(--key_size 16) ;;
	bpf-hashmap-churn) args=(--max_entries 4096) ;;
	*) args=() ;;
	esac
	if run "$name" "${W[@]}" --json "$name" "${args[@]}"; then
		if grep -q "not available yet" "$tmp/err" "$tmp/out"; then
			cat "$tmp/err"
			continue
		fi
		check_json "$name" "$tmp/out"
		grep -q '"backend": "lib"' "$tmp/out" || fail "$name: no bpfmap cell"
		# hash: functions alone; churn: the kernel reuses deleted elements
		# at once, nothing of it waits (bench_churn.c)
		# percpu-count: the kernel's programs count without atomics
		# rhash-grow, rhash-mem: bpfmap's RHASH alone (the kernel has none)
		[[ $name == hash || $name == bpf-hashmap-churn || $name == percpu-count ||
			$name == rhash-grow || $name == rhash-mem ]] ||
			grep -q '"backend": "kernel"' "$tmp/out" ||
			fail "$name: no kernel cell"
		cat "$tmp/err"
	fi
done

# 3. Variants: the wide-key switch, lookups through bpfmap_lookup(), bulk lookups, several
# producers, each htab-mem use case.
run "lookup, full-width keys" "${W[@]}" --backend lib bpf-hashmap-lookup --key_size 32 \
	--nr_loops 50000 --full_width_keys >/dev/null
run "lookup, the selftests' -q -c 0" "${W[@]}" -q -c 0 --backend lib bpf-hashmap-lookup >/dev/null
run "lookup, tiny keys" "${W[@]}" bpf-hashmap-lookup --key_size 1 --nr_loops 50000 >/dev/null
run "lookup, via bpfmap_lookup()" "${W[@]}" --backend lib bpf-hashmap-lookup --key_size 4 \
	--nr_loops 50000 --via_lookup >/dev/null
for ks in 8 32; do
	run "lookup, copy-out view, key $ks" "${W[@]}" --backend lib bpf-hashmap-lookup \
		--key_size $ks --nr_loops 50000 --copy_out >/dev/null
done
if "$bench" "${W[@]}" --backend lib bpf-hashmap-lookup --value_size 8192 --nr_loops 50000 \
	--copy_out >"$tmp/out" 2>&1 || ! grep -q "takes values up to" "$tmp/out"; then
	fail "--copy_out measured an 8 KiB value, or failed without saying why"
fi
run "lookup, bulk 16" "${W[@]}" --backend lib bpf-hashmap-lookup --key_size 8 --nr_loops 50000 \
	--bulk 16 >/dev/null
run "lookup, bulk not dividing nr_entries" "${W[@]}" --backend lib bpf-hashmap-lookup \
	--key_size 13 --nr_entries 100 --nr_loops 50000 --bulk 7 >/dev/null
run "overwrite, -p 2 -a" "${W[@]}" -p 2 -a bpf-hashmap-overwrite >/dev/null
# --writer: a writer line per backend, its figures in the JSON; bpfmap's lookups
# must all hit (a miss is an error and exits 1), the kernel's may miss.
for wargs in "-a --key_size 8" "--key_size 32 --value_size 24 --bulk 4" "-p 2 -a --key_size 4"; do
	# shellcheck disable=SC2086
	if run "lookup --writer $wargs" "${W[@]}" --json bpf-hashmap-lookup --nr_loops 50000 --writer \
		$wargs; then
		check_json "lookup --writer" "$tmp/out"
		[[ $(grep -c '"writer_mops"' "$tmp/out") -eq 2 ]] ||
			fail "lookup --writer $wargs: no writer_mops in both JSON cells"
		[[ $(grep -c '^  writer ' "$tmp/err") -eq 2 ]] ||
			fail "lookup --writer $wargs: no writer line for both backends"
		grep -q '"backend": "lib".*"writer_errors": 0,' "$tmp/out" ||
			fail "lookup --writer $wargs: bpfmap's writer failed updates"
	fi
done
for uc in overwrite batch_add_batch_del add_del_on_diff_cpu; do
	run "htab-mem $uc" "${W[@]}" -p 2 htab-mem --use-case "$uc" >/dev/null
done
run "htab-mem preallocated" "${W[@]}" htab-mem --preallocated --value-size 64 >/dev/null

# 3a'. Flags a benchmark does not read are refused (they were ignored, and
# recorded in the JSON as if they had applied); two producers sharing one CPU
# report no total (their rates per CPU-second added up to twice the throughput).
for bad in "bpf-hashmap-full-update --nr_loops 5" "bpf-hashmap-overwrite --copy_out" \
	"bpf-hashmap-lookup --bulk 16 --copy_out" "hash --use-case overwrite" \
	"bpf-lru-full-update --hash xxh3" "bpf-hashmap-churn --isa avx2"; do
	# shellcheck disable=SC2086
	if "$bench" -w 0 -d 0.02 $bad >"$tmp/out" 2>&1 || ! grep -q "does not apply" "$tmp/out"; then
		fail "bpfmap-bench $bad: not refused"
	fi
done
if run "two producers on CPU 0" -w 0.05 -d 0.1 --backend lib --json --prod-affinity 0 -p 2 \
	bpf-hashmap-full-update && grep -q '"mops_total"' "$tmp/out"; then
	fail "two producers sharing CPU 0 reported a total"
fi

# 3b. str-kfuncs: every table and scenario, every column, in the tables and the JSON
# (with each of bpfmap's versions too); the bpfmap cells carry the target ratios.
if run "str-kfuncs --isa all" -w 0 -d 0.02 --json str-kfuncs --isa all; then
	check_json "str-kfuncs" "$tmp/out"
	for want in "scan (strnchr)" "comparison (strcmp)" "span (strcspn)" "substring (strnstr)" \
		"HTTP Host search" "Targets:" "bpfmap by instruction set"; do
		grep -qF "$want" "$tmp/err" || fail "str-kfuncs printed no '$want'"
	done
	if command -v python3 >/dev/null; then
		python3 - "$tmp/out" <<'EOF' || fail "str-kfuncs: JSON cells missing"
import json, sys
cells = [json.loads(l) for l in open(sys.argv[1])]
want = {(t, s) for t in ("scan", "comparison", "span", "substring")
        for s in ("first", "middle", "late")} | {("scan", "absent"), ("comparison", "equal"),
        ("span", "absent"), ("substring", "absent"), ("http-host", "late"), ("http-host", "absent")}
funcs = {"scan": {"memchr", "strchr"}, "comparison": {"strcmp"}, "span": {"strcspn"},
         "substring": {"strstr", "memmem"}}
for t, k in (("scan", "strnchr"), ("comparison", "strcmp"), ("span", "strcspn"),
             ("substring", "strnstr")):
    funcs[t] |= {"bpfmap_" + k, "bytewise_" + k, "bpf_" + k, "empty"}
funcs["http-host"] = funcs["substring"]
for t, s in want:
    row = [c for c in cells if c["table"] == t and c["scenario"] == s]
    got = {c["function"] for c in row}
    assert funcs[t] <= got, f"{t} {s}: no cell for {funcs[t] - got}"
    lib = [c for c in row if c["backend"] == "lib" and c.get("dispatched")]
    assert len(lib) == 1 and "ns_per_op" in lib[0] and "ratio_glibc" in lib[0], \
        f"{t} {s}: bpfmap cell"
    isas = [c for c in row if c["backend"] == "lib" and not c.get("dispatched")]
    assert isas and all("ns_per_op" in c for c in isas), f"{t} {s}: no --isa cells"
    for c in row:  # user-space columns always run; kernel ones say why when they do not
        assert c["backend"] == "kernel" or "ns_per_op" in c, \
            f"{t} {s} {c['function']}: {c.get('error')}"
        if c["backend"] == "kernel" and "ns_per_op" in c and c["function"] != "empty":
            assert "ns_raw" in c and "ns_overhead" in c, f"{t} {s}: kernel cell lacks raw/overhead"
EOF
	fi
	grep -v '^\[' "$tmp/err"
fi
run "str-kfuncs, lib only" -w 0 -d 0.01 --backend lib str-kfuncs >/dev/null

# 3c. rte-bpf (where built with DPDK's rte_bpf): every column in the table and
# the JSON on a small trace, bpfmap alone; a trace too big is refused.
if ! "$bench" -w 0 -d 0.01 rte-bpf 2>&1 | grep -q "not available yet"; then
	if run "rte-bpf, small trace" -w 0 -d 0.05 --json rte-bpf --nr_loops 256 --nr_entries 64; then
		check_json "rte-bpf" "$tmp/out"
		for want in "rte_bpf JIT " "rte_bpf interpreter" "C, flow_count_c()" \
			"kernel XDP, net of the empty run" "kernel XDP, raw" "kernel empty XDP" \
			"rte_bpf JIT / kernel XDP"; do
			grep -qF "$want" "$tmp/err" || fail "rte-bpf printed no '$want'"
		done
		[[ $(grep -c '"bench": "rte-bpf"' "$tmp/out") -eq 5 ]] ||
			fail "rte-bpf: not one JSON cell per column"
	fi
	run "rte-bpf, lib only" -w 0 -d 0.02 --backend lib rte-bpf >/dev/null
	"$bench" rte-bpf --nr_loops 100000 >/dev/null 2>"$tmp/err"
	[[ $? -eq 2 && -s $tmp/err ]] || fail "rte-bpf --nr_loops 100000 was not refused"
fi

# 4. Bad command lines fail with a message, not a crash.
for bad in "--key_size 0 bpf-hashmap-lookup" "-p 0 bpf-hashmap-lookup" "no-such-bench" \
	"--nr_entries 2000 bpf-hashmap-lookup" "-p 3 htab-mem --use-case add_del_on_diff_cpu" \
	"--bulk 0 bpf-hashmap-lookup" "--bulk 65 bpf-hashmap-lookup" "--isa nope str-kfuncs" \
	"--writer bpf-hashmap-overwrite" "--report --rounds 0" "--report --rounds 10" \
	"--rounds 3 bpf-hashmap-lookup" "--prod-affinity 4294967296 bpf-hashmap-lookup" \
	"--prod-affinity 1023 bpf-hashmap-lookup" "-c 1 bpf-hashmap-lookup"; do
	# shellcheck disable=SC2086
	"$bench" "${W[@]}" $bad >/dev/null 2>"$tmp/err"
	rc=$?
	if [[ $rc -ne 2 ]] || [[ ! -s $tmp/err ]]; then
		fail "'$bad' exited $rc (want 2 and a message)"
	fi
done

# 5. The report (tiny cells, 2 rounds) and --compare on its JSON: every row of
# issue #4 has its cells and its line under "Targets"; one JSON object per cell
# whatever the rounds, and each row's rounds in a report-ratio object.
if run "report" -w 0 -d 0.02 --report --rounds 2 --json; then
	cp "$tmp/out" "$tmp/report.json"
	check_json "report" "$tmp/report.json"
	grep -q "bpfmap / kernel:" "$tmp/err" || grep -q "kernel:" "$tmp/err" ||
		fail "report printed no kernel table"
	for want in "bytes/elem" "1M/1M" "bpfmap_lookup_bulk()" "Concurrency:" "Churn:" "Targets (issues #4" \
		"lookups, key 4 and 8 B" "lookups, key 16-64 B" "lookups, key 128-1024 B" \
		"lookups, 1M/1M, single" "lookups, 1M/1M, --bulk 16" "full update, 1 producer" \
		"overwrite, 1 producer" "bytes/elem, 8 B key + 8 B value" \
		"bytes/elem, 256 B key + 8 B value" "2 producers doing lookups vs 1" \
		"lookups with a writer vs read-only" "churn: present lookups, churned vs fresh" \
		"churn: absent, -E2BIG, batch, churned vs fresh" "targets met" "2 rounds:" \
		"rte_bpf JIT vs kernel XDP, flow_count" \
		"bpfmap / kernel, the lowest round:" "bpfmap / kernel, the highest round:"; do
		grep -qF -- "$want" "$tmp/err" || fail "report printed no '$want'"
	done
	if command -v python3 >/dev/null; then
		python3 - "$tmp/report.json" <<'EOF' || fail "report: JSON cells missing"
import json, os, sys
# The report measures 2 producers only where it may run on CPUs 0 and 1
# (bench/report.c, conc_two): not under taskset -c 0.
two_cpus = {0, 1} <= os.sched_getaffinity(0)
cells = [json.loads(l) for l in open(sys.argv[1])]
look = [c for c in cells if c["bench"] == "bpf-hashmap-lookup" and c["backend"] == "lib"]
assert {c["key_size"] for c in look} >= {4, 8, 16, 32, 64, 128, 256, 1024}, "grid key sizes"
assert any(c.get("max_entries") == 1000000 and not c.get("bulk") for c in look), "1M/1M single"
assert any(c.get("max_entries") == 1000000 and c.get("bulk") == 16 for c in look), "1M/1M bulk 16"
assert not two_cpus or any(c.get("producers") == 2 for c in look), "2 producers"
w = [c for c in look if c.get("writer")]
assert w and all("writer_mops" in c and c["writer_errors"] == 0 for c in w), "writer cell"
mem = {(c["key_size"], c["value_size"]) for c in cells
       if c["bench"] == "mem-per-elem" and c["backend"] == "lib" and "bytes_per_elem" in c}
assert len(mem) >= 6 and (8, 8) in mem, f"memory cells: {mem}"
t = [c for c in cells if c["bench"] == "report-target"]
assert len(t) >= 15, f"{len(t)} target verdicts"
for c in t:  # bpfmap-only rows are always measured
    if c["target"].startswith("2 producers") and not two_cpus:
        continue
    if c["target"].startswith(("bytes/elem", "2 producers", "lookups with a writer", "churn")):
        assert c["cells"] >= 1, f"{c['target']}: not measured"
# Rounds: one object per cell (its median round), not one per round.
seen = set()
for c in cells:
    if c["bench"] in ("report-target", "report-ratio"):
        continue
    k = tuple(str(c.get(f)) for f in ("bench", "backend", "map_type", "key_size", "value_size", "max_entries",
                                     "bulk", "writer", "tag", "producers", "op"))
    assert k not in seen, f"two JSON objects for one cell: {k}"
    seen.add(k)
churn = {(c["max_entries"], c["op"]) for c in cells if c["bench"] == "bpf-hashmap-churn"}
assert churn >= {(n, op) for n in (16384, 100000, 1000000)
                 for op in ("present", "absent", "e2big", "batch", "churn")}, f"churn cells: {churn}"
ratio = [c for c in cells if c["bench"] == "report-ratio"]
rows = {c["row"] for c in ratio}
for want in ("lookup small k=4", "lookup large k=1024", "lookup 1M/1M k=8",
             "lookup 1M/1M k=8 --bulk 16", "full update", "overwrite",
             "rte_bpf JIT vs kernel XDP, flow_count"):
    assert want in rows, f"no report-ratio object for {want}"
for c in ratio:
    assert c["rounds"] == 2, f"{c['row']}: {c['rounds']} rounds"
    if "ratio_median" in c:  # both backends ran
        assert c["ratio_min"] <= c["ratio_median"] <= c["ratio_max"], f"{c['row']}: {c}"
EOF
	fi
	grep -v '^\[' "$tmp/err"
	if run "compare" --compare "$tmp/report.json" "$tmp/report.json"; then
		grep -q "Change:" "$tmp/out" || fail "--compare printed no Change table"
		grep -qF "[bytes/elem]" "$tmp/out" || fail "--compare printed no memory table"
		grep -qF "the writer [M updates/s]" "$tmp/out" || fail "--compare printed no writer table"
	fi
fi

# 6. --compare on str-kfuncs cells (ns per call).
if run "str-kfuncs for --compare" -w 0 -d 0.01 --json str-kfuncs; then
	cp "$tmp/out" "$tmp/str.json"
	if run "compare str-kfuncs" --compare "$tmp/str.json" "$tmp/str.json"; then
		grep -qF "str-kfuncs: scan (strnchr) [ns/call]" "$tmp/out" ||
			fail "--compare printed no str-kfuncs table"
	fi
fi

# 6b. --compare keeps lru-hit's two streams apart, compares its hit ratios,
# and takes no NaN into a median (it made the median depend on the order).
lru_cell() { # STREAM MOPS HIT
	printf '{"bench": "lru-hit", "backend": "lib", "stream": "%s", "map_type": "lru_hash", ' "$1"
	printf '"max_entries": 1000, "lookups": 100000, "producers": 1, "hit_ratio": %s, "mops": %s}\n' \
		"$3" "$2"
}
upd_cell() { # MOPS
	printf '{"bench": "bpf-hashmap-full-update", "backend": "lib", "map_type": "hash", '
	printf '"key_size": 4, "value_size": 8, "max_entries": 1000, "nr_entries": 1000, '
	printf '"map_flags": 0, "producers": 1, "mops": %s}\n' "$1"
}
{ lru_cell zipf 20 0.7; lru_cell "zipf + scan" 10 0.6; upd_cell NaN; upd_cell 10; upd_cell 12; } \
	>"$tmp/lb.json"
{ lru_cell zipf 40 0.7; lru_cell "zipf + scan" 5 0.3; upd_cell 12; } >"$tmp/ln.json"
if run "compare lru-hit" --compare "$tmp/lb.json" "$tmp/ln.json"; then
	grep -qF "zipf + scan stream" "$tmp/out" || fail "--compare merged lru-hit's streams"
	grep -qF -- "-50.00%" "$tmp/out" || fail "--compare lost the scan stream's halving"
	grep -qF ": hit ratio" "$tmp/out" || fail "--compare printed no hit ratio table"
	grep -qF "+9.09%" "$tmp/out" || fail "--compare's median of 10, NaN, 12 was not 11"
fi

# 7. --compare of several runs per side: each cell is the median of its runs.
if [[ -s "$tmp/report.json" ]]; then
	python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
cell = next(json.loads(l) for l in open(f"{tmp}/report.json")
            if l.startswith("{") and '"bpf-hashmap-lookup"' in l and '"mops"' in l)
for name, mops in (("b1", 1.0), ("b2", 2.0), ("b3", 9.0), ("n1", 4.0)):
    with open(f"{tmp}/{name}.json", "w") as f:
        f.write(json.dumps(dict(cell, mops=mops)) + "\n")
EOF
	if run "compare medians" --compare "$tmp/b1.json,$tmp/b2.json,$tmp/b3.json" "$tmp/n1.json"; then
		grep -qF "Medians of up to 3 baseline and 1 new runs" "$tmp/out" ||
			fail "--compare did not say it took medians"
		grep -qF "+100.00%" "$tmp/out" ||
			fail "--compare of runs 1, 2, 9 against 4 is not +100% (median 2)"
	fi
fi

if ((failures)); then
	echo "bench_smoke: $failures failure(s)" >&2
	exit 1
fi
echo "bench_smoke: all passed"
