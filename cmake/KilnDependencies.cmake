# Third-party packages, each for one job:
#   nlohmann_json  - space files, manifests, records and the harness's JSON lines
#   CLI11          - the `kiln` command line
#   SQLite3        - the worklog
#   benchmark      - Google Benchmark: the timing loop inside every variant executable
#   OpenMP         - the CPU kernels, the CPU harness and the CPU probe
#   Catch2         - unit and integration tests (v2 or v3)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(benchmark REQUIRED)
find_package(OpenMP REQUIRED)
