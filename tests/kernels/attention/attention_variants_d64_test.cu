// Head dimension 64: variants spanning every knob (tile sizes, warps, stages, Q fragments in
// registers: none, part or all, key splitting through scratch or inside a cluster, warps splitting
// each key tile) against the references, on every case of variant_cases().
#include "attention_config.hpp"
#include "attention_test_support.cuh"

KILN_ATTENTION_CONFIG(D64Default, 64, 128, 64, 4, 2, 0, 2, 0, 0);
KILN_ATTENTION_CONFIG(D64QRegs, 64, 128, 64, 4, 2, 4, 2, 1, 0);
KILN_ATTENTION_CONFIG(D64Small, 64, 64, 32, 4, 3, 2, 0, 1, 0);
KILN_ATTENTION_CONFIG(D64WideN, 64, 128, 128, 8, 2, 0, 1, 0, 0);
KILN_ATTENTION_CONFIG(D64NarrowN, 64, 128, 32, 4, 2, 0, 4, 0, 0);
KILN_ATTENTION_CONFIG(D64Cluster, 64, 32, 64, 2, 2, 0, 8, 1, 8);  // splits merged inside a cluster
// Warps that split each key tile: four of one packed m16 row tile, splits through scratch; two
// in a cluster; two row warps of two key warps each, unsplit, with Q fragments in registers; four
// of 16 keys each (one k16 step a warp, the smallest slice).
KILN_ATTENTION_CONFIG_KW(D64KeyWarps, 64, 16, 128, 1, 2, 0, 8, 1, 0, 4);
KILN_ATTENTION_CONFIG_KW(D64KeyWarpsCluster, 64, 32, 64, 1, 4, 0, 8, 1, 8, 2);
KILN_ATTENTION_CONFIG_KW(D64KeyWarpsRows, 64, 64, 64, 2, 3, 2, 0, 0, 0, 2);
KILN_ATTENTION_CONFIG_KW(D64KeyWarpsSlice16, 64, 16, 64, 1, 4, 0, 8, 1, 0, 4);

int main() { return attention_test::run_variant_suite<64, D64Default, D64QRegs, D64Small, D64WideN, D64NarrowN, D64Cluster, D64KeyWarps,
                                           D64KeyWarpsCluster, D64KeyWarpsRows, D64KeyWarpsSlice16>(); }
