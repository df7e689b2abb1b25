cmake_minimum_required(VERSION 3.25)
# Tunes a kernel with planted faults through the installed Kiln (cmake -P, with KILN_BUILD,
# WORK and SOURCE set). The build must complete; each fault must be recorded with its kind; a
# correct variant must win every bucket; an unchanged rebuild does no work; a build from the
# record, without tuning, gives the tuned header byte for byte.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/faulty_project")
set(build "${WORK}/tuned")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${build}" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
         -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu "-DKILN_RECORDS_DIR=${WORK}/records" -DKILN_UPDATE_RECORDS=ON)
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE out)
kiln_expect("${out}" "saxpy_faulty on [^\n]*: 10 evaluated, 3 passed, 3 wrong, 4 failed to build or run" "the tally")

kiln_run(COMMAND "${prefix}/bin/kiln" log --worklog "${build}/kiln/worklog.sqlite" --json OUTPUT_VARIABLE log)
kiln_expect_faults("${log}" "^saxpy_faulty__FAULT([a-z]+)_.*" none:keep|revert crash:failed/crash
                   hang:failed/timeout wrong:invalid/correctness nan:invalid/correctness
                   unwritten:invalid/correctness throw:failed/runtime compile:failed/compile)

kiln_expect_winners("${WORK}/records/cpu/saxpy_faulty.record.json" "^saxpy_faulty__FAULTnone_")

kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE again)
kiln_expect("${again}" "no work to do" "an unchanged rebuild doing nothing")

# Built from the record alone, as CI builds without a GPU.
set(untuned "${WORK}/from-record")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${untuned}" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
         -DKILN_TUNE=OFF "-DKILN_RECORDS_DIR=${WORK}/records")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${untuned}")
file(READ "${build}/kiln/include/kiln/tuned/saxpy_faulty.hpp" tuned_header)
file(READ "${untuned}/kiln/include/kiln/tuned/saxpy_faulty.hpp" record_header)
if(NOT tuned_header STREQUAL record_header)
  message(FATAL_ERROR "the header built from the record differs from the tuned one")
endif()

# Resume: measurements already in the worklog are not taken again.
file(REMOVE "${build}/kiln/saxpy_faulty/tune.stamp")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE resumed)
# Only a timing the first run took while the machine was busy may be taken again (it is
# retried once the machine is quiet); the rest comes from the worklog.
string(REGEX MATCH "; ([0-9]+) measured now" _ "${resumed}")
if(NOT DEFINED CMAKE_MATCH_1 OR CMAKE_MATCH_1 GREATER 1)
  message(FATAL_ERROR "the resumed run measured again what the worklog holds:\n${resumed}")
endif()
message(STATUS "faulty tuning: every fault isolated and recorded with its kind")

# kill -9 in the middle of a tuning run: the next run resumes, measuring only what was not finished.
# Without near-tie re-measurement (these runs test the resume, not which tie wins); the poll that
# waits for the third attempt runs twice a second, as more often it is itself a load the tuner
# waits out.
set(dir "${build}/kiln/saxpy_faulty")
set(tune_args tune --manifest "${dir}/generated/manifest.json" --variants-dir "${dir}/bin" --build-records "${dir}/builds"
    --worklog "${WORK}/killed.sqlite" --device "${prefix}/share/kiln/devices/cpu.json"
    --probe "${prefix}/bin/kiln_probe_cpu" --record-out "${WORK}/killed.record.json"
    --header-out "${WORK}/killed.hpp" --no-progress --interleave-rounds 0)
string(JOIN " " tune_line "${prefix}/bin/kiln" ${tune_args})
# A script file, so that the shell's semicolons stay out of CMake's list splitting.
file(WRITE "${WORK}/kill.sh" "${tune_line} > ${WORK}/killed.log 2>&1 &
pid=$!
until [ \"$(${prefix}/bin/kiln log --worklog ${WORK}/killed.sqlite --json 2>/dev/null | grep -c '\"verdict\"')\" -ge 3 ]
do
  kill -0 $pid 2>/dev/null || { echo 'the run ended before it could be killed'
                               exit 1
                             }
  sleep 0.5
done
kill -9 $pid
wait $pid
exit 0
")
kiln_run(COMMAND sh "${WORK}/kill.sh")
kiln_run(COMMAND "${prefix}/bin/kiln" ${tune_args} OUTPUT_VARIABLE resumed_after_kill)
string(REGEX MATCH "; ([0-9]+) measured now" _ "${resumed_after_kill}")
if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 GREATER 7)
  message(FATAL_ERROR "after kill -9 the next run measured ${CMAKE_MATCH_1} of 10 variants again:\n${resumed_after_kill}")
endif()
kiln_expect("${resumed_after_kill}" "10 evaluated, 3 passed, 3 wrong, 4 failed" "the resumed run's tally")
kiln_run(COMMAND "${prefix}/bin/kiln" log --worklog "${WORK}/killed.sqlite" --json OUTPUT_VARIABLE killed_log)
string(JSON attempts LENGTH "${killed_log}")
if(NOT attempts EQUAL 10)
  message(FATAL_ERROR "expected one attempt per variant after the resume, found ${attempts}")
endif()
message(STATUS "kill -9 and resume: ${CMAKE_MATCH_1} of 10 variants measured by the second run")
