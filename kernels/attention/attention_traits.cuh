// Everything the attention kernels derive from a variant's knobs (a Config with HEAD_DIM, BLOCK_M,
// BLOCK_N, WARPS, STAGES, Q_REG_STEPS, SPLIT_TARGET, PACK_GQA, CLUSTER and optionally KEY_WARPS and
// WGMMA),
// checked at compile time. The space files prune
// with the same formulas before anything is compiled; these asserts catch a Config written by hand.
#pragma once
#include <cstdint>
#include <type_traits>

namespace kiln::attention {

// Limits shared by the kernel, the split planner and the workload's scratch sizing.
inline constexpr int kMaxBlock = 256;         // largest BLOCK_M / BLOCK_N a Config may use
// Decode grids (a few packed query rows per key/value head) are tens of small blocks: they need
// many blocks per SM, and so many key splits, to keep enough K/V loads in flight.
inline constexpr int kMaxSplitTarget = 8;     // largest SPLIT_TARGET (blocks per SM aimed at)
inline constexpr int kMaxSplits = 64;         // most key/value splits of one problem
inline constexpr int kMaxResident = 32;       // most blocks an SM runs at once (sm_80 to sm_90)
inline constexpr int kMinTilesPerSplit = 2;   // a split below two key tiles costs more than it gains
inline constexpr int kMaxSmemPerBlock = 232448;  // sm_90 opt-in limit; the space prunes per device
// Calls with at most this many queries per sequence go to the attention_decode family (its spaces'
// problems and checks stay within it); longer ones to attention.
inline constexpr int kDecodeMaxQueries = 16;
inline constexpr int kMaxCluster = 16;        // largest CLUSTER (sm_90's non-portable cluster size)

// A knob of a Config, or 0 for a space without it: KILN_ATTENTION_KNOB(Name, KNOB) declares
// Name<Config>::value.
#define KILN_ATTENTION_KNOB(Name, KNOB)                             \
  template <class Config, class = void>                             \
  struct Name {                                                     \
    static constexpr int value = 0;                                 \
  };                                                                \
  template <class Config>                                           \
  struct Name<Config, std::void_t<decltype(Config::KNOB)>> {        \
    static constexpr int value = Config::KNOB;                      \
  }

// PACK_GQA and CLUSTER (attention_d256 has not been tuned with them).
KILN_ATTENTION_KNOB(PackGqaOf, PACK_GQA);
KILN_ATTENTION_KNOB(ClusterOf, CLUSTER);
// KEY_WARPS: warps that split each key tile of the block between them (0 or absent: one), each
// with its own online softmax over its slice; they merge through shared memory at the end. A
// decode block has a few packed query rows (one m16 tile), so warps that split the rows leave it
// one warp; splitting the keys gives it several warps' loads and products in flight.
KILN_ATTENTION_KNOB(KeyWarpsOf, KEY_WARPS);
// WGMMA: 1 runs the warpgroup-MMA kernel of attention_wgmma_kernel.cuh (sm_90a), 0 the mma.sync
// kernel of attention_kernel.cuh.
KILN_ATTENTION_KNOB(WgmmaOf, WGMMA);
// OVERLAP: 1 overlaps, in the warpgroup-MMA kernel, the softmax of key tile j with the P·V product
// of tile j - 1.
KILN_ATTENTION_KNOB(OverlapOf, OVERLAP);
// PRODUCER: 1 gives the warpgroup-MMA kernel a producer warpgroup that loads the tiles with TMA
// (bulk tensor copies) and hands them over through mbarriers, so the WARPS consumer warps never
// wait on each other.
KILN_ATTENTION_KNOB(ProducerOf, PRODUCER);
// PINGPONG: 1 makes the consumer warpgroups of a PRODUCER variant take turns issuing their
// products (named barriers), so one warpgroup's softmax runs while the others' products occupy
// the tensor cores.
KILN_ATTENTION_KNOB(PingPongOf, PINGPONG);
// PERSISTENT: 1 launches a PRODUCER variant's blocks once per SM, each taking work items (query
// blocks; causal ones in pairs of equal total work) in turn, so the next item's tiles load while
// the current one's output is written.
KILN_ATTENTION_KNOB(PersistentOf, PERSISTENT);
#undef KILN_ATTENTION_KNOB

// The N sizes of the wgmma wrappers in attention_wgmma_ptx.cuh (BLOCK_N of Q·Kᵀ, HEAD_DIM of P·V).
constexpr bool wgmma_n_supported(int n) {
  return n == 64 || n == 80 || n == 96 || n == 112 || n == 128 || n == 160 || n == 176 || n == 192 || n == 256;
}

template <class Config>
struct Traits {
  // Knobs.
  static constexpr int kHeadDim = Config::HEAD_DIM;
  static constexpr int kBlockM = Config::BLOCK_M;        // query rows per thread block
  static constexpr int kBlockN = Config::BLOCK_N;        // keys per main-loop iteration (the block's tile)
  static constexpr int kWarps = Config::WARPS;           // warps split the query rows
  static constexpr int kKeyWarps = KeyWarpsOf<Config>::value > 0 ? KeyWarpsOf<Config>::value : 1;  // ... and the keys
  static constexpr int kStages = Config::STAGES;         // K/V tiles in flight (cp.async groups)
  // k16 steps of the Q tile whose fragments a warp loads into registers once, before the key loop;
  // the other steps are read from shared memory on every key tile.
  static constexpr int kQRegSteps = Config::Q_REG_STEPS;
  static constexpr int kSplitTarget = Config::SPLIT_TARGET;  // 0: never split the keys
  // 1: a block's rows are (query, head) pairs of one key/value head's group of query heads, so
  // each K/V tile serves the whole group (ForwardParams::packed); 0: rows are one head's queries.
  static constexpr bool kPackGqa = PackGqaOf<Config>::value != 0;
  // Most key splits merged inside one thread-block cluster (sm_90): the splits of a query block are
  // the blocks of a cluster, and they combine their partial outputs through distributed shared
  // memory before exiting, so a split call is one launch with no scratch. 0: splits go through
  // global scratch and a combine kernel (also the path on devices without clusters).
  static constexpr int kCluster = ClusterOf<Config>::value;
  static constexpr bool kWgmma = WgmmaOf<Config>::value != 0;
  static constexpr bool kOverlap = OverlapOf<Config>::value != 0;
  static constexpr bool kProducer = ProducerOf<Config>::value != 0;
  static constexpr bool kPingPong = PingPongOf<Config>::value != 0;
  static constexpr bool kPersistent = PersistentOf<Config>::value != 0;

  // Derived.
  static constexpr int kConsumerThreads = kWarps * kKeyWarps * 32;  // the warps that compute
  static constexpr int kThreads = kConsumerThreads + (kProducer ? 128 : 0);
  static constexpr int kRowsPerWarp = kBlockM / kWarps;
  static constexpr int kWarpN = kBlockN / kKeyWarps;      // keys of a tile one warp takes
  static constexpr int kMTiles = kRowsPerWarp / 16;       // m16 tiles per warp
  static constexpr int kNTiles = kWarpN / 8;              // n8 tiles of a warp's score block S
  static constexpr int kDTiles = kHeadDim / 8;            // n8 tiles of the output block O
  static constexpr int kKSteps = kHeadDim / 16;           // k16 steps of Q·Kᵀ
  static constexpr int kPSteps = kWarpN / 16;             // k16 steps of a warp's P·V
  static constexpr int kChunksPerRow = kHeadDim / 8;      // 16-byte chunks per row of a tile
  static constexpr int kQElems = kBlockM * kHeadDim;
  static constexpr int kKVTileElems = kBlockN * kHeadDim;
  static constexpr int kStageElems = 2 * kKVTileElems;    // one K tile and one V tile
  static constexpr int kTileBytes = 2 * (kQElems + kStages * kStageElems);
  // The wgmma path's tiles start on a 1024-byte boundary inside the dynamic shared memory.
  static constexpr int kAlignBytes = kWgmma ? 1024 : 0;
  // PRODUCER: the mbarriers after the tiles (Q, and full and empty per stage for K and V; Q empty
  // when PERSISTENT).
  static constexpr int kBarrierBytes = kProducer ? 8 * (1 + 4 * kStages + (kPersistent ? 1 : 0)) : 0;
  // PERSISTENT: the epilogue's output tile is a tile of its own where it fits (the producer loads
  // the next item's Q while the output is written), else it lies over Q (Q is loaded after).
  static constexpr bool kOwnOut = kPersistent && kTileBytes + kAlignBytes + kBarrierBytes + 2 * kQElems <= kMaxSmemPerBlock;
  static constexpr int kOutBytes = kOwnOut ? 2 * kQElems : 0;
  // The cluster combine reuses the tiles' shared memory for the block's partial output: fp32 rows
  // padded by 8 floats (the fragment stores of one quad row land in different banks), then the
  // rows' log-sum-exps.
  static constexpr int kPartialStride = kHeadDim + 8;
  static constexpr int kPartialBytes = kCluster > 0 ? 4 * kBlockM * (kPartialStride + 1) : 0;
  static constexpr int kOwnBytes = kTileBytes + kOutBytes + kAlignBytes + kBarrierBytes;
  // KEY_WARPS > 1: after the key loop the tiles' shared memory takes the row maxima of every key
  // warp, then the rescaled fp32 output and row sums of all but the first (padded as above),
  // which the first adds to its own.
  static constexpr int kMergeBytes =
      kKeyWarps > 1 ? 4 * (kKeyWarps * kBlockM + (kKeyWarps - 1) * kBlockM * (kPartialStride + 1)) : 0;
  static constexpr int kLocalBytes = kOwnBytes > kMergeBytes ? kOwnBytes : kMergeBytes;
  static constexpr int kSmemBytes = kLocalBytes > kPartialBytes ? kLocalBytes : kPartialBytes;
  // fp32 accumulators a thread keeps live through the main loop (O, S and, optionally, Q).
  static constexpr int kAccRegs = kMTiles * 4 * (kDTiles + kNTiles + kQRegSteps);

  static_assert(kHeadDim % 64 == 0 && kHeadDim <= 256,
                "HEAD_DIM must be 64, 128, 192 or 256: the XOR swizzle permutes 8 chunks of 16 bytes");
  static_assert(kWarps >= 1 && kThreads <= 1024, "WARPS out of range");
  static_assert(kBlockM % (16 * kWarps) == 0, "each warp owns a whole number of m16 row tiles");
  static_assert(kBlockN % 16 == 0, "BLOCK_N must be a multiple of 16 (k16 steps of P·V)");
  static_assert(KeyWarpsOf<Config>::value >= 0 && kBlockN % (16 * kKeyWarps) == 0,
                "KEY_WARPS: each warp takes whole k16 steps of the key tile");
  static_assert(kBlockM <= kMaxBlock && kBlockN <= kMaxBlock, "BLOCK_M/BLOCK_N above kMaxBlock");
  static_assert(kStages >= 2, "the K/V pipeline needs at least two stages");
  static_assert(kProducer || (kBlockM * kChunksPerRow) % kThreads == 0, "Q tile chunks must divide among the threads");
  static_assert(kProducer || (kBlockN * kChunksPerRow) % kThreads == 0, "K/V tile chunks must divide among the threads");
  static_assert(!kProducer || (kBlockM * kChunksPerRow) % kConsumerThreads == 0,
                "Q tile chunks (packed queries) must divide among the consumer threads");
  static_assert((kRowsPerWarp * kChunksPerRow) % 32 == 0, "output rows of a warp must divide among its lanes");
  static_assert(kSmemBytes <= kMaxSmemPerBlock, "tiles exceed the largest shared memory of a block");
  static_assert(kQRegSteps >= 0 && kQRegSteps <= kKSteps, "Q_REG_STEPS must lie in [0, HEAD_DIM / 16]");
  static_assert(kSplitTarget >= 0 && kSplitTarget <= kMaxSplitTarget, "SPLIT_TARGET out of range");
  static_assert(PackGqaOf<Config>::value == 0 || PackGqaOf<Config>::value == 1, "PACK_GQA is 0 or 1");
  static_assert(kCluster == 0 || (kCluster >= 2 && kCluster <= kMaxCluster), "CLUSTER is 0 or in [2, 16]");
  static_assert(kCluster == 0 || kSplitTarget > 0, "CLUSTER merges key splits: it needs SPLIT_TARGET > 0");
  static_assert(kAccRegs <= 224, "accumulators alone would exhaust the 255 registers of a thread");
  static_assert(WgmmaOf<Config>::value == 0 || WgmmaOf<Config>::value == 1, "WGMMA is 0 or 1");
  static_assert(!kWgmma || (kWarps % 4 == 0 && kBlockM == 16 * kWarps),
                "WGMMA: BLOCK_M is 64 rows per warpgroup of 4 warps");
  static_assert(!kWgmma || (wgmma_n_supported(kBlockN) && wgmma_n_supported(kHeadDim)),
                "WGMMA: BLOCK_N and HEAD_DIM must be wgmma N sizes of attention_wgmma_ptx.cuh");
  static_assert(OverlapOf<Config>::value == 0 || OverlapOf<Config>::value == 1, "OVERLAP is 0 or 1");
  static_assert(kWgmma || !kOverlap, "OVERLAP is a knob of the WGMMA path");
  static_assert(ProducerOf<Config>::value == 0 || ProducerOf<Config>::value == 1, "PRODUCER is 0 or 1");
  static_assert(kWgmma || !kProducer, "PRODUCER is a knob of the WGMMA path");
  static_assert(PingPongOf<Config>::value == 0 || PingPongOf<Config>::value == 1, "PINGPONG is 0 or 1");
  static_assert(!kPingPong || (kProducer && kWarps >= 8),
                "PINGPONG: turns between two or more consumer warpgroups of a PRODUCER variant");
  static_assert(PersistentOf<Config>::value == 0 || PersistentOf<Config>::value == 1, "PERSISTENT is 0 or 1");
  static_assert(!kPersistent || kProducer, "PERSISTENT: the producer warpgroup loads the next work item's tiles");
  static_assert(!kWgmma || kKeyWarps == 1, "KEY_WARPS is a knob of the mma.sync path");
  static_assert(!kWgmma || (kQRegSteps == 0 && kCluster == 0),
                "WGMMA: Q is read from shared memory by the instruction, and splits merge through scratch");
};

// Element offset of (row, 16-byte chunk) in a tile of rows of `kHeadDim` elements: chunk index
// XOR (row mod 8). The 8 rows one ldmatrix 8x8 reads, all at the same logical chunk, land in 8
// different 16-byte bank groups, and so do the 4-byte stores of the output fragment.
template <int kHeadDim>
__host__ __device__ constexpr int swizzle(int row, int chunk) {
  return row * kHeadDim + ((chunk ^ (row & 7)) << 3);
}

}  // namespace kiln::attention
