// Opening a tuning: what the device is decides the context, and its rates are measured only for a
// context the worklog has no session of, so a warm re-run measures nothing, not even the machine.
// The real CPU probe, behind a script that notes how it was called.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "kiln_catch.hpp"
#include "open_tuning.hpp"
#include "temp_dir.hpp"
#include "tune.hpp"

namespace {

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a warm re-run takes the context's rates from the worklog: the probe only describes the device") {
  kiln_test::TempDir dir("kiln-open-tuning");
  const auto calls = dir / "probe-calls";
  const auto probe = dir / "probe.sh";
  kiln_test::write_file(probe, "#!/bin/sh\necho \"call $*\" >> '" + calls.string() + "'\nexec '" KILN_PROBE_CPU "' \"$@\"\n");
  chmod(probe.c_str(), 0755);
  kiln::tuner::TuneOptions o;
  o.manifest = KILN_TOY_MANIFEST;
  o.device_spec = std::filesystem::path(KILN_SOURCE_DIR) / "presets/devices/cpu.json";
  o.probe = probe;
  o.worklog = dir / "w.sqlite";
  o.variants_dir = dir / "bin";
  o.build_records_dir = dir / "builds";
  o.record_out = dir / "toy.record.json";
  o.quiet_wait_s = 0;
  std::ostringstream out;

  kiln::tuner::DeviceInfo first;
  {
    auto t = kiln::tuner::open_tuning(o, out);
    first = t->context.device;
  }
  // A new context: described, then measured.
  CHECK(read_all(calls) == "call --describe\ncall \n");
  CHECK(first.measured.size() == 2);

  std::filesystem::remove(calls);
  {
    auto t = kiln::tuner::open_tuning(o, out);
    CHECK(t->context.device.measured == first.measured);
    CHECK(t->context.rates.at("dram_bytes_per_s") == first.measured.at(0).second);
  }
  // The same context again: described only.
  CHECK(read_all(calls) == "call --describe\n");
}
