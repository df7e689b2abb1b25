#include "search_loop.hpp"

#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <cmath>
#include <ostream>
#include <sstream>

#include "attempt_writer.hpp"
#include "measuring_pool.hpp"
#include "numbers.hpp"

namespace kiln::tuner {
namespace {

std::string duration_text(double seconds) {
  long s = std::lround(seconds);
  if (s < 60) return std::to_string(s) + "s";
  return std::to_string(s / 60) + "m" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + "s";
}

class Progress {
 public:
  Progress(std::ostream& out, bool enabled, std::string kernel, std::size_t planned)
      : out_(out), enabled_(enabled), tty_(isatty(STDOUT_FILENO) != 0), kernel_(std::move(kernel)), planned_(planned) {}

  void update(std::size_t done, std::size_t measured, const std::string& best, double seconds_per_measured,
              std::size_t measured_left, const OnDemandCompiler* compiler, const MeasuringPool* pool) {
    if (!enabled_) return;
    std::ostringstream line;
    line << "kiln: " << kernel_ << " " << done << "/" << planned_ << " (" << measured << " measured now";
    if (compiler != nullptr) line << ", " << compiler->total().compiled << " compiled";
    line << ")";
    if (pool != nullptr) {
      line << " [";
      const char* sep = "";
      for (const auto& [gpu, runs] : pool->runs_per_gpu()) {
        line << sep << gpu << ": " << runs;
        sep = ", ";
      }
      line << "]";
    }
    if (!best.empty()) line << "  best " << best;
    if (measured_left > 0 && seconds_per_measured > 0) line << "  ETA " << duration_text(seconds_per_measured * measured_left);
    if (tty_) {
      std::string text = line.str();
      if (text.size() < last_width_) text += std::string(last_width_ - text.size(), ' ');
      last_width_ = line.str().size();
      out_ << '\r' << text << std::flush;
    } else {
      out_ << line.str() << '\n' << std::flush;
    }
  }
  void finish() {
    if (enabled_ && tty_) out_ << '\n' << std::flush;
  }

 private:
  std::ostream& out_;
  bool enabled_;
  bool tty_;
  std::string kernel_;
  std::size_t planned_;
  std::size_t last_width_ = 0;
};

// The floor a score is judged against: the geometric mean of every problem's floor, when each has one.
ScoreFloor score_floor(const std::vector<Floor>& floors) {
  std::vector<double> seconds;
  for (const auto& f : floors) {
    if (f.seconds > 0) seconds.push_back(f.seconds);
  }
  ScoreFloor floor;
  if (!floors.empty() && seconds.size() == floors.size()) floor.seconds = geomean(seconds);
  if (!floors.empty()) floor.bound = floors.front().bound;
  return floor;
}

// The bucket scores of an outcome (Evaluation::parts), for a variant that passed.
std::vector<double> bucket_parts(const Manifest& m, const VariantOutcome& o) {
  return o.score ? bucket_scores(m, o.median_s) : std::vector<double>{};
}

}  // namespace

SearchResult run_search(Tuning& t, bool progress_line, std::ostream& out) {
  const Manifest& m = t.target.manifest;
  Searcher& searcher = *t.searcher;
  const ScoreFloor floor = score_floor(t.floors);
  AttemptWriter attempts(t.ctx, searcher, floor, attempted_variants(t.ctx));
  // The variants the context already holds checked and timed go to the search first
  // (Searcher::prior), read from the worklog alone. Stored failures do not: proposed again, a
  // transient one may be measured again (retry_decision), which a prior would rule out.
  std::size_t priors = 0;
  {
    EvaluationContext reading = t.ctx;
    reading.measure = false;
    for (std::size_t v = 0; v < m.variants.size(); ++v) {
      const VariantOutcome held = evaluate_variant(reading, v);
      if (!held.complete || !held.score) continue;
      searcher.prior({v, held.score, bucket_parts(m, held)});
      ++priors;
    }
  }
  out << "kiln: tuning " << m.kernel << " on " << t.probed.name << " (" << searcher.planned() << " of " << m.variants.size()
      << " variants, " << searcher.name() << " search, worklog " << t.log->path() << ")\n";
  if (priors > 0) {
    out << "kiln: " << m.kernel << ": " << priors << " variant" << (priors == 1 ? "" : "s")
        << " of this context already checked and timed in the worklog\n";
  }
  Progress progress(out, progress_line, m.kernel, searcher.planned());
  SearchResult result;
  std::optional<std::size_t> best;
  std::optional<double> best_score;
  std::size_t done = 0;
  // With compile on demand, a variant that has to run is compiled in one parallel batch with
  // every variant the search has committed to propose next that has to run too (for an
  // exhaustive search, the whole space at once); what the worklog holds is not compiled at all.
  if (t.compiler != nullptr) {
    t.compiler->set_companions(
        [&t] {
          std::vector<std::size_t> also;
          for (std::size_t v : t.searcher->upcoming(t.target.manifest.variants.size())) {
            if (!t.compiler->done(v) && needs_run(t.ctx, v)) also.push_back(v);
          }
          return also;
        },
        &out);
  }
  // On several GPUs: the proposal and the variants the search has committed to propose next are
  // measured ahead, each on the first free GPU; a proposal measured ahead is taken when its turn
  // comes, so the search observes in its own order.
  MeasuringPool* pool = t.ctx.pool;
  std::map<std::size_t, std::shared_future<VariantOutcome>> ahead;
  std::set<std::size_t> from_worklog;  // needs no run: evaluated on this thread when proposed
  auto send = [&](std::size_t v) {
    if (t.compiler != nullptr) t.compiler->compile_for_run(v);
    ahead.emplace(v, pool->evaluate(v));
  };
  auto fill = [&] {
    const std::size_t depth = 2 * pool->size();
    for (std::size_t v : searcher.upcoming(t.target.manifest.variants.size())) {
      if (ahead.size() >= depth) break;
      if (ahead.count(v) || from_worklog.count(v)) continue;
      if (needs_run(t.ctx, v)) {
        send(v);
      } else {
        from_worklog.insert(v);
      }
    }
  };
  // Until this context holds a timing, the first run goes alone: a variant's stop bounds (three
  // times the fastest time of each problem, stop_bounds) are read when its run starts, and one
  // started beside the first has none (on two H200, a single-block top-k beside the default took
  // 109 s over its 2^30-element rows, where the bounds stop it after its first figures).
  bool bounded = !t.ctx.log->timed_medians(t.ctx.context_key, m.kernel).empty();
  const auto started = std::chrono::steady_clock::now();
  while (auto proposal = searcher.propose()) {
    VariantOutcome outcome;
    if (pool != nullptr && (ahead.count(*proposal) || needs_run(t.ctx, *proposal))) {
      if (!ahead.count(*proposal)) send(*proposal);
      if (bounded) fill();
      auto it = ahead.find(*proposal);
      outcome = it->second.get();
      ahead.erase(it);
      if (outcome.score) bounded = true;
      fill();
    } else {
      outcome = evaluate_variant(t.ctx, *proposal);
    }
    if (outcome.ran) ++result.ran;
    searcher.observe({*proposal, outcome.score, bucket_parts(m, outcome)});
    ++done;

    if (!outcome.kept.empty() && outcome.failure != worklog::FailureKind::compile) {
      out << "kiln: " << m.variants[*proposal].name << ": stored " << worklog::to_string(*outcome.failure) << " "
          << outcome.kept << "\n";
    }
    attempts.write(*proposal, outcome, best, best_score);
    if (outcome.score && (!best_score || *outcome.score < *best_score)) {
      best = *proposal;
      best_score = outcome.score;
    }
    std::string best_text;
    if (best) {
      best_text = m.variants[*best].name + " " + us(*best_score);
      if (floor.seconds) best_text += " (" + fixed(*best_score / *floor.seconds, 2) + "x floor)";
    }
    std::size_t left = searcher.planned() > done ? searcher.planned() - done : 0;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    progress.update(done, result.ran, best_text, result.ran > 0 ? elapsed / static_cast<double>(result.ran) : 0, left,
                    t.compiler.get(), pool);
    result.outcomes.push_back(std::move(outcome));
  }
  progress.finish();
  if (t.compiler != nullptr) t.compiler->set_companions({}, nullptr);
  return result;
}

}  // namespace kiln::tuner
