#!/usr/bin/env bash
# Builds, with nvcc alone, the benchmark library with the public API only (libkiln_attention_bench.so
# with one benchmark variant: the C ABI's variant table cannot be empty) and attention_api_test,
# over the dispatch headers in GENERATED: the quick way to time one set of records against another
# with the same sources (`bench_attention.py --variants none`, each library in its own process).
#   kernels/attention/bench/build_api.sh GENERATED OUT [90a|89]
# GENERATED holds kiln/tuned/attention*.hpp, e.g. a Kiln build's kiln/include, or a copy of it with
# some headers replaced by `kiln header --manifest M --record R --out H` of other records. The four
# translation units compile in parallel.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: build_api.sh GENERATED OUT [90a|89]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/../../.." && pwd)"
source "$root/kernels/attention/bench/nvcc_flags.sh"
generated="$(cd "$1" && pwd)"
if [ ! -f "$generated/kiln/tuned/attention.hpp" ] || [ ! -f "$generated/kiln/tuned/attention_decode.hpp" ]; then
  echo "build_api.sh: $generated holds no kiln/tuned/attention.hpp and attention_decode.hpp" >&2
  exit 2
fi
attention_nvcc_flags "${3:-90a}" "$generated" || exit 2
att="$root/kernels/attention"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
nvcc="${NVCC:-nvcc}"

# The C ABI's source with a variant list of one (its first line), beside its headers.
mkdir -p "$out/src"
cp "$att/bench/attention_bench_capi.cu" "$att/bench/attention_bench_capi.h" "$att/bench/attention_bench_variant.cuh" "$out/src/"
grep -m1 '^KILN_BENCH_VARIANT(' "$att/bench/bench_variants.inc" > "$out/src/bench_variants.inc"
printf '#include "attention_bench_variant.cuh"\n%s\n' "$(cat "$out/src/bench_variants.inc")" > "$out/src/variant.cu"

flags=(-I"$out/src" "${flags[@]}")  # the one-variant list before the bench folder's
pids=()
"$nvcc" "${flags[@]}" -c "$att/src/attention_api.cu" -o "$out/api.o" & pids+=($!)
"$nvcc" "${flags[@]}" -c "$out/src/attention_bench_capi.cu" -o "$out/capi.o" & pids+=($!)
"$nvcc" "${flags[@]}" -c "$out/src/variant.cu" -o "$out/variant.o" & pids+=($!)
"$nvcc" "${flags[@]}" -c "$root/tests/kernels/attention/attention_api_test.cu" -o "$out/api_test.o" & pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" $gencode -shared -o "$out/libkiln_attention_bench.so" "$out/capi.o" "$out/api.o" "$out/variant.o"
"$nvcc" $gencode -o "$out/attention_api_test" "$out/api_test.o" "$out/api.o"
echo "built $out/libkiln_attention_bench.so and $out/attention_api_test over $generated"
