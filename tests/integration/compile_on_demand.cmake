cmake_minimum_required(VERSION 3.25)
# Compile on demand (cmake -P, with KILN_BUILD, WORK and SOURCE set), on
# tests/integration/large_project, a space of 1000 valid variants:
#  0. the build is interrupted (SIGINT to its process group, as Ctrl-C sends) while the tune step
#     compiles: kiln tune stops (exit 130) and the compilers it kills leave no compile failure, so
#     step 1, in the same build directory and worklog, builds and passes every variant;
#  1. tuned by the build with the space's own search (tuning.search random, tuning.budget 0.05:
#     no KILN_SEARCH or KILN_BUDGET given), 5 % of the space, the tune step compiles at most
#     7.5 % of the variants (it compiles what the search proposes, in one parallel batch), and a
#     record comes out;
#  2. a fresh build directory tuning from the same worklog compiles no variant and measures none,
#     and neither does one whose kernel header differs in comments and whitespace only; a header
#     the kernel includes and its SOURCES do not name keys the measurements and, edited, runs the
#     tune step again;
#  3. another search (another seed and budget) in that worklog chooses from all it holds.
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

# A list in a cache entry goes through an initial-cache file, not -D. Without near-tie
# re-measurement: these runs test what is compiled, not which of the ties wins.
file(WRITE "${WORK}/init.cmake" "set(KILN_TUNE_ARGS \"--seed=7;--quiet-wait=0;--interleave-rounds=0\" CACHE STRING \"\")\n")
set(common -G Ninja -C "${WORK}/init.cmake" "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu
    -DKILN_REPETITIONS=3 "-DKILN_WORKLOG=${WORK}/worklog.sqlite"
    "-DKILN_RECORDS_DIR=${WORK}/records")
# 0. Interrupted while compiling. The build runs in its own session; once a compiler of the tune
# step runs, the whole process group gets SIGINT (ninja passes it on to the tune step's group).
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/first" ${common})
execute_process(
  COMMAND bash -c [[
    setsid "$1" --build "$2" > "$3" 2>&1 &
    leader=$!
    for i in $(seq 1 1200); do
      # A compiler of the tune step (the template's own compile prints no "Tuning" line first).
      if grep -q "Tuning sum_squares" "$3" && pgrep -s "$leader" cc1plus > /dev/null; then break; fi
      sleep 0.1
    done
    pgrep -s "$leader" cc1plus > /dev/null && echo "interrupting while compiling"
    kill -INT -- "-$leader"
    wait "$leader"
    echo "build exit $?"
  ]] _ "${CMAKE_COMMAND}" "${WORK}/first" "${WORK}/interrupted.log"
  OUTPUT_VARIABLE interrupting RESULT_VARIABLE rc)
file(READ "${WORK}/interrupted.log" interrupted)
kiln_expect("${interrupting}" "interrupting while compiling" "a compiler running when the build was interrupted")
kiln_expect("${interrupted}" "kiln: tuning interrupted" "kiln tune stopping on the interrupt")
if(interrupted MATCHES "compile failure|failed \\(killed by")
  message(FATAL_ERROR "an interrupted compile was taken for a failure:\n${interrupted}")
endif()
file(GLOB failed_records "${WORK}/first/kiln/sum_squares/builds/*.json")
foreach(rec IN LISTS failed_records)
  file(READ "${rec}" text)
  if(text MATCHES "\"status\": \"failed\"")
    message(FATAL_ERROR "a build record of a killed compile says failed: ${rec}\n${text}")
  endif()
endforeach()
message(STATUS "compile on demand: interrupted while compiling, nothing recorded as a compile failure")

# 1. A 5 % budget compiles what it measures (resuming from step 0's worklog and build).
string(TIMESTAMP t0 "%s")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/first" OUTPUT_VARIABLE out)
string(TIMESTAMP t1 "%s")
file(READ "${WORK}/first/kiln/sum_squares/generated/manifest.json" manifest)
string(JSON variants LENGTH "${manifest}" variants)
if(NOT variants EQUAL 1000)
  message(FATAL_ERROR "the large space has ${variants} variants, expected 1000")
endif()
count_variants("${WORK}/first" compiled)
math(EXPR limit "${variants} * 75 / 1000")
if(compiled GREATER limit OR compiled LESS 1)
  message(FATAL_ERROR "a 5 % budget compiled ${compiled} of ${variants} variants (at most ${limit} expected):\n${out}")
endif()
kiln_expect("${out}" "sum_squares: compiled ${compiled} variants in" "one parallel batch of what the search proposed")
kiln_expect("${out}" "sum_squares on [^\n]*: 50 evaluated, 50 passed" "the budget's tally")
# The compiles are a stage of their own, taken out of the search's time, and the session keeps both.
kiln_expect("${out}" "sum_squares: wall time [0-9]+\\.[0-9] s: [^\n]*compile [0-9.]+ s, search [0-9.]+ s" "the stage times of the run")
kiln_run(COMMAND "${prefix}/bin/kiln" report --worklog "${WORK}/worklog.sqlite" --kernel sum_squares OUTPUT_VARIABLE session)
kiln_expect("${session}" "\n- Time: [0-9]+\\.[0-9] s: [^\n]*compile [0-9.]+ s, search [0-9.]+ s" "the session's stage times in the worklog")
if(NOT EXISTS "${WORK}/first/kiln/sum_squares/sum_squares.record.json")
  message(FATAL_ERROR "no record after tuning:\n${out}")
endif()
file(READ "${WORK}/first/kiln/sum_squares/sum_squares.record.json" record)
string(JSON strategy GET "${record}" strategy)
if(NOT strategy STREQUAL "random")
  message(FATAL_ERROR "the space says tuning.search random, the record says ${strategy}")
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
kiln_expect("${again}" "50 evaluated, 50 passed, 0 wrong, 0 failed to build or run; 0 measured now" "no measurement in the re-run")
file(READ "${WORK}/first/kiln/sum_squares/sum_squares.record.json" first_record)
file(READ "${WORK}/second/kiln/sum_squares/sum_squares.record.json" second_record)
string(JSON first_winner GET "${first_record}" buckets 0 winner)
string(JSON second_winner GET "${second_record}" buckets 0 winner)
if(NOT first_winner STREQUAL second_winner)
  message(FATAL_ERROR "the re-run chose ${second_winner}, the first run ${first_winner}")
endif()
message(STATUS "compile on demand: a fresh build directory re-ran from the worklog with no compile")

# 2b. The same project with a comment reworded, a line re-indented and CRLF line ends in the
# kernel's header: its bytes changed, its code did not, so the worklog's measurements stand (found
# by the code key the first run's session recorded) and nothing is measured again.
file(REMOVE_RECURSE "${WORK}/edited_project")
file(COPY "${project}/" DESTINATION "${WORK}/edited_project")
file(READ "${WORK}/edited_project/sum_squares.hpp" kernel_text)
string(REPLACE "// The sum of squares of a vector," "// The sum of the squares of a vector (reworded)," kernel_text "${kernel_text}")
string(REPLACE "  double total = 0;" "      double total = 0;   /* every pass adds to it */" kernel_text "${kernel_text}")
string(REPLACE "\n" "\r\n" kernel_text "${kernel_text}")
file(WRITE "${WORK}/edited_project/sum_squares.hpp" "${kernel_text}")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${WORK}/edited_project" -B "${WORK}/edited" ${common})
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/edited" OUTPUT_VARIABLE edited)
kiln_expect("${edited}" "sum_squares: the sources differ from those of context [0-9a-f]+ in comments and whitespace only: its measurements stand"
            "the context found by its code")
kiln_expect("${edited}" "50 evaluated, 50 passed, 0 wrong, 0 failed to build or run; 0 measured now"
            "no measurement after a comment edit")
message(STATUS "compile on demand: a comment edit in the kernel's header measured nothing again")


# 2c. A header the kernel's header includes and its SOURCES do not name keys the measurements and
# runs the build's tune step again when edited (topk_cuda's build named 8 of its 11 headers, and
# a tuning after an edit of an unnamed one continued the old code's context). A budget of 3 keeps
# the two new contexts small.
file(REMOVE_RECURSE "${WORK}/split_project")
file(COPY "${project}/" DESTINATION "${WORK}/split_project")
file(READ "${WORK}/split_project/sum_squares.hpp" kernel_text)
string(REPLACE "#include \"kiln/workload.hpp\"" "#include \"kiln/workload.hpp\"\n#include \"detail/passes.hpp\""
       kernel_text "${kernel_text}")
string(REPLACE "  double total = 0;" "  double total = large::detail::kStart;" kernel_text "${kernel_text}")
file(WRITE "${WORK}/split_project/sum_squares.hpp" "${kernel_text}")
file(WRITE "${WORK}/split_project/detail/passes.hpp"
     "#pragma once\nnamespace large::detail {\ninline constexpr double kStart = 0;\n}  // namespace large::detail\n")
set(split_args -DKILN_BUDGET=3)
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${WORK}/split_project" -B "${WORK}/split" ${common} ${split_args})
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/split" OUTPUT_VARIABLE split)
kiln_expect("${split}" "3 evaluated, 3 passed, 0 wrong, 0 failed to build or run; 3 measured now" "a new context for the new code")
kiln_expect("${split}" "sum_squares: a new context [0-9a-f]+ \\(2 source files keyed\\): [^\n]* the worklog holds, so every variant is measured afresh"
            "the new context said, with the unnamed header keyed")
# A comment in the unnamed header: the tune step runs again (its dependency file names the header)
# and continues the context by its code, measuring nothing. Each edit waits a second first: a file
# written in the same tick of the file system's clock as the last step's stamp is not newer to the
# build tool.
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1)
file(APPEND "${WORK}/split_project/detail/passes.hpp" "// the sum starts from zero\n")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/split" OUTPUT_VARIABLE split_comment)
kiln_expect("${split_comment}" "Tuning sum_squares" "the tune step run again after an edit of an unnamed header")
kiln_expect("${split_comment}" "in comments and whitespace only: its measurements stand" "the context continued by its code")
kiln_expect("${split_comment}" "0 measured now" "nothing measured after a comment edit")
# Its code: a new context, measured afresh.
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1)
file(WRITE "${WORK}/split_project/detail/passes.hpp"
     "#pragma once\nnamespace large::detail {\ninline constexpr double kStart = 0.0 * 1;\n}  // namespace large::detail\n")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/split" OUTPUT_VARIABLE split_code)
kiln_expect("${split_code}" "Tuning sum_squares" "the tune step run again after a code edit of an unnamed header")
kiln_expect("${split_code}" "3 measured now" "a new context after a code edit of an unnamed header")
kiln_expect("${split_code}" "sum_squares: a new context [0-9a-f]+ \\(2 source files keyed\\)" "the new context said")
message(STATUS "compile on demand: a header the sources include and do not name keys the measurements and reruns the tune step")

# 3. Another search in the same worklog (another seed, a budget of 5): it measures its own few and
# chooses from everything the context holds, the first run's 50 too, as kiln record would.
file(WRITE "${WORK}/init3.cmake" "set(KILN_TUNE_ARGS \"--seed=8;--quiet-wait=0;--interleave-rounds=0\" CACHE STRING \"\")\n")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/third" -G Ninja -C "${WORK}/init3.cmake"
                 "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu -DKILN_BUDGET=5
                 -DKILN_REPETITIONS=3 "-DKILN_WORKLOG=${WORK}/worklog.sqlite" "-DKILN_RECORDS_DIR=${WORK}/records")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/third" OUTPUT_VARIABLE third)
kiln_expect("${third}" "sum_squares: [0-9]+ variants? this search did not propose, measured in this context before, chosen from too"
            "the earlier search's measurements chosen from")
file(READ "${WORK}/third/kiln/sum_squares/sum_squares.record.json" third_record)
string(JSON evaluated GET "${third_record}" counts evaluated)
if(evaluated LESS 50)
  message(FATAL_ERROR "a search of 5 in a worklog of 50 recorded ${evaluated} evaluated:\n${third}")
endif()
message(STATUS "compile on demand: a second search chose from ${evaluated} measured variants")
