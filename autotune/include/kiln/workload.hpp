// The contract between a kernel and the Kiln harness.
//
// A kernel author writes one Workload class per space. The harness constructs it for a problem
// and a seed, poisons its outputs, runs a variant through `run<Config>`, and asks it to check the
// result. It never looks inside the buffers itself.
//
//   class MyWorkload final : public kiln::Workload {
//    public:
//     MyWorkload(const kiln::Problem& problem, std::uint64_t seed);  // allocate, fill inputs
//     template <class Config> void run();                 // CPU backend: run once, synchronously
//     template <class Config> void run(cudaStream_t s);   // CUDA backend: enqueue on s, no sync,
//                                                         // no allocation (it is timed)
//     void poison() override;                             // poison pattern over every output
//     std::vector<kiln::CheckResult> check() override;    // outputs vs. fp64 reference
//     std::size_t footprint_bytes() const override;       // inputs + outputs in memory
//     std::unique_ptr<kiln::Workload> copy() const override;  // optional: a rotation set
//   };
//
// Config carries the variant's parameters as `static constexpr` members (int, or kiln::Choice
// for identifier-valued parameters), plus `kiln_name`, the canonical variant name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/check.hpp"
#include "kiln/choice.hpp"
#include "kiln/error.hpp"
#include "kiln/numeric.hpp"
#include "kiln/problem.hpp"
#include "kiln/rng.hpp"

namespace kiln {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual void poison() = 0;
  virtual std::vector<CheckResult> check() = 0;
  virtual std::size_t footprint_bytes() const = 0;
  // Another input set for the harness's timing rotation (launches rotate through enough sets that
  // each reads its inputs from memory, not from a cache): this one copied into memory of its own.
  // Only where a set lies matters to the rotation, not what it holds, and a copy costs a fraction
  // of making inputs again (one CPU softmax problem of 2048 x 2048 fp32 rotates through 60 sets).
  // nullptr, the default: the harness constructs every set, each with a seed of its own.
  virtual std::unique_ptr<Workload> copy() const { return nullptr; }
};

}  // namespace kiln
