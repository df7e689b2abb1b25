cmake_minimum_required(VERSION 3.25)
# A kernel family through the installed Kiln (cmake -P, with KILN_BUILD, WORK and SOURCE set), on
# tests/integration/family_project:
#  1. tuned: each member is tuned, the family header switches on the key, and the program's calls
#     reach the member of their degree (and a degree without a member is refused);
#  2. a member's space that repeats another member's key stops the build with one message naming
#     that space file and the place;
#  3. a declaration without KEY stops the configure with one message naming the family.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/family_project")

set(build "${WORK}/tuned")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${build}" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
         -DKILN_TUNE=ON -DKILN_TUNE_BACKENDS=cpu "-DKILN_RECORDS_DIR=${WORK}/records")
kiln_run(COMMAND "${CMAKE_COMMAND}" --build "${build}" OUTPUT_VARIABLE out)
kiln_expect("${out}" "poly_d2 on [^\n]*: 2 evaluated, 2 passed" "the member poly_d2 tuned")
kiln_expect("${out}" "poly_d3 on [^\n]*: 2 evaluated, 2 passed" "the member poly_d3 tuned")
kiln_expect("${out}" "Family header of poly" "the family's header step")
file(READ "${build}/kiln/include/kiln/tuned/poly.hpp" header)
kiln_expect("${header}" "case 2:\n      return ::kiln::tuned::poly_d2::dispatch\\(" "the member of DEGREE 2 in the switch")
kiln_expect("${header}" "case 3:\n      return ::kiln::tuned::poly_d3::dispatch\\(" "the member of DEGREE 3 in the switch")
kiln_run(COMMAND "${build}/poly_app" OUTPUT_VARIABLE ran)
message(STATUS "${ran}")
kiln_expect("${ran}" "family: OK" "the program's checks passing")
kiln_expect("${ran}" "degree 2: [^\n]*variant poly_d2__" "degree 2 dispatched to poly_d2")

# A copy of the project whose second member repeats the first member's key.
set(copy "${WORK}/same_key")
file(COPY "${project}/" DESTINATION "${copy}")
file(READ "${copy}/poly_d3.space.json" space)
string(REPLACE "\"DEGREE\": { \"values\": [3] }" "\"DEGREE\": { \"values\": [2] }" changed "${space}")
if(changed STREQUAL space)
  message(FATAL_ERROR "the test could not change DEGREE in ${copy}/poly_d3.space.json")
endif()
file(WRITE "${copy}/poly_d3.space.json" "${changed}")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${copy}" -B "${WORK}/same_key_build" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}")
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/same_key_build" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "a family whose members share a key built:\n${out}")
endif()
kiln_expect("${out}" "kiln: error: [^\n]*/same_key/poly_d3.space.json: /parameters/DEGREE/values: DEGREE = 2 is the key of member poly_d2"
            "one message naming the space file and the place")
message(STATUS "same key: the build stops with the space file's place")

# A copy of the project whose declaration has no KEY.
set(copy "${WORK}/no_key")
file(COPY "${project}/" DESTINATION "${copy}")
file(READ "${copy}/CMakeLists.txt" lists)
string(REPLACE "  KEY DEGREE\n" "" changed "${lists}")
if(changed STREQUAL lists)
  message(FATAL_ERROR "the test could not remove KEY from ${copy}/CMakeLists.txt")
endif()
file(WRITE "${copy}/CMakeLists.txt" "${changed}")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${copy}" -B "${WORK}/no_key_build" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "a family without KEY configured:\n${out}")
endif()
kiln_expect("${out}" "kiln_add_family\\(poly\\): KEY is required" "the configure error naming the family")
message(STATUS "no key: the configure stops, naming the family")
