# include_arrows.cmake on a small tree written here: it must name each arrow between generator/
# and autotune/ (both ways, and out of model/) and let pass those through model/, the kernel
# headers under autotune/include and the `kiln` command (cli/), which may include every part.
#   cmake -DKILN_CHECK=<include_arrows.cmake> -DKILN_WORK=<scratch directory> -P include_arrows_selftest.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${KILN_WORK}")
function(put path text)
  file(WRITE "${KILN_WORK}/${path}" "${text}\n")
endfunction()
put(model/include/kiln/model/manifest.hpp "#include \"kiln/problem.hpp\"")
put(autotune/include/kiln/problem.hpp "#include <string>")
put(generator/include/kiln/gen/generate.hpp "#include \"kiln/model/manifest.hpp\"")
put(autotune/tuner/record.hpp "#include \"kiln/model/manifest.hpp\"")
put(cli/build_commands.cpp "#include \"kiln/gen/generate.hpp\"\n#include \"kiln/problem.hpp\"")
put(generator/src/space.cpp "  #  include \"kiln/gen/generate.hpp\"\n  out += \"#include \\\"record.hpp\\\"\";")

execute_process(COMMAND "${CMAKE_COMMAND}" -DKILN_ROOT=${KILN_WORK} -P "${KILN_CHECK}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a tree without a forbidden arrow was refused:\n${out}")
endif()

put(generator/src/enumerate.cpp "#include \"../../autotune/tuner/record.hpp\"")
put(autotune/tuner/manifest.cpp "#include <kiln/gen/generate.hpp>")
put(model/src/manifest.cpp "#include \"kiln/gen/generate.hpp\"")
execute_process(COMMAND "${CMAKE_COMMAND}" -DKILN_ROOT=${KILN_WORK} -P "${KILN_CHECK}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "forbidden arrows were not found:\n${out}")
endif()
foreach(arrow IN ITEMS "generator/src/enumerate.cpp includes autotune/tuner/record.hpp (generator -> autotune)"
                       "autotune/tuner/manifest.cpp includes generator/include/kiln/gen/generate.hpp (autotune -> generator)"
                       "model/src/manifest.cpp includes generator/include/kiln/gen/generate.hpp (model -> generator)"
                       "3 include(s)")
  string(FIND "${out}" "${arrow}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check does not name '${arrow}':\n${out}")
  endif()
endforeach()
file(REMOVE_RECURSE "${KILN_WORK}")
