// Host side of one attention call for a variant (Config): the key-split plan, the scratch it
// needs, the shared-memory opt-in and the launches. Shared by the Kiln workload and the public API,
// so the tuner measures exactly what the library runs. Enqueue only: no allocation, no sync.
#pragma once
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "attention_kernel.cuh"
#include "attention_params.cuh"
#include "attention_traits.cuh"
#include "attention_wgmma_kernel.cuh"

namespace kiln::attention {

struct SplitPlan {
  int splits = 1;
  int tiles_per_split = 0;
  bool cluster = false;  // the splits merge inside one thread-block cluster (ForwardParams::cluster)
};

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Whether and how the keys of a grid that already fills a wave are split (`plan_splits`). Such a
// grid's last wave can leave most SMs idle while its few blocks stream their whole key ranges (448
// decode blocks where 396 fit at once: a second wave of 52). Cutting every block's keys into `s`
// ranges makes `blocks * s` blocks that fill the waves evenly, at the price of a partial output per
// range written and read back by the combine. Only where a block's queries are few (decode: at most
// kDecodeMaxQueries a sequence), so that the partial is small beside the keys a range reads.
struct WaveBalance {
  bool on = false;
  int overhead_tiles = 0;         // a split block's fixed cost in key tiles (partial output written and read back)
  int most_splits = kMaxSplits;   // 1: never balance (a CLUSTER variant)
  int resident = 0;               // blocks of the variant an SM runs at once (SPLIT_TARGET may aim lower)
};

// A block's fixed cost, in the time of one key tile: one tile for its queries and its output, and
// a split block's partial output (BLOCK_M rows of HEAD_DIM + 1 fp32, written, then read by the
// combine) against a tile's keys and values (BLOCK_N rows of K and V, 2-byte elements).
inline constexpr int kBlockOverheadTiles = 1;
// A balanced plan is taken where its modelled time is at most this fraction of the unsplit one.
inline constexpr double kBalanceGain = 0.9;

inline WaveBalance wave_balance(int seq_q, int block_m, int block_n, int head_dim, int resident,
                                int most_splits = kMaxSplits) {
  WaveBalance b;
  b.resident = resident;
  b.on = seq_q <= kDecodeMaxQueries;
  const std::int64_t partial = 2 * static_cast<std::int64_t>(block_m) * (head_dim + 1) * 4;
  const std::int64_t tile = static_cast<std::int64_t>(block_n) * head_dim * 2 * 2;
  b.overhead_tiles = static_cast<int>((partial + tile - 1) / tile);
  b.most_splits = most_splits;
  return b;
}

// How many key ranges each query block's keys are cut into. Splitting pays when the grid of
// (batch, head, query block) leaves SMs idle: then fill one wave of `per_sm` blocks on every SM
// (never more: a second, partial wave would double the time of the whole grid), with at least
// kMinTilesPerSplit key tiles per split and at most kMaxSplits splits. A grid that fills a wave
// already is split only under `balance` (WaveBalance): into the number of ranges whose modelled
// time, waves x (tiles of a range + a block's fixed cost), is least, where that beats the unsplit
// grid by kBalanceGain.
inline SplitPlan plan_splits(int batch, int heads_q, int m_blocks, int n_blocks, int per_sm, int sm_count,
                             const WaveBalance& balance = {}) {
  SplitPlan plan{1, n_blocks};
  if (per_sm <= 0 || n_blocks < 2 * kMinTilesPerSplit) return plan;
  const std::int64_t blocks = static_cast<std::int64_t>(batch) * heads_q * m_blocks;
  const std::int64_t wave = static_cast<std::int64_t>(per_sm) * sm_count;
  if (blocks >= wave) {
    if (!balance.on) return plan;
    const std::int64_t wave_now = static_cast<std::int64_t>(std::max(per_sm, balance.resident)) * sm_count;
    // Splits whose partial outputs would move more than half the bytes of the keys they split cost
    // more than the last wave's idle SMs.
    const int most = std::min({balance.most_splits, n_blocks / kMinTilesPerSplit, kMaxSplits,
                               n_blocks / std::max(1, 2 * balance.overhead_tiles)});
    auto cost = [&](int tiles, int splits, int overhead) {
      const std::int64_t waves = (blocks * splits + wave_now - 1) / wave_now;
      return static_cast<double>(waves) * (tiles + overhead);
    };
    const double unsplit = cost(n_blocks, 1, kBlockOverheadTiles);
    double best = unsplit;
    for (int s = 2; s <= most; ++s) {
      const int tiles = ceil_div(n_blocks, s);
      const int splits = ceil_div(n_blocks, tiles);
      const double c = cost(tiles, splits, kBlockOverheadTiles + balance.overhead_tiles);
      if (c < best) {
        best = c;
        plan.tiles_per_split = tiles;
        plan.splits = splits;
      }
    }
    if (plan.splits > 1 && best > kBalanceGain * unsplit) plan = SplitPlan{1, n_blocks};
    return plan;
  }
  std::int64_t splits = wave / blocks;
  splits = std::min<std::int64_t>({splits, n_blocks / kMinTilesPerSplit, kMaxSplits});
  if (splits <= 1) return plan;
  const int tiles = static_cast<int>((n_blocks + splits - 1) / splits);
  plan.tiles_per_split = tiles;
  plan.splits = (n_blocks + tiles - 1) / tiles;  // no split left without tiles
  return plan;
}

// Bytes of split scratch for `splits` ranges: fp32 partial outputs, then fp32 log-sum-exps.
inline std::size_t split_scratch_bytes(int batch, int heads_q, int seq_q, int head_dim, int splits) {
  if (splits <= 1) return 0;
  const std::size_t rows = static_cast<std::size_t>(batch) * heads_q * seq_q;
  return static_cast<std::size_t>(splits) * rows * (static_cast<std::size_t>(head_dim) + 1) * sizeof(float);
}

// A PACK_GQA variant packs the grouped-query heads into the query block whenever several query
// heads share a key/value head (ForwardParams::packed).
template <class Config>
bool packs_group(const ForwardParams& p) {
  return Traits<Config>::kPackGqa && p.group > 1;
}

// The grid's query blocks and its head dimension (query heads, or key/value heads when packed)
// for blocks of `block_m` rows. One function for the launch and for the workload's scratch bound
// (max_split_scratch_bytes): when the bound counted unpacked blocks only, a packed call's plan asked
// for more splits than the scratch held, and the launch then ran it unsplit.
struct GridRows {
  int m_blocks = 0;
  int heads = 0;
};

inline GridRows grid_rows_of(int heads_q, int heads_kv, int seq_q, int block_m, bool packed) {
  return {ceil_div(packed ? seq_q * (heads_q / heads_kv) : seq_q, block_m), packed ? heads_kv : heads_q};
}

template <class Config>
void grid_rows(const ForwardParams& p, int& m_blocks, int& heads) {
  const GridRows g = grid_rows_of(p.heads_q, p.heads_kv, p.seq_q, Traits<Config>::kBlockM, packs_group<Config>(p));
  m_blocks = g.m_blocks;
  heads = g.heads;
}

// The forward kernel of a variant: the warpgroup-MMA one (WGMMA = 1) or the mma.sync one. Both
// take the same parameters and grid.
template <class T, class Element, bool kCausal>
constexpr auto forward_kernel() {
  if constexpr (T::kWgmma) {
    return attention_wgmma_kernel<T, Element, kCausal>;
  } else {
    return attention_forward_kernel<T, Element, kCausal>;
  }
}

namespace detail {
template <class Kernel>
cudaError_t allow_smem(Kernel kernel, int bytes, std::atomic<std::uint64_t>& done_devices);
template <class Kernel>
cudaError_t allow_cluster(Kernel kernel, int size, std::atomic<std::uint64_t>& done_devices);
}  // namespace detail

// Blocks of Config's forward kernel resident on one SM (its shared memory, registers and
// threads), queried once per device; 0 when the query fails. The bf16 full-mask instantiation
// stands for all four: they share the shared memory and the block size.
template <class Config>
int resident_blocks_per_sm() {
  using T = Traits<Config>;
  constexpr int kDevices = 64;
  static std::atomic<int> cached[kDevices];  // 0: not queried yet
  static std::atomic<std::uint64_t> smem_ready{0};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (device < kDevices) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  auto kernel = forward_kernel<T, __nv_bfloat16, false>();
  int per_sm = 0;
  if (detail::allow_smem(kernel, T::kSmemBytes, smem_ready) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, T::kThreads, T::kSmemBytes) != cudaSuccess) {
    return 0;
  }
  if (device < kDevices && per_sm > 0) cached[device].store(per_sm, std::memory_order_relaxed);
  return per_sm;
}

// The largest cluster of a CLUSTER variant's blocks this device runs: CLUSTER when one such
// cluster fits a GPC with the variant's shared memory and threads, else the largest power of two
// below it that does, 0 without cluster support (before sm_90) or when none fits. Queried once per
// device, like resident_blocks_per_sm() (the bf16 full-mask instantiation stands for all four).
template <class Config>
int cluster_limit() {
  using T = Traits<Config>;
  if constexpr (T::kCluster == 0) {
    return 0;
  } else {
    constexpr int kDevices = 64;
    static std::atomic<int> cached[kDevices];  // 0: not queried yet; -1: no cluster fits
    static std::atomic<std::uint64_t> smem_ready{0}, cluster_ready{0};
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 0;
    if (device < kDevices) {
      const int known = cached[device].load(std::memory_order_relaxed);
      if (known != 0) return known > 0 ? known : 0;
    }
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrClusterLaunch, device) != cudaSuccess) return 0;
    int limit = 0;
    auto kernel = forward_kernel<T, __nv_bfloat16, false>();
    if (supported != 0 && detail::allow_smem(kernel, T::kSmemBytes, smem_ready) == cudaSuccess &&
        detail::allow_cluster(kernel, T::kCluster, cluster_ready) == cudaSuccess) {
      for (int size = T::kCluster; size >= 2 && limit == 0; size = size > 8 ? 8 : size / 2) {
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(static_cast<unsigned>(size), 1, 1);
        config.blockDim = dim3(T::kThreads, 1, 1);
        config.dynamicSmemBytes = T::kSmemBytes;
        cudaLaunchAttribute attribute = {};
        attribute.id = cudaLaunchAttributeClusterDimension;
        attribute.val.clusterDim.x = static_cast<unsigned>(size);
        attribute.val.clusterDim.y = 1;
        attribute.val.clusterDim.z = 1;
        config.attrs = &attribute;
        config.numAttrs = 1;
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) == cudaSuccess && clusters > 0) limit = size;
      }
    }
    cudaGetLastError();  // a refused query leaves no error behind for the next launch to report
    if (device < kDevices) cached[device].store(limit > 0 ? limit : -1, std::memory_order_relaxed);
    return limit;
  }
}

// SPLIT_TARGET blocks per SM are aimed at, as many as fit (at least one): `resident` blocks of
// Config fit an SM. A CLUSTER variant on a device with clusters (`max_cluster` >= 2 blocks) merges
// its splits in the cluster, so it cuts the keys into at most as many ranges as one cluster holds.
// What the device allows comes in as arguments: plan_for asks the device, the host test of the
// workload's scratch bound (attention_split_plan_test) passes every value.
template <class Config>
SplitPlan plan_on(const ForwardParams& p, int resident, int max_cluster, int sm_count) {
  using T = Traits<Config>;
  int m_blocks = 0, heads = 0;
  grid_rows<Config>(p, m_blocks, heads);
  const int per_sm = T::kSplitTarget <= 0 ? 0 : std::max(1, std::min(T::kSplitTarget, resident));
  const int n_blocks = ceil_div(p.seq_k, T::kBlockN);
  // A CLUSTER variant does not balance a grid past one wave: its clusters of split blocks must each
  // find room in one GPC at once, and the one such grid measured (B57 Hkv8 G8 Sq4 Sk4065 D64, a
  // one-warp CLUSTER 8 variant, H200 2026-12-02) took 1.08x the unsplit time.
  const bool clusters = T::kCluster > 0 && max_cluster >= 2;
  const WaveBalance balance =
      wave_balance(p.seq_q, T::kBlockM, T::kBlockN, T::kHeadDim, resident, clusters ? 1 : kMaxSplits);
  SplitPlan plan = plan_splits(p.batch, heads, m_blocks, n_blocks, per_sm, sm_count, balance);
  if (clusters && plan.splits > 1) {
    if (plan.splits > max_cluster) {
      plan.tiles_per_split = ceil_div(n_blocks, max_cluster);
      plan.splits = ceil_div(n_blocks, plan.tiles_per_split);
    }
    plan.cluster = plan.splits > 1;
  }
  return plan;
}

template <class Config>
SplitPlan plan_for(const ForwardParams& p, int sm_count) {
  using T = Traits<Config>;
  int max_cluster = 0;
  if constexpr (T::kCluster > 0) max_cluster = cluster_limit<Config>();
  return plan_on<Config>(p, T::kSplitTarget <= 0 ? 0 : resident_blocks_per_sm<Config>(), max_cluster, sm_count);
}

// Scratch bytes the Config's plan asks for on this problem (0 when it does not split, or splits
// inside a cluster).
template <class Config>
std::size_t scratch_bytes_for(const ForwardParams& p, int sm_count) {
  const SplitPlan plan = plan_for<Config>(p, sm_count);
  return plan.cluster ? 0 : split_scratch_bytes(p.batch, p.heads_q, p.seq_q, Config::HEAD_DIM, plan.splits);
}

namespace detail {

// Raises a kernel's dynamic shared-memory limit once per device (the attribute is per device).
template <class Kernel>
cudaError_t allow_smem(Kernel kernel, int bytes, std::atomic<std::uint64_t>& done_devices) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  const std::uint64_t bit = device < 64 ? (std::uint64_t{1} << device) : 0;
  if (bit != 0 && (done_devices.load(std::memory_order_relaxed) & bit) != 0) return cudaSuccess;
  status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (status == cudaSuccess && bit != 0) done_devices.fetch_or(bit, std::memory_order_relaxed);
  return status;
}

// Lets a kernel run in clusters above the portable 8 blocks, once per device.
template <class Kernel>
cudaError_t allow_cluster(Kernel kernel, int size, std::atomic<std::uint64_t>& done_devices) {
  if (size <= 8) return cudaSuccess;
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  const std::uint64_t bit = device < 64 ? (std::uint64_t{1} << device) : 0;
  if (bit != 0 && (done_devices.load(std::memory_order_relaxed) & bit) != 0) return cudaSuccess;
  status = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (status == cudaSuccess && bit != 0) done_devices.fetch_or(bit, std::memory_order_relaxed);
  return status;
}

// `persistent_blocks`: the grid of a PERSISTENT variant (its blocks take the work items in turn);
// other variants launch a block per item.
template <class T, class Element, bool kCausal>
cudaError_t launch_forward(const ForwardParams& p, unsigned persistent_blocks, cudaStream_t stream) {
  static std::atomic<std::uint64_t> smem_ready{0}, cluster_ready{0};
  auto kernel = forward_kernel<T, Element, kCausal>();
  cudaError_t status = allow_smem(kernel, T::kSmemBytes, smem_ready);
  if (status != cudaSuccess) return status;
  const dim3 grid = T::kPersistent ? dim3(persistent_blocks, 1, 1)
                                   : dim3(static_cast<unsigned>(p.m_blocks * p.splits),
                                          static_cast<unsigned>(p.packed ? p.heads_kv : p.heads_q),
                                          static_cast<unsigned>(p.batch));
  if (p.cluster) {
    status = allow_cluster(kernel, T::kCluster, cluster_ready);
    if (status != cudaSuccess) return status;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(T::kThreads, 1, 1);
    config.dynamicSmemBytes = T::kSmemBytes;
    config.stream = stream;
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(p.splits);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, kernel, p);
  }
  kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(p);
  status = cudaGetLastError();
  if (status != cudaSuccess || p.splits <= 1) return status;
  constexpr int kRowsPerBlock = kCombineThreads / (T::kHeadDim / 4);
  const std::int64_t rows = static_cast<std::int64_t>(p.batch) * p.heads_q * p.seq_q;
  const auto combine_blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  attention_combine_kernel<T::kHeadDim, Element><<<combine_blocks, kCombineThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace detail

namespace detail {

// cuTensorMapEncodeTiled, found once through the runtime (the library does not link the driver).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// The TMA descriptor of one operand as a 4-d tensor (head_dim, seq, heads, batch) read in boxes of
// 64 elements by `box_rows` rows with the 128-byte swizzle of attention_wgmma_kernel.cuh. The API
// already requires 16-byte aligned pointers and strides in multiples of 8 elements, which is what
// TMA needs; a dimension of extent 1 gets a nominal stride (its stride is never used).
inline cudaError_t encode_operand(CUtensorMap* map, AttentionDType dtype, const void* data, int head_dim, int seq,
                                  int heads, int batch, std::int64_t seq_stride, std::int64_t head_stride,
                                  std::int64_t batch_stride, int box_rows) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(seq),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const std::int64_t given[3] = {seq_stride, head_stride, batch_stride};
  cuuint64_t strides[3];
  for (int i = 0; i < 3; ++i) {
    const std::int64_t nominal = 16;
    strides[i] = static_cast<cuuint64_t>(dims[i + 1] == 1 && given[i] * 2 < nominal ? nominal : given[i] * 2);
  }
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUresult status =
      encode(map, dtype == AttentionDType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
             const_cast<void*>(data), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return status == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace detail

// Whether the current device runs the warpgroup-MMA path: compute capability 9.0, the only one
// its sm_90a code is built for. Queried once per device.
inline bool wgmma_device() {
  constexpr int kDevices = 64;
  static std::atomic<int> cached[kDevices];  // 0: not queried yet; 1: yes; -1: no
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  if (device < kDevices) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known != 0) return known > 0;
  }
  int major = 0, minor = 0;
  const bool yes = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                   cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
                   major == 9 && minor == 0;
  if (device < kDevices) cached[device].store(yes ? 1 : -1, std::memory_order_relaxed);
  return yes;
}

// Readies `p` for variant Config on the current device, or says it cannot run the call here: a
// warpgroup-MMA variant needs an sm_90 device, and a TMA producer descriptors of Q, K and V (put in
// `p`) that the driver accepts for the call's strides (it refuses, for one, a zero stride that
// broadcasts one key/value head to several). The API sends a call no dispatched variant can run to
// its space's default variant.
template <class Config>
bool prepare(ForwardParams& p, AttentionDType dtype) {
  using T = Traits<Config>;
  if constexpr (T::kWgmma) {
    if (!wgmma_device()) return false;
  }
  if constexpr (T::kProducer) {
    return detail::encode_operand(&p.tma_q, dtype, p.q, T::kHeadDim, p.seq_q, p.heads_q, p.batch, p.q_seq_stride,
                                  p.q_head_stride, p.q_batch_stride, T::kBlockM) == cudaSuccess &&
           detail::encode_operand(&p.tma_k, dtype, p.k, T::kHeadDim, p.seq_k, p.heads_kv, p.batch, p.k_seq_stride,
                                  p.k_head_stride, p.k_batch_stride, T::kBlockN) == cudaSuccess &&
           detail::encode_operand(&p.tma_v, dtype, p.v, T::kHeadDim, p.seq_k, p.heads_kv, p.batch, p.v_seq_stride,
                                  p.v_head_stride, p.v_batch_stride, T::kBlockN) == cudaSuccess;
  }
  return true;
}

// Enqueues the attention described by `p`, readied by prepare<Config> (pointers, shape, strides,
// scale, descriptors; the grid fields are filled here) with variant Config. The keys are split only
// when the plan asks for it and either the splits form a cluster or `scratch` holds at least
// scratch_bytes_for<Config>() bytes; otherwise one pass, same result.
template <class Config>
cudaError_t enqueue(ForwardParams p, AttentionDType dtype, bool causal, void* scratch, std::size_t scratch_bytes,
                    int sm_count, cudaStream_t stream) {
  using T = Traits<Config>;
  int heads = 0;
  p.packed = packs_group<Config>(p);
  grid_rows<Config>(p, p.m_blocks, heads);
  p.n_blocks = ceil_div(p.seq_k, T::kBlockN);
  SplitPlan plan = plan_for<Config>(p, sm_count);
  const std::size_t need = split_scratch_bytes(p.batch, p.heads_q, p.seq_q, T::kHeadDim, plan.splits);
  if (plan.splits > 1 && !plan.cluster && (scratch == nullptr || scratch_bytes < need)) plan = SplitPlan{1, p.n_blocks};
  p.splits = plan.splits;
  p.tiles_per_split = plan.tiles_per_split;
  p.cluster = plan.cluster;
  if (p.splits > 1 && !p.cluster) {
    const std::size_t rows = static_cast<std::size_t>(p.batch) * p.heads_q * p.seq_q;
    p.o_partial = static_cast<float*>(scratch);
    p.lse_partial = p.o_partial + static_cast<std::size_t>(p.splits) * rows * T::kHeadDim;
  }
  // PERSISTENT: one wave of blocks (as many as fit on every SM), never more than the units of work
  // (query blocks; with a causal mask, pairs of them: attention_wgmma_kernel.cuh, next_tile()).
  unsigned persistent_blocks = 0;
  if constexpr (T::kPersistent) {
    const int per_split = causal ? (p.m_blocks + 1) / 2 : p.m_blocks;
    const std::int64_t items = static_cast<std::int64_t>(per_split) * p.splits * heads * p.batch;
    const std::int64_t wave = static_cast<std::int64_t>(std::max(1, resident_blocks_per_sm<Config>())) *
                              std::max(1, sm_count);
    persistent_blocks = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(items, wave)));
  }
  if (dtype == AttentionDType::bf16) {
    return causal ? detail::launch_forward<T, __nv_bfloat16, true>(p, persistent_blocks, stream)
                  : detail::launch_forward<T, __nv_bfloat16, false>(p, persistent_blocks, stream);
  }
  return causal ? detail::launch_forward<T, __half, true>(p, persistent_blocks, stream)
                : detail::launch_forward<T, __half, false>(p, persistent_blocks, stream);
}

// prepare<Config>, then enqueue<Config>: cudaErrorNotSupported when the variant cannot run the call
// on this device (prepare), before anything is enqueued.
template <class Config>
cudaError_t launch(ForwardParams p, AttentionDType dtype, bool causal, void* scratch, std::size_t scratch_bytes,
                   int sm_count, cudaStream_t stream) {
  if (!prepare<Config>(p, dtype)) return cudaErrorNotSupported;
  return enqueue<Config>(p, dtype, causal, scratch, scratch_bytes, sm_count, stream);
}

}  // namespace kiln::attention
