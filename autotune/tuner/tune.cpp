#include "tune.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>
#include <csignal>

#include "device_spec.hpp"
#include "domain.hpp"
#include "domain_report.hpp"
#include "evaluate.hpp"
#include "floors.hpp"
#include "kiln/worklog/markdown.hpp"
#include "header.hpp"
#include "interleave.hpp"
#include "kiln/hash.hpp"
#include "kiln/worklog/worklog.hpp"
#include "numbers.hpp"
#include "preflight.hpp"
#include "process.hpp"
#include "record.hpp"
#include "sanitize.hpp"
#include "search.hpp"
#include "tools.hpp"
#include "select.hpp"
#include "version.hpp"

namespace kiln::tuner {
namespace {

using worklog::FailureKind;
using worklog::Verdict;

std::string us(double seconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f us", seconds * 1e6);
  return buf;
}

std::string duration_text(double seconds) {
  long s = std::lround(seconds);
  if (s < 60) return std::to_string(s) + "s";
  return std::to_string(s / 60) + "m" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + "s";
}

std::string slug(const std::string& label) {
  std::string s;
  for (char c : label) s += c == ' ' ? '-' : c;
  return s;
}

// Identifies what cached measurements stay valid for: the device and its software, the kernel's
// sources, the compiler and its flags, and this version of Kiln's harness.
std::string context_key(const Manifest& m, const Probe& probe, const TuneOptions& o) {
  Fnv1a64 h;
  h.field(m.kernel).field(m.backend).field(probe.name).field(probe.compute_capability).field(probe.driver);
  h.field(probe.cuda_runtime).field(kiln_version);
  for (const auto& source : o.sources) h.field(source.filename().string()).field(read_text(source));
  if (o.flags_file) h.field(read_text(*o.flags_file));
  return h.hex();
}

std::string params_text(const Manifest& m, std::size_t v) {
  std::string s;
  for (std::size_t k = 0; k < m.parameters.size(); ++k) {
    if (!s.empty()) s += ' ';
    s += m.parameters[k].name + "=" + value_text(m.variants[v].params[k]);
  }
  return s;
}

std::string change_text(const Manifest& m, std::size_t v, std::optional<std::size_t> best) {
  if (!best) {
    return (m.variants[v].name == m.default_variant ? "the space's default configuration: " : "first configuration measured: ") +
           params_text(m, v);
  }
  std::string s;
  for (std::size_t k = 0; k < m.parameters.size(); ++k) {
    const auto& from = m.variants[*best].params[k];
    const auto& to = m.variants[v].params[k];
    if (from == to) continue;
    if (!s.empty()) s += ", ";
    s += m.parameters[k].name + " " + value_text(from) + " -> " + value_text(to);
  }
  return s.empty() ? "same parameters as the best so far" : s + " (against the best so far, " + m.variants[*best].name + ")";
}


class Progress {
 public:
  Progress(std::ostream& out, bool enabled, std::string kernel, std::size_t planned)
      : out_(out), enabled_(enabled), tty_(isatty(STDOUT_FILENO) != 0), kernel_(std::move(kernel)), planned_(planned) {}

  void update(std::size_t done, const std::string& best, double seconds_per_measured, std::size_t measured_left) {
    if (!enabled_) return;
    std::ostringstream line;
    line << "kiln: " << kernel_ << " " << done << "/" << planned_;
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

// Buckets whose runners-up are within noise of the winner (or whose default is) get those
// candidates re-measured in turns, A/B/A/B; their outcomes are read again from the worklog.
// Returns how many processes ran.
std::size_t settle_near_ties(const EvaluationContext& ctx, const Record& record, std::vector<VariantOutcome>& outcomes,
                             int rounds, std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  std::size_t ran = 0;
  for (std::size_t b = 0; b < record.buckets.size(); ++b) {
    const RecordedBucket& rb = record.buckets[b];
    if (!rb.winner) continue;
    std::vector<std::size_t> tied = {*m.variant_index(*rb.winner)};
    for (const auto& c : rb.contenders) {
      if (c.within_noise.value_or(false)) tied.push_back(*m.variant_index(c.variant));
    }
    if (tied.size() < 2) continue;
    std::vector<Problem> problems;
    for (const auto& p : rb.problems) problems.push_back(p.problem);
    std::size_t n = remeasure_interleaved(ctx, tied, problems, rounds);
    if (n == 0) continue;
    ran += n;
    out << "kiln: " << rb.name << ": " << tied.size() << " variants within noise of each other, re-measured in turns (" << n
        << " runs)\n";
    for (auto& oc : outcomes) {
      if (std::find(tied.begin(), tied.end(), oc.index) != tied.end()) oc = evaluate_variant(ctx, oc.index);
    }
  }
  return ran;
}

// The sanitizer gate: every variant the header dispatches to (and, when asked, each bucket's
// runners-up) runs its checks under compute-sanitizer before it is accepted. One with errors is
// recorded as a sanitizer failure (with an attempt of its own) and the record is chosen again
// without it (`choose`: the winners, and the learned dispatch of a domain), until every choice is
// clean.
void sanitize_choices(const EvaluationContext& ctx, const TuneOptions& o, const std::filesystem::path& sanitizer,
                      std::vector<VariantOutcome>& outcomes, Record& record, const std::function<Record()>& choose,
                      std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  std::set<std::size_t> clean;
  while (true) {
    std::optional<std::size_t> next;
    for (const auto& n : dispatched_variants(record, o.sanitize_runners_up)) {
      std::size_t v = *m.variant_index(n);
      if (!clean.count(v)) {
        next = v;
        break;
      }
    }
    if (!next) return;
    const std::string& name = m.variants[*next].name;
    SanitizerResult s = sanitize_variant(ctx, *next, sanitizer);
    if (s.clean) {
      clean.insert(*next);
      out << "kiln: " << name << ": compute-sanitizer " << (s.ran ? "clean (memcheck, racecheck)" : "skipped: " + s.detail)
          << "\n";
      continue;
    }
    out << "kiln: " << name << ": compute-sanitizer found errors; the next candidate is taken\n    " << s.detail << "\n";
    const worklog::VariantKey key{ctx.context_key, m.kernel, name, variant_hash(ctx, *next)};
    worklog::Attempt a;
    a.session_id = ctx.session_id;
    a.kernel = m.kernel;
    a.variant = name;
    a.author = worklog::Author::kiln;
    a.hypothesis = "a winner's checks under compute-sanitizer find no error the output comparison missed";
    a.change = "sanitizer gate";
    a.verdict = Verdict::failed;
    a.failure_kind = FailureKind::sanitizer;
    a.explanation = "sanitizer: " + s.detail;
    a.tags = {"sanitizer", m.backend};
    a.evidence = store_failure(ctx, key, FailureKind::sanitizer, s.detail);
    ctx.log->add_attempt(a);
    for (auto& oc : outcomes) {
      if (oc.index != *next) continue;
      oc.failure = FailureKind::sanitizer;
      oc.detail = s.detail;
      oc.score.reset();
    }
    record = choose();
  }
}

// The machine's state before measuring. While other processes use the GPU, waits up to
// busy_gpu_wait_s for them to leave; with allow_busy_gpu their presence only degrades the verdict.
Preflight take_preflight(const TuneOptions& o, const std::string& backend, const Device& spec, std::ostream& out) {
  Preflight pf = judge(observe(backend, &spec));
  auto start = std::chrono::steady_clock::now();
  bool told = false;
  while (!o.allow_busy_gpu && pf.refused_only_for_busy_gpu() &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < o.busy_gpu_wait_s) {
    if (!told) out << "kiln: other processes use the GPU; waiting up to " << o.busy_gpu_wait_s << " s for them to leave\n";
    told = true;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    if (interrupted()) throw Interrupted(SIGINT);
    pf = judge(observe(backend, &spec));
  }
  if (o.allow_busy_gpu) {
    for (auto& f : pf.findings) {
      if (f.code != "gpu_busy") continue;
      f.level = Readiness::degraded;
      f.text += " (tuning anyway: --allow-busy-gpu)";
    }
  }
  return pf;
}

}  // namespace

int tune(const TuneOptions& o, std::ostream& out, std::ostream& err) {
  std::int64_t session_id = 0;
  std::optional<worklog::Worklog> log;
  try {
    install_interrupt_handlers();
    Manifest m = load_manifest(o.manifest);
    Device spec = load_device(o.device_spec);
    if (spec.backend != m.backend) {
      throw std::runtime_error(o.device_spec.string() + " is a " + spec.backend + " device file; kernel " + m.kernel +
                               " is a " + m.backend + " kernel");
    }
    Probe probe = run_probe(o.probe);
    if (auto why = mismatch(spec, probe)) throw std::runtime_error(*why);

    Preflight preflight = take_preflight(o, m.backend, spec, out);
    out << preflight.text();
    if (preflight.verdict() == Readiness::refuse) {
      err << "kiln: error: the preflight refuses to tune " << m.kernel << " on this machine";
      for (const auto& f : preflight.findings) {
        if (f.level == Readiness::refuse) err << "; " << f.text;
      }
      err << (preflight.refused_only_for_busy_gpu() ? " (wait for them to finish, or pass --allow-busy-gpu)" : "") << "\n";
      return 3;
    }
    // Clocks held for the whole session, given back when it ends however it ends.
    std::optional<ClockLock> clock_lock;
    if (m.backend == "cuda") {
      if (o.lock_clocks) {
        clock_lock.emplace(preflight.seen);
        preflight.clocks_locked = clock_lock->locked();
        preflight.clocks_note = clock_lock->note();
        out << "kiln: clocks " << (clock_lock->locked() ? "locked" : "not locked") << ": " << clock_lock->note() << "\n";
      } else {
        preflight.clocks_locked = false;
        preflight.clocks_note = "not asked (kiln tune --lock-clocks)";
      }
    }

    std::string ctx_key = context_key(m, probe, o);
    log = worklog::Worklog::open(o.worklog);

    // Floors use the rates measured when this context was first tuned, so a re-run that reuses
    // every measurement reproduces the same record.
    nlohmann::ordered_json device = probe.raw;
    for (const auto& s : log->sessions()) {
      if (s.context_key == ctx_key && s.kernel == m.kernel) {
        device = nlohmann::ordered_json::parse(s.device);
        break;
      }
    }
    std::map<std::string, double> rates = spec.rates;
    const nlohmann::ordered_json measured_section = device.value("measured", nlohmann::ordered_json::object());
    for (const auto& [key, value] : measured_section.items()) {
      if (value.get<double>() > 0) rates[key] = value.get<double>();
    }

    std::uint64_t seed = o.seed != 0 ? o.seed
                                     : static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    SearchSpace space = SearchSpace::from(m);
    auto searcher = make_searcher(o.strategy, space, o.strategy_options, seed);

    worklog::Session session;
    session.kernel = m.kernel;
    session.strategy = searcher->name();
    session.device = device.dump();
    session.context_key = ctx_key;
    session.note = "device file " + spec.name + ", seed " + std::to_string(seed);
    session.preflight = preflight.to_json().dump();
    session_id = log->start_session(session);

    // Variants that already have an attempt in this context keep it: one attempt per variant.
    std::set<std::string> attempted;
    for (const auto& s : log->sessions()) {
      if (s.context_key != ctx_key || s.kernel != m.kernel || s.id == session_id) continue;
      worklog::AttemptFilter f;
      f.session_id = s.id;
      for (const auto& a : log->attempts(f)) {
        if (a.variant) attempted.insert(*a.variant);
      }
    }

    // A variant's score is over the listed problems; a domain's coverage points are timed on the
    // finalists after the search (time_coverage).
    const std::vector<Problem>& bench = m.problems;
    std::vector<Floor> floors;
    for (const auto& p : bench) floors.push_back(floor_of(m.work_of(p), rates));
    std::vector<double> floor_seconds;
    for (const auto& f : floors) {
      if (f.seconds > 0) floor_seconds.push_back(f.seconds);
    }
    std::optional<double> score_floor = floor_seconds.size() == bench.size() ? geomean(floor_seconds) : std::nullopt;
    std::string bound_label = floors.empty() ? std::string{} : floors.front().bound;

    EvaluationContext ctx;
    ctx.manifest = &m;
    ctx.log = &*log;
    ctx.session_id = session_id;
    ctx.context_key = ctx_key;
    ctx.variants_dir = o.variants_dir;
    ctx.build_records_dir = o.build_records_dir;
    ctx.scratch_dir = o.record_out.parent_path() / "plans";
    ctx.seed = seed;
    ctx.repetitions = o.repetitions;
    ctx.settled_spread = o.settled_spread;
    ctx.checks_per_problem = o.checks_per_problem;
    ctx.timeout_s = checked_time_limit(o.timeout_s.value_or(m.tuning.timeout_s), "the silence limit (--timeout)");
    ctx.retry_failed = o.retry_failed;
    ctx.quiet_wait_s = o.quiet_wait_s;
    if (m.backend == "cpu") ctx.environment = pinning_environment();
    std::map<std::string, double> reference_s;
    ctx.reference_s = &reference_s;
    for (std::size_t i = 0; i < bench.size(); ++i) ctx.floor_s[bench[i].key()] = floors[i].seconds;
    for (const auto& p : m.held_out) ctx.floor_s[p.key()] = floor_of(m.work_of(p), rates).seconds;

    out << "kiln: tuning " << m.kernel << " on " << probe.name << " (" << searcher->planned() << " of " << m.variants.size()
        << " variants, " << searcher->name() << " search, worklog " << o.worklog.string() << ")\n";
    Progress progress(out, o.progress, m.kernel, searcher->planned());
    std::vector<VariantOutcome> outcomes;
    std::optional<std::size_t> best;
    std::optional<double> best_score;
    std::size_t ran = 0, done = 0;
    double run_seconds = 0;
    while (auto proposal = searcher->propose()) {
      auto t0 = std::chrono::steady_clock::now();
      VariantOutcome outcome = evaluate_variant(ctx, *proposal);
      double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (outcome.ran) {
        ++ran;
        run_seconds += took;
      }
      searcher->observe({*proposal, outcome.score});
      ++done;

      const std::string& name = m.variants[*proposal].name;
      if (!outcome.kept.empty() && outcome.failure != FailureKind::compile) {
        out << "kiln: " << name << ": stored " << worklog::to_string(*outcome.failure) << " " << outcome.kept << "\n";
      }
      // A retried failure is new evidence: it gets an attempt of its own.
      if (!attempted.count(name) || !outcome.retried.empty()) {
        worklog::Attempt a;
        a.session_id = session_id;
        a.kernel = m.kernel;
        a.variant = name;
        a.author = worklog::Author::kiln;
        a.hypothesis = searcher->hypothesis();
        a.change = change_text(m, *proposal, best);
        a.baseline = best_score;
        a.unit = "s";
        a.floor = score_floor;
        a.tags = {searcher->name(), m.backend};
        if (!outcome.evidence.empty()) a.evidence = outcome.evidence;
        if (!outcome.retried.empty()) {
          a.hypothesis = "retried: " + outcome.retried + "; the earlier failure may have been the conditions', not the variant's";
          a.tags.push_back("retried");
        }
        if (outcome.failure) {
          a.verdict = *outcome.failure == FailureKind::correctness ? Verdict::invalid : Verdict::failed;
          a.failure_kind = *outcome.failure;
          a.explanation = std::string(worklog::to_string(*outcome.failure)) + ": " + outcome.detail;
          a.tags.push_back(std::string(worklog::to_string(*outcome.failure)));
        } else {
          a.result = outcome.score;
          bool better = !best_score || *outcome.score < *best_score;
          a.verdict = better ? Verdict::keep : Verdict::revert;
          std::ostringstream e;
          e << "geometric mean " << us(*outcome.score) << " over " << bench.size() << " problem"
            << (bench.size() == 1 ? "" : "s");
          if (best_score) {
            e << ", " << fixed((*outcome.score / *best_score - 1) * 100, 1) << "% against the best so far (" << us(*best_score)
              << ")";
          }
          if (score_floor) {
            double ratio = *outcome.score / *score_floor;
            e << "; " << fixed(ratio, 2) << "x its floor of " << us(*score_floor) << " (" << worklog::floor_reading(ratio)
              << ", bound by " << bound_label << ")";
            a.tags.push_back(slug(bound_label));
          }
          a.explanation = e.str();
        }
        if (!outcome.retried.empty()) a.explanation = "retried (" + outcome.retried + "): " + a.explanation;
        log->add_attempt(a);
        attempted.insert(name);
      }
      if (outcome.score && (!best_score || *outcome.score < *best_score)) {
        best = *proposal;
        best_score = outcome.score;
      }
      std::string best_text;
      if (best) {
        best_text = m.variants[*best].name + " " + us(*best_score);
        if (score_floor) best_text += " (" + fixed(*best_score / *score_floor, 2) + "x floor)";
      }
      std::size_t left = searcher->planned() > done ? searcher->planned() - done : 0;
      progress.update(done, best_text, ran > 0 ? run_seconds / static_cast<double>(ran) : 0, left);
      outcomes.push_back(std::move(outcome));
    }
    progress.finish();

    SelectionInput in{&m, &*log, ctx_key, spec.name, device, rates, searcher->name()};
    auto hash_of = [&](std::size_t v) { return variant_hash(ctx, v); };
    Record record = select_winners(in, outcomes, hash_of);
    if (o.interleave_rounds > 0) {
      std::size_t again = settle_near_ties(ctx, record, outcomes, o.interleave_rounds, out);
      if (again > 0) record = select_winners(in, outcomes, hash_of);
    }
    // The winners and, for a space with a domain, the learned dispatch fitted to the coverage
    // points and judged on the held-out ones (from the worklog where measured before).
    auto choose = [&] {
      Record chosen = select_winners(in, outcomes, hash_of);
      fit_domain(ctx, outcomes, rates, chosen, out);
      return chosen;
    };
    time_coverage(ctx, outcomes, o.finalists, out);
    fit_domain(ctx, outcomes, rates, record, out);
    if (m.backend == "cuda" && o.sanitize) {
      if (auto sanitizer = find_tool("compute-sanitizer")) {
        sanitize_choices(ctx, o, *sanitizer, outcomes, record, choose, out);
      } else if (o.sanitize_required) {
        throw std::runtime_error("compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin); --sanitize needs it");
      } else {
        out << "kiln: compute-sanitizer not found: the winners are not sanitized (--no-sanitize says this is meant)\n";
      }
    }
    std::size_t passed = record.counts.value("passed", std::size_t{0});
    std::size_t invalid = record.counts.value("invalid", std::size_t{0});
    std::size_t failed = record.counts.value("failed", std::size_t{0});

    std::string text = record_text(record);
    write_if_changed(o.record_out, text);
    for (const auto& copy : o.record_copies) {
      if (write_if_changed(copy, text)) out << "kiln: wrote " << copy.string() << "\n";
    }
    std::vector<std::string> warnings;
    write_if_changed(o.header_out, dispatch_header(m, record, warnings));
    for (const auto& w : warnings) err << "kiln: warning: " << w << "\n";

    log->end_session(session_id);

    out << "kiln: " << m.kernel << " on " << record.device_name << ": " << outcomes.size() << " evaluated, " << passed
        << " passed, " << invalid << " wrong, " << failed << " failed to build or run; " << ran << " measured now\n";
    for (const auto& rb : record.buckets) {
      if (!rb.winner) {
        out << "  " << rb.name << ": no winner (" << rb.reason << ")\n";
        continue;
      }
      out << "  " << rb.name << ": " << *rb.winner;
      if (rb.noise) out << " (noise " << fixed(*rb.noise * 100, 1) << "%)";
      out << "\n";
      if (!rb.choice.empty()) out << "    " << rb.choice << "\n";
      for (const auto& c : rb.contenders) {
        if (!c.within_noise.value_or(false)) continue;
        out << "    tie within noise: " << c.variant << " " << fixed((c.time_s / rb.time_s - 1) * 100, 1) << "% (noise "
            << fixed(std::max(*c.noise, *rb.noise) * 100, 1) << "%)\n";
      }
      for (const auto& p : rb.problems) {
        out << "    " << p.problem.key() << ": " << us(p.time_s);
        if (p.floor_s > 0) {
          double ratio = p.time_s / p.floor_s;
          out << ", floor " << us(p.floor_s) << " (" << p.bound << "), " << fixed(ratio, 2) << "x " << worklog::floor_reading(ratio);
        }
        out << "\n";
      }
    }
    if (record.domain) out << domain_summary(*record.domain);
    return 0;
  } catch (const Interrupted& e) {
    err << "kiln: tuning interrupted; every finished measurement is in the worklog, and the next run resumes from it\n";
    return 130;
  } catch (const std::exception& e) {
    err << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace kiln::tuner
