// One attention problem as the workload, the references and the tests see it: sizes, element
// type, mask and memory layout, and the element strides that layout implies.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "attention_launch.cuh"
#include "attention_params.cuh"
#include "kiln/error.hpp"
#include "kiln/problem.hpp"

namespace kiln::attention {

// bshd: [batch, seq, heads, head_dim] (heads interleaved in each row of the sequence);
// bhsd: [batch, heads, seq, head_dim] (each head's sequence contiguous).
enum class Layout { bshd, bhsd };

struct Strides {
  std::int64_t batch = 0, head = 0, seq = 0;
};

struct Shape {
  int batch = 1, heads_q = 1, heads_kv = 1, seq_q = 1, seq_k = 1, head_dim = 64;
  ElementType element = ElementType::bf16;
  bool causal = false;
  Layout layout = Layout::bshd;

  std::int64_t rows() const { return static_cast<std::int64_t>(batch) * heads_q * seq_q; }
  std::int64_t q_elems() const { return rows() * head_dim; }
  std::int64_t kv_elems() const { return static_cast<std::int64_t>(batch) * heads_kv * seq_k * head_dim; }
  Strides strides(int heads, int seq) const {
    if (layout == Layout::bshd) {
      return {static_cast<std::int64_t>(seq) * heads * head_dim, head_dim, static_cast<std::int64_t>(heads) * head_dim};
    }
    return {static_cast<std::int64_t>(heads) * seq * head_dim, static_cast<std::int64_t>(seq) * head_dim, head_dim};
  }
  Strides q_strides() const { return strides(heads_q, seq_q); }
  Strides kv_strides() const { return strides(heads_kv, seq_k); }
  // Keys query i sees: j < visible_keys(i) (bottom-right aligned causal mask); may be <= 0.
  int visible_keys(int i) const {
    if (!causal) return seq_k;
    const std::int64_t limit = static_cast<std::int64_t>(i) + seq_k - seq_q + 1;
    return static_cast<int>(limit < 0 ? 0 : (limit > seq_k ? seq_k : limit));
  }
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }

  std::string describe() const {
    return "B=" + std::to_string(batch) + " Hq=" + std::to_string(heads_q) + " Hkv=" + std::to_string(heads_kv) +
           " Sq=" + std::to_string(seq_q) + " Sk=" + std::to_string(seq_k) + " D=" + std::to_string(head_dim) +
           (element == ElementType::bf16 ? " bf16" : " fp16") + (causal ? " causal" : " full") +
           (layout == Layout::bshd ? " bshd" : " bhsd");
  }
};

// The space's problem dims: B, Hq, Hkv, Sq, Sk (int), dtype (bf16|fp16), mask (full|causal),
// layout (bshd|bhsd). The head dimension is the space's, not the problem's.
inline Shape shape_from_problem(const kiln::Problem& problem, int head_dim) {
  Shape s;
  auto dim = [&](const char* name) {
    const std::int64_t v = problem.i(name);
    if (v < 1 || v > (std::int64_t{1} << 30)) throw kiln::Error(std::string("attention: dimension ") + name + " out of range");
    return static_cast<int>(v);
  };
  s.batch = dim("B");
  s.heads_q = dim("Hq");
  s.heads_kv = dim("Hkv");
  s.seq_q = dim("Sq");
  s.seq_k = dim("Sk");
  s.head_dim = head_dim;
  if (s.heads_q % s.heads_kv != 0) throw kiln::Error("attention: Hq must be a multiple of Hkv");
  const std::string& dtype = problem.s("dtype");
  if (dtype == "bf16") {
    s.element = ElementType::bf16;
  } else if (dtype == "fp16") {
    s.element = ElementType::fp16;
  } else {
    throw kiln::Error("attention: dtype must be bf16 or fp16, got " + dtype);
  }
  const std::string& mask = problem.s("mask");
  if (mask != "full" && mask != "causal") throw kiln::Error("attention: mask must be full or causal, got " + mask);
  s.causal = mask == "causal";
  const std::string& layout = problem.s("layout");
  if (layout != "bshd" && layout != "bhsd") throw kiln::Error("attention: layout must be bshd or bhsd, got " + layout);
  s.layout = layout == "bshd" ? Layout::bshd : Layout::bhsd;
  return s;
}

// Kernel parameters for a shape over contiguous buffers in its layout (grid fields left to launch()).
inline ForwardParams params_for(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse) {
  ForwardParams p;
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  p.lse = lse;
  const Strides qs = s.q_strides();
  const Strides kvs = s.kv_strides();
  p.q_batch_stride = p.o_batch_stride = qs.batch;
  p.q_head_stride = p.o_head_stride = qs.head;
  p.q_seq_stride = p.o_seq_stride = qs.seq;
  p.k_batch_stride = p.v_batch_stride = kvs.batch;
  p.k_head_stride = p.v_head_stride = kvs.head;
  p.k_seq_stride = p.v_seq_stride = kvs.seq;
  p.batch = s.batch;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.seq_q = s.seq_q;
  p.seq_k = s.seq_k;
  p.group = s.heads_q / s.heads_kv;
  p.scale = s.scale();
  p.scale_log2 = p.scale * 1.4426950408889634f;
  return p;
}

}  // namespace kiln::attention
