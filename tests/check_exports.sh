#!/usr/bin/env bash
# The shared library must export exactly the functions declared in its
# header: check_exports.sh LIB HEADER [PREFIX] (PREFIX: bpfmap_, or
# bpfmap_rtebpf_ for the component, whose header names bpfmap.h's functions
# in its comments).
set -euo pipefail
lib=$1 header=$2 prefix=${3:-bpfmap_}
# Every function under the library's version node (type A: the node's own
# symbol, skipped); an unversioned export would be a linker script gone.
syms=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}')
unversioned=$(grep -v '@@' <<<"$syms" || true)
if [[ -n $unversioned ]]; then echo "exported without a version: $unversioned"; exit 1; fi
exported=$(sed 's/@.*//' <<<"$syms" | sort -u)
declared=$(grep -oE "\\b${prefix}[a-z0-9_]+\\(" "$header" | tr -d '(' | sort -u)
stray=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [[ -n $stray ]]; then echo "exported but not in $(basename "$header"): $stray"; exit 1; fi
if [[ -n $missing ]]; then echo "declared but not exported: $missing"; exit 1; fi
echo "exports OK: $(echo "$exported" | wc -l) symbols, all declared in $(basename "$header")"
