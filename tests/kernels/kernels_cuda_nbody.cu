// The N-body CUDA cases (kernels_cuda_cases.hpp): all-pairs (nbody_cuda) and the tree
// (nbody_tree_cuda_*), a few configurations of each space, compiled for sm_89 and sm_90a.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels_cuda_support.cuh"
#include "kiln/nbody.hpp"
#include "nbody_cuda.cuh"
#include "nbody_tree_cuda.cuh"
#include "nbody_tree_invariants.hpp"

namespace kiln_test::cuda_cases {
namespace {

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

template <class Config>
std::vector<kiln::CheckResult> run_nbody(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::nbody::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.output_device(), 4, c);
  return w.check();
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


}  // namespace

std::vector<std::string> nbody_configs() { return runnable(names_of(nbody_runners()), "_CLUSTER1"); }

std::vector<kiln::CheckResult> nbody_case(const std::string& config, std::int64_t n, std::uint64_t seed,
                                          const Case& c) {
  return find_runner(nbody_runners(), config)(nbody_problem(n), seed, c);
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
