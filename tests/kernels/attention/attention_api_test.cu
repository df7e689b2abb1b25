// kiln::attention_forward as a caller uses it: caller-given strides (Q, K, V sliced out of one
// packed [B, S, 3, H, D] buffer, O written [B, H, S, D]), the optional log-sum-exp, the optional
// split workspace, and clear errors for what it does not support. Results are compared with the
// fp64 host reference.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attention_reference.cuh"
#include "attention_test_support.cuh"
#include "kiln/attention.hpp"
#include "kiln/cuda_support.hpp"

namespace {

using attention_test::Tally;
using kiln::AttentionDType;
using kiln::attention::HostInputs;
using kiln::attention::Layout;
using kiln::attention::Shape;

void expect(Tally& tally, bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  (ok ? tally.passed : tally.failed) += 1;
}

struct Packed {
  Shape shape;  // bshd reference layout of the same values
  HostInputs host;
  kiln::cuda::DeviceBuffer<std::uint16_t> qkv;  // [B, S, 3, H, D]; Sq == Sk, Hq == Hkv
  kiln::cuda::DeviceBuffer<std::uint16_t> o;    // [B, H, S, D]
  kiln::cuda::DeviceBuffer<float> lse;

  Packed(int B, int H, int S, int D, AttentionDType dtype, bool causal, std::uint64_t seed) {
    shape.batch = B;
    shape.heads_q = shape.heads_kv = H;
    shape.seq_q = shape.seq_k = S;
    shape.head_dim = D;
    shape.dtype = dtype;
    shape.causal = causal;
    shape.layout = Layout::bshd;
    kiln::Rng rng(seed);
    const std::size_t n = static_cast<std::size_t>(B) * S * H * D;
    std::vector<std::uint16_t> packed(3 * n);
    host.q.resize(n);
    host.k.resize(n);
    host.v.resize(n);
    for (int b = 0; b < B; ++b) {
      for (int s = 0; s < S; ++s) {
        for (int which = 0; which < 3; ++which) {
          for (int h = 0; h < H; ++h) {
            for (int d = 0; d < D; ++d) {
              const float f = (which == 0 ? 2.0f : 1.0f) * rng.normal();
              const std::uint16_t x = kiln::attention::element_bits(f, dtype);
              const std::size_t flat = ((static_cast<std::size_t>(b) * S + s) * H + h) * D + d;
              packed[(((static_cast<std::size_t>(b) * S + s) * 3 + which) * H + h) * D + d] = x;
              (which == 0 ? host.q : which == 1 ? host.k : host.v)[flat] = x;
            }
          }
        }
      }
    }
    qkv = kiln::cuda::DeviceBuffer<std::uint16_t>(packed);
    o = kiln::cuda::DeviceBuffer<std::uint16_t>(n);
    lse = kiln::cuda::DeviceBuffer<float>(static_cast<std::size_t>(B) * H * S);
  }

  kiln::AttentionParams params() const {
    const int B = shape.batch, H = shape.heads_q, S = shape.seq_q, D = shape.head_dim;
    kiln::AttentionParams p;
    const std::int64_t hd = static_cast<std::int64_t>(H) * D;
    p.q = qkv.get();
    p.k = qkv.get() + hd;
    p.v = qkv.get() + 2 * hd;
    p.o = o.get();
    p.lse = lse.get();
    p.dtype = shape.dtype;
    p.batch = B;
    p.heads_q = p.heads_kv = H;
    p.seq_q = p.seq_k = S;
    p.head_dim = D;
    p.q_strides = p.k_strides = p.v_strides = {static_cast<std::int64_t>(S) * 3 * hd, D, 3 * hd};
    p.o_strides = {static_cast<std::int64_t>(H) * S * D, static_cast<std::int64_t>(S) * D, D};
    p.causal = shape.causal;
    p.scale = kiln::default_attention_scale(D);
    return p;
  }

  // Relative L2 error of O (and of the LSE, when it was asked for) against the fp64 reference.
  void compare(double& o_err, double& lse_err, bool with_lse) const {
    const int H = shape.heads_q, S = shape.seq_q, D = shape.head_dim;
    const std::vector<std::uint16_t> out = o.download();
    const std::vector<float> l = lse.download();
    double e2 = 0, r2 = 0, le2 = 0, lr2 = 0;
    std::vector<double> ref(D);
    for (std::int64_t r = 0; r < shape.rows(); ++r) {
      const double ref_lse = kiln::attention::reference_row_cpu(shape, host, r, ref.data());
      const std::int64_t i = r % S, h = (r / S) % H, b = r / (static_cast<std::int64_t>(S) * H);
      for (int d = 0; d < D; ++d) {
        const double x = kiln::attention::element_to_double(out[((b * H + h) * S + i) * D + d], shape.dtype);
        e2 += (x - ref[d]) * (x - ref[d]);
        r2 += ref[d] * ref[d];
      }
      if (with_lse) {
        le2 += (l[r] - ref_lse) * (l[r] - ref_lse);
        lr2 += ref_lse * ref_lse;
      }
    }
    o_err = std::sqrt(e2 / r2);  // NaN (fails every comparison) if any element is NaN
    lse_err = with_lse ? std::sqrt(le2 / lr2) : 0.0;
  }
};

// Runs the call on poisoned O and LSE buffers; the relative L2 errors of O and (with_lse) the LSE.
void run_and_compare(Packed& t, const kiln::AttentionParams& p, bool with_lse, double& o_err, double& lse_err) {
  t.o.fill(0xFFFF);
  t.lse.fill(kiln::float_of_bits(kiln::poison::f32));
  kiln::attention_forward(p, nullptr);
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  t.compare(o_err, lse_err, with_lse);
}

void correctness(Tally& tally, int D, AttentionDType dtype, bool causal, int B, int H, int S) {
  Packed t(B, H, S, D, dtype, causal, 77 + D + S);
  const kiln::AttentionParams p = t.params();
  const std::string name = std::string(kiln::attention_variant_name(p)) + " " + t.shape.describe() +
                           " packed QKV in, [B,H,S,D] out";
  const double tol = dtype == AttentionDType::bf16 ? 1e-2 : 2e-3;
  // The API picks the family (decode for at most kDecodeMaxQueries queries, where it has the head
  // dimension), and the family header the member of the head dimension.
  const bool decode = S <= kiln::attention::kDecodeMaxQueries && D != 256;  // its members: d64, d128
  const std::string member = (decode ? "attention_decode_d" : "attention_d") + std::to_string(D) + "__";
  expect(tally, std::string(kiln::attention_variant_name(p)).rfind(member, 0) == 0,
         name + ": a variant of the member " + member.substr(0, member.size() - 2));

  // 1. With the log-sum-exp and no workspace.
  double o_err = 0, lse_err = 0;
  run_and_compare(t, p, true, o_err, lse_err);
  expect(tally, o_err <= tol && lse_err <= 1e-4,
         name + ": rel_l2 O " + std::to_string(o_err) + ", LSE " + std::to_string(lse_err));

  // 2. Without the log-sum-exp: O alone, the LSE buffer untouched.
  kiln::AttentionParams no_lse = p;
  no_lse.lse = nullptr;
  run_and_compare(t, no_lse, false, o_err, lse_err);
  const std::vector<float> l = t.lse.download();
  bool untouched = true;
  for (float x : l) untouched = untouched && kiln::bits_of(x) == kiln::poison::f32;
  expect(tally, o_err <= tol && untouched, name + ": lse=nullptr, rel_l2 O " + std::to_string(o_err));

  // 3. With the workspace the variant asks for (a split where the grid is small).
  const std::size_t bytes = kiln::attention_workspace_bytes(p);
  if (bytes > 0) {
    kiln::cuda::DeviceBuffer<float> ws(bytes / sizeof(float) + 1);
    kiln::AttentionParams split = p;
    split.workspace = ws.get();
    split.workspace_bytes = ws.bytes();
    run_and_compare(t, split, true, o_err, lse_err);
    expect(tally, o_err <= tol && lse_err <= 1e-4,
           name + ": split with " + std::to_string(bytes) + " B workspace, rel_l2 O " + std::to_string(o_err) + ", LSE " +
               std::to_string(lse_err));
  }
}

// One key/value head read by every query head through a zero head stride (a broadcast view, as
// torch's expand gives): strides the TMA producer's descriptors cannot describe, so the API runs
// the space's default variant where the dispatched one has a producer; the result is the same.
void broadcast_kv(Tally& tally, int D, bool causal) {
  Packed t(1, 4, 300, D, AttentionDType::bf16, causal, 91 + D);
  const int H = 4, S = 300;
  for (int s = 0; s < S; ++s) {
    for (int h = 1; h < H; ++h) {
      for (int d = 0; d < D; ++d) {
        const std::size_t to = (static_cast<std::size_t>(s) * H + h) * D + d, from = static_cast<std::size_t>(s) * H * D + d;
        t.host.k[to] = t.host.k[from];
        t.host.v[to] = t.host.v[from];
      }
    }
  }
  kiln::AttentionParams p = t.params();
  p.k_strides.head = 0;
  p.v_strides.head = 0;
  const std::string name = std::string(kiln::attention_variant_name(p)) + " " + t.shape.describe() + " K/V head stride 0";
  double o_err = 0, lse_err = 0;
  run_and_compare(t, p, true, o_err, lse_err);
  expect(tally, o_err <= 1e-2 && lse_err <= 1e-4,
         name + ": rel_l2 O " + std::to_string(o_err) + ", LSE " + std::to_string(lse_err));
}

template <class F>
void expect_error(Tally& tally, const char* what, const std::string& needle, F&& mutate) {
  Packed t(1, 2, 64, 64, AttentionDType::bf16, false, 5);
  kiln::AttentionParams p = t.params();
  mutate(p);
  std::string message;
  try {
    kiln::attention_forward(p, nullptr);
  } catch (const kiln::AttentionError& e) {
    message = e.what();
  }
  expect(tally, message.find(needle) != std::string::npos,
         std::string("rejects ") + what + (message.empty() ? " (no error thrown)" : ": " + message));
}

}  // namespace

int main() {
  attention_test::require_device_or_skip();
  Tally tally;
  try {
    for (int D : {64, 128, 256}) {
      correctness(tally, D, AttentionDType::bf16, true, 2, 4, 300);   // tails, causal
      correctness(tally, D, AttentionDType::fp16, false, 1, 2, 777);  // few blocks: the split path
      correctness(tally, D, AttentionDType::bf16, false, 1, 1, 64);
      // Either side of the decode family's bound (16 queries).
      correctness(tally, D, AttentionDType::bf16, true, 3, 4, 16);
      correctness(tally, D, AttentionDType::fp16, false, 2, 2, 17);
      broadcast_kv(tally, D, false);
      broadcast_kv(tally, D, true);
    }
    // The supported head dimensions are the family's keys (kiln/tuned/attention.hpp).
    expect_error(tally, "head_dim 96", "head_dim 96 is not supported (supported: 64, 128, 256)",
                 [](kiln::AttentionParams& p) { p.head_dim = 96; });
    expect_error(tally, "a misaligned q", "16-byte aligned",
                 [](kiln::AttentionParams& p) { p.q = static_cast<const char*>(p.q) + 2; });
    expect_error(tally, "Hq not a multiple of Hkv", "multiple of heads_kv", [](kiln::AttentionParams& p) {
      p.heads_q = 3;
      p.heads_kv = 2;
    });
    expect_error(tally, "a zero scale", "scale", [](kiln::AttentionParams& p) { p.scale = 0.f; });
    expect_error(tally, "an odd stride", "multiples of 8", [](kiln::AttentionParams& p) { p.k_strides.seq += 4; });
    expect_error(tally, "a null v", "v is null", [](kiln::AttentionParams& p) { p.v = nullptr; });
    expect_error(tally, "seq_k = 0", ">= 1", [](kiln::AttentionParams& p) { p.seq_k = 0; });
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    tally.failed += 1;
  }
  return tally.finish();
}
