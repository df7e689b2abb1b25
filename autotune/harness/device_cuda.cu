// CUDA backend: launches go to one stream; a batch is captured once into a CUDA graph and timed
// with events around its replay, so host enqueue cost (~4 us a launch) does not hide short kernels.
// When a workload's launches cannot be captured, the batch falls back to plain launches.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <string>

#include "device.hpp"
#include "kiln/cuda_support.hpp"
#include "launch_shapes.hpp"

namespace kiln::harness {
namespace {

class EventTimer {
 public:
  EventTimer() {
    KILN_CUDA_CHECK(cudaEventCreate(&start_));
    KILN_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t s) { KILN_CUDA_CHECK(cudaEventRecord(start_, s)); }
  double stop_seconds(cudaStream_t s) {
    KILN_CUDA_CHECK(cudaEventRecord(stop_, s));
    KILN_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

class GraphBatch final : public Batch {
 public:
  GraphBatch(cudaStream_t stream, cudaGraphExec_t exec) : stream_(stream), exec_(exec) {}
  ~GraphBatch() override { cudaGraphExecDestroy(exec_); }
  double run_seconds() override {
    timer_.start(stream_);
    KILN_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
    return timer_.stop_seconds(stream_);
  }
  const char* method() const override { return "cuda-graph"; }

 private:
  cudaStream_t stream_;
  cudaGraphExec_t exec_;
  EventTimer timer_;
};

class StreamBatch final : public Batch {
 public:
  StreamBatch(cudaStream_t stream, std::function<void(int)> launch, int count)
      : stream_(stream), launch_(std::move(launch)), count_(count) {}
  double run_seconds() override {
    timer_.start(stream_);
    for (int i = 0; i < count_; ++i) launch_(i);
    KILN_CUDA_CHECK(cudaGetLastError());
    return timer_.stop_seconds(stream_);
  }
  const char* method() const override { return "cuda-events"; }

 private:
  cudaStream_t stream_;
  std::function<void(int)> launch_;
  int count_;
  EventTimer timer_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice() {
    int count = 0;
    KILN_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0) throw RuntimeError("no CUDA device found");
    KILN_CUDA_CHECK(cudaSetDevice(0));
    KILN_CUDA_CHECK(cudaGetDeviceProperties(&props_, 0));
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~CudaDevice() override { cudaStreamDestroy(stream_); }

  model::DeviceInfo describe() const override {
    int driver = 0;
    int runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    // CUDA's versions as the probe writes them: 13000 is "13.0".
    auto version_text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
    model::DeviceInfo d;
    d.backend = "cuda";
    d.name = props_.name;
    d.compute_capability = std::to_string(props_.major) + "." + std::to_string(props_.minor);
    d.cuda_driver_api = version_text(driver);
    d.cuda_runtime = version_text(runtime);
    d.sm_count = props_.multiProcessorCount;
    return d;
  }
  void* stream() override { return stream_; }
  void synchronize() override {
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    KILN_CUDA_CHECK(cudaGetLastError());
  }
  void check_launch() override { KILN_CUDA_CHECK(cudaGetLastError()); }
  std::size_t cache_bytes() const override { return static_cast<std::size_t>(props_.l2CacheSize); }
  double batch_target_seconds() const override { return 2e-3; }

  std::optional<std::vector<model::LaunchShape>> launch_shapes(const std::function<void(int)>& launch) override {
    return capture_launch_shapes(stream_, [&] { launch(0); });
  }
  void profile_range(bool begin) override {
    synchronize();
    KILN_CUDA_CHECK(begin ? cudaProfilerStart() : cudaProfilerStop());
  }

  std::unique_ptr<Batch> prepare_batch(const std::function<void(int)>& launch, int count) override {
    cudaGraph_t graph = nullptr;
    bool captured = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed) == cudaSuccess;
    if (captured) {
      for (int i = 0; i < count; ++i) launch(i);
      captured = cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph != nullptr;
    }
    cudaGraphExec_t exec = nullptr;
    if (captured) captured = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (graph != nullptr) cudaGraphDestroy(graph);
    // A failed capture leaves a sticky-free error in the runtime's last-error slot; clear it so it
    // is not mistaken for a launch failure of the variant.
    cudaGetLastError();
    if (captured) return std::make_unique<GraphBatch>(stream_, exec);
    return std::make_unique<StreamBatch>(stream_, launch, count);
  }

 private:
  cudaDeviceProp props_{};
  cudaStream_t stream_{};
};

}  // namespace

std::unique_ptr<Device> make_device() { return std::make_unique<CudaDevice>(); }

}  // namespace kiln::harness
