#!/usr/bin/env bash
# Builds, with nvcc alone (no CMake, no rest of Kiln), the attention benchmark library
# libkiln_attention_bench.so (C ABI, attention_bench_capi.h: the public API plus the variants of
# bench_variants.inc) and the four attention test programs, for one GPU architecture.
#   kernels/attention/bench/build.sh [90a|89] [output dir]
# The public API dispatches through Kiln's generated headers: KILN_GENERATED_INCLUDE names the
# folder holding the family headers kiln/tuned/attention.hpp and attention_decode.hpp and their
# members' headers (default: the `test` preset's build, whose headers
# come from presets/records/; a `*-tune` build's come from its tuning).
# Every translation unit compiles in parallel; ptxas register/spill reports go to ptxas.log.
set -euo pipefail
arch="${1:-90a}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$(mkdir -p "${2:-$root/build/attention-bench-$arch}" && cd "${2:-$root/build/attention-bench-$arch}" && pwd)"
source "$root/kernels/attention/bench/nvcc_flags.sh"
nvcc="${NVCC:-nvcc}"
generated="${KILN_GENERATED_INCLUDE:-$root/build/test/kiln/include}"
if [ ! -f "$generated/kiln/tuned/attention.hpp" ] || [ ! -f "$generated/kiln/tuned/attention_d64.hpp" ] ||
   [ ! -f "$generated/kiln/tuned/attention_d128.hpp" ] || [ ! -f "$generated/kiln/tuned/attention_d256.hpp" ] ||
   [ ! -f "$generated/kiln/tuned/attention_decode.hpp" ] || [ ! -f "$generated/kiln/tuned/attention_decode_d64.hpp" ] ||
   [ ! -f "$generated/kiln/tuned/attention_decode_d128.hpp" ]; then
  echo "no generated attention headers in $generated: build Kiln first (cmake --workflow --preset test)," \
       "or set KILN_GENERATED_INCLUDE" >&2
  exit 2
fi
att="$root/kernels/attention"
attention_nvcc_flags "$arch" "$generated" || exit 2

mkdir -p "$out/gen" "$out/obj" "$out/log"
# One source per benchmark variant (and none for variants no longer listed).
names="$(grep '^KILN_BENCH_VARIANT(' "$att/bench/bench_variants.inc" | sed -E 's/^KILN_BENCH_VARIANT\(([A-Za-z0-9_]+),.*/\1/')"
for f in "$out"/gen/*.cu; do
  [ -e "$f" ] || continue
  echo "$names" | grep -qx "$(basename "${f%.cu}")" || rm -f "$f" "$out/obj/$(basename "${f%.cu}").o" "$out/log/$(basename "${f%.cu}").o.log"
done
grep '^KILN_BENCH_VARIANT(' "$att/bench/bench_variants.inc" | while read -r line; do
  name="$(echo "$line" | sed -E 's/^KILN_BENCH_VARIANT\(([A-Za-z0-9_]+),.*/\1/')"
  printf '#include "attention_bench_variant.cuh"\n%s\n' "$line" > "$out/gen/$name.cu.new"
  cmp -s "$out/gen/$name.cu.new" "$out/gen/$name.cu" 2>/dev/null && rm "$out/gen/$name.cu.new" || mv "$out/gen/$name.cu.new" "$out/gen/$name.cu"
done

export nvcc out
export flags_str="${flags[*]}"
jobs=()
for src in "$out"/gen/*.cu "$att/src/attention_api.cu" "$att/bench/attention_bench_capi.cu" \
           "$root/tests/kernels/attention/attention_variants_d64_test.cu" \
           "$root/tests/kernels/attention/attention_variants_d128_test.cu" \
           "$root/tests/kernels/attention/attention_variants_d256_test.cu" \
           "$root/tests/kernels/attention/attention_api_test.cu"; do
  jobs+=("$src")
done
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c \
  'src="{}"; obj="$out/obj/$(basename "${src%.cu}").o"; $nvcc $flags_str -c "$src" -o "$obj" > "$out/log/$(basename "$obj").log" 2>&1 || { cat "$out/log/$(basename "$obj").log" >&2; exit 255; }'

variant_objs=()
for f in "$out"/gen/*.cu; do variant_objs+=("$out/obj/$(basename "${f%.cu}").o"); done
"$nvcc" $gencode -shared -o "$out/libkiln_attention_bench.so" "$out/obj/attention_bench_capi.o" "$out/obj/attention_api.o" "${variant_objs[@]}"
"$nvcc" $gencode -o "$out/attention_variants_d64_test" "$out/obj/attention_variants_d64_test.o"
"$nvcc" $gencode -o "$out/attention_variants_d128_test" "$out/obj/attention_variants_d128_test.o"
"$nvcc" $gencode -o "$out/attention_variants_d256_test" "$out/obj/attention_variants_d256_test.o"
"$nvcc" $gencode -o "$out/attention_api_test" "$out/obj/attention_api_test.o" "$out/obj/attention_api.o"

# Register and spill report per kernel instantiation.
grep -h -E "Compiling entry|registers|spill" "$out"/log/*.log | paste - - - |
  sed -E "s/.*entry function '([^']+)'.*\t *([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores.*Used ([0-9]+) registers.*/\4 regs, \3 B spilled: \1/" \
  > "$out/ptxas.log"
echo "built in $out ($(wc -l < "$out/ptxas.log") kernels; $(grep -vc ' 0 B spilled' "$out/ptxas.log" || true) with spills)"
