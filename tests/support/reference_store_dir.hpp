// Sets the reference store's directory (KILN_REFERENCE_DIR, as the tuner does for its variants)
// for the life of the object, and takes it away after, failed assertions included.
#pragma once
#include <cstdlib>
#include <filesystem>

#include "kiln/reference_store.hpp"

namespace kiln_test {

class ReferenceStoreDir {
 public:
  explicit ReferenceStoreDir(const std::filesystem::path& dir) {
    ::setenv(kiln::reference_store::kDirectoryVariable, dir.c_str(), 1);
  }
  ~ReferenceStoreDir() { ::unsetenv(kiln::reference_store::kDirectoryVariable); }
  ReferenceStoreDir(const ReferenceStoreDir&) = delete;
  ReferenceStoreDir& operator=(const ReferenceStoreDir&) = delete;
};

}  // namespace kiln_test
