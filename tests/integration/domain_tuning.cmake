cmake_minimum_required(VERSION 3.25)
# A problem domain tuned for real, through the installed Kiln (cmake -P, with KILN_BUILD, WORK and
# SOURCE set), on tests/integration/domain_project: the variants are timed on the coverage points,
# the header holds the learned dispatch (and is the one `kiln header` makes from the record alone),
# the record and `kiln report` give the regret and actual/floor over the held-out points, the heat
# maps are written, and `kiln record` rebuilds the same record from the worklog alone.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/domain_project")
set(build "${WORK}/tuned")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${build}" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
         -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu -DKILN_REPETITIONS=3 "-DKILN_RECORDS_DIR=${WORK}/records")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE out)
kiln_expect("${out}" "scale_rows on [^\n]*: 3 evaluated, 3 passed, 0 wrong, 0 failed" "the build's tally")
kiln_expect("${out}" "domain: 8 coverage points, dispatch regret there median [0-9.]+, worst 1\\.0[0-9]+ \\(tolerance 1\\.10\\); learned dispatch of [0-9]+ leaves"
            "the dispatch fitted within the tolerance at the coverage points")
kiln_expect("${out}" "held out: 6 points: regret median [0-9.]+, worst [0-9.]+; actual/floor median" "the held-out figures")
kiln_expect("${out}" "scale_rows: coverage points [0-9]+/[0-9]+ variants timed  ETA [0-9]+ s" "the coverage stage's progress and ETA")
# Each int dim's smallest coverage point is timed on every variant with the listed problem, so a
# variant fastest only there can be a finalist.
kiln_expect("${out}" "scale_rows: probe points rows=1 cols=[0-9]+, rows=[0-9]+ cols=1 timed on 3 of the 3 variants that passed"
            "the probe points, timed on every variant")
kiln_expect("${out}" "scale_rows: held-out points [0-9]+/[0-9]+ variants timed" "the held-out stage's progress")
# Where the tune step's time went, the domain's own stages among them (each shows from 0.1 s).
kiln_expect("${out}" "scale_rows: wall time [0-9]+\\.[0-9] s: [^\n]*search [0-9.]+ s[^\n]*coverage [0-9.]+ s[^\n]*domain [0-9.]+ s"
            "the stage times of the run")

set(dir "${build}/kiln/scale_rows")
set(kiln "${prefix}/bin/kiln")
set(header "${build}/kiln/include/kiln/tuned/scale_rows.hpp")
file(READ "${header}" tuned)
kiln_expect("${tuned}" "decltype\\(auto\\) dispatch\\(const Problem& p, Launch&& launch\\) \\{\n" "dispatch()")
kiln_expect("${tuned}" "return launch\\(ALGO[a-z]+_UNROLL[14]\\{\\}\\);  // leaf 0: [0-9]+ coverage points?, worst regret 1"
            "a leaf launching its configuration, with its provenance")
kiln_expect("${tuned}" "\"learned dispatch\"" "provenance per leaf")

# The header from the record alone, byte for byte.
kiln_run(COMMAND "${kiln}" header --manifest "${dir}/generated/manifest.json" --record "${dir}/scale_rows.record.json"
         --out "${WORK}/rebuilt.hpp")
file(READ "${WORK}/rebuilt.hpp" rebuilt)
if(NOT rebuilt STREQUAL tuned)
  message(FATAL_ERROR "kiln header made another header from the record than the tuning did")
endif()
message(STATUS "the learned dispatch's header rebuilds byte for byte from the record")

kiln_run(COMMAND "${kiln}" report --record "${dir}/scale_rows.record.json" --svg-dir "${WORK}/maps" OUTPUT_VARIABLE report)
kiln_expect("${report}" "### Over the problem domain" "the domain section")
kiln_expect("${report}" "\n\\| all \\| 6 \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\|\n" "median and worst over the held-out points")
kiln_expect("${report}" "Worst by regret" "the worst points")
foreach(map floor regret)
  if(NOT EXISTS "${WORK}/maps/scale_rows_${map}.svg")
    message(FATAL_ERROR "kiln report --svg-dir wrote no ${map} heat map")
  endif()
endforeach()
kiln_expect("${report}" "maps/scale_rows_floor.svg" "the link to the heat map")
message(STATUS "the report gives regret and actual/floor over the held-out points, with heat maps")

# `kiln record` rebuilds the record from the worklog alone (held-out timings included), measuring nothing.
kiln_run(COMMAND "${kiln}" record --manifest "${dir}/generated/manifest.json" --worklog "${build}/kiln/worklog.sqlite"
         --device "${prefix}/share/kiln/devices/cpu.json" --out "${WORK}/again.record.json")
file(READ "${dir}/scale_rows.record.json" first_record)
file(READ "${WORK}/again.record.json" second_record)
if(NOT first_record STREQUAL second_record)
  message(FATAL_ERROR "kiln record made another record from the worklog than the tuning wrote")
endif()
message(STATUS "kiln record rebuilt the same record, held-out points included, from the worklog")
