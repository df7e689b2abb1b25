#!/usr/bin/env bash
# Builds, with nvcc alone, nbody_bench: Kiln's all-pairs and tree N-body through the public
# functions (kiln/nbody.hpp) and their tuned dispatch, timed and checked in one process.
#   kernels/nbody/bench/build.sh [90a|89] [output dir]
# KILN_GENERATED_INCLUDE names the folder holding kiln/tuned/nbody_cuda.hpp and
# nbody_tree_cuda*.hpp (default: the `test` preset's build, whose headers come from
# presets/records/ or, without a record, are the spaces' defaults; a `*-tune` build's come from
# its tuning).
set -euo pipefail
arch="${1:-90a}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$(mkdir -p "${2:-$root/build/nbody-bench-$arch}" && cd "${2:-$root/build/nbody-bench-$arch}" && pwd)"
case "$arch" in
  90a) gencode="-gencode=arch=compute_90a,code=sm_90a" ;;
  89) gencode="-gencode=arch=compute_89,code=sm_89" ;;
  *) echo "architecture must be 90a or 89" >&2; exit 2 ;;
esac
generated="${KILN_GENERATED_INCLUDE:-$root/build/test/kiln/include}"
for header in nbody_cuda nbody_tree_cuda nbody_tree_cuda_e2 nbody_tree_cuda_e3 nbody_tree_cuda_e4; do
  if [ ! -f "$generated/kiln/tuned/$header.hpp" ]; then
    echo "no generated $header header in $generated: build Kiln with CUDA first (cmake --workflow --preset test)," \
         "or set KILN_GENERATED_INCLUDE" >&2
    exit 2
  fi
done
nb="$root/kernels/nbody"
"${NVCC:-nvcc}" -std=c++17 -O3 $gencode -Xcompiler -fopenmp \
  -I"$nb" -I"$nb/include" -I"$root/autotune/include" -I"$generated" \
  -o "$out/nbody_bench" "$nb/bench/nbody_bench.cu" "$nb/nbody_cuda_api.cu" "$nb/nbody_tree_cuda_api.cu" -lgomp
echo "built $out/nbody_bench"
