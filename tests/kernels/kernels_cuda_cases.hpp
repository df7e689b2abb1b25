// Host interface to the CUDA kernel cases (kernels_cuda_cases.cu), so that the Catch driver is
// plain C++ and nvcc compiles only the kernels and workloads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/check.hpp"

namespace kiln_test::cuda_cases {

// True when cudaGetDeviceCount reports a device; otherwise `why` says what it reported.
bool device_available(std::string& why);

// How a case enqueues run<Config>: directly on a stream, or captured into a CUDA graph and
// launched from it, as the harness times variants.
enum class Mode { stream, graph };

// What is done to the output after the run, before check(): nothing, one element set back to the
// poison pattern, one set to NaN, or one moved by `amount`.
enum class Tamper { none, poison, nan, offset };

struct Case {
  Mode mode = Mode::stream;
  Tamper tamper = Tamper::none;
  std::int64_t element = 0;  // the element tampered with
  float amount = 0.0f;
};

std::vector<std::string> softmax_configs();
std::vector<std::string> nbody_configs();

// Builds the workload for the problem and seed, poisons, runs the named config, synchronises,
// applies the case's tamper and returns check().
std::vector<kiln::CheckResult> softmax_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                            const std::string& dtype, std::uint64_t seed, const Case& c = {});
// Calls kiln::softmax::launch directly with in and out offset by one and two elements from
// their allocations, so that they differ in alignment phase (the one-element-per-access path);
// all rows are compared with the fp64 reference.
kiln::CheckResult softmax_phase_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                     const std::string& dtype, std::uint64_t seed);

std::vector<kiln::CheckResult> nbody_case(const std::string& config, std::int64_t n, std::uint64_t seed,
                                          const Case& c = {});

std::vector<std::string> topk_configs();
// The tamper applies to the values output (element = row * k + j).
std::vector<kiln::CheckResult> topk_case(const std::string& config, std::int64_t rows, std::int64_t n, std::int64_t k,
                                         const std::string& mode, const std::string& input, std::uint64_t seed,
                                         const Case& c = {});

}  // namespace kiln_test::cuda_cases
