cmake_minimum_required(VERSION 3.25)
# Compile on demand (cmake -P, with KILN_BUILD, WORK and SOURCE set), on
# tests/integration/large_project, a space of 1000 valid variants:
#  1. tuned by the build with a random search of 10 % of the space, the tune step compiles at most
#     15 % of the variants (it compiles what the search proposes, in one parallel batch), and a
#     record comes out;
#  2. a fresh build directory tuning from the same worklog compiles no variant and measures none.
# (kiln_compile, which compiles every variant without tuning, is tested by launcher.cmake.)
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/large_project")

function(count_variants build out_var)
  file(GLOB built "${build}/kiln/sum_squares/bin/sum_squares__*")
  list(LENGTH built n)
  set(${out_var} ${n} PARENT_SCOPE)
endfunction()

# A list in a cache entry goes through an initial-cache file, not -D.
file(WRITE "${WORK}/init.cmake" "set(KILN_TUNE_ARGS \"--seed=7;--quiet-wait=0\" CACHE STRING \"\")\n")
set(common -G Ninja -C "${WORK}/init.cmake" "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu
    -DKILN_SEARCH=random -DKILN_BUDGET=0.1 -DKILN_REPETITIONS=3 "-DKILN_WORKLOG=${WORK}/worklog.sqlite"
    "-DKILN_RECORDS_DIR=${WORK}/records")
# 1. A 10 % budget compiles what it measures.
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/first" ${common})
string(TIMESTAMP t0 "%s")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/first" OUTPUT_VARIABLE out)
string(TIMESTAMP t1 "%s")
file(READ "${WORK}/first/kiln/sum_squares/generated/manifest.json" manifest)
string(JSON variants LENGTH "${manifest}" variants)
if(NOT variants EQUAL 1000)
  message(FATAL_ERROR "the large space has ${variants} variants, expected 1000")
endif()
count_variants("${WORK}/first" compiled)
math(EXPR limit "${variants} * 15 / 100")
if(compiled GREATER limit OR compiled LESS 1)
  message(FATAL_ERROR "a 10 % budget compiled ${compiled} of ${variants} variants (at most ${limit} expected):\n${out}")
endif()
kiln_expect("${out}" "sum_squares: compiled ${compiled} variants in" "one parallel batch of what the search proposed")
kiln_expect("${out}" "sum_squares on [^\n]*: 100 evaluated, 100 passed" "the budget's tally")
if(NOT EXISTS "${WORK}/first/kiln/sum_squares/sum_squares.record.json")
  message(FATAL_ERROR "no record after tuning:\n${out}")
endif()
math(EXPR took "${t1} - ${t0}")
message(STATUS "compile on demand: ${compiled} of ${variants} variants compiled, build and tune in ${took} s")

# 2. A fresh build directory with the worklog: nothing compiled, nothing measured, the same record.
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/second" ${common})
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/second" OUTPUT_VARIABLE again)
count_variants("${WORK}/second" recompiled)
if(NOT recompiled EQUAL 0)
  message(FATAL_ERROR "a re-run from the worklog compiled ${recompiled} variants:\n${again}")
endif()
kiln_expect("${again}" "100 evaluated, 100 passed, 0 wrong, 0 failed to build or run; 0 measured now" "no measurement in the re-run")
file(READ "${WORK}/first/kiln/sum_squares/sum_squares.record.json" first_record)
file(READ "${WORK}/second/kiln/sum_squares/sum_squares.record.json" second_record)
string(JSON first_winner GET "${first_record}" buckets 0 winner)
string(JSON second_winner GET "${second_record}" buckets 0 winner)
if(NOT first_winner STREQUAL second_winner)
  message(FATAL_ERROR "the re-run chose ${second_winner}, the first run ${first_winner}")
endif()
message(STATUS "compile on demand: a fresh build directory re-ran from the worklog with no compile")

