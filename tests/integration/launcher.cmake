cmake_minimum_required(VERSION 3.25)
# The user's compiler launcher (CMAKE_<LANG>_COMPILER_LAUNCHER: ccache, sccache, distcc) runs on
# the variants' compiles too, not only on the project's ordinary targets (cmake -P, with
# KILN_BUILD, WORK and SOURCE set). A logging launcher must see every variant's source; with
# ccache installed, a second build directory must get every variant from its cache.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/user_project")

# A launcher like ccache: it runs the compiler it is given, and logs what it compiled.
file(WRITE "${WORK}/launcher.sh" "#!/bin/sh\necho \"$@\" >> \"${WORK}/launched.log\"\nexec \"$@\"\n")
file(CHMOD "${WORK}/launcher.sh" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/logged" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
         -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu "-DCMAKE_CXX_COMPILER_LAUNCHER=${WORK}/launcher.sh")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/logged" --target kiln_compile OUTPUT_VARIABLE out)
file(READ "${WORK}/logged/kiln/scale_rows/generated/manifest.json" manifest)
string(JSON variants LENGTH "${manifest}" variants)
file(STRINGS "${WORK}/launched.log" launched REGEX "/variants/scale_rows__[A-Za-z0-9_]+\\.cpp")
list(LENGTH launched through_launcher)
if(NOT through_launcher EQUAL variants)
  message(FATAL_ERROR "${through_launcher} of ${variants} variant compiles went through the launcher:\n${launched}")
endif()
message(STATUS "launcher: all ${variants} variant compiles went through CMAKE_CXX_COMPILER_LAUNCHER")

find_program(CCACHE ccache)
if(NOT CCACHE)
  message(STATUS "launcher: ccache not installed; its cache-hit check skipped")
  return()
endif()
set(ENV{CCACHE_DIR} "${WORK}/ccache")
set(ENV{CCACHE_BASEDIR} "${WORK}")
foreach(tree first second)
  kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/${tree}" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
           -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
  if(tree STREQUAL "second")
    kiln_run(COMMAND "${CCACHE}" --zero-stats)
  endif()
  kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/${tree}" --target kiln_compile)
endforeach()
kiln_run(COMMAND "${CCACHE}" --print-stats OUTPUT_VARIABLE stats)
set(hits 0)
foreach(counter direct_cache_hit preprocessed_cache_hit)
  if(stats MATCHES "${counter}[ \t]+([0-9]+)")
    math(EXPR hits "${hits} + ${CMAKE_MATCH_1}")
  endif()
endforeach()
# The template and every variant: a fresh build directory compiles nothing again.
if(hits LESS variants)
  message(FATAL_ERROR "ccache served ${hits} compiles of a second build directory, expected at least ${variants}:\n${stats}")
endif()
message(STATUS "launcher: ccache served ${hits} compiles of a fresh build directory")
