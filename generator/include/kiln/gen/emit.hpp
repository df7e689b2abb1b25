// The generator's outputs (generator/README.md, "Outputs"): rendered in memory first, then
// written so that an unchanged file is never touched and a changed one is replaced atomically.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/gen/enumerate.hpp"
#include "kiln/gen/space.hpp"
#include "kiln/model/manifest.hpp"

namespace kiln::gen {

// One output file; `path` is relative to the output directory.
struct OutputFile {
  std::filesystem::path path;
  std::string content;
};

// The source of one variant: Config with the parameters, and the KILN_*_VARIANT registration.
std::string variant_source(const Space& space, const Variant& variant);


// The manifest of an enumerated space (written as manifest.json with model::to_json).
model::Manifest manifest(const Space& space, const Device& target, const Enumeration& enumeration);

// Every output: the variant sources in enumeration order, then manifest.json.
std::vector<OutputFile> render_outputs(const Space& space, const Device& target, const Enumeration& enumeration);

struct WriteReport {
  std::vector<std::filesystem::path> written;    // new or changed content
  std::vector<std::filesystem::path> unchanged;  // left alone, modification time kept
  std::vector<std::filesystem::path> removed;    // stale variant sources
};

// Throws InputError when `out` is an empty path, or exists and is not a directory (or holds a
// `variants` that is not one). Writes nothing.
void check_output_directory(const std::filesystem::path& out);

// Writes `files` under `out` (each through a temporary file renamed into place, and only when its
// content differs from what is there), then removes the variant sources that the manifest.json
// previously in `out` lists and `files` does not: never a file Kiln did not write. Throws
// InputError when `out` is unusable (check_output_directory) or a file cannot be written.
WriteReport write_outputs(const std::filesystem::path& out, const std::vector<OutputFile>& files);

}  // namespace kiln::gen
