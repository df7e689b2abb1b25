cmake_minimum_required(VERSION 3.25)
# Kiln configured with KILN_BUILD_KERNELS=OFF and its tests on (cmake -P, with WORK and SOURCE set):
# the tool and its tests build without the shipped kernels, so no test of the kernels may be part
# of that build (they include the kernels' public headers and link the tuned library, which it
# does not make: on the GPU machine such a build stopped at kiln/nbody.hpp, not found). Configures
# only; the targets are read from the generated build.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G Ninja -DKILN_BUILD_KERNELS=OFF -DKILN_BUILD_TESTS=ON
         OUTPUT_VARIABLE out)
kiln_expect("${out}" "KILN_BUILD_KERNELS is OFF: the shipped kernels' tests are not built" "the note that they are left out")
find_program(ninja NAMES ninja ninja-build REQUIRED)
kiln_run(COMMAND "${ninja}" -C "${WORK}" -t targets all OUTPUT_VARIABLE targets)
kiln_expect("${targets}" "(^|\n)kiln: " "the tool among the targets")
kiln_expect("${targets}" "(^|\n)tuner_[a-z_]+_test: " "the tool's tests among the targets")
if(targets MATCHES "(^|\n)(kernels_[a-z0-9_]+|kiln_kernels): ")
  message(FATAL_ERROR "a build without the kernels has the target ${CMAKE_MATCH_2}")
endif()
message(STATUS "without the kernels: the tool and its tests configure, and no kernel test is among them")
