// The attention spaces against the kernel's Traits, on the host (no device needed): for every
// feasible variant of every attention space on every CUDA device file (attention_space_variants
// writes them at build time), Traits<Config> compiles (its static_asserts hold) and its thread
// count, shared memory and accumulator registers equal the space's THREADS, SMEM_BYTES and
// ACC_REGS, within the device's limits. The space prunes with its formulas before anything is
// compiled; a disagreement is a variant kept that cannot build or launch, or one pruned for
// nothing.
#include <cstdio>

#include "attention_traits.cuh"

#define KILN_SPACE_DECLARE
#include "attention_space_variants.inc"
#undef KILN_SPACE_DECLARE

namespace {

struct Entry {
  const char* device;
  const char* variant;
  long long threads, smem, acc_regs;                    // Traits
  long long space_threads, space_smem, space_acc_regs;  // the space's derived values
  long long max_smem, max_threads;                      // the device file's limits
};

#define KILN_SPACE_VARIANT(NS, DEVICE, VARIANT, THREADS, SMEM, ACC, MAX_SMEM, MAX_THREADS)                        \
  {DEVICE,                                                                                                       \
   VARIANT,                                                                                                      \
   kiln::attention::Traits<NS::Config>::kThreads,                                                                \
   kiln::attention::Traits<NS::Config>::kSmemBytes,                                                              \
   kiln::attention::Traits<NS::Config>::kAccRegs,                                                                \
   THREADS,                                                                                                      \
   SMEM,                                                                                                         \
   ACC,                                                                                                          \
   MAX_SMEM,                                                                                                     \
   MAX_THREADS},
const Entry kEntries[] = {
#include "attention_space_variants.inc"
};
#undef KILN_SPACE_VARIANT

}  // namespace

int main() {
  int passed = 0, failed = 0;
  for (const Entry& e : kEntries) {
    const bool ok = e.threads == e.space_threads && e.smem == e.space_smem && e.acc_regs == e.space_acc_regs &&
                    e.smem <= e.max_smem && e.threads <= e.max_threads;
    if (ok) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAIL: %s on %s: threads %lld (space %lld, limit %lld), shared memory %lld (space %lld, limit %lld), "
                  "accumulator registers %lld (space %lld)\n",
                  e.variant, e.device, e.threads, e.space_threads, e.max_threads, e.smem, e.space_smem, e.max_smem,
                  e.acc_regs, e.space_acc_regs);
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
