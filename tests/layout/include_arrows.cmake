# Fails when a source of generator/ includes a header of autotune/, or one of autotune/ a header
# of generator/: the two meet only in model/ (the space, the manifest, device files), which
# includes neither. Headers under autotune/include (Kiln::headers: the kernel contract, kiln/problem.hpp,
# kiln/hash.hpp...) are the layer below all three: they include nothing of generator/, model/ or
# the rest of autotune/. The `kiln` command (cli/) is where the two meet: it may include any part,
# and no part includes it.
#   cmake -DKILN_ROOT=<source tree> -P include_arrows.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT KILN_ROOT)
  message(FATAL_ERROR "usage: cmake -DKILN_ROOT=<source tree> -P include_arrows.cmake")
endif()

# The include directories of the libraries (their CMakeLists.txt), where a quoted include that is
# not next to its file is found; an include found in none of them is a system or package header.
set(roots model/include generator/include autotune/include autotune/worklog/include autotune/tuner)

# The part of the tree a path (relative to KILN_ROOT) belongs to.
function(kiln_part path out)
  if(path MATCHES "^model/")
    set(${out} model PARENT_SCOPE)
  elseif(path MATCHES "^generator/")
    set(${out} generator PARENT_SCOPE)
  elseif(path MATCHES "^autotune/include/")
    set(${out} headers PARENT_SCOPE)
  elseif(path MATCHES "^autotune/")
    set(${out} autotune PARENT_SCOPE)
  elseif(path MATCHES "^cli/")
    set(${out} cli PARENT_SCOPE)
  else()
    set(${out} other PARENT_SCOPE)
  endif()
endfunction()

# What each part may include besides itself.
set(may_generator model headers)
set(may_autotune model headers)
set(may_model headers)
set(may_headers "")
set(may_cli generator autotune model headers)

set(violations "")
set(count 0)
file(GLOB_RECURSE sources RELATIVE "${KILN_ROOT}"
     "${KILN_ROOT}/generator/*" "${KILN_ROOT}/autotune/*" "${KILN_ROOT}/model/*" "${KILN_ROOT}/cli/*")
foreach(source IN LISTS sources)
  if(NOT source MATCHES "\\.(c|cc|cpp|cxx|h|hh|hpp|cu|cuh|inl)$")
    continue()
  endif()
  kiln_part("${source}" from)
  get_filename_component(dir "${source}" DIRECTORY)
  file(STRINGS "${KILN_ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]+[\">]")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*$" "\\1" header "${line}")
    set(found "")
    if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"" AND EXISTS "${KILN_ROOT}/${dir}/${header}")
      file(RELATIVE_PATH found "${KILN_ROOT}" "${KILN_ROOT}/${dir}/${header}")
    else()
      foreach(root IN LISTS roots)
        if(EXISTS "${KILN_ROOT}/${root}/${header}")
          set(found "${root}/${header}")
          break()
        endif()
      endforeach()
    endif()
    if(found STREQUAL "")
      continue()
    endif()
    math(EXPR count "${count} + 1")
    kiln_part("${found}" to)
    if(to STREQUAL from OR to STREQUAL "other" OR from STREQUAL "other" OR to IN_LIST may_${from})
      continue()
    endif()
    list(APPEND violations "${source} includes ${found} (${from} -> ${to})")
  endforeach()
endforeach()

if(count EQUAL 0)
  message(FATAL_ERROR "no #include of the project's own headers found under ${KILN_ROOT}")
endif()
if(violations)
  list(LENGTH violations n)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "${n} include(s) between generator/ and autotune/ not through model/:\n  ${text}")
endif()
message(STATUS "${count} includes of the project's headers, none between generator/ and autotune/ but through model/")
