// Head dimension 128: variants spanning every knob (tile sizes, warps, stages, Q fragments in
// registers: none, part or all, key splitting through scratch or inside a cluster, grouped-query heads packed or not,
// warps splitting each key tile) against the references, on every case of variant_cases().
#include "attention_config.hpp"
#include "attention_test_support.cuh"

KILN_ATTENTION_CONFIG(D128Default, 128, 128, 64, 8, 2, 8, 2, 0, 0);
KILN_ATTENTION_CONFIG(D128WideN, 128, 64, 128, 4, 2, 8, 0, 1, 0);
KILN_ATTENTION_CONFIG(D128TwoTiles, 128, 128, 32, 4, 3, 4, 1, 0, 0);
KILN_ATTENTION_CONFIG(D128Small, 128, 64, 32, 4, 2, 0, 4, 1, 0);
// Splits merged inside a cluster: a one-warp decode block, and a cluster of three (not a power of two).
KILN_ATTENTION_CONFIG(D128Cluster, 128, 16, 64, 1, 2, 0, 8, 1, 16);
KILN_ATTENTION_CONFIG(D128ClusterOfThree, 128, 64, 32, 4, 2, 0, 4, 0, 3);
// Warps that split each key tile: four of one packed m16 row tile, splits through scratch; two
// of 32 rows in a cluster.
KILN_ATTENTION_CONFIG_KW(D128KeyWarps, 128, 16, 128, 1, 2, 0, 8, 1, 0, 4);
KILN_ATTENTION_CONFIG_KW(D128KeyWarpsCluster, 128, 32, 64, 1, 2, 0, 8, 1, 8, 2);
// Two key warps beside two row warps (a block of four warps, 64 keys each), and four 16-key slices
// of a 64-key tile in a cluster of 8: the shapes the decode space reaches without its old limits.
KILN_ATTENTION_CONFIG_KW(D128KeyWarpsRows, 128, 32, 128, 2, 2, 0, 8, 1, 0, 2);
KILN_ATTENTION_CONFIG_KW(D128KeyWarpsSlice16, 128, 16, 64, 1, 2, 0, 8, 1, 8, 4);

int main() { return attention_test::run_variant_suite<128, D128Default, D128WideN, D128TwoTiles, D128Small, D128Cluster,
                                           D128ClusterOfThree, D128KeyWarps, D128KeyWarpsCluster, D128KeyWarpsRows,
                                           D128KeyWarpsSlice16>(); }
