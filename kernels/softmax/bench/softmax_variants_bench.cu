// softmax_variants_bench: named softmax_cuda configurations launched directly (no tuned header) on
// chosen shapes, timed as the tuner times them (the staged-tile figures in kernels/softmax/README.md
// were taken before, on stream launches over at most 64 input sets).
//   softmax_variants_bench [--check-only] ROWSxCOLS:DTYPE [...] [-- CONFIG ...]
// DTYPE is fp32 or bf16; CONFIG names one of the configurations below (all of them by default).
// Per shape and configuration: one launch checked against an fp64 reference computed on the device
// (every element within 1.6e-2 relative for bf16, 1e-4 for fp32, plus 1e-6), then CUDA events
// around back-to-back launches over enough input/output pairs to exceed four times a 60 MB L2,
// at least 5 ms a repetition (at most 4000 launches), captured in a CUDA graph as the tuner does,
// median of 7 repetitions (min and max printed beside it), and the
// ratio to the copy floor at 4.2 TB/s (the H200's measured copy bandwidth).
// --check-only: no timing; each configuration is checked three times, with in and out at their
// allocation's start and both offset by 1 and by 3 elements (rows that start unaligned).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "softmax_cuda_kernels.cuh"

namespace {

#define BENCH_CHECK(x)                                                                           \
  do {                                                                                           \
    const cudaError_t status = (x);                                                              \
    if (status != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s at %s:%d: %s\n", cudaGetErrorString(status), __FILE__, __LINE__, #x); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

constexpr double kCopyBytesPerSecond = 4.2e12;

template <int THREADS_, int ROW_THREADS_, int CACHE_, int VEC_BYTES_, int STAGE_>
struct Config {
  static constexpr int THREADS = THREADS_, ROW_THREADS = ROW_THREADS_, SPLIT = 1, CACHE = CACHE_;
  static constexpr int VEC_BYTES = VEC_BYTES_, STAGE = STAGE_;
};

template <class T>
__global__ void fill(T* x, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    const float v = (h & 0xffff) / 65536.0f * 12.0f - 6.0f + static_cast<float>((i / 7) % 5);
    if constexpr (std::is_same_v<T, float>) {
      x[i] = v;
    } else {
      x[i] = __float2bfloat16_rn(v);
    }
  }
}

template <class T>
__device__ float as_float(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return __bfloat162float(v);
  }
}

// One thread a row, in fp64: counts the elements off by more than tol * reference + 1e-6.
template <class T>
__global__ void count_wrong(const T* in, const T* out, long long rows, long long cols, double tol,
                            unsigned long long* wrong) {
  for (long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<long long>(gridDim.x) * blockDim.x) {
    const T* x = in + r * cols;
    const T* y = out + r * cols;
    double m = -INFINITY;
    for (long long c = 0; c < cols; ++c) m = fmax(m, static_cast<double>(as_float(x[c])));
    double s = 0;
    for (long long c = 0; c < cols; ++c) s += exp(static_cast<double>(as_float(x[c])) - m);
    unsigned long long bad = 0;
    for (long long c = 0; c < cols; ++c) {
      const double ref = exp(static_cast<double>(as_float(x[c])) - m) / s;
      const double err = fabs(static_cast<double>(as_float(y[c])) - ref);
      if (!(err <= tol * ref + 1e-6)) ++bad;
    }
    if (bad > 0) atomicAdd(wrong, bad);
  }
}

struct Shape {
  long long rows = 0, cols = 0;
  bool bf16 = false;
};

template <class T>
class Bench {
 public:
  Bench(Shape s, bool check_only)
      : s_(s), bytes_(static_cast<size_t>(s.rows * s.cols) * sizeof(T)), check_only_(check_only) {
    // As the tuner: enough sets to exceed four times the L2 (at most 4096), so every launch reads
    // from DRAM; fewer would leave a small problem's inputs in L2 between their turns.
    const size_t wanted = static_cast<size_t>(4 * 60e6) / (2 * bytes_) + 1;
    const int sets = check_only ? 1 : static_cast<int>(std::min<size_t>(4096, std::max<size_t>(1, wanted)));
    for (int k = 0; k < sets; ++k) {
      T* a = nullptr;
      T* b = nullptr;
      BENCH_CHECK(cudaMalloc(&a, bytes_ + 64));
      BENCH_CHECK(cudaMalloc(&b, bytes_ + 64));
      fill<<<1024, 256>>>(a, s.rows * s.cols + 3, 17u + k);
      in_.push_back(a);
      out_.push_back(b);
    }
    BENCH_CHECK(cudaMalloc(&wrong_, sizeof(unsigned long long)));
    BENCH_CHECK(cudaDeviceSynchronize());
  }
  ~Bench() {
    for (T* p : in_) cudaFree(p);
    for (T* p : out_) cudaFree(p);
    cudaFree(wrong_);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Elements of out (at in + offset and out + offset) outside the tolerance after one launch, and
  // bytes written outside it.
  template <class C>
  unsigned long long wrong_after_launch(int offset) {
    T* in = in_[0] + offset;
    T* out = out_[0] + offset;
    BENCH_CHECK(cudaMemset(out_[0], 0xff, bytes_ + 64));
    BENCH_CHECK(kiln::softmax::launch<C>(in, out, s_.rows, s_.cols, nullptr));
    BENCH_CHECK(cudaMemset(wrong_, 0, sizeof(unsigned long long)));
    const unsigned grid = static_cast<unsigned>(std::min<long long>((s_.rows + 255) / 256, 65535));
    count_wrong<<<grid, 256>>>(in, out, s_.rows, s_.cols, sizeof(T) == 2 ? 1.6e-2 : 1e-4, wrong_);
    unsigned long long wrong = 0;
    BENCH_CHECK(cudaMemcpy(&wrong, wrong_, sizeof wrong, cudaMemcpyDeviceToHost));
    // The bytes before and after the matrix (the allocation has 64 to spare) must be untouched.
    unsigned char guard[64 + 3 * sizeof(T)];
    const size_t before = offset * sizeof(T), after = 64 - before;
    BENCH_CHECK(cudaMemcpy(guard, out_[0], before, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(guard + before, reinterpret_cast<unsigned char*>(out) + bytes_, after, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < before + after; ++i) wrong += guard[i] != 0xff;
    return wrong;
  }

  template <class C>
  void run(const char* name) {
    if (check_only_) {
      std::string verdict;
      for (int offset : {0, 1, 3}) {
        const unsigned long long wrong = wrong_after_launch<C>(offset);
        if (wrong != 0) verdict += " WRONG " + std::to_string(wrong) + " at offset " + std::to_string(offset);
      }
      std::printf("  %-24s %s\n", name, verdict.empty() ? "ok (offsets 0, 1, 3)" : verdict.c_str());
      return;
    }
    const unsigned long long wrong = wrong_after_launch<C>(0);

    const int sets = static_cast<int>(in_.size());
    cudaEvent_t start, stop;
    BENCH_CHECK(cudaEventCreate(&start));
    BENCH_CHECK(cudaEventCreate(&stop));
    // As the tuner times: the launches captured once into a CUDA graph, the graph replayed.
    cudaStream_t stream;
    BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto timed = [&](int launches) {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      BENCH_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int k = 0; k < launches; ++k) {
        BENCH_CHECK(kiln::softmax::launch<C>(in_[k % in_.size()], out_[k % out_.size()], s_.rows, s_.cols, stream));
      }
      BENCH_CHECK(cudaStreamEndCapture(stream, &graph));
      BENCH_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      BENCH_CHECK(cudaGraphLaunch(exec, stream));  // warm
      BENCH_CHECK(cudaEventRecord(start, stream));
      BENCH_CHECK(cudaGraphLaunch(exec, stream));
      BENCH_CHECK(cudaEventRecord(stop, stream));
      BENCH_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      BENCH_CHECK(cudaEventElapsedTime(&ms, start, stop));
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      return ms;
    };
    const float once = timed(sets) / sets;  // warm-up and calibration
    int launches = std::min(4000, std::max(sets, static_cast<int>(5.0f / std::max(once, 1e-4f))));
    launches = (launches + sets - 1) / sets * sets;
    std::vector<float> us;
    for (int rep = 0; rep < 7; ++rep) us.push_back(timed(launches) * 1000.0f / launches);
    std::sort(us.begin(), us.end());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
    const double floor_us = 2.0 * static_cast<double>(bytes_) / kCopyBytesPerSecond * 1e6;
    std::printf("  %-24s %9.2f us  (min %.2f max %.2f)  actual/floor %.2f  %s\n", name, us[3], us[0], us[6],
                us[3] / floor_us, wrong == 0 ? "ok" : ("WRONG " + std::to_string(wrong)).c_str());
  }

 private:
  Shape s_;
  size_t bytes_;
  bool check_only_;
  std::vector<T*> in_, out_;
  unsigned long long* wrong_ = nullptr;
};

// Every configuration by name: staged tiles (S1) and the direct paths they are compared with (V0:
// one element per access).
template <class T>
const std::vector<std::pair<const char*, void (*)(Bench<T>&, const char*)>>& configurations() {
  static const std::vector<std::pair<const char*, void (*)(Bench<T>&, const char*)>> all = {
      {"T128_RT1_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 1, 4, 0, 0>>(n); }},
      {"T128_RT1_C8_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 1, 8, 0, 0>>(n); }},
      {"T128_RT2_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 2, 4, 0, 0>>(n); }},
      {"T128_RT2_C8_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 2, 8, 0, 0>>(n); }},
      {"T128_RT4_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 4, 4, 0, 0>>(n); }},
      {"T128_RT4_C8_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 4, 8, 0, 0>>(n); }},
      {"T128_RT8_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 8, 4, 0, 0>>(n); }},
      {"T128_RT16_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 16, 4, 0, 0>>(n); }},
      {"T256_RT1_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 1, 4, 0, 0>>(n); }},
      {"T256_RT1_C8_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 1, 8, 0, 0>>(n); }},
      {"T256_RT2_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 2, 4, 0, 0>>(n); }},
      {"T256_RT2_C8_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 2, 8, 0, 0>>(n); }},
      {"T256_RT4_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 4, 4, 0, 0>>(n); }},
      {"T256_RT4_C8_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 4, 8, 0, 0>>(n); }},
      {"T256_RT8_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 8, 4, 0, 0>>(n); }},
      {"T256_RT16_C4_V0_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 16, 4, 0, 0>>(n); }},
      {"T128_RT1_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 1, 8, 16, 0>>(n); }},
      {"T128_RT2_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 2, 8, 16, 0>>(n); }},
      {"T128_RT4_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 4, 8, 16, 0>>(n); }},
      {"T128_RT4_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 4, 16, 16, 0>>(n); }},
      {"T128_RT8_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 8, 8, 16, 0>>(n); }},
      {"T128_RT8_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 8, 16, 16, 0>>(n); }},
      {"T128_RT16_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 16, 16, 16, 0>>(n); }},
      {"T128_RT32_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 32, 16, 16, 0>>(n); }},
      {"T128_RT32_C32_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 32, 32, 16, 0>>(n); }},
      {"T256_RT1_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 1, 8, 16, 0>>(n); }},
      {"T128_RT1_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 1, 16, 16, 0>>(n); }},
      {"T256_RT1_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 1, 16, 16, 0>>(n); }},
      {"T256_RT2_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 2, 8, 16, 0>>(n); }},
      {"T256_RT4_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 4, 8, 16, 0>>(n); }},
      {"T256_RT4_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 4, 16, 16, 0>>(n); }},
      {"T256_RT8_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 8, 8, 16, 0>>(n); }},
      {"T256_RT8_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 8, 16, 16, 0>>(n); }},
      {"T256_RT16_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 16, 16, 16, 0>>(n); }},
      {"T256_RT32_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 32, 16, 16, 0>>(n); }},
      {"T256_RT32_C32_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 32, 32, 16, 0>>(n); }},
      {"T128_RT1_C8_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<128, 1, 8, 16, 1>>(n); }},
      {"T128_RT1_C16_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<128, 1, 16, 16, 1>>(n); }},
      {"T256_RT1_C16_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<256, 1, 16, 16, 1>>(n); }},
      {"T128_RT2_C16_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<128, 2, 16, 16, 1>>(n); }},
      {"T256_RT4_C16_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<256, 4, 16, 16, 1>>(n); }},
      {"T256_RT8_C16_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<256, 8, 16, 16, 1>>(n); }},
      {"T256_RT16_C16_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<256, 16, 16, 16, 1>>(n); }},
      {"T256_RT32_C32_V16_S1", [](Bench<T>& b, const char* n) { b.template run<Config<256, 32, 32, 16, 1>>(n); }},
      {"T128_RT128_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 128, 8, 16, 0>>(n); }},
      {"T256_RT256_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 256, 16, 16, 0>>(n); }},
      {"T128_RT64_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 64, 16, 16, 0>>(n); }},
      {"T128_RT128_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 128, 16, 16, 0>>(n); }},
      {"T128_RT128_C32_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<128, 128, 32, 16, 0>>(n); }},
      {"T256_RT256_C32_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<256, 256, 32, 16, 0>>(n); }},
      {"T512_RT512_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<512, 512, 8, 16, 0>>(n); }},
      {"T512_RT512_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<512, 512, 16, 16, 0>>(n); }},
      {"T1024_RT1024_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<1024, 1024, 16, 16, 0>>(n); }},
      {"T1024_RT1024_C8_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<1024, 1024, 8, 16, 0>>(n); }},
      {"T1024_RT128_C16_V16_S0", [](Bench<T>& b, const char* n) { b.template run<Config<1024, 128, 16, 16, 0>>(n); }},
  };
  return all;
}

template <class T>
void bench_shape(Shape s, const std::vector<std::string>& chosen, bool check_only) {
  std::printf("%lld x %lld %s (copy floor %.2f us)\n", s.rows, s.cols, s.bf16 ? "bf16" : "fp32",
              2.0 * static_cast<double>(s.rows * s.cols) * sizeof(T) / kCopyBytesPerSecond * 1e6);
  Bench<T> bench(s, check_only);
  for (const auto& [name, run] : configurations<T>()) {
    if (chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end()) run(bench, name);
  }
}

int usage(const char* why) {
  std::fprintf(stderr, "softmax_variants_bench: %s\nusage: softmax_variants_bench [--check-only] ROWSxCOLS:fp32|bf16 [...] [-- CONFIG ...]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  std::vector<std::string> chosen;
  bool configs = false;
  bool check_only = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--check-only" && !configs) {
      check_only = true;
      continue;
    }
    if (arg == "--") {
      configs = true;
      continue;
    }
    if (configs) {
      const auto& known = configurations<float>();
      if (std::none_of(known.begin(), known.end(), [&](const auto& c) { return arg == c.first; })) {
        return usage(("unknown configuration '" + arg + "'").c_str());
      }
      chosen.push_back(arg);
      continue;
    }
    Shape s;
    char dtype[8] = {0};
    if (std::sscanf(argv[a], "%lldx%lld:%7s", &s.rows, &s.cols, dtype) != 3 || s.rows < 1 || s.cols < 1 ||
        (std::strcmp(dtype, "fp32") != 0 && std::strcmp(dtype, "bf16") != 0)) {
      return usage(("'" + arg + "' is not ROWSxCOLS:fp32 or ROWSxCOLS:bf16").c_str());
    }
    s.bf16 = std::strcmp(dtype, "bf16") == 0;
    shapes.push_back(s);
  }
  if (shapes.empty()) return usage("no shape");
  for (const Shape& s : shapes) {
    if (s.bf16) {
      bench_shape<__nv_bfloat16>(s, chosen, check_only);
    } else {
      bench_shape<float>(s, chosen, check_only);
    }
  }
  return 0;
}
