#!/usr/bin/env bash
# Builds, with nvcc alone, topk_variants_bench (named configurations launched directly, no tuned
# header needed) and libkiln_topk_bench.so: the tuned CUDA top-k (the public API, its dispatch and
# the streaming state) behind a C ABI, for bench_topk.py.
#   kernels/topk/bench/build.sh [90a|89] [output dir]
# KILN_GENERATED_INCLUDE names the folder holding kiln/tuned/topk_cuda.hpp and topk_cpu.hpp
# (default: the `test` preset's build; a `*-tune` build's come from its tuning).
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
generated="${KILN_GENERATED_INCLUDE:-$root/build/test/kiln/include}"
for header in topk_cuda topk_cpu; do
  if [ ! -f "$generated/kiln/tuned/$header.hpp" ]; then
    echo "no generated $header header in $generated: build Kiln first (cmake --workflow --preset test)," \
         "or set KILN_GENERATED_INCLUDE" >&2
    exit 2
  fi
done
"${NVCC:-nvcc}" -std=c++17 -O3 $gencode -Xcompiler -fPIC,-fopenmp,-march=native -shared \
  -I"$tk" -I"$tk/include" -I"$root/autotune/include" -I"$generated" \
  -o "$out/libkiln_topk_bench.so" "$tk/bench/topk_bench_capi.cu" "$tk/topk_cuda_api.cu" "$tk/topk_cpu_api.cpp" \
  "$tk/topk_state.cpp" -lgomp
echo "built $out/libkiln_topk_bench.so"
