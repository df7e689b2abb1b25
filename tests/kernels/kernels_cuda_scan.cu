// The selective scan CUDA cases (kernels_cuda_cases.hpp): a few configurations of
// selective_scan_cuda's space (both algorithms), the public function and its bad arguments.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels_cuda_support.cuh"
#include "kiln/choice.hpp"
#include "kiln/selective_scan.hpp"
#include "selective_scan_cuda.cuh"

namespace kiln_test::cuda_cases {
namespace {

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


}  // namespace

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


}  // namespace kiln_test::cuda_cases
