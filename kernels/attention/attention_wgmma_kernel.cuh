// Forward pass on Hopper's warpgroup MMA (sm_90a): the FlashAttention-2 algorithm of
// attention_kernel.cuh with both products on wgmma.
//
// The block's BLOCK_M query rows are split between WARPS / 4 warpgroups of 64 rows. Per key tile,
// S = Q·Kᵀ is one chain of wgmma with both operands read from shared memory (Q's rows and K's
// rows, 128-byte swizzled, as the instruction's descriptors describe them), the online softmax
// runs on S in registers exactly as on mma.sync (the accumulator layout is the same per warp), and
// O += P·V is a chain of wgmma with P from registers and V from shared memory read transposed by
// the instruction. mma.sync peaks near 630 TFLOP/s on an H200, wgmma near 965: this path removes
// that ceiling. K/V tiles stream through STAGES buffers: copied by every thread with cp.async and
// a block barrier per tile, or (PRODUCER) by a producer warpgroup with TMA, handed over through
// mbarriers. OVERLAP runs a tile's softmax while the previous tile's P·V runs; PINGPONG makes the
// consumer warpgroups take turns issuing their products; PERSISTENT launches one wave of blocks
// that take the work items (query blocks) in turn, the producer loading the next item's tiles while
// the consumers finish the current one.
//
// Shared-memory tiles: a tile of R rows of HEAD_DIM 16-bit elements is HEAD_DIM / 64 slabs of 64
// columns; in a slab, row r is 128 contiguous bytes whose 16-byte chunk c sits at c XOR (r mod 8),
// the 128-byte swizzle the hardware applies to absolute address bits 4-6 from bits 7-9 (so every
// slab starts on a 1024-byte boundary). This is the canonical K-major layout for Q and K and the
// MN-major one for V, so one copy routine (and one TMA box shape) fills all three.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "attention_kernel.cuh"
#include "attention_params.cuh"
#include "attention_ptx.cuh"
#include "attention_traits.cuh"
#include "attention_wgmma_ptx.cuh"

namespace kiln::attention {

namespace wgmma {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif

// Orders this warpgroup's register and shared-memory accesses before the wgmma that follow.
__device__ __forceinline__ void fence() {
  if constexpr (kAvailable) asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
  if constexpr (kAvailable) asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most kPending committed groups of this warpgroup are in flight.
template <int kPending>
__device__ __forceinline__ void wait() {
  if constexpr (kAvailable) asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// cp.async writes shared memory through the generic proxy, wgmma reads it through the async
// proxy: each thread's landed copies are made visible to the async proxy before the barrier.
__device__ __forceinline__ void fence_proxy_async() {
  if constexpr (kAvailable) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accesses of accumulator registers across an asynchronous wgmma.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// mbarriers (PRODUCER): the producer announces the bytes a TMA copy will bring (expect_tx), the
// copy completes the phase; consumers release a stage by arriving on its empty barrier.
__device__ __forceinline__ void barrier_init(std::uint32_t bar, int count) {
  if constexpr (kAvailable) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void barrier_init_fence() {
  if constexpr (kAvailable) asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void barrier_expect_bytes(std::uint32_t bar, std::uint32_t bytes) {
  if constexpr (kAvailable) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
  }
}
__device__ __forceinline__ void barrier_arrive(std::uint32_t bar) {
  if constexpr (kAvailable) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits for the completion of the barrier's phase of parity `parity`.
__device__ __forceinline__ void barrier_wait(std::uint32_t bar, int parity) {
  if constexpr (kAvailable) {
    std::uint32_t done = 0;
    do {
      asm volatile(
          "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    } while (done == 0);
  }
}
// One box of a 4-d tensor map (64 elements by the box's rows) into shared memory at `dst`,
// completing `bar`'s transaction bytes. Rows past the tensor's end arrive as zeros.
__device__ __forceinline__ void tma_load(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0, int c1,
                                         int c2, int c3) {
  if constexpr (kAvailable) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
  }
}
// Register budget of this warpgroup from here on (the producer gives registers to the consumers).
template <int kRegisters>
__device__ __forceinline__ void set_registers_max_increase() {
  if constexpr (kAvailable) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void set_registers_max_decrease() {
  if constexpr (kAvailable) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
// Barrier 1 over the consumer warps only (barrier 0 is __syncthreads, which the producer's exited
// threads would not reach).
template <int kThreads>
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(kThreads) : "memory");
}

// Named barriers 2 ... of the ping-pong between consumer warpgroups (PINGPONG): barrier 2 + w is
// warpgroup w's turn, completed by w itself (sync) and the warpgroup before it (arrive).
__device__ __forceinline__ void turn_wait(int group) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(2 + group) : "memory");
}
__device__ __forceinline__ void turn_pass(int group) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(2 + group) : "memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride byte
// offsets (K-major: stride = between 8-row groups, leading unused; MN-major: leading = between
// 64-element groups of the contiguous dimension, stride = between 8-row groups of the other).
__device__ __forceinline__ std::uint64_t descriptor(std::uint32_t address, std::uint32_t leading, std::uint32_t stride) {
  return static_cast<std::uint64_t>((address & 0x3FFFFu) >> 4) | (static_cast<std::uint64_t>(leading >> 4) << 16) |
         (static_cast<std::uint64_t>(stride >> 4) << 32) | (std::uint64_t{1} << 62);
}

// Byte offset of (row, 16-byte chunk) in a tile of kRows rows (see the file comment).
template <int kRows>
__device__ __forceinline__ std::uint32_t offset(int row, int chunk) {
  return static_cast<std::uint32_t>((chunk >> 3) * (kRows * 128) + row * 128 + (((chunk & 7) ^ (row & 7)) << 4));
}

// Copies kRows rows of a [rows, head_dim] tile (row stride `stride` elements) into a tile at
// shared address `tile`; rows at or past `rows_valid` are zero-filled.
template <class T, int kRows, class Element>
__device__ __forceinline__ void load_tile(std::uint32_t tile, const Element* gmem, int stride, int rows_valid, int tid) {
  constexpr int kRowsPerPass = T::kThreads / T::kChunksPerRow;
  static_assert(!T::kProducer, "PRODUCER variants load K/V tiles with TMA");
  static_assert(T::kThreads % T::kChunksPerRow == 0 && kRows % kRowsPerPass == 0,
                "tile chunks must divide among the threads");
  const int row = tid / T::kChunksPerRow;
  const int chunk = tid % T::kChunksPerRow;
  const Element* src = gmem + row * stride + chunk * 8;
  const int step = kRowsPerPass * stride;
#pragma unroll
  for (int i = 0; i < kRows / kRowsPerPass; ++i) {
    const int r = row + i * kRowsPerPass;
    const bool valid = r < rows_valid;
    ptx::cp_async_16(tile + offset<kRows>(r, chunk), valid ? src : gmem, valid);
    src += step;
  }
}

// The Q tile of a packed block (rows are (query, head) pairs of one key/value head; see
// detail::load_packed_q), copied by the consumer threads (`tid` counts among them).
template <class T, int kRows, class Element>
__device__ __forceinline__ void load_packed_q(std::uint32_t tile, const Element* q_batch, const ForwardParams& p,
                                              int head_kv, int row0, int rows_valid, int tid) {
  constexpr int kRowsPerPass = T::kConsumerThreads / T::kChunksPerRow;
  static_assert(kRows % kRowsPerPass == 0, "Q tile chunks must divide among the consumer threads");
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
    ptx::cp_async_16(tile + offset<kRows>(r, chunk), valid ? src : q_batch, valid);
  }
}

// One work item of a block: a query block (m_block) of one split of one head of one batch.
struct Tile {
  int split = 0, m_block = 0, head = 0, batch = 0;
};

// What next_tile() found for a round of a block.
enum class Next { item, skip, done };

// Work item `round` of this block. One block per item: the block's own (blockIdx), in round 0
// only. PERSISTENT, G blocks: the items in the order of that grid (query block fastest, then head,
// then batch), so the blocks at work at one time share few heads' K and V in L2; block b takes item
// r·G + b in round r. With a causal mask, where a query block's keys grow with its index, a block
// takes pairs instead, the i-th query block from the end and the i-th from the start of one head
// (and split) in rounds 2r and 2r + 1, so every pair costs the same (an odd middle block has no
// partner: its second round is skipped). Measured on an H200 against one item a round in
// alternating directions: causal B1 H16 S16384 D128 2343 µs with those, 1831 µs with a block per
// item (the hardware hands out blocks as SMs free up); sections of heads whose K and V fit 32 MB
// of L2, query block outermost within a section: causal B8 H16 S2048 D128 331 against 302 µs.
template <class T, bool kCausal>
__device__ __forceinline__ Next next_tile(const ForwardParams& p, bool packed, int round, Tile& tile) {
  if constexpr (!T::kPersistent) {
    if (round > 0) return Next::done;
    tile.split = static_cast<int>(blockIdx.x) / p.m_blocks;
    tile.m_block = static_cast<int>(blockIdx.x) - tile.split * p.m_blocks;
    if constexpr (kCausal) tile.m_block = p.m_blocks - 1 - tile.m_block;
    tile.head = blockIdx.y;
    tile.batch = blockIdx.z;
    return Next::item;
  } else {
    const int heads = packed ? p.heads_kv : p.heads_q;
    // Units of work per head: query blocks, or (causal) pairs of them, of every split.
    const int per_split = kCausal ? (p.m_blocks + 1) / 2 : p.m_blocks;
    const int per_head = per_split * p.splits;
    const std::int64_t units = static_cast<std::int64_t>(per_head) * heads * p.batch;
    const std::int64_t unit = static_cast<std::int64_t>(kCausal ? round / 2 : round) * gridDim.x + blockIdx.x;
    if (unit >= units) return Next::done;
    const int head_item = static_cast<int>(unit / per_head);
    const int x = static_cast<int>(unit - static_cast<std::int64_t>(head_item) * per_head);
    tile.split = x / per_split;
    const int index = x - tile.split * per_split;
    tile.head = head_item % heads;
    tile.batch = head_item / heads;
    if constexpr (kCausal) {
      const int last = p.m_blocks - 1 - index;
      if ((round & 1) != 0 && index == last) return Next::skip;
      tile.m_block = (round & 1) == 0 ? last : index;
    } else {
      tile.m_block = index;
    }
    return Next::item;
  }
}

}  // namespace wgmma

template <class T, class Element, bool kCausal>
__global__ void __launch_bounds__(T::kThreads, 1) attention_wgmma_kernel(const __grid_constant__ ForwardParams p) {
  static_assert(T::kWgmma, "a Config of the warpgroup-MMA path");
  if constexpr (!wgmma::kAvailable) {
    __trap();  // never launched: the spaces offer this path only on sm_90a devices
  } else {
    constexpr int D = T::kHeadDim;
    constexpr int BM = T::kBlockM;
    constexpr int BN = T::kBlockN;
    constexpr int S = T::kStages;
    constexpr bool kTma = T::kProducer;
    constexpr bool kPersistent = T::kPersistent;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // Every slab must start on a 1024-byte boundary (the swizzle reads absolute address bits):
    // the launch asks for 1024 bytes more than the tiles and the tiles start at the first boundary.
    const std::uint32_t raw = ptx::smem_address(smem_raw);
    const std::uint32_t base = (raw + 1023u) & ~1023u;
    constexpr std::uint32_t kQBytes = BM * D * 2;
    constexpr std::uint32_t kKVBytes = BN * D * 2;
    constexpr std::uint32_t kStageBytes = 2 * kKVBytes;  // K tile, then V tile
    const std::uint32_t sQ = base;
    const std::uint32_t sKV = base + kQBytes;
    // The epilogue's output tile: over Q, or (PERSISTENT, where it fits) a tile of its own after
    // the stages, so the producer loads the next item's Q while the consumers write this one's.
    constexpr bool kOwnOut = T::kOwnOut;
    constexpr std::uint32_t kOutOffset = kOwnOut ? kQBytes + S * kStageBytes : 0;
    Element* const sOut = reinterpret_cast<Element*>(smem_raw + (base - raw) + kOutOffset);
    // PRODUCER: mbarriers after the tiles: Q full, then per stage K full, V full, K empty, V empty,
    // then (PERSISTENT) Q empty.
    const std::uint32_t bars = base + kQBytes + S * kStageBytes + (kOwnOut ? kQBytes : 0);
    const std::uint32_t bar_q = bars;
    auto bar_k_full = [&](int stage) { return bars + 8 * (1 + 4 * stage); };
    auto bar_v_full = [&](int stage) { return bars + 8 * (2 + 4 * stage); };
    auto bar_k_empty = [&](int stage) { return bars + 8 * (3 + 4 * stage); };
    auto bar_v_empty = [&](int stage) { return bars + 8 * (4 + 4 * stage); };
    const std::uint32_t bar_q_empty = bars + 8 * (1 + 4 * S);

    // With a producer, warpgroup 0 produces and the consumers are warpgroups 1 ...
    const int ctid = kTma ? static_cast<int>(threadIdx.x) - 128 : static_cast<int>(threadIdx.x);  // consumer index
    const int tid = ctid;
    const int warp = ctid / 32;
    const int lane = ctid % 32;
    const int g = lane / 4;
    const int t = lane % 4;
    const int wg = warp / 4;  // consumer warpgroup: rows [64 wg, 64 wg + 64) of the block

    const bool packed = T::kPackGqa && p.packed;
    const int rows_per_query = packed ? p.group : 1;
    const int diagonal = p.seq_k - p.seq_q;

    // What one work item covers: its rows, its key tiles [n_begin, n_end), their count; its key
    // tile `it` is key block n_end - 1 - it.
    struct Span {
      int row0, rows_valid, first_query, n_end, n_tiles, head_kv;
    };
    auto span_of = [&](const wgmma::Tile& tile) {
      Span s_;
      s_.row0 = tile.m_block * BM;
      s_.rows_valid = min(BM, p.seq_q * rows_per_query - s_.row0);
      s_.first_query = s_.row0 / rows_per_query;
      s_.head_kv = packed ? tile.head : tile.head / p.group;
      int n_end = p.n_blocks;
      if constexpr (kCausal) {
        const int last_col = (s_.row0 + s_.rows_valid - 1) / rows_per_query + diagonal;
        n_end = last_col < 0 ? 0 : min(p.n_blocks, last_col / BN + 1);
      }
      const int n_begin = tile.split * p.tiles_per_split;
      s_.n_end = min(n_end, n_begin + p.tiles_per_split);
      s_.n_tiles = max(0, s_.n_end - n_begin);
      return s_;
    };

    if constexpr (kTma) {
      if (threadIdx.x == 0) {
        wgmma::barrier_init(bar_q, 1);
        for (int stage = 0; stage < S; ++stage) {
          wgmma::barrier_init(bar_k_full(stage), 1);
          wgmma::barrier_init(bar_v_full(stage), 1);
          wgmma::barrier_init(bar_k_empty(stage), T::kConsumerThreads);
          wgmma::barrier_init(bar_v_empty(stage), T::kConsumerThreads);
        }
        if constexpr (kPersistent) wgmma::barrier_init(bar_q_empty, T::kConsumerThreads);
        wgmma::barrier_init_fence();
      }
      __syncthreads();
      if (threadIdx.x < 128) {
        // The producer: one thread issues every copy; a stage is refilled once all consumer
        // threads released it, Q once they are done with the previous item's. The stages are one
        // ring over all of the block's items (`ring` tiles before this item's).
        if constexpr (T::kConsumerThreads >= 256) wgmma::set_registers_max_decrease<24>();
        if (threadIdx.x == 0) {
          int ring = 0;
          int q_loads = 0;
          wgmma::Tile tile;
          for (int round = 0;; ++round) {
            const wgmma::Next next = wgmma::next_tile<T, kCausal>(p, packed, round, tile);
            if (next == wgmma::Next::done) break;
            if (next == wgmma::Next::skip) continue;
            const Span sp = span_of(tile);
            for (int it = 0; it < sp.n_tiles; ++it) {
              const int r = ring + it;
              const int stage = r % S;
              const int parity = ((r / S) & 1) ^ 1;  // the release of this stage's previous tile
              const int key0 = (sp.n_end - 1 - it) * BN;
              const std::uint32_t sK = sKV + stage * kStageBytes;
              if (r >= S) wgmma::barrier_wait(bar_k_empty(stage), parity);
              wgmma::barrier_expect_bytes(bar_k_full(stage), kKVBytes);
#pragma unroll
              for (int slab = 0; slab < D / 64; ++slab) {
                wgmma::tma_load(sK + slab * (BN * 128), &p.tma_k, bar_k_full(stage), slab * 64, key0, sp.head_kv,
                                tile.batch);
              }
              // Q after the item's first K tile: that copy may start while the consumers finish
              // the previous item.
              if (it == 0 && !packed) {
                if (kPersistent && q_loads > 0) wgmma::barrier_wait(bar_q_empty, (q_loads - 1) & 1);
                wgmma::barrier_expect_bytes(bar_q, kQBytes);
#pragma unroll
                for (int slab = 0; slab < D / 64; ++slab) {
                  wgmma::tma_load(sQ + slab * (BM * 128), &p.tma_q, bar_q, slab * 64, sp.row0, tile.head, tile.batch);
                }
                ++q_loads;
              }
              if (r >= S) wgmma::barrier_wait(bar_v_empty(stage), parity);
              wgmma::barrier_expect_bytes(bar_v_full(stage), kKVBytes);
#pragma unroll
              for (int slab = 0; slab < D / 64; ++slab) {
                wgmma::tma_load(sK + kKVBytes + slab * (BN * 128), &p.tma_v, bar_v_full(stage), slab * 64, key0,
                                sp.head_kv, tile.batch);
              }
            }
            ring += sp.n_tiles;
          }
        }
        return;
      }
      // Registers the producer gave up (it keeps 24 a thread), shared by two or more consumer
      // warpgroups; with one, the block's 256 threads have the 255 of a thread already.
      constexpr int kConsumerGroups = T::kConsumerThreads / 128;
      if constexpr (kConsumerGroups >= 2) {
        constexpr int kRegisters = ((65536 / 128 - 24) / kConsumerGroups) / 8 * 8;
        wgmma::set_registers_max_increase<(kRegisters > 240 ? 240 : kRegisters)>();
      }
    }

    // PINGPONG: the consumer warpgroups issue their products in turns, 0, 1, ..., 0, 1, ...: each
    // waits for its turn before issuing and passes the turn on right after, then runs its softmax
    // while the next warpgroup's products run. Every warpgroup issues the same number of times
    // (an item's key tiles are all of its warpgroups'); warpgroup 0 gives itself the first turn and
    // takes the last warpgroup's last pass after its items, so every barrier ends complete.
    constexpr int kGroups = T::kConsumerThreads / 128;
    auto turn_begin = [&]() {
      if constexpr (T::kPingPong) wgmma::turn_wait(wg);
    };
    auto turn_end = [&]() {
      if constexpr (T::kPingPong) wgmma::turn_pass((wg + 1) % kGroups);
    };
    if constexpr (T::kPingPong) {
      if (wg == 0) wgmma::turn_pass(0);
    }

    // This thread's rows of the block: `my_row` and my_row + 8 (index h = 0, 1 below).
    const int my_row = wg * 64 + (warp % 4) * 16 + g;
    int ring = 0;     // key tiles of the block's earlier items (the stage ring's position)
    int q_loads = 0;  // Q tiles the producer loaded for earlier items
    wgmma::Tile tile;
    for (int round = 0;; ++round) {
      const wgmma::Next next = wgmma::next_tile<T, kCausal>(p, packed, round, tile);
      if (next == wgmma::Next::done) break;
      if (next == wgmma::Next::skip) continue;
      const Span sp = span_of(tile);
      const int row0 = sp.row0;
      const int rows_valid = sp.rows_valid;
      const int first_query = sp.first_query;
      const int n_end = sp.n_end;
      const int n_tiles = sp.n_tiles;
      const int head = tile.head;
      const int batch = tile.batch;
      const int head_kv = sp.head_kv;
      const int split = tile.split;

      const Element* const q = static_cast<const Element*>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride +
                               row0 * p.q_seq_stride;
      const Element* const k = static_cast<const Element*>(p.k) + batch * p.k_batch_stride + head_kv * p.k_head_stride;
      const Element* const v = static_cast<const Element*>(p.v) + batch * p.v_batch_stride + head_kv * p.v_head_stride;

      // Without a producer, stage s holds a K tile and a V tile. Without OVERLAP both belong to one
      // key tile; with it the K tile of key tile j and the V tile of j - 1 share a commit group
      // (iteration j needs both).
      auto load_k = [&](int stage, int it) {
        if constexpr (!kTma) {
          const int key0 = (n_end - 1 - it) * BN;
          wgmma::load_tile<T, BN>(sKV + stage * kStageBytes, k + key0 * p.k_seq_stride,
                                  static_cast<int>(p.k_seq_stride), min(BN, p.seq_k - key0), tid);
        }
      };
      auto load_v = [&](int stage, int it) {
        if constexpr (!kTma) {
          const int key0 = (n_end - 1 - it) * BN;
          wgmma::load_tile<T, BN>(sKV + stage * kStageBytes + kKVBytes, v + key0 * p.v_seq_stride,
                                  static_cast<int>(p.v_seq_stride), min(BN, p.seq_k - key0), tid);
        }
      };
      // The commit group of iteration `it` (the loop waits for group `it` before iteration `it`).
      auto load_group = [&](int it) {
        if constexpr (!kTma) {
          if constexpr (T::kOverlap) {
            if (it < n_tiles) load_k(it % S, it);
            if (it >= 1 && it - 1 < n_tiles) load_v((it - 1) % S, it - 1);
          } else {
            if (it < n_tiles) {
              load_k(it % S, it);
              load_v(it % S, it);
            }
          }
          ptx::cp_async_commit();
        }
      };
      // Without a producer: each thread's landed copies made visible to wgmma (the async proxy),
      // then to every thread; after the barrier every warpgroup is also done with what the next
      // prefetch overwrites. With one: waits for / releases the K or V tile of iteration `it`
      // (ring position ring + it).
      auto tiles_ready = [&](int it) {
        if constexpr (!kTma) {
          ptx::cp_async_wait<S - 2>();
          wgmma::fence_proxy_async();
          __syncthreads();
          load_group(it + S - 1);
        }
      };
      auto acquire_k = [&](int it) {
        if constexpr (kTma) wgmma::barrier_wait(bar_k_full((ring + it) % S), ((ring + it) / S) & 1);
      };
      auto acquire_v = [&](int it) {
        if constexpr (kTma) wgmma::barrier_wait(bar_v_full((ring + it) % S), ((ring + it) / S) & 1);
      };
      auto release_k = [&](int it) {
        if constexpr (kTma) wgmma::barrier_arrive(bar_k_empty((ring + it) % S));
      };
      auto release_v = [&](int it) {
        if constexpr (kTma) wgmma::barrier_arrive(bar_v_empty((ring + it) % S));
      };

      float acc_o[D / 2];
#pragma unroll
      for (int i = 0; i < D / 2; ++i) acc_o[i] = 0.f;
      float row_max[2] = {detail::kNegInf, detail::kNegInf};
      float row_sum[2] = {0.f, 0.f};
      float s[BN / 2];
      std::uint32_t p_frag[BN / 16][4];

      // S = Q·Kᵀ of key tile `it` into s, issued, not waited for: HEAD_DIM / 16 k-steps; a step
      // moves 32 bytes along a 128-byte row, and every fourth step to the next slab.
      auto issue_qk = [&](int it) {
        const std::uint32_t sK = sKV + ((ring + it) % S) * kStageBytes;
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
          const std::uint32_t step = (ks % 4) * 32;
          const std::uint64_t a = wgmma::descriptor(sQ + (ks / 4) * (BM * 128) + wg * (64 * 128) + step, 16, 1024);
          const std::uint64_t b = wgmma::descriptor(sK + (ks / 4) * (BN * 128) + step, 16, 1024);
          wgmma::mma_ss<BN, Element>(s, a, b, ks > 0 ? 1 : 0);
        }
        wgmma::commit();
      };
      // O += P·V of key tile `it`, issued, not waited for: BLOCK_N / 16 k-steps of 16 keys (2048
      // bytes of V each); V's 64-column slabs are the instruction's N groups (leading offset), its
      // 8-key row groups the stride.
      auto issue_pv = [&](int it) {
        const std::uint32_t sV = sKV + ((ring + it) % S) * kStageBytes + kKVBytes;
#pragma unroll
        for (int ps = 0; ps < BN / 16; ++ps) {
          const std::uint64_t b = wgmma::descriptor(sV + ps * 2048, BN * 128, 1024);
          wgmma::mma_rs<D, Element>(acc_o, p_frag[ps], b, 1);
        }
        wgmma::commit();
      };
      // Masks and the online softmax of key tile `it` on s (as attention_kernel.cuh): s becomes
      // 2^(S·c − m'·c), row_max and row_sum move on, and the factor O must be scaled by is returned.
      // Register 4i + e of s holds row my_row + 8(e / 2), key key0 + 8i + 2t + e % 2.
      auto softmax = [&](int it, float (&correction)[2]) {
        const int key0 = (n_end - 1 - it) * BN;
        const bool tail_tile = key0 + BN > p.seq_k;
        const bool diagonal_tile = kCausal && key0 + BN - 1 > first_query + diagonal;
        if (tail_tile || diagonal_tile) {
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int query = (row0 + my_row + (e / 2) * 8) / rows_per_query;
              const int col = key0 + i * 8 + 2 * t + (e % 2);
              const bool masked = col >= p.seq_k || (kCausal && col > query + diagonal);
              if (masked) s[4 * i + e] = detail::kNegInf;
            }
          }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float m = row_max[h];
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) m = fmaxf(m, fmaxf(s[4 * i + 2 * h], s[4 * i + 2 * h + 1]));
          m = detail::quad_max(m);
          const float m_scaled = m == detail::kNegInf ? 0.f : m * p.scale_log2;
          correction[h] = ptx::exp2_approx(row_max[h] * p.scale_log2 - m_scaled);
          row_max[h] = m;
          float sum = 0.f;
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e) {
              s[4 * i + e] = ptx::exp2_approx(fmaf(s[4 * i + e], p.scale_log2, -m_scaled));
              sum += s[4 * i + e];
            }
          }
          row_sum[h] = row_sum[h] * correction[h] + sum;
        }
      };
      // P rounded to 16 bits into the A fragments of P·V: k-step ps takes key tiles 2ps and 2ps + 1.
      auto pack_p = [&]() {
#pragma unroll
        for (int ps = 0; ps < BN / 16; ++ps) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            p_frag[ps][h] = ptx::pack2<Element>(s[8 * ps + 2 * h], s[8 * ps + 2 * h + 1]);
            p_frag[ps][2 + h] = ptx::pack2<Element>(s[8 * ps + 4 + 2 * h], s[8 * ps + 4 + 2 * h + 1]);
          }
        }
      };
      auto rescale_o = [&](const float (&correction)[2]) {
#pragma unroll
        for (int i = 0; i < D / 2; ++i) acc_o[i] *= correction[(i % 4) / 2];
      };
      if (n_tiles > 0) {
        if (packed) {
          // PERSISTENT: every warpgroup is done with the previous item's Q before it is overwritten.
          if constexpr (kPersistent) wgmma::consumer_sync<T::kConsumerThreads>();
          wgmma::load_packed_q<T, BM>(sQ, static_cast<const Element*>(p.q) + batch * p.q_batch_stride, p, head_kv,
                                      row0, rows_valid, tid);
        } else if constexpr (!kTma) {
          wgmma::load_tile<T, BM>(sQ, q, static_cast<int>(p.q_seq_stride), rows_valid, tid);
        }
        ptx::cp_async_commit();
        if constexpr (kTma) {
          if (packed) {  // the consumers copied Q themselves
            ptx::cp_async_wait<0>();
            wgmma::fence_proxy_async();
            wgmma::consumer_sync<T::kConsumerThreads>();
          } else {
            wgmma::barrier_wait(bar_q, q_loads & 1);
          }
        } else {
#pragma unroll
          for (int s_ = 0; s_ < S - 1; ++s_) load_group(s_);
        }

        if constexpr (!T::kOverlap) {
          for (int it = 0; it < n_tiles; ++it) {
            tiles_ready(it);
            acquire_k(it);
            wgmma::fence_registers(s);
            turn_begin();
            wgmma::fence();
            issue_qk(it);
            turn_end();
            wgmma::wait<0>();
            wgmma::fence_registers(s);
            release_k(it);
            float correction[2];
            softmax(it, correction);
            pack_p();
            rescale_o(correction);
            acquire_v(it);
            wgmma::fence_registers(acc_o);
            turn_begin();
            wgmma::fence();
            issue_pv(it);
            turn_end();
            wgmma::wait<0>();
            wgmma::fence_registers(acc_o);
            release_v(it);
          }
        } else {
          // Iteration it issues S of tile it and P·V of tile it - 1 back to back, and runs the
          // softmax of tile it while the tensor cores work on P·V; O is rescaled once that P·V has
          // landed, and P of tile it is written into the fragments only then (P·V reads them until
          // it lands). The first and last iterations are peeled: with the two products issued
          // under conditions in one loop, ptxas 13.0 serialized the wgmma (its C7514 report);
          // peeled, it does not.
          float correction[2];
          tiles_ready(0);
          acquire_k(0);
          wgmma::fence_registers(s);
          turn_begin();
          wgmma::fence();
          issue_qk(0);
          turn_end();
          wgmma::wait<0>();
          wgmma::fence_registers(s);
          release_k(0);
          softmax(0, correction);
          pack_p();
          for (int it = 1; it < n_tiles; ++it) {
            tiles_ready(it);
            acquire_k(it);
            acquire_v(it - 1);
            wgmma::fence_registers(s);
            wgmma::fence_registers(acc_o);
            turn_begin();
            wgmma::fence();
            issue_qk(it);
            issue_pv(it - 1);
            turn_end();
            wgmma::wait<1>();
            wgmma::fence_registers(s);
            release_k(it);
            softmax(it, correction);
            wgmma::wait<0>();
            wgmma::fence_registers(acc_o);
#pragma unroll
            for (int ps = 0; ps < BN / 16; ++ps) {
#pragma unroll
              for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(p_frag[ps][r])::"memory");
            }
            release_v(it - 1);
            rescale_o(correction);
            pack_p();
          }
          tiles_ready(n_tiles);
          acquire_v(n_tiles - 1);
          wgmma::fence_registers(acc_o);
          turn_begin();
          wgmma::fence();
          issue_pv(n_tiles - 1);
          turn_end();
          wgmma::wait<0>();
          wgmma::fence_registers(acc_o);
          release_v(n_tiles - 1);
        }
        // PERSISTENT with an output tile of its own: this thread is done with Q (its last Q·Kᵀ has
        // landed), the producer may load the next item's.
        if constexpr (kOwnOut) {
          if (!packed) wgmma::barrier_arrive(bar_q_empty);
        }
      }
      ring += n_tiles;
      ptx::cp_async_wait<0>();
      if constexpr (kOwnOut) {
        // A warp's output rows of sOut are its own: it only waits for its lanes' reads of the
        // previous item's rows.
        __syncwarp();
      } else if constexpr (kTma) {
        // Every warpgroup is done with Q: the epilogue writes over it.
        wgmma::consumer_sync<T::kConsumerThreads>();
      } else {
        __syncthreads();
      }

      float inv_sum[2];
      float lse[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float l = detail::quad_sum(row_sum[h]);
        const bool seen = l > 0.f;
        inv_sum[h] = seen ? 1.f / l : 0.f;
        lse[h] = seen ? row_max[h] * p.scale + logf(l) : detail::kNegInf;
      }

      const std::int64_t rows_total = static_cast<std::int64_t>(p.batch) * p.heads_q * p.seq_q;
      const detail::OutputRows<Element> rows{p, packed, batch, head, head_kv, row0};

      if (n_tiles == 0) {
        // No key reaches these rows: zeros and a log-sum-exp of -inf, stored without the output
        // tile (PERSISTENT: over Q it may be receiving the next item's Q).
        const int warp_row0 = wg * 64 + (warp % 4) * 16;
#pragma unroll
        for (int i = 0; i < 16 * T::kChunksPerRow / 32; ++i) {
          const int c = lane + i * 32;
          const int row = warp_row0 + c / T::kChunksPerRow;
          const int chunk = c % T::kChunksPerRow;
          if (row < rows_valid) {
            if (p.splits > 1) {
              float4* const part = reinterpret_cast<float4*>(p.o_partial + split * rows_total * D + rows.index(row) * D);
              part[2 * chunk] = make_float4(0.f, 0.f, 0.f, 0.f);
              part[2 * chunk + 1] = make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
              *reinterpret_cast<uint4*>(rows.output(row) + chunk * 8) = make_uint4(0u, 0u, 0u, 0u);
            }
            if (chunk == 0) {
              if (p.splits > 1) {
                p.lse_partial[split * rows_total + rows.index(row)] = detail::kNegInf;
              } else if (p.lse != nullptr) {
                p.lse[rows.index(row)] = detail::kNegInf;
              }
            }
          }
        }
      } else if (p.splits > 1) {
        float* const o_part = p.o_partial + split * rows_total * D;
        float* const lse_part = p.lse_partial + split * rows_total;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = my_row + 8 * h;
          if (row < rows_valid) {
#pragma unroll
            for (int i = 0; i < D / 8; ++i) {
              const float2 val =
                  make_float2(acc_o[4 * i + 2 * h] * inv_sum[h], acc_o[4 * i + 2 * h + 1] * inv_sum[h]);
              *reinterpret_cast<float2*>(o_part + rows.index(row) * D + i * 8 + 2 * t) = val;
            }
            if (t == 0) lse_part[rows.index(row)] = lse[h];
          }
        }
      } else {
        // Rounded into this warp's 16 rows of a row-major swizzled tile, then stored as whole
        // 16-byte chunks per lane, coalesced along each row.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = my_row + 8 * h;
#pragma unroll
          for (int i = 0; i < D / 8; ++i) {
            const std::uint32_t packed2 =
                ptx::pack2<Element>(acc_o[4 * i + 2 * h] * inv_sum[h], acc_o[4 * i + 2 * h + 1] * inv_sum[h]);
            *reinterpret_cast<std::uint32_t*>(sOut + swizzle<D>(row, i) + 2 * t) = packed2;
          }
          if (p.lse != nullptr && t == 0 && row < rows_valid) p.lse[rows.index(row)] = lse[h];
        }
        __syncwarp();
        const int warp_row0 = wg * 64 + (warp % 4) * 16;
        constexpr int kWarpChunks = 16 * T::kChunksPerRow;
#pragma unroll
        for (int i = 0; i < kWarpChunks / 32; ++i) {
          const int c = lane + i * 32;
          const int row = warp_row0 + c / T::kChunksPerRow;
          const int chunk = c % T::kChunksPerRow;
          if (row < rows_valid) {
            *reinterpret_cast<uint4*>(rows.output(row) + chunk * 8) =
                *reinterpret_cast<const uint4*>(sOut + swizzle<D>(row, chunk));
          }
        }
      }
      // PERSISTENT with the output tile over Q: this thread is done with it; the producer's copy
      // of the next Q (async proxy) comes after these generic-proxy accesses.
      if constexpr (kPersistent && !kOwnOut) {
        if (n_tiles > 0 && !packed) {
          wgmma::fence_proxy_async();
          wgmma::barrier_arrive(bar_q_empty);
        }
      }
      if (n_tiles > 0 && !packed) ++q_loads;
    }
    // The last warpgroup's last pass of the turn.
    if constexpr (T::kPingPong) {
      if (wg == 0) wgmma::turn_wait(0);
    }
  }
}

}  // namespace kiln::attention
