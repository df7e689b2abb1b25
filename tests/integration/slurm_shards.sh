#!/usr/bin/env bash
# Tuning on a cluster, for real: starts a one-node Slurm cluster of its own (munged, slurmctld and
# slurmd, with a slurm.conf in a temporary folder), submits scripts/slurm/kiln-tune-array.sbatch
# for tests/integration/shard_project as a 2-task job array, and checks that the merged worklog's
# record is the one an unsharded run makes: the same variants evaluated, the same failures, the same
# winner and runners-up in the same order, and byte for byte the record `kiln tune` writes from the
# merged worklog, which measures nothing more; then runs the array again into the same results,
# whose shards start from the merged worklog and measure nothing. Skipped (exit 77) when Slurm or MUNGE is not
# installed or does not start (CI without the packages or the permissions).
#
#   slurm_shards.sh KILN_BUILD SOURCE WORK
set -euo pipefail
build=$1 source=$2 work=$3
skip() {
  echo "slurm_shards: skipped: $*"
  exit 77
}
for tool in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$tool" >/dev/null 2>&1 || [[ -x /usr/sbin/$tool ]] ||
    skip "$tool not found (Debian/Ubuntu: apt-get install slurm-wlm munge)"
done
PATH=$PATH:/usr/sbin

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
cluster=$(mktemp -d /tmp/kiln-slurm.XXXXXX)  # short: the MUNGE socket's path has a length limit
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$cluster"
}
trap cleanup EXIT

# MUNGE, with a key and a socket of its own.
chmod 700 "$cluster"
mkdir -p "$cluster/munge"
head -c 1024 /dev/urandom >"$cluster/munge/munge.key"
chmod 400 "$cluster/munge/munge.key"
socket=$cluster/munge/munge.socket
munged --foreground --force --key-file="$cluster/munge/munge.key" --socket="$socket" \
  --pid-file="$cluster/munge/munged.pid" --log-file="$cluster/munge/munged.log" \
  --seed-file="$cluster/munge/munged.seed" >"$cluster/munge/stdout" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $socket ]] && break; sleep 0.1; done
[[ -S $socket ]] || skip "munged did not start: $(tail -3 "$cluster/munge/munged.log" "$cluster/munge/stdout" 2>/dev/null | tr '\n' ' ')"

# Slurm: this machine is the controller and the one node.
node=$(hostname -s)
user=$(id -un)
cpus=$(nproc)
memory=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
port=$((20000 + RANDOM % 20000))
mkdir -p "$cluster/state" "$cluster/spool"
export SLURM_CONF=$cluster/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=kilntest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/slurmctld.log
SlurmdLogFile=$cluster/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=$cluster/plugstack.conf
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=kiln Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
: >"$cluster/plugstack.conf"
slurmctld -D -i >"$cluster/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -N "$node" >"$cluster/slurmd.stdout" 2>&1 &
pids+=($!)
ready=
for _ in $(seq 100); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then ready=1; break; fi
  sleep 0.2
done
[[ -n $ready ]] || skip "Slurm did not start: $(tail -3 "$cluster/slurmctld.log" "$cluster/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "slurm_shards: one-node cluster up ($node, $cpus CPUs)"

# Kiln as installed, and the project's generated variants and template; each run compiles the
# variants it measures (compile on demand: a shard its share).
cmake --install "$build" --prefix "$work/prefix" >/dev/null
kiln=$work/prefix/bin/kiln
cmake -S "$source/tests/integration/shard_project" -B "$work/project" -G Ninja "-DCMAKE_PREFIX_PATH=$work/prefix" \
  -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu >/dev/null
cmake --build "$work/project" --target kiln_variants_passes >/dev/null
k=$work/project/kiln/passes
args=(--manifest "$k/generated/manifest.json" --variants-dir "$k/bin" --build-records "$k/builds"
      --device "$work/prefix/share/kiln/devices/cpu.json" --probe "$work/prefix/bin/kiln_probe_cpu"
      --flags-file "$k/compiler.txt" --source "$source/tests/integration/shard_project/passes.hpp"
      --source "$source/tests/integration/saxpy/saxpy_workload.hpp"
      --compile-command "$k/capture/compile.json" --link-command "$k/capture/link.json"
      --template-source "$k/template.cpp" --objects-dir "$k/objects"
      --repetitions 5 --quiet-wait 0 --seed 7)
variants=$(grep -c '"name": "passes__' "$k/generated/manifest.json" || true)

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# The unsharded run.
t0=$(seconds)
"$kiln" tune "${args[@]}" --worklog "$work/unsharded.sqlite" --record-out "$work/unsharded.record.json" \
  --header-out "$work/unsharded.hpp" --no-progress >"$work/unsharded.log" 2>&1 ||
  { cat "$work/unsharded.log"; exit 1; }
t1=$(seconds)
unsharded_s=$(elapsed "$t0" "$t1")

# The same as a 2-task job array, one task at a time (two at once on one small machine would
# only disturb each other's timings), then the merge job the array submits.
results=$work/results
mkdir -p "$results" "$work/logs"
t0=$(seconds)
array=$(cd "$work/logs" && KILN="$kiln" KILN_MERGE_OUTPUT="$work/logs/merge-%j.out" \
        sbatch --parsable --array=0-1%1 --output="$work/logs/shard-%A_%a.out" \
        "$source/scripts/slurm/kiln-tune-array.sbatch" "$results" "${args[@]}")
echo "slurm_shards: array job $array submitted"
for _ in $(seq 1200); do
  [[ -z $(squeue -h -o %i 2>/dev/null) && -f $results/merge-job ]] && break
  sleep 0.5
done
t1=$(seconds)
sharded_s=$(elapsed "$t0" "$t1")
if [[ -n $(squeue -h -o %i) ]]; then
  squeue
  cat "$work"/logs/*.out
  echo "slurm_shards: the jobs did not finish within 10 minutes"
  exit 1
fi
cat "$work"/logs/*.out
for f in "$results/shards/shard-0.sqlite" "$results/shards/shard-1.sqlite" "$results/worklog.sqlite" "$results/record.json"; do
  [[ -f $f ]] || { echo "slurm_shards: $f missing: a job failed"; exit 1; }
done
grep -q "no record or header from a shard" "$work"/logs/shard-*_0.out
grep -q "no record or header from a shard" "$work"/logs/shard-*_1.out

# Each shard measured its share and nothing else; together every variant once.
count_attempts() { "$kiln" log --worklog "$1" --json | grep -c '"verdict"' || true; }
a0=$(count_attempts "$results/shards/shard-0.sqlite")
a1=$(count_attempts "$results/shards/shard-1.sqlite")
merged=$(count_attempts "$results/worklog.sqlite")
echo "slurm_shards: shard 0 measured $a0, shard 1 $a1, the merged worklog holds $merged of $variants variants"
[[ $a0 -ge 1 && $a1 -ge 1 && $((a0 + a1)) -eq $variants && $merged -eq $variants ]] ||
  { echo "slurm_shards: the shards did not cover every variant exactly once"; exit 1; }

# The same decisions as the unsharded run (times differ from run to run; winners, failures and the
# order of the runners-up, a factor of three apart, do not).
cmake -DA="$work/unsharded.record.json" -DB="$results/record.json" -P "$source/tests/integration/same_decisions.cmake"

# Byte for byte what kiln tune writes from the merged worklog, which measures nothing more.
cp "$results/worklog.sqlite" "$work/retune.sqlite"
"$kiln" tune "${args[@]}" --worklog "$work/retune.sqlite" --record-out "$work/retune.record.json" \
  --header-out "$work/retune.hpp" --no-progress >"$work/retune.log" 2>&1 || { cat "$work/retune.log"; exit 1; }
grep -q "; 0 measured now" "$work/retune.log" || { cat "$work/retune.log"; echo "slurm_shards: the re-tune measured"; exit 1; }
cmp "$work/retune.record.json" "$results/record.json"
cmp "$work/retune.hpp" "$results/tuned.hpp"

# The array again, into the same results: each shard starts from the merged worklog and measures
# nothing, and the merge into it changes no decision.
cp "$results/record.json" "$work/first.record.json"
rm -f "$results/merge-job"
mkdir -p "$work/logs2"
(cd "$work/logs2" && KILN="$kiln" KILN_MERGE_OUTPUT="$work/logs2/merge-%j.out" \
  sbatch --parsable --array=0-1%1 --output="$work/logs2/shard-%A_%a.out" \
  "$source/scripts/slurm/kiln-tune-array.sbatch" "$results" "${args[@]}" >/dev/null)
for _ in $(seq 1200); do
  [[ -z $(squeue -h -o %i 2>/dev/null) && -f $results/merge-job ]] && break
  sleep 0.5
done
[[ $(cat "$work"/logs2/shard-*.out | grep -c "; 0 measured now") -eq 2 ]] ||
  { cat "$work"/logs2/*.out; echo "slurm_shards: a shard measured again what the merged worklog holds"; exit 1; }
grep -q "sessions and 0 measurements added, 0 rows replaced" "$work"/logs2/merge-*.out ||
  { cat "$work"/logs2/*.out; echo "slurm_shards: the second merge added measurements"; exit 1; }
cmp "$work/first.record.json" "$results/record.json"

# Merging the shards again changes nothing.
cp "$results/worklog.sqlite" "$work/again.sqlite"
"$kiln" merge --out "$work/again.sqlite" "$results"/shards/shard-*.sqlite | tail -1 |
  grep -q ": 0 sessions and 0 measurements added, 0 rows replaced"

echo "slurm_shards: unsharded ${unsharded_s} s; 2 shards through Slurm, one at a time, merged and recorded: ${sharded_s} s"
grep -h "kiln-tune-array:.*took" "$work"/logs/*.out
echo "slurm_shards: the merged record makes the unsharded run's decisions, and kiln tune writes it byte for byte"
