// Measuring on several GPUs at once (kiln tune --gpus): one worker per GPU, each running its
// variants' processes pinned to its GPU with CUDA_VISIBLE_DEVICES, so that every GPU times one
// variant at a time, alone. Each worker has its own connection to the worklog: the tuner stays
// its only writer, and SQLite (WAL, busy timeout) takes the workers' writes in turn.
//
// Work goes in through the tuner's main thread, which compiles a variant before handing it over
// (a worker never compiles): the workers only measure.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "evaluate.hpp"
#include "gpus.hpp"

namespace kiln::tuner {

class MeasuringPool {
 public:
  // `base` is copied for each worker, with its GPU, its connection to `worklog` and no compiler.
  MeasuringPool(const EvaluationContext& base, const std::filesystem::path& worklog, const std::vector<Gpu>& gpus);
  // Waits for the work that is running; work still queued is dropped (its futures report
  // broken promises).
  ~MeasuringPool();
  MeasuringPool(const MeasuringPool&) = delete;
  MeasuringPool& operator=(const MeasuringPool&) = delete;

  std::size_t size() const { return workers_.size(); }
  // evaluate_variant on the first free GPU.
  std::shared_future<VariantOutcome> evaluate(std::size_t index);
  // time_points on the first free GPU.
  std::future<PointTimes> time_points(std::size_t index, std::vector<Problem> points);
  // remeasure_interleaved (interleave.hpp) on the first free GPU: every turn of the set on that one.
  std::future<std::size_t> remeasure(std::vector<std::size_t> variants, std::vector<Problem> problems, int rounds);
  // The context the i-th GPU's worker measures with (pinned to its GPU): for runs beside the
  // workers' own that need no worklog (the sanitizer gate's).
  const EvaluationContext& context_of(std::size_t gpu) const;
  // Per GPU, in the order given: its description and the variant processes it ran.
  std::vector<std::pair<std::string, std::size_t>> runs_per_gpu() const;

 private:
  struct Worker;
  void submit(std::function<void(Worker&)> task);
  void work(Worker& w);

  std::vector<std::unique_ptr<Worker>> workers_;
  std::deque<std::function<void(Worker&)>> queue_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

// CUDA_VISIBLE_DEVICES=<the GPU's UUID> in `env`, replacing any value given before.
void pin_to_gpu(Environment& env, const Gpu& gpu);

}  // namespace kiln::tuner
