// kiln::attention_forward: argument checks, then the variant Kiln chose for the problem. Decoding
// calls (seq_q <= kDecodeMaxQueries) go to the family kiln/tuned/attention_decode.hpp, the others
// to kiln/tuned/attention.hpp; each switches on the head dimension and asks that member's header
// (kiln/tuned/attention_d<D>.hpp or attention_decode_d<D>.hpp, generated at build time from the
// tuning or its record).
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "attention_device.hpp"
#include "attention_launch.cuh"
#include "attention_params.cuh"
#include "kiln/attention.hpp"
#include "kiln/tuned/attention.hpp"
#include "kiln/tuned/attention_decode.hpp"

namespace kiln {
namespace {

using attention::ForwardParams;
using attention::params_for;
using attention::sm_count;
namespace family = tuned::attention;
namespace decode_family = tuned::attention_decode;

[[noreturn]] void reject(const std::string& what) { throw AttentionError("kiln::attention_forward: " + what); }

void check_strides(const char* name, const AttentionStrides& s) {
  const std::int64_t limit = (std::int64_t{1} << 31) / attention::kMaxBlock;  // in-tile offsets are 32-bit
  for (std::int64_t x : {s.batch, s.head, s.seq}) {
    if (x % 8 != 0) {
      reject(std::string(name) + " strides must be multiples of 8 elements (16-byte rows), got {" +
             std::to_string(s.batch) + ", " + std::to_string(s.head) + ", " + std::to_string(s.seq) + "}");
    }
    if (x < 0) reject(std::string(name) + " strides must not be negative");
  }
  if (s.seq >= limit) reject(std::string(name) + " sequence stride must be below " + std::to_string(limit) + " elements");
}

void check_pointer(const char* name, const void* p, bool required) {
  if (p == nullptr) {
    if (required) reject(std::string(name) + " is null");
    return;
  }
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) reject(std::string(name) + " must be 16-byte aligned");
}

void validate(const AttentionParams& a) {
  check_pointer("q", a.q, true);
  check_pointer("k", a.k, true);
  check_pointer("v", a.v, true);
  check_pointer("o", a.o, true);
  check_pointer("lse", a.lse, false);
  check_pointer("workspace", a.workspace, false);
  if (a.dtype != AttentionDType::bf16 && a.dtype != AttentionDType::fp16) reject("dtype must be bf16 or fp16");
  if (!family::has_key(a.head_dim)) {
    reject("head_dim " + std::to_string(a.head_dim) + " is not supported (supported: " + family::keys_text + ")");
  }
  if (a.batch < 1 || a.heads_q < 1 || a.heads_kv < 1 || a.seq_q < 1 || a.seq_k < 1) {
    reject("batch, heads_q, heads_kv, seq_q and seq_k must all be >= 1");
  }
  if (a.batch > 65535 || a.heads_q > 65535) reject("batch and heads_q must be <= 65535 (grid limits)");
  if (a.heads_q % a.heads_kv != 0) {
    reject("heads_q (" + std::to_string(a.heads_q) + ") must be a multiple of heads_kv (" + std::to_string(a.heads_kv) + ")");
  }
  if (!std::isfinite(a.scale) || a.scale <= 0.f) reject("scale must be finite and > 0 (1/sqrt(head_dim) is usual)");
  check_strides("q", a.q_strides);
  check_strides("k", a.k_strides);
  check_strides("v", a.v_strides);
  check_strides("o", a.o_strides);
}

// Whether a family's problem names the grouped-query heads per key/value head (G, the decode
// spaces: their domain is drawn over G and Hkv) rather than the query heads (Hq).
template <class Problem, class = void>
struct NamesGroup : std::false_type {};
template <class Problem>
struct NamesGroup<Problem, std::void_t<decltype(Problem::G)>> : std::true_type {};

// The call as a family's problem, field by field: the families' spaces name their dims alike but
// for Hq and G.
template <class Problem>
Problem to_problem(const AttentionParams& a) {
  Problem p{};
  p.B = a.batch;
  p.Hkv = a.heads_kv;
  if constexpr (NamesGroup<Problem>::value) {
    p.G = a.heads_q / a.heads_kv;  // validate() made heads_q a multiple of heads_kv
  } else {
    p.Hq = a.heads_q;
  }
  p.Sq = a.seq_q;
  p.Sk = a.seq_k;
  p.dtype = ::kiln::Choice{attention::dtype_name(a.dtype)};
  p.mask = ::kiln::Choice{a.causal ? "causal" : "full"};
  p.layout = ::kiln::Choice{a.q_strides.seq == a.head_dim ? "bhsd" : "bshd"};
  return p;
}

// Calls `launch(config, q)` with the variant the tuning chose for the call's problem, from the
// decode family for a head dimension it has and few enough queries, else from the attention
// family, and `p` readied for it (attention::prepare: its TMA descriptors); with the member space's
// default variant (mma.sync: it runs on every device the library is built for, with every stride
// the API accepts) where the chosen one cannot run the call here.
template <class Launch>
auto dispatch(const AttentionParams& a, const ForwardParams& p, Launch&& launch) {
  auto launch_default = [&](auto config) {
    static_assert(!attention::Traits<decltype(config)>::kWgmma, "a space's default variant must run on every device");
    return launch(config, p);
  };
  auto readied = [&](auto config, auto dispatch_default) {
    ForwardParams q = p;
    if (attention::prepare<decltype(config)>(q, a.dtype)) return launch(config, q);
    return dispatch_default(a.head_dim, launch_default);
  };
  if (a.seq_q <= attention::kDecodeMaxQueries && decode_family::has_key(a.head_dim)) {
    return decode_family::dispatch(a.head_dim, to_problem<decode_family::Problem>(a), [&](auto config) {
      return readied(config, [](auto key, auto&& f) { return decode_family::dispatch_default(key, f); });
    });
  }
  return family::dispatch(a.head_dim, to_problem<family::Problem>(a), [&](auto config) {
    return readied(config, [](auto key, auto&& f) { return family::dispatch_default(key, f); });
  });
}

}  // namespace

void attention_forward(const AttentionParams& params, cudaStream_t stream) {
  validate(params);
  const ForwardParams p = params_for(params);
  const int sms = sm_count();
  const cudaError_t status = dispatch(params, p, [&](auto config, const ForwardParams& readied) {
    using Config = decltype(config);
    return attention::enqueue<Config>(readied, params.dtype, params.causal, params.workspace, params.workspace_bytes,
                                      sms, stream);
  });
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("kiln::attention_forward: launch failed: ") + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
  }
}

std::size_t attention_workspace_bytes(const AttentionParams& params) {
  validate(params);
  const ForwardParams p = params_for(params);
  const int sms = sm_count();
  return dispatch(params, p, [&](auto config, const ForwardParams& readied) {
    return attention::scratch_bytes_for<decltype(config)>(readied, sms);
  });
}

const char* attention_variant_name(const AttentionParams& params) {
  validate(params);
  return dispatch(params, params_for(params),
                  [](auto config, const ForwardParams&) -> const char* { return decltype(config)::kiln_name; });
}

}  // namespace kiln
