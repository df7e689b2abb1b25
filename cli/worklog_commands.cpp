#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "usage.hpp"
#include "kiln/worklog/markdown.hpp"
#include "kiln/worklog/merge.hpp"
#include "kiln/worklog/sessions.hpp"
#include "kiln/text.hpp"
#include "kiln/worklog/worklog.hpp"
#include "record.hpp"
#include "domain_report.hpp"
#include "report.hpp"
#include "retry.hpp"

namespace kiln::cli {
namespace {

using namespace kiln::worklog;
using kiln::escape_controls;

struct LogArgs {
  std::string worklog, kernel, verdict, tag, author, search;
  std::int64_t session = 0;
  bool json = false;
};

struct AttemptArgs {
  std::string worklog, kernel, variant, problem, hypothesis, change, unit = "s", verdict, failure_kind, explanation,
      unlocks, blocks, tags;
  std::optional<double> baseline, result, floor;
};

struct LinkArgs {
  std::string worklog, kind, note;
  std::int64_t from = 0, to = 0;
};

struct ReportArgs {
  std::string worklog, kernel, svg_dir;
  std::vector<std::string> records;
  std::int64_t session = 0;
};

struct SessionsArgs {
  std::string worklog, kernel;
  bool json = false;
};

std::string number(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  char buf[48];
  if (unit == "s") {
    std::snprintf(buf, sizeof buf, "%.2f us", *v * 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g %s", *v, unit.c_str());
  }
  return buf;
}

nlohmann::ordered_json to_json(const Attempt& a) {
  auto opt = [](const auto& o) -> nlohmann::ordered_json { return o ? nlohmann::ordered_json(*o) : nullptr; };
  return {{"id", a.id},
          {"session", opt(a.session_id)},
          {"kernel", a.kernel},
          {"variant", opt(a.variant)},
          {"problem", opt(a.problem)},
          {"author", std::string(to_string(a.author))},
          {"hypothesis", a.hypothesis},
          {"change", a.change},
          {"baseline", opt(a.baseline)},
          {"result", opt(a.result)},
          {"unit", a.unit},
          {"delta_pct", opt(a.delta_pct)},
          {"verdict", std::string(to_string(a.verdict))},
          {"failure_kind", a.failure_kind ? nlohmann::ordered_json(std::string(to_string(*a.failure_kind))) : nullptr},
          {"explanation", a.explanation},
          {"unlocks", a.unlocks},
          {"blocks", a.blocks},
          {"tags", a.tags},
          {"floor", opt(a.floor)},
          {"created_at", a.created_at}};
}

// For a failed attempt whose failure is still stored: when a tuning run would retry it, or why
// it never will. Empty when none is stored (a compile failure outside a session, or a failure
// since retried: its retry has an attempt of its own).
std::string retry_line(const Worklog& log, const Attempt& at) {
  if (!at.failure_kind || !at.variant || !at.session_id || *at.failure_kind == FailureKind::correctness) return "";
  auto session = log.session(*at.session_id);
  if (!session) return "";
  for (const auto& f : log.variant_failures(session->context_key, at.kernel)) {
    if (f.key.variant == *at.variant) return tuner::retry_policy(f);
  }
  return "";
}

int log_command(const LogArgs& a) {
  auto log = Worklog::open(a.worklog, OpenMode::read_only);
  AttemptFilter f;
  if (!a.kernel.empty()) f.kernel = a.kernel;
  if (!a.verdict.empty()) f.verdict = parse_verdict(a.verdict);
  if (!a.tag.empty()) f.tag = a.tag;
  if (!a.author.empty()) f.author = parse_author(a.author);
  if (!a.search.empty()) f.text = a.search;
  if (a.session > 0) f.session_id = a.session;
  auto attempts = log.attempts(f);
  if (a.json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& at : attempts) all.push_back(to_json(at));
    // Text that is not UTF-8 becomes U+FFFD: one bad attempt cannot make the output invalid JSON.
    std::cout << all.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    return 0;
  }
  for (const auto& at : attempts) {
    char delta[32] = "";
    if (at.delta_pct) std::snprintf(delta, sizeof delta, " (%+.1f%%)", *at.delta_pct);
    std::cout << "#" << at.id << " " << to_string(at.verdict);
    if (at.failure_kind) std::cout << "/" << to_string(*at.failure_kind);
    // Worklog text is escaped: a newline in it cannot forge a line, nor an escape sequence reach
    // the terminal.
    std::cout << "  " << escape_controls(at.kernel) << "  " << escape_controls(at.variant.value_or("-")) << "  "
              << number(at.result, escape_controls(at.unit)) << delta << "\n    change: " << escape_controls(at.change)
              << "\n    " << escape_controls(at.explanation) << "\n";
    if (std::string retry = retry_line(log, at); !retry.empty()) std::cout << "    retry: " << escape_controls(retry) << "\n";
    for (const auto& link : log.links_of(at.id)) {
      std::cout << "    link: #" << link.from_attempt << " " << to_string(link.kind) << " #" << link.to_attempt
                << (link.note.empty() ? "" : " (" + escape_controls(link.note) + ")") << "\n";
    }
  }
  std::cout << attempts.size() << " attempt" << (attempts.size() == 1 ? "" : "s") << "\n";
  return 0;
}

int attempt_command(const AttemptArgs& a) {
  auto log = Worklog::open(a.worklog);
  Attempt at;
  at.kernel = a.kernel;
  if (!a.variant.empty()) at.variant = a.variant;
  if (!a.problem.empty()) at.problem = a.problem;
  at.author = Author::person;
  at.hypothesis = a.hypothesis;
  at.change = a.change;
  at.baseline = a.baseline;
  at.result = a.result;
  at.unit = a.unit;
  at.verdict = parse_verdict(a.verdict);
  if (!a.failure_kind.empty()) at.failure_kind = parse_failure_kind(a.failure_kind);
  at.explanation = a.explanation;
  at.unlocks = a.unlocks;
  at.blocks = a.blocks;
  at.tags = normalise_tags(a.tags);
  at.floor = a.floor;
  std::cout << log.add_attempt(at) << "\n";
  return 0;
}

int link_command(const LinkArgs& a) {
  auto log = Worklog::open(a.worklog, OpenMode::existing);
  std::cout << log.add_link(a.from, a.to, parse_link_kind(a.kind), a.note) << "\n";
  return 0;
}

int report_command(const ReportArgs& a) {
  std::vector<tuner::Record> records;
  for (const auto& r : a.records) records.push_back(tuner::load_record(r));
  std::optional<Worklog> log;
  if (!a.worklog.empty()) log.emplace(Worklog::open(a.worklog, OpenMode::read_only));
  // The heat maps are written only when asked for, and only after every record has been read.
  if (!a.svg_dir.empty()) {
    for (const auto& r : records) {
      for (bool regret : {false, true}) {
        const std::string svg = tuner::heat_map_svg(r, regret);
        if (!svg.empty()) tuner::write_if_changed(a.svg_dir + "/" + r.kernel + (regret ? "_regret.svg" : "_floor.svg"), svg);
      }
    }
  }
  for (const auto& r : records) {
    std::cout << tuner::record_markdown(r, a.svg_dir) << "\n";
    // With the worklog: what limits each winner, from its profile or its recorded launch shape.
    if (log) std::cout << tuner::bottleneck_markdown(r, *log) << "\n";
  }
  if (!log) return 0;
  std::int64_t session = a.session;
  if (session == 0) {
    // A resumed run that took every measurement from the cache records no attempt: the report
    // shows the newest session that recorded some.
    auto latest = latest_session_with_attempts(*log, a.kernel);
    if (!latest) {
      throw kiln::Error(a.worklog + ": no tuning session" + (a.kernel.empty() ? "" : " of kernel " + a.kernel) +
                        " recorded an attempt (`kiln sessions --worklog " + a.worklog + "` lists the sessions)");
    }
    session = *latest;
  }
  std::cout << session_markdown(*log, session);
  return 0;
}

int sessions_command(const SessionsArgs& a) {
  auto log = Worklog::open(a.worklog, OpenMode::read_only);
  const auto sessions = session_summaries(log, a.kernel);
  if (!a.json) {
    std::cout << sessions_markdown(sessions);
    return 0;
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& s : sessions) {
    out.push_back({{"session", s.session.id}, {"kernel", s.session.kernel}, {"strategy", s.session.strategy},
                   {"started_at", s.session.started_at}, {"ended_at", s.session.ended_at ? nlohmann::ordered_json(*s.session.ended_at) : nlohmann::ordered_json(nullptr)},
                   {"attempts", s.attempts}, {"kept", s.kept}, {"reverted", s.reverted}, {"invalid", s.invalid},
                   {"failed", s.failed}});
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

const CLI::Validator& verdicts() {
  static const CLI::Validator validator = CLI::IsMember({"keep", "revert", "invalid", "failed"});
  return validator;
}

}  // namespace

void add_worklog_commands(CLI::App& app, int& exit_code) {
  auto l = std::make_shared<LogArgs>();
  auto* log = app.add_subcommand("log", "List attempts, filtered by kernel, verdict, tag, author, session or text");
  log->add_option("--worklog", l->worklog)->required()->check(CLI::ExistingFile);
  log->add_option("--kernel", l->kernel);
  log->add_option("--verdict", l->verdict, "keep, revert, invalid or failed")->check(verdicts());
  log->add_option("--tag", l->tag);
  log->add_option("--author", l->author, "kiln or person")->check(CLI::IsMember({"kiln", "person"}));
  log->add_option("--session", l->session)->check(positive_id());
  log->add_option("--search", l->search, "full-text query over hypothesis, change, explanation, tags, variant");
  log->add_flag("--json", l->json, "print JSON");
  log->callback([l, &exit_code] { exit_code = log_command(*l); });

  auto at = std::make_shared<AttemptArgs>();
  auto* attempt = app.add_subcommand("attempt", "Record an attempt of your own");
  attempt->add_option("--worklog", at->worklog)->required();
  attempt->add_option("--kernel", at->kernel)->required();
  attempt->add_option("--hypothesis", at->hypothesis, "why it should help")->required();
  attempt->add_option("--change", at->change, "what was changed")->required();
  attempt->add_option("--verdict", at->verdict, "keep, revert, invalid or failed")->required()->check(verdicts());
  attempt->add_option("--variant", at->variant);
  attempt->add_option("--problem", at->problem);
  attempt->add_option("--baseline", at->baseline)->check(finite_number());
  attempt->add_option("--result", at->result)->check(finite_number());
  attempt->add_option("--unit", at->unit, "s (default) or the name of a score");
  attempt->add_option("--failure-kind", at->failure_kind, "constraint, compile, crash, timeout, runtime, correctness")
      ->check(CLI::IsMember({"constraint", "compile", "crash", "timeout", "runtime", "correctness"}));
  attempt->add_option("--explanation", at->explanation);
  attempt->add_option("--unlocks", at->unlocks);
  attempt->add_option("--blocks", at->blocks);
  attempt->add_option("--tags", at->tags, "comma-separated");
  attempt->add_option("--floor", at->floor, "the physical floor, in the same unit")->check(finite_number());
  attempt->callback([at, &exit_code] { exit_code = attempt_command(*at); });

  auto li = std::make_shared<LinkArgs>();
  auto* link = app.add_subcommand("link", "Link two attempts");
  link->add_option("--worklog", li->worklog)->required()->check(CLI::ExistingFile);
  link->add_option("--from", li->from)->required()->check(positive_id());
  link->add_option("--to", li->to)->required()->check(positive_id());
  link->add_option("--kind", li->kind, "enables, blocks, similar, contradicts, supports, refines")
      ->required()
      ->check(CLI::IsMember({"enables", "blocks", "similar", "contradicts", "supports", "refines"}));
  link->add_option("--note", li->note);
  link->callback([li, &exit_code] { exit_code = link_command(*li); });

  auto re = std::make_shared<ReportArgs>();
  auto* report = app.add_subcommand("report", "Markdown: tuning records (winner, floor, ratio) and a session's journey");
  report->add_option("--worklog", re->worklog)->check(CLI::ExistingFile);
  report->add_option("--session", re->session, "session id (default: the latest)")->check(positive_id());
  report->add_option("--kernel", re->kernel, "the latest session of this kernel");
  report->add_option("--record", re->records, "tuning record(s) to tabulate")->check(CLI::ExistingFile);
  report->add_option("--svg-dir", re->svg_dir,
                     "write heat maps of the held-out points (<kernel>_floor.svg, <kernel>_regret.svg) of records "
                     "with a problem domain into this directory, and link them");
  report->callback([re, &exit_code] {
    if (re->worklog.empty() && re->records.empty()) throw CLI::RequiredError("--worklog or --record");
    exit_code = report_command(*re);
  });

  auto se = std::make_shared<SessionsArgs>();
  auto* sessions = app.add_subcommand("sessions", "List the tuning sessions of a worklog and what each recorded");
  sessions->add_option("--worklog", se->worklog)->required()->check(CLI::ExistingFile);
  sessions->add_option("--kernel", se->kernel, "only this kernel's sessions");
  sessions->add_flag("--json", se->json, "print JSON");
  sessions->callback([se, &exit_code] { exit_code = sessions_command(*se); });

  auto merge_out = std::make_shared<std::string>();
  auto merge_inputs = std::make_shared<std::vector<std::string>>();
  auto* merge = app.add_subcommand("merge", "Combine worklogs (the shards of a tuning run) into one, content-keyed; "
                                            "an existing --out is merged into");
  merge->add_option("--out", *merge_out, "the merged worklog (node-local storage; replaced when complete)")
      ->required()
      ->check(non_empty_path());
  merge->add_option("worklogs", *merge_inputs, "the worklogs to merge, read and never written")->required();
  merge->callback([merge_out, merge_inputs, &exit_code] {
    std::vector<std::filesystem::path> inputs(merge_inputs->begin(), merge_inputs->end());
    std::int64_t sessions = 0, measurements = 0, replaced = 0;
    for (const auto& in : merge_worklogs(inputs, *merge_out)) {
      const MergeCounts& n = in.added;
      if (in.is_output) {
        std::cout << "kiln: " << in.path << " holds " << n.sessions << " sessions and " << n.measurements
                  << " measurements; merging into it\n";
        continue;
      }
      std::cout << "kiln: merged " << in.path << ": " << n.sessions << " sessions, " << n.attempts << " attempts, "
                << n.links << " links, " << n.measurements << " measurements, " << n.failures << " failures, "
                << n.profiles << " profiles, " << n.passes << " sanitizer passes new";
      if (n.replaced > 0) std::cout << "; " << n.replaced << " newer than the rows held under their keys";
      std::cout << "\n";
      sessions += n.sessions;
      measurements += n.measurements;
      replaced += n.replaced;
    }
    std::cout << "kiln: " << *merge_out << ": " << sessions << " sessions and " << measurements
              << " measurements added, " << replaced << " rows replaced by newer ones\n";
    exit_code = 0;
  });
}

}  // namespace kiln::cli
