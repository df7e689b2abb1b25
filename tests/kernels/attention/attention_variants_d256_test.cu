// Head dimension 256: variants spanning the knobs of its space (64 or 128 query rows with 4 or 8
// warps, 32 or 64 keys, 2 or 3 stages, no split or a split target) and Q fragments partly in
// registers, against the references, on every case of variant_cases().
#include "attention_config.hpp"
#include "attention_test_support.cuh"

KILN_ATTENTION_CONFIG(D256Default, 256, 64, 32, 4, 2, 0, 2, 0, 0);
KILN_ATTENTION_CONFIG(D256WideN, 256, 64, 64, 4, 3, 0, 0, 1, 0);
KILN_ATTENTION_CONFIG(D256EightWarps, 256, 128, 32, 8, 3, 4, 1, 0, 0);
KILN_ATTENTION_CONFIG(D256QInRegs, 256, 64, 32, 4, 2, 8, 4, 1, 0);

int main() {
  return attention_test::run_variant_suite<256, D256Default, D256WideN, D256EightWarps, D256QInRegs>();
}
