// Which tuning sessions a worklog holds and what each recorded: for listing them, and for
// choosing the session a report shows when none is named.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/worklog/worklog.hpp"

namespace kiln::worklog {

struct SessionSummary {
  Session session;
  std::size_t attempts = 0;  // attempts recorded in this session (a run that took every
                             // measurement from the cache records none)
  std::size_t kept = 0, reverted = 0, invalid = 0, failed = 0;
};

// Every session, oldest first; only the kernel's when `kernel` is not empty.
std::vector<SessionSummary> session_summaries(const Worklog& worklog, std::string_view kernel = {});

// The newest session (of the kernel, when given) that recorded an attempt: what `kiln report`
// shows by default. Nothing when no such session exists.
std::optional<std::int64_t> latest_session_with_attempts(const Worklog& worklog, std::string_view kernel = {});

// The summaries as a markdown table: id, kernel, strategy, started, ended, attempts by verdict.
std::string sessions_markdown(const std::vector<SessionSummary>& sessions);

}  // namespace kiln::worklog
