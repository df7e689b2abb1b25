cmake_minimum_required(VERSION 3.25)
# Tunes a CUDA kernel with planted GPU faults through the installed Kiln, on this machine's GPU
# (cmake -P, with KILN_BUILD, WORK and SOURCE set, and CUDA_COMPILER and CUDA_ARCHITECTURES from
# the build under test). The build must complete; each fault must be recorded with its kind and
# its own cause; a correct variant must win every bucket. The sanitizer gate (compute-sanitizer,
# required here) runs on every passing variant, as winners and runners-up, so the one that writes
# past its output is caught whatever its speed.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")

# Without a GPU there is nothing to tune on: the test reports itself skipped (its
# SKIP_REGULAR_EXPRESSION is this line).
execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE rc OUTPUT_VARIABLE gpus ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT gpus MATCHES "GPU [0-9]+:")
  message("faulty CUDA tuning: no CUDA device: skipped")
  return()
endif()

file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/faulty_cuda_project")
set(build "${WORK}/tuned")
# The compiler and architectures of the build under test, as an initial cache: a list of
# architectures would not survive kiln_run's argument list.
file(WRITE "${WORK}/cuda.cmake" "set(CMAKE_CUDA_COMPILER \"${CUDA_COMPILER}\" CACHE FILEPATH \"\")
set(CMAKE_CUDA_ARCHITECTURES \"${CUDA_ARCHITECTURES}\" CACHE STRING \"\")
set(KILN_TUNE_ARGS \"--sanitize;--sanitize-runners-up=3;--sanitize-jobs=3\" CACHE STRING \"\")
")
# KILN_GPU=native: the device file is the one that describes the GPU here, whichever it is.
# KILN_GPUS=all: measured by one worker per GPU of the machine (one on a machine with one GPU),
# faults included; the build directory below tunes from the same worklog without it.
kiln_run(COMMAND "${CMAKE_COMMAND}" -C "${WORK}/cuda.cmake" -S "${project}" -B "${build}" -G Ninja
         "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cuda -DKILN_GPU=native
         "-DKILN_RECORDS_DIR=${WORK}/records" -DKILN_UPDATE_RECORDS=ON -DKILN_GPUS=all)
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE out)
kiln_expect("${out}" "kiln: measuring on [0-9]+ GPUs?: GPU 0 \\(" "the measuring workers, one per GPU")
kiln_expect("${out}" "saxpy_faulty_cuda__FAULToverrun_THREADS256: compute-sanitizer found errors" "the gate")
kiln_expect("${out}" "saxpy_faulty_cuda on [^\n]*: 12 evaluated, 3 passed, 3 wrong, 6 failed to build or run" "the tally")

# Each fault with its verdict/kind and the cause that proves it was the planted one. A block too
# large is cudaErrorInvalidValue from CUDA 13 (seen on an H200), cudaErrorInvalidConfiguration
# from earlier runtimes.
kiln_run(COMMAND "${prefix}/bin/kiln" log --worklog "${build}/kiln/worklog.sqlite" --json OUTPUT_VARIABLE log)
set(expected
  "none:keep|revert"
  "illegal_address:failed/runtime:cudaErrorIllegalAddress"
  "trap:failed/runtime:cudaErrorLaunchFailure"
  "hang:failed/timeout:no progress reported for"
  "wrong:invalid/correctness:relative L2 error"
  "nan:invalid/correctness:NaN or infinite"
  "unwritten:invalid/correctness:never written"
  "launch_config:failed/runtime:cudaErrorInvalid(Configuration|Value).* from cudaGetLastError"
  "ptxas:failed/compile:uses too much shared data"
  # Measured first (kept or reverted), then failed by the gate: both attempts are in the log.
  "overrun:keep|revert|failed/sanitizer")
string(REGEX MATCH "\"failure_kind\": *\"sanitizer\"[^}]*Invalid __global__ write of size 4 bytes" gated "${log}")
if(NOT gated)
  string(REGEX MATCH "Invalid __global__ write of size 4 bytes[^}]*\"failure_kind\": *\"sanitizer\"" gated "${log}")
endif()
if(NOT gated)
  message(FATAL_ERROR "no sanitizer failure with memcheck's invalid write in the log: ${log}")
endif()
kiln_expect_faults("${log}" "^saxpy_faulty_cuda__FAULT([a-z_]+)_THREADS[0-9]+$" ${expected})

file(GLOB records "${WORK}/records/*/saxpy_faulty_cuda.record.json")
list(LENGTH records found)
if(NOT found EQUAL 1)
  message(FATAL_ERROR "expected one record under ${WORK}/records, found: ${records}")
endif()
kiln_expect_winners("${records}" "^saxpy_faulty_cuda__FAULTnone_")

# The launch shape the harness read while timing (a CUDA graph capture of one run): the report
# gives it for the winner without a profiler.
kiln_run(COMMAND "${prefix}/bin/kiln" report --record "${records}" --worklog "${build}/kiln/worklog.sqlite"
         OUTPUT_VARIABLE report)
kiln_expect("${report}" "\\(winner\\) \\|[^\n]*[0-9]+ CTAs / [0-9]+ SMs" "the winner's recorded launch shape")
# kiln profile on the tuned build: with ncu every winner is profiled (or ncu says it may not read
# the counters, one message); without ncu, the message and exit code 1.
find_program(ncu ncu PATHS "$ENV{CUDA_HOME}/bin" /usr/local/cuda/bin NO_CACHE)
execute_process(COMMAND "${prefix}/bin/kiln" profile --build "${build}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT ncu)
  kiln_expect("${err}" "ncu \\(Nsight Compute\\) not found" "kiln profile's message without ncu")
elseif(err MATCHES "ERR_NVGPUCTRPERM")
  message(STATUS "kiln profile: ncu may not read the performance counters here: ${err}")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "kiln profile failed (${rc}):\n${out}\n${err}")
else()
  kiln_expect("${out}" "\\(winner\\) \\|[^\n]*\\*\\*[a-z]+\\*\\* \\(ncu\\)" "the winner's bottleneck from ncu")
endif()
# A fresh build directory tuning from the same worklog measures nothing and runs no sanitizer: every
# gated variant's pass is in the worklog, and the caught one stays a failure.
kiln_run(COMMAND "${CMAKE_COMMAND}" -C "${WORK}/cuda.cmake" -S "${project}" -B "${WORK}/again" -G Ninja
         "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cuda -DKILN_GPU=native
         "-DKILN_RECORDS_DIR=${WORK}/records-again" "-DKILN_WORKLOG=${build}/kiln/worklog.sqlite")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/again" OUTPUT_VARIABLE again)
kiln_expect("${again}" "saxpy_faulty_cuda__FAULTnone_THREADS[0-9]+: compute-sanitizer clean \\(memcheck,racecheck, from the worklog"
            "a winner's sanitizer pass taken from the worklog")
if(again MATCHES "compute-sanitizer (clean \\(memcheck,racecheck\\)|found errors)")
  message(FATAL_ERROR "the sanitizer ran again on a tuning resumed from the worklog:\n${again}")
endif()

message(STATUS "faulty CUDA tuning: every GPU fault isolated and recorded with its kind; the winner's launch shape recorded")
