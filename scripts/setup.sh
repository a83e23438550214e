#!/usr/bin/env bash
# README command one: install what is missing, build everything (release),
# then print the benchmark report (bpfmap against the running kernel's maps).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh release
if [[ -x build/bpfmap-bench ]]; then
	exec build/bpfmap-bench --report "$@"
fi
echo "setup: built build/src/libbpfmap.so and build/src/libbpfmap.a (bpfmap-bench is not part of this checkout)" >&2
