#!/usr/bin/env bash
# Builds, with nvcc alone, selective_scan_variants_bench (named configurations launched directly) and
# libkiln_selective_scan_bench.so: the tuned CUDA selective scan (the
# public function and its dispatch) behind a C ABI, for bench_selective_scan.py.
#   kernels/scan/bench/build.sh [90a|89] [output dir]
# KILN_GENERATED_INCLUDE names the folder holding kiln/tuned/selective_scan_cuda.hpp (default: the
# `test` preset's build, whose header comes from presets/records/ or, without a record, is the
# space's default; a `*-tune` build's comes from its tuning).
set -euo pipefail
arch="${1:-90a}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$(mkdir -p "${2:-$root/build/selective-scan-bench-$arch}" && cd "${2:-$root/build/selective-scan-bench-$arch}" && pwd)"
case "$arch" in
  90a) gencode="-gencode=arch=compute_90a,code=sm_90a" ;;
  89) gencode="-gencode=arch=compute_89,code=sm_89" ;;
  *) echo "architecture must be 90a or 89" >&2; exit 2 ;;
esac
"${NVCC:-nvcc}" -std=c++17 -O3 -lineinfo $gencode -I"$root/kernels/scan" -I"$root/kernels/scan/include" \
  -I"$root/autotune/include" -o "$out/selective_scan_variants_bench" "$root/kernels/scan/bench/selective_scan_variants_bench.cu"
echo "built $out/selective_scan_variants_bench"
generated="${KILN_GENERATED_INCLUDE:-$root/build/test/kiln/include}"
if [ ! -f "$generated/kiln/tuned/selective_scan_cuda.hpp" ]; then
  echo "no generated selective_scan_cuda header in $generated: build Kiln with CUDA first (cmake --workflow --preset test)," \
       "or set KILN_GENERATED_INCLUDE" >&2
  exit 2
fi
scan="$root/kernels/scan"
"${NVCC:-nvcc}" -std=c++17 -O3 $gencode -Xcompiler -fPIC -shared \
  -I"$scan" -I"$scan/include" -I"$root/autotune/include" -I"$generated" \
  -o "$out/libkiln_selective_scan_bench.so" "$scan/bench/selective_scan_bench_capi.cu" "$scan/selective_scan_cuda_api.cu"
echo "built $out/libkiln_selective_scan_bench.so"
