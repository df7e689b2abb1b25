// FlashAttention-2 forward pass on mma.sync tensor cores.
//
// One thread block owns BLOCK_M query rows of one (batch, head) and, when the keys are split, one
// range of key tiles. Warp w owns rows [w·R, (w+1)·R) of the block (R = BLOCK_M / WARPS), so its
// S = Q·Kᵀ and O rows never leave its registers; with KEY_WARPS > 1 each row group has that many
// warps, each taking its own slice of every key tile with its own m, l and O, merged through
// shared memory after the key loop. The block walks its key tiles from the last to
// the first (the tiles that need masking come first), STAGES-1 tiles ahead through cp.async, and
// keeps per row the running maximum m and sum l of the online softmax, in fp32:
//   m' = max(m, rowmax(S)),  P = 2^(S·c − m'·c),  l' = l·2^((m − m')·c) + rowsum(P),
//   O' = O·2^((m − m')·c) + P·V,  with c = scale·log2(e).
// At the end O/l is written (or, for a split, O/l and its log-sum-exp go to fp32 scratch and the
// combine kernel below merges the splits; or, when the splits are the blocks of one cluster, they
// merge through distributed shared memory in the same launch).
#pragma once
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "attention_params.cuh"
#include "attention_ptx.cuh"
#include "attention_traits.cuh"

namespace kiln::attention {

namespace detail {

inline constexpr float kNegInf = -__builtin_huge_valf();

// Copies `kRows` rows of a [rows, head_dim] tile (row stride `stride` elements) into swizzled
// shared memory; rows at or past `rows_valid` are zero-filled. A thread copies the same 16-byte
// chunk of every kRowsPerPass-th row, so its addresses advance by constants.
template <class T, int kRows, class Element>
__device__ __forceinline__ void load_tile(Element* smem, const Element* gmem, int stride, int rows_valid, int tid) {
  constexpr int kRowsPerPass = T::kThreads / T::kChunksPerRow;
  static_assert(T::kThreads % T::kChunksPerRow == 0 && kRows % kRowsPerPass == 0,
                "tile chunks must divide among the threads");
  const int row = tid / T::kChunksPerRow;
  const int chunk = tid % T::kChunksPerRow;
  // One running pointer rather than kRows / kRowsPerPass offsets from a base: the offsets are loop
  // invariants of the key loop, and the compiler kept them all live in registers (D=128, 128x64
  // tiles: 88 -> 56 bytes of spills with the running pointer).
  const Element* src = gmem + row * stride + chunk * 8;
  const int step = kRowsPerPass * stride;
#pragma unroll
  for (int i = 0; i < kRows / kRowsPerPass; ++i) {
    const int r = row + i * kRowsPerPass;
    const bool valid = r < rows_valid;
    ptx::cp_async_16(ptx::smem_address(smem + swizzle<T::kHeadDim>(r, chunk)), valid ? src : gmem, valid);
    src += step;
  }
}

// Byte address of k16 step `step` (16-column slice `step`) of a 16-row tile slice, from the
// address of step 0 (`base`, this lane's swizzle<>(row, c), c = 0 or 1, in a 128-byte-aligned tile).
// Column chunk 2·step + lane/16 lies in 8-chunk group step/4 at pair step%4; the swizzle XORs the
// low three chunk bits, so moving by whole pairs is an XOR of address bits 5-6 and moving by whole
// groups adds 128 bytes. One LOP3 per ldmatrix instead of one live register per step.
__device__ __forceinline__ std::uint32_t step_address(std::uint32_t base, int step) {
  return (base ^ static_cast<std::uint32_t>((step & 3) << 5)) + static_cast<std::uint32_t>((step >> 2) * 128);
}

// The Q tile of a block whose rows are (query, head) pairs of one key/value head (packed grouped
// query heads): row r is packed row row0 + r, query (row0 + r) / group, head
// head_kv · group + (row0 + r) mod group. Loaded once per block, so each row's address is computed.
template <class T, int kRows, class Element>
__device__ __forceinline__ void load_packed_q(Element* smem, const Element* q_batch, const ForwardParams& p, int head_kv,
                                              int row0, int rows_valid, int tid) {
  constexpr int kRowsPerPass = T::kThreads / T::kChunksPerRow;
  const int row = tid / T::kChunksPerRow;
  const int chunk = tid % T::kChunksPerRow;
#pragma unroll
  for (int i = 0; i < kRows / kRowsPerPass; ++i) {
    const int r = row + i * kRowsPerPass;
    const bool valid = r < rows_valid;
    const int packed_row = row0 + r;
    const int query = packed_row / p.group;
    const int head = head_kv * p.group + (packed_row - query * p.group);
    const Element* src = q_batch + head * p.q_head_stride + query * p.q_seq_stride + chunk * 8;
    ptx::cp_async_16(ptx::smem_address(smem + swizzle<T::kHeadDim>(r, chunk)), valid ? src : q_batch, valid);
  }
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Where row `row` of a query block starting at row0 goes, for both forward kernels: its row of
// the log-sum-exp and of the split scratch ((batch · heads_q + head) · seq_q + query), and its
// output row. A packed block's rows are (query, head) pairs of key/value head head_kv's group.
template <class Element>
struct OutputRows {
  const ForwardParams& p;
  bool packed;
  int batch, head, head_kv, row0;

  __device__ __forceinline__ std::int64_t index(int row) const {
    if (!packed) return (static_cast<std::int64_t>(batch) * p.heads_q + head) * p.seq_q + row0 + row;
    const int query = (row0 + row) / p.group;
    const int head_q = head_kv * p.group + (row0 + row - query * p.group);
    return (static_cast<std::int64_t>(batch) * p.heads_q + head_q) * p.seq_q + query;
  }
  __device__ __forceinline__ Element* output(int row) const {
    Element* const o_batch = static_cast<Element*>(p.o) + batch * p.o_batch_stride;
    if (!packed) return o_batch + head * p.o_head_stride + (row0 + row) * p.o_seq_stride;
    const int query = (row0 + row) / p.group;
    const int head_q = head_kv * p.group + (row0 + row - query * p.group);
    return o_batch + head_q * p.o_head_stride + query * p.o_seq_stride;
  }
};

}  // namespace detail

template <class T, class Element, bool kCausal>
__global__ void __launch_bounds__(T::kThreads) attention_forward_kernel(const ForwardParams p) {
  constexpr int D = T::kHeadDim;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  Element* const sQ = reinterpret_cast<Element*>(smem_raw);
  Element* const sKV = sQ + T::kQElems;  // stage s: K at s·kStageElems, V kKVTileElems further

  const int tid = threadIdx.x;
  // The row group, and its slice of each key tile. With one key warp both are written as they
  // were before KEY_WARPS, so that those variants compile to the same code as then.
  const int warp = T::kKeyWarps > 1 ? tid / 32 % T::kWarps : tid / 32;
  const int key_warp = T::kKeyWarps > 1 ? tid / 32 / T::kWarps : 0;
  const int lane = tid % 32;
  const int g = lane / 4;          // fragment row within an 8-row group
  const int t = lane % 4;          // fragment column pair
  const int lm_row = lane % 16;    // ldmatrix.x4: row within the 16-row tile this lane addresses
  const int lm_chunk = lane / 16;  // ... and which 8-column half

  // A cluster's blocks are consecutive in x: there the split is the block's rank in its cluster.
  const bool clustered = T::kCluster > 0 && p.cluster;
  const int split = clustered ? static_cast<int>(blockIdx.x) % p.splits : static_cast<int>(blockIdx.x) / p.m_blocks;
  int m_block = clustered ? static_cast<int>(blockIdx.x) / p.splits : static_cast<int>(blockIdx.x) - split * p.m_blocks;
  // Causal blocks lower in the matrix see more keys: start those first so the grid's tail is short.
  if constexpr (kCausal) m_block = p.m_blocks - 1 - m_block;
  // Packed, blockIdx.y is the key/value head and a block's rows are (query, head) pairs of its
  // group (ForwardParams::packed); otherwise it is the query head and rows are queries.
  // Only PACK_GQA variants pack: the others keep one row per query at compile time.
  const bool packed = T::kPackGqa && p.packed;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const int head_kv = packed ? head : head / p.group;
  const int rows_per_query = packed ? p.group : 1;  // block rows per query

  const int row0 = m_block * T::kBlockM;
  const int rows_valid = min(T::kBlockM, p.seq_q * rows_per_query - row0);
  const int diagonal = p.seq_k - p.seq_q;  // causal: query i sees keys j <= i + diagonal
  const int first_query = row0 / rows_per_query;

  // Key tiles this block visits: [n_begin, n_end).
  int n_end = p.n_blocks;
  if constexpr (kCausal) {
    const int last_col = (row0 + rows_valid - 1) / rows_per_query + diagonal;
    n_end = last_col < 0 ? 0 : min(p.n_blocks, last_col / T::kBlockN + 1);
  }
  const int n_begin = split * p.tiles_per_split;
  n_end = min(n_end, n_begin + p.tiles_per_split);
  const int n_tiles = n_end - n_begin;  // may be <= 0: an empty causal split or fully masked rows

  const Element* const q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride +
                           row0 * p.q_seq_stride;
  const Element* const k = static_cast<const Element*>(p.k) + batch * p.k_batch_stride + head_kv * p.k_head_stride;
  const Element* const v = static_cast<const Element*>(p.v) + batch * p.v_batch_stride + head_kv * p.v_head_stride;

  auto load_kv = [&](int stage, int n_block) {
    const int key0 = n_block * T::kBlockN;
    const int keys_valid = min(T::kBlockN, p.seq_k - key0);
    Element* const sK = sKV + stage * T::kStageElems;
    detail::load_tile<T, T::kBlockN>(sK, k + key0 * p.k_seq_stride, static_cast<int>(p.k_seq_stride), keys_valid,
                                     tid);
    detail::load_tile<T, T::kBlockN>(sK + T::kKVTileElems, v + key0 * p.v_seq_stride, static_cast<int>(p.v_seq_stride),
                                     keys_valid, tid);
  };

  float acc_o[T::kMTiles][T::kDTiles][4];
  float row_max[T::kMTiles][2];
  float row_sum[T::kMTiles][2];  // this thread's share; the quad's four shares are added at the end
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int dt = 0; dt < T::kDTiles; ++dt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][dt][e] = 0.f;
    }
    row_max[mt][0] = row_max[mt][1] = detail::kNegInf;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }

  const int warp_row0 = warp * T::kRowsPerWarp;  // first row of this warp within the block
  // This lane's ldmatrix addresses at k-step 0; other steps and tiles follow by step_address()
  // and constant offsets (every tile and row starts on a 128-byte boundary).
  constexpr std::uint32_t kRow16Bytes = 16 * D * 2;  // 16 rows of a tile
  const std::uint32_t q_lane = ptx::smem_address(sQ + swizzle<D>(warp_row0 + lm_row, lm_chunk));
  // A key warp's slice starts kWarpN rows (a multiple of 8: the swizzle repeats) into the tile.
  const int slice_row = key_warp * T::kWarpN;
  const std::uint32_t v_lane0 = ptx::smem_address(sKV + T::kKVTileElems + swizzle<D>(slice_row + lm_row, lm_chunk));
  // K is the B operand of Q·Kᵀ, which takes two consecutive registers. Lanes 0-7 and 8-15 address
  // keys 0-7 at k-columns 0-7 and 8-15, lanes 16-31 keys 8-15: registers {0,1} of the x4 load are
  // then key tile 2np's fragment and {2,3} key tile 2np+1's, in place. (With Q's lane order, the
  // pairs were {0,2} and {1,3}, and ptxas spent ~250 register moves per key tile regrouping them.)
  const int k_row = (lane & 7) + ((lane >> 4) << 3);
  const int k_chunk = (lane >> 3) & 1;
  const std::uint32_t k_lane0 = ptx::smem_address(sKV + swizzle<D>(slice_row + k_row, k_chunk));

  if (n_tiles > 0) {
    // Prologue: Q (group 0), then key tiles 0 .. STAGES-2 (one group each, empty groups included,
    // so that "tile i is group i+1" holds for the wait below).
    if (packed) {
      detail::load_packed_q<T, T::kBlockM>(sQ, static_cast<const Element*>(p.q) + batch * p.q_batch_stride, p, head_kv,
                                           row0, rows_valid, tid);
    } else {
      detail::load_tile<T, T::kBlockM>(sQ, q, static_cast<int>(p.q_seq_stride), rows_valid, tid);
    }
    ptx::cp_async_commit();
#pragma unroll
    for (int s = 0; s < T::kStages - 1; ++s) {
      if (s < n_tiles) load_kv(s, n_end - 1 - s);
      ptx::cp_async_commit();
    }

    // The first Q_REG_STEPS k-steps of Q stay in registers for the whole key loop: each one saves a
    // warp kMTiles ldmatrix.x4 per key tile, at 4·kMTiles registers per thread.
    std::uint32_t q_frag[T::kMTiles][T::kQRegSteps > 0 ? T::kQRegSteps : 1][4];
    if constexpr (T::kQRegSteps > 0) {
      ptx::cp_async_wait<T::kStages - 1>();  // Q has landed (it is the oldest group)
      __syncthreads();
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int ks = 0; ks < T::kQRegSteps; ++ks) {
          ptx::ldmatrix_x4(q_frag[mt][ks], detail::step_address(q_lane, ks) + mt * kRow16Bytes);
        }
      }
    }

    for (int it = 0; it < n_tiles; ++it) {
      // Tile `it` has landed for every thread, and every warp is done with the stage the
      // prefetch below overwrites (it was read in iteration it-1).
      ptx::cp_async_wait<T::kStages - 2>();
      __syncthreads();
      {
        const int ahead = it + T::kStages - 1;
        if (ahead < n_tiles) load_kv(ahead % T::kStages, n_end - 1 - ahead);
        ptx::cp_async_commit();
      }

      const int n_block = n_end - 1 - it;
      const std::uint32_t stage_offset = (it % T::kStages) * (T::kStageElems * 2);
      const std::uint32_t k_lane = k_lane0 + stage_offset;
      const std::uint32_t v_lane = v_lane0 + stage_offset;

      // S = Q·Kᵀ for this warp's rows and its kWarpN keys of the tile.
      float s[T::kMTiles][T::kNTiles][4];
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < T::kNTiles; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
        }
      }
#pragma unroll
      for (int ks = 0; ks < T::kKSteps; ++ks) {
        std::uint32_t a[T::kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < T::kMTiles; ++mt) {
          if (ks < T::kQRegSteps) {  // ks is a compile-time index (unrolled)
#pragma unroll
            for (int r = 0; r < 4; ++r) a[mt][r] = q_frag[mt][ks][r];
          } else {
            ptx::ldmatrix_x4(a[mt], detail::step_address(q_lane, ks) + mt * kRow16Bytes);
          }
        }
#pragma unroll
        for (int np = 0; np < T::kNTiles / 2; ++np) {
          // Keys np·16 .. +15 by k-columns ks·16 .. +15: registers {0,1} are the B operand of
          // key tile 2np, {2,3} of key tile 2np+1.
          std::uint32_t b[4];
          ptx::ldmatrix_x4(b, detail::step_address(k_lane, ks) + np * kRow16Bytes);
#pragma unroll
          for (int mt = 0; mt < T::kMTiles; ++mt) {
            ptx::mma_16816<Element>(s[mt][2 * np], a[mt], b[0], b[1]);
            ptx::mma_16816<Element>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
          }
        }
      }

      // Masks: keys past seq_k, and (causal) keys right of the bottom-right-aligned diagonal.
      // Only the tiles that hold such keys pay for the test.
      const int key0 = n_block * T::kBlockN + slice_row;
      const bool tail_tile = key0 + T::kWarpN > p.seq_k;
      const bool diagonal_tile = kCausal && key0 + T::kWarpN - 1 > first_query + diagonal;
      if (tail_tile || diagonal_tile) {
#pragma unroll
        for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
          for (int nt = 0; nt < T::kNTiles; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int query = (row0 + warp_row0 + mt * 16 + g + (e / 2) * 8) / rows_per_query;
              const int col = key0 + nt * 8 + 2 * t + (e % 2);
              const bool masked = col >= p.seq_k || (kCausal && col > query + diagonal);
              if (masked) s[mt][nt][e] = detail::kNegInf;
            }
          }
        }
      }

      // Online softmax; thread rows are (mt, h): row g + 8h of m-tile mt, elements 2h and 2h+1.
      // P is rounded to 16 bits as soon as it exists: the S accumulators of key tiles 2ps and
      // 2ps+1 are exactly the A fragment of P·V k-step ps, so P never touches shared memory and
      // its fp32 copy dies early (fewer live registers next to the O accumulators).
      std::uint32_t p_frag[T::kMTiles][T::kPSteps][4];
      float correction[T::kMTiles][2];
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float m = row_max[mt][h];
#pragma unroll
          for (int nt = 0; nt < T::kNTiles; ++nt) m = fmaxf(m, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
          m = detail::quad_max(m);
          // A row with no visible key yet keeps m = -inf; subtracting 0 instead keeps -inf - -inf
          // (NaN) out, and its P, l and O all stay 0.
          const float m_scaled = m == detail::kNegInf ? 0.f : m * p.scale_log2;
          correction[mt][h] = ptx::exp2_approx(row_max[mt][h] * p.scale_log2 - m_scaled);
          row_max[mt][h] = m;
          float sum = 0.f;
#pragma unroll
          for (int nt = 0; nt < T::kNTiles; ++nt) {
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e) {
              s[mt][nt][e] = ptx::exp2_approx(fmaf(s[mt][nt][e], p.scale_log2, -m_scaled));
              sum += s[mt][nt][e];
            }
          }
          row_sum[mt][h] = row_sum[mt][h] * correction[mt][h] + sum;
#pragma unroll
          for (int ps = 0; ps < T::kPSteps; ++ps) {
            p_frag[mt][ps][h] = ptx::pack2<Element>(s[mt][2 * ps][2 * h], s[mt][2 * ps][2 * h + 1]);
            p_frag[mt][ps][2 + h] = ptx::pack2<Element>(s[mt][2 * ps + 1][2 * h], s[mt][2 * ps + 1][2 * h + 1]);
          }
        }
      }
      // O·2^((m − m')·c) on every tile. (Skipping the multiplies when no row maximum moved, behind
      // a warp vote, measured 3-14% slower: see README.md.)
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int dt = 0; dt < T::kDTiles; ++dt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_o[mt][dt][e] *= correction[mt][e / 2];
        }
      }

      // O += P·V.
#pragma unroll
      for (int ps = 0; ps < T::kPSteps; ++ps) {
#pragma unroll
        for (int dp = 0; dp < T::kDTiles / 2; ++dp) {
          // Keys ps·16 .. +15 by head columns dp·16 .. +15, transposed: registers {0,1} are the B
          // operand of column tile 2dp, {2,3} of column tile 2dp+1.
          std::uint32_t b[4];
          ptx::ldmatrix_x4_trans(b, detail::step_address(v_lane, dp) + ps * kRow16Bytes);
#pragma unroll
          for (int mt = 0; mt < T::kMTiles; ++mt) {
            ptx::mma_16816<Element>(acc_o[mt][2 * dp], p_frag[mt][ps], b[0], b[1]);
            ptx::mma_16816<Element>(acc_o[mt][2 * dp + 1], p_frag[mt][ps], b[2], b[3]);
          }
        }
      }
    }
  }
  // No copy may still be writing the Q tile, which the epilogue below reuses.
  ptx::cp_async_wait<0>();
  __syncwarp();

  if constexpr (T::kKeyWarps > 1) {
    // The key warps of a row group merge into its first: each rescales its O and l to the rows'
    // common maximum, the others leave theirs in shared memory (over the tiles), the first adds
    // them. (Empty slices have m = -inf and O = l = 0: their weight is 0.)
    constexpr int kStride = T::kPartialStride;
    float* const merge_max = reinterpret_cast<float*>(smem_raw);            // [kKeyWarps][kBlockM]
    float* const merge_sum = merge_max + T::kKeyWarps * T::kBlockM;          // [kKeyWarps - 1][kBlockM]
    float* const merge_o = merge_sum + (T::kKeyWarps - 1) * T::kBlockM;     // [kKeyWarps - 1][kBlockM][kStride]
    __syncthreads();  // every warp is done with the last K/V tile and Q
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (t == 0) merge_max[key_warp * T::kBlockM + warp_row0 + mt * 16 + g + 8 * h] = row_max[mt][h];
      }
    }
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp_row0 + mt * 16 + g + 8 * h;
        float m = detail::kNegInf;
#pragma unroll
        for (int w = 0; w < T::kKeyWarps; ++w) m = fmaxf(m, merge_max[w * T::kBlockM + row]);
        const float m_scaled = m == detail::kNegInf ? 0.f : m * p.scale_log2;
        const float f = ptx::exp2_approx(row_max[mt][h] * p.scale_log2 - m_scaled);
        row_max[mt][h] = m;
        const float l = detail::quad_sum(row_sum[mt][h]) * f;
        if (key_warp == 0) {
          row_sum[mt][h] = t == 0 ? l : 0.f;  // the quad's sum, in one lane's share
        } else if (t == 0) {
          merge_sum[(key_warp - 1) * T::kBlockM + row] = l;
        }
#pragma unroll
        for (int dt = 0; dt < T::kDTiles; ++dt) {
          acc_o[mt][dt][2 * h] *= f;
          acc_o[mt][dt][2 * h + 1] *= f;
          if (key_warp > 0) {
            *reinterpret_cast<float2*>(merge_o + ((key_warp - 1) * T::kBlockM + row) * kStride + dt * 8 + 2 * t) =
                make_float2(acc_o[mt][dt][2 * h], acc_o[mt][dt][2 * h + 1]);
          }
        }
      }
    }
    __syncthreads();
    if (key_warp == 0) {
#pragma unroll
      for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = warp_row0 + mt * 16 + g + 8 * h;
#pragma unroll
          for (int w = 1; w < T::kKeyWarps; ++w) {
            if (t == 0) row_sum[mt][h] += merge_sum[(w - 1) * T::kBlockM + row];
#pragma unroll
            for (int dt = 0; dt < T::kDTiles; ++dt) {
              const float2 o = *reinterpret_cast<const float2*>(merge_o + ((w - 1) * T::kBlockM + row) * kStride + dt * 8 + 2 * t);
              acc_o[mt][dt][2 * h] += o.x;
              acc_o[mt][dt][2 * h + 1] += o.y;
            }
          }
        }
      }
    }
    __syncthreads();  // the merge area is read before the epilogue writes over it
  }
  // With KEY_WARPS > 1 the first key warp of each row group holds the rows' result; the others
  // take part only in the cluster's barriers and its merge of the splits.
  const bool holds_rows = T::kKeyWarps == 1 || key_warp == 0;

  // Epilogue. A row that saw no key (l = 0) gets O = 0 and log-sum-exp -inf.
  float inv_sum[T::kMTiles][2];
  float lse[T::kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = detail::quad_sum(row_sum[mt][h]);
      const bool seen = l > 0.f;
      inv_sum[mt][h] = seen ? 1.f / l : 0.f;
      lse[mt][h] = seen ? row_max[mt][h] * p.scale + logf(l) : detail::kNegInf;
    }
  }

  const std::int64_t rows_total = static_cast<std::int64_t>(p.batch) * p.heads_q * p.seq_q;
  const detail::OutputRows<Element> rows{p, packed, batch, head, head_kv, row0};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (T::kCluster > 0) {
    if (clustered) {
      // Each block leaves its normalised partial output and log-sum-exp in its own shared memory;
      // then the cluster's blocks share out the block's (row, 4 columns) items and merge the
      // splits' partials of each, read from every block's shared memory.
      namespace cg = cooperative_groups;
      cg::cluster_group cluster = cg::this_cluster();
      constexpr int kStride = T::kPartialStride;
      float* const part = reinterpret_cast<float*>(smem_raw);
      float* const part_lse = part + T::kBlockM * kStride;
      __syncthreads();  // every warp is done with Q and the last K/V tile, which `part` overwrites
      if (holds_rows) {
#pragma unroll
        for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = warp_row0 + mt * 16 + g + 8 * h;
#pragma unroll
            for (int dt = 0; dt < T::kDTiles; ++dt) {
              *reinterpret_cast<float2*>(part + row * kStride + dt * 8 + 2 * t) =
                  make_float2(acc_o[mt][dt][2 * h] * inv_sum[mt][h], acc_o[mt][dt][2 * h + 1] * inv_sum[mt][h]);
            }
            if (t == 0) part_lse[row] = lse[mt][h];
          }
        }
      }
      cluster.sync();  // release/acquire: every block's partial is visible to the whole cluster
      constexpr int kQuads = D / 4;
      const int items = rows_valid * kQuads;
      for (int item = split * T::kThreads + tid; item < items; item += p.splits * T::kThreads) {
        const int row = item / kQuads;
        const int col = (item - row * kQuads) * 4;
        float lse_s[T::kCluster];
        float m = detail::kNegInf;
#pragma unroll
        for (int s = 0; s < T::kCluster; ++s) {
          lse_s[s] = s < p.splits ? *cluster.map_shared_rank(part_lse + row, s) : detail::kNegInf;
          m = fmaxf(m, lse_s[s]);
        }
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        float weight_sum = 0.f;
        if (m != detail::kNegInf) {
#pragma unroll
          for (int s = 0; s < T::kCluster; ++s) {
            if (lse_s[s] == detail::kNegInf) continue;  // an empty split, or past the cluster: weight 0
            const float w = expf(lse_s[s] - m);
            const float4 o_s = *reinterpret_cast<const float4*>(cluster.map_shared_rank(part + row * kStride + col, s));
            weight_sum += w;
            acc.x += w * o_s.x;
            acc.y += w * o_s.y;
            acc.z += w * o_s.z;
            acc.w += w * o_s.w;
          }
        }
        const float inv = weight_sum > 0.f ? 1.f / weight_sum : 0.f;
        uint2 out;
        out.x = ptx::pack2<Element>(acc.x * inv, acc.y * inv);
        out.y = ptx::pack2<Element>(acc.z * inv, acc.w * inv);
        *reinterpret_cast<uint2*>(rows.output(row) + col) = out;
        if (p.lse != nullptr && col == 0) p.lse[rows.index(row)] = weight_sum > 0.f ? m + logf(weight_sum) : detail::kNegInf;
      }
      cluster.sync();  // no block exits, freeing its shared memory, while another still reads it
      return;
    }
  }
#endif

  if (!holds_rows) return;

  if (p.splits > 1) {
    // Partial result of this key range: normalised O and its log-sum-exp, fp32, straight from
    // the fragments (each quad writes 32 contiguous bytes of a row).
    float* const o_part = p.o_partial + split * rows_total * D;
    float* const lse_part = p.lse_partial + split * rows_total;
#pragma unroll
    for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp_row0 + mt * 16 + g + 8 * h;
        if (row < rows_valid) {
#pragma unroll
          for (int dt = 0; dt < T::kDTiles; ++dt) {
            const float2 val = make_float2(acc_o[mt][dt][2 * h] * inv_sum[mt][h], acc_o[mt][dt][2 * h + 1] * inv_sum[mt][h]);
            *reinterpret_cast<float2*>(o_part + rows.index(row) * D + dt * 8 + 2 * t) = val;
          }
          if (t == 0) lse_part[rows.index(row)] = lse[mt][h];
        }
      }
    }
    return;
  }

  // Final output: round to 16 bits into this warp's own rows of the Q tile (no other warp reads
  // them), then store whole 16-byte chunks per lane, coalesced along each row.
#pragma unroll
  for (int mt = 0; mt < T::kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_row0 + mt * 16 + g + 8 * h;
#pragma unroll
      for (int dt = 0; dt < T::kDTiles; ++dt) {
        const std::uint32_t packed =
            ptx::pack2<Element>(acc_o[mt][dt][2 * h] * inv_sum[mt][h], acc_o[mt][dt][2 * h + 1] * inv_sum[mt][h]);
        *reinterpret_cast<std::uint32_t*>(sQ + swizzle<D>(row, dt) + 2 * t) = packed;
      }
      if (p.lse != nullptr && t == 0 && row < rows_valid) p.lse[rows.index(row)] = lse[mt][h];
    }
  }
  __syncwarp();
  constexpr int kWarpChunks = T::kRowsPerWarp * T::kChunksPerRow;
#pragma unroll
  for (int i = 0; i < kWarpChunks / 32; ++i) {
    const int c = lane + i * 32;
    const int row = warp_row0 + c / T::kChunksPerRow;
    const int chunk = c % T::kChunksPerRow;
    if (row < rows_valid) {
      *reinterpret_cast<uint4*>(rows.output(row) + chunk * 8) =
          *reinterpret_cast<const uint4*>(sQ + swizzle<D>(row, chunk));
    }
  }
}

// Merges the key splits of each row: weights 2^(lse_s − max) over the splits' normalised partial
// outputs; writes the 16-bit output and the row's log-sum-exp. One thread per 4 columns. The
// splits are read kCombineChunk at a time with every load of a chunk issued before any is used:
// read one after another, each partial's load waiting on its log-sum-exp's, a decode combine of
// 22 splits was two L2 round trips per split. Every split block writes its rows' partials (an
// empty split writes zeros with a log-sum-exp of -inf, weight 0), so all loads read written memory.
inline constexpr int kCombineThreads = 128;
inline constexpr int kCombineChunk = 8;

template <int kHeadDim, class Element>
__global__ void __launch_bounds__(kCombineThreads) attention_combine_kernel(const ForwardParams p) {
  constexpr int kThreadsPerRow = kHeadDim / 4;
  constexpr int kRowsPerBlock = kCombineThreads / kThreadsPerRow;
  static_assert(kCombineThreads % kThreadsPerRow == 0, "whole rows per block");
  const std::int64_t rows_total = static_cast<std::int64_t>(p.batch) * p.heads_q * p.seq_q;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreadsPerRow;
  if (r >= rows_total) return;
  const int col = (threadIdx.x % kThreadsPerRow) * 4;

  float m = detail::kNegInf;
  for (int s0 = 0; s0 < p.splits; s0 += kCombineChunk) {
    float lse_s[kCombineChunk];
#pragma unroll
    for (int i = 0; i < kCombineChunk; ++i) {
      lse_s[i] = s0 + i < p.splits ? p.lse_partial[(s0 + i) * rows_total + r] : detail::kNegInf;
    }
#pragma unroll
    for (int i = 0; i < kCombineChunk; ++i) m = fmaxf(m, lse_s[i]);
  }
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  float weight_sum = 0.f;
  if (m != detail::kNegInf) {
    for (int s0 = 0; s0 < p.splits; s0 += kCombineChunk) {
      float lse_s[kCombineChunk];
      float4 o_s[kCombineChunk];
#pragma unroll
      for (int i = 0; i < kCombineChunk; ++i) {
        const bool here = s0 + i < p.splits;
        lse_s[i] = here ? p.lse_partial[(s0 + i) * rows_total + r] : detail::kNegInf;
        o_s[i] = here ? *reinterpret_cast<const float4*>(p.o_partial + ((s0 + i) * rows_total + r) * kHeadDim + col)
                      : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
      for (int i = 0; i < kCombineChunk; ++i) {
        if (lse_s[i] == detail::kNegInf) continue;  // an empty split, or past the last: weight 0
        const float w = expf(lse_s[i] - m);
        weight_sum += w;
        acc.x += w * o_s[i].x;
        acc.y += w * o_s[i].y;
        acc.z += w * o_s[i].z;
        acc.w += w * o_s[i].w;
      }
    }
  }
  const float inv = weight_sum > 0.f ? 1.f / weight_sum : 0.f;

  const int query = static_cast<int>(r % p.seq_q);
  const std::int64_t bh = r / p.seq_q;
  const int head = static_cast<int>(bh % p.heads_q);
  const int batch = static_cast<int>(bh / p.heads_q);
  Element* const o = static_cast<Element*>(p.o) + batch * p.o_batch_stride + head * p.o_head_stride +
                     query * p.o_seq_stride + col;
  uint2 packed;
  packed.x = ptx::pack2<Element>(acc.x * inv, acc.y * inv);
  packed.y = ptx::pack2<Element>(acc.z * inv, acc.w * inv);
  *reinterpret_cast<uint2*>(o) = packed;
  if (p.lse != nullptr && col == 0) p.lse[r] = weight_sum > 0.f ? m + logf(weight_sum) : detail::kNegInf;
}

}  // namespace kiln::attention
