# Kiln's backends, in one list, with what the build needs of each. The C++ side has the same
# list with what the tools need (model/src/backend.cpp); tests/model/backend_test.cpp keeps the
# two in step. Everything else in cmake/ and the harness's CMakeLists.txt consults this list:
#
#   LANGUAGE           the CMake language of its variants, harness and probe (CXX is always on;
#                      another is enabled when its compiler is found: KILN_ENABLE_<BACKEND>)
#   EXTENSION          of its sources, without the dot
#   DEVICE_FILE        its device file: a name in the devices folder, or KILN_GPU (the file the
#                      cache variable KILN_GPU names, checked against this machine's NVIDIA GPU)
#   ARCHITECTURE_KEY   the device file's key naming the architecture CMAKE_<LANGUAGE>_ARCHITECTURES
#                      must build for (its default, and a configure error when left out)
#   OPTIONS            compile options of its variants and API sources, before the kernel's own
#   TUNE_OPTIONS       compile options of its variants only, when they are tuned
#   PACKAGES           packages its harness and probe link (found when the backend is enabled,
#                      and by the installed package)
#   HARNESS_SOURCES    sources of Kiln::harness_<backend> in autotune/harness, besides main()
#   HARNESS_LIBRARIES  what it links besides the common ones
#   PROBE_SOURCES      sources of Kiln::probe_<backend> in autotune/harness
#   PROBE_LIBRARIES, PROBE_OPTIONS
#
# Kept in global properties: kiln_add_kernel() runs in other directories (a project that adds
# Kiln with add_subdirectory), where this file's variables are not in scope.
include_guard(GLOBAL)

function(_kiln_backend name)
  set(single LANGUAGE EXTENSION DEVICE_FILE ARCHITECTURE_KEY)
  set(multiple OPTIONS TUNE_OPTIONS PACKAGES HARNESS_SOURCES HARNESS_LIBRARIES PROBE_SOURCES PROBE_LIBRARIES
               PROBE_OPTIONS)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "${single}" "${multiple}")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln: backend ${name}: unknown properties ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required LANGUAGE EXTENSION DEVICE_FILE HARNESS_SOURCES PROBE_SOURCES)
    if(NOT ARG_${required})
      message(FATAL_ERROR "kiln: backend ${name}: ${required} is required")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY KILN_BACKENDS "${name}")
  foreach(property IN LISTS single multiple)
    set_property(GLOBAL PROPERTY "KILN_BACKEND_${name}_${property}" "${ARG_${property}}")
  endforeach()
endfunction()

# <out> = the backends, in the list's order.
function(kiln_backends out)
  get_property(names GLOBAL PROPERTY KILN_BACKENDS)
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# <out> = <property> of <backend> (empty when the backend does not set it).
function(kiln_backend_property out backend property)
  get_property(value GLOBAL PROPERTY "KILN_BACKEND_${backend}_${property}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# A fatal error when <backend> is not in the list, in the words the generator uses:
# "<where>: unknown backend "hip" (Kiln's backends: cpu, cuda)".
function(kiln_require_backend backend where)
  kiln_backends(names)
  if(NOT backend IN_LIST names)
    string(JOIN ", " known ${names})
    message(FATAL_ERROR "${where}: unknown backend \"${backend}\" (Kiln's backends: ${known})")
  endif()
endfunction()

set(KILN_CPU_FLAGS "-O3;-march=native" CACHE STRING "Compiler options of CPU variants and CPU API sources")
_kiln_backend(cpu
  LANGUAGE CXX
  EXTENSION cpp
  DEVICE_FILE cpu
  OPTIONS ${KILN_CPU_FLAGS}
  HARNESS_SOURCES device_cpu.cpp
  HARNESS_LIBRARIES OpenMP::OpenMP_CXX
  PROBE_SOURCES probe_cpu.cpp
  PROBE_LIBRARIES OpenMP::OpenMP_CXX
  PROBE_OPTIONS -O2 -march=native)

set(KILN_GPU "h200" CACHE STRING "Device file for CUDA kernels: l4, h100, h200 (presets/devices) or native")
set_property(CACHE KILN_GPU PROPERTY STRINGS l4 h100 h200 native)
_kiln_backend(cuda
  LANGUAGE CUDA
  EXTENSION cu
  DEVICE_FILE KILN_GPU
  ARCHITECTURE_KEY cuda_architectures
  # ptxas's register and spill report lands in the build record, next to the measurements.
  TUNE_OPTIONS -Xptxas=-v
  PACKAGES CUDAToolkit
  HARNESS_SOURCES device_cuda.cu launch_shapes_cuda.cu
  HARNESS_LIBRARIES CUDA::cudart
  PROBE_SOURCES probe_cuda.cu
  PROBE_LIBRARIES CUDA::cudart ${CMAKE_DL_LIBS})
