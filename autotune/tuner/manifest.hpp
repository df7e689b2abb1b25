// The generator's manifest.json, as the tuner and the header writer read it: the model's Manifest
// (model/manifest.hpp), the one type both sides write and read.
#pragma once
#include <filesystem>

#include "kiln/model/manifest.hpp"
#include "kiln/problem.hpp"
#include "kiln/problem_json.hpp"

namespace kiln::tuner {

using model::Bucket;
using model::Dim;
using model::environment_of;
using model::Feature;
using model::Manifest;
using model::Parameter;
using model::value_text;
using model::Variant;

// model::load_manifest, and the manifest's tuning.timeout_s checked as a time limit the tuner
// can apply (process.hpp, checked_time_limit).
Manifest load_manifest(const std::filesystem::path& file);

}  // namespace kiln::tuner
