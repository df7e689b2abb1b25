# Kiln's CMake interface: kiln_add_kernel(), and kiln_add_family() for several spaces behind one
# API (KilnFamily.cmake).
#
#   kiln_add_kernel(<kernel>
#     SPACE <space.json>                  # the parameter space (generator/README.md)
#     [SOURCES <files...>]                # kernel sources the variants include: their content keys
#                                         # the worklog's cache and triggers rebuilds (what they
#                                         # include from their folders or INCLUDE_DIRECTORIES keys
#                                         # the cache too, named or not)
#     [INCLUDE_DIRECTORIES <dirs...>]     # default: the space file's directory
#     [LINK_LIBRARIES <targets...>]       # linked into every variant and into LIBRARY
#     [COMPILE_OPTIONS <options...>]      # for the variants and the API sources
#     [LIBRARY <target>                   # a library that gets the dispatch header and API_SOURCES
#      API_SOURCES <files...>]            # sources that #include "kiln/tuned/<kernel>.hpp"
#     [RECORDS_DIR <dir>]                 # committed records, one folder per device; default
#                                         # KILN_RECORDS_DIR, else <project source dir>/kiln-records
#     [RECORD <file>])                    # one committed record; default
#                                         # <records dir>/<device>/<kernel>.record.json
#
# Everything runs in the build graph, after the `kiln` tool it needs: configuring compiles
# nothing. At build time `kiln generate` writes one source per feasible variant and the manifest.
# When the kernel's backend is tuned (KILN_TUNE and KILN_TUNE_BACKENDS), one template executable
# per kernel is built through CMake with `kiln capture` as its compiler and link launcher, which
# records the exact command lines CMake made for it (flags, include directories, every link
# library, the user's own launcher such as ccache); `kiln compile` builds every variant with those
# command lines (a variant that does not build is recorded, not fatal), and a tune step validates
# and times them and writes the record and the dispatch header. Otherwise the header comes from
# the committed record, or from the space's defaults when there is none: the same record gives
# the same header either way.
include_guard(GLOBAL)
# The backends and what the build needs of each (language, harness, probe, device file, options).
include("${CMAKE_CURRENT_LIST_DIR}/KilnBackends.cmake")
kiln_backends(_kiln_backends)
string(JOIN ", " _kiln_backend_names ${_kiln_backends})

set(KILN_TUNE OFF CACHE BOOL "Tune kernels during the build")
set(KILN_TUNE_BACKENDS "${_kiln_backends}" CACHE STRING "Backends tuned when KILN_TUNE is ON (${_kiln_backend_names})")
foreach(_kiln_backend IN LISTS KILN_TUNE_BACKENDS)
  kiln_require_backend("${_kiln_backend}" "kiln: KILN_TUNE_BACKENDS")
endforeach()
set(KILN_SEARCH "" CACHE STRING "Search strategy of every tuned space (`kiln tune --help` lists them): exhaustive, anneal, random, genetic, forest; empty: each space's own (its tuning.search, else exhaustive)")
set(KILN_SEARCH_OPTIONS "" CACHE STRING "The strategy's options, key=value;key=value (e.g. budget=0.15)")
set(KILN_BUDGET "0" CACHE STRING "Shorthand for the option budget of the budgeted strategies, all but exhaustive: a count, or a fraction of the space such as 0.15 (0: the strategy's default)")
set(KILN_SEED "1" CACHE STRING "Seed of the budgeted searches (kiln tune --seed): the same seed proposes the same variants, so a tuning stopped part way resumes the same search from the worklog (0: a new seed each run)")
set(KILN_REPETITIONS "7" CACHE STRING "Timed repetitions per problem; the median is kept")
set(KILN_TUNE_ARGS "" CACHE STRING "More arguments of every kiln tune step (e.g. --lock-clocks;--sanitize-runners-up=3)")
set(KILN_WORKLOG "${CMAKE_BINARY_DIR}/kiln/worklog.sqlite" CACHE FILEPATH "The worklog (SQLite)")
set(KILN_UPDATE_RECORDS OFF CACHE BOOL "Also write tuning records into the records directory, to be committed")
set(KILN_RECORDS_DIR "" CACHE PATH
    "Committed tuning records of kernels that name no RECORDS_DIR (default: <project source dir>/kiln-records)")
set(KILN_GPUS "" CACHE STRING "GPU kernels: measure on these GPUs at once, 'all' or nvidia-smi indices such as 0,2 (kiln tune --gpus; empty: one GPU, the first of CUDA_VISIBLE_DEVICES)")
set(KILN_COMPILE_JOBS "0" CACHE STRING "Variants compiled at once by kiln compile (0: one per processor)")
set(KILN_COMPILE_ON_DEMAND ON CACHE BOOL
    "Compile a variant when the search first needs it, in the tune step (OFF: every variant before tuning)")
set(KILN_GENERATED_INCLUDE_DIR "${CMAKE_BINARY_DIR}/kiln/include" CACHE INTERNAL "")

# Where the device files come from: this source tree, or an installed package (KilnConfig.cmake
# sets KILN_DEVICES_DIR before including this file).
# Kept as a global property: kiln_add_kernel() is called from other directories (a project
# that adds Kiln with add_subdirectory), where this file's variables are not in scope.
if(NOT KILN_DEVICES_DIR)
  set(KILN_DEVICES_DIR "${CMAKE_CURRENT_LIST_DIR}/../presets/devices")
endif()
get_filename_component(KILN_DEVICES_DIR "${KILN_DEVICES_DIR}" ABSOLUTE)
set_property(GLOBAL PROPERTY KILN_DEVICES_DIR "${KILN_DEVICES_DIR}")

if(NOT TARGET Kiln::kiln)
  message(FATAL_ERROR "kiln: the kiln tool (Kiln::kiln) is not defined: use find_package(Kiln), or add Kiln's "
                      "source tree with add_subdirectory()/FetchContent")
endif()

# The tool's path as a plain string, for the template's link launcher (RULE_LAUNCH_LINK takes no
# generator expressions). Kiln's own tree puts the tool in a known folder (cli/).
function(_kiln_tool_path out)
  get_target_property(imported Kiln::kiln IMPORTED)
  if(imported)
    get_target_property(path Kiln::kiln LOCATION)
  else()
    get_target_property(dir Kiln::kiln RUNTIME_OUTPUT_DIRECTORY)
    set(path "${dir}/kiln${CMAKE_EXECUTABLE_SUFFIX}")
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()

# Compiles of variants and tune steps each in a pool of depth 1: `kiln compile` runs its own
# parallel jobs, and a measurement never shares the machine with another measurement.
get_property(_kiln_pools GLOBAL PROPERTY JOB_POOLS)
if(NOT _kiln_pools MATCHES "kiln_compile=")
  set_property(GLOBAL APPEND PROPERTY JOB_POOLS kiln_compile=1)
endif()

# The GPU the device file describes, as nvidia-smi names it ("" when there is none).
function(_kiln_visible_gpu out_name out_cc)
  find_program(KILN_NVIDIA_SMI nvidia-smi)
  set(name "")
  set(cc "")
  if(KILN_NVIDIA_SMI)
    # The GPU the tuner will use: the first of CUDA_VISIBLE_DEVICES, numbered as nvidia-smi numbers
    # them (the tune step runs with CUDA_DEVICE_ORDER=PCI_BUS_ID, so CUDA agrees).
    set(select)
    if(DEFINED ENV{CUDA_VISIBLE_DEVICES} AND NOT "$ENV{CUDA_VISIBLE_DEVICES}" STREQUAL "")
      string(REPLACE "," ";" visible "$ENV{CUDA_VISIBLE_DEVICES}")
      list(GET visible 0 first)
      set(select -i "${first}")
    endif()
    execute_process(COMMAND "${KILN_NVIDIA_SMI}" ${select} --query-gpu=name,compute_cap --format=csv,noheader
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

# The device file of a backend whose DEVICE_FILE is KILN_GPU: KILN_GPU's, or for "native" the one
# matching the GPU here. When its kernels are tuned, the GPU here must be the one the device file
# describes.
function(_kiln_gpu_device_file backend out)
  get_property(KILN_DEVICES_DIR GLOBAL PROPERTY KILN_DEVICES_DIR)
  _kiln_visible_gpu(gpu_name gpu_cc)
  list(FIND KILN_TUNE_BACKENDS "${backend}" tuning_gpu)
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
  if(KILN_TUNE AND tuning_gpu GREATER -1)
    if(gpu_name STREQUAL "")
      message(FATAL_ERROR "kiln: tuning ${backend} kernels for ${KILN_GPU} needs that GPU, and nvidia-smi finds no GPU "
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

# Is the device file's architecture (its key `key`) among those this build compiles its `lang`
# sources for? A library tuned on one GPU and built only for another would dispatch code that
# cannot run there.
function(_kiln_check_architecture device_file device_json key lang)
  string(JSON wanted ERROR_VARIABLE missing GET "${device_json}" ${key})
  if(missing OR wanted STREQUAL "")
    return()
  endif()
  set(built "${CMAKE_${lang}_ARCHITECTURES}")
  if(built MATCHES "^(all|all-major|native)$")
    return()
  endif()
  # "90a" serves a "90a" device, and "90" (plain PTX and SASS for 9.0) serves it too.
  string(REGEX REPLACE "[a-z]+$" "" wanted_major "${wanted}")
  foreach(arch IN LISTS built)
    string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
    if(arch STREQUAL wanted OR arch STREQUAL wanted_major)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "kiln: ${device_file} describes a GPU of ${lang} architecture ${wanted}, but this build compiles "
                      "for CMAKE_${lang}_ARCHITECTURES=${built}: its kernels could not run there. Add ${wanted} to "
                      "CMAKE_${lang}_ARCHITECTURES, or choose the device with KILN_GPU.")
endfunction()

function(kiln_add_kernel kernel)
  cmake_parse_arguments(ARG "" "SPACE;LIBRARY;RECORD;RECORDS_DIR"
                        "SOURCES;INCLUDE_DIRECTORIES;LINK_LIBRARIES;COMPILE_OPTIONS;API_SOURCES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SPACE)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): SPACE is required")
  endif()
  if(NOT kernel MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): a kernel's name is a C++ identifier")
  endif()
  if(ARG_API_SOURCES AND NOT ARG_LIBRARY)
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): API_SOURCES needs LIBRARY")
  endif()
  get_filename_component(space "${ARG_SPACE}" ABSOLUTE)
  if(NOT EXISTS "${space}")
    message(FATAL_ERROR "kiln_add_kernel(${kernel}): space file ${space} does not exist")
  endif()
  file(READ "${space}" space_json)
  string(JSON backend ERROR_VARIABLE err GET "${space_json}" backend)
  kiln_backends(backends)
  if(err)
    # A space CMake cannot read: `kiln generate` reports the precise error at build time, and the
    # backend only picks the device file.
    list(GET backends 0 backend)
  endif()
  kiln_require_backend("${backend}" "kiln_add_kernel(${kernel}): ${space}: /backend")
  foreach(property LANGUAGE EXTENSION DEVICE_FILE ARCHITECTURE_KEY OPTIONS TUNE_OPTIONS)
    kiln_backend_property(${property} ${backend} ${property})
  endforeach()
  set(lang ${LANGUAGE})
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT lang IN_LIST languages)
    message(STATUS "kiln: ${kernel}: skipped (a ${backend} kernel, and ${lang} is not enabled in this build)")
    return()
  endif()

  get_property(devices_dir GLOBAL PROPERTY KILN_DEVICES_DIR)
  if(DEVICE_FILE STREQUAL "KILN_GPU")
    _kiln_gpu_device_file(${backend} device_file)
  else()
    set(device_file "${devices_dir}/${DEVICE_FILE}.json")
  endif()
  set(harness Kiln::harness_${backend})
  set(probe Kiln::probe_${backend})
  file(READ "${device_file}" device_json)
  string(JSON device_name GET "${device_json}" name)
  if(ARCHITECTURE_KEY)
    _kiln_check_architecture("${device_file}" "${device_json}" ${ARCHITECTURE_KEY} ${lang})
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${space}" "${device_file}")

  set(dir "${CMAKE_BINARY_DIR}/kiln/${kernel}")
  set(manifest "${dir}/generated/manifest.json")
  add_custom_command(
    OUTPUT "${dir}/generate.stamp"
    BYPRODUCTS "${manifest}"
    COMMAND Kiln::kiln generate --space "${space}" --target "${device_file}" --out "${dir}/generated"
    COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/generate.stamp"
    DEPENDS "${space}" "${device_file}" Kiln::kiln
    COMMENT "Variants of ${kernel}"
    VERBATIM)

  if(ARG_INCLUDE_DIRECTORIES)
    set(include_dirs ${ARG_INCLUDE_DIRECTORIES})
  else()
    get_filename_component(include_dirs "${space}" DIRECTORY)
  endif()
  set(compile_options ${OPTIONS} ${ARG_COMPILE_OPTIONS})
  set(sources)
  foreach(s IN LISTS ARG_SOURCES)
    get_filename_component(s "${s}" ABSOLUTE)
    list(APPEND sources "${s}")
  endforeach()

  set(header "${KILN_GENERATED_INCLUDE_DIR}/kiln/tuned/${kernel}.hpp")
  if(ARG_RECORD)
    get_filename_component(committed_record "${ARG_RECORD}" ABSOLUTE)
  else()
    if(ARG_RECORDS_DIR)
      get_filename_component(records_dir "${ARG_RECORDS_DIR}" ABSOLUTE)
    elseif(KILN_RECORDS_DIR)
      set(records_dir "${KILN_RECORDS_DIR}")
    else()
      set(records_dir "${PROJECT_SOURCE_DIR}/kiln-records")
    endif()
    set(committed_record "${records_dir}/${device_name}/${kernel}.record.json")
  endif()

  set(tuned FALSE)
  list(FIND KILN_TUNE_BACKENDS "${backend}" tuned_backend)
  if(KILN_TUNE AND tuned_backend GREATER -1)
    # What the measurements depend on besides the sources: compiler, version, flags, targets (the
    # architectures of every backend's language this build compiles for: a CUDA build's for CPU
    # kernels too, as they always were, so that worklogs keep their keys).
    string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
    set(architectures)
    foreach(other IN LISTS backends)
      kiln_backend_property(other_lang ${other} LANGUAGE)
      if(NOT other_lang STREQUAL "CXX")
        list(APPEND architectures ${CMAKE_${other_lang}_ARCHITECTURES})
      endif()
    endforeach()
    file(GENERATE OUTPUT "${dir}/compiler.txt" CONTENT
"compiler ${CMAKE_${lang}_COMPILER_ID} ${CMAKE_${lang}_COMPILER_VERSION}
flags ${CMAKE_${lang}_FLAGS} ${CMAKE_${lang}_FLAGS_${build_type}}
options ${compile_options}
architectures ${architectures}
")
    # The template: a target with exactly the usage requirements of a variant, built through
    # CMake so that its compile and link command lines can be captured and reused per variant.
    # RULE_LAUNCH_LINK because <LANG>_LINKER_LAUNCHER has no CUDA form.
    _kiln_tool_path(tool)
    set(template_source "${dir}/template.${EXTENSION}")
    file(CONFIGURE OUTPUT "${template_source}" CONTENT
         "// The template of ${kernel}'s variants: its command lines are captured (see Kiln.cmake).\n#include \"kiln/variant.hpp\"\n")
    set(template kiln_${kernel}_template)
    # The user's own launcher (ccache, sccache) follows ours, so the captured command keeps it.
    set(launcher "${tool}" capture --out "${dir}/capture/compile.json" -- ${CMAKE_${lang}_COMPILER_LAUNCHER})
    add_executable(${template} EXCLUDE_FROM_ALL "${template_source}")
    set_target_properties(${template} PROPERTIES
      RUNTIME_OUTPUT_DIRECTORY "${dir}/template"
      ${lang}_COMPILER_LAUNCHER "${launcher}"
      RULE_LAUNCH_LINK "\"${tool}\" capture --out \"${dir}/capture/link.json\" --")
    set_source_files_properties("${template_source}" TARGET_DIRECTORY ${template} PROPERTIES
                                OBJECT_OUTPUTS "${dir}/capture/compile.json")
    add_custom_command(TARGET ${template} POST_BUILD COMMAND "${CMAKE_COMMAND}" -E true
                       BYPRODUCTS "${dir}/capture/link.json" VERBATIM)
    target_include_directories(${template} PRIVATE ${include_dirs})
    target_link_libraries(${template} PRIVATE ${harness} ${ARG_LINK_LIBRARIES})
    target_compile_options(${template} PRIVATE ${compile_options} ${TUNE_OPTIONS})
    get_target_property(tool_target Kiln::kiln ALIASED_TARGET)
    if(tool_target)
      add_dependencies(${template} ${tool_target})  # the launcher must exist before the compile
    endif()

    set(source_args)
    foreach(s IN LISTS sources)
      list(APPEND source_args --source "${s}")
    endforeach()
    # Where the sources' includes are found: the headers they include from there key the
    # measurements too, named in SOURCES or not, and the compile and tune steps name them in their
    # dependency files (DEPFILE), so that an edit of one runs those steps again.
    # Generator expressions and directories that do not exist yet (generated at build time) are
    # left to the compiler: the compiler skips a missing directory, and `kiln tune` would refuse it.
    set(include_args)
    foreach(d IN LISTS include_dirs)
      if(d MATCHES "\\$<")
        continue()
      endif()
      get_filename_component(d "${d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      if(IS_DIRECTORY "${d}")
        list(APPEND include_args --include-dir "${d}")
      endif()
    endforeach()
    set(captured "${dir}/capture/compile.json" "${dir}/capture/link.json")
    set(compile_args --compile-command "${dir}/capture/compile.json" --link-command "${dir}/capture/link.json"
                     --template-source "${template_source}" --objects-dir "${dir}/objects")
    # Every variant, compiled without tuning: kiln_compile (or kiln_compile_<kernel>) builds them on
    # a machine without the device; with KILN_COMPILE_ON_DEMAND OFF, before tuning.
    add_custom_command(
      OUTPUT "${dir}/compile.stamp"
      COMMAND Kiln::kiln compile --manifest "${manifest}" ${compile_args}
              --variants-dir "${dir}/bin" --build-records "${dir}/builds" --jobs "${KILN_COMPILE_JOBS}" ${source_args}
              ${include_args} --depfile "${dir}/compile.d" --depfile-target "${dir}/compile.stamp"
      COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/compile.stamp"
      DEPENDS ${template} ${captured} "${dir}/generate.stamp" "${manifest}" ${sources} Kiln::kiln
      DEPFILE "${dir}/compile.d"
      JOB_POOL kiln_compile
      COMMENT "Compiling the variants of ${kernel}"
      VERBATIM)
    add_custom_target(kiln_compile_${kernel} DEPENDS "${dir}/compile.stamp")
    if(NOT TARGET kiln_compile)
      add_custom_target(kiln_compile COMMENT "Every variant of every tuned kernel is built")
    endif()
    add_dependencies(kiln_compile kiln_compile_${kernel})
    # kiln_variants: what tuning needs built first. Tuning starts after all of it, so that no
    # compile of the build shares the machine with a measurement; compiled on demand, a variant is
    # compiled by its tune step, between that step's measurements.
    if(NOT TARGET kiln_variants)
      add_custom_target(kiln_variants COMMENT "All kernel variants are built")
    endif()
    if(KILN_COMPILE_ON_DEMAND)
      add_custom_target(kiln_variants_${kernel} DEPENDS ${template} ${captured} "${dir}/generate.stamp")
      set(tune_compile_args ${compile_args} --compile-jobs "${KILN_COMPILE_JOBS}")
      set(tune_compile_deps ${template} ${captured} "${dir}/generate.stamp")
    else()
      add_custom_target(kiln_variants_${kernel} DEPENDS "${dir}/compile.stamp")
      set(tune_compile_args)
      set(tune_compile_deps "${dir}/compile.stamp")
    endif()
    add_dependencies(kiln_variants kiln_variants_${kernel})

    set(strategy_args)
    if(NOT KILN_SEARCH STREQUAL "")
      list(APPEND strategy_args --strategy "${KILN_SEARCH}")
    endif()
    if(DEVICE_FILE STREQUAL "KILN_GPU" AND NOT KILN_GPUS STREQUAL "")
      list(APPEND strategy_args --gpus "${KILN_GPUS}")
    endif()
    # A seed in KILN_TUNE_ARGS is the one taken.
    if(NOT KILN_SEED STREQUAL "0" AND NOT KILN_TUNE_ARGS MATCHES "--seed")
      list(APPEND strategy_args --seed "${KILN_SEED}")
    endif()
    if(NOT KILN_BUDGET STREQUAL "0")
      list(APPEND strategy_args --budget "${KILN_BUDGET}")
    endif()
    foreach(option IN LISTS KILN_SEARCH_OPTIONS)
      list(APPEND strategy_args --strategy-option "${option}")
    endforeach()
    set(record_copy)
    if(KILN_UPDATE_RECORDS)
      set(record_copy --record-copy "${committed_record}")
    endif()
    add_custom_command(
      OUTPUT "${dir}/tune.stamp"
      BYPRODUCTS "${header}" "${dir}/${kernel}.record.json"
      COMMAND "${CMAKE_COMMAND}" -E env CUDA_DEVICE_ORDER=PCI_BUS_ID $<TARGET_FILE:Kiln::kiln> tune --manifest "${manifest}" --variants-dir "${dir}/bin"
              --build-records "${dir}/builds" --worklog "${KILN_WORKLOG}" --device "${device_file}"
              --probe "$<TARGET_FILE:${probe}>" --record-out "${dir}/${kernel}.record.json" --header-out "${header}"
              --flags-file "${dir}/compiler.txt" ${source_args} ${include_args} ${record_copy} ${tune_compile_args}
              --depfile "${dir}/tune.d" --depfile-target "${dir}/tune.stamp"
              ${strategy_args} --repetitions "${KILN_REPETITIONS}" ${KILN_TUNE_ARGS}
      COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/tune.stamp"
      DEPENDS ${tune_compile_deps} ${probe} "${manifest}" "${dir}/compiler.txt" ${sources} Kiln::kiln
      DEPFILE "${dir}/tune.d"
      COMMENT "Tuning ${kernel} on ${device_name}"
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
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${committed_record}")
    add_custom_command(
      OUTPUT "${dir}/header.stamp"
      BYPRODUCTS "${header}"
      COMMAND Kiln::kiln header --manifest "${manifest}" ${record_args} --out "${header}"
      COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/header.stamp"
      DEPENDS "${dir}/generate.stamp" "${manifest}" ${record_dep} Kiln::kiln
      COMMENT "Dispatch header of ${kernel} from ${origin}"
      VERBATIM)
    set(header_stamp "${dir}/header.stamp")
  endif()
  add_custom_target(kiln_header_${kernel} DEPENDS "${header_stamp}")
  if(tuned)
    add_dependencies(kiln_header_${kernel} kiln_variants)
    # kiln_tuning: every tune step. A target that depends on it compiles after the timings, so
    # that its compiler does not share the machine with a measurement.
    if(NOT TARGET kiln_tuning)
      add_custom_target(kiln_tuning)
    endif()
    add_dependencies(kiln_tuning kiln_header_${kernel})
  endif()

  # What kiln_add_family() takes from its members (KilnFamily.cmake).
  set_target_properties(kiln_header_${kernel} PROPERTIES
    KILN_MANIFEST "${manifest}" KILN_API_COMPILE_OPTIONS "${compile_options}" KILN_SOURCES "${sources}")

  if(ARG_LIBRARY)
    target_sources(${ARG_LIBRARY} PRIVATE "${header}")
    add_dependencies(${ARG_LIBRARY} kiln_header_${kernel})
    target_include_directories(${ARG_LIBRARY} PUBLIC $<BUILD_INTERFACE:${KILN_GENERATED_INCLUDE_DIR}>)
    target_include_directories(${ARG_LIBRARY} PRIVATE ${include_dirs})
    target_link_libraries(${ARG_LIBRARY} PUBLIC Kiln::headers ${ARG_LINK_LIBRARIES})
    _kiln_api_sources(${ARG_LIBRARY} kiln_header_${kernel} ${ARG_API_SOURCES})
  endif()
endfunction()

# Adds API sources to a library, compiled with the options of a kernel's variants and rebuilt when
# the kernel's sources change; `header_target` is the kernel's (or family's) kiln_header_<name>.
function(_kiln_api_sources library header_target)
  set(api_sources ${ARGN})
  if(NOT api_sources)
    return()
  endif()
  get_target_property(compile_options ${header_target} KILN_API_COMPILE_OPTIONS)
  get_target_property(sources ${header_target} KILN_SOURCES)
  target_sources(${library} PRIVATE ${api_sources})
  set_source_files_properties(${api_sources} TARGET_DIRECTORY ${library} PROPERTIES
                              COMPILE_OPTIONS "${compile_options}" OBJECT_DEPENDS "${sources}")
endfunction()

include("${CMAKE_CURRENT_LIST_DIR}/KilnFamily.cmake")
