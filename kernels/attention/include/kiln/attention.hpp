// Kiln attention: O = softmax(scale · Q·Kᵀ + mask) · V, forward, on NVIDIA GPUs (sm_89, sm_90a).
//
//   kiln::AttentionParams p;
//   p.q = q; p.k = k; p.v = v; p.o = o;            // device pointers, 16-byte aligned
//   p.dtype = kiln::AttentionDType::bf16;          // or fp16; O has the same type, LSE is fp32
//   p.batch = B; p.heads_q = Hq; p.heads_kv = Hkv; // Hq a multiple of Hkv (grouped-query)
//   p.seq_q = Sq; p.seq_k = Sk; p.head_dim = 128;  // 64, 128 or 256
//   p.q_strides = {Sq * Hq * D, D, Hq * D};         // [B, S, H, D]; {Hq * Sq * D, Sq * D, D} for [B, H, S, D]
//   ... k_strides, v_strides, o_strides likewise (element counts; the head dim is contiguous)
//   p.causal = true;                               // bottom-right aligned when Sq != Sk
//   p.scale = kiln::default_attention_scale(128);  // 1/sqrt(D)
//   kiln::attention_forward(p, stream);            // enqueue only; throws AttentionError on bad input
//
// Causal mask: query i sees key j when j <= i + (Sk - Sq), as FlashAttention-2 aligns it. A query
// that sees no key (causal, Sq > Sk) gets O = 0 and LSE = -inf.
// The log-sum-exp, when `lse` is set, is [B, Hq, Sq] fp32: ln Σ_j exp(scale · q·k_j) per row.
// Few (batch · head · query-block) blocks on a large GPU leave SMs idle; the tuned variant may then
// split the keys and merge the parts, which needs `workspace` of attention_workspace_bytes(p)
// bytes. Without it the call runs unsplit: the same result, possibly slower.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace kiln {

enum class AttentionDType { bf16, fp16 };

struct AttentionStrides {
  std::int64_t batch = 0, head = 0, seq = 0;  // in elements
};

struct AttentionParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // optional
  AttentionDType dtype = AttentionDType::bf16;
  int batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_k = 0, head_dim = 0;
  AttentionStrides q_strides, k_strides, v_strides, o_strides;
  bool causal = false;
  float scale = 0.f;  // must be finite and > 0
  void* workspace = nullptr;  // optional, 16-byte aligned
  std::size_t workspace_bytes = 0;
};

// Invalid or unsupported arguments; the message names the argument and what is accepted.
class AttentionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline float default_attention_scale(int head_dim) { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }

// Enqueues the forward pass on `stream`. Throws AttentionError for arguments it does not
// support, std::runtime_error when CUDA refuses the launch. No synchronisation, no allocation.
void attention_forward(const AttentionParams& params, cudaStream_t stream);

// Workspace the call would use for a key split on the current device (0: it would not split).
std::size_t attention_workspace_bytes(const AttentionParams& params);

// Canonical name of the variant the call dispatches to (for logs and benchmarks).
const char* attention_variant_name(const AttentionParams& params);

}  // namespace kiln
