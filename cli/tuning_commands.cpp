#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "usage.hpp"
#include "evaluate.hpp"
#include "gpus.hpp"
#include "kiln/worklog/worklog.hpp"
#include "device_spec.hpp"
#include "manifest.hpp"
#include "preflight.hpp"
#include "profile.hpp"
#include "process.hpp"
#include "rebuild.hpp"
#include "replay.hpp"
#include "replay_table.hpp"
#include "search.hpp"
#include "source_closure.hpp"
#include "tune.hpp"
#include "verify.hpp"

namespace kiln::cli {
namespace {

struct ReplayArgs {
  std::string worklog, manifest, strategy = "anneal";
  std::size_t budget = 0;
  std::vector<std::string> options;
  std::uint64_t seed = 1;
  bool table = false;
  bool buckets = false;
  bool strategy_given = false;
  std::size_t seeds = 20;
  std::vector<double> fractions{0.05, 0.10, 0.15};
};

// The strategy's options: the key=value strings, with --budget as a shorthand for budget=N.
tuner::StrategyOptions strategy_options(const std::vector<std::string>& assignments, std::size_t budget) {
  tuner::StrategyOptions o = tuner::StrategyOptions::parse(assignments);
  if (budget > 0) o.set("budget", std::to_string(budget));
  return o;
}

// --budget of kiln tune: a count, or a fraction of the space, checked as the option budget is.
tuner::StrategyOptions strategy_options(const std::vector<std::string>& assignments, const std::string& budget) {
  tuner::StrategyOptions o = tuner::StrategyOptions::parse(assignments);
  if (!budget.empty() && budget != "0") o.set("budget", budget);
  return o;
}

CLI::Validator budget_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          tuner::StrategyOptions{{"budget", text}}.count("budget", 1);
        } catch (const kiln::Error&) {
          return "'" + text + "' is not a count (20) or a fraction of the space (0.15)";
        }
        return {};
      },
      "COUNT|FRACTION");
}

// --stop-ratio: 0 (off), or a ratio far enough above 1 that near-ties are always timed in full.
CLI::Validator stop_ratio_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double ratio = 0;
        if (!CLI::detail::lexical_cast(text, ratio) || !std::isfinite(ratio) || (ratio != 0 && ratio < 1.5)) {
          return "'" + text + "' is not 0 or a ratio of at least 1.5";
        }
        return {};
      },
      "RATIO");
}

std::string strategy_help(const std::string& head = "search strategy:") {
  std::string help = head;
  for (const auto& [name, s] : tuner::strategies()) {
    help += "\n  " + name + ": " + s.description;
    for (const auto& o : s.options) help += "\n    option " + o.name + ": " + o.description;
  }
  return help;
}

int replay(const ReplayArgs& a) {
  tuner::Manifest m = tuner::load_manifest(a.manifest);
  auto log = worklog::Worklog::open(a.worklog, worklog::OpenMode::read_only);
  auto scores = tuner::recorded_scores(log, m);
  if (scores.size() != m.variants.size()) {
    throw std::runtime_error("the worklog holds results for " + std::to_string(scores.size()) + " of " +
                             std::to_string(m.variants.size()) + " variants; replay needs an exhaustive tuning first");
  }
  auto recorded = [&](std::size_t v) { return scores.at(v); };
  tuner::SearchSpace space = tuner::SearchSpace::from(m);
  if (a.table) {
    tuner::TableSettings settings;
    if (a.strategy_given) settings.strategies = {a.strategy};
    settings.fractions = a.fractions;
    settings.seeds = a.seeds;
    settings.first_seed = a.seed;
    std::cout << tuner::format_table(tuner::replay_table(space, recorded, settings));
    return 0;
  }
  auto exhaustive = tuner::make_searcher("exhaustive", space, {}, a.seed);
  auto reference = tuner::replay(*exhaustive, recorded);
  auto searcher = tuner::make_searcher(a.strategy, space, strategy_options(a.options, a.budget), a.seed);
  const auto evaluations = tuner::recorded_evaluations(log, m);
  auto result = a.buckets ? tuner::replay_evaluations(*searcher, [&](std::size_t v) { return evaluations.at(v); })
                          : tuner::replay(*searcher, recorded);
  std::cout << "kiln: replayed " << searcher->name() << " (seed " << a.seed << ") on " << m.kernel << ": "
            << result.evaluations.size() << " of " << m.variants.size() << " variants measured\n";
  if (!reference.best || !result.best) {
    std::cout << "  no variant passed\n";
    return 1;
  }
  double best = *scores.at(*reference.best), found = *scores.at(*result.best);
  std::cout << "  best of the space: " << m.variants[*reference.best].name << " " << best * 1e6 << " us\n"
            << "  found:             " << m.variants[*result.best].name << " " << found * 1e6 << " us ("
            << (found / best - 1) * 100 << "% slower)\n";
  // Per bucket (the record's winners): the best of the space and of what was measured.
  const std::vector<std::size_t> buckets = tuner::scored_buckets(m);
  std::vector<double> space_best(buckets.size(), 1e300), found_best(buckets.size(), 1e300);
  for (const auto& [v, e] : evaluations) {
    for (std::size_t k = 0; k < e.parts.size(); ++k) space_best[k] = std::min(space_best[k], e.parts[k]);
  }
  for (const auto& e : result.evaluations) {
    const auto& parts = evaluations.at(e.variant).parts;
    for (std::size_t k = 0; k < parts.size(); ++k) found_best[k] = std::min(found_best[k], parts[k]);
  }
  for (std::size_t k = 0; k < buckets.size() && space_best[k] < 1e300; ++k) {
    std::cout << "  bucket " << m.buckets[buckets[k]].name << ": " << found_best[k] * 1e6 << " us found, "
              << space_best[k] * 1e6 << " us the best (" << space_best[k] / found_best[k] << " of it)\n";
  }
  return 0;
}

// kiln preflight: 0 ready or degraded, 3 refuse, 1 when the machine could not be looked at.
int preflight(const std::string& device_file, bool json) {
  std::optional<tuner::Device> spec;
  if (!device_file.empty()) spec = tuner::load_device(device_file);
  const std::string backend = spec ? spec->backend : tuner::backend_here();
  tuner::Preflight p = tuner::judge(tuner::observe(backend, spec ? &*spec : nullptr));
  if (json) {
    std::cout << p.to_json().dump(2) << "\n";
  } else {
    std::cout << p.text();
  }
  return p.verdict() == tuner::Readiness::refuse ? kRefusedExitCode : 0;
}

}  // namespace

void add_tuning_commands(CLI::App& app, int& exit_code) {
  auto t = std::make_shared<tuner::TuneOptions>();
  auto paths = std::make_shared<std::map<std::string, std::string>>();
  auto copies = std::make_shared<std::vector<std::string>>();
  auto sources = std::make_shared<std::vector<std::string>>();
  auto flags = std::make_shared<std::string>();
  auto timeout = std::make_shared<std::optional<double>>();
  auto sanitize_timeout = std::make_shared<std::optional<double>>();
  auto no_progress = std::make_shared<bool>(false);
  auto* tune = app.add_subcommand("tune", "Validate and time a kernel's variants; write its record and dispatch header");
  tune->add_option("--manifest", (*paths)["manifest"], "manifest.json from kiln generate")->required()->check(CLI::ExistingFile);
  tune->add_option("--variants-dir", (*paths)["variants"], "directory of the variant executables")->required();
  tune->add_option("--build-records", (*paths)["builds"], "directory of the variants. build records (kiln compile)")->required();
  tune->add_option("--worklog", (*paths)["worklog"], "worklog (SQLite), created when missing")->required();
  tune->add_option("--device", (*paths)["device"], "device file (presets/devices/*.json)")->required()->check(CLI::ExistingFile);
  tune->add_option("--probe", (*paths)["probe"], "the device probe of the kernel's backend (kiln_probe_<backend>)")->required()->check(CLI::ExistingFile);
  tune->add_option("--record-out", (*paths)["record"], "tuning record to write (required without --shard)");
  tune->add_option("--header-out", (*paths)["header"], "dispatch header to write (required without --shard)");
  auto shard = std::make_shared<std::string>();
  tune->add_option("--shard", *shard,
                   "i/N: measure only shard i's share of the search (the variants whose name hashes to i modulo N) "
                   "into a node-local worklog; no record or header: kiln merge the shards, then kiln record");
  tune->add_option("--record-copy", *copies, "also write the record here (e.g. the committed records)");
  tune->add_option("--source", *sources, "kernel source whose content keys the measurement cache")->check(CLI::ExistingFile);
  auto include_dirs = std::make_shared<std::vector<std::string>>();
  tune->add_option("--include-dir", *include_dirs,
                   "where the sources' includes are looked for (repeatable): what they include from there, or from "
                   "beside themselves, keys the cache too")
      ->check(CLI::ExistingDirectory);
  auto depfile = std::make_shared<std::string>();
  auto depfile_target = std::make_shared<std::string>();
  auto* depfile_opt = tune->add_option("--depfile", *depfile,
                                       "write the files the context is keyed by (the sources and what they include) as "
                                       "a Make dependency file of --depfile-target (a build tool's DEPFILE)");
  auto* depfile_target_opt = tune->add_option("--depfile-target", *depfile_target, "the target the dependency file names");
  depfile_opt->needs(depfile_target_opt);
  depfile_target_opt->needs(depfile_opt);
  tune->add_option("--flags-file", *flags, "file describing compiler and flags")->check(CLI::ExistingFile);
  auto strategy_assignments = std::make_shared<std::vector<std::string>>();
  auto budget = std::make_shared<std::string>();
  auto* strategy_opt = tune->add_option("--strategy", t->strategy,
                                        strategy_help("search strategy (default: the space's tuning.search, else exhaustive):"))
                           ->check(CLI::IsMember(tuner::strategy_names()));
  tune->add_option("--strategy-option", *strategy_assignments, "key=value, an option of the strategy (repeatable)");
  tune->add_option("--budget", *budget,
                   "shorthand for --strategy-option budget=N: a count, or a fraction of the space such as 0.15 (0: the "
                   "strategy's default)")
      ->check(budget_value());
  tune->add_option("--seed", t->seed, "random seed (default: from the clock)")->check(count());
  tune->add_option("--repetitions", t->repetitions, "timed repetitions per problem (median), at most")->check(CLI::Range(1, 1000));
  tune->add_option("--settled-spread", t->settled_spread,
                   "stop after 3 repetitions whose range is within this fraction of their median (0: always all)")
      ->check(CLI::Range(0.0, 1.0));
  tune->add_option("--repetition-seconds", t->repetition_seconds,
                   "timed work of one repetition, in seconds (default 0.005): the launches of a repetition fill it")
      ->check(CLI::Range(0.0001, 10.0));
  tune->add_option("--stop-ratio", t->stop_ratio,
                   "stop a timing at its first figure when that is over this many times the fastest time the worklog "
                   "holds for the problem (0: always in full)")
      ->check(stop_ratio_value());
  tune->add_option("--checks", t->checks_per_problem, "validations per problem, each on fresh inputs")->check(CLI::Range(1, 100));
  tune->add_option("--timeout", *timeout,
                   "seconds a variant may go without reporting progress (default: the space's tuning.timeout_s); "
                   "steps expected to take longer get more")
      ->check(CLI::Range(1e-3, 7 * 24 * 3600.0));
  tune->add_flag("--no-progress", *no_progress, "no progress line");
  tune->add_flag("--retry-failed", t->retry_failed, "measure again the variants whose stored failure is transient "
                                                    "(timeout, crash, runtime); compile failures are kept");
  tune->add_option("--quiet-wait", t->quiet_wait_s, "longest wait, in seconds, for a quiet machine before each measurement")
      ->check(CLI::Range(0.0, 3600.0));
  tune->add_option("--finalists", t->finalists,
                   "with a problem domain: the fastest variants of each listed problem, and by score, that are "
                   "timed at the coverage points")
      ->check(CLI::Range(1, 1000));
  tune->add_option("--interleave-rounds", t->interleave_rounds,
                   "turns each near-tie gets when re-measured A/B/A/B before a winner is named (0: none)")
      ->check(CLI::Range(0, 20));
  tune->add_flag("--allow-busy-gpu", t->allow_busy_gpu,
                 "tune even while other processes use the GPU (the preflight otherwise waits, then refuses)");
  tune->add_option("--busy-gpu-wait", t->busy_gpu_wait_s,
                   "longest wait, in seconds, for other processes to leave the GPU before refusing")
      ->check(CLI::Range(0.0, 3600.0));
  auto no_sanitize = std::make_shared<bool>(false);
  tune->add_flag("--sanitize", t->sanitize_required,
                 "run each CUDA winner's checks under compute-sanitizer (memcheck, racecheck) before accepting it; "
                 "the default when compute-sanitizer is found, an error when it is not");
  tune->add_flag("--no-sanitize", *no_sanitize, "accept CUDA winners without compute-sanitizer");
  tune->add_option("--sanitize-runners-up", t->sanitize_runners_up, "also sanitize this many runners-up of each bucket")
      ->check(CLI::Range(0, 3));
  tune->add_option("--sanitize-jobs", t->sanitize_jobs,
                   "gate runs at once on each GPU (default 1: runs under the sanitizer beside each other can slow each other down many times over)")
      ->check(CLI::Range(1, 16));
  tune->add_option("--sanitize-timeout", *sanitize_timeout,
                   "seconds one compute-sanitizer run of the gate may go without reporting progress (default: 100 "
                   "times --timeout, at most 600); a run stopped at it is no pass and no failure: the variant is "
                   "taken unsanitized, and the next tuning runs it again")
      ->check(CLI::Range(1e-3, 7 * 24 * 3600.0));
  tune->add_option("--gpus", t->gpus,
                   "CUDA: measure on these GPUs at once, one variant process per GPU: 'all' or nvidia-smi indices "
                   "such as 0,2 (one model only); near-ties are measured again on the first. Default: the first GPU "
                   "of CUDA_VISIBLE_DEVICES")
      ->check([](const std::string& v) {
        try {
          tuner::parse_gpu_request(v);
          return std::string();
        } catch (const kiln::Error& e) {
          return std::string(e.what());
        }
      });
  tune->add_flag("--lock-clocks", t->lock_clocks,
                 "lock the GPU's SM clock at its maximum for the session (nvidia-smi -lgc; needs the permission), "
                 "reset at the end");
  // Compile on demand: the template's captured command lines, as `kiln compile` takes them.
  auto on_demand = std::make_shared<tuner::CompileOptions>();
  auto* cc = tune->add_option("--compile-command", on_demand->compile_command,
                              "compile the variants when the search first needs them, with this captured compile of "
                              "the template (kiln compile builds none beforehand)")
                 ->check(CLI::ExistingFile)
                 ->group("Compile on demand");
  auto* lc = tune->add_option("--link-command", on_demand->link_command, "the template's captured link")
                 ->check(CLI::ExistingFile)
                 ->group("Compile on demand");
  auto* ts = tune->add_option("--template-source", on_demand->template_source, "the template's source file")
                 ->group("Compile on demand");
  auto* od = tune->add_option("--objects-dir", on_demand->objects_dir, "where objects and dependency files go")
                 ->group("Compile on demand");
  tune->add_option("--compile-jobs", on_demand->jobs, "parallel compiles (0: one per processor, fewer when memory is short)")
      ->check(CLI::Range(0, 1024))
      ->group("Compile on demand");
  cc->needs(lc)->needs(ts)->needs(od);
  lc->needs(cc);
  ts->needs(cc);
  od->needs(cc);
  tune->callback([=, &exit_code] {
    t->manifest = (*paths)["manifest"];
    t->variants_dir = (*paths)["variants"];
    t->build_records_dir = (*paths)["builds"];
    t->worklog = (*paths)["worklog"];
    t->device_spec = (*paths)["device"];
    t->probe = (*paths)["probe"];
    t->record_out = (*paths)["record"];
    t->header_out = (*paths)["header"];
    if (!shard->empty()) {
      try {
        t->shard = tuner::parse_shard(*shard);
      } catch (const kiln::Error& e) {
        throw CLI::ValidationError(e.what());  // a usage error: exit code 2
      }
      if (t->strategy != "exhaustive") {
        throw CLI::ValidationError("--shard needs --strategy exhaustive (a budgeted search's next proposal depends "
                                   "on every measurement before it, which the other shards hold), not " + t->strategy);
      }
    } else if (t->record_out.empty() || t->header_out.empty()) {
      throw CLI::RequiredError(t->record_out.empty() ? "--record-out" : "--header-out");
    }
    for (const auto& c : *copies) t->record_copies.emplace_back(c);
    for (const auto& s : *sources) t->sources.emplace_back(s);
    for (const auto& d : *include_dirs) t->include_dirs.emplace_back(std::filesystem::absolute(d));
    // The files the context is keyed by: the build's dependencies of this step, and what a failed
    // variant is compiled again for when one changes.
    const std::vector<std::filesystem::path> keyed = tuner::source_closure(t->sources, t->include_dirs);
    if (!depfile->empty()) tuner::write_depfile(*depfile, *depfile_target, keyed);
    if (!on_demand->compile_command.empty()) {
      t->compile_on_demand = *on_demand;
      t->compile_on_demand->sources = keyed;
    }
    if (!flags->empty()) t->flags_file = *flags;
    if (*timeout) {
      try {
        t->timeout_s = tuner::checked_time_limit(**timeout, "--timeout");
      } catch (const kiln::Error& e) {
        throw CLI::ValidationError(e.what());  // a usage error: exit code 2
      }
    }
    t->sanitize_timeout_s = *sanitize_timeout;  // checked by its range above, and by open_tuning
    t->progress = !*no_progress;
    if (*no_sanitize && t->sanitize_required) {
      std::cerr << "kiln: error: --sanitize and --no-sanitize contradict each other\n";
      exit_code = 2;
      return;
    }
    t->sanitize = !*no_sanitize;
    t->strategy_options = strategy_options(*strategy_assignments, *budget);
    t->strategy_given = strategy_opt->count() > 0;
    tuner::tune(*t, std::cout, std::cerr);
  });

  auto pf_device = std::make_shared<std::string>();
  auto pf_json = std::make_shared<bool>(false);
  auto* pf = app.add_subcommand("preflight", "Is this machine fit to measure on? GPU and CPU state, verdict "
                                             "ready/degraded/refuse (exit code 3 on refuse)");
  pf->add_option("--device", *pf_device, "device file (presets/devices/*.json): the GPU must be its GPU")
      ->check(CLI::ExistingFile);
  pf->add_flag("--json", *pf_json, "print the JSON stored with each tuning session");
  pf->callback([=, &exit_code] { exit_code = preflight(*pf_device, *pf_json); });

  auto po = std::make_shared<tuner::ProfileOptions>();
  auto po_paths = std::make_shared<std::map<std::string, std::string>>();
  auto* prof = app.add_subcommand("profile", "Nsight Compute (ncu) on each CUDA bucket's winner: throughputs, occupancy, "
                                             "registers, launch shape, stalls; the bottleneck of each problem");
  prof->add_option("--build", (*po_paths)["build"], "a build tree that tuned (a *-tune preset's build/<preset>)")
      ->required()
      ->check(CLI::ExistingDirectory);
  prof->add_option("--kernel", po->kernels, "only this kernel (repeatable; default: every tuned CUDA kernel)");
  prof->add_option("--runners-up", po->runners_up, "also profile this many runners-up of each bucket")->check(CLI::Range(0, 10));
  prof->add_option("--worklog", (*po_paths)["worklog"], "the worklog (default: the build's KILN_WORKLOG)")
      ->check(CLI::ExistingFile);
  prof->add_option("--ncu", (*po_paths)["ncu"], "ncu to use (default: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")
      ->check(CLI::ExistingFile);
  prof->add_option("--timeout", po->timeout_s, "seconds ncu may stay silent on one run")->check(CLI::Range(1.0, 24 * 3600.0));
  prof->callback([=, &exit_code] {
    po->build_dir = (*po_paths)["build"];
    if (!(*po_paths)["worklog"].empty()) po->worklog = (*po_paths)["worklog"];
    if (!(*po_paths)["ncu"].empty()) po->ncu = (*po_paths)["ncu"];
    tuner::profile(*po, std::cout);
  });

  auto v = std::make_shared<tuner::VerifyOptions>();
  auto vpaths = std::make_shared<std::map<std::string, std::string>>();
  auto* verify = app.add_subcommand("verify", "Re-measure a record's winners and contenders; does the ranking hold?");
  verify->add_option("--manifest", (*vpaths)["manifest"])->required()->check(CLI::ExistingFile);
  verify->add_option("--record", (*vpaths)["record"])->required()->check(CLI::ExistingFile);
  verify->add_option("--variants-dir", (*vpaths)["variants"])->required();
  verify->add_option("--device", (*vpaths)["device"])->required()->check(CLI::ExistingFile);
  verify->add_option("--probe", (*vpaths)["probe"])->required()->check(CLI::ExistingFile);
  verify->add_option("--repetitions", v->repetitions)->check(CLI::Range(1, 1000));
  verify->add_option("--max-regression", v->max_regression_pct,
                     "fail when a winner is slower than recorded by more than its noise plus PCT percent")
      ->check(CLI::Range(0.0, 1000.0));
  verify->callback([=, &exit_code] {
    v->manifest = (*vpaths)["manifest"];
    v->record = (*vpaths)["record"];
    v->variants_dir = (*vpaths)["variants"];
    v->device_spec = (*vpaths)["device"];
    v->probe = (*vpaths)["probe"];
    v->scratch_dir = std::filesystem::temp_directory_path() / "kiln-verify";
    exit_code = tuner::verify(*v, std::cout) ? 0 : 1;
  });

  auto rb = std::make_shared<tuner::RebuildOptions>();
  auto rbpaths = std::make_shared<std::map<std::string, std::string>>();
  auto* rec = app.add_subcommand("record", "Rebuild a kernel's record (and header) from a worklog, measuring nothing");
  rec->add_option("--manifest", (*rbpaths)["manifest"])->required()->check(CLI::ExistingFile);
  rec->add_option("--worklog", (*rbpaths)["worklog"])->required()->check(CLI::ExistingFile);
  rec->add_option("--device", (*rbpaths)["device"], "device file the tuning used")->required()->check(CLI::ExistingFile);
  rec->add_option("--out", (*rbpaths)["out"], "record to write")->required();
  rec->add_option("--header-out", (*rbpaths)["header"], "also write the dispatch header");
  rec->add_option("--context", (*rbpaths)["context"],
                  "the tuning context to rebuild, a record's context_key (default: the kernel's newest on the device)")
      ->check(CLI::Validator([](const std::string& v) { return v.empty() ? std::string("an empty context key") : std::string(); },
                             "KEY"));
  rec->callback([=, &exit_code] {
    rb->manifest = (*rbpaths)["manifest"];
    rb->worklog = (*rbpaths)["worklog"];
    rb->device_spec = (*rbpaths)["device"];
    rb->record_out = (*rbpaths)["out"];
    if (!(*rbpaths)["header"].empty()) rb->header_out = (*rbpaths)["header"];
    if (!(*rbpaths)["context"].empty()) rb->context = (*rbpaths)["context"];
    tuner::rebuild_record(*rb, std::cout, std::cerr);
  });

  auto r = std::make_shared<ReplayArgs>();
  auto* rep = app.add_subcommand("replay", "Run a search strategy offline against the worklog's recorded results");
  rep->add_option("--worklog", r->worklog)->required()->check(CLI::ExistingFile);
  rep->add_option("--manifest", r->manifest)->required()->check(CLI::ExistingFile);
  rep->add_option("--strategy", r->strategy, strategy_help())->check(CLI::IsMember(tuner::strategy_names()));
  rep->add_option("--strategy-option", r->options, "key=value, an option of the strategy (repeatable)");
  rep->add_option("--budget", r->budget, "shorthand for --strategy-option budget=N")->check(count());
  rep->add_option("--seed", r->seed, "random seed (with --table: the first of --seeds consecutive seeds)")->check(count());
  auto* table = rep->add_flag("--table", r->table,
                "every budgeted strategy (or --strategy) at every budget of --fractions over --seeds seeds: the fraction "
                "of the optimum reached, as a Markdown table");
  rep->add_flag("--buckets", r->buckets,
                "hand the search each bucket's score as well, as a tuning does (where two or more buckets hold "
                "listed problems)");
  rep->add_option("--seeds", r->seeds, "with --table: seeds per strategy and budget (default 20)")->check(CLI::Range(1, 100000));
  rep->add_option("--fractions", r->fractions, "with --table: budgets as fractions of the space (default 0.05,0.10,0.15)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& text) {
            double v = 0;
            std::size_t used = 0;
            try {
              v = std::stod(text, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            return used == text.size() && v > 0 && v <= 1 ? std::string() : "a fraction of the space: more than 0, at most 1";
          },
          "FRACTION"));
  table->excludes(rep->get_option("--budget"));
  table->excludes(rep->get_option("--buckets"));
  table->excludes(rep->get_option("--strategy-option"));
  rep->get_option("--seeds")->needs(table);
  rep->get_option("--fractions")->needs(table);
  rep->callback([r, rep, &exit_code] {
    r->strategy_given = rep->count("--strategy") > 0;
    exit_code = replay(*r);
  });
}

}  // namespace kiln::cli
