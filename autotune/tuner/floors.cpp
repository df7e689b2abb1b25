#include "floors.hpp"

#include "device_spec.hpp"

namespace kiln::tuner {

Floor floor_of(const std::map<std::string, double>& work, const std::map<std::string, double>& rates) {
  Floor f;
  for (const auto& r : kResources) {
    auto w = work.find(r.work);
    auto rate = rates.find(r.rate);
    if (w == work.end() || rate == rates.end() || w->second <= 0 || rate->second <= 0) continue;
    // launch_s is a time per launch; every other rate is work per second.
    double seconds = std::string(r.rate) == "launch_s" ? w->second * rate->second : w->second / rate->second;
    f.by_resource[r.label] = seconds;
    if (seconds > f.seconds) {
      f.seconds = seconds;
      f.bound = r.label;
    }
  }
  return f;
}

}  // namespace kiln::tuner
