// What one attention call hands to its kernels, by value. Strides count elements; the head
// dimension is contiguous (stride 1). Row r of the log-sum-exp and of the split scratch is
// (batch · heads_q + head) · seq_q + query.
#pragma once
#include <cstdint>

namespace kiln::attention {

struct ForwardParams {
  const void* q = nullptr;  // [batch, heads_q, seq_q, head_dim] through the strides below
  const void* k = nullptr;  // [batch, heads_kv, seq_k, head_dim]
  const void* v = nullptr;  // [batch, heads_kv, seq_k, head_dim]
  void* o = nullptr;        // [batch, heads_q, seq_q, head_dim], same element type as q
  float* lse = nullptr;     // [batch, heads_q, seq_q] natural-log sum of exp(scale·s); null: not written

  std::int64_t q_batch_stride = 0, q_head_stride = 0, q_seq_stride = 0;
  std::int64_t k_batch_stride = 0, k_head_stride = 0, k_seq_stride = 0;
  std::int64_t v_batch_stride = 0, v_head_stride = 0, v_seq_stride = 0;
  std::int64_t o_batch_stride = 0, o_head_stride = 0, o_seq_stride = 0;

  int batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_k = 0;
  int group = 1;             // heads_q / heads_kv: query heads sharing one key/value head
  float scale = 0.f;         // softmax scale (> 0)
  float scale_log2 = 0.f;    // scale · log2(e): scores go through exp2

  // Grid shape, filled by the launcher.
  int m_blocks = 0;          // ceil(seq_q / BLOCK_M)
  int n_blocks = 0;          // ceil(seq_k / BLOCK_N)
  int splits = 1;            // key ranges per query block; > 1 writes partials, then combines
  int tiles_per_split = 0;   // key tiles per split (the last split may have fewer)

  // Split scratch (splits > 1 only): per split and row, the normalised partial output (fp32,
  // head_dim values) and its log-sum-exp.
  float* o_partial = nullptr;    // [splits][rows][head_dim]
  float* lse_partial = nullptr;  // [splits][rows]
};

}  // namespace kiln::attention
