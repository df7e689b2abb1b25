// Compiling variants with the build's own toolchain, without a build-system target per variant.
//
// The build compiles one template executable per kernel through CMake, with `kiln capture` as its
// compiler and link launcher: that records the exact compile and link command lines CMake made
// for it (compiler, flags, include directories, definitions, every link library resolved, and the
// user's own compiler launcher such as ccache). Every variant is then compiled with those command
// lines, the template's source, object and executable swapped for the variant's. So a variant
// gets exactly the toolchain a target of the project would get, the configure step compiles
// nothing, and the variants can be compiled in parallel batches or on demand.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kiln::model {
struct Manifest;
}

namespace kiln::tuner {

using model::Manifest;

// One command line as the build ran it: its working directory and its arguments, with response
// files (`@file`) expanded, since the build tool may delete them after the command.
struct CapturedCommand {
  std::filesystem::path cwd;
  std::vector<std::string> argv;
};

CapturedCommand load_captured_command(const std::filesystem::path& file);
void save_captured_command(const std::filesystem::path& file, const CapturedCommand& command);

// The arguments of `@file` split as a POSIX shell splits words (quotes and backslashes).
std::vector<std::string> split_response_file(const std::string& text);

// argv with every `@file` argument that names a readable file replaced by its words.
std::vector<std::string> expand_response_files(const std::vector<std::string>& argv, const std::filesystem::path& cwd);

// `kiln capture`: records the command (expanded) into `out` and runs it; returns its exit status.
int capture_and_run(const std::filesystem::path& out, const std::vector<std::string>& argv);

struct CompileOptions {
  std::filesystem::path compile_command;  // captured compile of the template
  std::filesystem::path link_command;     // captured link of the template
  std::filesystem::path template_source;  // the template's source, as the build named it
  std::filesystem::path variants_dir;     // executables, named after the variants
  std::filesystem::path objects_dir;      // objects and the compiler's dependency files
  std::filesystem::path build_records_dir;  // one JSON per variant: status, log, command hash
  std::vector<std::filesystem::path> sources;  // kernel sources: a failed variant is retried when one changes
  std::vector<std::string> only;          // compile these variants only (empty: all)
  std::size_t jobs = 0;                   // parallel compiles; 0: one per processor, fewer when
                                          // the available memory would not hold them
};

struct CompileSummary {
  std::size_t compiled = 0;    // built now
  std::size_t up_to_date = 0;  // nothing changed since the last build of the variant
  std::size_t failed = 0;      // recorded as compile failures (now or before)
  std::size_t interrupted = 0; // compilers ended by a signal: nothing recorded, compiled again next time
  std::size_t jobs = 0;
  double seconds = 0;
};

// The compile and link command lines of one variant, derived from the template's.
struct VariantCommands {
  CapturedCommand compile;
  CapturedCommand link;
};
VariantCommands variant_commands(const CapturedCommand& compile, const CapturedCommand& link,
                                 const std::filesystem::path& template_source, const std::filesystem::path& source,
                                 const std::filesystem::path& object, const std::filesystem::path& executable);

// Builds the manifest's variants that are out of date. A variant that does not compile or link
// is recorded as failed in its build record (the tuner reports it as a compile failure) and the
// others go on. Throws kiln::Error when the template's commands cannot be used.
// The first file the link command reads (an object or a library named on its command line, not an
// option) that is newer than `built` or gone; nothing when every one is older. A variant whose
// harness or API library changed must be linked again, though none of its sources changed.
std::optional<std::filesystem::path> changed_link_input(const CapturedCommand& link,
                                                        std::filesystem::file_time_type built);

CompileSummary compile_variants(const Manifest& manifest, const CompileOptions& options);

// The lines of a failed build's log that say why: its error lines (a compiler's "error",
// "fatal", the linker's "undefined reference", Kiln's own closing line), up to max_lines; a log
// with none gives its last max_lines lines. A compiler's informational output (ptxas -v prints
// every kernel's registers) would otherwise fill the head of the log.
std::string failure_excerpt(const std::string& log, std::size_t max_lines);

// Variants compiled when the tuner first needs one (kiln tune --compile-on-demand): a budgeted
// search compiles what it proposes, not the whole space, and a variant whose results the worklog
// already holds is never compiled. Each call of compile() is one parallel batch through
// compile_variants, so up-to-date variants, compile failures and the build records are handled
// exactly as `kiln compile` handles them.
class OnDemandCompiler {
 public:
  OnDemandCompiler(const Manifest& manifest, CompileOptions options);
  // Compiles the variants among `indices` not yet compiled (or found up to date) by this compiler.
  void compile(const std::vector<std::size_t>& indices);
  // The variant is about to run: compiled, when it is not yet, in one batch with its companions
  // (the variants the search will also have to run: set_companions), and a batch of more than one
  // is reported on `report`.
  void compile_for_run(std::size_t index);
  void set_companions(std::function<std::vector<std::size_t>()> companions, std::ostream* report);
  bool done(std::size_t index) const { return done_.at(index); }
  std::size_t jobs() const { return jobs_; }
  // Over every batch: variants built now, found up to date, failed; seconds spent compiling.
  const CompileSummary& total() const { return total_; }

 private:
  const Manifest* manifest_;
  CompileOptions options_;
  std::vector<bool> done_;
  std::function<std::vector<std::size_t>()> companions_;
  std::ostream* report_ = nullptr;
  std::size_t jobs_ = 1;
  CompileSummary total_;
};

}  // namespace kiln::tuner
