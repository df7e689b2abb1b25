#!/usr/bin/env bash
# kiln preflight on this machine's GPU. Usage: preflight_gpu.sh KILN [BUSY_GPU_PROGRAM]
# Without the program: the GPU is observed (clocks, processes) and judged. With it: while the
# program keeps the GPU busy, the preflight refuses (exit 3, finding gpu_busy), and once it has
# left the GPU it does not. Exit 77 (skipped) without nvidia-smi or a GPU.
set -u
kiln=$1
busy=${2:-}
smi=$(command -v nvidia-smi || echo /usr/local/cuda/bin/nvidia-smi)
if [ ! -x "$smi" ] || ! "$smi" -L 2>/dev/null | grep -q "GPU [0-9]"; then
  echo "no nvidia-smi or no GPU: skipped"
  exit 77
fi
fail() { echo "FAILED: $*"; exit 1; }

if [ -z "$busy" ]; then
  out=$("$kiln" preflight --json); rc=$?
  echo "$out"
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "exit code $rc"
  grep -q '"verdict": "\(ready\|degraded\|refuse\)"' <<<"$out" || fail "no verdict"
  grep -q '"sm_max_mhz": [0-9]' <<<"$out" || fail "no maximum SM clock read"
  grep -q '"processes": \[' <<<"$out" || fail "no process list"
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$busy" 20 >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -q busy "$log" && break
  kill -0 $pid 2>/dev/null || fail "the busy program ended early: $(cat "$log")"
  sleep 0.1
done
grep -q busy "$log" || fail "the busy program did not start in 10 s"
out=$("$kiln" preflight --json); rc=$?
kill $pid 2>/dev/null
wait $pid 2>/dev/null
echo "$out"
[ $rc -eq 3 ] || fail "expected the preflight to refuse (exit 3) while another process keeps the GPU busy, got $rc"
grep -q '"code": "gpu_busy"' <<<"$out" || fail "no gpu_busy finding"

# Gone from the GPU: no longer refused for it (the driver may take a moment to list it as gone).
for _ in $(seq 20); do
  out=$("$kiln" preflight --json)
  grep -q '"code": "gpu_busy"' <<<"$out" || exit 0
  sleep 0.5
done
fail "still refused for a busy GPU after the program ended: $out"
