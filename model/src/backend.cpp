#include "kiln/model/backend.hpp"

#include <algorithm>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/join.hpp"
#include "kiln/model/json_reader.hpp"

namespace kiln::model {
namespace {

// A new backend is a row here and one in cmake/KilnBackends.cmake (README, "Backends").
constexpr Backend kBackends[] = {
    {.name = "cpu",
     .title = "CPU",
     .source_extension = ".cpp",
     .variant_macro = "KILN_CPU_VARIANT",
     .processor = Processor::host,
     .compile_gib = 0.75,  // a host compiler on Kiln's kernels and their templates
     .sanitizer = false,
     .profiler = false},
    {.name = "cuda",
     .title = "CUDA",
     .source_extension = ".cu",
     .variant_macro = "KILN_CUDA_VARIANT",
     .processor = Processor::nvidia_gpu,
     .compile_gib = 2.0,  // nvcc with its device passes
     .sanitizer = true,
     .profiler = true},
};

// "unknown backend "hip" (Kiln's backends: cpu, cuda)"; `quoted` is the name as JSON writes it.
std::string unknown_backend(const std::string& quoted) {
  std::vector<std::string> names;
  for (const Backend& b : kBackends) names.emplace_back(b.name);
  return "unknown backend " + quoted + " (Kiln's backends: " + join(names, ", ") + ")";
}

}  // namespace

std::span<const Backend> backends() { return kBackends; }

const Backend* find_backend(std::string_view name) {
  const auto it =
      std::find_if(std::begin(kBackends), std::end(kBackends), [&](const Backend& b) { return b.name == name; });
  return it == std::end(kBackends) ? nullptr : &*it;
}

const Backend& backend_named(std::string_view name) {
  if (const Backend* b = find_backend(name)) return *b;
  throw Error(unknown_backend(describe_json(std::string(name))));
}

const Backend& backend_of(const JsonNode& node) {
  const std::string& name = node.string();
  if (const Backend* b = find_backend(name)) return *b;
  node.fail(unknown_backend(describe_json(node.json())));
}

bool is_variant_source_extension(std::string_view extension) {
  return std::any_of(std::begin(kBackends), std::end(kBackends),
                     [&](const Backend& b) { return b.source_extension == extension; });
}

}  // namespace kiln::model
