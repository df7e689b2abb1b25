#include <map>
#include <string>

#include "floors.hpp"
#include "kiln_catch.hpp"

using kiln::tuner::floor_of;

TEST_CASE("the floor is the slowest resource") {
  std::map<std::string, double> rates = {{"dram_bytes_per_s", 4e12}, {"fp32_flops_per_s", 5e13}, {"launch_s", 2e-6}};
  auto f = floor_of({{"bytes", 1.2e11}, {"fp32_flops", 1e12}, {"launches", 1}}, rates);
  CHECK(f.seconds == kiln_test::Approx(0.03));
  CHECK(f.bound == "memory bandwidth");
  CHECK(f.by_resource.at("FP32") == kiln_test::Approx(0.02));
  CHECK(f.by_resource.at("launch latency") == kiln_test::Approx(2e-6));

  auto compute = floor_of({{"bytes", 8e6}, {"fp32_flops", 1e12}}, rates);
  CHECK(compute.bound == "FP32");
  CHECK(compute.seconds == kiln_test::Approx(0.02));

  auto tiny = floor_of({{"bytes", 8}, {"launches", 1}}, rates);
  CHECK(tiny.bound == "launch latency");
}

TEST_CASE("work without a rate, and rates without work, set no floor") {
  auto f = floor_of({{"tensor_flops", 1e15}}, {{"dram_bytes_per_s", 4e12}});
  CHECK(f.seconds == 0);
  CHECK(f.bound.empty());
  CHECK(f.by_resource.empty());
}
