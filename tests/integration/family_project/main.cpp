// Calls the family's API for each degree and checks the results against the reference, the
// member each call reached, and the error for a degree without a member; prints "family: OK".
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "poly.hpp"
#include "user/poly.hpp"

int main() {
  const std::int64_t n = 1001;
  std::vector<float> x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  bool ok = std::strcmp(user::poly_degrees(), "2, 3") == 0;
  for (int degree : {2, 3}) {
    user::poly(x.data(), y.data(), n, degree);
    double worst = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      worst = std::fmax(worst, std::fabs(y[i] - user::poly_reference(degree, x[i])));
    }
    const std::string variant = user::poly_variant(n, degree);
    const std::string member = "poly_d" + std::to_string(degree) + "__";
    std::printf("degree %d: max error %.3g, variant %s\n", degree, worst, variant.c_str());
    ok = ok && worst < 1e-5 && variant.rfind(member, 0) == 0;
  }
  try {
    user::poly(x.data(), y.data(), n, 4);
    ok = false;
  } catch (const std::invalid_argument& e) {
    std::printf("degree 4: %s\n", e.what());
    ok = ok && std::string(e.what()) == "kiln::tuned::poly: no member for DEGREE = 4 (members: 2, 3)";
  }
  std::printf(ok ? "family: OK\n" : "family: WRONG\n");
  return ok ? 0 : 1;
}
