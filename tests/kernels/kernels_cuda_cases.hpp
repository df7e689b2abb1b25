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
// The same with in and out both one element into their allocations (the same alignment phase, so
// the vector paths, with the matrix starting and ending off a vector boundary); guards_intact
// tells whether the elements before and after the output matrix kept their poison.
kiln::CheckResult softmax_shifted_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                       const std::string& dtype, std::uint64_t seed, bool* guards_intact);
// Rows of huge magnitude (run_softmax_phase's `huge`: about the lowest float, -1e10, 1e9, -1e6 in
// turn), every row compared with the fp64 reference.
kiln::CheckResult softmax_huge_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                    const std::string& dtype, std::uint64_t seed);

// The selective scan: `options` is a mask of the optional parts (1 z, 2 D, 4 delta_bias,
// 8 softplus, 16 final state; 31 all, the tuned workload's). The case's element and tamper apply to y.
std::vector<std::string> selective_scan_configs();
std::vector<kiln::CheckResult> selective_scan_case(const std::string& config, std::int64_t batch, std::int64_t channels,
                                                   std::int64_t length, std::int64_t state, std::int64_t groups,
                                                   const std::string& dtype, int options, std::uint64_t seed,
                                                   const Case& c = {});
// The elements of the workload's input rows (u, delta, z, B, C), drawn on the device, that differ
// bit for bit from input_value() rounded to the dtype (the values the fp64 reference sees);
// `compared` gets how many elements were compared.
std::int64_t selective_scan_input_mismatches(std::int64_t batch, std::int64_t channels, std::int64_t length,
                                             std::int64_t state, std::int64_t groups, const std::string& dtype,
                                             int options, std::uint64_t seed, std::int64_t& compared);
// Runs kiln::cuda::selective_scan (the public function, through its tuned dispatch) on device
// copies of the workload's inputs, everything optional given, and compares with the fp64 reference.
std::vector<kiln::CheckResult> selective_scan_api_case(std::int64_t batch, std::int64_t channels, std::int64_t length,
                                                       std::int64_t state, std::int64_t groups, const std::string& dtype,
                                                       std::uint64_t seed);
// The message of the SelectiveScanError kiln::cuda::selective_scan throws for bad argument
// `which` (see kernels_cuda_cases.cu, kScanBadArguments), "" when it throws none; `count` gets
// the number of bad arguments there are. Device buffers are real, so a call that wrongly passes
// the checks would launch and not crash.
std::string selective_scan_api_error(int which, int& count, std::string& expected);

std::vector<kiln::CheckResult> nbody_case(const std::string& config, std::int64_t n, std::uint64_t seed,
                                          const Case& c = {});

// The tree N-body (nbody_tree_cuda_* spaces): configs named "e<TOL_DIGITS>_<variant>"; a case
// returns the check and, for a tree config with n >= 2, the built tree's first invariant
// violation (nbody_tree_invariants.hpp; "" when none). The tamper applies to the accelerations.
std::vector<std::string> nbody_tree_configs();
double nbody_tree_tolerance(const std::string& config);  // 10^-TOL_DIGITS
struct TreeCaseResult {
  kiln::CheckResult check;
  std::string invariants;
};
TreeCaseResult nbody_tree_case(const std::string& config, std::int64_t n, const std::string& bodies,
                               std::uint64_t seed, const Case& c = {});
// kiln::cuda::nbody_accelerations with a tolerance (the public function, its dispatch, a
// workspace of nbody_workspace_bytes) on the workload's bodies: its check against the fp64
// reference (a sample of bodies for large n).
kiln::CheckResult nbody_tree_api_case(std::int64_t n, const std::string& bodies, double tolerance, std::uint64_t seed);
// The message of the NbodyError the CUDA N-body functions throw for bad argument `which`, ""
// when none is thrown; `count` gets the number of bad arguments, `expected` what the message must
// contain; `untouched` whether the output still holds what it held before the call.
std::string nbody_tree_api_error(int which, int& count, std::string& expected, bool& untouched);

std::vector<std::string> topk_configs();
// The tamper applies to the values output (element = row * k + j).
std::vector<kiln::CheckResult> topk_case(const std::string& config, std::int64_t rows, std::int64_t n, std::int64_t k,
                                         const std::string& mode, const std::string& input, std::uint64_t seed,
                                         const Case& c = {});

}  // namespace kiln_test::cuda_cases
