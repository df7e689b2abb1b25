// Times named top-k configurations by direct launches (no dispatch), for comparing algorithms and
// block sizes on chosen shapes while a kernel is developed; the tuned library's figures come from
// the tuner and bench_topk.py.
//   topk_variants_bench ROWSxNxK[,ROWSxNxK...] [CONFIG ...]
// CONFIG: sample128, sample256, sample512, stream128, stream256, stream512, regs128, regs256, regs512, shared256 (REGS 64),
// air256, air512 (default: all; regs on rows wider than 64 x THREADS runs shared, as the library
// does). Built by build.sh. The input is the workloads' normal input (topk_check.hpp, seed 7),
// largest mode. Each configuration runs once and its output is checked on the first, middle and
// last rows (kiln::topk::agrees: exactly the top k, in order); then 7 runs of 3 (n x rows of 2^28
// or more) or 10 back-to-back launches are timed with CUDA events, and the median, minimum and
// maximum of the per-launch times are printed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/choice.hpp"
#include "topk_check.hpp"
#include "topk_cuda_launch.cuh"

namespace {

using namespace kiln::topk;

#define BENCH_CHECK(x)                                                                                  \
  do {                                                                                                  \
    const cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                 \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

template <int T, int REGS_>
struct Config {
  static constexpr int THREADS = T, BITS = 11, SPLIT = 1, REGS = REGS_;
};
template <int T>
struct Sample : Config<T, 48> {
  static constexpr kiln::Choice ALGO{"sample"};
};
template <int T>
struct Stream : Config<T, 48> {
  static constexpr kiln::Choice ALGO{"stream"};
};
template <int T>
struct Regs : Config<T, 48> {
  static constexpr kiln::Choice ALGO{"regs"};
};
template <int T, int R>
struct Shared : Config<T, R> {
  static constexpr kiln::Choice ALGO{"shared"};
};
template <int T>
struct Air : Config<T, 48> {
  static constexpr kiln::Choice ALGO{"air"};
};

__global__ void fill(float* x, std::int64_t rows, std::int64_t n) {
  const std::int64_t total = rows * n;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    x[i] = input_value(7, i / n, i % n, n, false);
  }
}

struct Case {
  std::int64_t rows, n, k;
};

struct Buffers {
  float* in = nullptr;
  float* values = nullptr;
  std::int64_t* indices = nullptr;
  void* workspace = nullptr;
};

template <class C>
void run(const char* name, const Case& p, const Buffers& b) {
  auto launch_once = [&] {
    BENCH_CHECK(launch<C>(b.in, p.rows, p.n, p.k, false, b.values, b.indices, b.workspace, nullptr));
  };
  launch_once();
  BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<float> row(static_cast<std::size_t>(p.n)), values(static_cast<std::size_t>(p.k));
  std::vector<std::int64_t> indices(static_cast<std::size_t>(p.k));
  int wrong = 0;
  for (const std::int64_t r : {std::int64_t{0}, p.rows / 2, p.rows - 1}) {
    BENCH_CHECK(cudaMemcpy(row.data(), b.in + r * p.n, p.n * sizeof(float), cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(values.data(), b.values + r * p.k, p.k * sizeof(float), cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(indices.data(), b.indices + r * p.k, p.k * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
    wrong += agrees(values.data(), indices.data(), row.data(), p.n, p.k, false) ? 0 : 1;
  }
  cudaEvent_t start, stop;
  BENCH_CHECK(cudaEventCreate(&start));
  BENCH_CHECK(cudaEventCreate(&stop));
  const int launches = p.rows * p.n >= (std::int64_t{1} << 28) ? 3 : 10;
  std::vector<float> us;
  for (int i = 0; i < 7; ++i) {
    BENCH_CHECK(cudaEventRecord(start));
    for (int j = 0; j < launches; ++j) launch_once();
    BENCH_CHECK(cudaEventRecord(stop));
    BENCH_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1000.0f / static_cast<float>(launches));
  }
  BENCH_CHECK(cudaEventDestroy(start));
  BENCH_CHECK(cudaEventDestroy(stop));
  std::sort(us.begin(), us.end());
  std::printf("| %lld x %lld, k %lld | %s | %.1f us | min %.1f, max %.1f |%s\n", static_cast<long long>(p.rows),
              static_cast<long long>(p.n), static_cast<long long>(p.k), name, us[3], us[0], us[6],
              wrong > 0 ? " WRONG" : "");
}

std::vector<Case> parse_cases(const std::string& text) {
  std::vector<Case> shapes;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    Case s{};
    char x1 = 0, x2 = 0;
    std::stringstream one(item);
    if (!(one >> s.rows >> x1 >> s.n >> x2 >> s.k) || x1 != 'x' || x2 != 'x' || !one.eof() || s.rows < 1 || s.n < 1 ||
        s.k < 1 || s.k > s.n || s.k > kMaxList || s.n > 2147483647) {
      std::fprintf(stderr, "topk_variants_bench: bad shape '%s' (ROWSxNxK, 1 <= k <= n, k <= %d)\n", item.c_str(),
                   kMaxList);
      std::exit(2);
    }
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace

int main(int argc, char** argv) {
  using Runner = std::function<void(const Case&, const Buffers&)>;
  const std::vector<std::pair<std::string, Runner>> configs = {
      {"sample128", [](const Case& p, const Buffers& b) { run<Sample<128>>("sample 128", p, b); }},
      {"sample256", [](const Case& p, const Buffers& b) { run<Sample<256>>("sample 256", p, b); }},
      {"sample512", [](const Case& p, const Buffers& b) { run<Sample<512>>("sample 512", p, b); }},
      {"stream128", [](const Case& p, const Buffers& b) { run<Stream<128>>("stream 128", p, b); }},
      {"stream256", [](const Case& p, const Buffers& b) { run<Stream<256>>("stream 256", p, b); }},
      {"stream512", [](const Case& p, const Buffers& b) { run<Stream<512>>("stream 512", p, b); }},
      {"regs128", [](const Case& p, const Buffers& b) { run<Regs<128>>("regs 128", p, b); }},
      {"regs256", [](const Case& p, const Buffers& b) { run<Regs<256>>("regs 256", p, b); }},
      {"regs512", [](const Case& p, const Buffers& b) { run<Regs<512>>("regs 512", p, b); }},
      {"shared256", [](const Case& p, const Buffers& b) { run<Shared<256, 64>>("shared 256, REGS 64", p, b); }},
      {"air256", [](const Case& p, const Buffers& b) { run<Air<256>>("air 256", p, b); }},
      {"air512", [](const Case& p, const Buffers& b) { run<Air<512>>("air 512", p, b); }},
  };
  if (argc < 2) {
    std::fprintf(stderr, "usage: topk_variants_bench ROWSxNxK[,ROWSxNxK...] [CONFIG ...]\nconfigs:");
    for (const auto& [name, runner] : configs) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  const std::vector<Case> shapes = parse_cases(argv[1]);
  std::vector<const Runner*> chosen;
  for (int a = 2; a < argc; ++a) {
    const auto it = std::find_if(configs.begin(), configs.end(), [&](const auto& c) { return c.first == argv[a]; });
    if (it == configs.end()) {
      std::fprintf(stderr, "topk_variants_bench: unknown config '%s'\n", argv[a]);
      return 2;
    }
    chosen.push_back(&it->second);
  }
  if (chosen.empty()) {
    for (const auto& c : configs) chosen.push_back(&c.second);
  }
  std::int64_t most = 0, most_out = 0;
  std::size_t workspace = 0;
  for (const Case& s : shapes) {
    most = std::max(most, s.rows * s.n);
    most_out = std::max(most_out, s.rows * s.k);
    workspace = std::max(workspace, max_workspace_bytes(s.rows, s.n, s.k));
  }
  Buffers b;
  BENCH_CHECK(cudaMalloc(&b.in, static_cast<std::size_t>(most) * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&b.values, static_cast<std::size_t>(most_out) * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&b.indices, static_cast<std::size_t>(most_out) * sizeof(std::int64_t)));
  if (workspace > 0) BENCH_CHECK(cudaMalloc(&b.workspace, workspace));
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s\n| shape | config | median | spread |\n| --- | --- | ---: | --- |\n", prop.name);
  for (const Case& s : shapes) {
    fill<<<1024, 256>>>(b.in, s.rows, s.n);
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaDeviceSynchronize());
    for (const Runner* r : chosen) (*r)(s, b);
  }
  return 0;
}
