// The launch's split plans against the split scratch the workload allocates, on the host (no device
// needed). For block geometries of the decode and forward spaces, grouped heads packed or not, every
// number of resident blocks per SM and with and without clusters, the scratch the launch's own plan
// (plan_on, what plan_for runs with the device's figures) asks for must fit
// max_split_scratch_bytes(); where it did not, the launch ran the variant unsplit and the tuner
// timed the unsplit kernel. Also the decode shape that found the gap.
#include <cstdio>
#include <string>

#include "attention_config.hpp"
#include "attention_workload.cuh"

namespace {

int failed = 0, passed = 0;

void check(bool ok, const std::string& what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

kiln::attention::Shape shape(int b, int hq, int hkv, int sq, int sk, int d) {
  kiln::attention::Shape s;
  s.batch = b;
  s.heads_q = hq;
  s.heads_kv = hkv;
  s.seq_q = sq;
  s.seq_k = sk;
  s.head_dim = d;
  return s;
}

// Geometries of the decode spaces (one to four warps, SPLIT_TARGET 8, packed, CLUSTER 0 or 8) and
// of the forward spaces (SPLIT_TARGET 2, packed or not).
KILN_ATTENTION_CONFIG(DecodeD64M16, 64, 16, 32, 1, 4, 0, 8, 1, 0);
KILN_ATTENTION_CONFIG(DecodeD64M32, 64, 32, 64, 2, 4, 0, 8, 1, 0);
KILN_ATTENTION_CONFIG(DecodeD64M64Cluster, 64, 64, 64, 4, 2, 0, 8, 1, 8);
KILN_ATTENTION_CONFIG(DecodeD128M16, 128, 16, 64, 1, 2, 0, 8, 1, 0);
KILN_ATTENTION_CONFIG(DecodeD128M64, 128, 64, 32, 4, 2, 0, 8, 1, 0);
KILN_ATTENTION_CONFIG(ForwardD64Packed, 64, 64, 64, 4, 2, 0, 2, 1, 0);
KILN_ATTENTION_CONFIG(ForwardD128Packed, 128, 128, 64, 8, 2, 0, 2, 1, 0);
KILN_ATTENTION_CONFIG(ForwardD128, 128, 128, 64, 8, 2, 0, 2, 0, 0);

// Whether every plan the launch can make for Config on `s` fits the workload's scratch.
template <class Config>
void covers(const kiln::attention::Shape& s, int sm_count, std::size_t have) {
  using namespace kiln::attention;
  const ForwardParams p = params_for(s.attention_params(nullptr, nullptr, nullptr, nullptr, nullptr));
  for (int resident = 1; resident <= kiln::attention::kMaxResident; ++resident) {
    for (const int max_cluster : {0, 8}) {
      const SplitPlan plan = plan_on<Config>(p, resident, max_cluster, sm_count);
      const std::size_t need =
          plan.cluster ? 0 : split_scratch_bytes(s.batch, s.heads_q, s.seq_q, Config::HEAD_DIM, plan.splits);
      if (need > have) {
        check(false, std::string(Config::kiln_name) + " on " + s.describe() + ", " + std::to_string(sm_count) +
                         " SMs, " + std::to_string(resident) + " resident: " + std::to_string(plan.splits) +
                         " splits need " + std::to_string(need) + " bytes, the workload has " + std::to_string(have));
        return;
      }
    }
  }
  check(true, "");
}

template <class... Configs>
void covers_all(int head_dim, int sm_count) {
  for (const int b : {1, 2, 4, 16}) {
    for (const int hkv : {1, 3, 8, 32}) {
      for (const int group : {1, 2, 6, 8, 16}) {
        for (const int sq : {1, 4, 5, 16, 333}) {
          for (const int sk : {1, 65, 4099, 60548, 131072}) {
            const auto s = shape(b, hkv * group, hkv, sq, sk, head_dim);
            const std::size_t have = kiln::attention::max_split_scratch_bytes(s, sm_count);
            (covers<Configs>(s, sm_count, have), ...);
          }
        }
      }
    }
  }
}

}  // namespace

int main() {
  for (const int sms : {58, 132}) {  // an L4, an H100/H200
    covers_all<DecodeD64M16, DecodeD64M32, DecodeD64M64Cluster, ForwardD64Packed>(64, sms);
    covers_all<DecodeD128M16, DecodeD128M64, ForwardD128Packed, ForwardD128>(128, sms);
  }
  // The held-out decode point of 2026-11-29 (B2 Hkv3 G6 Sq5 Sk60548): packed into one 32-row block
  // per stream, 6 blocks plan 64 splits; the scratch sized for unpacked blocks held 29.
  using namespace kiln::attention;
  const Shape s = shape(2, 18, 3, 5, 60548, 64);
  const ForwardParams p = params_for(s.attention_params(nullptr, nullptr, nullptr, nullptr, nullptr));
  const SplitPlan plan = plan_on<DecodeD64M32>(p, 8, 0, 132);
  check(plan.splits == 64, "6 blocks of 8 per SM on 132 SMs split 64 ways, got " + std::to_string(plan.splits));
  check(split_scratch_bytes(2, 18, 5, 64, plan.splits) <= max_split_scratch_bytes(s, 132), "their scratch fits");
  // Wave balance: B34 Hkv24 G4 Sq1 Sk1965 D128 is 816 one-warp blocks where 792 run at once (6 an
  // SM): unsplit, a second wave of 24 blocks streams whole key ranges while most SMs idle. Split,
  // the waves even out and the scratch still fits.
  {
    const Shape d = shape(34, 96, 24, 1, 1965, 128);
    const ForwardParams q = params_for(d.attention_params(nullptr, nullptr, nullptr, nullptr, nullptr));
    const SplitPlan balanced = plan_on<DecodeD128M16>(q, 6, 0, 132);
    check(balanced.splits > 1, "816 blocks on 792 places split, got " + std::to_string(balanced.splits));
    check(split_scratch_bytes(34, 96, 1, 128, balanced.splits) <= max_split_scratch_bytes(d, 132), "and fit");
    // Exactly two waves (1584 blocks): nothing to even out.
    const Shape even = shape(66, 96, 24, 1, 1965, 128);
    const ForwardParams e = params_for(even.attention_params(nullptr, nullptr, nullptr, nullptr, nullptr));
    check(plan_on<DecodeD128M16>(e, 6, 0, 132).splits == 1, "1584 blocks on 792 places stay unsplit");
    // A CLUSTER variant does not balance on a device with clusters; without them it splits through
    // scratch as any other variant.
    const Shape c = shape(29, 80, 10, 1, 6589, 64);  // 290 blocks where 264 run at once (2 an SM)
    const ForwardParams cq = params_for(c.attention_params(nullptr, nullptr, nullptr, nullptr, nullptr));
    check(plan_on<DecodeD64M64Cluster>(cq, 2, 8, 132).splits == 1, "a cluster variant past one wave stays unsplit");
    const SplitPlan scratch = plan_on<DecodeD64M64Cluster>(cq, 2, 0, 132);
    check(scratch.splits > 1 && !scratch.cluster, "without clusters it balances through scratch, got " +
                                                      std::to_string(scratch.splits) + " splits");
    // The same grid (816 blocks of 31 key tiles, 6 an SM) with more than kDecodeMaxQueries queries a
    // sequence is never balanced: prefill partials are as large as their keys.
    const auto grid = [](int seq_q) {
      return plan_splits(34, 24, 1, 31, 6, 132, wave_balance(seq_q, 16, 64, 128, 6));
    };
    check(grid(kDecodeMaxQueries).splits > 1 && grid(kDecodeMaxQueries + 1).splits == 1,
          "balanced with 16 queries, not with 17");
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
