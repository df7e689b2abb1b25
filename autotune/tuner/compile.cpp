#include "compile.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "evaluate.hpp"
#include "kiln/error.hpp"
#include "kiln/hash.hpp"
#include "kiln/model/backend.hpp"
#include "manifest.hpp"
#include "process.hpp"
#include "record.hpp"

namespace kiln::tuner {
namespace fs = std::filesystem;

namespace {

fs::path absolute_in(const fs::path& cwd, const fs::path& p) {
  return (p.is_absolute() ? p : cwd / p).lexically_normal();
}

// The argument after `-o` (or glued to it, `-ofile`), where a compiler or linker writes.
std::string output_of(const CapturedCommand& c, const std::string& what) {
  for (std::size_t i = 0; i + 1 < c.argv.size(); ++i) {
    if (c.argv[i] == "-o") return c.argv[i + 1];
  }
  throw Error("the captured " + what + " command has no `-o <output>`: " +
              (c.argv.empty() ? std::string("(empty)") : c.argv.front()));
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// A Makefile-style dependency file (`target: dep dep \`), as compilers write with -MD.
std::vector<fs::path> read_depfile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<fs::path> deps;
  std::string word;
  bool past_colon = false;
  auto flush = [&] {
    if (!word.empty() && past_colon) deps.emplace_back(word);
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char n = text[i + 1];
      if (n == '\n' || n == '\r') {
        flush();
        ++i;
        continue;
      }
      if (n == ' ' || n == '#' || n == '\\') {
        word += n;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word += '$';
      ++i;
      continue;
    }
    if (!past_colon && c == ':' && (i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n' ||
                                    text[i + 1] == '\r' || text[i + 1] == '\t')) {
      word.clear();
      past_colon = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      continue;
    }
    word += c;
  }
  flush();
  return deps;
}

bool newer_than(const fs::path& dep, fs::file_time_type stamp) {
  std::error_code ec;
  auto t = fs::last_write_time(dep, ec);
  return ec || t > stamp;  // a vanished dependency counts as changed
}

std::string command_hash(const VariantCommands& c) {
  Fnv1a64 h;
  h.field(c.compile.cwd.string());
  for (const auto& a : c.compile.argv) h.field(a);
  h.field(c.link.cwd.string());
  for (const auto& a : c.link.argv) h.field(a);
  return h.hex();
}

struct Job {
  std::string variant;
  VariantCommands commands;
  fs::path object, executable, record, log;
  std::string hash;
  int stage = 0;  // 0: compiling, 1: linking
};

// Starts `c` with its output appended to `log`; returns the child's pid.
pid_t spawn(const CapturedCommand& c, const fs::path& log) {
  std::vector<char*> args;
  for (const auto& a : c.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_in >= 0) dup2(null_in, 0);
    if (chdir(c.cwd.c_str()) != 0) _exit(126);
    execvp(args[0], args.data());
    const char msg[] = "kiln: cannot start the compiler\n";
    [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  return pid;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return std::string("killed by SIG") + (name != nullptr ? name : std::to_string(WTERMSIG(status)).c_str());
  }
  return "ended with status " + std::to_string(status);
}

void write_build_record(const Job& job, bool ok, const std::string& log) {
  nlohmann::ordered_json r = {
      {"variant", job.variant}, {"status", ok ? "ok" : "failed"}, {"command", job.hash}, {"log", log}};
  write_if_changed(job.record, r.dump(2) + "\n");
}

// Is the variant's last build still valid: same commands, no dependency newer than its record?
bool up_to_date(const Job& job, const std::vector<fs::path>& sources, const fs::path& variant_source) {
  std::error_code ec;
  if (!fs::exists(job.record, ec)) return false;
  nlohmann::json r;
  try {
    r = nlohmann::json::parse(read_text(job.record));
  } catch (const std::exception&) {
    return false;
  }
  if (r.value("command", std::string{}) != job.hash) return false;
  const auto stamp = fs::last_write_time(job.record, ec);
  if (ec) return false;
  if (newer_than(variant_source, stamp)) return false;
  if (r.value("status", std::string{}) != "ok") {
    // No dependency file for a failed compile: any kernel source may have fixed it.
    for (const auto& s : sources) {
      if (newer_than(s, stamp)) return false;
    }
    return true;
  }
  if (!fs::exists(job.executable, ec)) return false;
  fs::path depfile = job.object;
  depfile += ".d";
  if (!fs::exists(depfile, ec)) {
    for (const auto& s : sources) {
      if (newer_than(s, stamp)) return false;
    }
    return true;
  }
  for (const auto& dep : read_depfile(depfile)) {
    if (newer_than(absolute_in(job.commands.compile.cwd, dep), stamp)) return false;
  }
  return !changed_link_input(job.commands.link, stamp);
}

// Memory the system can still give, from /proc/meminfo (0 when unknown).
double available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return 0;
}

// Parallel compiles: one per processor, fewer when memory would not hold them all, each given the
// memory the backends' table says one of its compiles takes.
std::size_t default_jobs(const model::Backend& backend) {
  std::size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  const double per_job = backend.compile_gib * 1024 * 1024 * 1024;
  if (double avail = available_bytes(); avail > 0) {
    jobs = std::min(jobs, std::max<std::size_t>(1, static_cast<std::size_t>(avail / per_job)));
  }
  return jobs;
}

}  // namespace

CapturedCommand load_captured_command(const fs::path& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text(file));
    CapturedCommand c;
    c.cwd = j.at("cwd").get<std::string>();
    c.argv = j.at("argv").get<std::vector<std::string>>();
    if (c.argv.empty()) throw Error("empty argv");
    return c;
  } catch (const std::exception& e) {
    throw Error(file.string() + ": not a captured command (" + e.what() + "); rebuild the kernel's template target");
  }
}

void save_captured_command(const fs::path& file, const CapturedCommand& command) {
  nlohmann::ordered_json j = {{"cwd", command.cwd.string()}, {"argv", command.argv}};
  write_if_changed(file, j.dump(2) + "\n");
}

std::vector<std::string> split_response_file(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else word += c;
      continue;
    }
    if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < text.size() && std::strchr("\"\\$`\n", text[i + 1]) != nullptr) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::vector<std::string> expand_response_files(const std::vector<std::string>& argv, const fs::path& cwd) {
  std::vector<std::string> out;
  for (const auto& a : argv) {
    if (a.size() > 1 && a[0] == '@') {
      std::ifstream in(absolute_in(cwd, a.substr(1)), std::ios::binary);
      if (in) {
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (auto& w : split_response_file(text)) out.push_back(std::move(w));
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

int capture_and_run(const fs::path& out, const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("kiln capture: no command after --");
  CapturedCommand c;
  c.cwd = fs::current_path();
  c.argv = expand_response_files(argv, c.cwd);
  save_captured_command(out, c);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  throw Error("kiln capture: cannot run " + argv[0] + ": " + std::strerror(errno));
}

VariantCommands variant_commands(const CapturedCommand& compile, const CapturedCommand& link,
                                 const fs::path& template_source, const fs::path& source, const fs::path& object,
                                 const fs::path& executable) {
  const std::string template_object = output_of(compile, "compile");
  const std::string template_exe = output_of(link, "link");
  const fs::path wanted_source = template_source.lexically_normal();
  VariantCommands v{compile, link};
  bool source_found = false;
  for (auto& a : v.compile.argv) {
    if (!a.empty() && a[0] != '-' && absolute_in(compile.cwd, a) == wanted_source) {
      a = source.string();
      source_found = true;
      continue;
    }
    // The object's name also appears inside depfile options (-MT, -MF <object>.d).
    replace_all(a, template_object, object.string());
  }
  if (!source_found) {
    throw Error("the captured compile command does not compile " + template_source.string() +
                "; rebuild the kernel's template target");
  }
  const fs::path template_object_abs = absolute_in(compile.cwd, template_object);
  bool object_found = false;
  for (std::size_t i = 0; i < v.link.argv.size(); ++i) {
    auto& a = v.link.argv[i];
    if (i > 0 && v.link.argv[i - 1] == "-o" && a == template_exe) {
      a = executable.string();
    } else if (!a.empty() && a[0] != '-' && absolute_in(link.cwd, a) == template_object_abs) {
      a = object.string();
      object_found = true;
    }
  }
  if (!object_found) throw Error("the captured link command does not link the template's object " + template_object);
  return v;
}

CompileSummary compile_variants(const Manifest& manifest, const CompileOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const CapturedCommand compile = load_captured_command(o.compile_command);
  const CapturedCommand link = load_captured_command(o.link_command);
  fs::create_directories(o.variants_dir);
  fs::create_directories(o.objects_dir);
  fs::create_directories(o.build_records_dir);

  std::vector<Job> pending;
  CompileSummary summary;
  for (const auto& v : manifest.variants) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), v.name) == o.only.end()) continue;
    Job job;
    job.variant = v.name;
    job.object = fs::absolute(o.objects_dir / (v.name + ".o"));
    job.executable = fs::absolute(o.variants_dir / v.name);
    job.record = o.build_records_dir / (v.name + ".json");
    job.log = fs::absolute(o.objects_dir / (v.name + ".log"));
    job.commands = variant_commands(compile, link, o.template_source, fs::absolute(v.source), job.object,
                                    job.executable);
    job.hash = command_hash(job.commands);
    if (up_to_date(job, o.sources, v.source)) {
      ++summary.up_to_date;
      nlohmann::json r = nlohmann::json::parse(read_text(job.record));
      if (r.value("status", std::string{}) != "ok") ++summary.failed;
      continue;
    }
    pending.push_back(std::move(job));
  }

  summary.jobs = o.jobs > 0 ? o.jobs : default_jobs(model::backend_named(manifest.backend));
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  auto start_stage = [&](std::size_t i) {
    Job& job = pending[i];
    const CapturedCommand& c = job.stage == 0 ? job.commands.compile : job.commands.link;
    running[spawn(c, job.log)] = i;
  };
  auto finish = [&](Job& job, bool ok, const std::string& why) {
    std::string log;
    try {
      log = read_text(job.log);
    } catch (const std::exception&) {
    }
    if (!ok) log += "kiln: " + std::string(job.stage == 0 ? "compiling" : "linking") + " " + job.variant + " failed (" + why + ")\n";
    write_build_record(job, ok, log);
    std::error_code ec;
    fs::remove(job.log, ec);
    if (ok) {
      ++summary.compiled;
    } else {
      ++summary.failed;
      fs::remove(job.executable, ec);
    }
  };
  // A compiler ended by a signal (the tuner stopping, an interrupt, the OOM killer), or failing
  // while the tuner is asked to stop, said nothing about the source: no build record is written,
  // so no compile failure is recorded, and the next build compiles the variant again.
  auto abandon = [&](Job& job) {
    std::error_code ec;
    fs::remove(job.record, ec);
    fs::remove(job.log, ec);
    fs::remove(job.executable, ec);
    ++summary.interrupted;
  };
  while (next < pending.size() || !running.empty()) {
    if (interrupted()) {
      // Asked to stop (the tuner's interrupt handler): start nothing more, end what runs. The
      // compilers share the tuner's process group, so Ctrl-C reaches them anyway, and so does an
      // interrupt of `kiln compile`, which has no handler and ends at once.
      for (const auto& [pid, i] : running) kill(pid, SIGKILL);
      for (const auto& [pid, i] : running) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        abandon(pending[i]);
      }
      throw Interrupted(SIGINT);
    }
    while (next < pending.size() && running.size() < summary.jobs) {
      std::error_code ec;
      fs::remove(pending[next].log, ec);
      start_stage(next++);
    }
    // Only this loop's own compilers are waited for: the tuner measures variants in other
    // processes meanwhile (compiled on demand, on several GPUs), and waitpid(-1) reaped those too,
    // so their threads found no child to wait for and the tuning failed ("waitpid: No child
    // processes", two H200, 2026-11-28). Polled: a compile takes seconds, a sweep microseconds.
    int status = 0;
    auto it = running.begin();
    for (;; std::this_thread::sleep_for(std::chrono::milliseconds(5))) {
      for (it = running.begin(); it != running.end(); ++it) {
        const pid_t done = waitpid(it->first, &status, WNOHANG);
        if (done == it->first) break;
        if (done < 0 && errno != EINTR) throw Error(std::string("waitpid: ") + std::strerror(errno));
      }
      if (it != running.end() || interrupted()) break;
    }
    if (it == running.end()) continue;  // asked to stop: the loop's head kills and reaps what runs
    std::size_t i = it->second;
    running.erase(it);
    Job& job = pending[i];
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    // A compiler that fails as the tuner is asked to stop was most likely stopped too (a driver
    // such as nvcc may exit with an error code when its own children are interrupted).
    if (WIFSIGNALED(status) || (!ok && interrupted())) {
      abandon(job);
      continue;
    }
    if (ok && job.stage == 0) {
      job.stage = 1;
      start_stage(i);
      continue;
    }
    finish(job, ok, ok ? "" : exit_text(status));
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string failure_excerpt(const std::string& log, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto says_why = [](std::string line) {
    std::transform(line.begin(), line.end(), line.begin(), [](unsigned char c) { return std::tolower(c); });
    return line.find("error") != std::string::npos || line.find("fatal") != std::string::npos ||
           line.find("undefined reference") != std::string::npos || line.rfind("kiln: ", 0) == 0;
  };
  std::vector<std::string> picked;
  for (const auto& line : lines) {
    if (picked.size() < max_lines && says_why(line)) picked.push_back(line);
  }
  if (picked.empty()) {
    const std::size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
    picked.assign(lines.begin() + static_cast<std::ptrdiff_t>(from), lines.end());
  }
  std::string out;
  for (const auto& line : picked) out += line + "\n";
  return out;
}

OnDemandCompiler::OnDemandCompiler(const Manifest& manifest, CompileOptions options)
    : manifest_(&manifest), options_(std::move(options)), done_(manifest.variants.size(), false) {
  jobs_ = options_.jobs > 0 ? options_.jobs : default_jobs(model::backend_named(manifest.backend));
  options_.jobs = jobs_;
}

void OnDemandCompiler::compile(const std::vector<std::size_t>& indices) {
  CompileOptions batch = options_;
  batch.only.clear();
  for (std::size_t i : indices) {
    if (done_.at(i)) continue;
    done_[i] = true;
    batch.only.push_back(manifest_->variants[i].name);
  }
  if (batch.only.empty()) return;
  std::sort(batch.only.begin(), batch.only.end());
  batch.only.erase(std::unique(batch.only.begin(), batch.only.end()), batch.only.end());
  const CompileSummary s = compile_variants(*manifest_, batch);
  total_.compiled += s.compiled;
  total_.up_to_date += s.up_to_date;
  total_.failed += s.failed;
  total_.interrupted += s.interrupted;
  total_.seconds += s.seconds;
  total_.jobs = jobs_;
}

void OnDemandCompiler::set_companions(std::function<std::vector<std::size_t>()> companions, std::ostream* report) {
  companions_ = std::move(companions);
  report_ = report;
}

void OnDemandCompiler::compile_for_run(std::size_t index) {
  if (done_.at(index)) return;
  std::vector<std::size_t> batch{index};
  if (companions_) {
    for (std::size_t v : companions_()) {
      if (!done_.at(v) && v != index) batch.push_back(v);
    }
  }
  const CompileSummary before = total_;
  compile(batch);
  if (report_ != nullptr && batch.size() > 1) {
    *report_ << "kiln: " << manifest_->kernel << ": compiled " << batch.size() << " variants in "
             << std::lround(total_.seconds - before.seconds) << " s (" << jobs_ << " at once, "
             << total_.up_to_date - before.up_to_date << " up to date, " << total_.failed - before.failed
             << " failed";
    if (total_.interrupted > before.interrupted) {
      *report_ << ", " << total_.interrupted - before.interrupted << " compilers killed by a signal";
    }
    *report_ << ")\n";
  }
}

std::optional<fs::path> changed_link_input(const CapturedCommand& link, fs::file_time_type built) {
  // argv[0] is the driver; options and their values are skipped, files named outright are read.
  bool value_follows = false;
  for (std::size_t i = 1; i < link.argv.size(); ++i) {
    const std::string& a = link.argv[i];
    if (value_follows) {
      value_follows = false;
      continue;
    }
    if (a == "-o" || a == "-MF" || a == "-Xlinker" || a == "-T") {
      value_follows = true;
      continue;
    }
    if (a.empty() || a[0] == '-') continue;
    const fs::path file = absolute_in(link.cwd, a);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    if (newer_than(file, built)) return file;
  }
  return std::nullopt;
}

}  // namespace kiln::tuner
