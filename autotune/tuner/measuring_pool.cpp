#include "measuring_pool.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <string>

#include "interleave.hpp"
#include "kiln/worklog/worklog.hpp"

namespace kiln::tuner {

struct MeasuringPool::Worker {
  Gpu gpu;
  std::optional<worklog::Worklog> log;
  std::map<std::string, double> reference_s;  // the silence limit's memory, this worker's own
  EvaluationContext ctx;
  std::atomic<std::size_t> runs{0};
  std::thread thread;
};

void pin_to_gpu(Environment& env, const Gpu& gpu) {
  env.erase(std::remove_if(env.begin(), env.end(), [](const auto& kv) { return kv.first == "CUDA_VISIBLE_DEVICES"; }),
            env.end());
  env.emplace_back("CUDA_VISIBLE_DEVICES", gpu.uuid);
}

MeasuringPool::MeasuringPool(const EvaluationContext& base, const std::filesystem::path& worklog,
                             const std::vector<Gpu>& gpus) {
  for (const auto& gpu : gpus) {
    auto w = std::make_unique<Worker>();
    w->gpu = gpu;
    w->log = worklog::Worklog::open(worklog, worklog::OpenMode::existing);
    w->ctx = base;
    w->ctx.log = &*w->log;
    w->ctx.compiler = nullptr;
    w->ctx.pool = nullptr;
    w->reference_s = base.reference_s != nullptr ? *base.reference_s : std::map<std::string, double>{};
    w->ctx.reference_s = &w->reference_s;
    pin_to_gpu(w->ctx.environment, gpu);
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) {
    Worker* worker = w.get();
    worker->thread = std::thread([this, worker] { work(*worker); });
  }
}

MeasuringPool::~MeasuringPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void MeasuringPool::work(Worker& w) {
  while (true) {
    std::function<void(Worker&)> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task(w);
  }
}

void MeasuringPool::submit(std::function<void(Worker&)> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
}

std::shared_future<VariantOutcome> MeasuringPool::evaluate(std::size_t index) {
  auto promise = std::make_shared<std::promise<VariantOutcome>>();
  std::shared_future<VariantOutcome> result = promise->get_future().share();
  submit([promise, index](Worker& w) {
    try {
      VariantOutcome outcome = evaluate_variant(w.ctx, index);
      if (outcome.ran) ++w.runs;
      promise->set_value(std::move(outcome));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  return result;
}

std::future<PointTimes> MeasuringPool::time_points(std::size_t index, std::vector<Problem> points) {
  auto promise = std::make_shared<std::promise<PointTimes>>();
  std::future<PointTimes> result = promise->get_future();
  submit([promise, index, points = std::move(points)](Worker& w) {
    try {
      PointTimes times = kiln::tuner::time_points(w.ctx, index, points);
      if (times.ran) ++w.runs;
      promise->set_value(std::move(times));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  return result;
}

std::future<std::size_t> MeasuringPool::remeasure(std::vector<std::size_t> variants, std::vector<Problem> problems,
                                                  int rounds) {
  auto promise = std::make_shared<std::promise<std::size_t>>();
  std::future<std::size_t> result = promise->get_future();
  submit([promise, variants = std::move(variants), problems = std::move(problems), rounds](Worker& w) {
    try {
      const std::size_t ran = remeasure_interleaved(w.ctx, variants, problems, rounds);
      w.runs += ran;
      promise->set_value(ran);
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  return result;
}

const EvaluationContext& MeasuringPool::context_of(std::size_t gpu) const { return workers_.at(gpu)->ctx; }

std::vector<std::pair<std::string, std::size_t>> MeasuringPool::runs_per_gpu() const {
  std::vector<std::pair<std::string, std::size_t>> out;
  for (const auto& w : workers_) out.emplace_back(describe(w->gpu), w->runs.load());
  return out;
}

}  // namespace kiln::tuner
