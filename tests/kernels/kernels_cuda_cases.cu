// The CUDA kernel cases: a few configurations of each kernel's space, compiled for sm_89 and
// sm_90a, run through their workloads the way the harness runs them.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kernels_cuda_cases.hpp"
#include "kiln/cuda_support.hpp"
#include "kiln/nbody.hpp"
#include "kiln/choice.hpp"
#include "kiln/selective_scan.hpp"
#include "nbody_cuda.cuh"
#include "nbody_tree_cuda.cuh"
#include "nbody_tree_invariants.hpp"
#include "problem_helpers.hpp"
#include "selective_scan_cuda.cuh"
#include "softmax_cuda.cuh"
#include "topk_cuda.cuh"

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

// nbody_cuda.space.json corners: the default, the most register blocking, no blocking or split,
// the widest split, and the j range split over a cluster of eight blocks (sm_90 only).
struct NbodyDefault {
  static constexpr int THREADS = 256, BODIES = 4, JSPLIT = 8, UNROLL = 4, CLUSTER = 1;
};
struct NbodyBlocked {
  static constexpr int THREADS = 512, BODIES = 8, JSPLIT = 16, UNROLL = 2, CLUSTER = 1;
};
struct NbodyPlain {
  static constexpr int THREADS = 128, BODIES = 1, JSPLIT = 1, UNROLL = 8, CLUSTER = 1;
};
struct NbodySplit {
  static constexpr int THREADS = 512, BODIES = 2, JSPLIT = 16, UNROLL = 8, CLUSTER = 1;
};
struct NbodyCluster {
  static constexpr int THREADS = 128, BODIES = 1, JSPLIT = 4, UNROLL = 8, CLUSTER = 8;
};

// selective_scan_cuda.space.json corners. ALGO chunk: 16 time lanes x 2 channels a warp, 4 warps;
// one channel a warp over 32 time lanes with two states at once in 8 warps (the shortest items,
// unpadded rows); four channels a warp over 8 time lanes of 16 items; a one-warp block of 16 items
// (two states staged at a time, so state 16 takes eight staging rounds); two states at once in two
// warps (odd state counts leave a padded state); the smallest block and chunk. ALGO chain: the
// default (16 state lanes, one state each, 4 warps, tiles of 64 steps); 4 lanes of 4 states (state
// 16 in one pass, 32 channels a block); 8 lanes of one state over 32-step tiles (state 16 in two
// passes, the other states' h in shared memory); 16 lanes of 4 states (64 states a pass, most of
// them padding at state 16) in one warp.
template <int TL, int I, int W, int S>
struct ScanConfig {
  static constexpr kiln::Choice ALGO{"chunk"};
  static constexpr int LANES = TL, ITEMS = I, STATE_LANES = 16, TILE = 64, WARPS = W, STATES = S;
};
template <int SL, int TT, int W, int S>
struct ScanChainConfig {
  static constexpr kiln::Choice ALGO{"chain"};
  static constexpr int LANES = 16, ITEMS = 8, STATE_LANES = SL, TILE = TT, WARPS = W, STATES = S;
};
using ScanDefault = ScanChainConfig<16, 64, 4, 1>;
using ScanChainWide = ScanChainConfig<4, 64, 4, 4>;
using ScanChainPasses = ScanChainConfig<8, 32, 2, 1>;
using ScanChainPadded = ScanChainConfig<16, 32, 1, 4>;
using ScanChunk = ScanConfig<16, 8, 4, 1>;
using ScanLanes = ScanConfig<32, 4, 8, 2>;
using ScanChannels = ScanConfig<8, 16, 2, 1>;
using ScanWarp = ScanConfig<32, 16, 1, 1>;
using ScanStates = ScanConfig<16, 8, 2, 2>;
using ScanSmall = ScanConfig<8, 4, 1, 2>;
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

class Stream {
 public:
  Stream() { KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Enqueues `run` on a non-blocking stream, directly or through a captured graph, and waits.
void enqueue(Mode mode, const std::function<void(cudaStream_t)>& run) {
  Stream stream;
  if (mode == Mode::stream) {
    run(stream.get());
  } else {
    cudaGraph_t graph = nullptr;
    KILN_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    run(stream.get());
    KILN_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    KILN_CUDA_CHECK(instantiated);
    const cudaError_t launched = cudaGraphLaunch(exec, stream.get());
    const cudaError_t finished = cudaStreamSynchronize(stream.get());
    cudaGraphExecDestroy(exec);
    KILN_CUDA_CHECK(launched);
    KILN_CUDA_CHECK(finished);
  }
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

// Applies a tamper to element `c.element` of a device output whose elements are `bytes` wide
// (4: fp32, 2: bf16).
void tamper(void* out, int bytes, const Case& c) {
  if (c.tamper == Tamper::none) return;
  auto* at = static_cast<unsigned char*>(out) + c.element * bytes;
  if (bytes == 4) {
    float v;
    KILN_CUDA_CHECK(cudaMemcpy(&v, at, 4, cudaMemcpyDeviceToHost));
    if (c.tamper == Tamper::poison) v = kiln::float_of_bits(kiln::poison::f32);
    if (c.tamper == Tamper::nan) v = NAN;
    if (c.tamper == Tamper::offset) v += c.amount;
    KILN_CUDA_CHECK(cudaMemcpy(at, &v, 4, cudaMemcpyHostToDevice));
  } else {
    std::uint16_t h;
    KILN_CUDA_CHECK(cudaMemcpy(&h, at, 2, cudaMemcpyDeviceToHost));
    if (c.tamper == Tamper::poison) h = kiln::poison::bf16;
    if (c.tamper == Tamper::nan) h = kiln::bf16_from_float(NAN);
    if (c.tamper == Tamper::offset) h = kiln::bf16_from_float(kiln::float_from_bf16(h) + c.amount);
    KILN_CUDA_CHECK(cudaMemcpy(at, &h, 2, cudaMemcpyHostToDevice));
  }
}

template <class Config>
std::vector<kiln::CheckResult> run_softmax(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::softmax::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.output_device(), w.is_bf16() ? 2 : 4, c);
  return w.check();
}

template <class Config>
std::vector<kiln::CheckResult> run_nbody(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::nbody::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.output_device(), 4, c);
  return w.check();
}

kiln::scan::Shape scan_shape(std::int64_t batch, std::int64_t channels, std::int64_t length, std::int64_t state,
                             std::int64_t groups, const std::string& dtype) {
  kiln::Problem p;
  p.set("batch", batch);
  p.set("channels", channels);
  p.set("length", length);
  p.set("state", state);
  p.set("groups", groups);
  p.set("dtype", dtype);
  return kiln::scan::shape_of(p);
}

kiln::scan::Options scan_options(int mask) {
  kiln::scan::Options o;
  o.z = mask & 1;
  o.D = mask & 2;
  o.delta_bias = mask & 4;
  o.softplus = mask & 8;
  o.final_state = mask & 16;
  return o;
}

using ScanRunner = std::vector<kiln::CheckResult> (*)(const kiln::scan::Shape&, const kiln::scan::Options&, std::uint64_t,
                                                       const Case&);

template <class Config>
std::vector<kiln::CheckResult> run_scan(const kiln::scan::Shape& s, const kiln::scan::Options& o, std::uint64_t seed,
                                        const Case& c) {
  kiln::scan::CudaWorkload w(s, seed, o);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t stream) { w.run<Config>(stream); });
  tamper(w.output_y(), s.dtype == kiln::ScanDType::fp32 ? 4 : 2, c);
  return w.check();
}

const std::map<std::string, ScanRunner>& scan_runners() {
  static const std::map<std::string, ScanRunner> runners{
      {"ALGOchain_LANES16_ITEMS8_STATE_LANES16_TILE64_WARPS4_STATES1", &run_scan<ScanDefault>},
      {"ALGOchain_LANES16_ITEMS8_STATE_LANES4_TILE64_WARPS4_STATES4", &run_scan<ScanChainWide>},
      {"ALGOchain_LANES16_ITEMS8_STATE_LANES8_TILE32_WARPS2_STATES1", &run_scan<ScanChainPasses>},
      {"ALGOchain_LANES16_ITEMS8_STATE_LANES16_TILE32_WARPS1_STATES4", &run_scan<ScanChainPadded>},
      {"ALGOchunk_LANES16_ITEMS8_STATE_LANES16_TILE64_WARPS4_STATES1", &run_scan<ScanChunk>},
      {"ALGOchunk_LANES32_ITEMS4_STATE_LANES16_TILE64_WARPS8_STATES2", &run_scan<ScanLanes>},
      {"ALGOchunk_LANES8_ITEMS16_STATE_LANES16_TILE64_WARPS2_STATES1", &run_scan<ScanChannels>},
      {"ALGOchunk_LANES32_ITEMS16_STATE_LANES16_TILE64_WARPS1_STATES1", &run_scan<ScanWarp>},
      {"ALGOchunk_LANES16_ITEMS8_STATE_LANES16_TILE64_WARPS2_STATES2", &run_scan<ScanStates>},
      {"ALGOchunk_LANES8_ITEMS4_STATE_LANES16_TILE64_WARPS1_STATES2", &run_scan<ScanSmall>},
  };
  return runners;
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

using Runner = std::vector<kiln::CheckResult> (*)(const kiln::Problem&, std::uint64_t, const Case&);
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

const std::map<std::string, Runner>& nbody_runners() {
  static const std::map<std::string, Runner> runners{
      {"THREADS256_BODIES4_JSPLIT8_UNROLL4_CLUSTER1", &run_nbody<NbodyDefault>},
      {"THREADS512_BODIES8_JSPLIT16_UNROLL2_CLUSTER1", &run_nbody<NbodyBlocked>},
      {"THREADS128_BODIES1_JSPLIT1_UNROLL8_CLUSTER1", &run_nbody<NbodyPlain>},
      {"THREADS512_BODIES2_JSPLIT16_UNROLL8_CLUSTER1", &run_nbody<NbodySplit>},
      {"THREADS128_BODIES1_JSPLIT4_UNROLL8_CLUSTER8", &run_nbody<NbodyCluster>},
  };
  return runners;
}

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

template <class Map>
std::vector<std::string> names_of(const Map& m) {
  std::vector<std::string> names;
  for (const auto& [name, runner] : m) names.push_back(name);
  return names;
}

template <class Map>
typename Map::mapped_type find_runner(const Map& m, const std::string& name) {
  const auto it = m.find(name);
  if (it == m.end()) throw std::invalid_argument("no CUDA test config named " + name);
  return it->second;
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

// Configs that split work over a thread-block cluster run only where the device launches them.
static std::vector<std::string> runnable(const std::vector<std::string>& names, const std::string& unclustered) {
  int device = 0, clusters = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
  std::vector<std::string> kept;
  for (const std::string& name : names) {
    if (clusters || name.find(unclustered) != std::string::npos) kept.push_back(name);
  }
  return kept;
}

std::vector<std::string> softmax_configs() { return runnable(names_of(softmax_runners()), "_SPLIT1_"); }
std::vector<std::string> nbody_configs() { return runnable(names_of(nbody_runners()), "_CLUSTER1"); }

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

std::vector<std::string> selective_scan_configs() { return names_of(scan_runners()); }

std::vector<kiln::CheckResult> selective_scan_case(const std::string& config, std::int64_t batch, std::int64_t channels,
                                                   std::int64_t length, std::int64_t state, std::int64_t groups,
                                                   const std::string& dtype, int options, std::uint64_t seed,
                                                   const Case& c) {
  return find_runner(scan_runners(), config)(scan_shape(batch, channels, length, state, groups, dtype),
                                             scan_options(options), seed, c);
}

std::int64_t selective_scan_input_mismatches(std::int64_t batch, std::int64_t channels, std::int64_t length,
                                             std::int64_t state, std::int64_t groups, const std::string& dtype,
                                             int options, std::uint64_t seed, std::int64_t& compared) {
  using kiln::scan::Tensor;
  const kiln::scan::Shape s = scan_shape(batch, channels, length, state, groups, dtype);
  const kiln::scan::Options o = scan_options(options);
  kiln::scan::CudaWorkload w(s, seed, o);
  std::int64_t mismatches = 0;
  compared = 0;
  for (Tensor t : {Tensor::u, Tensor::delta, Tensor::z, Tensor::B, Tensor::C}) {
    if (t == Tensor::z && !o.z) continue;
    const std::int64_t n = t == Tensor::B || t == Tensor::C ? s.bc_elements() : s.elements();
    if (s.dtype == kiln::ScanDType::fp32) {
      std::vector<float> got(static_cast<std::size_t>(n));
      KILN_CUDA_CHECK(cudaMemcpy(got.data(), w.input_row(t), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::int64_t i = 0; i < n; ++i) {
        mismatches += kiln::bits_of(got[i]) != kiln::bits_of(kiln::scan::input_value(seed, t, i, s, o));
      }
    } else {
      std::vector<std::uint16_t> got(static_cast<std::size_t>(n));
      KILN_CUDA_CHECK(cudaMemcpy(got.data(), w.input_row(t), got.size() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
      for (std::int64_t i = 0; i < n; ++i) {
        const float want = kiln::scan::input_value(seed, t, i, s, o);
        mismatches += got[i] != (s.dtype == kiln::ScanDType::bf16 ? kiln::bf16_from_float(want) : kiln::f16_from_float(want));
      }
    }
    compared += n;
  }
  return mismatches;
}

namespace {

// Device copies of a problem's inputs and outputs, drawn as the workloads draw them.
struct ScanTensors {
  kiln::scan::Shape s;
  kiln::scan::Options o;
  std::size_t io;
  kiln::cuda::DeviceBuffer<unsigned char> u, delta, z, B, C, y;
  kiln::cuda::DeviceBuffer<float> A, D, bias, h;

  ScanTensors(const kiln::scan::Shape& shape, std::uint64_t seed)
      : s(shape),
        io(shape.dtype == kiln::ScanDType::fp32 ? 4 : 2),
        u(bytes(s.elements())),
        delta(bytes(s.elements())),
        z(bytes(s.elements())),
        B(bytes(s.bc_elements())),
        C(bytes(s.bc_elements())),
        y(bytes(s.elements())),
        A(static_cast<std::size_t>(s.channels * s.state)),
        D(static_cast<std::size_t>(s.channels)),
        bias(static_cast<std::size_t>(s.channels)),
        h(static_cast<std::size_t>(s.rows() * s.state)) {
    using kiln::scan::Tensor;
    put(u.get(), Tensor::u, s.elements(), true, seed);
    put(delta.get(), Tensor::delta, s.elements(), true, seed);
    put(z.get(), Tensor::z, s.elements(), true, seed);
    put(B.get(), Tensor::B, s.bc_elements(), true, seed);
    put(C.get(), Tensor::C, s.bc_elements(), true, seed);
    put(A.get(), Tensor::A, s.channels * s.state, false, seed);
    put(D.get(), Tensor::D, s.channels, false, seed);
    put(bias.get(), Tensor::delta_bias, s.channels, false, seed);
  }

  std::size_t bytes(std::int64_t elements) const { return static_cast<std::size_t>(elements) * io + 16; }

  void put(void* dst, kiln::scan::Tensor t, std::int64_t count, bool is_io, std::uint64_t seed) {
    std::vector<unsigned char> host(static_cast<std::size_t>(count) * (is_io ? io : 4));
    for (std::int64_t i = 0; i < count; ++i) {
      const float v = kiln::scan::input_value(seed, t, i, s, o);
      if (!is_io || io == 4) {
        std::memcpy(host.data() + i * 4, &v, 4);
      } else {
        const std::uint16_t b = s.dtype == kiln::ScanDType::bf16 ? kiln::bf16_from_float(v) : kiln::f16_from_float(v);
        std::memcpy(host.data() + i * 2, &b, 2);
      }
    }
    KILN_CUDA_CHECK(cudaMemcpy(dst, host.data(), host.size(), cudaMemcpyHostToDevice));
  }

  kiln::SelectiveScanParams params() const {
    kiln::SelectiveScanParams p;
    p.u = u.get();
    p.delta = delta.get();
    p.A = A.get();
    p.B = B.get();
    p.C = C.get();
    p.D = D.get();
    p.z = z.get();
    p.delta_bias = bias.get();
    p.y = y.get();
    p.final_state = h.get();
    p.dtype = s.dtype;
    p.batch = s.batch;
    p.channels = s.channels;
    p.length = s.length;
    p.state = s.state;
    p.groups = s.groups;
    p.softplus = o.softplus;
    return p;
  }
};

// Bad arguments to the public function: what is spoiled, and what the message must contain.
struct ScanBadArgument {
  const char* expected;
  void (*spoil)(kiln::SelectiveScanParams&);
};
const char* shifted(const void* p, int bytes) { return static_cast<const char*>(p) + bytes; }
const ScanBadArgument kScanBadArguments[] = {
    {"batch must be >= 0", [](kiln::SelectiveScanParams& p) { p.batch = -1; }},
    {"channels must be >= 0", [](kiln::SelectiveScanParams& p) { p.channels = -1; }},
    {"length must be >= 0", [](kiln::SelectiveScanParams& p) { p.length = -5; }},
    {"state must be 1 .. 256", [](kiln::SelectiveScanParams& p) { p.state = 0; }},
    {"state must be 1 .. 256", [](kiln::SelectiveScanParams& p) { p.state = 300; }},
    {"groups must be >= 1", [](kiln::SelectiveScanParams& p) { p.groups = 0; }},
    {"must divide channels", [](kiln::SelectiveScanParams& p) { p.groups = 3; }},
    {"batch x channels must be below 2^31", [](kiln::SelectiveScanParams& p) { p.batch = std::int64_t{1} << 31; }},
    {"u is null", [](kiln::SelectiveScanParams& p) { p.u = nullptr; }},
    {"delta is null", [](kiln::SelectiveScanParams& p) { p.delta = nullptr; }},
    {"A is null", [](kiln::SelectiveScanParams& p) { p.A = nullptr; }},
    {"B is null", [](kiln::SelectiveScanParams& p) { p.B = nullptr; }},
    {"C is null", [](kiln::SelectiveScanParams& p) { p.C = nullptr; }},
    {"y is null", [](kiln::SelectiveScanParams& p) { p.y = nullptr; }},
    {"u must be aligned", [](kiln::SelectiveScanParams& p) { p.u = shifted(p.u, 1); }},
    {"B must be aligned", [](kiln::SelectiveScanParams& p) { p.B = shifted(p.B, 1); }},
    {"z must be aligned", [](kiln::SelectiveScanParams& p) { p.z = shifted(p.z, 1); }},
    {"y must be aligned", [](kiln::SelectiveScanParams& p) { p.y = const_cast<char*>(shifted(p.y, 1)); }},
    {"A must be aligned", [](kiln::SelectiveScanParams& p) { p.A = reinterpret_cast<const float*>(shifted(p.A, 2)); }},
    {"final_state must be aligned",
     [](kiln::SelectiveScanParams& p) { p.final_state = reinterpret_cast<float*>(const_cast<char*>(shifted(p.final_state, 2))); }},
};

}  // namespace

std::vector<kiln::CheckResult> selective_scan_api_case(std::int64_t batch, std::int64_t channels, std::int64_t length,
                                                       std::int64_t state, std::int64_t groups, const std::string& dtype,
                                                       std::uint64_t seed) {
  ScanTensors t(scan_shape(batch, channels, length, state, groups, dtype), seed);
  const std::int64_t n = t.s.elements();
  if (t.io == 4) {
    kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(t.y.get()), n, kiln::poison::f32);
  } else {
    kiln::cuda::fill(reinterpret_cast<std::uint16_t*>(t.y.get()), n,
                     t.s.dtype == kiln::ScanDType::bf16 ? kiln::poison::bf16 : kiln::poison::f16);
  }
  kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(t.h.get()), t.s.rows() * t.s.state, kiln::poison::f32);
  enqueue(Mode::stream, [&](cudaStream_t stream) { kiln::cuda::selective_scan(t.params(), stream); });
  std::vector<float> h(static_cast<std::size_t>(t.s.rows() * t.s.state));
  KILN_CUDA_CHECK(cudaMemcpy(h.data(), t.h.get(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<unsigned char> y(static_cast<std::size_t>(n) * t.io);
  KILN_CUDA_CHECK(cudaMemcpy(y.data(), t.y.get(), y.size(), cudaMemcpyDeviceToHost));
  if (t.io == 4) {
    return kiln::scan::compare(t.s, t.o, seed, [&](std::int64_t i) {
      float v;
      std::memcpy(&v, y.data() + i * 4, 4);
      return v;
    }, h.data());
  }
  return kiln::scan::compare(t.s, t.o, seed, [&](std::int64_t i) {
    std::uint16_t v;
    std::memcpy(&v, y.data() + i * 2, 2);
    return v;
  }, h.data());
}

std::string selective_scan_api_error(int which, int& count, std::string& expected) {
  count = static_cast<int>(std::size(kScanBadArguments));
  const ScanBadArgument& bad = kScanBadArguments[which];
  expected = bad.expected;
  ScanTensors t(scan_shape(1, 4, 64, 16, 2, "bf16"), 3);
  kiln::SelectiveScanParams p = t.params();
  bad.spoil(p);
  try {
    enqueue(Mode::stream, [&](cudaStream_t stream) { kiln::cuda::selective_scan(p, stream); });
  } catch (const kiln::SelectiveScanError& e) {
    return e.what();
  }
  return "";
}

std::vector<kiln::CheckResult> nbody_case(const std::string& config, std::int64_t n, std::uint64_t seed,
                                          const Case& c) {
  return find_runner(nbody_runners(), config)(nbody_problem(n), seed, c);
}

std::vector<std::string> topk_configs() { return names_of(topk_runners()); }

std::vector<kiln::CheckResult> topk_case(const std::string& config, std::int64_t rows, std::int64_t n, std::int64_t k,
                                         const std::string& mode, const std::string& input, std::uint64_t seed,
                                         const Case& c) {
  return find_runner(topk_runners(), config)(topk_problem(rows, n, k, mode, input), seed, c);
}

namespace {

// nbody_tree_cuda_*.space.json corners: the e2 and e3 defaults, the monopole, the per-body walk,
// the smallest and the biggest leaves, and all-pairs; each meets its tolerance with a margin of at
// least 1.7 over n from 37 to 16384 on both distributions: the per-body walks in the CPU walk, the
// warp walks in its host model (nbody_tree_group_walk.hpp, margins 2.4 to 4.4).
// The kernels do not read TOL_DIGITS: a config's tolerance is in its name.
template <bool kTree, bool kWarp, int kThreads, int kTheta, int kLeaf, int kQuad>
struct TreeConfig {
  static constexpr kiln::Choice METHOD{kTree ? "tree" : "allpairs"};
  static constexpr kiln::Choice WALK{kWarp ? "warp" : "body"};
  static constexpr int THREADS = kThreads, THETA = kTheta, LEAF = kLeaf, QUAD = kQuad;
};

template <class Config>
TreeCaseResult run_tree(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::nbody::TreeCudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  TreeCaseResult r;
  const std::int64_t n = p.i("n");
  if (Config::METHOD == "tree" && n >= 2) {
    const kiln::nbody::TreeDownload t = w.download_tree();
    r.invariants = kiln::nbody::tree::invariants(t.codes, t.sorted, t.links, t.moments, n,
                                                 100.0f / static_cast<float>(Config::THETA));
  }
  tamper(w.output_device(), 4, c);
  r.check = w.check().at(0);
  return r;
}

using TreeRunner = TreeCaseResult (*)(const kiln::Problem&, std::uint64_t, const Case&);

const std::map<std::string, TreeRunner>& tree_runners() {
  static const std::map<std::string, TreeRunner> runners{
      {"e2_METHODtree_WALKwarp_THREADS128_THETA90_LEAF16_QUAD1", &run_tree<TreeConfig<true, true, 128, 90, 16, 1>>},
      {"e2_METHODtree_WALKwarp_THREADS256_THETA60_LEAF32_QUAD0", &run_tree<TreeConfig<true, true, 256, 60, 32, 0>>},
      {"e3_METHODtree_WALKwarp_THREADS128_THETA50_LEAF16_QUAD1", &run_tree<TreeConfig<true, true, 128, 50, 16, 1>>},
      {"e3_METHODtree_WALKbody_THREADS256_THETA30_LEAF8_QUAD1", &run_tree<TreeConfig<true, false, 256, 30, 8, 1>>},
      {"e3_METHODtree_WALKbody_THREADS128_THETA30_LEAF64_QUAD0", &run_tree<TreeConfig<true, false, 128, 30, 64, 0>>},
      {"e4_METHODtree_WALKwarp_THREADS256_THETA20_LEAF8_QUAD1", &run_tree<TreeConfig<true, true, 256, 20, 8, 1>>},
      {"e4_METHODallpairs_WALKwarp_THREADS128_THETA30_LEAF16_QUAD1",
       &run_tree<TreeConfig<false, true, 128, 30, 16, 1>>},
  };
  return runners;
}

kiln::Problem tree_problem(std::int64_t n, const std::string& bodies) {
  kiln::Problem p;
  p.set("n", n);
  p.set("bodies", bodies);
  return p;
}

}  // namespace

std::vector<std::string> nbody_tree_configs() { return names_of(tree_runners()); }

double nbody_tree_tolerance(const std::string& config) {
  find_runner(tree_runners(), config);
  return std::pow(10.0, -(config.at(1) - '0'));
}

TreeCaseResult nbody_tree_case(const std::string& config, std::int64_t n, const std::string& bodies,
                               std::uint64_t seed, const Case& c) {
  return find_runner(tree_runners(), config)(tree_problem(n, bodies), seed, c);
}

kiln::CheckResult nbody_tree_api_case(std::int64_t n, const std::string& bodies, double tolerance,
                                      std::uint64_t seed) {
  const std::vector<float> host = kiln::nbody::make_bodies(kiln::nbody::bodies_kind_of(tree_problem(n, bodies)), n, seed);
  kiln::cuda::DeviceBuffer<float> d_bodies(host), d_acc(static_cast<std::size_t>(3 * n));
  const std::size_t bytes = kiln::cuda::nbody_workspace_bytes(n);
  kiln::cuda::DeviceBuffer<unsigned char> workspace(bytes);
  d_acc.upload(std::vector<float>(d_acc.size(), kiln::float_of_bits(kiln::poison::f32)));
  enqueue(Mode::stream, [&](cudaStream_t s) {
    KILN_CUDA_CHECK(kiln::cuda::nbody_accelerations(reinterpret_cast<const float4*>(d_bodies.get()), d_acc.get(), n,
                                                    tolerance, workspace.get(), bytes, s));
  });
  const std::vector<float> acc = d_acc.download();
  return kiln::nbody::compare_tree(acc.data(), host.data(), n,
                                   kiln::nbody::bodies_to_compare(n, seed, kiln::nbody::kTreeSampleBodies));
}

namespace {

struct TreeBadArgument {
  const char* expected;
  // Spoils the arguments of a good call (n = 1000 bodies, tolerance 1e-3, a big enough workspace).
  void (*spoil)(const float4*& bodies, float*& acc, std::int64_t& n, double& tolerance, void*& workspace,
                std::size_t& bytes);
  bool workspace_function = false;  // calls nbody_workspace_bytes(n) instead
};

const TreeBadArgument kTreeBadArguments[] = {
    {"kiln::cuda::nbody_accelerations: n must be in 0..1073741824, got -5",
     [](const float4*&, float*&, std::int64_t& n, double&, void*&, std::size_t&) { n = -5; }},
    {"kiln::cuda::nbody_accelerations: bodies is null with n = 1000",
     [](const float4*& b, float*&, std::int64_t&, double&, void*&, std::size_t&) { b = nullptr; }},
    {"kiln::cuda::nbody_accelerations: acc is null with n = 1000",
     [](const float4*&, float*& a, std::int64_t&, double&, void*&, std::size_t&) { a = nullptr; }},
    {"kiln::cuda::nbody_accelerations: bodies must be 16-byte aligned",
     [](const float4*& b, float*&, std::int64_t&, double&, void*&, std::size_t&) {
       b = reinterpret_cast<const float4*>(reinterpret_cast<const char*>(b) + 4);
     }},
    {"kiln::cuda::nbody_accelerations: acc must be 4-byte aligned",
     [](const float4*&, float*& a, std::int64_t&, double&, void*&, std::size_t&) {
       a = reinterpret_cast<float*>(reinterpret_cast<char*>(a) + 2);
     }},
    {"kiln::cuda::nbody_accelerations: tolerance must be a positive finite number, got 0",
     [](const float4*&, float*&, std::int64_t&, double& t, void*&, std::size_t&) { t = 0.0; }},
    {"kiln::cuda::nbody_accelerations: tolerance must be a positive finite number, got -0.01",
     [](const float4*&, float*&, std::int64_t&, double& t, void*&, std::size_t&) { t = -0.01; }},
    {"kiln::cuda::nbody_accelerations: tolerance must be a positive finite number, got nan",
     [](const float4*&, float*&, std::int64_t&, double& t, void*&, std::size_t&) { t = NAN; }},
    {"kiln::cuda::nbody_accelerations: workspace must hold",
     [](const float4*&, float*&, std::int64_t&, double&, void*&, std::size_t& bytes) { bytes -= 1; }},
    {"kiln::cuda::nbody_accelerations: workspace must hold",
     [](const float4*&, float*&, std::int64_t&, double&, void*& w, std::size_t&) { w = nullptr; }},
    {"kiln::cuda::nbody_accelerations: workspace must be 256-byte aligned",
     [](const float4*&, float*&, std::int64_t&, double&, void*& w, std::size_t&) {
       w = static_cast<char*>(w) + 16;
     }},
    {"kiln::cuda::nbody_workspace_bytes: n must be in 0..1073741824, got -1",
     [](const float4*&, float*&, std::int64_t& n, double&, void*&, std::size_t&) { n = -1; }, true},
};

}  // namespace

std::string nbody_tree_api_error(int which, int& count, std::string& expected, bool& untouched) {
  count = static_cast<int>(std::size(kTreeBadArguments));
  const TreeBadArgument& bad = kTreeBadArguments[which];
  expected = bad.expected;
  const std::int64_t good_n = 1000;
  const std::vector<float> host = kiln::nbody::make_bodies(kiln::nbody::Bodies::cube, good_n, 2);
  kiln::cuda::DeviceBuffer<float> d_bodies(host), d_acc(static_cast<std::size_t>(3 * good_n + 1));
  const float sentinel = 7.0f;
  d_acc.upload(std::vector<float>(d_acc.size(), sentinel));
  std::size_t bytes = kiln::cuda::nbody_workspace_bytes(good_n);
  kiln::cuda::DeviceBuffer<unsigned char> workspace(bytes + 256);
  const float4* bodies = reinterpret_cast<const float4*>(d_bodies.get());
  float* acc = d_acc.get();
  std::int64_t n = good_n;
  double tolerance = 1e-3;
  void* w = workspace.get();
  bad.spoil(bodies, acc, n, tolerance, w, bytes);
  std::string what;
  try {
    if (bad.workspace_function) {
      kiln::cuda::nbody_workspace_bytes(n);
    } else {
      enqueue(Mode::stream, [&](cudaStream_t s) {
        KILN_CUDA_CHECK(kiln::cuda::nbody_accelerations(bodies, acc, n, tolerance, w, bytes, s));
      });
    }
  } catch (const kiln::NbodyError& e) {
    what = e.what();
  }
  untouched = true;
  for (float a : d_acc.download()) untouched = untouched && a == sentinel;
  return what;
}

}  // namespace kiln_test::cuda_cases
