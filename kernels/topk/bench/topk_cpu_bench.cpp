// Times the CPU top-k kernel (topk_rows) of named variants on the held-out shapes of the committed
// CPU record and a few listed ones: normal-distributed input, each variant called back to back,
// the median of 9 timings of many calls. No tuned header or Kiln library is needed:
//   g++ -std=c++17 -O3 -march=native -fopenmp -Ikernels/topk -Iautotune/include \
//       kernels/topk/bench/topk_cpu_bench.cpp -o build/topk_cpu_bench && build/topk_cpu_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "kiln/choice.hpp"
#include "topk_cpu_kernels.hpp"

namespace {

struct Heap16 {
  static constexpr kiln::Choice ALGO{"heap"};
  static constexpr int CHUNK = 16384, BLOCK = 16;
};
struct Heap64 {
  static constexpr kiln::Choice ALGO{"heap"};
  static constexpr int CHUNK = 65536, BLOCK = 64;
};
struct Buffer64 {
  static constexpr kiln::Choice ALGO{"buffer"};
  static constexpr int CHUNK = 16384, BLOCK = 64;
};
struct Select {
  static constexpr kiln::Choice ALGO{"select"};
  static constexpr int CHUNK = 16384, BLOCK = 64;
};

template <class Config>
double median_us(const std::vector<float>& in, long rows, long n, long k, bool smallest) {
  std::vector<float> values(rows * k);
  std::vector<std::int64_t> indices(rows * k);
  const long calls = std::max<long>(5, std::min<long>(2000, 20000000 / (rows * n + 1000 * rows)));
  std::vector<double> us;
  for (int r = 0; r < 9; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
      kiln::topk::topk_rows<Config>(in.data(), rows, n, k, smallest, values.data(), indices.data());
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  std::sort(us.begin(), us.end());
  return us[4];
}

}  // namespace

int main() {
  const struct {
    long rows, n, k;
    bool smallest;
  } shapes[] = {{1220, 7, 1, true},       {164, 45, 2, false},      {142, 126, 24, false},   {89, 704, 52, true},
                {2, 5234, 502, false},    {1, 135563, 42, true},    {255, 40594, 605, false}, {1242, 871, 665, true},
                {9061, 1336, 438, true},  {1, 4194304, 1024, false}, {256, 32768, 256, false}};
  std::printf("rows x n, k: median us of heap (BLOCK 16), heap (BLOCK 64), buffer (BLOCK 64), select\n");
  for (const auto& s : shapes) {
    std::vector<float> in(s.rows * s.n);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    for (float& x : in) x = normal(rng);
    std::printf("%5ld x %7ld, k %4ld: %10.1f %10.1f %10.1f %10.1f\n", s.rows, s.n, s.k,
                median_us<Heap16>(in, s.rows, s.n, s.k, s.smallest), median_us<Heap64>(in, s.rows, s.n, s.k, s.smallest),
                median_us<Buffer64>(in, s.rows, s.n, s.k, s.smallest), median_us<Select>(in, s.rows, s.n, s.k, s.smallest));
  }
}
