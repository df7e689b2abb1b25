// Calls a tuned Kiln kernel and a tuned user kernel and checks their results; exit code 0 when
// both are right.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kiln/softmax.hpp"
#include "kiln/tuned/softmax_cpu.hpp"
#include "user/scale_rows.hpp"

int main() {
  const std::int64_t rows = 37, cols = 1003;
  std::vector<float> in(rows * cols), out(rows * cols), scale(rows);
  for (std::int64_t i = 0; i < rows * cols; ++i) in[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  for (std::int64_t r = 0; r < rows; ++r) scale[r] = 0.5f + 0.01f * static_cast<float>(r);

  kiln::cpu::softmax(in.data(), out.data(), rows, cols);
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    double max = -1e300, sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) max = std::fmax(max, in[r * cols + c]);
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(in[r * cols + c] - max);
    for (std::int64_t c = 0; c < cols; ++c) {
      double ref = std::exp(in[r * cols + c] - max) / sum;
      worst = std::fmax(worst, std::fabs(out[r * cols + c] - ref) / ref);
    }
  }
  auto p = kiln::tuned::softmax_cpu::provenance({rows, cols, kiln::Choice{"fp32"}});
  std::printf("softmax: worst relative error %.3g, variant %s (%s)\n", worst, p.variant, p.selection);

  user::scale_rows(in.data(), scale.data(), out.data(), rows, cols);
  double scale_err = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      scale_err = std::fmax(scale_err, std::fabs(out[r * cols + c] - in[r * cols + c] * scale[r]));
    }
  }
  std::printf("scale_rows: max error %.3g, variant %s, tuned %d\n", scale_err, user::scale_rows_variant(rows, cols),
              user::scale_rows_tuned(rows, cols) ? 1 : 0);
  bool ok = worst < 1e-4 && scale_err == 0 && user::scale_rows_tuned(rows, cols);
  std::printf(ok ? "consumer: OK\n" : "consumer: WRONG\n");
  return ok ? 0 : 1;
}
