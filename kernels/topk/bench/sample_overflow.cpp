// sample_overflow: how many rows of a 1024 x 32768 input leave ALGO sample more candidates than its
// buffer holds, on the CPU, from the inputs the tuner (or a bench) generates. Such a row is read
// again by its block, and the whole launch waits for that block (README, "Why the tuner timed the
// small buffer at 71 us").
//   sample_overflow THREADS K CAP (seed HEX | variant NAME INDEX [RUN_SEED] | random COUNT)
// CAP: the buffer's entries ((dynamic bytes - 8 list_length(K)) / 8: 1376 for the 128-thread small
// buffer at k 16). `variant`: the input the harness times for the plan's bench problem INDEX
// (plan_seed and the harness's mix). `random`: COUNT inputs of seeds 1..COUNT, the fraction with a
// row over CAP. The threshold is sampled_threshold's (topk_cuda_sample.cuh): 4 x THREADS elements in
// 32-column runs spread evenly over the row, the 22-bit key prefix of the sample's r-th best,
// r = ceil(mean + 4 sqrt(mean) + 4); a candidate is an element whose key prefix is at least it.
// Build: g++ -O2 -std=c++20 -Ikernels/topk -Iautotune/include kernels/topk/bench/sample_overflow.cpp
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kiln/counter_random.hpp"
#include "kiln/hash.hpp"
#include "topk_check.hpp"
#include "topk_order.hpp"

namespace {

constexpr long kRows = 1024, kColumns = 32768;

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The harness's input seed of bench problem `index` (variant_main.cpp: mix(plan.seed, 1000 + index, 0)).
std::uint64_t harness_seed(std::uint64_t run_seed, const std::string& variant, int index) {
  const std::uint64_t plan = run_seed ^ kiln::Fnv1a64().field(variant).value();  // model::plan_seed
  const std::uint64_t a = 1000 + static_cast<std::uint64_t>(index);
  return kiln::random::mix64(plan ^ (a * 0x9E3779B97F4A7C15ull));
}

struct Rows {
  long over = 0;       // rows with more candidates than the buffer holds
  long most = 0;       // the most candidates of a row
  double mean = 0;     // candidates a row, on average
};

Rows count(int threads, int k, long cap, std::uint64_t seed, bool print) {
  const int samples = 4 * threads, runs = samples / 32;
  const float mean = static_cast<float>(k) * static_cast<float>(samples) / static_cast<float>(kColumns);
  const auto rank = static_cast<unsigned>(std::ceil(mean + 4.0f * std::sqrt(mean) + 4.0f));
  std::vector<std::uint32_t> keys(kColumns), sample(samples);
  Rows r;
  for (long row = 0; row < kRows; ++row) {
    for (long c = 0; c < kColumns; ++c) {
      keys[c] = kiln::topk::key_of(bits_of(kiln::topk::input_value(seed, row, c, kColumns, false)), false);
    }
    for (int i = 0; i < samples; ++i) sample[i] = keys[(i / 32) * (kColumns - 32) / (runs - 1) + i % 32];
    std::nth_element(sample.begin(), sample.begin() + (rank - 1), sample.end(), std::greater<>());
    const std::uint32_t prefix = sample[rank - 1] >> 10;
    long candidates = 0;
    for (long c = 0; c < kColumns; ++c) candidates += (keys[c] >> 10) >= prefix ? 1 : 0;
    r.mean += static_cast<double>(candidates) / kRows;
    r.most = std::max(r.most, candidates);
    if (candidates > cap) {
      ++r.over;
      if (print) std::printf("  row %ld: %ld candidates\n", row, candidates);
    }
  }
  return r;
}

int usage() {
  std::fprintf(stderr, "usage: sample_overflow THREADS K CAP (seed HEX | variant NAME INDEX [RUN_SEED] | random COUNT)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) return usage();
  const int threads = std::atoi(argv[1]), k = std::atoi(argv[2]);
  const long cap = std::atol(argv[3]);
  const std::string mode = argv[4];
  if (threads < 32 || threads % 32 != 0 || k < 1 || cap < 1) return usage();
  if (mode == "random") {
    const int inputs = std::atoi(argv[5]);
    int with_over = 0;
    long most = 0;
    for (int s = 1; s <= inputs; ++s) {
      const Rows r = count(threads, k, cap, kiln::random::mix64(static_cast<std::uint64_t>(s)), false);
      with_over += r.over > 0 ? 1 : 0;
      most = std::max(most, r.most);
    }
    std::printf("THREADS %d, k %d, %ld entries: %d of %d inputs have a row over the buffer (most candidates of a row %ld)\n",
                threads, k, cap, with_over, inputs, most);
    return 0;
  }
  std::uint64_t seed = 0;
  if (mode == "seed") {
    seed = std::strtoull(argv[5], nullptr, 16);
  } else if (mode == "variant" && argc >= 7) {
    seed = harness_seed(argc >= 8 ? std::strtoull(argv[7], nullptr, 10) : 1, argv[5], std::atoi(argv[6]));
  } else {
    return usage();
  }
  const Rows r = count(threads, k, cap, seed, true);
  std::printf("THREADS %d, k %d, input seed %016llx: %ld of %ld rows over the buffer's %ld entries (candidates a row: mean %.0f, most %ld)\n",
              threads, k, static_cast<unsigned long long>(seed), r.over, kRows, cap, r.mean, r.most);
  return 0;
}
