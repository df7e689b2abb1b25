// What one attention call hands to its kernels, by value, and params_for(), the one place that
// fills it from the public kiln::AttentionParams (the API, the workload and the benchmark all go
// through it). Strides count elements; the head dimension is contiguous (stride 1). Row r of the
// log-sum-exp and of the split scratch is (batch · heads_q + head) · seq_q + query.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only; nothing links the driver library)

#include <cstdint>

#include "kiln/attention.hpp"

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
  // Grouped-query heads packed into the query block (decode: few queries, several query heads per
  // key/value head): a block's rows are (query, head) pairs of one key/value head, row
  // query · group + (head mod group), so each key/value tile is read once for the whole group and
  // a block's rows are filled by the group rather than by few queries.
  bool packed = false;
  int m_blocks = 0;          // ceil(seq_q / BLOCK_M); packed: ceil(seq_q · group / BLOCK_M)
  int n_blocks = 0;          // ceil(seq_k / BLOCK_N)
  int splits = 1;            // key ranges per query block; > 1 writes partials, then combines
  int tiles_per_split = 0;   // key tiles per split (the last split may have fewer)
  // The splits of a query block are the blocks of one thread-block cluster (blockIdx.x is
  // m_block · splits + split) and merge through distributed shared memory: no scratch, no combine
  // kernel. Otherwise blockIdx.x is split · m_blocks + m_block and partials go to the scratch below.
  bool cluster = false;

  // Split scratch (splits > 1 only): per split and row, the normalised partial output (fp32,
  // head_dim values) and its log-sum-exp.
  float* o_partial = nullptr;    // [splits][rows][head_dim]
  float* lse_partial = nullptr;  // [splits][rows]

  // PRODUCER variants: TMA descriptors of Q, K and V as 4-d tensors (head_dim, seq, heads, batch),
  // boxes of 64 elements by BLOCK_M (Q) or BLOCK_N (K, V) rows, 128-byte swizzle; filled by the
  // launcher. The kernel reads them from its parameter space (__grid_constant__).
  CUtensorMap tma_q{}, tma_k{}, tma_v{};
};

// The element type as the spaces' problem dim `dtype` names it ("bf16", "fp16").
constexpr const char* dtype_name(AttentionDType dtype) { return dtype == AttentionDType::bf16 ? "bf16" : "fp16"; }

// The kernels' parameters for a call (grid fields left to launch()).
inline ForwardParams params_for(const AttentionParams& a) {
  ForwardParams p;
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.o = a.o;
  p.lse = a.lse;
  p.q_batch_stride = a.q_strides.batch;
  p.q_head_stride = a.q_strides.head;
  p.q_seq_stride = a.q_strides.seq;
  p.k_batch_stride = a.k_strides.batch;
  p.k_head_stride = a.k_strides.head;
  p.k_seq_stride = a.k_strides.seq;
  p.v_batch_stride = a.v_strides.batch;
  p.v_head_stride = a.v_strides.head;
  p.v_seq_stride = a.v_strides.seq;
  p.o_batch_stride = a.o_strides.batch;
  p.o_head_stride = a.o_strides.head;
  p.o_seq_stride = a.o_strides.seq;
  p.batch = a.batch;
  p.heads_q = a.heads_q;
  p.heads_kv = a.heads_kv;
  p.seq_q = a.seq_q;
  p.seq_k = a.seq_k;
  p.group = a.heads_q / a.heads_kv;
  p.scale = a.scale;
  p.scale_log2 = a.scale * 1.4426950408889634f;
  return p;
}

}  // namespace kiln::attention
