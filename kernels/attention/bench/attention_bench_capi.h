/* C ABI of the attention benchmark library, for ctypes: the public kiln::attention_forward (the
 * variant the build dispatches to) and every variant compiled into the library by name, so that
 * Kiln and PyTorch are timed by one method in one process. Returns 0 on success; otherwise
 * kiln_attention_bench_error() says why. */
#ifndef KILN_ATTENTION_BENCH_CAPI_H
#define KILN_ATTENTION_BENCH_CAPI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse; /* may be null */
  int32_t dtype; /* 0: bf16, 1: fp16 */
  int32_t batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
  int32_t causal;
  float scale;
  int64_t q_strides[3], k_strides[3], v_strides[3], o_strides[3]; /* batch, head, seq (elements) */
  void* workspace; /* may be null */
  size_t workspace_bytes;
} KilnAttentionCall;

int kiln_attention_bench_forward(const KilnAttentionCall* call, void* stream);
size_t kiln_attention_bench_workspace_bytes(const KilnAttentionCall* call);
const char* kiln_attention_bench_dispatched(const KilnAttentionCall* call);

int kiln_attention_bench_variant_count(void);
const char* kiln_attention_bench_variant_name(int index);
int kiln_attention_bench_variant_head_dim(int index);
int kiln_attention_bench_forward_variant(int index, const KilnAttentionCall* call, void* stream);
size_t kiln_attention_bench_variant_workspace_bytes(int index, const KilnAttentionCall* call);

/* index -1: the public API; -2: an empty kernel launched the same way (the floor of this
 * measurement: launch cost, no work); reps >= 1. Median device-side time (events around one call,
 * device idle before it) and median host time of the call itself, in microseconds. */
int kiln_attention_bench_latency(int index, const KilnAttentionCall* call, void* stream, int reps, double* device_us,
                                 double* host_us);

const char* kiln_attention_bench_error(void);

#ifdef __cplusplus
}
#endif
#endif
