// Which GPUs measure (kiln tune --gpus all|0,2): one measuring child per GPU, each pinned to its
// GPU through CUDA_VISIBLE_DEVICES. Only GPUs of one model measure one tuning: a variant's times
// on an H100 and an H200 are not comparable, so a box of mixed models is refused with the indices
// of each model, to name one of them.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kiln::tuner {

// One row of `nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader`.
struct Gpu {
  std::string index;  // nvidia-smi's index: PCI bus order
  std::string name;   // the model, "NVIDIA H200"
  std::string uuid;   // "GPU-…": what CUDA_VISIBLE_DEVICES is given, whatever CUDA's own order
};

// What --gpus asked for: every GPU, or these nvidia-smi indices.
struct GpuRequest {
  bool all = false;
  std::vector<std::string> indices;
};

// "all", or a comma-separated list of distinct non-negative indices ("0,2"). Throws kiln::Error
// saying what is wrong (a usage error).
GpuRequest parse_gpu_request(const std::string& text);

// The rows of nvidia-smi's output; throws kiln::Error naming the line that is not one.
std::vector<Gpu> parse_gpu_list(const std::vector<std::string>& lines);

// The GPUs to measure on, in the order asked. `visible` is CUDA_VISIBLE_DEVICES when set: `all`
// means every GPU it shows (by index or UUID), and an index it hides is an error. Throws
// kiln::Error for an index the machine does not have, and for GPUs of more than one model.
std::vector<Gpu> select_gpus(const GpuRequest& request, const std::vector<Gpu>& present,
                             const std::optional<std::string>& visible);

// This machine's GPUs, from nvidia-smi; throws kiln::Error when it cannot be asked.
std::vector<Gpu> gpus_here();

// "GPU 0 (NVIDIA H200)", for progress lines and messages.
std::string describe(const Gpu& gpu);

}  // namespace kiln::tuner
