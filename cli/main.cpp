// kiln: build-time autotuning for CUDA and CPU kernels. The build calls it (generate, capture, compile,
// tune, header, family-header); people call it too (log, attempt, link, report, verify, replay).
#include <csignal>
#include <iostream>

#include "commands.hpp"
#include "kiln/error.hpp"
#include "process.hpp"
#include "usage.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kiln: build-time autotuning for CUDA and CPU kernels", "kiln"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KILN_VERSION);
  int exit_code = 0;
  kiln::cli::add_build_commands(app, exit_code);
  kiln::cli::add_tuning_commands(app, exit_code);
  kiln::cli::add_worklog_commands(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << kiln::cli::usage_message(app, e) << "\n";
    return kiln::cli::kUsageExitCode;
  } catch (const kiln::tuner::Interrupted&) {
    std::cerr << "kiln: tuning interrupted; every finished measurement is in the worklog, and the next run resumes "
                 "from it\n";
    return 128 + SIGINT;
  } catch (const kiln::RefusedError& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return kiln::cli::kRefusedExitCode;
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
