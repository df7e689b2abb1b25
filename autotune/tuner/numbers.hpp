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

// Seconds as microseconds with two decimals and the unit: us(2.5e-6) is "2.50 us".
inline std::string us(double seconds) { return fixed(seconds * 1e6, 2) + " us"; }

}  // namespace kiln::tuner
