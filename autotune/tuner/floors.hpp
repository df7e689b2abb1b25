// Floors first: the fastest any implementation could run a problem on a device is the largest
// of (work of each kind) / (the device's rate for it). Measured time over that floor says how
// much is left and, by its size, what kind of change could win it.
#pragma once
#include <map>
#include <string>

namespace kiln::tuner {

struct Floor {
  double seconds = 0;   // 0 when no resource had both work and a rate
  std::string bound;    // label of the resource that sets the floor
  std::map<std::string, double> by_resource;  // seconds per resource with work and a rate
};

Floor floor_of(const std::map<std::string, double>& work, const std::map<std::string, double>& rates);

}  // namespace kiln::tuner
