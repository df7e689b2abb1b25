// The top-k CUDA cases (kernels_cuda_cases.hpp): a few configurations of each algorithm of
// topk_cuda's space, compiled for sm_89 and sm_90a.
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

#include "kernels_cuda_support.cuh"
#include "kiln/choice.hpp"
#include "topk_cuda.cuh"

namespace kiln_test::cuda_cases {
namespace {

// topk_cuda.space.json corners: radix over 16 parts (the first default), radix with 8-bit digits over the
// most parts, radix in one block per row, the warp selection in one block per row and over 64
// parts (it runs the radix selection for k above 256), air (the whole GPU on a row) with
// 11-bit digits at 256 threads (the default), 8-bit digits at 128 and 11-bit at 512, and shared
// (one block per row, candidates in shared memory) likewise, each at the filter's register
// budget of 48 and, at 256 threads, of 64 (radix and warp do not read REGS: their names carry
// the generated variants' 48), and regs (one block per row in registers) at every block size,
// each holding rows of up to 64 x THREADS columns and running shared beyond, sample (one block
// per row filtering at a sampled threshold) and stream (its three steps as three kernels) at
// every block size.
struct TopkRadixDefault {
  static constexpr int THREADS = 256, BITS = 11, SPLIT = 16;
  static constexpr kiln::Choice ALGO{"radix"};
};
struct TopkRadixWide {
  static constexpr int THREADS = 512, BITS = 8, SPLIT = 256;
  static constexpr kiln::Choice ALGO{"radix"};
};
struct TopkRadixRow {
  static constexpr int THREADS = 128, BITS = 8, SPLIT = 1;
  static constexpr kiln::Choice ALGO{"radix"};
};
struct TopkWarpRow {
  static constexpr int THREADS = 128, BITS = 11, SPLIT = 1;
  static constexpr kiln::Choice ALGO{"warp"};
};
struct TopkWarpSplit {
  static constexpr int THREADS = 256, BITS = 11, SPLIT = 64;
  static constexpr kiln::Choice ALGO{"warp"};
};
template <int T, int B, int R = 48>
struct TopkAir {
  static constexpr int THREADS = T, BITS = B, SPLIT = 1, REGS = R;
  static constexpr kiln::Choice ALGO{"air"};
};
template <int T, int B, int R = 48>
struct TopkShared {
  static constexpr int THREADS = T, BITS = B, SPLIT = 1, REGS = R;
  static constexpr kiln::Choice ALGO{"shared"};
};
template <int T>
struct TopkRegs {
  static constexpr int THREADS = T, BITS = 11, SPLIT = 1, REGS = 48;
  static constexpr kiln::Choice ALGO{"regs"};
};
template <int T>
struct TopkSample {
  static constexpr int THREADS = T, BITS = 11, SPLIT = 1, REGS = 48;
  static constexpr kiln::Choice ALGO{"sample"};
};
template <int T>
struct TopkStream {
  static constexpr int THREADS = T, BITS = 11, SPLIT = 1, REGS = 48;
  static constexpr kiln::Choice ALGO{"stream"};
};

template <class Config>
std::vector<kiln::CheckResult> run_topk(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::topk::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.values_device(), 4, c);
  return w.check();
}

const std::map<std::string, Runner>& topk_runners() {
  static const std::map<std::string, Runner> runners = {
      {"THREADS256_ALGOradix_BITS11_SPLIT16_REGS48", &run_topk<TopkRadixDefault>},
      {"THREADS512_ALGOradix_BITS8_SPLIT256_REGS48", &run_topk<TopkRadixWide>},
      {"THREADS128_ALGOradix_BITS8_SPLIT1_REGS48", &run_topk<TopkRadixRow>},
      {"THREADS128_ALGOwarp_BITS11_SPLIT1_REGS48", &run_topk<TopkWarpRow>},
      {"THREADS256_ALGOwarp_BITS11_SPLIT64_REGS48", &run_topk<TopkWarpSplit>},
      {"THREADS256_ALGOair_BITS11_SPLIT1_REGS48", &run_topk<TopkAir<256, 11>>},
      {"THREADS256_ALGOair_BITS11_SPLIT1_REGS64", &run_topk<TopkAir<256, 11, 64>>},
      {"THREADS128_ALGOair_BITS8_SPLIT1_REGS48", &run_topk<TopkAir<128, 8>>},
      {"THREADS512_ALGOair_BITS11_SPLIT1_REGS48", &run_topk<TopkAir<512, 11>>},
      {"THREADS256_ALGOshared_BITS11_SPLIT1_REGS48", &run_topk<TopkShared<256, 11>>},
      {"THREADS256_ALGOshared_BITS11_SPLIT1_REGS64", &run_topk<TopkShared<256, 11, 64>>},
      {"THREADS128_ALGOshared_BITS8_SPLIT1_REGS48", &run_topk<TopkShared<128, 8>>},
      {"THREADS512_ALGOshared_BITS11_SPLIT1_REGS48", &run_topk<TopkShared<512, 11>>},
      {"THREADS128_ALGOregs_BITS11_SPLIT1_REGS48", &run_topk<TopkRegs<128>>},
      {"THREADS256_ALGOregs_BITS11_SPLIT1_REGS48", &run_topk<TopkRegs<256>>},
      {"THREADS512_ALGOregs_BITS11_SPLIT1_REGS48", &run_topk<TopkRegs<512>>},
      {"THREADS128_ALGOsample_BITS11_SPLIT1_REGS48", &run_topk<TopkSample<128>>},
      {"THREADS256_ALGOsample_BITS11_SPLIT1_REGS48", &run_topk<TopkSample<256>>},
      {"THREADS512_ALGOsample_BITS11_SPLIT1_REGS48", &run_topk<TopkSample<512>>},
      {"THREADS128_ALGOstream_BITS11_SPLIT1_REGS48", &run_topk<TopkStream<128>>},
      {"THREADS256_ALGOstream_BITS11_SPLIT1_REGS48", &run_topk<TopkStream<256>>},
      {"THREADS512_ALGOstream_BITS11_SPLIT1_REGS48", &run_topk<TopkStream<512>>},
  };
  return runners;
}


}  // namespace

std::vector<std::string> topk_configs() { return names_of(topk_runners()); }

std::vector<kiln::CheckResult> topk_case(const std::string& config, std::int64_t rows, std::int64_t n, std::int64_t k,
                                         const std::string& mode, const std::string& input, std::uint64_t seed,
                                         const Case& c) {
  return find_runner(topk_runners(), config)(topk_problem(rows, n, k, mode, input), seed, c);
}


}  // namespace kiln_test::cuda_cases
