// The softmax CUDA cases (kernels_cuda_cases.hpp): a few configurations of softmax_cuda's space,
// compiled for sm_89 and sm_90a, run through their workload as the harness runs them.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels_cuda_support.cuh"
#include "softmax_cuda.cuh"

namespace kiln_test::cuda_cases {
namespace {

// softmax_cuda.space.json corners: block per row (the default), warp per row with 8-byte
// accesses, four rows per block with a 1024-element cache, the widest block cache, four lanes per
// row (sub-warp rows), four lanes a row with one element per access, one lane a row with 16-byte
// accesses, a row split over a cluster of four
// blocks (sm_90 only; its wide rows stream over the cluster), and rows staged through shared
// memory by two lanes and by two warps a row.
struct SoftmaxBlockRow {
  static constexpr int THREADS = 256, ROW_THREADS = 256, SPLIT = 1, CACHE = 32, VEC_BYTES = 16, STAGE = 0;
};
struct SoftmaxWarpRow {
  static constexpr int THREADS = 128, ROW_THREADS = 32, SPLIT = 1, CACHE = 32, VEC_BYTES = 8, STAGE = 0;
};
struct SoftmaxFourRows {
  static constexpr int THREADS = 512, ROW_THREADS = 128, SPLIT = 1, CACHE = 8, VEC_BYTES = 16, STAGE = 0;
};
struct SoftmaxWidest {
  static constexpr int THREADS = 1024, ROW_THREADS = 1024, SPLIT = 1, CACHE = 16, VEC_BYTES = 16, STAGE = 0;
};
struct SoftmaxLanes {
  static constexpr int THREADS = 128, ROW_THREADS = 4, SPLIT = 1, CACHE = 8, VEC_BYTES = 8, STAGE = 0;
};
struct SoftmaxLanesElements {
  static constexpr int THREADS = 256, ROW_THREADS = 4, SPLIT = 1, CACHE = 8, VEC_BYTES = 0, STAGE = 0;
};
struct SoftmaxOneLane {
  static constexpr int THREADS = 128, ROW_THREADS = 1, SPLIT = 1, CACHE = 8, VEC_BYTES = 16, STAGE = 0;
};
struct SoftmaxCluster {
  static constexpr int THREADS = 512, ROW_THREADS = 512, SPLIT = 4, CACHE = 16, VEC_BYTES = 16, STAGE = 0;
};
struct SoftmaxStagedLanes {
  static constexpr int THREADS = 128, ROW_THREADS = 2, SPLIT = 1, CACHE = 16, VEC_BYTES = 16, STAGE = 1;
};
struct SoftmaxStagedBlock {
  static constexpr int THREADS = 256, ROW_THREADS = 64, SPLIT = 1, CACHE = 32, VEC_BYTES = 16, STAGE = 1;
};

template <class Config>
std::vector<kiln::CheckResult> run_softmax(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::softmax::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.output_device(), w.is_bf16() ? 2 : 4, c);
  return w.check();
}


// Elem: the host element (float, or std::uint16_t bf16 bits); DevT: the kernel's element type.
// in and out start in_shift and out_shift elements into their allocations; out has one element
// more after the matrix, and every element out of the matrix must keep its poison (guards_intact).
// With `huge`, the rows' offsets take turns among magnitudes a softmax meets in masked inputs
// (a row filled with about the lowest float, -1e10, 1e9, -1e6) instead of the usual +-16.
template <class Config, class Elem, class DevT>
kiln::CheckResult run_softmax_phase(const kiln::softmax::Shape& s, std::uint64_t seed, int in_shift, int out_shift,
                                    bool* guards_intact, bool huge) {
  const auto count = static_cast<std::size_t>(s.rows * s.cols);
  kiln::Rng rng(seed);
  std::vector<Elem> in_host(count + in_shift);  // elements before in_shift are the offset
  constexpr float kHugeOffsets[] = {-3.0e38f, -1.0e10f, 1.0e9f, -1.0e6f};
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const float usual = rng.uniform(kiln::softmax::kRowOffsetLo, kiln::softmax::kRowOffsetHi);
    const float offset = huge ? kHugeOffsets[r % 4] : usual;
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const float v = offset + rng.uniform(kiln::softmax::kLogitLo, kiln::softmax::kLogitHi);
      if constexpr (std::is_same_v<Elem, float>) {
        in_host[in_shift + r * s.cols + c] = v;
      } else {
        in_host[in_shift + r * s.cols + c] = kiln::bf16_from_float(v);
      }
    }
  }
  kiln::cuda::DeviceBuffer<Elem> in(in_host);
  kiln::cuda::DeviceBuffer<Elem> out(count + out_shift + 1);
  if constexpr (std::is_same_v<Elem, float>) {
    out.fill(kiln::float_of_bits(kiln::poison::f32));
  } else {
    out.fill(kiln::poison::bf16);
  }
  enqueue(Mode::stream, [&](cudaStream_t stream) {
    KILN_CUDA_CHECK(kiln::softmax::launch<Config>(reinterpret_cast<const DevT*>(in.get()) + in_shift,
                                                  reinterpret_cast<DevT*>(out.get()) + out_shift, s.rows, s.cols, stream));
  });
  const std::vector<Elem> out_host = out.download();
  if (guards_intact != nullptr) {
    auto poisoned = [](Elem e) {
      if constexpr (std::is_same_v<Elem, float>) {
        return kiln::bits_of(e) == kiln::poison::f32;
      } else {
        return e == kiln::poison::bf16;
      }
    };
    *guards_intact = poisoned(out_host[out_shift + count]);
    for (int i = 0; i < out_shift; ++i) *guards_intact = *guards_intact && poisoned(out_host[i]);
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(s.rows));
  for (std::int64_t r = 0; r < s.rows; ++r) all[r] = r;
  return kiln::softmax::compare_rows(out_host.data() + out_shift, s, all, [&](std::int64_t r, float* x) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const Elem e = in_host[in_shift + r * s.cols + c];
      if constexpr (std::is_same_v<Elem, float>) {
        x[c] = e;
      } else {
        x[c] = kiln::float_from_bf16(e);
      }
    }
  });
}

template <class Config>
kiln::CheckResult run_softmax_phase_any(const kiln::Problem& p, std::uint64_t seed, int in_shift, int out_shift,
                                        bool* guards_intact, bool huge) {
  const kiln::softmax::Shape s = kiln::softmax::shape_of(p);
  if (s.bf16) return run_softmax_phase<Config, std::uint16_t, __nv_bfloat16>(s, seed, in_shift, out_shift, guards_intact, huge);
  return run_softmax_phase<Config, float, float>(s, seed, in_shift, out_shift, guards_intact, huge);
}

using PhaseRunner = kiln::CheckResult (*)(const kiln::Problem&, std::uint64_t, int, int, bool*, bool);

struct SoftmaxRunners {
  Runner workload;
  PhaseRunner phase;
};

template <class Config>
SoftmaxRunners softmax_runners_for() {
  return {&run_softmax<Config>, &run_softmax_phase_any<Config>};
}

const std::map<std::string, SoftmaxRunners>& softmax_runners() {
  static const std::map<std::string, SoftmaxRunners> runners{
      {"THREADS256_ROW_THREADS256_SPLIT1_CACHE32_VEC_BYTES16_STAGE0", softmax_runners_for<SoftmaxBlockRow>()},
      {"THREADS128_ROW_THREADS32_SPLIT1_CACHE32_VEC_BYTES8_STAGE0", softmax_runners_for<SoftmaxWarpRow>()},
      {"THREADS512_ROW_THREADS128_SPLIT1_CACHE8_VEC_BYTES16_STAGE0", softmax_runners_for<SoftmaxFourRows>()},
      {"THREADS1024_ROW_THREADS1024_SPLIT1_CACHE16_VEC_BYTES16_STAGE0", softmax_runners_for<SoftmaxWidest>()},
      {"THREADS128_ROW_THREADS4_SPLIT1_CACHE8_VEC_BYTES8_STAGE0", softmax_runners_for<SoftmaxLanes>()},
      {"THREADS256_ROW_THREADS4_SPLIT1_CACHE8_VEC_BYTES0_STAGE0", softmax_runners_for<SoftmaxLanesElements>()},
      {"THREADS128_ROW_THREADS1_SPLIT1_CACHE8_VEC_BYTES16_STAGE0", softmax_runners_for<SoftmaxOneLane>()},
      {"THREADS512_ROW_THREADS512_SPLIT4_CACHE16_VEC_BYTES16_STAGE0", softmax_runners_for<SoftmaxCluster>()},
      {"THREADS128_ROW_THREADS2_SPLIT1_CACHE16_VEC_BYTES16_STAGE1", softmax_runners_for<SoftmaxStagedLanes>()},
      {"THREADS256_ROW_THREADS64_SPLIT1_CACHE32_VEC_BYTES16_STAGE1", softmax_runners_for<SoftmaxStagedBlock>()},
  };
  return runners;
}

}  // namespace

bool device_available(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    return false;
  }
  if (count == 0) {
    why = "cudaGetDeviceCount reported 0 devices";
    return false;
  }
  return true;
}


std::vector<std::string> softmax_configs() { return runnable(names_of(softmax_runners()), "_SPLIT1_"); }

std::vector<kiln::CheckResult> softmax_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                            const std::string& dtype, std::uint64_t seed, const Case& c) {
  return find_runner(softmax_runners(), config).workload(softmax_problem(rows, cols, dtype), seed, c);
}

kiln::CheckResult softmax_phase_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                     const std::string& dtype, std::uint64_t seed) {
  return find_runner(softmax_runners(), config).phase(softmax_problem(rows, cols, dtype), seed, 1, 2, nullptr, false);
}

kiln::CheckResult softmax_shifted_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                       const std::string& dtype, std::uint64_t seed, bool* guards_intact) {
  return find_runner(softmax_runners(), config).phase(softmax_problem(rows, cols, dtype), seed, 1, 1, guards_intact, false);
}

kiln::CheckResult softmax_huge_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                    const std::string& dtype, std::uint64_t seed) {
  return find_runner(softmax_runners(), config).phase(softmax_problem(rows, cols, dtype), seed, 0, 0, nullptr, true);
}


}  // namespace kiln_test::cuda_cases
