cmake_minimum_required(VERSION 3.25)
# The build's list of backends (cmake/KilnBackends.cmake) at configure time: a kernel whose space
# names a backend that is not in it, and a KILN_TUNE_BACKENDS entry that is not, each stop the
# configure with one error saying what and where; a space of a listed backend configures (cmake
# -P, with KILN_BUILD, WORK and SOURCE set; Kiln found in its build tree). Nothing is built.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
set(project "${SOURCE}/tests/integration/backend_project")

# Configures the project in <dir> with <args>; <out> gets its output, and the configure must fail.
function(refused dir out)
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/${dir}" -G Ninja
                          "-DCMAKE_PREFIX_PATH=${KILN_BUILD}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  if(rc EQUAL 0)
    message(FATAL_ERROR "configured, and should not have (${ARGN}):\n${text}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# CMake wraps a message at any space.
set(space "${SOURCE}/tests/generator/bad/backend_unknown.space.json")
refused(space out "-DSPACE=${space}")
kiln_expect("${out}" "kiln_add_kernel\\(backend_kernel\\):[ \n]+[^ \n]*backend_unknown\\.space\\.json:[ \n]+/backend:[ \n]+unknown[ \n]+backend[ \n]+\"hip\"[ \n]+\\(Kiln's[ \n]+backends:[ \n]+cpu,[ \n]+cuda\\)"
            "the space's unknown backend, with the file and the place")

set(good "${SOURCE}/tests/generator/good/toy_cpu.space.json")
refused(tuned out "-DSPACE=${good}" -DKILN_TUNE_BACKENDS=hip)
kiln_expect("${out}" "KILN_TUNE_BACKENDS:[ \n]+unknown[ \n]+backend[ \n]+\"hip\"" "the unknown backend of KILN_TUNE_BACKENDS")

kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/good" -G Ninja "-DCMAKE_PREFIX_PATH=${KILN_BUILD}"
                 "-DSPACE=${good}")
message(STATUS "unknown backends: refused in a space and in KILN_TUNE_BACKENDS; a cpu space configures")
