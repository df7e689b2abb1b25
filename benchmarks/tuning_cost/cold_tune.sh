#!/bin/bash
# A cold tuning of one space, as `h200-tune` (or another preset) runs it, timed from an empty
# worklog: on one GPU, or with --gpus all. What the tuning does not own is built first and not
# timed (the kiln tool, every space's template, the probe: a header target waits for all of
# them); the tune step's stages come from its worklog session (`kiln report`).
#
#   benchmarks/tuning_cost/cold_tune.sh PRESET SPACE one|all [SECONDS] [-DVAR=VALUE ...]
#
# SECONDS stops the tuning (SIGINT: every finished measurement stays in the worklog, and a run
# of the same command without removing it resumes). The worklog and the log are left in
# build/cold-<one|all>/ (or $COLD_DIR) for reading; nothing of the source tree is written.
set -u
if [ $# -lt 3 ] || { [ "$3" != one ] && [ "$3" != all ]; }; then
  echo "usage: $0 PRESET SPACE one|all [SECONDS] [-DVAR=VALUE ...]" >&2
  exit 2
fi
preset=$1 space=$2 gpus=$3
shift 3
limit=0
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then limit=$1; shift; fi
dir=${COLD_DIR:-build/cold-$gpus}
worklog=$PWD/$dir/$space.worklog.sqlite
mkdir -p "$dir"
rm -f "$worklog" "$worklog-wal" "$worklog-shm"
kiln_gpus=all
[ "$gpus" = one ] && kiln_gpus=
cmake --preset "$preset" -B "$dir" "-DKILN_WORKLOG=$worklog" "-DKILN_GPUS=$kiln_gpus" "$@" > "$dir/configure.log" 2>&1 ||
  { tail -20 "$dir/configure.log"; exit 1; }
probe=kiln_probe_cuda
[ "$preset" = cpu-tune ] && probe=kiln_probe_cpu
start=$(date +%s)
cmake --build "$dir" --target kiln kiln_variants "$probe" > "$dir/setup.log" 2>&1 || { tail -20 "$dir/setup.log"; exit 1; }
echo "untimed setup (configure excluded): $(( $(date +%s) - start )) s"
start=$(date +%s)
if [ "$limit" -gt 0 ]; then
  timeout -s INT "$limit" cmake --build "$dir" --target "kiln_header_$space" > "$dir/$space.tune.log" 2>&1
else
  cmake --build "$dir" --target "kiln_header_$space" > "$dir/$space.tune.log" 2>&1
fi
rc=$?
# SIGINT reaches the whole process group: the build's shell and ninja end at once, the tool only
# after it has written what it measured. Wait for it, so that the worklog is whole when this
# script ends (a copy taken earlier can be torn).
for _ in $(seq 300); do pgrep -f -- "--worklog $worklog" > /dev/null || break; sleep 1; done
pgrep -f -- "--worklog $worklog" > /dev/null && echo "the tool still writes $worklog after 300 s; copy it later" >&2
echo "kiln_header_$space ($gpus): exit $rc after $(( $(date +%s) - start )) s"
"$dir/cli/kiln" report --worklog "$worklog" --kernel "$space" | grep -E "^- (Time|Strategy|Device)" || true
grep -E "wall time|measuring on" "$dir/$space.tune.log" | tail -3
