#include "retry.hpp"

#include <cstdio>

namespace kiln::tuner {
namespace {

using worklog::FailureKind;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool busy_then(const worklog::VariantFailure& f, double busy_cores) { return f.others_cores && *f.others_cores > busy_cores; }

// A runtime failure stored before the harness reported device setup apart (exit code 5, never
// stored since): its detail is the CUDA harness's error from setting up the device, which only
// the device setup calls, so none of the variant had run.
bool device_setup_failure(const worklog::VariantFailure& f) {
  if (f.kind != FailureKind::runtime) return false;
  for (const char* setup : {" from cudaGetDeviceCount(&count) at ", " from cudaSetDevice(0) at "}) {
    if (f.detail.find(setup) != std::string::npos) return true;
  }
  return f.detail == "no CUDA device found";
}

}  // namespace

RetryDecision retry_decision(const worklog::VariantFailure& f, const RunConditions& now) {
  if (f.kind == FailureKind::compile) return {false, retry_policy(f, now.busy_cores)};
  if (!f.problem_set.empty() && !now.problem_set.empty() && f.problem_set != now.problem_set) {
    return {true, "the problems changed since it failed"};
  }
  if (!f.kiln_version.empty() && !now.kiln_version.empty() && f.kiln_version != now.kiln_version) {
    return {true, "Kiln changed since it failed (" + f.kiln_version + " -> " + now.kiln_version + ")"};
  }
  // What compute-sanitizer found in the same code on the same checks, it finds again.
  if (f.kind == FailureKind::sanitizer) return {false, retry_policy(f, now.busy_cores)};
  if (device_setup_failure(f)) {
    return {true, "it failed setting up the device, before any of the variant ran: the machine's fault, not the variant's"};
  }
  if (now.retry_failed) return {true, "asked to (--retry-failed)"};
  const bool quiet_now = now.others_cores && *now.others_cores <= now.busy_cores;
  if (f.kind == FailureKind::timeout) {
    if (!f.limit_s) return {true, "the limit it timed out under was not recorded"};
    if (now.limit_s > *f.limit_s * 1.001) {
      return {true, "the limit rose from " + number(*f.limit_s) + " s to " + number(now.limit_s) + " s"};
    }
  }
  if ((f.kind == FailureKind::timeout || f.kind == FailureKind::runtime) && busy_then(f, now.busy_cores) && quiet_now) {
    return {true, "it failed while " + number(*f.others_cores) + " other cores were busy; the machine is quiet now"};
  }
  return {false, retry_policy(f, now.busy_cores)};
}

std::string retry_policy(const worklog::VariantFailure& f, double busy_cores) {
  if (f.kind == FailureKind::compile) {
    return "kept: a compile failure is deterministic (the same source, compiler and flags fail the same way; a change to "
           "any of them is a new context)";
  }
  if (f.kind == FailureKind::sanitizer) {
    return "kept until the problems or Kiln change: compute-sanitizer's errors repeat on the same code and checks";
  }
  std::string when;
  if (f.kind == FailureKind::timeout) {
    when = f.limit_s ? "the limit exceeds " + number(*f.limit_s) + " s, " : "";
  }
  if ((f.kind == FailureKind::timeout || f.kind == FailureKind::runtime) && busy_then(f, busy_cores)) {
    when += "the machine is quiet (" + number(*f.others_cores) + " other cores were busy when it failed), ";
  }
  return "kept until " + when + "the problems or Kiln change, or --retry-failed";
}

}  // namespace kiln::tuner
