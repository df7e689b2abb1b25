# Turns on the backends of KilnBackends.cmake that this build can have. A backend whose language
# is C++ is always on; another is on when KILN_ENABLE_<BACKEND> is ON, or AUTO (the default) and
# its compiler is found. KILN_HAVE_<BACKEND> says which are on. Included by Kiln's top-level
# CMakeLists.txt, at the directory's scope, where enable_language() must run.
include(CheckLanguage)
kiln_backends(_kiln_backends)
foreach(_kiln_backend IN LISTS _kiln_backends)
  string(TOUPPER "${_kiln_backend}" _kiln_upper)
  kiln_backend_property(_kiln_language ${_kiln_backend} LANGUAGE)
  set(KILN_HAVE_${_kiln_upper} OFF)
  if(_kiln_language STREQUAL "CXX")
    set(KILN_HAVE_${_kiln_upper} ON)
    continue()
  endif()
  set(KILN_ENABLE_${_kiln_upper} AUTO CACHE STRING
      "Build the ${_kiln_backend} backend: ON, OFF or AUTO (when its ${_kiln_language} compiler is found)")
  if(KILN_ENABLE_${_kiln_upper} STREQUAL "OFF")
    continue()
  endif()
  check_language(${_kiln_language})
  if(NOT CMAKE_${_kiln_language}_COMPILER)
    if(KILN_ENABLE_${_kiln_upper} STREQUAL "ON")
      message(FATAL_ERROR "KILN_ENABLE_${_kiln_upper}=ON but no ${_kiln_language} compiler was found "
                          "(set CMAKE_${_kiln_language}_COMPILER)")
    endif()
    continue()
  endif()
  kiln_backend_property(_kiln_device ${_kiln_backend} DEVICE_FILE)
  kiln_backend_property(_kiln_key ${_kiln_backend} ARCHITECTURE_KEY)
  if(NOT DEFINED CMAKE_${_kiln_language}_ARCHITECTURES AND _kiln_key AND _kiln_device STREQUAL "KILN_GPU")
    # The architecture of the GPU that KILN_GPU names, from its device file; "native" builds for
    # the GPUs of this machine.
    if(KILN_GPU STREQUAL "native")
      set(CMAKE_${_kiln_language}_ARCHITECTURES native)
    else()
      file(READ "${CMAKE_CURRENT_SOURCE_DIR}/presets/devices/${KILN_GPU}.json" _kiln_device_json)
      string(JSON CMAKE_${_kiln_language}_ARCHITECTURES GET "${_kiln_device_json}" ${_kiln_key})
    endif()
    message(STATUS "kiln: CMAKE_${_kiln_language}_ARCHITECTURES=${CMAKE_${_kiln_language}_ARCHITECTURES} "
                   "(from KILN_GPU=${KILN_GPU})")
  endif()
  # Kernels and generated sources are C++17: the newest dialect every supported device compiler
  # and CMake 3.25 agree on.
  set(CMAKE_${_kiln_language}_STANDARD 17)
  set(CMAKE_${_kiln_language}_STANDARD_REQUIRED ON)
  enable_language(${_kiln_language})
  kiln_backend_property(_kiln_packages ${_kiln_backend} PACKAGES)
  foreach(_kiln_package IN LISTS _kiln_packages)
    find_package(${_kiln_package} REQUIRED)
  endforeach()
  set(KILN_HAVE_${_kiln_upper} ON)
endforeach()
