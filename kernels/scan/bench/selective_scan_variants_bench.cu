// selective_scan_variants_bench: named selective_scan_cuda configurations launched directly (no
// tuned header) on chosen shapes; the method of the kernel figures in kernels/scan/README.md.
//   selective_scan_variants_bench [BxDxL[xNxG]:DTYPE ...] [-- CONFIG ...]
// Shapes default to the issue's 1x5120x8192:bf16 (state N 16, one group G unless given; with z,
// D, delta_bias, softplus and the final state, Mamba's usual call). CONFIG names configurations of the space as
// printed (all of them by default). Per shape and configuration: one launch checked against a
// sequential fp64 reference computed on the device for 64 rows (max |error| / max |y| at most
// 1e-2 for bf16 and fp16, 1e-4 for fp32), then CUDA events around back-to-back launches, at least
// 20 ms a repetition, median of 7 repetitions (min and max printed beside it); the inputs of the
// default shape are 336 MB, several times the 60 MB L2. The floor is the largest of bytes at 4.1
// TB/s, B D L (N + 3) ex2 at 4.16 T/s and 6 B D L N FLOPs at 66.9 TFLOP/s (the H200's rates).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/choice.hpp"
#include "kiln/counter_random.hpp"
#include "selective_scan_cuda_kernels.cuh"

namespace {

#define BENCH_CHECK(x)                                                                             \
  do {                                                                                             \
    const cudaError_t status = (x);                                                                \
    if (status != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s at %s:%d: %s\n", cudaGetErrorString(status), __FILE__, __LINE__, #x); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

constexpr int kMaxState = 256;
constexpr int kCheckRows = 64;

// A configuration of the space: ALGO chunk with LANES, ITEMS, WARPS, STATES; ALGO chain with
// STATE_LANES, STATES, WARPS, TILE (the other parameters at their defaults, as the space's
// constraints hold them).
template <bool CHAIN, int LANES_, int ITEMS_, int WARPS_, int STATES_, int STATE_LANES_, int TILE_>
struct Config {
  static constexpr kiln::Choice ALGO{CHAIN ? "chain" : "chunk"};
  static constexpr int LANES = LANES_, ITEMS = ITEMS_, WARPS = WARPS_, STATES = STATES_;
  static constexpr int STATE_LANES = STATE_LANES_, TILE = TILE_;
};

using kiln::scan::cuda_detail::from_float;
using kiln::scan::cuda_detail::to_float;

// The bench's inputs: counter-based uniforms of stream `stream` (kiln/counter_random.hpp).
constexpr std::uint64_t kSeed = 1;
__host__ __device__ inline float uniform(std::uint64_t i, std::uint64_t stream) {
  return kiln::random::uniform(kSeed, stream, i);
}

template <class T>
__device__ double to_double(T v) {
  return static_cast<double>(to_float(v));
}

// x[i] = lo + (hi - lo) * uniform, in T.
template <class T>
__global__ void fill(T* x, long long n, unsigned stream, float lo, float hi) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    x[i] = from_float<T>(lo + (hi - lo) * uniform(static_cast<std::uint64_t>(i), stream));
  }
}

// One thread a checked row (b, d): the recurrence in fp64; err = max |y - ref| (and |final state -
// ref|), ref_max =
// max |ref| (fp64 bits as unsigned long long, atomicMax on non-negative doubles).
template <class T>
__global__ void reference_check(kiln::scan::ScanArgs<T> a, const long long* rows, int count, unsigned long long* err,
                                unsigned long long* ref_max) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const long long r = rows[k];
  const long long d = r % a.channels, b = r / a.channels, g = d / (a.channels / a.groups);
  const long long L = a.length, N = a.state;
  const T* Bt = a.B + (b * a.groups + g) * N * L;
  const T* Ct = a.C + (b * a.groups + g) * N * L;
  double h[kMaxState];
  for (int n = 0; n < N; ++n) h[n] = 0;
  double e = 0, m = 0;
  for (long long t = 0; t < L; ++t) {
    const double u = to_double(a.u[r * L + t]);
    double dt = to_double(a.delta[r * L + t]) + a.delta_bias[d];
    dt = dt <= 20.0 ? log1p(exp(dt)) : dt;
    double acc = 0;
    for (int n = 0; n < N; ++n) {
      h[n] = exp(dt * a.A[d * N + n]) * h[n] + dt * to_double(Bt[n * L + t]) * u;
      acc += to_double(Ct[n * L + t]) * h[n];
    }
    acc += a.D[d] * u;
    const double z = to_double(a.z[r * L + t]);
    acc *= z / (1.0 + exp(-z));
    e = fmax(e, fabs(to_double(a.y[r * L + t]) - acc));
    m = fmax(m, fabs(acc));
  }
  for (int n = 0; n < N; ++n) e = fmax(e, fabs(static_cast<double>(a.final_state[r * N + n]) - h[n]));
  atomicMax(err, static_cast<unsigned long long>(__double_as_longlong(e)));
  atomicMax(ref_max, static_cast<unsigned long long>(__double_as_longlong(m)));
}

struct Shape {
  long long batch, channels, length, state, groups;
  std::string dtype;
};

struct Variant {
  std::string name;
  std::function<cudaError_t(const void*, cudaStream_t)> launch[3];  // fp32, bf16, fp16 (ScanArgs<T>*)
};

template <class C>
Variant make_variant() {
  Variant v;
  if constexpr (C::ALGO == "chain") {
    v.name = "chain_STATE_LANES" + std::to_string(C::STATE_LANES) + "_STATES" + std::to_string(C::STATES) + "_WARPS" +
             std::to_string(C::WARPS) + "_TILE" + std::to_string(C::TILE);
  } else {
    v.name = "chunk_LANES" + std::to_string(C::LANES) + "_ITEMS" + std::to_string(C::ITEMS) + "_WARPS" +
             std::to_string(C::WARPS) + "_STATES" + std::to_string(C::STATES);
  }
  v.launch[0] = [](const void* a, cudaStream_t s) {
    return kiln::scan::launch<C>(*static_cast<const kiln::scan::ScanArgs<float>*>(a), s);
  };
  v.launch[1] = [](const void* a, cudaStream_t s) {
    return kiln::scan::launch<C>(*static_cast<const kiln::scan::ScanArgs<__nv_bfloat16>*>(a), s);
  };
  v.launch[2] = [](const void* a, cudaStream_t s) {
    return kiln::scan::launch<C>(*static_cast<const kiln::scan::ScanArgs<__half>*>(a), s);
  };
  return v;
}

// Calls f(std::integral_constant<int, V>{}) for each V.
template <int... V, class F>
void each(F&& f) {
  (f(std::integral_constant<int, V>{}), ...);
}

// The space's feasible configurations (selective_scan_cuda.space.json's values and constraints;
// the chunk's register bound with the H200's 65536 registers per SM).
std::vector<Variant> all_variants() {
  std::vector<Variant> v;
#ifndef KILN_BENCH_CHAIN_ONLY
  each<8, 16, 32>([&](auto L) {
    each<4, 8, 16>([&](auto I) {
      each<1, 2, 4, 8>([&](auto W) {
        each<1, 2>([&](auto S) {
          constexpr int channels = W * 32 / L, live = I * (3 + 2 * S);
          if constexpr (channels <= 8 && live <= 80 && W * 32 * (5 * live / 4 + 56) <= 65536) {
            v.push_back(make_variant<Config<false, L, I, W, S, 16, 64>>());
          }
        });
      });
    });
  });
#endif
  each<4, 8, 16>([&](auto SL) {
    each<1, 2, 4>([&](auto S) {
      each<1, 2, 4, 8>([&](auto W) {
        each<32, 64>([&](auto TT) {
          if constexpr (W * 32 / SL <= 32) v.push_back(make_variant<Config<true, 16, 8, W, S, SL, TT>>());
        });
      });
    });
  });
  return v;
}

template <class T>
void bench_shape(const Shape& s, const std::vector<const Variant*>& variants, int dtype_index) {
  const long long rows = s.batch * s.channels, elems = rows * s.length, bc = s.batch * s.groups * s.state * s.length;
  const long long kState = s.state;
  T *u, *delta, *z, *B, *C, *y;
  float *A, *D, *bias, *final_state;
  BENCH_CHECK(cudaMalloc(&u, elems * sizeof(T)));
  BENCH_CHECK(cudaMalloc(&delta, elems * sizeof(T)));
  BENCH_CHECK(cudaMalloc(&z, elems * sizeof(T)));
  BENCH_CHECK(cudaMalloc(&y, elems * sizeof(T)));
  BENCH_CHECK(cudaMalloc(&B, bc * sizeof(T)));
  BENCH_CHECK(cudaMalloc(&C, bc * sizeof(T)));
  BENCH_CHECK(cudaMalloc(&A, s.channels * kState * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&D, s.channels * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&bias, s.channels * sizeof(float)));
  BENCH_CHECK(cudaMalloc(&final_state, rows * kState * sizeof(float)));
  fill<<<1024, 256>>>(u, elems, 1, -1.0f, 1.0f);
  fill<<<1024, 256>>>(delta, elems, 2, -0.5f, 0.5f);
  fill<<<1024, 256>>>(z, elems, 3, -2.0f, 2.0f);
  fill<<<1024, 256>>>(B, bc, 4, -1.0f, 1.0f);
  fill<<<1024, 256>>>(C, bc, 5, -1.0f, 1.0f);
  BENCH_CHECK(cudaGetLastError());
  // Mamba's initialisation: A[d, n] = -(n + 1) x [0.5, 1.5), dt = softplus(delta + bias) around a
  // log-uniform [1e-3, 1e-1].
  std::vector<float> hA(s.channels * kState), hD(s.channels), hbias(s.channels);
  for (long long d = 0; d < s.channels; ++d) {
    for (int n = 0; n < kState; ++n) hA[d * kState + n] = -(n + 1) * (0.5f + uniform(d * kState + n, 6));
    hD[d] = 0.5f + uniform(d, 7);
    const double dt0 = std::exp(std::log(1e-3) + uniform(d, 8) * std::log(100.0));
    hbias[d] = static_cast<float>(std::log(std::expm1(dt0)));
  }
  BENCH_CHECK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemcpy(D, hD.data(), hD.size() * sizeof(float), cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemcpy(bias, hbias.data(), hbias.size() * sizeof(float), cudaMemcpyHostToDevice));

  kiln::scan::ScanArgs<T> a;
  a.u = u, a.delta = delta, a.A = A, a.B = B, a.C = C, a.D = D, a.z = z, a.delta_bias = bias, a.y = y;
  a.final_state = final_state;
  a.batch = s.batch, a.channels = s.channels, a.length = s.length, a.state = s.state, a.groups = s.groups;
  a.softplus = true;

  std::vector<long long> check_rows;
  for (int k = 0; k < kCheckRows && k < rows; ++k) check_rows.push_back(rows <= kCheckRows ? k : k * (rows - 1) / (kCheckRows - 1));
  long long* d_rows;
  unsigned long long* d_err;
  BENCH_CHECK(cudaMalloc(&d_rows, check_rows.size() * sizeof(long long)));
  BENCH_CHECK(cudaMalloc(&d_err, 2 * sizeof(unsigned long long)));
  BENCH_CHECK(cudaMemcpy(d_rows, check_rows.data(), check_rows.size() * sizeof(long long), cudaMemcpyHostToDevice));

  const double bytes = (4.0 * elems + 2.0 * bc) * sizeof(T) + 4.0 * s.channels * (kState + 2) + 4.0 * rows * kState;
  const double floor_us = std::max({bytes / 4.1e12, elems * (kState + 3.0) / 4.16e12, 6.0 * elems * kState / 66.9e12}) * 1e6;
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-2;
  std::printf("%lldx%lldx%lldx%lldx%lld:%s  floor %.1f us (bytes %.1f, ex2 %.1f, fp32 %.1f)\n", s.batch, s.channels, s.length,
              s.state, s.groups, s.dtype.c_str(), floor_us, bytes / 4.1e12 * 1e6, elems * (kState + 3.0) / 4.16e12 * 1e6,
              6.0 * elems * kState / 66.9e12 * 1e6);
  cudaEvent_t e0, e1;
  BENCH_CHECK(cudaEventCreate(&e0));
  BENCH_CHECK(cudaEventCreate(&e1));
  for (const Variant* v : variants) {
    BENCH_CHECK(cudaMemset(y, 0xff, elems * sizeof(T)));
    BENCH_CHECK(v->launch[dtype_index](&a, nullptr));
    BENCH_CHECK(cudaMemset(d_err, 0, 2 * sizeof(unsigned long long)));
    reference_check<T><<<(kCheckRows + 31) / 32, 32>>>(a, d_rows, static_cast<int>(check_rows.size()), d_err, d_err + 1);
    BENCH_CHECK(cudaDeviceSynchronize());
    unsigned long long herr[2];
    BENCH_CHECK(cudaMemcpy(herr, d_err, sizeof(herr), cudaMemcpyDeviceToHost));
    double err, ref;
    std::memcpy(&err, &herr[0], 8);
    std::memcpy(&ref, &herr[1], 8);
    const double rel = err / ref;
    // Repetitions of at least 20 ms.
    BENCH_CHECK(cudaEventRecord(e0));
    BENCH_CHECK(v->launch[dtype_index](&a, nullptr));
    BENCH_CHECK(cudaEventRecord(e1));
    BENCH_CHECK(cudaEventSynchronize(e1));
    float one_ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&one_ms, e0, e1));
    const int reps = std::max(3, static_cast<int>(20.0 / std::max(one_ms, 1e-3f)));
    std::vector<double> us;
    for (int r = 0; r < 7; ++r) {
      BENCH_CHECK(cudaEventRecord(e0));
      for (int i = 0; i < reps; ++i) BENCH_CHECK(v->launch[dtype_index](&a, nullptr));
      BENCH_CHECK(cudaEventRecord(e1));
      BENCH_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      BENCH_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      us.push_back(ms * 1e3 / reps);
    }
    std::sort(us.begin(), us.end());
    std::printf("  %-32s %9.1f us  (min %.1f, max %.1f)  %.2fx floor  err %.2e%s\n", v->name.c_str(), us[3], us[0],
                us[6], us[3] / floor_us, rel, rel <= tol && std::isfinite(rel) ? "" : "  WRONG");
    std::fflush(stdout);
  }
  cudaFree(u), cudaFree(delta), cudaFree(z), cudaFree(y), cudaFree(B), cudaFree(C), cudaFree(A), cudaFree(D);
  cudaFree(bias), cudaFree(final_state), cudaFree(d_rows), cudaFree(d_err);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  std::vector<std::string> names;
  bool configs = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      configs = true;
      continue;
    }
    if (configs) {
      names.push_back(arg);
      continue;
    }
    Shape s{0, 0, 0, 16, 1, ""};
    char dtype[8] = {};
    const bool full = std::sscanf(arg.c_str(), "%lldx%lldx%lldx%lldx%lld:%7s", &s.batch, &s.channels, &s.length,
                                  &s.state, &s.groups, dtype) == 6;
    if ((!full && std::sscanf(arg.c_str(), "%lldx%lldx%lld:%7s", &s.batch, &s.channels, &s.length, dtype) != 4) ||
        s.batch < 1 || s.channels < 1 || s.length < 1 || s.state < 1 || s.state > kMaxState || s.groups < 1 ||
        s.channels % s.groups != 0) {
      std::fprintf(stderr, "selective_scan_variants_bench: shape %s is not BxDxL[xNxG]:DTYPE (N <= 256, G divides D)\n",
                   arg.c_str());
      return 2;
    }
    s.dtype = dtype;
    if (s.dtype != "fp32" && s.dtype != "bf16" && s.dtype != "fp16") {
      std::fprintf(stderr, "selective_scan_variants_bench: dtype %s is not fp32, bf16 or fp16\n", dtype);
      return 2;
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) shapes.push_back({1, 5120, 8192, 16, 1, "bf16"});
  static const std::vector<Variant> all = all_variants();
  std::vector<const Variant*> chosen;
  for (const Variant& v : all) {
    if (names.empty() || std::find(names.begin(), names.end(), v.name) != names.end()) chosen.push_back(&v);
  }
  for (const std::string& n : names) {
    if (std::none_of(all.begin(), all.end(), [&](const Variant& v) { return v.name == n; })) {
      std::fprintf(stderr, "selective_scan_variants_bench: no configuration %s\n", n.c_str());
      return 2;
    }
  }
  cudaDeviceProp prop;
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %zu configurations\n", prop.name, chosen.size());
  for (const Shape& s : shapes) {
    if (s.dtype == "fp32") {
      bench_shape<float>(s, chosen, 0);
    } else if (s.dtype == "bf16") {
      bench_shape<__nv_bfloat16>(s, chosen, 1);
    } else {
      bench_shape<__half>(s, chosen, 2);
    }
  }
  return 0;
}
