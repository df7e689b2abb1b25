# kiln_add_family(): several spaces behind one API (README.md, "Kernel families").
#
#   kiln_add_family(<family>
#     KEY <parameter>                     # a parameter each member's space gives one integer value:
#                                         # the value the family's dispatch switches on
#     SPACES <space.json...>              # the members, one kernel each (named by the space's "kernel")
#     [SOURCES <files...>]                # as kiln_add_kernel(), for every member: the kernel
#     [INCLUDE_DIRECTORIES <dirs...>]     # sources (their content keys the worklog's cache),
#     [LINK_LIBRARIES <targets...>]       # include directories, libraries, options and records
#     [COMPILE_OPTIONS <options...>]
#     [RECORDS_DIR <dir>]
#     [LIBRARY <target>                   # gets every member's dispatch header and the family's
#      API_SOURCES <files...>])           # sources that #include "kiln/tuned/<family>.hpp"
#
# Each space is added with kiln_add_kernel() and keeps its own variants, record and dispatch header
# (kiln/tuned/<member>.hpp). The family adds one more header, kiln/tuned/<family>.hpp, written by
# `kiln family-header` from the members' manifests: the problem they all take, the key's values,
# and dispatch(key, problem, launch) and provenance(key, problem), which call the member's own.
#
# The family is declared here, where its members join the build, rather than in a block of each
# space file: one call names the members, the key and the API, and gives the members what they
# share; a member's space stays a plain space that also builds alone, and nothing is said twice.
# The build writes the declaration as <build>/kiln/<family>/family.json, the file the tool reads
# (kiln/model/family.hpp); what the family needs of a space (the key parameter with one value, a
# value of its own, the same backend and problem dims as the others) is checked there, with the
# message naming the space file and the place.
include_guard(GLOBAL)

# `text` as a JSON string literal.
function(_kiln_json_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

function(kiln_add_family family)
  cmake_parse_arguments(ARG "" "KEY;LIBRARY;RECORDS_DIR"
                        "SPACES;SOURCES;INCLUDE_DIRECTORIES;LINK_LIBRARIES;COMPILE_OPTIONS;API_SOURCES" ${ARGN})
  set(who "kiln_add_family(${family})")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${who}: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT family MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${who}: a family's name is a C++ identifier (it names the namespace kiln::tuned::<family>)")
  endif()
  if(NOT ARG_KEY)
    message(FATAL_ERROR "${who}: KEY is required: the parameter each member's space gives one value (e.g. HEAD_DIM)")
  endif()
  if(NOT ARG_KEY MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${who}: KEY ${ARG_KEY} is not a parameter name (a C++ identifier)")
  endif()
  if(NOT ARG_SPACES)
    message(FATAL_ERROR "${who}: SPACES is required: the space file of each member")
  endif()
  if(ARG_API_SOURCES AND NOT ARG_LIBRARY)
    message(FATAL_ERROR "${who}: API_SOURCES needs LIBRARY")
  endif()
  if(TARGET kiln_header_${family})
    message(FATAL_ERROR "${who}: a kernel or family named ${family} is in the build already")
  endif()

  # What every member is given.
  set(member_args)
  foreach(option IN ITEMS SOURCES INCLUDE_DIRECTORIES LINK_LIBRARIES COMPILE_OPTIONS)
    if(ARG_${option})
      list(APPEND member_args ${option} ${ARG_${option}})
    endif()
  endforeach()
  foreach(option IN ITEMS RECORDS_DIR LIBRARY)
    if(ARG_${option})
      list(APPEND member_args ${option} "${ARG_${option}}")
    endif()
  endforeach()

  set(kernels)
  set(spaces)
  foreach(space IN LISTS ARG_SPACES)
    get_filename_component(space "${space}" ABSOLUTE)
    if(NOT EXISTS "${space}")
      message(FATAL_ERROR "${who}: space file ${space} does not exist")
    endif()
    file(READ "${space}" space_json)
    string(JSON kernel ERROR_VARIABLE error GET "${space_json}" kernel)
    if(error)
      message(FATAL_ERROR "${who}: ${space}: cannot read the member's kernel name: ${error}")
    endif()
    if(kernel STREQUAL family)
      message(FATAL_ERROR "${who}: ${space}: the member's kernel is named ${kernel}, as the family is; their headers "
                          "would be one file")
    endif()
    list(FIND kernels "${kernel}" earlier)
    if(earlier GREATER -1)
      list(GET spaces ${earlier} earlier_space)
      message(FATAL_ERROR "${who}: ${space}: kernel ${kernel} is a member already (${earlier_space})")
    endif()
    list(APPEND kernels "${kernel}")
    list(APPEND spaces "${space}")
    kiln_add_kernel(${kernel} SPACE "${space}" ${member_args})
  endforeach()

  # kiln_add_kernel() skips a kernel whose backend's language this build has not enabled (CUDA
  # without CUDA); the family goes with its members.
  set(added)
  foreach(kernel IN LISTS kernels)
    if(TARGET kiln_header_${kernel})
      list(APPEND added ${kernel})
    endif()
  endforeach()
  if(NOT added)
    message(STATUS "kiln: ${family}: skipped (its members are)")
    return()
  endif()
  if(NOT added STREQUAL kernels)
    message(FATAL_ERROR "${who}: only ${added} of the members ${kernels} are in this build: the members of a "
                        "family share one backend")
  endif()

  # The declaration as the tool reads it, rewritten only when it changes.
  set(dir "${CMAKE_BINARY_DIR}/kiln/${family}")
  set(family_file "${dir}/family.json")
  _kiln_json_string(family_text "${family}")
  _kiln_json_string(key_text "${ARG_KEY}")
  set(json "{\n  \"kiln_family\": 1,\n  \"family\": ${family_text},\n  \"key\": ${key_text},\n  \"members\": [")
  set(manifests)
  set(separator "")
  foreach(kernel IN LISTS kernels)
    get_target_property(manifest kiln_header_${kernel} KILN_MANIFEST)
    list(APPEND manifests "${manifest}")
    _kiln_json_string(kernel_text "${kernel}")
    _kiln_json_string(manifest_text "${manifest}")
    string(APPEND json "${separator}\n    { \"kernel\": ${kernel_text}, \"manifest\": ${manifest_text} }")
    set(separator ",")
  endforeach()
  string(APPEND json "\n  ]\n}\n")
  file(WRITE "${dir}/family.json.new" "${json}")
  file(COPY_FILE "${dir}/family.json.new" "${family_file}" ONLY_IF_DIFFERENT)
  file(REMOVE "${dir}/family.json.new")

  set(header "${KILN_GENERATED_INCLUDE_DIR}/kiln/tuned/${family}.hpp")
  string(JOIN ", " shown ${kernels})
  add_custom_command(
    OUTPUT "${dir}/header.stamp"
    BYPRODUCTS "${header}"
    COMMAND Kiln::kiln family-header --family "${family_file}" --out "${header}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/header.stamp"
    DEPENDS "${family_file}" ${manifests} Kiln::kiln
    COMMENT "Family header of ${family} (${shown}, by ${ARG_KEY})"
    VERBATIM)
  add_custom_target(kiln_header_${family} DEPENDS "${dir}/header.stamp")
  # The manifests come from the members' generate steps; the members' headers come with them, so
  # that a target depending on the family's header finds every header it includes.
  foreach(kernel IN LISTS kernels)
    add_dependencies(kiln_header_${family} kiln_header_${kernel})
  endforeach()
  list(GET kernels 0 first)
  foreach(property IN ITEMS KILN_API_COMPILE_OPTIONS KILN_SOURCES)
    get_target_property(value kiln_header_${first} ${property})
    set_target_properties(kiln_header_${family} PROPERTIES ${property} "${value}")
  endforeach()

  if(ARG_LIBRARY)
    target_sources(${ARG_LIBRARY} PRIVATE "${header}")
    add_dependencies(${ARG_LIBRARY} kiln_header_${family})
    _kiln_api_sources(${ARG_LIBRARY} kiln_header_${family} ${ARG_API_SOURCES})
  endif()
endfunction()
