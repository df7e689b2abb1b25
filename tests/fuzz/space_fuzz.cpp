// A coverage-guided fuzz driver for the space reader and the expression parser, for GCC or Clang
// with AddressSanitizer and UndefinedBehaviorSanitizer (tests/fuzz/CMakeLists.txt builds it).
//
//   kiln_space_fuzz [--seconds N] [--runs N] [--seed N] [--input-timeout S] [--findings DIR] SEED...
//
// SEEDs are files or directories (searched recursively for *.json and *.expr files). A .json seed
// is a space file; an .expr seed is one expression. Each execution mutates an input of the corpus
// and runs it through what `kiln generate` does in memory (read the JSON, validate the space,
// enumerate small spaces, render every output) or through Expr::parse, check, evaluate and to_cpp.
// An input that reaches code no earlier input reached joins the corpus.
//
// A finding is a sanitizer report, an input that runs longer than --input-timeout, an exception
// other than the generator's own error, or an error message that is not one printable line
// naming the file. The input is saved under --findings and the driver exits 1.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/gen/emit.hpp"
#include "kiln/gen/enumerate.hpp"
#include "kiln/gen/space.hpp"
#include "kiln/model/device.hpp"
#include "kiln/model/expr.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/text.hpp"

namespace fs = std::filesystem;

// ---- Coverage: GCC's and Clang's -fsanitize-coverage=trace-pc call this at every basic block of
// the instrumented generator sources. Edges (previous block, this block) hash into a byte map.
namespace {
constexpr std::size_t kMapSize = 1 << 16;
unsigned char g_current[kMapSize];
unsigned char g_seen[kMapSize];
std::uintptr_t g_previous = 0;
}  // namespace

extern "C" void __sanitizer_cov_trace_pc() {
  const auto pc = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  g_current[(pc ^ g_previous) % kMapSize] = 1;
  g_previous = pc >> 1;
}

extern "C" void __sanitizer_set_death_callback(void (*callback)());

namespace {

// ---- What is running now, for the death callback and the timeout handler (async-signal-safe).
const std::string* g_input = nullptr;
char g_findings_path[4096] = "";

void save_running_input() {
  if (g_input == nullptr || g_findings_path[0] == '\0') return;
  const int fd = ::open(g_findings_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  std::size_t done = 0;
  while (done < g_input->size()) {
    const ssize_t n = ::write(fd, g_input->data() + done, g_input->size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  static const char note[] = "\nkiln_space_fuzz: the input is saved under the findings directory\n";
  [[maybe_unused]] const ssize_t ignored = ::write(2, note, sizeof note - 1);
}

void on_timeout(int) {
  static const char note[] = "\nkiln_space_fuzz: FINDING: an input ran longer than the input timeout\n";
  [[maybe_unused]] const ssize_t ignored = ::write(2, note, sizeof note - 1);
  save_running_input();
  ::_exit(1);
}

struct Options {
  double seconds = 60;
  std::uint64_t runs = 0;  // 0: until --seconds
  std::uint64_t seed = 0;  // 0: from the clock
  unsigned input_timeout = 10;
  fs::path findings = "fuzz-findings";
  std::vector<fs::path> seeds;
};

struct Input {
  std::string bytes;
  bool expression = false;  // an expression, not a space file
};

const char* const kLabel = "fuzz.space.json";

// Tokens of the space format and of the expression language, and values that have broken readers.
const std::vector<std::string> kDictionary = {
    "{", "}", "[", "]", "\"", ",", ":", "null", "true", "false", "0", "-1", "1e400", "-1e400", "1.5",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616", "\\u0000",
    "\\ud800", "\\\"", "\xff", "\xc3\x28", "\xe2\x80\x8b", "\x1b[31m", "\n", "\t", "\"kiln_space\": 1",
    "\"$schema\"", "\"kernel\"", "\"backend\"", "\"cpu\"", "\"cuda\"", "\"description\"", "\"harness\"", "\"include\"",
    "\"workload\"", "\"parameters\"", "\"values\"", "\"default\"", "\"derived\"", "\"constraints\"", "\"expr\"",
    "\"why\"", "\"problem\"", "\"dims\"", "\"int\"", "\"work\"", "\"bytes\"", "\"fp32_flops\"", "\"problems\"",
    "\"checks\"", "\"buckets\"", "\"name\"", "\"when\"", "\"tolerance\"", "\"fp32\"", "\"tuning\"",
    "\"max_variants\"", "\"timeout_s\"", "namespace", "__x", "_X", "and", "int", "kiln_x", "bf16", "'bf16'",
    "min(", "max(", "ceil_div(", "round_up(", "log2(", "is_pow2(", "&&", "||", "==", "!=", "<=", "?", " : ", "/ 0",
    "% 0", "-(", "!", "(", ")", "+", "*", "-9223372036854775807 - 1", "max_threads_per_block", "simd_bytes"};

class Fuzzer {
 public:
  explicit Fuzzer(const Options& options)
      : options_(options), random_(options.seed != 0 ? options.seed : std::random_device{}()) {
    const fs::path devices = fs::path(KILN_SOURCE_DIR) / "presets/devices";
    cpu_ = kiln::model::load_device(devices / "cpu.json");
    cuda_ = kiln::model::load_device(devices / "h100.json");
  }

  void add_seed(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    seeds_.push_back(Input{text.str(), path.extension() == ".expr"});
  }

  // Returns the process exit code: 0 when nothing was found.
  int run() {
    std::signal(SIGALRM, on_timeout);
    __sanitizer_set_death_callback(save_running_input);
    const auto started = std::chrono::steady_clock::now();
    for (const Input& seed : seeds_) {
      if (!execute(seed)) return 1;
      corpus_.push_back(seed);
    }
    if (corpus_.empty()) corpus_.push_back(Input{"{}", false});
    std::uint64_t last_report = 0;
    while (true) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (options_.runs != 0 ? executions_ >= options_.runs : elapsed >= options_.seconds) break;
      if (executions_ - last_report >= 50'000) {
        last_report = executions_;
        report(elapsed);
      }
      Input input = mutate(corpus_[pick(corpus_.size())]);
      if (!execute(input)) return 1;
    }
    report(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    std::cout << "kiln_space_fuzz: no finding\n";
    return 0;
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }

  void report(double elapsed) const {
    const auto edges = std::count(std::begin(g_seen), std::end(g_seen), 1);
    std::cout << "kiln_space_fuzz: " << executions_ << " executions in " << static_cast<long>(elapsed) << " s, corpus "
              << corpus_.size() << ", " << edges << " edges, seeds " << seeds_.size() << std::endl;
  }

  // Runs one input; false on a finding (already reported and saved).
  bool execute(const Input& input) {
    ++executions_;
    std::fill(std::begin(g_current), std::end(g_current), 0);
    g_previous = 0;
    g_input = &input.bytes;
    const fs::path saved = options_.findings / ("finding-" + std::to_string(executions_) +
                                                (input.expression ? ".expr" : ".space.json"));
    std::snprintf(g_findings_path, sizeof g_findings_path, "%s", saved.c_str());
    ::alarm(options_.input_timeout);
    std::string problem = input.expression ? run_expression(input.bytes) : run_space(input.bytes);
    ::alarm(0);
    g_input = nullptr;
    if (!problem.empty()) {
      std::cerr << "kiln_space_fuzz: FINDING: " << problem << "\n";
      std::ofstream(saved, std::ios::binary) << input.bytes;
      std::cerr << "kiln_space_fuzz: the input is saved as " << saved << "\n";
      return false;
    }
    bool new_coverage = false;
    for (std::size_t i = 0; i < kMapSize; ++i) {
      if (g_current[i] != 0 && g_seen[i] == 0) {
        g_seen[i] = 1;
        new_coverage = true;
      }
    }
    if (new_coverage && executions_ > seeds_.size() && corpus_.size() < 20'000) corpus_.push_back(input);
    return true;
  }

  // What `kiln generate` does before writing. Returns a description of a finding, or "".
  std::string run_space(const std::string& bytes) {
    const bool cuda = bytes.find("\"cuda\"") != std::string::npos;
    try {
      const kiln::model::JsonFile json = kiln::model::parse_json_text(kLabel, bytes);
      const kiln::gen::Space space = kiln::gen::load_space(json, kLabel, cuda ? cuda_ : cpu_);
      // Enumerating a large space is bounded (kMaxEvaluatedNodes) but takes seconds under the
      // sanitizers; small ones cover the same code.
      std::uint64_t combinations = 1;
      for (const auto& p : space.parameters) combinations *= p.values.size();
      if (combinations > 10'000) return "";
      const kiln::model::Device& target = cuda ? cuda_ : cpu_;
      const kiln::gen::Enumeration enumeration = kiln::gen::enumerate_variants(space, target);
      kiln::gen::render_outputs(space, target, enumeration);
    } catch (const kiln::model::InputError& e) {
      return message_problem(e.what());
    } catch (const std::exception& e) {
      return std::string("an exception other than InputError: ") + e.what();
    }
    return "";
  }

  std::string run_expression(const std::string& text) {
    kiln::model::NameTable names;
    names.add_integer("A");
    names.add_integer("B");
    names.add_symbol("dtype", {"fp32", "bf16"});
    kiln::model::Environment env;
    env.set("A", std::int64_t{7});
    env.set("B", std::int64_t{-3});
    env.set("dtype", std::string("bf16"));
    try {
      const kiln::model::Expr expr = kiln::model::Expr::parse(text);
      expr.names();
      expr.node_count();
      expr.check(names);
      expr.to_cpp([](std::string_view name) { return "p." + std::string(name); });
      expr.evaluate(env);
    } catch (const kiln::model::ExprError& e) {
      if (e.column() < 1) return "an expression error at column " + std::to_string(e.column());
      return "";
    } catch (const std::exception& e) {
      return std::string("an exception other than ExprError: ") + e.what();
    }
    return "";
  }

  // The message of a refused space must be one line of valid UTF-8 that starts with the file.
  static std::string message_problem(const std::string& message) {
    if (message.rfind(std::string(kLabel) + ":", 0) != 0) return "a message that does not start with the file: " + message;
    if (message.find('\n') != std::string::npos) return "a message of more than one line: " + message;
    for (std::size_t i = 0; i < message.size();) {
      const std::size_t n = kiln::utf8_sequence_length(std::string_view(message).substr(i));
      if (n == 0 || static_cast<unsigned char>(message[i]) < 0x20 || message[i] == 0x7f) {
        return "a message with a control character or a byte that is not UTF-8 at byte " + std::to_string(i);
      }
      i += n;
    }
    return "";
  }

  // ---- Mutations: a few stacked edits of bytes, tokens, ranges and repeats.
  Input mutate(const Input& from) {
    Input out = from;
    const std::size_t edits = 1 + pick(6);
    for (std::size_t e = 0; e < edits; ++e) edit(out.bytes);
    if (out.bytes.size() > kiln::model::kMaxJsonBytes + 1024) out.bytes.resize(kiln::model::kMaxJsonBytes + 1024);
    return out;
  }

  void edit(std::string& s) {
    const std::size_t at = s.empty() ? 0 : pick(s.size() + 1);
    switch (pick(9)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:  // a random byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), static_cast<char>(pick(256)));
        break;
      case 2:  // a token
        s.insert(at, kDictionary[pick(kDictionary.size())]);
        break;
      case 3: {  // delete a range
        if (s.empty()) break;
        const std::size_t start = pick(s.size());
        s.erase(start, 1 + pick(std::min<std::size_t>(s.size() - start, 64)));
        break;
      }
      case 4: {  // copy a range elsewhere
        if (s.empty()) break;
        const std::size_t start = pick(s.size());
        const std::string piece = s.substr(start, 1 + pick(std::min<std::size_t>(s.size() - start, 256)));
        s.insert(pick(s.size() + 1), piece);
        break;
      }
      case 5: {  // splice in a range of another input
        const std::string& other = corpus_.empty() ? s : corpus_[pick(corpus_.size())].bytes;
        if (other.empty()) break;
        const std::size_t start = pick(other.size());
        s.insert(at, other.substr(start, 1 + pick(std::min<std::size_t>(other.size() - start, 512))));
        break;
      }
      case 6: {  // repeat a short piece many times: long chains, deep nesting, long names
        static const std::vector<std::string> pieces = {"+A", "*2", "(", "[", "{\"a\":", "-", "!", "A", "9", "min(1,",
                                                        "A?1:", "[1,", "\"x\",", "{}", ")"};
        const std::string& piece = pieces[pick(pieces.size())];
        const std::size_t times = std::size_t{1} << pick(18);
        std::string repeated;
        repeated.reserve(piece.size() * times);
        for (std::size_t i = 0; i < times; ++i) repeated += piece;
        s.insert(at, repeated);
        break;
      }
      case 7: {  // replace the content of a string with another string's content or a token
        const std::size_t open = s.find('"', at);
        if (open == std::string::npos) break;
        const std::size_t close = s.find('"', open + 1);
        if (close == std::string::npos) break;
        s.replace(open + 1, close - open - 1, kDictionary[pick(kDictionary.size())]);
        break;
      }
      default: {  // a number at a digit
        const std::size_t digit = s.find_first_of("0123456789", at);
        if (digit == std::string::npos) break;
        static const std::vector<std::string> numbers = {"0", "-1", "-0", "1e400", "4294967296", "9223372036854775807",
                                                         "-9223372036854775808", "18446744073709551615", "1.0",
                                                         "2147483648", "65536"};
        s.replace(digit, 1, numbers[pick(numbers.size())]);
        break;
      }
    }
  }

  Options options_;
  std::mt19937_64 random_;
  kiln::model::Device cpu_;
  kiln::model::Device cuda_;
  std::vector<Input> seeds_;
  std::vector<Input> corpus_;
  std::uint64_t executions_ = 0;
};

bool is_seed_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return path.extension() == ".expr" || (path.extension() == ".json" && name.find("schema") == std::string::npos);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "kiln_space_fuzz: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seconds") {
      options.seconds = std::stod(value());
    } else if (arg == "--runs") {
      options.runs = std::stoull(value());
    } else if (arg == "--seed") {
      options.seed = std::stoull(value());
    } else if (arg == "--input-timeout") {
      options.input_timeout = static_cast<unsigned>(std::stoul(value()));
    } else if (arg == "--findings") {
      options.findings = value();
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "kiln_space_fuzz: unknown option " << arg << "\n";
      return 2;
    } else {
      options.seeds.emplace_back(arg);
    }
  }
  fs::create_directories(options.findings);
  Fuzzer fuzzer(options);
  std::size_t seeds = 0;
  for (const fs::path& seed : options.seeds) {
    std::vector<fs::path> files;
    if (fs::is_directory(seed)) {
      for (const auto& entry : fs::recursive_directory_iterator(seed)) {
        if (entry.is_regular_file() && is_seed_file(entry.path())) files.push_back(entry.path());
      }
    } else {
      files.push_back(seed);
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) fuzzer.add_seed(file);
    seeds += files.size();
  }
  std::cout << "kiln_space_fuzz: " << seeds << " seeds" << std::endl;
  return fuzzer.run();
}
