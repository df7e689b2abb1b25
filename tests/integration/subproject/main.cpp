// Calls a tuned Kiln kernel and says which configuration served it and why.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kiln/softmax.hpp"
#include "kiln/tuned/softmax_cpu.hpp"

int main() {
  const std::int64_t rows = 64, cols = 2048;
  std::vector<float> in(rows * cols), out(rows * cols);
  for (std::int64_t i = 0; i < rows * cols; ++i) in[i] = std::cos(0.11f * static_cast<float>(i));
  kiln::cpu::softmax(in.data(), out.data(), rows, cols);
  double sum = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum += out[c];
  auto p = kiln::tuned::softmax_cpu::provenance({rows, cols, kiln::Choice{"fp32"}});
  std::printf("softmax_cpu: row sum %.6f, variant %s, selection: %s, device %s\n", sum, p.variant, p.selection,
              p.device);
  return std::fabs(sum - 1.0) < 1e-4 ? 0 : 1;
}
