// Numbers as the tuner's messages and tables print them.
#pragma once
#include <cstdio>
#include <string>

namespace kiln::tuner {

// `v` with `decimals` digits after the point: fixed(2.345, 1) is "2.3".
inline std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace kiln::tuner
