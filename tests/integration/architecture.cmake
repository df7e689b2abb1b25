cmake_minimum_required(VERSION 3.25)
# A build whose CUDA architectures leave out the tuned GPU's is refused at configure time with a
# clear message; one that includes it configures (cmake -P, with KILN_BUILD, WORK, SOURCE and
# CUDA_COMPILER set). Nothing is tuned: no GPU is needed.
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")
file(REMOVE_RECURSE "${WORK}")
kiln_install_under_test("${KILN_BUILD}" "${WORK}" prefix)
set(project "${SOURCE}/tests/integration/faulty_cuda_project")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/sm90" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
                        "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}" -DCMAKE_CUDA_ARCHITECTURES=90a -DKILN_GPU=l4
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "a build for sm_90a only was accepted for an L4 (sm_89):\n${out}")
endif()
# CMake wraps the message at any space.
kiln_expect("${out}" "CUDA[ \n]+architecture[ \n]+89,[ \n]+but[ \n]+this[ \n]+build[ \n]+compiles[ \n]+for[ \n]+CMAKE_CUDA_ARCHITECTURES=90a" "the refusal")
kiln_run(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/sm89" -G Ninja "-DCMAKE_PREFIX_PATH=${prefix}"
         "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}" "-DCMAKE_CUDA_ARCHITECTURES=89;90a" -DKILN_GPU=l4)
message(STATUS "architecture check: sm_90a-only refused for an L4, 89;90a accepted")
