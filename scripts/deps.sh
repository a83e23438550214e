#!/usr/bin/env bash
# Install the Debian packages bpfmap needs to build, test and benchmark, if
# any are missing.  Idempotent; needs root (or sudo) only when installing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config git
      liburcu-dev libxxhash-dev libbpf-dev libelf-dev zlib1g-dev libcmocka-dev
      clang llvm valgrind libclang-rt-14-dev
      libdpdk-dev)  # libdpdk-dev: DPDK's rte_bpf, for the optional rtebpf/ component
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "deps: installing ${missing[*]}" >&2
	sudo=""
	[[ $(id -u) -eq 0 ]] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
