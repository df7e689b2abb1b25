// kiln preflight: parsing what nvidia-smi prints (lines as an H200 and an L4 print them, with
// the "[N/A]" and "[Not Supported]" of GPUs that lack a field) and judging the machine from it.
#include <unistd.h>

#include "kiln/error.hpp"
#include "kiln_catch.hpp"
#include "preflight.hpp"

using namespace kiln::tuner;

namespace {

// --query-gpu=<kGpuQueryFields> --format=csv,noheader,nounits on an idle H200 with persistence on.
const char* kIdleH200 =
    "NVIDIA H200, 9.0, 345, 1980, 3201, 3201, 0x0000000000000001, Enabled, Enabled, 31, 76.42, 700.00, 0";
// An L4 under load, power-capped, without ECC reporting and persistence off.
const char* kCappedL4 =
    "NVIDIA L4, 8.9, 1785, 2040, 6251, 6251, 0x0000000000000004, Disabled, [N/A], 78, 71.90, 72.00, 100";

Observation seen_with(const std::string& gpu_line) {
  Observation o;
  o.backend = "cuda";
  o.cpu.cores = 16;
  o.gpu = parse_gpu_query(gpu_line);
  o.gpu_index = "0";
  return o;
}

bool has(const Preflight& p, const std::string& code, Readiness level) {
  for (const auto& f : p.findings) {
    if (f.code == code && f.level == level) return true;
  }
  return false;
}

Device h200_spec() { return load_device(std::filesystem::path(KILN_SOURCE_DIR) / "presets/devices/h200.json"); }

}  // namespace

TEST_CASE("nvidia-smi's GPU line is read field by field, [N/A] as unknown", "[preflight]") {
  GpuState g = parse_gpu_query(kIdleH200);
  CHECK(g.name == "NVIDIA H200");
  CHECK(g.compute_capability == "9.0");
  CHECK(*g.sm_clock_mhz == 345);
  CHECK(*g.sm_max_mhz == 1980);
  CHECK(*g.memory_max_mhz == 3201);
  CHECK(*g.throttle_reasons == 1);
  CHECK(*g.persistence);
  CHECK(g.ecc == "Enabled");
  CHECK(*g.power_w == kiln_test::Approx(76.42));
  CHECK(*g.utilization_pct == 0);

  GpuState l4 = parse_gpu_query(kCappedL4);
  CHECK(l4.ecc.empty());
  CHECK_FALSE(*l4.persistence);
  GpuState odd = parse_gpu_query("Tesla T4, 7.5, [Not Supported], [N/A], 5000, 5001, [N/A], Enabled, Disabled, 40, [N/A], [N/A], 3");
  CHECK_FALSE(odd.sm_clock_mhz);
  CHECK_FALSE(odd.throttle_reasons);
  CHECK_FALSE(odd.power_w);
  CHECK(odd.ecc == "Disabled");
}

TEST_CASE("a GPU line without every field or with a word for a number is refused", "[preflight]") {
  CHECK_THROWS_AS(parse_gpu_query("NVIDIA H200, 9.0, 345"), kiln::Error);
  CHECK_THROWS_AS(parse_gpu_query("NVIDIA H200, 9.0, fast, 1980, 3201, 3201, 0x1, Enabled, Enabled, 31, 76, 700, 0"),
                  kiln::Error);
  CHECK_THROWS_AS(parse_gpu_query("NVIDIA H200, 9.0, 345, 1980, 3201, 3201, busy, Enabled, Enabled, 31, 76, 700, 0"),
                  kiln::Error);
}

TEST_CASE("compute apps: pid, name (commas allowed), memory with its unit", "[preflight]") {
  auto apps = parse_compute_apps({"12345, /usr/bin/python3, 81920 MiB", "777, ./train, step 2, [N/A]", ""});
  REQUIRE(apps.size() == 2);
  CHECK(apps[0].pid == 12345);
  CHECK(apps[0].name == "/usr/bin/python3");
  CHECK(*apps[0].used_mib == 81920);
  CHECK(apps[1].name == "./train, step 2");
  CHECK_FALSE(apps[1].used_mib);
  CHECK(parse_compute_apps({"No running processes found"}).empty());
  CHECK_THROWS_AS(parse_compute_apps({"python3 81920 MiB"}), kiln::Error);
}

TEST_CASE("throttle reasons are named from NVML's mask", "[preflight]") {
  CHECK(throttle_reason_names(0).empty());
  CHECK(throttle_reason_names(0x1) == std::vector<std::string>{"gpu_idle"});
  CHECK(throttle_reason_names(0x44) == std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"});
  CHECK(throttle_reason_names(0x1000) == std::vector<std::string>{"other_0x1000"});
}

TEST_CASE("an idle GPU of the device file's kind on a quiet machine is ready", "[preflight]") {
  Device spec = h200_spec();
  Observation o = seen_with(kIdleH200);
  o.spec = &spec;
  o.cpu.governors = {"performance"};
  Preflight p = judge(o);
  CHECK(p.verdict() == Readiness::ready);
  CHECK(has(p, "clocks_below_max", Readiness::ready));  // idle clocks are said, not held against it
  auto j = p.to_json();
  CHECK(j["verdict"] == "ready");
  CHECK(j["gpu"]["sm_max_mhz"] == 1980);
  CHECK(j["gpu"]["throttle_reasons"][0] == "gpu_idle");
}

TEST_CASE("another process on the GPU refuses, and only that refusal is lifted by --allow-busy-gpu", "[preflight]") {
  Observation o = seen_with(kIdleH200);
  o.gpu_processes = parse_compute_apps({"4242, busy_gpu, 300 MiB"});
  Preflight p = judge(o);
  CHECK(p.verdict() == Readiness::refuse);
  CHECK(has(p, "gpu_busy", Readiness::refuse));
  CHECK(p.refused_only_for_busy_gpu());
  CHECK(p.text().find("pid 4242 (busy_gpu, 300 MiB)") != std::string::npos);

  // Busy with nothing listed (another container): the utilisation says so.
  Observation hidden = seen_with(kCappedL4);
  Preflight q = judge(hidden);
  CHECK(has(q, "gpu_busy", Readiness::refuse));

  // Not the device file's GPU: no flag lifts that.
  Device spec = h200_spec();
  Observation other = seen_with(kCappedL4);
  other.spec = &spec;
  Preflight r = judge(other);
  CHECK(has(r, "gpu_mismatch", Readiness::refuse));
  CHECK_FALSE(r.refused_only_for_busy_gpu());
}

TEST_CASE("throttling, heat, power and a busy CPU degrade, and an unseen GPU degrades a CUDA run only", "[preflight]") {
  Observation capped = seen_with("NVIDIA L4, 8.9, 1785, 2040, 6251, 6251, 0x0000000000000004, Disabled, [N/A], 78, 71.90, 72.00, 0");
  Preflight p = judge(capped);
  CHECK(p.verdict() == Readiness::degraded);
  CHECK(has(p, "throttled", Readiness::degraded));
  CHECK(has(p, "power", Readiness::degraded));
  CHECK(has(p, "persistence_off", Readiness::ready));

  Observation hot = seen_with("NVIDIA H200, 9.0, 1980, 1980, 3201, 3201, 0x0000000000000000, Enabled, Enabled, 88, 300, 700, 0");
  CHECK(has(judge(hot), "hot", Readiness::degraded));
  CHECK(judge(seen_with("NVIDIA H200, 9.0, 1980, 1980, 3201, 3201, 0x0, Enabled, Enabled, 40, 300, 700, 0")).verdict() ==
        Readiness::ready);

  Observation cpu;
  cpu.backend = "cpu";
  cpu.cpu.cores = 2;
  cpu.cpu.others_cores = 1.5;
  cpu.cpu.governors = {"powersave"};
  Preflight c = judge(cpu);
  CHECK(has(c, "cpu_busy", Readiness::degraded));
  CHECK(has(c, "cpu_governor", Readiness::degraded));

  Observation unseen;
  unseen.backend = "cuda";
  unseen.gpu_error = "nvidia-smi not found";
  CHECK(has(judge(unseen), "gpu_unobserved", Readiness::degraded));
  CHECK(judge(unseen).to_json()["gpu_error"] == "nvidia-smi not found");
}

TEST_CASE("the CPU side is observed on this machine", "[preflight]") {
  Preflight p = judge(observe("cpu", nullptr));
  CHECK(p.seen.cpu.cores == static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  CHECK(p.seen.cpu.load_average >= 0);
  CHECK_FALSE(p.seen.gpu);
  CHECK(p.to_json()["cpu"]["cores"] == p.seen.cpu.cores);
}
