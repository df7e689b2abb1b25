// The CPU top-k entry point: each problem goes to the variant tuned for its bucket.
#include "kiln/topk.hpp"
#include "kiln/tuned/topk_cpu.hpp"
#include "topk_args.hpp"
#include "topk_cpu_kernels.hpp"

namespace kiln::cpu {

void topk(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode, float* values,
          std::int64_t* indices) {
  constexpr const char* kWho = "kiln::cpu::topk";
  ::kiln::topk::require_sizes(kWho, rows, n, k, kTopkMaxN);
  ::kiln::topk::require_mode(kWho, mode);
  ::kiln::topk::require_pointer(kWho, "in", in, rows * n);
  ::kiln::topk::require_pointer(kWho, "values", values, rows * k);
  ::kiln::topk::require_pointer(kWho, "indices", indices, rows * k);
  ::kiln::topk::require_aligned(kWho, "in", in, alignof(float));
  ::kiln::topk::require_aligned(kWho, "values", values, alignof(float));
  ::kiln::topk::require_aligned(kWho, "indices", indices, alignof(std::int64_t));
  if (rows == 0) return;
  const bool smallest = mode == TopkMode::smallest;
  kiln::tuned::topk_cpu::dispatch({rows, n, k, kiln::Choice{smallest ? "smallest" : "largest"}, kiln::Choice{"normal"}},
                                  [&](auto config) {
                                    ::kiln::topk::topk_rows<decltype(config)>(in, rows, n, k, smallest, values, indices);
                                  });
}

}  // namespace kiln::cpu
