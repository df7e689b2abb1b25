// The sanitizer gate: before a CUDA winner is accepted, its checks run again under
// compute-sanitizer (memcheck, then racecheck), which sees what a comparison of outputs cannot:
// a write past the output's allocation, an uninitialised read, a race on shared memory.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "evaluate.hpp"
#include "record.hpp"

namespace kiln::tuner {

// The gate's default limit on one run's silence (EvaluationContext::sanitize_timeout_s).
constexpr double kDefaultSanitizeSilenceSeconds = 600;

struct SanitizerResult {
  bool ran = false;     // false: the sanitizer could not run the variant (detail says why)
  bool clean = true;    // no error reported
  std::string detail;   // the tool and its first errors, or why it did not run
  std::string tools;    // the tools that finished, comma-separated ("memcheck,racecheck")
  bool timed_out = false;  // the run that did not finish was stopped at its time limit
};

// The error lines of a compute-sanitizer log ("Invalid __global__ write of size 4 bytes", the
// place, "ERROR SUMMARY: 1 error"), at most `max_lines`.
std::string sanitizer_errors(const std::string& log, std::size_t max_lines = 8);

// The problems the gate runs (the space's checks, or its problems when it has none), as a
// fingerprint: a sanitizer pass holds for these, whatever else the space times.
std::string sanitized_problems_of(const Manifest& m, int checks_per_problem, KeyVersion version);

// The longest one gate run may go without reporting progress: --sanitize-timeout when given, else
// 100 times the silence limit, at most kDefaultSanitizeSilenceSeconds.
double sanitizer_silence_s(const EvaluationContext& ctx);

// Runs the variant's checks (the space's checks, or its problems when it has none) under each
// tool in turn; stops at the first that reports errors.
SanitizerResult sanitize_variant(const EvaluationContext& ctx, std::size_t index, const std::filesystem::path& sanitizer);

// How many gate runs go beside each other on one GPU: `jobs` when given (> 0), else one. Runs under
// the sanitizer share a GPU badly: on two H200 (2026-11-30) four a GPU left six of softmax_cuda's
// variants unfinished after 4.5 minutes, among them THREADS256 ROW_THREADS256 CACHE16, which passes
// racecheck alone in 3.9 s. On one H200 the same eight pending variants took 252 s one at a time
// (its three cluster variants 100, 100 and 29 s, the others 3-8 s) and 239 s two at a time.
std::size_t sanitizer_lanes(int jobs);

// The variants a record's header dispatches to, which the gate must pass: each bucket's winner
// (and its first runners_up contenders) and each leaf of a learned tree, in that order, once each.
std::vector<std::string> dispatched_variants(const Record& record, int runners_up);

}  // namespace kiln::tuner
