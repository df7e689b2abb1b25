#!/usr/bin/env bash
# Builds, with nvcc alone, topk_variants_bench: named top-k configurations launched directly (no
# tuned header needed), for comparing algorithms and block sizes on chosen shapes.
#   kernels/topk/bench/build_variants.sh [90a|89] [output dir]
#   build/topk-bench-90a/topk_variants_bench 1024x32768x256,1024x32768x16 sample256 shared256
set -euo pipefail
arch="${1:-90a}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$(mkdir -p "${2:-$root/build/topk-bench-$arch}" && cd "${2:-$root/build/topk-bench-$arch}" && pwd)"
case "$arch" in
  90a) gencode="-gencode=arch=compute_90a,code=sm_90a" ;;
  89) gencode="-gencode=arch=compute_89,code=sm_89" ;;
  *) echo "architecture must be 90a or 89" >&2; exit 2 ;;
esac
tk="$root/kernels/topk"
"${NVCC:-nvcc}" -std=c++17 -O3 $gencode -I"$tk" -I"$tk/include" -I"$root/autotune/include" \
  -o "$out/topk_variants_bench" "$tk/bench/topk_variants_bench.cu"
echo "built $out/topk_variants_bench"
