// Calls Kiln's tuned CPU kernels (softmax, top-k with its streaming state, the selective scan,
// N-body all-pairs and within a tolerance) and a tuned user kernel through their installed
// packages, and checks their results against references written here; exit code 0 when all are
// right.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "kiln/nbody.hpp"
#include "kiln/selective_scan.hpp"
#include "kiln/softmax.hpp"
#include "kiln/topk.hpp"
#include "kiln/tuned/softmax_cpu.hpp"
#include "user/scale_rows.hpp"

namespace {

// The k largest of each row, best first (ties: the lower column), against kiln::cpu::topk and a
// state fed in three chunks and merged from two.
bool topk_right() {
  const std::int64_t rows = 5, n = 1009, k = 17;
  std::vector<float> in(rows * n);
  for (std::int64_t i = 0; i < rows * n; ++i) in[i] = std::cos(0.91f * static_cast<float>(i % 97)) * static_cast<float>(i % 13);
  std::vector<float> values(rows * k), streamed(rows * k);
  std::vector<std::int64_t> indices(rows * k), streamed_indices(rows * k);
  kiln::cpu::topk(in.data(), rows, n, k, kiln::TopkMode::largest, values.data(), indices.data());
  bool ok = true;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<std::int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    const float* row = in.data() + r * n;
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return row[a] > row[b]; });
    for (std::int64_t j = 0; j < k; ++j) {
      ok = ok && indices[r * k + j] == order[j] && values[r * k + j] == row[order[j]];
    }
  }
  // Columns [0, 400) and [400, 700) into one state, [700, n) into another, then merged.
  auto chunk = [&](std::int64_t from, std::int64_t to) {
    std::vector<float> c(rows * (to - from));
    for (std::int64_t r = 0; r < rows; ++r) std::copy(in.begin() + r * n + from, in.begin() + r * n + to, c.begin() + r * (to - from));
    return c;
  };
  kiln::TopkState a(rows, k, kiln::TopkMode::largest), b(rows, k, kiln::TopkMode::largest);
  const std::vector<float> c0 = chunk(0, 400), c1 = chunk(400, 700), c2 = chunk(700, n);
  a.feed(c0.data(), 400, 0);
  a.feed(c1.data(), 300, 400);
  b.feed(c2.data(), n - 700, 700);
  a.merge(b);
  a.finalize(streamed.data(), streamed_indices.data());
  ok = ok && streamed == values && streamed_indices == indices;
  bool refused = false;
  try {
    kiln::cpu::topk(in.data(), rows, n, n + 1, kiln::TopkMode::largest, values.data(), indices.data());
  } catch (const kiln::TopkError&) {
    refused = true;
  }
  std::printf("topk: %s, streamed %s, k > n %s\n", ok ? "exact" : "WRONG", streamed == values ? "the same" : "DIFFERENT",
              refused ? "refused" : "NOT REFUSED");
  return ok && refused;
}

// The recurrence of kiln/selective_scan.hpp in double, fp32 I/O, with D, z and softplus.
bool scan_right() {
  const std::int64_t batch = 2, channels = 6, length = 37, state = 4, groups = 2;
  auto wave = [](std::int64_t i, double f) { return static_cast<float>(std::sin(f * static_cast<double>(i + 1))); };
  std::vector<float> u(batch * channels * length), delta(u.size()), z(u.size()), y(u.size());
  std::vector<float> A(channels * state), D(channels), B(batch * groups * state * length), C(B.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    u[i] = wave(i, 0.3);
    delta[i] = 0.5f * wave(i, 0.7);
    z[i] = wave(i, 1.1);
  }
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = -0.2f - 0.1f * static_cast<float>(i % 5);
  for (std::size_t i = 0; i < D.size(); ++i) D[i] = 0.1f * static_cast<float>(i);
  for (std::size_t i = 0; i < B.size(); ++i) {
    B[i] = wave(i, 0.13);
    C[i] = wave(i, 0.29);
  }
  kiln::SelectiveScanParams p;
  p.u = u.data(); p.delta = delta.data(); p.A = A.data(); p.B = B.data(); p.C = C.data(); p.D = D.data();
  p.z = z.data(); p.y = y.data(); p.softplus = true; p.dtype = kiln::ScanDType::fp32;
  p.batch = batch; p.channels = channels; p.length = length; p.state = state; p.groups = groups;
  kiln::cpu::selective_scan(p);
  double worst = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t d = 0; d < channels; ++d) {
      const std::int64_t g = d / (channels / groups);
      std::vector<double> h(state, 0.0);
      for (std::int64_t t = 0; t < length; ++t) {
        const std::int64_t at = (b * channels + d) * length + t;
        const double dt = std::log1p(std::exp(static_cast<double>(delta[at])));
        double out = 0;
        for (std::int64_t s = 0; s < state; ++s) {
          const std::int64_t bc = ((b * groups + g) * state + s) * length + t;
          h[s] = std::exp(dt * A[d * state + s]) * h[s] + dt * B[bc] * u[at];
          out += C[bc] * h[s];
        }
        out += D[d] * u[at];
        out *= z[at] / (1.0 + std::exp(-static_cast<double>(z[at])));
        worst = std::max(worst, std::fabs(y[at] - out) / (1.0 + std::fabs(out)));
      }
    }
  }
  std::printf("selective_scan: worst error %.3g\n", worst);
  return worst < 1e-4;
}

// Accelerations of 300 bodies against a double all-pairs sum, all-pairs and within 1e-3.
bool nbody_right() {
  const std::int64_t n = 300;
  std::vector<float> bodies(4 * n), exact(3 * n), within(3 * n);
  for (std::int64_t i = 0; i < n; ++i) {
    bodies[4 * i] = std::sin(1.3f * static_cast<float>(i));
    bodies[4 * i + 1] = std::cos(0.7f * static_cast<float>(i));
    bodies[4 * i + 2] = std::sin(0.31f * static_cast<float>(i) + 1.0f);
    bodies[4 * i + 3] = 1.0f / static_cast<float>(n);
  }
  kiln::cpu::nbody_accelerations(bodies.data(), exact.data(), n);
  kiln::cpu::nbody_accelerations(bodies.data(), within.data(), n, 1e-3);
  double err = 0, err_within = 0, norm = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double a[3] = {0, 0, 0};
    for (std::int64_t j = 0; j < n; ++j) {
      double d[3], r2 = 1e-4;  // eps = 0.01
      for (int c = 0; c < 3; ++c) {
        d[c] = static_cast<double>(bodies[4 * j + c]) - bodies[4 * i + c];
        r2 += d[c] * d[c];
      }
      const double w = bodies[4 * j + 3] / (r2 * std::sqrt(r2));
      for (int c = 0; c < 3; ++c) a[c] += w * d[c];
    }
    for (int c = 0; c < 3; ++c) {
      err += (exact[3 * i + c] - a[c]) * (exact[3 * i + c] - a[c]);
      err_within += (within[3 * i + c] - a[c]) * (within[3 * i + c] - a[c]);
      norm += a[c] * a[c];
    }
  }
  const double rel = std::sqrt(err / norm), rel_within = std::sqrt(err_within / norm);
  std::printf("nbody: all-pairs relative RMS error %.3g, within 1e-3: %.3g\n", rel, rel_within);
  return rel < 1e-5 && rel_within <= 1e-3;
}

}  // namespace

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
  const bool topk = topk_right(), scan = scan_right(), nbody = nbody_right();
  bool ok = worst < 1e-4 && scale_err == 0 && user::scale_rows_tuned(rows, cols) && topk && scan && nbody;
  std::printf(ok ? "consumer: OK\n" : "consumer: WRONG\n");
  return ok ? 0 : 1;
}
