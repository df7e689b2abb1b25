#!/usr/bin/env bash
# On the GPU machine: tests, compute-sanitizer, a SASS summary, then the benchmark against SDPA.
#   kernels/attention/bench/run_device.sh <build dir from build.sh> [bench args...]
# Logs go to $OUT (or ./attention-device-out); the tables are printed last.
set -uo pipefail
build="$(cd "$1" && pwd)"; shift
out="${OUT:-$PWD/attention-device-out}"; mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total,driver_version --format=csv | tee "$out/device.txt"

# Binaries built elsewhere may not start here: rebuild in place if so.
if ldd "$build/attention_api_test" "$build/libkiln_attention_bench.so" | grep -q "not found"; then
  echo "prebuilt binaries do not start here; rebuilding"; "$here/build.sh" 90a "$build" || exit 1
fi

status=0
for t in attention_variants_d64_test attention_variants_d128_test attention_variants_d256_test attention_api_test; do
  "$build/$t" > "$out/$t.log" 2>&1; rc=$?
  echo "$t: exit $rc, $(tail -1 "$out/$t.log")"
  grep -E "^FAIL" "$out/$t.log" | head -20
  [ $rc -eq 0 ] || status=1
done

echo "--- compute-sanitizer"
san="$out/sanitizer.log"; : > "$san"
compute-sanitizer --tool memcheck --leak-check no "$build/attention_api_test" > /tmp/memcheck.log 2>&1
echo "memcheck api_test: exit $?, $(grep -E 'ERROR SUMMARY' /tmp/memcheck.log | tail -1)" | tee -a "$san"
ATTN_TEST_QUICK=1 compute-sanitizer --tool racecheck "$build/attention_variants_d64_test" > /tmp/racecheck.log 2>&1
echo "racecheck d64 quick: exit $?, $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/racecheck.log | tail -1)" | tee -a "$san"
ATTN_TEST_QUICK=1 compute-sanitizer --tool synccheck "$build/attention_variants_d128_test" > /tmp/synccheck.log 2>&1
echo "synccheck d128 quick: exit $?, $(grep -E 'ERROR SUMMARY' /tmp/synccheck.log | tail -1)" | tee -a "$san"
cat /tmp/memcheck.log /tmp/racecheck.log /tmp/synccheck.log >> "$san"

echo "--- SASS per forward kernel (bf16, full mask): instruction counts"
cuobjdump -sass "$build/libkiln_attention_bench.so" > /tmp/sass.txt 2>/dev/null
awk '/Function : /{name=$3} /HMMA|LDSM|MUFU.EX2|LDGSTS|BAR.SYNC|LDL|STL/{for(i=1;i<=NF;i++) if($i ~ /^(HMMA|LDSM|MUFU|LDGSTS|BAR|LDL|STL)/){split($i,a,"."); c[name" "a[1]]++}} END{for(k in c) print k, c[k]}' /tmp/sass.txt |
  grep "13__nv_bfloat16Lb0E" | sed -E 's/_ZN4kiln9attention24attention_forward_kernelINS0_6TraitsIN[0-9]+kiln_bench_//; s/[0-9]*ConfigEEE13__nv_bfloat16Lb0EEEvNS0_13ForwardParamsE//' | sort |
  awk '{k[$1]=k[$1]" "$2"="$3} END{for(n in k) print n":"k[n]}' | sort

echo "--- benchmark"
PYTHONUNBUFFERED=1 python3 "$here/bench_attention.py" --lib "$build/libkiln_attention_bench.so" --json "$out/bench.json" "$@" \
  2>&1 | tee "$out/bench.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
