#!/usr/bin/env bash
# Installs what Kiln needs to build and test on Debian 12 / Ubuntu 24.04, skipping what is there.
# CUDA (nvcc) is optional and not installed here: without it, Kiln builds its CPU backend only.
# --cluster also installs Slurm and MUNGE, which the test integration_slurm_shards starts a one-node
# cluster of (without them it reports itself skipped).
set -euo pipefail
packages=(cmake ninja-build g++ libsqlite3-dev libxxhash-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev catch2 xz-utils)
if [ "${1:-}" = "--cluster" ]; then
  packages+=(slurm-wlm munge)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all present (${packages[*]})"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
