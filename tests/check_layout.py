#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The source layout that docs/ARCHITECTURE.md describes, checked on the
built objects of libbpfmap (their symbols say who calls whom):
  1. no two source files depend on each other in a circle;
  2. core/ names no table: no core object uses a symbol that tables/ defines;
  3. no source file is over 700 lines, except the string template.
usage: check_layout.py SRC_DIR OBJECT...   (the objects of src/CMakeLists.txt)"""
import os
import subprocess
import sys

MAX_LINES = 700
TEMPLATE = os.path.join("strings", "str_impl.h")


def source_of(obj):
    # CMake names an object after its source: .../bpfmap_objs.dir/tables/flat.c.o
    parts = obj.split(os.sep)
    i = max(j for j, p in enumerate(parts) if p.endswith(".dir"))
    return os.path.join(*parts[i + 1:])[: -len(".o")]


def symbols(obj):
    defined, used = set(), set()
    for line in subprocess.run(["nm", obj], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRCVW":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def cycles(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    src_dir, objs = sys.argv[1], sys.argv[2:]
    owner, uses, errors = {}, {}, []
    for o in objs:
        src = source_of(o)
        defined, used = symbols(o)
        for s in defined:
            owner[s] = src
        uses[src] = used
    calls = {src: {} for src in uses}
    for src, used in uses.items():
        for s in used:
            if s in owner and owner[s] != src:
                calls[src].setdefault(owner[s], s)
    edges = {src: set(t) for src, t in calls.items()}
    for comp in cycles(edges):
        errors.append("files in a circle: " + " ".join(comp) + "\n" + "\n".join(
            f"    {a} -> {b} ({calls[a][b]})" for a in comp for b in sorted(edges[a])
            if b in comp))
    for src, targets in sorted(calls.items()):
        if src.startswith("core" + os.sep):
            for t, s in sorted(targets.items()):
                if t.startswith("tables" + os.sep):
                    errors.append(f"{src} names a table: {s} of {t}")
    n_files = 0
    for root, _, files in os.walk(src_dir):
        for name in files:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src_dir)
            n_files += 1
            with open(path) as f:
                lines = sum(1 for _ in f)
            if lines > MAX_LINES and rel != TEMPLATE:
                errors.append(f"{rel}: {lines} lines (at most {MAX_LINES})")
    if len(objs) < 10:
        errors.append(f"only {len(objs)} objects given: the check would prove nothing")
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"layout OK: {len(objs)} objects, no circle, core names no table, "
          f"{n_files} sources of at most {MAX_LINES} lines (but {TEMPLATE})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
