#!/usr/bin/env bash
# Builds, with nvcc alone, softmax_variants_bench (named configurations launched directly, no tuned
# header needed) and libkiln_softmax_bench.so: the tuned CUDA softmax (the public API and its
# dispatch) behind a C ABI, for bench_softmax.py.
#   kernels/softmax/bench/build.sh [90a|89] [output dir]
# KILN_GENERATED_INCLUDE names the folder holding kiln/tuned/softmax_cuda.hpp (default: the
# `test` preset's build, whose header comes from presets/records/; a `*-tune` build's comes from
# its tuning).
set -euo pipefail
arch="${1:-90a}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$(mkdir -p "${2:-$root/build/softmax-bench-$arch}" && cd "${2:-$root/build/softmax-bench-$arch}" && pwd)"
case "$arch" in
  90a) gencode="-gencode=arch=compute_90a,code=sm_90a" ;;
  89) gencode="-gencode=arch=compute_89,code=sm_89" ;;
  *) echo "architecture must be 90a or 89" >&2; exit 2 ;;
esac
sm="$root/kernels/softmax"
"${NVCC:-nvcc}" -std=c++17 -O3 $gencode -I"$sm" -I"$root/autotune/include" \
  -o "$out/softmax_variants_bench" "$sm/bench/softmax_variants_bench.cu"
echo "built $out/softmax_variants_bench"
generated="${KILN_GENERATED_INCLUDE:-$root/build/test/kiln/include}"
if [ ! -f "$generated/kiln/tuned/softmax_cuda.hpp" ]; then
  echo "no generated softmax_cuda header in $generated: build Kiln first (cmake --workflow --preset test)," \
       "or set KILN_GENERATED_INCLUDE" >&2
  exit 2
fi
"${NVCC:-nvcc}" -std=c++17 -O3 $gencode -Xcompiler -fPIC -shared \
  -I"$sm" -I"$sm/include" -I"$root/autotune/include" -I"$generated" \
  -o "$out/libkiln_softmax_bench.so" "$sm/bench/softmax_bench_capi.cu" "$sm/softmax_cuda_api.cu"
echo "built $out/libkiln_softmax_bench.so"
