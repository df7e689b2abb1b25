// The warpgroup-MMA path (WGMMA = 1, sm_90a): head dims 64, 128 and 256, one and two warpgroups,
// tiles of 64 to 128 keys, two and three stages, key splits through scratch and packed grouped-query
// heads, the softmax overlapped with P·V or not, tiles copied by every thread or by a TMA producer
// warpgroup, consumer warpgroups taking turns or not, a block per work item or one wave of
// persistent blocks, against the references on every case of variant_cases(). Skips (exit 77) on a
// device without wgmma (compute capability other than 9.0) as without a device.
#include "attention_config.hpp"
#include "attention_test_support.cuh"

KILN_ATTENTION_WGMMA_CONFIG(D64OneGroup, 64, 64, 64, 4, 2, 2, 0, 0, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D64TwoGroups, 64, 128, 128, 8, 2, 0, 1, 0, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128TwoGroups, 128, 128, 128, 8, 2, 2, 0, 0, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128Packed, 128, 64, 64, 4, 3, 8, 1, 0, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128WideKeys, 128, 128, 192, 8, 2, 0, 0, 0, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D256OneGroup, 256, 64, 64, 4, 2, 2, 1, 0, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D256TwoGroups, 256, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0);
// Softmax overlapped with the previous tile's P·V.
KILN_ATTENTION_WGMMA_CONFIG(D64Overlap, 64, 128, 128, 8, 2, 2, 1, 1, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128Overlap, 128, 128, 128, 8, 2, 2, 0, 1, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128OverlapPacked, 128, 64, 64, 4, 3, 8, 1, 1, 0, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D256Overlap, 256, 128, 64, 8, 2, 2, 1, 1, 0, 0, 0);
// Fed by a TMA producer warpgroup: one, two and three consumer warpgroups.
KILN_ATTENTION_WGMMA_CONFIG(D64Producer, 64, 192, 128, 12, 2, 2, 0, 1, 1, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128Producer, 128, 128, 128, 8, 2, 2, 0, 0, 1, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128ProducerOverlapPacked, 128, 64, 64, 4, 3, 8, 1, 1, 1, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128ProducerOverlap, 128, 128, 128, 8, 2, 0, 1, 1, 1, 0, 0);
KILN_ATTENTION_WGMMA_CONFIG(D256Producer, 256, 128, 64, 8, 2, 2, 0, 1, 1, 0, 0);
// Consumer warpgroups taking turns: two and three, overlapped or not.
KILN_ATTENTION_WGMMA_CONFIG(D64PingPong, 64, 192, 128, 12, 2, 2, 1, 1, 1, 1, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128PingPong, 128, 128, 176, 8, 2, 2, 0, 1, 1, 1, 0);
KILN_ATTENTION_WGMMA_CONFIG(D128PingPongSerial, 128, 128, 112, 8, 2, 0, 1, 0, 1, 1, 0);
KILN_ATTENTION_WGMMA_CONFIG(D256PingPong, 256, 128, 80, 8, 2, 2, 0, 1, 1, 1, 0);
// One wave of blocks taking the work items in turn: with and without turns and overlap, splits,
// packed groups.
KILN_ATTENTION_WGMMA_CONFIG(D64Persistent, 64, 192, 128, 12, 2, 2, 1, 1, 1, 1, 1);
KILN_ATTENTION_WGMMA_CONFIG(D128Persistent, 128, 128, 128, 8, 2, 2, 0, 1, 1, 1, 1);
KILN_ATTENTION_WGMMA_CONFIG(D128PersistentSerialPacked, 128, 128, 112, 8, 3, 8, 1, 0, 1, 0, 1);
KILN_ATTENTION_WGMMA_CONFIG(D128PersistentOneGroup, 128, 64, 128, 4, 2, 8, 1, 1, 1, 0, 1);
KILN_ATTENTION_WGMMA_CONFIG(D256Persistent, 256, 128, 64, 8, 2, 2, 0, 1, 1, 1, 1);

template <int kHeadDim, class... Configs>
void run_suite(attention_test::Tally& tally, bool quick) {
  (attention_test::check_split_covered<Configs>(tally), ...);
  std::vector<attention_test::Case> cases = attention_test::variant_cases();
  if (quick) cases.resize(4);
  for (const auto& c : cases) (attention_test::run_case<kHeadDim, Configs>(c, tally, quick ? 1 : 2), ...);
}

// PERSISTENT variants on problems of more work units than an H200 has SMs (132), so that every
// block takes several (causal: several pairs of query blocks), the stage ring and Q's barriers
// running on across them.
template <int kHeadDim, class... Configs>
void run_many_units(attention_test::Tally& tally) {
  const std::vector<attention_test::Case> cases = {
      {4, 16, 4, 1024, 1024, "bf16", "causal", "bshd"},
      {2, 32, 32, 1000, 1000, "fp16", "full", "bhsd"},
      {3, 16, 16, 1100, 1337, "bf16", "causal", "bhsd"},
  };
  for (const auto& c : cases) (attention_test::run_case<kHeadDim, Configs>(c, tally, 1), ...);
}

int main() {
  attention_test::require_device_or_skip();
  int device = 0, major = 0, minor = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) {
    std::printf("SKIP: the warpgroup-MMA path needs an sm_90a device (this one is %d.%d)\n", major, minor);
    return 77;
  }
  attention_test::Tally tally;
  const bool quick = std::getenv("ATTN_TEST_QUICK") != nullptr;
  run_suite<64, D64OneGroup, D64TwoGroups, D64Overlap, D64Producer, D64PingPong, D64Persistent>(tally, quick);
  run_suite<128, D128TwoGroups, D128Packed, D128WideKeys, D128Overlap, D128OverlapPacked, D128Producer, D128ProducerOverlapPacked, D128ProducerOverlap, D128PingPong, D128PingPongSerial, D128Persistent, D128PersistentSerialPacked, D128PersistentOneGroup>(tally, quick);
  run_suite<256, D256OneGroup, D256TwoGroups, D256Overlap, D256Producer, D256PingPong, D256Persistent>(tally, quick);
  if (!quick) {
    run_many_units<64, D64Persistent>(tally);
    run_many_units<128, D128Persistent, D128PersistentSerialPacked, D128PersistentOneGroup>(tally);
    run_many_units<256, D256Persistent>(tally);
  }
  return tally.finish();
}
