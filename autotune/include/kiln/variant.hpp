// What a generated variant source registers with the harness: one entry per executable.
// The generated file ends with its backend's registration, KILN_CPU_VARIANT(...) or
// KILN_CUDA_VARIANT(...) (the backends' table names it: kiln/model/backend.hpp); the harness's
// main() finds the entry through kiln_variant_entry().
#pragma once
#include <cstdint>
#include <memory>

#include "kiln/workload.hpp"

namespace kiln {

struct VariantEntry {
  const char* kernel;       // the space's kernel name
  const char* name;         // canonical variant name
  const char* params_json;  // {"PARAM": value, ...} in the space's declared order
  const char* backend;      // the backend's name in the backends' table: "cpu", "cuda"
  std::unique_ptr<Workload> (*make)(const Problem& problem, std::uint64_t seed);
  void (*run)(Workload& workload, void* stream);  // stream: a cudaStream_t, or null on the CPU
};

}  // namespace kiln

// Defined by the generated variant source. The harness carries a weak fallback that returns null,
// so a variant whose source failed to compile still links, and says so when run.
const kiln::VariantEntry* kiln_variant_entry();

#define KILN_CPU_VARIANT(WORKLOAD, CONFIG, KERNEL, NAME, PARAMS_JSON)                               \
  const ::kiln::VariantEntry* kiln_variant_entry() {                                                \
    static const ::kiln::VariantEntry entry{                                                        \
        KERNEL, NAME, PARAMS_JSON, "cpu",                                                           \
        [](const ::kiln::Problem& p, std::uint64_t seed) -> std::unique_ptr<::kiln::Workload> {     \
          return std::make_unique<WORKLOAD>(p, seed);                                               \
        },                                                                                          \
        [](::kiln::Workload& w, void*) { static_cast<WORKLOAD&>(w).template run<CONFIG>(); }};      \
    return &entry;                                                                                  \
  }

#define KILN_CUDA_VARIANT(WORKLOAD, CONFIG, KERNEL, NAME, PARAMS_JSON)                              \
  const ::kiln::VariantEntry* kiln_variant_entry() {                                                \
    static const ::kiln::VariantEntry entry{                                                        \
        KERNEL, NAME, PARAMS_JSON, "cuda",                                                          \
        [](const ::kiln::Problem& p, std::uint64_t seed) -> std::unique_ptr<::kiln::Workload> {     \
          return std::make_unique<WORKLOAD>(p, seed);                                               \
        },                                                                                          \
        [](::kiln::Workload& w, void* s) {                                                          \
          static_cast<WORKLOAD&>(w).template run<CONFIG>(static_cast<cudaStream_t>(s));             \
        }};                                                                                         \
    return &entry;                                                                                  \
  }
