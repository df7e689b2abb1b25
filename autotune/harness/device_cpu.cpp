// CPU backend: launches run synchronously; a batch is timed with the steady clock.
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
  nlohmann::json describe() const override {
    return {{"backend", "cpu"}, {"name", cpu_model_name()}, {"threads", sysconf(_SC_NPROCESSORS_ONLN)}};
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
