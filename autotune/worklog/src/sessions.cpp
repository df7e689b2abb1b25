#include "kiln/worklog/sessions.hpp"

#include <sstream>

#include "markdown_format.hpp"

namespace kiln::worklog {

std::vector<SessionSummary> session_summaries(const Worklog& worklog, std::string_view kernel) {
  std::vector<SessionSummary> out;
  for (const Session& s : worklog.sessions()) {
    if (!kernel.empty() && s.kernel != kernel) continue;
    AttemptFilter filter;
    filter.session_id = s.id;
    SessionSummary summary{s};
    for (const Attempt& a : worklog.attempts(filter)) {
      ++summary.attempts;
      switch (a.verdict) {
        case Verdict::keep: ++summary.kept; break;
        case Verdict::revert: ++summary.reverted; break;
        case Verdict::invalid: ++summary.invalid; break;
        case Verdict::failed: ++summary.failed; break;
      }
    }
    out.push_back(std::move(summary));
  }
  return out;
}

std::optional<std::int64_t> latest_session_with_attempts(const Worklog& worklog, std::string_view kernel) {
  std::optional<std::int64_t> latest;
  for (const SessionSummary& s : session_summaries(worklog, kernel)) {
    if (s.attempts > 0) latest = s.session.id;
  }
  return latest;
}

namespace {

// The session's wall time from its stages, one decimal; "" when it recorded none.
std::string seconds(const Session& s) { return s.stages.empty() ? "" : markdown::fixed(total_seconds(s.stages), 1); }

}  // namespace

std::string sessions_markdown(const std::vector<SessionSummary>& sessions) {
  std::ostringstream out;
  out << "| session | kernel | strategy | started | ended | seconds | attempts | kept | reverted | invalid | failed |\n";
  out << "| ---: | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const SessionSummary& s : sessions) {
    out << "| " << s.session.id << " | " << markdown::cell(s.session.kernel) << " | "
        << markdown::cell(s.session.strategy) << " | " << s.session.started_at << " | "
        << (s.session.ended_at ? *s.session.ended_at : "not ended") << " | " << seconds(s.session) << " | "
        << s.attempts << " | " << s.kept
        << " | " << s.reverted << " | " << s.invalid << " | " << s.failed << " |\n";
  }
  return out.str();
}

}  // namespace kiln::worklog
