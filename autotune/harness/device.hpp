// What the variant harness needs from a backend: a stream to launch on, synchronisation that
// turns device faults into kiln::RuntimeError, and a timer for a batch of launches.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/model/protocol.hpp"

namespace kiln::harness {

// A batch of launches prepared once and timed many times (a CUDA graph on the GPU).
class Batch {
 public:
  virtual ~Batch() = default;
  // Runs every launch of the batch once and returns the elapsed seconds for the whole batch.
  virtual double run_seconds() = 0;
  // How the batch is timed, for the record: "cuda-graph", "cuda-events", "steady-clock".
  virtual const char* method() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // The device as the "start" event reports it.
  virtual model::DeviceInfo describe() const = 0;
  virtual void* stream() = 0;
  // Waits for all work; throws kiln::RuntimeError if the device reported a fault.
  virtual void synchronize() = 0;
  // Throws kiln::RuntimeError if the last launch failed to start.
  virtual void check_launch() = 0;
  // Last-level cache size, to decide how many input sets to rotate through.
  virtual std::size_t cache_bytes() const = 0;
  // Seconds a batch should last for its timing to dwarf the timer's own cost.
  virtual double batch_target_seconds() const = 0;
  virtual std::unique_ptr<Batch> prepare_batch(const std::function<void(int)>& launch, int count) = 0;
  // The kernel launches `launch(0)` makes (grid, block, shared memory, registers, CTAs per SM:
  // launch_shapes.hpp), without running them; nothing where the backend has no launches or they
  // could not be read.
  virtual std::optional<std::vector<model::LaunchShape>> launch_shapes(const std::function<void(int)>& /*launch*/) {
    return std::nullopt;
  }
  // Brackets the launches a profiler started with `--profile-from-start off` measures, so that it
  // sees the variant's own kernels and not the ones that fill its inputs.
  virtual void profile_range(bool /*begin*/) {}
};

std::unique_ptr<Device> make_device();

}  // namespace kiln::harness
