cmake_minimum_required(VERSION 3.25)
# A user's project tunes its own kernel with the installed Kiln (as cpu-tune does), installs its
# tuned library; a consumer finds both packages with find_package, builds and runs.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
# Paths with spaces, as users' projects often have: the project's source, its build and the
# consumer's build (the tool's captured command lines, depfiles and generated sources carry them).
set(user_source "${WORK}/user project")
file(COPY "${SOURCE}/tests/integration/user_project/" DESTINATION "${user_source}")
set(user_build "${WORK}/user build")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${user_source}" -B "${user_build}" -G Ninja
         "-DCMAKE_PREFIX_PATH=${prefix}" -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu)
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${user_build}" OUTPUT_VARIABLE out)
kiln_expect("${out}" "scale_rows on [^\n]*: 4 evaluated, 4 passed" "the user kernel tuned")
kiln_run(COMMAND "${CMAKE_COMMAND}" --install "${user_build}" --prefix "${prefix}")

set(consumer_build "${WORK}/consumer build")
# The kernels component needs only the kernels' runtime dependencies: the tool's build
# dependencies are made unfindable here.
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}/tests/integration/consumer" -B "${consumer_build}" -G Ninja
         "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
         -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
         -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON)
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${consumer_build}")
kiln_run(COMMAND "${consumer_build}/consumer" OUTPUT_VARIABLE ran)
kiln_expect("${ran}" "consumer: OK" "the consumer's checks passing")
message(STATUS "${ran}")
