# Kiln's CMake interface: kiln_add_kernel().
#
#   kiln_add_kernel(<kernel>
#     SPACE <space.json>                  # the parameter space (generator/README.md)
#     [SOURCES <files...>]                # kernel sources the variants include: their content keys
#                                         # the worklog's cache and triggers recompiles
#     [INCLUDE_DIRECTORIES <dirs...>]     # default: the space file's directory
#     [LINK_LIBRARIES <targets...>]       # linked into every variant and into LIBRARY
#     [COMPILE_OPTIONS <options...>]      # for the variants and the API sources
#     [LIBRARY <target>                   # a library that gets the dispatch header and API_SOURCES
#      API_SOURCES <files...>]            # sources that #include "kiln/tuned/<kernel>.hpp"
#     [RECORD <file>])                    # committed record used when not tuning; default
#                                         # ${KILN_RECORDS_DIR}/<device>/<kernel>.record.json
#
# At configure time the generator writes one source per feasible variant. When the kernel's
# backend is tuned (KILN_TUNE and KILN_TUNE_BACKENDS), every variant becomes its own executable
# target (a variant that does not compile is recorded and does not fail the build), and a tune
# step after all variants and before LIBRARY validates and times them and writes the record and
# the dispatch header. Otherwise the header comes from the committed record, or from the space's
# defaults when there is none: the same record gives the same header either way.
include_guard(GLOBAL)

set(KILN_TUNE OFF CACHE BOOL "Tune kernels during the build")
set(KILN_TUNE_BACKENDS "cpu;cuda" CACHE STRING "Backends tuned when KILN_TUNE is ON (cpu, cuda)")
set(KILN_GPU "h200" CACHE STRING "Device file for CUDA kernels: l4, h100, h200 (presets/devices) or native")
set(KILN_SEARCH "exhaustive" CACHE STRING "Search strategy: exhaustive or anneal")
set(KILN_BUDGET "0" CACHE STRING "anneal: distinct variants to measure per kernel (0: a third of the space)")
set(KILN_REPETITIONS "7" CACHE STRING "Timed repetitions per problem; the median is kept")
set(KILN_WORKLOG "${CMAKE_BINARY_DIR}/kiln/worklog.sqlite" CACHE FILEPATH "The worklog (SQLite)")
set(KILN_UPDATE_RECORDS OFF CACHE BOOL "Also write tuning records into KILN_RECORDS_DIR, to be committed")
set(KILN_CPU_FLAGS "-O3;-march=native" CACHE STRING "Compiler options of CPU variants and CPU API sources")
if(EXISTS "${CMAKE_SOURCE_DIR}/presets/records")
  set(KILN_RECORDS_DIR "${CMAKE_SOURCE_DIR}/presets/records" CACHE PATH "Committed tuning records, one folder per device")
else()
  set(KILN_RECORDS_DIR "${CMAKE_SOURCE_DIR}/kiln-records" CACHE PATH "Committed tuning records, one folder per device")
endif()
set(KILN_GENERATED_INCLUDE_DIR "${CMAKE_BINARY_DIR}/kiln/include" CACHE INTERNAL "")
set_property(CACHE KILN_GPU PROPERTY STRINGS l4 h100 h200 native)
set_property(CACHE KILN_SEARCH PROPERTY STRINGS exhaustive anneal)

# Where the device files and the configure-time `kiln` come from: this source tree (bootstrapped
# below) or an installed package (KilnConfig.cmake sets both before including this file).
if(NOT KILN_DEVICES_DIR)
  set(KILN_DEVICES_DIR "${CMAKE_CURRENT_LIST_DIR}/../presets/devices")
endif()
get_filename_component(KILN_DEVICES_DIR "${KILN_DEVICES_DIR}" ABSOLUTE)

# Builds the `kiln` tool in a build tree of its own, so that the generator can run at configure
# time, before this project's targets exist. Reconfiguring rebuilds it; editing its sources
# triggers a reconfigure.
function(_kiln_bootstrap_tool)
  set(dir "${CMAKE_BINARY_DIR}/_kiln_tool")
  set(args -S "${KILN_SOURCE_DIR}" -B "${dir}" -G "${CMAKE_GENERATOR}" -DKILN_TOOLS_ONLY=ON
           -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
           "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}")
  if(CMAKE_MAKE_PROGRAM)
    list(APPEND args "-DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kiln: configuring the kiln tool failed:\n${out}")
  endif()
  message(STATUS "kiln: building the kiln tool (${dir})")
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target kiln RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kiln: building the kiln tool failed:\n${out}")
  endif()
  file(GLOB_RECURSE tool_sources CONFIGURE_DEPENDS
       "${KILN_SOURCE_DIR}/generator/*.cpp" "${KILN_SOURCE_DIR}/generator/*.hpp"
       "${KILN_SOURCE_DIR}/autotune/tuner/*" "${KILN_SOURCE_DIR}/autotune/worklog/*"
       "${KILN_SOURCE_DIR}/autotune/cli/*")
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${tool_sources})
  set(KILN_EXECUTABLE "${dir}/autotune/cli/kiln" CACHE INTERNAL "The kiln tool")
endfunction()

if(DEFINED KILN_SOURCE_DIR AND NOT KILN_TOOLS_ONLY)
  _kiln_bootstrap_tool()
elseif(NOT KILN_EXECUTABLE AND TARGET Kiln::kiln)
  get_target_property(KILN_EXECUTABLE Kiln::kiln LOCATION)
endif()
if(NOT KILN_EXECUTABLE)
  message(FATAL_ERROR "kiln: the kiln tool was not found (use find_package(Kiln) or build from Kiln's source tree)")
endif()

# The GPU the device file describes, as nvidia-smi names it ("" when there is none).
function(_kiln_visible_gpu out_name out_cc)
  find_program(KILN_NVIDIA_SMI nvidia-smi)
  set(name "")
  set(cc "")
  if(KILN_NVIDIA_SMI)
    execute_process(COMMAND "${KILN_NVIDIA_SMI}" --query-gpu=name,compute_cap --format=csv,noheader
                    RESULT_VARIABLE rc OUTPUT_VARIABLE line ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND line)
      string(REGEX REPLACE "\n.*" "" line "${line}")
      string(REPLACE ", " ";" fields "${line}")
      list(GET fields 0 name)
      list(LENGTH fields n)
      if(n GREATER 1)
        list(GET fields 1 cc)
      endif()
    endif()
  endif()
  set(${out_name} "${name}" PARENT_SCOPE)
  set(${out_cc} "${cc}" PARENT_SCOPE)
endfunction()

# Does a device file's "match" accept this GPU? (A name containing one of match.name_contains,
# and match.compute_capability when the file gives one.)
function(_kiln_device_matches device_file gpu_name gpu_cc out)
  file(READ "${device_file}" json)
  set(name_ok FALSE)
  string(JSON count ERROR_VARIABLE json_error LENGTH "${json}" "match" "name_contains")
  if("${json_error}" STREQUAL "NOTFOUND" AND "${count}" GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON needle GET "${json}" "match" "name_contains" ${i})
      string(FIND "${gpu_name}" "${needle}" position)
      if("${position}" GREATER -1)
        set(name_ok TRUE)
      endif()
    endforeach()
  endif()
  set(cc_ok TRUE)
  string(JSON want ERROR_VARIABLE json_error GET "${json}" "match" "compute_capability")
  if("${json_error}" STREQUAL "NOTFOUND" AND NOT "${want}" STREQUAL "" AND NOT "${want}" STREQUAL "${gpu_cc}")
    set(cc_ok FALSE)
  endif()
  if(name_ok AND cc_ok)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The device file for CUDA kernels: KILN_GPU's, or for "native" the one matching the GPU here.
# When CUDA kernels are tuned, the GPU here must be the one the device file describes.
function(_kiln_gpu_device_file out)
  _kiln_visible_gpu(gpu_name gpu_cc)
  list(FIND KILN_TUNE_BACKENDS cuda tuning_cuda)
  if(KILN_GPU STREQUAL "native")
    if(gpu_name STREQUAL "")
      message(FATAL_ERROR "kiln: KILN_GPU=native (native-tune) needs an NVIDIA GPU, and nvidia-smi finds none. "
                          "Use cpu-tune on a machine without a GPU.")
    endif()
    file(GLOB files "${KILN_DEVICES_DIR}/*.json")
    foreach(f IN LISTS files)
      _kiln_device_matches("${f}" "${gpu_name}" "${gpu_cc}" ok)
      if(ok)
        set(${out} "${f}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
    message(FATAL_ERROR "kiln: no device file in ${KILN_DEVICES_DIR} describes this GPU (${gpu_name}, compute "
                        "capability ${gpu_cc}); add one like presets/devices/h100.json")
  endif()
  set(file "${KILN_DEVICES_DIR}/${KILN_GPU}.json")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "kiln: KILN_GPU=${KILN_GPU}: no device file ${file}")
  endif()
  if(KILN_TUNE AND tuning_cuda GREATER -1)
    if(gpu_name STREQUAL "")
      message(FATAL_ERROR "kiln: tuning CUDA kernels for ${KILN_GPU} needs that GPU, and nvidia-smi finds no GPU "
                          "here. Use cpu-tune, or configure with -DKILN_TUNE=OFF to build from the records.")
    endif()
    _kiln_device_matches("${file}" "${gpu_name}" "${gpu_cc}" ok)
    if(NOT ok)
      file(READ "${file}" device_json)
      string(JSON wanted GET "${device_json}" "match")
      message(FATAL_ERROR "kiln: the ${KILN_GPU} preset tunes for the GPU ${file} describes (${wanted}), but this "
                          "machine has ${gpu_name} (compute capability ${gpu_cc}). Kiln never tunes one GPU for "
                          "another: use the preset for this GPU, or native-tune.")
    endif()
  endif()
  set(${out} "${file}" PARENT_SCOPE)
endfunction()

function(kiln_add_kernel kernel)
  cmake_parse_arguments(ARG "" "SPACE;LIBRARY;RECORD"
                        "SOURCES;INCLUDE_DIRECTORIES;LINK_LIBRARIES;COMPILE_OPTIONS;API_SOURCES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SPACE)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): SPACE is required")
  endif()
  get_filename_component(space "${ARG_SPACE}" ABSOLUTE)
  if(NOT EXISTS "${space}")
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): space file ${space} does not exist")
  endif()
  file(READ "${space}" space_json)
  string(JSON backend ERROR_VARIABLE err GET "${space_json}" backend)
  if(err OR NOT (backend STREQUAL "cpu" OR backend STREQUAL "cuda"))
    # The generator reports the precise error below; the backend only picks the device file.
    set(backend cpu)
  endif()
  if(backend STREQUAL "cuda" AND NOT CMAKE_CUDA_COMPILER)
    message(STATUS "kiln: ${kernel}: skipped (a CUDA kernel, and CUDA is not enabled in this build)")
    return()
  endif()

  if(backend STREQUAL "cuda")
    _kiln_gpu_device_file(device_file)
    set(lang CUDA)
    set(harness Kiln::harness_cuda)
    set(probe Kiln::probe_cuda)
    set(variant_ext cu)
  else()
    set(device_file "${KILN_DEVICES_DIR}/cpu.json")
    set(lang CXX)
    set(harness Kiln::harness_cpu)
    set(probe Kiln::probe_cpu)
    set(variant_ext cpp)
  endif()
  file(READ "${device_file}" device_json)
  string(JSON device_name GET "${device_json}" name)

  set(dir "${CMAKE_BINARY_DIR}/kiln/${kernel}")
  execute_process(COMMAND "${KILN_EXECUTABLE}" generate --space "${space}" --target "${device_file}" --out "${dir}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${err}")
  endif()
  string(STRIP "${out}" out)
  message(STATUS "${out}")
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${space}" "${device_file}")
  include("${dir}/variants.cmake")
  if(NOT KILN_BACKEND STREQUAL backend)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): the manifest says backend ${KILN_BACKEND}")
  endif()

  if(ARG_INCLUDE_DIRECTORIES)
    set(include_dirs ${ARG_INCLUDE_DIRECTORIES})
  else()
    get_filename_component(include_dirs "${space}" DIRECTORY)
  endif()
  set(compile_options ${ARG_COMPILE_OPTIONS})
  if(backend STREQUAL "cpu")
    list(PREPEND compile_options ${KILN_CPU_FLAGS})
  endif()
  set(sources)
  foreach(s IN LISTS ARG_SOURCES)
    get_filename_component(s "${s}" ABSOLUTE)
    list(APPEND sources "${s}")
  endforeach()

  set(header "${KILN_GENERATED_INCLUDE_DIR}/kiln/tuned/${kernel}.hpp")
  if(ARG_RECORD)
    get_filename_component(committed_record "${ARG_RECORD}" ABSOLUTE)
  else()
    set(committed_record "${KILN_RECORDS_DIR}/${device_name}/${kernel}.record.json")
  endif()

  set(tuned FALSE)
  list(FIND KILN_TUNE_BACKENDS "${backend}" tuned_backend)
  if(KILN_TUNE AND tuned_backend GREATER -1)
    # What the measurements depend on besides the sources: compiler, version, flags, targets.
    string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
    file(GENERATE OUTPUT "${dir}/compiler.txt" CONTENT
"compiler ${CMAKE_${lang}_COMPILER_ID} ${CMAKE_${lang}_COMPILER_VERSION}
flags ${CMAKE_${lang}_FLAGS} ${CMAKE_${lang}_FLAGS_${build_type}}
options ${compile_options}
architectures ${CMAKE_CUDA_ARCHITECTURES}
")
    if(NOT TARGET kiln_variants)
      add_custom_target(kiln_variants COMMENT "All kernel variants are built")
    endif()
    set(variant_targets)
    list(LENGTH KILN_VARIANTS count)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      list(GET KILN_VARIANTS ${i} variant)
      list(GET KILN_VARIANT_SOURCES ${i} variant_source)
      set(target "kiln_${variant}")
      add_executable(${target} EXCLUDE_FROM_ALL "${variant_source}")
      set_target_properties(${target} PROPERTIES
        OUTPUT_NAME "${variant}"
        RUNTIME_OUTPUT_DIRECTORY "${dir}/bin"
        ${lang}_COMPILER_LAUNCHER "${KILN_EXECUTABLE};guard;--record;${dir}/builds/${variant}.json;--variant;${variant};--")
      target_include_directories(${target} PRIVATE ${include_dirs})
      target_link_libraries(${target} PRIVATE ${harness} ${ARG_LINK_LIBRARIES})
      target_compile_options(${target} PRIVATE ${compile_options})
      if(backend STREQUAL "cuda")
        # ptxas's register and spill report lands in the build record, next to the measurements.
        target_compile_options(${target} PRIVATE -Xptxas=-v)
      endif()
      if(sources)
        set_source_files_properties("${variant_source}" PROPERTIES OBJECT_DEPENDS "${sources}")
      endif()
      add_dependencies(kiln_variants ${target})
      list(APPEND variant_targets ${target})
    endforeach()

    set(record_copy)
    if(KILN_UPDATE_RECORDS)
      set(record_copy --record-copy "${committed_record}")
    endif()
    set(source_args)
    foreach(s IN LISTS sources)
      list(APPEND source_args --source "${s}")
    endforeach()
    add_custom_command(
      OUTPUT "${dir}/tune.stamp"
      BYPRODUCTS "${header}" "${dir}/${kernel}.record.json"
      COMMAND "${KILN_EXECUTABLE}" tune --manifest "${dir}/manifest.json" --variants-dir "${dir}/bin"
              --build-records "${dir}/builds" --worklog "${KILN_WORKLOG}" --device "${device_file}"
              --probe "$<TARGET_FILE:${probe}>" --record-out "${dir}/${kernel}.record.json" --header-out "${header}"
              --flags-file "${dir}/compiler.txt" ${source_args} ${record_copy}
              --strategy "${KILN_SEARCH}" --budget "${KILN_BUDGET}" --repetitions "${KILN_REPETITIONS}"
      COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/tune.stamp"
      DEPENDS ${variant_targets} ${probe} kiln_variants "${dir}/manifest.json" "${dir}/compiler.txt" ${sources}
      COMMENT "Tuning ${kernel} (${count} variants) on ${device_name}"
      USES_TERMINAL
      VERBATIM)
    set(header_stamp "${dir}/tune.stamp")
    set(tuned TRUE)
  else()
    set(record_args)
    set(record_dep)
    if(EXISTS "${committed_record}")
      set(record_args --record "${committed_record}")
      set(record_dep "${committed_record}")
      set(origin "the record ${committed_record}")
    else()
      set(origin "the space's defaults (no record at ${committed_record})")
    endif()
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${committed_record}")
    add_custom_command(
      OUTPUT "${dir}/header.stamp"
      BYPRODUCTS "${header}"
      COMMAND "${KILN_EXECUTABLE}" header --manifest "${dir}/manifest.json" ${record_args} --out "${header}"
      COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/header.stamp"
      DEPENDS "${dir}/manifest.json" ${record_dep}
      COMMENT "Dispatch header of ${kernel} from ${origin}"
      VERBATIM)
    set(header_stamp "${dir}/header.stamp")
  endif()
  add_custom_target(kiln_header_${kernel} DEPENDS "${header_stamp}")
  if(tuned)
    # kiln_tuning: every tune step. A target that depends on it compiles after the timings, so
    # that its compiler does not share the machine with a measurement.
    if(NOT TARGET kiln_tuning)
      add_custom_target(kiln_tuning)
    endif()
    add_dependencies(kiln_tuning kiln_header_${kernel})
  endif()

  if(ARG_LIBRARY)
    target_sources(${ARG_LIBRARY} PRIVATE ${ARG_API_SOURCES} "${header}")
    add_dependencies(${ARG_LIBRARY} kiln_header_${kernel})
    target_include_directories(${ARG_LIBRARY} PUBLIC $<BUILD_INTERFACE:${KILN_GENERATED_INCLUDE_DIR}>)
    target_include_directories(${ARG_LIBRARY} PRIVATE ${include_dirs})
    target_link_libraries(${ARG_LIBRARY} PUBLIC Kiln::headers ${ARG_LINK_LIBRARIES})
    set_source_files_properties(${ARG_API_SOURCES} TARGET_DIRECTORY ${ARG_LIBRARY} PROPERTIES
                                COMPILE_OPTIONS "${compile_options}" OBJECT_DEPENDS "${sources}")
  elseif(ARG_API_SOURCES)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): API_SOURCES needs LIBRARY")
  endif()
endfunction()
