// The Kiln workload of the attention spaces (WorkloadD<D>, one per head dimension): inputs drawn
// from a seed, outputs O (bf16/fp16) and the log-sum-exp (fp32), split scratch sized for any
// variant, and the check against an fp64 host reference (small problems, every row) or an fp32
// GPU reference (every row up to a bound, beyond it a random sample of rows; every element is
// still checked for being written).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attention_launch.cuh"
#include "attention_reference.cuh"
#include "attention_shape.cuh"
#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"

namespace kiln::attention {

// Split scratch that covers the plan of any Config Traits<> accepts (BLOCK_M, BLOCK_N multiples
// of 16 up to kMaxBlock, SPLIT_TARGET up to kMaxSplitTarget, grouped heads packed into the block
// or not), so every variant can split. Counting unpacked blocks only, as it did until 2026-11-29,
// it fell short wherever packing leaves fewer blocks (and so more splits): a decode call of 6
// key/value streams with groups of 6 and 5 queries planned 64 splits, found scratch for fewer,
// and ran unsplit, 7.4x the fastest variant there (the tuning of that day measured such variants so).
inline std::size_t max_split_scratch_bytes(const Shape& s, int sm_count) {
  std::size_t most = 0;
  for (const bool packed : {false, true}) {
    if (packed && s.heads_q == s.heads_kv) continue;
    for (int bm = 16; bm <= kMaxBlock; bm += 16) {
      const GridRows g = grid_rows_of(s.heads_q, s.heads_kv, s.seq_q, bm, packed);
      for (int bn = 16; bn <= kMaxBlock; bn += 16) {
        const int n_blocks = ceil_div(s.seq_k, bn);
        for (int target = 1; target <= kMaxSplitTarget; ++target) {
          const SplitPlan plan = plan_splits(s.batch, g.heads, g.m_blocks, n_blocks, target, sm_count);
          most = std::max(most, split_scratch_bytes(s.batch, s.heads_q, s.seq_q, s.head_dim, plan.splits));
        }
        // A grid that fills a wave is split by the blocks an SM runs at once (WaveBalance), up to the
        // hardware's 32, whatever SPLIT_TARGET is: one plan per resident count covers every target.
        if (static_cast<std::int64_t>(s.batch) * g.heads * g.m_blocks >= sm_count) {
          for (int resident = 1; resident <= kMaxResident; ++resident) {
            const SplitPlan plan = plan_splits(s.batch, g.heads, g.m_blocks, n_blocks, 1, sm_count,
                                               wave_balance(s.seq_q, bm, bn, s.head_dim, resident));
            most = std::max(most, split_scratch_bytes(s.batch, s.heads_q, s.seq_q, s.head_dim, plan.splits));
          }
        }
      }
    }
  }
  return most;
}

template <int kHeadDim>
class Workload final : public kiln::Workload {
 public:
  // Up to this many multiply-adds (rows · Sk · D) the fp64 host reference checks every row. It
  // was 2^26 until 2026-11-29: at that size it took about half a second of each variant process
  // per problem (attention_decode_d64 lists four such problems, about two of the five seconds a
  // variant's listed problems cost on the H200), where a check against the fp32 GPU reference
  // took tens of milliseconds (the worklog's timestamps).
  static constexpr std::int64_t kHostReferenceMacs = std::int64_t{1} << 22;
  // Up to this many multiply-adds and rows the GPU reference still checks every row; beyond
  // either, kSampleRows of them.
  static constexpr std::int64_t kEveryRowMacs = std::int64_t{1} << 32;
  static constexpr std::int64_t kEveryRowRows = 16384;
  static constexpr int kSampleRows = 1024;

  Workload(const kiln::Problem& problem, std::uint64_t seed)
      : shape_(shape_from_problem(problem, kHeadDim)), seed_(seed) {
    int device = 0;
    KILN_CUDA_CHECK(cudaGetDevice(&device));
    KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));

    // Inputs drawn on the device (a counter-based hash of seed, tensor and index: the same on
    // every GPU), uniform with the variance of the normal draws they replace: Q of standard
    // deviation 2, so that the softmax is peaked on some rows and flat on others, K and V of 1;
    // rounded to the element type, which is what the references read. Drawn on the host, the
    // 1 GB of K and V of a decode problem at Sk = 128k cost each variant process about 10 s per
    // problem (one core of the development machine, 4.9 s a tensor); on the device, a kernel
    // writing 1 GB. The host reference reads a downloaded copy.
    q_ = kiln::cuda::DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(shape_.q_elems()));
    k_ = kiln::cuda::DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(shape_.kv_elems()));
    v_ = kiln::cuda::DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(shape_.kv_elems()));
    draw(q_, kQStream, 2.0f);
    draw(k_, kKStream, 1.0f);
    draw(v_, kVStream, 1.0f);
    o_ = kiln::cuda::DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(shape_.q_elems()));
    lse_ = kiln::cuda::DeviceBuffer<float>(static_cast<std::size_t>(shape_.rows()));
    scratch_ = kiln::cuda::DeviceBuffer<float>(max_split_scratch_bytes(shape_, sm_count_) / sizeof(float));
    if (host_reference()) host_ = HostInputs{q_.download(), k_.download(), v_.download()};
    params_ = params_for(shape_.attention_params(q_.get(), k_.get(), v_.get(), o_.get(), lse_.get()));
  }

  // A rotation set: the inputs copied on the device, the host reference's copy and the scratch
  // size taken over. Making a set anew draws its inputs and, for the small problems that rotate
  // through thousands of sets, downloads them for the host reference each time.
  std::unique_ptr<kiln::Workload> copy() const override { return std::unique_ptr<Workload>(new Workload(*this, 0)); }

  template <class Config>
  void run(cudaStream_t stream) {
    static_assert(Config::HEAD_DIM == kHeadDim, "variant of another head dimension");
    const cudaError_t status =
        launch<Config>(params_, shape_.dtype, shape_.causal, scratch_.get(), scratch_.bytes(), sm_count_, stream);
    if (status != cudaSuccess) {
      throw kiln::RuntimeError(std::string("attention launch failed: ") + cudaGetErrorName(status) + " (" +
                               cudaGetErrorString(status) + ") for " + shape_.describe());
    }
  }

  void poison() override {
    o_.fill(shape_.dtype == AttentionDType::bf16 ? kiln::poison::bf16 : kiln::poison::f16);
    lse_.fill(kiln::float_of_bits(kiln::poison::f32));
  }

  std::vector<kiln::CheckResult> check() override {
    const std::vector<std::uint16_t> o = o_.download();
    const std::vector<float> lse = lse_.download();
    const std::int64_t rows = shape_.rows();
    const int D = kHeadDim;

    // Reference rows: all of them on the host, or a sample (first, last, random) on the GPU.
    std::vector<std::int64_t> ref_rows;
    std::vector<double> ref_o;
    std::vector<double> ref_lse;
    if (host_reference()) {
      ref_rows.resize(static_cast<std::size_t>(rows));
      ref_o.resize(static_cast<std::size_t>(rows) * D);
      ref_lse.resize(static_cast<std::size_t>(rows));
      for (std::int64_t r = 0; r < rows; ++r) {
        ref_rows[r] = r;
        ref_lse[r] = reference_row_cpu(shape_, host_, r, &ref_o[static_cast<std::size_t>(r) * D]);
      }
    } else {
      ref_rows = sample_rows(rows);
      gpu_reference(ref_rows, ref_o, ref_lse);
    }
    std::vector<std::int32_t> slot(static_cast<std::size_t>(rows), -1);
    for (std::size_t n = 0; n < ref_rows.size(); ++n) slot[ref_rows[n]] = static_cast<std::int32_t>(n);

    const bool bf16 = shape_.dtype == AttentionDType::bf16;
    kiln::Comparison out_cmp("out", dtype_name(shape_.dtype));
    kiln::Comparison lse_cmp("lse", "fp32");
    std::uint64_t empty_rows = 0, empty_unwritten = 0, empty_wrong = 0;
    const Strides qs = shape_.q_strides();
    for (std::int64_t r = 0; r < rows; ++r) {
      const int i = static_cast<int>(r % shape_.seq_q);
      const std::int64_t bh = r / shape_.seq_q;
      const std::int64_t h = bh % shape_.heads_q;
      const std::int64_t b = bh / shape_.heads_q;
      const std::uint16_t* row = o.data() + b * qs.batch + h * qs.head + i * qs.seq;
      // A row that sees no key (causal with Sq > Sk) must be exactly 0 with log-sum-exp -inf,
      // known without a reference.
      const bool empty = shape_.visible_keys(i) <= 0;
      const std::int32_t n = slot[r];
      for (int d = 0; d < D; ++d) {
        const double ref = empty ? 0.0 : (n >= 0 ? ref_o[static_cast<std::size_t>(n) * D + d] : 0.0);
        if (empty || n >= 0) {
          bf16 ? out_cmp.bf16(row[d], ref) : out_cmp.f16(row[d], ref);
        } else {
          bf16 ? out_cmp.written_bf16(row[d]) : out_cmp.written_f16(row[d]);
        }
      }
      if (empty) {
        ++empty_rows;
        if (kiln::bits_of(lse[r]) == kiln::poison::f32) {
          ++empty_unwritten;
        } else if (!(std::isinf(lse[r]) && lse[r] < 0)) {
          ++empty_wrong;
        }
      } else if (n >= 0) {
        lse_cmp.f32(lse[r], ref_lse[n]);
      } else {
        lse_cmp.written_f32(lse[r]);
      }
    }
    kiln::CheckResult lse_result = lse_cmp.result();
    // The Comparison has no notion of an expected -inf; count those rows here. A wrong value
    // there is an unbounded error.
    lse_result.elements += empty_rows;
    lse_result.compared += empty_rows;
    lse_result.unwritten += empty_unwritten;
    if (empty_wrong > 0) {
      lse_result.rel_l2 = std::numeric_limits<double>::infinity();
      lse_result.max_abs_err = std::numeric_limits<double>::infinity();
    }
    return {out_cmp.result(), lse_result};
  }

  std::size_t footprint_bytes() const override { return q_.bytes() + k_.bytes() + v_.bytes() + o_.bytes() + lse_.bytes(); }

  const Shape& shape() const { return shape_; }

 private:
  // The copy behind copy(): the int only tells it from the (deleted) copy constructor.
  Workload(const Workload& from, int)
      : shape_(from.shape_), seed_(from.seed_), sm_count_(from.sm_count_), host_(from.host_) {
    q_ = kiln::cuda::DeviceBuffer<std::uint16_t>(from.q_.size());
    k_ = kiln::cuda::DeviceBuffer<std::uint16_t>(from.k_.size());
    v_ = kiln::cuda::DeviceBuffer<std::uint16_t>(from.v_.size());
    for (auto [to, source] : {std::pair{&q_, &from.q_}, std::pair{&k_, &from.k_}, std::pair{&v_, &from.v_}}) {
      KILN_CUDA_CHECK(cudaMemcpy(to->get(), source->get(), source->bytes(), cudaMemcpyDeviceToDevice));
    }
    o_ = kiln::cuda::DeviceBuffer<std::uint16_t>(from.o_.size());
    lse_ = kiln::cuda::DeviceBuffer<float>(from.lse_.size());
    scratch_ = kiln::cuda::DeviceBuffer<float>(from.scratch_.size());
    params_ = params_for(shape_.attention_params(q_.get(), k_.get(), v_.get(), o_.get(), lse_.get()));
  }

  bool host_reference() const { return shape_.rows() * shape_.seq_k * kHeadDim <= kHostReferenceMacs; }

  static constexpr std::uint64_t kQStream = 1, kKStream = 2, kVStream = 3;

  // Uniform in [-sigma * sqrt(3), sigma * sqrt(3)): mean 0, standard deviation sigma.
  void draw(kiln::cuda::DeviceBuffer<std::uint16_t>& x, std::uint64_t stream, float sigma) const {
    const float half_width = sigma * 1.7320508f;
    const auto count = static_cast<std::int64_t>(x.size());
    if (shape_.dtype == AttentionDType::bf16) {
      kiln::cuda::fill_uniform(reinterpret_cast<__nv_bfloat16*>(x.get()), count, -half_width, half_width, seed_, stream);
    } else {
      kiln::cuda::fill_uniform(reinterpret_cast<__half*>(x.get()), count, -half_width, half_width, seed_, stream);
    }
  }

  // Every row of a problem small enough; otherwise the first and last row, the last query of every
  // 8th (batch, head), then random rows.
  std::vector<std::int64_t> sample_rows(std::int64_t rows) const {
    if (rows <= kEveryRowRows && rows * shape_.seq_k * kHeadDim <= kEveryRowMacs) {
      std::vector<std::int64_t> every(static_cast<std::size_t>(rows));
      for (std::int64_t r = 0; r < rows; ++r) every[static_cast<std::size_t>(r)] = r;
      return every;
    }
    std::vector<char> taken(static_cast<std::size_t>(rows), 0);
    std::vector<std::int64_t> out;
    auto take = [&](std::int64_t r) {
      if (!taken[r]) {
        taken[r] = 1;
        out.push_back(r);
      }
    };
    take(0);
    take(rows - 1);
    const std::int64_t heads = static_cast<std::int64_t>(shape_.batch) * shape_.heads_q;
    for (std::int64_t bh = 0; bh < heads && static_cast<int>(out.size()) < kSampleRows / 4; bh += 8) {
      take(bh * shape_.seq_q + shape_.seq_q - 1);
    }
    kiln::Rng rng(seed_ ^ 0x5EEDu);
    const std::int64_t want = std::min<std::int64_t>(rows, kSampleRows);
    while (static_cast<std::int64_t>(out.size()) < want) take(static_cast<std::int64_t>(rng.uniform() * rows) % rows);
    return out;
  }

  void gpu_reference(const std::vector<std::int64_t>& rows, std::vector<double>& ref_o, std::vector<double>& ref_lse) {
    kiln::cuda::DeviceBuffer<std::int64_t> rows_dev(rows);
    kiln::cuda::DeviceBuffer<float> out_dev(rows.size() * kHeadDim);
    kiln::cuda::DeviceBuffer<float> lse_dev(rows.size());
    const auto blocks = static_cast<unsigned>(rows.size());
    if (shape_.dtype == AttentionDType::bf16) {
      reference_rows_kernel<kHeadDim, __nv_bfloat16>
          <<<blocks, kReferenceThreads>>>(params_, shape_.causal, rows_dev.get(), out_dev.get(), lse_dev.get());
    } else {
      reference_rows_kernel<kHeadDim, __half>
          <<<blocks, kReferenceThreads>>>(params_, shape_.causal, rows_dev.get(), out_dev.get(), lse_dev.get());
    }
    KILN_CUDA_CHECK(cudaGetLastError());
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> o = out_dev.download();
    const std::vector<float> l = lse_dev.download();
    ref_o.assign(o.begin(), o.end());
    ref_lse.assign(l.begin(), l.end());
  }

  Shape shape_;
  std::uint64_t seed_;
  int sm_count_ = 0;
  HostInputs host_;
  kiln::cuda::DeviceBuffer<std::uint16_t> q_, k_, v_, o_;
  kiln::cuda::DeviceBuffer<float> lse_, scratch_;
  ForwardParams params_;
};

// The workloads the spaces name (a space's harness names a class, not a template instance).
using WorkloadD64 = Workload<64>;
using WorkloadD128 = Workload<128>;
using WorkloadD256 = Workload<256>;

}  // namespace kiln::attention
