// The split plans of the launch against the split scratch the workload allocates, on the host (no
// device needed): for every block geometry a Config may have (BLOCK_M, BLOCK_N, SPLIT_TARGET,
// grouped heads packed or not) and problems across the decode and prefill domains, the scratch the
// launch's plan needs fits max_split_scratch_bytes(), or the launch would run that variant unsplit
// and the tuner would time the unsplit kernel. Also the decode shape that found the gap.
#include <cstdio>
#include <string>

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

// Whether every plan the launch can make for `s` fits the workload's scratch.
void covers(const kiln::attention::Shape& s, int sm_count) {
  using namespace kiln::attention;
  const std::size_t have = max_split_scratch_bytes(s, sm_count);
  bool ok = true;
  std::string worst;
  for (const bool packed : {false, true}) {
    if (packed && s.heads_q == s.heads_kv) continue;
    for (int bm = 16; bm <= kMaxBlock; bm += 16) {
      const GridRows g = grid_rows_of(s.heads_q, s.heads_kv, s.seq_q, bm, packed);
      for (int bn = 16; bn <= kMaxBlock; bn += 16) {
        for (int target = 1; target <= kMaxSplitTarget; ++target) {
          const SplitPlan plan = plan_splits(s.batch, g.heads, g.m_blocks, ceil_div(s.seq_k, bn), target, sm_count);
          const std::size_t need = split_scratch_bytes(s.batch, s.heads_q, s.seq_q, s.head_dim, plan.splits);
          if (need > have && ok) {
            ok = false;
            worst = "BLOCK_M " + std::to_string(bm) + " BLOCK_N " + std::to_string(bn) + " target " +
                    std::to_string(target) + (packed ? " packed" : "") + ": " + std::to_string(plan.splits) +
                    " splits need " + std::to_string(need) + " bytes, the workload has " + std::to_string(have);
          }
        }
      }
    }
  }
  check(ok, s.describe() + " on " + std::to_string(sm_count) + " SMs: " + worst);
}

}  // namespace

int main() {
  using kiln::attention::Shape;
  for (const int sms : {58, 78, 114, 132}) {  // L4, and Hopper parts
    for (const int d : {64, 128, 256}) {
      for (const int b : {1, 2, 4, 16}) {
        for (const int hkv : {1, 3, 8, 32}) {
          for (const int group : {1, 2, 6, 8, 16}) {
            for (const int sq : {1, 4, 5, 16, 333}) {
              for (const int sk : {1, 65, 4099, 60548, 131072}) covers(shape(b, hkv * group, hkv, sq, sk, d), sms);
            }
          }
        }
      }
    }
  }
  // The held-out decode point of 2026-11-29 (B2 Hkv3 G6 Sq5 Sk60548): packed into one 32-row block
  // per stream, 6 blocks plan 64 splits; the scratch sized for unpacked blocks held 29.
  using namespace kiln::attention;
  const Shape s = shape(2, 18, 3, 5, 60548, 64);
  const GridRows g = grid_rows_of(18, 3, 5, 32, true);
  check(g.m_blocks == 1 && g.heads == 3, "B2 Hkv3 G6 Sq5 packs into one 32-row block per key/value head");
  const SplitPlan plan = plan_splits(2, g.heads, g.m_blocks, ceil_div(60548, 64), 8, 132);
  check(plan.splits == 64, "6 blocks of 8 per SM on 132 SMs split 64 ways, got " + std::to_string(plan.splits));
  check(split_scratch_bytes(2, 18, 5, 64, plan.splits) <= max_split_scratch_bytes(s, 132), "their scratch fits");
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
