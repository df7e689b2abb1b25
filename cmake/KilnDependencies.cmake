# Third-party packages, each for one job:
#   nlohmann_json  - space files, manifests, records and the harness's JSON lines
#   CLI11          - the `kiln` command line
#   SQLite3        - the worklog
#   xxHash         - XXH3-128, the hash of the worklog's cache keys (autotune/tuner/cache_key.hpp)
#   benchmark      - Google Benchmark: the timing loop inside every variant executable
#   OpenMP         - the CPU kernels, the CPU harness and the CPU probe
#   Catch2         - unit and integration tests (v2 or v3)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(benchmark REQUIRED)
find_package(OpenMP REQUIRED)

# Debian and Ubuntu ship xxHash without a CMake package (libxxhash-dev: a header and a library).
find_path(KILN_XXHASH_INCLUDE_DIR xxhash.h)
find_library(KILN_XXHASH_LIBRARY NAMES xxhash)
if(NOT KILN_XXHASH_INCLUDE_DIR OR NOT KILN_XXHASH_LIBRARY)
  message(FATAL_ERROR "kiln: xxHash not found (the hash of the worklog's cache keys): install libxxhash-dev "
                      "(cmake/install-deps.sh does), or set KILN_XXHASH_INCLUDE_DIR and KILN_XXHASH_LIBRARY")
endif()
if(NOT TARGET kiln_xxhash)
  add_library(kiln_xxhash UNKNOWN IMPORTED)
  set_target_properties(kiln_xxhash PROPERTIES IMPORTED_LOCATION "${KILN_XXHASH_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${KILN_XXHASH_INCLUDE_DIR}")
endif()
