// Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04) behind one include.
#pragma once
#include <string>

#if defined(KILN_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
namespace kiln_test {
using Catch::Approx;
inline auto ContainsSubstring(const std::string& s) { return Catch::Matchers::ContainsSubstring(s); }
}  // namespace kiln_test
#else
#include <catch2/catch.hpp>
namespace kiln_test {
using Catch::Detail::Approx;
inline auto ContainsSubstring(const std::string& s) { return Catch::Matchers::Contains(s); }
}  // namespace kiln_test
#endif
