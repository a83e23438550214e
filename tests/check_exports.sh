#!/usr/bin/env bash
# The shared library must export exactly the functions declared in bpfmap.h.
set -euo pipefail
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
declared=$(grep -oE '\bbpfmap_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
stray=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [[ -n $stray ]]; then echo "exported but not in bpfmap.h: $stray"; exit 1; fi
if [[ -n $missing ]]; then echo "declared but not exported: $missing"; exit 1; fi
echo "exports OK: $(echo "$exported" | wc -l) symbols, all declared in bpfmap.h"
