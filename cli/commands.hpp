// The `kiln` command's subcommands, grouped by what they serve.
#pragma once
#include <CLI/CLI.hpp>

namespace kiln::cli {

// generate, capture, compile, header, family-header: what the build runs.
void add_build_commands(CLI::App& app, int& exit_code);
// tune, verify, replay: measuring.
void add_tuning_commands(CLI::App& app, int& exit_code);
// log, attempt, link, report: reading and writing the worklog.
void add_worklog_commands(CLI::App& app, int& exit_code);

}  // namespace kiln::cli
