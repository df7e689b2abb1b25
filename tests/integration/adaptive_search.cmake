cmake_minimum_required(VERSION 3.25)
# The adaptive searches in a real tuning (cmake -P, with KILN_BUILD, WORK and SOURCE set): on
# tests/integration/large_project (1000 variants), each of anneal, genetic and forest tunes a fresh
# build directory and worklog with a budget of 8 variants, compiling on demand, and writes a
# record of 8 evaluated variants, having compiled those 8 and no other (a search that commits
# to nothing ahead compiles each proposal when it comes). (Replays run the strategies offline; this runs them in `kiln
# tune`, whose searcher walks a grid the tuning owns: it once walked a destroyed one and crashed
# before its first measurement.)
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/large_project")
# Without near-tie re-measurement: these runs test the searchers (it took 88 of anneal's 150 s
# here, re-measuring in turns the five variants of 8 that tie).
file(WRITE "${WORK}/init.cmake" "set(KILN_TUNE_ARGS \"--seed=11;--quiet-wait=0;--interleave-rounds=0\" CACHE STRING \"\")\n")
foreach(strategy IN ITEMS anneal genetic forest)
  set(build "${WORK}/${strategy}")
  kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${build}" -G Ninja -C "${WORK}/init.cmake"
                   "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu -DKILN_SEARCH=${strategy}
                   -DKILN_BUDGET=8 -DKILN_REPETITIONS=3 "-DKILN_WORKLOG=${build}/worklog.sqlite"
                   "-DKILN_RECORDS_DIR=${WORK}/records-${strategy}")
  kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE out)
  kiln_expect("${out}" "sum_squares on [^\n]*: 8 evaluated, 8 passed" "${strategy}: the budget's tally")
  set(record "${build}/kiln/sum_squares/sum_squares.record.json")
  if(NOT EXISTS "${record}")
    message(FATAL_ERROR "${strategy}: no record after tuning:\n${out}")
  endif()
  file(READ "${record}" text)
  string(JSON strategy_recorded GET "${text}" strategy)
  string(JSON evaluated GET "${text}" counts evaluated)
  if(NOT strategy_recorded STREQUAL strategy OR NOT evaluated EQUAL 8)
    message(FATAL_ERROR "${strategy}: the record says strategy ${strategy_recorded}, ${evaluated} evaluated")
  endif()
  # The tuner's own count of what it compiled (the build may have compiled the default before).
  if(NOT out MATCHES "8/8 \\(8 measured now, ([0-9]+) compiled\\)")
    message(FATAL_ERROR "${strategy}: no final progress line with the compiled count:\n${out}")
  endif()
  set(compiled ${CMAKE_MATCH_1})
  if(NOT compiled EQUAL 8)
    message(FATAL_ERROR "${strategy}: ${compiled} variants compiled for 8 proposals:\n${out}")
  endif()
  message(STATUS "adaptive search: ${strategy} tuned 8 of 1000 variants, ${compiled} compiled")
  if(strategy STREQUAL "forest")
    # The budget grown over the same worklog: the 8 variants measured come in as priors, and only
    # the remainder is measured.
    kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${build}" -DKILN_BUDGET=12)
    kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE again)
    kiln_expect("${again}" "sum_squares: 8 variants of this context already checked and timed" "forest: the priors")
    kiln_expect("${again}" "4/4 \\(4 measured now" "forest: only the budget's remainder measured")
    kiln_expect("${again}" "sum_squares on [^\n]*: 12 evaluated, 12 passed" "forest: the grown budget's tally")
  endif()
endforeach()
