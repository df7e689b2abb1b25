// Device files (presets/devices/*.json): what the generator checks a space against (name,
// backend, integer limits) and what the tuner matches and divides by (description, match, rates).
// One reader for both; keys it does not know are left alone (rate_sources, cuda_architectures...).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln::model {

struct Device {
  std::filesystem::path file;  // as given; messages about the device start with it
  std::string name;            // e.g. "h100": a letter, digit, '_', '-' or '.' each
  std::string description;     // the name when the file gives none
  std::string backend;         // a backend's name (backend.hpp)
  std::vector<std::pair<std::string, std::int64_t>> limits;  // in the file's order
  std::vector<std::string> match_names;  // a probed device's name must contain one of these
  std::string match_compute_capability;  // and have this compute capability, when set
  std::map<std::string, double> rates;   // positive; launch_s is seconds per launch

  std::string label() const { return file.string(); }
};

// Reads and checks `file`; throws InputError naming the file and the place (json_reader.hpp).
Device load_device(const std::filesystem::path& file);

}  // namespace kiln::model
