// Failures are evidence, not verdicts for ever. A variant failure records what it depended on;
// a later run retries a transient kind (timeout, a runtime failure under contention, a crash on
// other problems) when those conditions changed, or when asked, and keeps a deterministic one
// (compile: the same source, compiler and flags fail the same way).
#pragma once
#include <optional>
#include <string>

#include "kiln/worklog/records.hpp"

namespace kiln::tuner {

// The conditions of the run about to start.
struct RunConditions {
  double limit_s = 0;                  // the silence limit the variant would get
  std::optional<double> others_cores;  // cores other processes keep busy now
  std::string problem_set;             // fingerprint of the problems and checks
  std::string kiln_version;
  bool retry_failed = false;           // kiln tune --retry-failed
  double busy_cores = 0.25;            // others above this: the machine is busy
};

struct RetryDecision {
  bool retry = false;
  std::string why;  // why it is retried, or why it is kept
};

RetryDecision retry_decision(const worklog::VariantFailure& failure, const RunConditions& now);

// When a stored failure would be retried, in words (for `kiln log`).
std::string retry_policy(const worklog::VariantFailure& failure, double busy_cores = 0.25);

}  // namespace kiln::tuner
