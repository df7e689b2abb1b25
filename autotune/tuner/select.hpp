// Choosing the winner of each bucket from the outcomes of a tuning session, and writing them as
// a record. `kiln tune` does it after measuring; `kiln record` does it from a worklog alone.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "device_spec.hpp"
#include "evaluate.hpp"
#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "record.hpp"

namespace kiln::tuner {

struct SelectionInput {
  const Manifest* manifest = nullptr;
  const worklog::Worklog* log = nullptr;  // for the dates of the winners' measurements
  std::string context_key;
  std::string preset;                     // device file name
  DeviceInfo device;                      // the probe's description of the device
  std::map<std::string, double> rates;    // for the floors
  std::string strategy;
};

// Winners per bucket: the lowest geometric mean over the bucket's problems among the variants
// that passed every check; ties go to the earlier variant, so the choice is deterministic.
// Outcomes that are not complete (never measured) take no part.
Record select_winners(const SelectionInput& in, const std::vector<VariantOutcome>& outcomes,
                      const std::function<std::string(std::size_t)>& variant_hash_of);

}  // namespace kiln::tuner
