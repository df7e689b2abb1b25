// CPU backend: launches run synchronously; a batch is timed with the steady clock.
#include <omp.h>
#include <sched.h>

#include <chrono>

#include "device.hpp"
#include "host_cpu.hpp"

namespace kiln::harness {
namespace {

class SteadyClockBatch final : public Batch {
 public:
  SteadyClockBatch(std::function<void(int)> launch, int count) : launch_(std::move(launch)), count_(count) {}
  double run_seconds() override {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < count_; ++i) launch_(i);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const char* method() const override { return "steady-clock"; }

 private:
  std::function<void(int)> launch_;
  int count_;
};

class CpuDevice final : public Device {
 public:
  // The threads the kernels get, and where they may run: the tuner pins them (OMP_PROC_BIND,
  // OMP_PLACES) and the record of a run says what they were.
  model::DeviceInfo describe() const override {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    std::vector<std::int64_t> cpus;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
      }
    }
    static const char* const binds[] = {"false", "true", "primary", "close", "spread"};
    int bind = static_cast<int>(omp_get_proc_bind());
    model::DeviceInfo d;
    d.backend = "cpu";
    d.name = cpu_model_name();
    d.isa = cpu_isa();
    d.threads = omp_get_max_threads();
    d.cpus = cpus;
    d.proc_bind = bind >= 0 && bind < 5 ? binds[bind] : "unknown";
    d.places = omp_get_num_places();
    return d;
  }
  void* stream() override { return nullptr; }
  void synchronize() override {}
  void check_launch() override {}
  std::size_t cache_bytes() const override {
    return last_level_cache_bytes();
  }
  double batch_target_seconds() const override { return 5e-3; }
  std::unique_ptr<Batch> prepare_batch(const std::function<void(int)>& launch, int count) override {
    return std::make_unique<SteadyClockBatch>(launch, count);
  }
};

}  // namespace

std::unique_ptr<Device> make_device() { return std::make_unique<CpuDevice>(); }

}  // namespace kiln::harness
