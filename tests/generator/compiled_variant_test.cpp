// Links the generated source of toy_cpu's default variant (written at build time by
// generate_for_tests) and checks what it registered and what its Config carries.
#include <cstring>

#include "kiln/variant.hpp"
#include "kiln_catch.hpp"
#include "toy_cpu.hpp"

TEST_CASE("a generated CPU variant compiles and registers itself", "[emit]") {
  const kiln::VariantEntry* entry = kiln_variant_entry();
  REQUIRE(entry != nullptr);
  CHECK(std::strcmp(entry->kernel, "toy_cpu") == 0);
  CHECK(std::strcmp(entry->name, "toy_cpu__MODEsafe_SHIFTm3_SPAN4294967296") == 0);
  CHECK(std::strcmp(entry->params_json, R"({"MODE":"safe","SHIFT":-3,"SPAN":4294967296})") == 0);
  CHECK(std::strcmp(entry->backend, "cpu") == 0);

  kiln::Problem problem;
  problem.set("n", std::int64_t{1000});
  problem.set("dtype", std::string("fp32"));
  auto workload = entry->make(problem, 7);
  REQUIRE(workload != nullptr);
  CHECK(workload->footprint_bytes() == 8000);
  entry->run(*workload, nullptr);

  const kiln_toy::Seen& seen = kiln_toy::seen();
  CHECK(seen.runs == 1);
  CHECK(seen.name == "toy_cpu__MODEsafe_SHIFTm3_SPAN4294967296");
  CHECK(seen.safe_mode);
  CHECK(seen.shift == -3);
  CHECK(seen.span == 4294967296LL);
  CHECK(seen.span_is_long_long);
}
