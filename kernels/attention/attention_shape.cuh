// One attention problem as the workload, the references and the tests see it: sizes, element
// type, mask and memory layout, the element strides that layout implies, and the public call's
// parameters over contiguous buffers in that layout.
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
  AttentionDType dtype = AttentionDType::bf16;
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

  // The public call's parameters for this problem over contiguous buffers in its layout.
  AttentionParams attention_params(const void* q, const void* k, const void* v, void* o, float* lse) const {
    AttentionParams a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.o = o;
    a.lse = lse;
    a.dtype = dtype;
    a.batch = batch;
    a.heads_q = heads_q;
    a.heads_kv = heads_kv;
    a.seq_q = seq_q;
    a.seq_k = seq_k;
    a.head_dim = head_dim;
    const Strides qs = q_strides();
    const Strides kvs = kv_strides();
    a.q_strides = a.o_strides = {qs.batch, qs.head, qs.seq};
    a.k_strides = a.v_strides = {kvs.batch, kvs.head, kvs.seq};
    a.causal = causal;
    a.scale = scale();
    return a;
  }

  std::string describe() const {
    return "B=" + std::to_string(batch) + " Hq=" + std::to_string(heads_q) + " Hkv=" + std::to_string(heads_kv) +
           " Sq=" + std::to_string(seq_q) + " Sk=" + std::to_string(seq_k) + " D=" + std::to_string(head_dim) +
           " " + dtype_name(dtype) + (causal ? " causal" : " full") +
           (layout == Layout::bshd ? " bshd" : " bhsd");
  }
};

// The space's problem dims: B, Hq, Hkv, Sq, Sk (int), dtype (bf16|fp16), mask (full|causal),
// layout (bshd|bhsd); or G, the grouped-query heads per key/value head, in place of Hq (Hq = G ·
// Hkv: a domain over G and Hkv holds only grouped shapes, where one over Hq and Hkv would mostly
// draw pairs that do not divide). The head dimension is the space's, not the problem's.
inline Shape shape_from_problem(const kiln::Problem& problem, int head_dim) {
  Shape s;
  auto dim = [&](const char* name) {
    const std::int64_t v = problem.i(name);
    if (v < 1 || v > (std::int64_t{1} << 30)) throw kiln::Error(std::string("attention: dimension ") + name + " out of range");
    return static_cast<int>(v);
  };
  s.batch = dim("B");
  s.heads_kv = dim("Hkv");
  if (problem.has("G")) {
    const std::int64_t heads_q = std::int64_t{dim("G")} * s.heads_kv;
    if (heads_q > (std::int64_t{1} << 30)) throw kiln::Error("attention: G * Hkv out of range");
    s.heads_q = static_cast<int>(heads_q);
  } else {
    s.heads_q = dim("Hq");
  }
  s.seq_q = dim("Sq");
  s.seq_k = dim("Sk");
  s.head_dim = head_dim;
  if (s.heads_q % s.heads_kv != 0) throw kiln::Error("attention: Hq must be a multiple of Hkv");
  const std::string& dtype = problem.s("dtype");
  if (dtype == dtype_name(AttentionDType::bf16)) {
    s.dtype = AttentionDType::bf16;
  } else if (dtype == dtype_name(AttentionDType::fp16)) {
    s.dtype = AttentionDType::fp16;
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

}  // namespace kiln::attention
