// Kiln's backends, in one table (model/src/backend.cpp). A space, a device file, a manifest and a
// probe name their backend; every place that treats backends differently looks the name up here
// instead of comparing it with a word. The build's side of the same list, with what CMake needs
// of each backend (its language, harness and probe, device file, compile options), is
// cmake/KilnBackends.cmake; tests/model/backend_test.cpp keeps the two in step.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace kiln::model {

class JsonNode;

// Where a backend's kernels run: what the preflight looks at and how a measurement is steadied.
enum class Processor {
  host,        // this machine's cores: OpenMP threads are pinned, the frequency governor matters
  nvidia_gpu,  // an NVIDIA GPU: observed through nvidia-smi, its clocks locked on request
};

struct Backend {
  std::string_view name;              // as files spell it: "cpu", "cuda"
  std::string_view title;             // as messages for people name it: "CPU", "CUDA"
  std::string_view source_extension;  // of a generated variant source: ".cpp", ".cu"
  std::string_view variant_macro;     // what a generated variant source registers with (kiln/variant.hpp)
  Processor processor = Processor::host;
  double compile_gib = 0;             // the memory one variant's compile takes at its peak, with a margin
  bool sanitizer = false;             // compute-sanitizer checks each bucket's winner (kiln tune)
  bool profiler = false;              // Nsight Compute measures the winners (kiln profile)
};

// Every backend, in the table's order.
std::span<const Backend> backends();

// The backend named `name`, or null when there is none.
const Backend* find_backend(std::string_view name);

// The backend named `name`; throws kiln::Error naming it and the backends there are.
const Backend& backend_named(std::string_view name);

// The backend a JSON string names; throws InputError at the string's place when it names none:
//   <file>: /backend: unknown backend "hip" (Kiln's backends: cpu, cuda)
const Backend& backend_of(const JsonNode& node);

// Whether `extension` (".cu") is a backend's source extension.
bool is_variant_source_extension(std::string_view extension);

}  // namespace kiln::model
