#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "usage.hpp"
#include "header.hpp"
#include "kiln/gen/generate.hpp"
#include "manifest.hpp"
#include "process.hpp"
#include "record.hpp"

namespace kiln::cli {
namespace {

struct GenerateArgs {
  std::string space, target, out;
};

struct GuardArgs {
  std::string record, variant;
  std::vector<std::string> command;
};

struct HeaderArgs {
  std::string manifest, record, out;
};

// Runs a compiler command, merging its two output streams, with no time limit worth the name.
tuner::ChildResult run_compiler(const std::vector<std::string>& command, std::string& output) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1"};
  argv.insert(argv.end(), command.begin(), command.end());
  return tuner::run_child(argv, std::chrono::hours(4), [&](const std::string& line) { output += line + "\n"; });
}

// `kiln guard`: the compiler launcher of variant targets. A variant that does not compile is
// recorded (the tuner reports it as a compile failure) and the build goes on: the source is
// compiled again with KILN_VARIANT_COMPILE_FAILED, which empties it, so the target still links.
int guard(const GuardArgs& a) {
  std::string output;
  tuner::ChildResult first = run_compiler(a.command, output);
  nlohmann::ordered_json record = {{"variant", a.variant}, {"status", first.exited_cleanly() ? "ok" : "failed"},
                                   {"log", output}};
  tuner::write_if_changed(a.record, record.dump(2) + "\n");
  if (first.exited_cleanly()) return 0;

  std::string head;
  std::size_t lines = 0;
  for (std::size_t i = 0; i < output.size() && lines < 6; ++i) {
    head += output[i];
    if (output[i] == '\n') ++lines;
  }
  std::cerr << "kiln: variant " << a.variant << " does not compile (" << first.describe()
            << "); the tuner records it as a compile failure. Full output in " << a.record << ":\n"
            << head;
  std::vector<std::string> fallback = a.command;
  fallback.push_back("-DKILN_VARIANT_COMPILE_FAILED");
  std::string fallback_output;
  tuner::ChildResult second = run_compiler(fallback, fallback_output);
  if (!second.exited_cleanly()) {
    std::cerr << fallback_output << "kiln: the guarded fallback compile failed too: this is an error of the build, not of the variant\n";
    return second.exit_code > 0 ? second.exit_code : 1;
  }
  return 0;
}

int header(const HeaderArgs& a) {
  try {
    tuner::Manifest m = tuner::load_manifest(a.manifest);
    std::optional<tuner::Record> record;
    if (!a.record.empty()) record = tuner::load_record(a.record);
    std::vector<std::string> warnings;
    std::string text = tuner::dispatch_header(m, record, warnings);
    for (const auto& w : warnings) std::cerr << "kiln: warning: " << a.record << ": " << w << "\n";
    tuner::write_if_changed(a.out, text);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void add_build_commands(CLI::App& app, int& exit_code) {
  auto gen = std::make_shared<GenerateArgs>();
  auto* g = app.add_subcommand("generate", "Validate a space file and write one source per feasible variant");
  g->add_option("--space", gen->space, "space file (JSON)")->required()->check(CLI::ExistingFile);
  g->add_option("--target", gen->target, "device file (presets/devices/*.json)")->required()->check(CLI::ExistingFile);
  g->add_option("--out", gen->out, "output directory")->required()->check(non_empty_path());
  g->callback([gen, &exit_code] { exit_code = gen::generate_command(gen->space, gen->target, gen->out, std::cout, std::cerr); });

  auto guard_args = std::make_shared<GuardArgs>();
  auto* c = app.add_subcommand("guard", "Compile a variant; record a compile failure instead of failing the build");
  c->add_option("--record", guard_args->record, "build record to write (JSON)")->required();
  c->add_option("--variant", guard_args->variant, "canonical variant name")->required();
  c->add_option("command", guard_args->command, "the compiler command, after --")->required();
  c->callback([guard_args, &exit_code] { exit_code = guard(*guard_args); });

  auto header_args = std::make_shared<HeaderArgs>();
  auto* h = app.add_subcommand("header", "Write a kernel's dispatch header from its manifest and tuning record");
  h->add_option("--manifest", header_args->manifest, "manifest.json from kiln generate")->required()->check(CLI::ExistingFile);
  h->add_option("--record", header_args->record, "tuning record; without one every bucket uses the default")
      ->check(CLI::ExistingFile);
  h->add_option("--out", header_args->out, "header to write")->required()->check(non_empty_path());
  h->callback([header_args, &exit_code] { exit_code = header(*header_args); });
}

}  // namespace kiln::cli
