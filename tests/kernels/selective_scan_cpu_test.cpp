// The CPU selective scan: variants spanning the space pass their own check against the fp64
// sequential recurrence on odd shapes, every dtype and every combination of the optional parts;
// check() catches unwritten, non-finite and wrong elements of y and of the final state; the public
// function kiln::cpu::selective_scan computes the same and rejects every bad argument with a
// SelectiveScanError naming it, before touching memory.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/selective_scan.hpp"
#include "kiln_catch.hpp"
#include "problem_helpers.hpp"
#include "selective_scan_cpu.hpp"

namespace {

namespace ks = kiln::scan;

// Corners of selective_scan_cpu.space.json: narrow vectors one channel at a time with short
// tiles, the default, wide vectors over eight channels with long tiles.
struct Narrow {
  static constexpr int VEC = 4, CHANNEL_BLOCK = 1, TIME_TILE = 16;
  static constexpr const char* kiln_name = "selective_scan_cpu__VEC4_CHANNEL_BLOCK1_TIME_TILE16";
};
struct Default {
  static constexpr int VEC = 16, CHANNEL_BLOCK = 4, TIME_TILE = 64;
  static constexpr const char* kiln_name = "selective_scan_cpu__VEC16_CHANNEL_BLOCK4_TIME_TILE64";
};
struct Wide {
  static constexpr int VEC = 16, CHANNEL_BLOCK = 8, TIME_TILE = 256;
  static constexpr const char* kiln_name = "selective_scan_cpu__VEC16_CHANNEL_BLOCK8_TIME_TILE256";
};

// The per-dtype tolerance of the space (selective_scan_cpu.space.json, "tolerance").
double tolerance(kiln::ScanDType t) {
  switch (t) {
    case kiln::ScanDType::bf16: return 1e-2;
    case kiln::ScanDType::fp16: return 2e-3;
    case kiln::ScanDType::fp32: break;
  }
  return 2e-5;
}

void require_pass(const std::vector<kiln::CheckResult>& results, const ks::Shape& s, const ks::Options& o) {
  REQUIRE(results.size() == (o.final_state ? 2u : 1u));
  const kiln::CheckResult& y = results[0];
  CHECK(y.output == "y");
  CHECK(y.dtype == ks::dtype_name(s.dtype));
  CHECK(y.elements == static_cast<std::uint64_t>(s.elements()));
  CHECK(y.compared == y.elements);
  CHECK(y.unwritten == 0);
  CHECK(y.non_finite == 0);
  CHECK(y.rel_l2 < tolerance(s.dtype));
  if (o.final_state) {
    const kiln::CheckResult& h = results[1];
    CHECK(h.output == "final_state");
    CHECK(h.dtype == "fp32");
    CHECK(h.elements == static_cast<std::uint64_t>(s.rows() * s.state));
    CHECK(h.unwritten == 0);
    CHECK(h.non_finite == 0);
    CHECK(h.rel_l2 < 2e-5);  // fp32 in every dtype
  }
}

template <class Config>
std::vector<kiln::CheckResult> run(const ks::Shape& s, const ks::Options& o, std::uint64_t seed) {
  ks::CpuWorkload w(s, seed, o);
  w.poison();
  w.template run<Config>();
  return w.check();
}

const kiln::ScanDType kDtypes[] = {kiln::ScanDType::fp32, kiln::ScanDType::bf16, kiln::ScanDType::fp16};

template <class Config>
void check_shapes() {
  // Odd lengths and channel counts, one step, groups of several channels (and a block that
  // straddles no group), state sizes that are not a multiple of the vector.
  const struct {
    std::int64_t batch, channels, length, state, groups;
  } shapes[] = {{2, 97, 1000, 16, 1}, {1, 8, 3001, 16, 2}, {3, 5, 1, 5, 1}, {1, 12, 333, 64, 3}, {2, 7, 17, 1, 7}};
  for (const auto& sh : shapes) {
    for (kiln::ScanDType dtype : kDtypes) {
      const ks::Shape s{sh.batch, sh.channels, sh.length, sh.state, sh.groups, dtype};
      INFO(Config::kiln_name << " " << sh.batch << "x" << sh.channels << "x" << sh.length << " state " << sh.state
                             << " groups " << sh.groups << " " << ks::dtype_name(dtype));
      require_pass(run<Config>(s, ks::Options{}, 11 + sh.length), s, ks::Options{});
    }
  }
}

}  // namespace

TEST_CASE("selective_scan cpu: variants across the space pass on odd shapes in every dtype", "[scan][cpu]") {
  check_shapes<Narrow>();
  check_shapes<Default>();
  check_shapes<Wide>();
}

TEST_CASE("selective_scan cpu: every combination of z, D, delta_bias, softplus and final state", "[scan][cpu]") {
  for (int mask = 0; mask < 32; ++mask) {
    ks::Options o;
    o.z = mask & 1;
    o.D = mask & 2;
    o.delta_bias = mask & 4;
    o.softplus = mask & 8;
    o.final_state = mask & 16;
    for (kiln::ScanDType dtype : kDtypes) {
      const ks::Shape s{2, 9, 301, 16, 3, dtype};
      INFO("options " << mask << " " << ks::dtype_name(dtype));
      require_pass(run<Default>(s, o, 5 + mask), s, o);
    }
  }
}

TEST_CASE("selective_scan cpu: fp32 results are close to the fp64 reference, not merely within tolerance", "[scan][cpu]") {
  // fp32 recurrences over 3001 steps stay within a few 1e-7 of the reference here; 2e-6 leaves the
  // space's 2e-5 a tenfold margin.
  const ks::Shape s{1, 8, 3001, 16, 1, kiln::ScanDType::fp32};
  const auto r = run<Narrow>(s, ks::Options{}, 3);
  CHECK(r[0].rel_l2 < 2e-6);
  CHECK(r[1].rel_l2 < 2e-6);
}

TEST_CASE("selective_scan cpu: check() catches unwritten, non-finite and wrong elements", "[scan][cpu]") {
  const ks::Shape s{2, 5, 100, 16, 1, kiln::ScanDType::bf16};
  auto tampered = [&](auto&& tamper) {
    ks::CpuWorkload w(s, 21, ks::Options{});
    w.poison();
    w.run<Default>();
    tamper(w);
    return w.check();
  };
  auto r = tampered([](ks::CpuWorkload& w) { w.output_y_bf16().back().bits = kiln::poison::bf16; });
  CHECK(r[0].unwritten == 1);
  CHECK(r[0].first_unwritten_at == 999);
  r = tampered([](ks::CpuWorkload& w) { w.output_y_bf16()[3].bits = kiln::bf16_from_float(NAN); });
  CHECK(r[0].unwritten == 0);
  CHECK(r[0].non_finite == 1);
  r = tampered([](ks::CpuWorkload& w) {
    for (auto& v : w.output_y_bf16()) v.bits = kiln::bf16_from_float(kiln::float_from_bf16(v.bits) * 1.05f);
  });
  CHECK(r[0].rel_l2 > 1e-2);
  r = tampered([](ks::CpuWorkload& w) { w.output_final_state()[7] = kiln::float_of_bits(kiln::poison::f32); });
  CHECK(r[1].unwritten == 1);
  r = tampered([](ks::CpuWorkload& w) { w.output_final_state()[7] += 0.5f; });
  CHECK(r[1].rel_l2 > 2e-5);
}

namespace {

// A problem's tensors, drawn as the workloads draw them, for calls through the public function.
struct Tensors {
  ks::Shape s;
  ks::Options o;
  std::vector<float> u, delta, z, B, C, A, D, bias, y, h;

  Tensors(const ks::Shape& shape, const ks::Options& options, std::uint64_t seed) : s(shape), o(options) {
    auto fill = [&](std::vector<float>& v, ks::Tensor t, std::int64_t count) {
      v.resize(static_cast<std::size_t>(count));
      for (std::int64_t i = 0; i < count; ++i) v[i] = ks::input_value(seed, t, i, s, o);
    };
    fill(u, ks::Tensor::u, s.elements());
    fill(delta, ks::Tensor::delta, s.elements());
    fill(z, ks::Tensor::z, s.elements());
    fill(B, ks::Tensor::B, s.bc_elements());
    fill(C, ks::Tensor::C, s.bc_elements());
    fill(A, ks::Tensor::A, s.channels * s.state);
    fill(D, ks::Tensor::D, s.channels);
    fill(bias, ks::Tensor::delta_bias, s.channels);
    y.assign(static_cast<std::size_t>(s.elements()), kiln::float_of_bits(kiln::poison::f32));
    h.assign(static_cast<std::size_t>(s.rows() * s.state), kiln::float_of_bits(kiln::poison::f32));
  }

  kiln::SelectiveScanParams params() {
    kiln::SelectiveScanParams p;
    p.u = u.data();
    p.delta = delta.data();
    p.A = A.data();
    p.B = B.data();
    p.C = C.data();
    p.D = D.data();
    p.z = z.data();
    p.delta_bias = bias.data();
    p.y = y.data();
    p.final_state = h.data();
    p.dtype = kiln::ScanDType::fp32;
    p.batch = s.batch;
    p.channels = s.channels;
    p.length = s.length;
    p.state = s.state;
    p.groups = s.groups;
    p.softplus = o.softplus;
    return p;
  }
};

// The message of the SelectiveScanError the call throws ("" when it throws none).
std::string error_of(const kiln::SelectiveScanParams& p) {
  try {
    kiln::cpu::selective_scan(p);
  } catch (const kiln::SelectiveScanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("selective_scan cpu: the public function matches the fp64 reference", "[scan][cpu][api]") {
  const ks::Shape s{2, 97, 1000, 16, 1, kiln::ScanDType::fp32};
  Tensors t(s, ks::Options{}, 77);
  kiln::cpu::selective_scan(t.params());
  const auto r = ks::compare(s, t.o, 77, [&](std::int64_t i) { return t.y[i]; }, t.h.data());
  require_pass(r, s, t.o);

  // bf16 and fp16 I/O through the same function.
  for (kiln::ScanDType dtype : {kiln::ScanDType::bf16, kiln::ScanDType::fp16}) {
    const ks::Shape s16{1, 6, 301, 16, 2, dtype};
    Tensors f(s16, ks::Options{}, 5);
    auto narrow = [&](const std::vector<float>& v) {
      std::vector<std::uint16_t> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        out[i] = dtype == kiln::ScanDType::bf16 ? kiln::bf16_from_float(v[i]) : kiln::f16_from_float(v[i]);
      }
      return out;
    };
    auto u = narrow(f.u), delta = narrow(f.delta), z = narrow(f.z), B = narrow(f.B), C = narrow(f.C);
    std::vector<std::uint16_t> y(f.y.size(), 0xFFFFu);
    kiln::SelectiveScanParams p = f.params();
    p.dtype = dtype;
    p.u = u.data();
    p.delta = delta.data();
    p.z = z.data();
    p.B = B.data();
    p.C = C.data();
    p.y = y.data();
    kiln::cpu::selective_scan(p);
    require_pass(ks::compare(s16, f.o, 5, [&](std::int64_t i) { return y[i]; }, f.h.data()), s16, f.o);
  }
}

TEST_CASE("selective_scan cpu: empty problems compute nothing, and length 0 zeroes the final state", "[scan][cpu][api]") {
  kiln::SelectiveScanParams p;
  p.state = 16;
  p.batch = 0;
  p.channels = 4;
  p.length = 10;
  CHECK(error_of(p).empty());  // no pointers needed: nothing to read
  std::vector<float> h(2 * 4 * 16, 1.0f);
  p.batch = 2;
  p.length = 0;
  p.final_state = h.data();
  CHECK(error_of(p).empty());
  for (float v : h) CHECK(v == 0.0f);
}

TEST_CASE("selective_scan cpu: bad arguments throw SelectiveScanError naming the argument", "[scan][cpu][api]") {
  const ks::Shape s{1, 4, 8, 16, 2, kiln::ScanDType::fp32};
  Tensors t(s, ks::Options{}, 1);
  const std::vector<float> y_before = t.y;
  CHECK(error_of(t.params()).empty());
  t.y = y_before;

  auto expect = [&](const std::string& contains, auto&& spoil) {
    kiln::SelectiveScanParams p = t.params();
    spoil(p);
    const std::string what = error_of(p);
    INFO("expected an error containing \"" << contains << "\", got \"" << what << "\"");
    CHECK(what.rfind("kiln::cpu::selective_scan: ", 0) == 0);
    CHECK(what.find(contains) != std::string::npos);
    // Nothing written.
    for (std::size_t i = 0; i < t.y.size(); ++i) CHECK(kiln::bits_of(t.y[i]) == kiln::bits_of(y_before[i]));
  };
  expect("batch must be >= 0", [](auto& p) { p.batch = -1; });
  expect("channels must be >= 0", [](auto& p) { p.channels = -4; });
  expect("length must be >= 0", [](auto& p) { p.length = -8; });
  expect("state must be 1 .. 256", [](auto& p) { p.state = 0; });
  expect("state must be 1 .. 256", [](auto& p) { p.state = -3; });
  expect("state must be 1 .. 256", [](auto& p) { p.state = 257; });
  expect("groups must be >= 1", [](auto& p) { p.groups = 0; });
  expect("groups must be >= 1", [](auto& p) { p.groups = -2; });
  expect("groups (3) must divide channels (4)", [](auto& p) { p.groups = 3; });
  expect("dtype must be", [](auto& p) { p.dtype = static_cast<kiln::ScanDType>(7); });
  expect("too large to index", [](auto& p) {
    p.batch = std::int64_t{1} << 31;
    p.channels = std::int64_t{1} << 31;
  });
  expect("u is null", [](auto& p) { p.u = nullptr; });
  expect("delta is null", [](auto& p) { p.delta = nullptr; });
  expect("A is null", [](auto& p) { p.A = nullptr; });
  expect("B is null", [](auto& p) { p.B = nullptr; });
  expect("C is null", [](auto& p) { p.C = nullptr; });
  expect("y is null", [](auto& p) { p.y = nullptr; });
  auto shifted = [](const void* ptr, int bytes) { return static_cast<const char*>(ptr) + bytes; };
  expect("u must be aligned to its element (4 bytes)", [&](auto& p) { p.u = shifted(p.u, 2); });
  expect("delta must be aligned", [&](auto& p) { p.delta = shifted(p.delta, 1); });
  expect("B must be aligned", [&](auto& p) { p.B = shifted(p.B, 2); });
  expect("C must be aligned", [&](auto& p) { p.C = shifted(p.C, 3); });
  expect("z must be aligned", [&](auto& p) { p.z = shifted(p.z, 2); });
  expect("y must be aligned", [&](auto& p) { p.y = const_cast<char*>(shifted(p.y, 2)); });
  expect("A must be aligned to its element (4 bytes)", [&](auto& p) { p.A = reinterpret_cast<const float*>(shifted(p.A, 2)); });
  expect("D must be aligned", [&](auto& p) { p.D = reinterpret_cast<const float*>(shifted(p.D, 1)); });
  expect("delta_bias must be aligned", [&](auto& p) { p.delta_bias = reinterpret_cast<const float*>(shifted(p.delta_bias, 2)); });
  expect("final_state must be aligned", [&](auto& p) { p.final_state = reinterpret_cast<float*>(const_cast<char*>(shifted(p.final_state, 2))); });
  expect("u must be aligned to its element (2 bytes)", [&](auto& p) {
    p.dtype = kiln::ScanDType::bf16;
    p.u = shifted(p.u, 1);
  });
}
