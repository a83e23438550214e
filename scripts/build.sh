#!/usr/bin/env bash
# Build one configuration: scripts/build.sh [release|asan|tsan] -> build/, build-asan/, build-tsan/
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=${1:-release}
case $cfg in
release) dir=build; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
# Sanitizer builds at -O1, the level both sanitizers' manuals advise: at
# -O0 the ASan stage of scripts/test.sh took twice as long.
asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1"
	-DBPFMAP_SANITIZE=address) ;;
tsan) dir=build-tsan; args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1"
	-DBPFMAP_SANITIZE=thread) ;;
*) echo "usage: $0 [release|asan|tsan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -DBPFMAP_BUILD_TESTS=ON -DBPFMAP_WERROR=ON "${args[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
