// The CPU softmax entry points: each problem goes to the variant tuned for its bucket.
#include "kiln/softmax.hpp"
#include "kiln/tuned/softmax_cpu.hpp"
#include "softmax_args.hpp"
#include "softmax_cpu_kernels.hpp"

namespace kiln::cpu {

void softmax(const float* in, float* out, std::int64_t rows, std::int64_t cols) {
  ::kiln::softmax::require_arguments("kiln::cpu::softmax", in, out, rows, cols, sizeof(float), true);
  kiln::tuned::softmax_cpu::dispatch({rows, cols, kiln::Choice{"fp32"}}, [&](auto config) {
    ::kiln::softmax::softmax_rows<decltype(config)>(in, out, rows, cols);
  });
}

void softmax_bf16(const std::uint16_t* in, std::uint16_t* out, std::int64_t rows, std::int64_t cols) {
  ::kiln::softmax::require_arguments("kiln::cpu::softmax_bf16", in, out, rows, cols, sizeof(std::uint16_t), true);
  kiln::tuned::softmax_cpu::dispatch({rows, cols, kiln::Choice{"bf16"}}, [&](auto config) {
    ::kiln::softmax::softmax_rows<decltype(config)>(in, out, rows, cols);
  });
}

}  // namespace kiln::cpu
