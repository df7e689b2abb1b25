# kiln_precompile_headers(<target>...): the JSON library and the standard headers that Kiln's own
# sources include everywhere, parsed once per target instead of once per source. Kiln's tool
# libraries and the fuzz driver's copy of them only: kernel variants and a kernel author's targets
# (kiln_add_kernel) are left as they are.
# KILN_PRECOMPILE_HEADERS=OFF turns it off (e.g. for a compiler whose precompiled headers misbehave).
option(KILN_PRECOMPILE_HEADERS "Precompile the common headers of Kiln's own targets" ON)

function(kiln_precompile_headers)
  if(NOT KILN_PRECOMPILE_HEADERS)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    target_precompile_headers(${target} PRIVATE
      <algorithm> <cstdint> <filesystem> <functional> <map> <memory> <optional> <set> <sstream>
      <stdexcept> <string> <string_view> <variant> <vector> <nlohmann/json.hpp>)
  endforeach()
endfunction()
