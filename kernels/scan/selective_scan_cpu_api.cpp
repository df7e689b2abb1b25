// The CPU selective-scan entry point: argument checks, then the variant tuned for the problem.
#include "kiln/selective_scan.hpp"
#include "kiln/tuned/selective_scan_cpu.hpp"
#include "selective_scan_cpu_kernels.hpp"
#include "selective_scan_params.hpp"

namespace kiln::cpu {

void selective_scan(const SelectiveScanParams& params) {
  ::kiln::scan::validate(params, "kiln::cpu::selective_scan");
  const kiln::tuned::selective_scan_cpu::Problem problem{params.batch, params.channels, params.length, params.state,
                                                         params.groups, kiln::Choice{::kiln::scan::dtype_name(params.dtype)}};
  kiln::tuned::selective_scan_cpu::dispatch(problem, [&](auto config) {
    using Config = decltype(config);
    switch (params.dtype) {
      case ScanDType::fp32: ::kiln::scan::selective_scan<Config>(::kiln::scan::args_for<float>(params)); break;
      case ScanDType::bf16: ::kiln::scan::selective_scan<Config>(::kiln::scan::args_for<::kiln::scan::Bf16>(params)); break;
      case ScanDType::fp16: ::kiln::scan::selective_scan<Config>(::kiln::scan::args_for<::kiln::scan::F16>(params)); break;
    }
  });
}

}  // namespace kiln::cpu
