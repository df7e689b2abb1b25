#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/text.hpp"
#include "compile.hpp"
#include "evaluate.hpp"
#include "usage.hpp"
#include "header.hpp"
#include "kiln/gen/generate.hpp"
#include "manifest.hpp"
#include "process.hpp"
#include "record.hpp"
#include "source_closure.hpp"

namespace kiln::cli {
namespace {

struct GenerateArgs {
  std::string space, target, out;
};

struct CaptureArgs {
  std::string out;
  std::vector<std::string> command;
};

struct CompileArgs {
  std::string manifest;
  tuner::CompileOptions options;
  std::vector<std::string> include_dirs;  // where the sources' includes are found (--depfile)
  std::string depfile, depfile_target;
};

struct HeaderArgs {
  std::string manifest, record, out;
};

struct FamilyHeaderArgs {
  std::string family, out;
};

// `kiln compile`: the variants of one kernel, with the template's captured command lines.
int compile(const CompileArgs& a) {
  tuner::Manifest m = tuner::load_manifest(a.manifest);
  // A failed variant is compiled again when any file its sources include changes, named or not.
  tuner::CompileOptions options = a.options;
  const std::vector<std::filesystem::path> dirs(a.include_dirs.begin(), a.include_dirs.end());
  options.sources = tuner::source_closure(a.options.sources, dirs);
  if (!a.depfile.empty()) tuner::write_depfile(a.depfile, a.depfile_target, options.sources);
  tuner::CompileSummary s = tuner::compile_variants(m, options);
  for (const auto& v : m.variants) {
    std::filesystem::path rec = a.options.build_records_dir / (v.name + ".json");
    if (!std::filesystem::exists(rec)) continue;
    nlohmann::json r = nlohmann::json::parse(tuner::read_text(rec));
    if (r.value("status", std::string{}) == "ok") continue;
    const std::string head = tuner::failure_excerpt(r.value("log", std::string{}), 6);
    std::cerr << "kiln: variant " << v.name << " does not build; the tuner records it as a compile failure ("
              << rec.string() << " has the whole output):\n" << head;
  }
  std::cout << "kiln: " << m.kernel << ": " << s.compiled << " variants compiled, " << s.up_to_date
            << " up to date, " << s.failed << " do not build (" << s.jobs << " jobs, "
            << static_cast<int>(s.seconds + 0.5) << " s)\n";
  if (s.interrupted > 0) {
    std::cerr << "kiln: " << s.interrupted << " compilers were killed by a signal before they finished; those variants "
              << "are not built and nothing is recorded of them\n";
    return 1;
  }
  return 0;
}

int header(const HeaderArgs& a) {
  tuner::Manifest m = tuner::load_manifest(a.manifest);
  std::optional<tuner::Record> record;
  if (!a.record.empty()) record = tuner::load_record(a.record);
  std::vector<std::string> warnings;
  std::string text = tuner::dispatch_header(m, record, warnings);
  // A warning quotes the record's names: one line each, whatever the record holds.
  for (const auto& w : warnings) std::cerr << "kiln: warning: " << escape_controls(a.record + ": " + w) << "\n";
  tuner::write_if_changed(a.out, text);
  return 0;
}

int family_header(const FamilyHeaderArgs& a) {
  tuner::write_if_changed(a.out, tuner::family_header(model::load_family(a.family)));
  return 0;
}

}  // namespace

void add_build_commands(CLI::App& app, int& exit_code) {
  auto gen = std::make_shared<GenerateArgs>();
  auto* g = app.add_subcommand("generate", "Validate a space file and write one source per feasible variant");
  g->add_option("--space", gen->space, "space file (JSON)")->required()->check(CLI::ExistingFile);
  g->add_option("--target", gen->target, "device file (presets/devices/*.json)")->required()->check(CLI::ExistingFile);
  g->add_option("--out", gen->out, "output directory")->required()->check(non_empty_path());
  g->callback([gen, &exit_code] { exit_code = gen::generate_command(gen->space, gen->target, gen->out, std::cout, std::cerr); });

  auto capture_args = std::make_shared<CaptureArgs>();
  auto* c = app.add_subcommand("capture", "Record a compile or link command line, then run it (a launcher)");
  c->add_option("--out", capture_args->out, "where the command line is recorded (JSON)")->required();
  c->add_option("command", capture_args->command, "the command, after --")->required();
  c->callback([capture_args, &exit_code] { exit_code = tuner::capture_and_run(capture_args->out, capture_args->command); });

  auto compile_args = std::make_shared<CompileArgs>();
  auto* k = app.add_subcommand("compile", "Build a kernel's variants with its template's captured command lines");
  auto& ko = compile_args->options;
  k->add_option("--manifest", compile_args->manifest, "manifest.json from kiln generate")->required()->check(CLI::ExistingFile);
  k->add_option("--compile-command", ko.compile_command, "the template's captured compile")->required()->check(CLI::ExistingFile);
  k->add_option("--link-command", ko.link_command, "the template's captured link")->required()->check(CLI::ExistingFile);
  k->add_option("--template-source", ko.template_source, "the template's source file")->required();
  k->add_option("--variants-dir", ko.variants_dir, "where the variant executables go")->required();
  k->add_option("--objects-dir", ko.objects_dir, "where objects and dependency files go")->required();
  k->add_option("--build-records", ko.build_records_dir, "where each variant's build record goes")->required();
  k->add_option("--source", ko.sources, "a kernel source (a failed variant is rebuilt when one changes)");
  k->add_option("--include-dir", compile_args->include_dirs,
                "where the sources' includes are found (repeatable): what they include from there, or from beside "
                "themselves, counts as a source too")
      ->check(CLI::ExistingDirectory);
  auto* k_depfile = k->add_option("--depfile", compile_args->depfile,
                                  "write the sources and what they include as a Make dependency file of "
                                  "--depfile-target (a build tool's DEPFILE)");
  auto* k_target = k->add_option("--depfile-target", compile_args->depfile_target, "the target the dependency file names");
  k_depfile->needs(k_target);
  k_target->needs(k_depfile);
  k->add_option("--variant", ko.only, "build only this variant (repeatable)");
  k->add_option("--jobs", ko.jobs, "parallel compiles (0: one per processor)")->check(CLI::Range(0, 1024));
  k->callback([compile_args, &exit_code] { exit_code = compile(*compile_args); });

  auto header_args = std::make_shared<HeaderArgs>();
  auto* h = app.add_subcommand("header", "Write a kernel's dispatch header from its manifest and tuning record");
  h->add_option("--manifest", header_args->manifest, "manifest.json from kiln generate")->required()->check(CLI::ExistingFile);
  h->add_option("--record", header_args->record, "tuning record; without one every bucket uses the default")
      ->check(CLI::ExistingFile);
  h->add_option("--out", header_args->out, "header to write")->required()->check(non_empty_path());
  h->callback([header_args, &exit_code] { exit_code = header(*header_args); });

  auto family_args = std::make_shared<FamilyHeaderArgs>();
  auto* f = app.add_subcommand("family-header", "Write a kernel family's header, which switches on the family's key");
  f->add_option("--family", family_args->family, "family file (written by kiln_add_family)")->required()->check(CLI::ExistingFile);
  f->add_option("--out", family_args->out, "header to write")->required()->check(non_empty_path());
  f->callback([family_args, &exit_code] { exit_code = family_header(*family_args); });
}

}  // namespace kiln::cli
