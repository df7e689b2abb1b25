// Row top-k, tuned at build time: the k largest (or smallest) values of each row of a rows x n
// row-major fp32 matrix, with their column indices (int64), both rows x k, sorted best first.
//
// Order: values are ranked by a total order in which NaN (any sign or payload) is larger than
// +inf, -0.0 equals +0.0, and equal values rank by lower index first. `largest` returns the k
// highest in that order, highest first (NaNs first); `smallest` the k lowest, lowest first (NaNs
// only when fewer than k other values exist, last). This is torch.topk's NaN rule, with ties
// made deterministic. A returned value is the input element itself, bit for bit (NaN payloads
// and the sign of zero included).
//
// Sizes: rows >= 0 (0 does nothing), 1 <= n <= kTopkMaxN, 1 <= k <= n; CUDA also k <= kTopkMaxK.
// Every function checks its arguments first and throws kiln::TopkError (naming the function and
// the argument) for bad ones: negative sizes, k out of range, null pointers with non-zero sizes,
// misaligned pointers, states of different shapes merged. Nothing is read or written then.
//
// Streaming: a TopkState holds O(k) entries per row. feed() takes a chunk [rows, chunk_n] whose
// column c has the global index offset + c; merge() combines two states exactly (chunks fed to
// different states, threads, streams or devices); finalize() writes the same values and indices,
// bit for bit, as the one-shot call over the concatenated columns, whatever the chunking and the
// merge order, provided no global index is fed twice.
//
// The CPU functions run synchronously on every OpenMP thread. The CUDA functions (declared when
// KILN_HAVE_CUDA is defined or when compiled by nvcc) take device pointers, enqueue their kernels
// on `stream` and return the launch status.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace kiln {

enum class TopkMode { largest, smallest };

inline constexpr std::int64_t kTopkMaxN = 2147483647;  // column indices fit 31 bits
inline constexpr std::int64_t kTopkMaxK = 2048;         // the CUDA kernels' limit

// Invalid arguments; the message names the function, the argument and what is accepted.
class TopkError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// O(k) top-k state per row, for chunked and distributed inputs (see above).
class TopkState {
 public:
  TopkState(std::int64_t rows, std::int64_t k, TopkMode mode);

  // chunk: rows x chunk_n, row-major (row r at chunk + r * chunk_n); offset >= 0 is the global
  // index of its first column. chunk_n == 0 does nothing. Selects with the tuned CPU top-k.
  void feed(const float* chunk, std::int64_t chunk_n, std::int64_t offset);

  // Adds candidates already selected from a chunk of `elements` columns per row: per row `count`
  // values and their global indices (rows x count, row-major), count == min(k, elements), as a
  // top-k call over that chunk returns them. The CUDA feed uses it.
  void feed_selected(const float* values, const std::int64_t* indices, std::int64_t count, std::int64_t elements);

  // Adds other's entries; other must have the same rows, k and mode.
  void merge(const TopkState& other);

  // values, indices: rows x k. Needs at least k elements fed per row (seen() >= k).
  void finalize(float* values, std::int64_t* indices) const;

  std::int64_t rows() const { return rows_; }
  std::int64_t k() const { return k_; }
  TopkMode mode() const { return mode_; }
  std::int64_t seen() const { return seen_; }  // elements fed per row, merges included

 private:
  struct Entry {
    std::uint32_t key;   // order-preserving key (topk_order.hpp); higher ranks first
    std::int64_t index;  // global column index; lower ranks first among equal keys
    float value;         // the input element
  };
  void absorb(std::int64_t row, std::vector<Entry>& incoming);

  std::int64_t rows_, k_;
  TopkMode mode_;
  std::int64_t seen_ = 0;
  std::vector<std::vector<Entry>> best_;  // per row, at most k entries, best first
};

}  // namespace kiln

namespace kiln::cpu {

// in: rows x n; values: rows x k; indices: rows x k.
void topk(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode, float* values,
          std::int64_t* indices);

}  // namespace kiln::cpu

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
namespace kiln::cuda {

// Device workspace the call needs for this problem (0 when the tuned variant keeps each row in
// one block); 8-byte aligned.
std::size_t topk_workspace_bytes(std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode);

// in: rows x n; values: rows x k (4-byte aligned); indices: rows x k (8-byte aligned); all on the
// device. workspace: at least topk_workspace_bytes(...) bytes (nullptr when that is 0).
cudaError_t topk(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode, float* values,
                 std::int64_t* indices, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

// Streaming on the device: selects the chunk's top-min(k, chunk_n) per row with the tuned CUDA
// top-k (device chunk, rows x chunk_n), copies the candidates to the host and adds them to
// `state` (state.feed_selected). Synchronises `stream`; allocates its buffers on it.
cudaError_t topk_feed(TopkState& state, const float* chunk, std::int64_t chunk_n, std::int64_t offset,
                      cudaStream_t stream);

}  // namespace kiln::cuda
#endif
