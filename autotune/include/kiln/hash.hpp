// FNV-1a, 64 bits: the fingerprints that key the worklog's cached measurements (space file,
// kernel sources, variant sources, compiler flags). Change detection, not security.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace kiln {

class Fnv1a64 {
 public:
  Fnv1a64& update(std::string_view bytes) {
    for (unsigned char c : bytes) {
      state_ ^= c;
      state_ *= 0x100000001B3ull;
    }
    return *this;
  }
  // Feeds a length prefix first, so that ("ab","c") and ("a","bc") differ.
  Fnv1a64& field(std::string_view bytes) {
    update(std::to_string(bytes.size()));
    update(":");
    return update(bytes);
  }
  std::uint64_t value() const { return state_; }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(state_));
    return buf;
  }

 private:
  std::uint64_t state_ = 0xCBF29CE484222325ull;
};

inline std::string fnv1a64_hex(std::string_view bytes) { return Fnv1a64().update(bytes).hex(); }

}  // namespace kiln
