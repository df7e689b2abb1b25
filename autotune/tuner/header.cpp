#include "header.hpp"

#include "header_parts.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kiln::tuner {
namespace {

std::string problem_text(const Problem& p) { return p.key(); }

struct TunedBucket {
  const RecordedBucket* recorded;
  const Variant* winner;
};

}  // namespace

std::string config_struct_name(const Manifest& manifest, const std::string& variant) {
  std::string prefix = manifest.kernel + "__";
  return variant.rfind(prefix, 0) == 0 ? variant.substr(prefix.size()) : variant;
}

std::string dispatch_header(const Manifest& m, const std::optional<Record>& record, std::vector<std::string>& warnings) {
  if (record && record->kernel != m.kernel) {
    throw std::runtime_error("the record is for kernel " + record->kernel + ", not " + m.kernel);
  }
  if (m.buckets.empty()) return tree_dispatch_header(m, record, warnings);
  // Which buckets have a usable winner.
  std::map<std::string, TunedBucket> tuned;
  if (record) {
    std::set<std::string> declared;
    for (const auto& b : m.buckets) declared.insert(b.name);
    for (const auto& rb : record->buckets) {
      if (!declared.count(rb.name)) {
        warnings.push_back("record bucket '" + rb.name + "' is not a bucket of the space any more; ignored");
        continue;
      }
      if (!rb.winner) continue;
      auto index = m.variant_index(*rb.winner);
      if (!index) {
        warnings.push_back("record winner " + *rb.winner + " of bucket '" + rb.name +
                           "' is not a feasible variant of the space any more; the bucket falls back");
        continue;
      }
      tuned[rb.name] = {&rb, &m.variants[*index]};
    }
  }

  const Variant& default_variant = m.variants[*m.variant_index(m.default_variant)];
  std::vector<const Variant*> configs;  // distinct, winners first in bucket order, then default
  auto add_config = [&](const Variant* v) {
    for (const auto* c : configs) {
      if (c == v) return;
    }
    configs.push_back(v);
  };
  for (const auto& b : m.buckets) {
    if (auto it = tuned.find(b.name); it != tuned.end()) add_config(it->second.winner);
  }
  add_config(&default_variant);

  std::ostringstream h;
  write_preamble(h, m, record && !tuned.empty() ? &*record : nullptr);
  write_problem_struct(h, m);

  h << "// Configurations dispatch can choose, named after their canonical variant names.\n";
  for (const auto* v : configs) {
    for (const auto& b : m.buckets) {
      auto it = tuned.find(b.name);
      if (it == tuned.end() || it->second.winner != v) continue;
      const RecordedBucket& rb = *it->second.recorded;
      h << "// Winner of bucket " << b.name << ": " << microseconds(rb.time_s);
      if (rb.floor_s > 0) h << ", " << number(rb.time_s / rb.floor_s, 3) << "x its floor of " << microseconds(rb.floor_s);
      h << " (geometric mean over " << rb.problems.size() << " problem" << (rb.problems.size() == 1 ? "" : "s") << ").\n";
    }
    if (v == &default_variant) h << "// The space's default configuration.\n";
    write_config_struct(h, m, *v);
  }
  h << "using DefaultConfig = " << config_struct_name(m, default_variant.name) << ";\n\n";

  h << "enum class Bucket {";
  for (const auto& b : m.buckets) h << " " << b.name << ",";
  h << " none };\n\n";

  h << "// The space's buckets: the first whose condition holds.\n";
  h << "constexpr Bucket bucket_of(const Problem& p) {\n";
  bool uses_p = false;
  std::ostringstream conditions;
  for (const auto& b : m.buckets) {
    std::string cond = b.when.to_cpp([](std::string_view name) { return "p." + std::string(name); });
    uses_p = uses_p || !b.when.names().empty();
    conditions << "  if (" << cond << ") return Bucket::" << b.name << ";\n";
  }
  if (!uses_p) h << "  (void)p;\n";
  h << conditions.str() << "  return Bucket::none;\n}\n\n";

  h << "// Buckets the tuning found a winner for.\n";
  h << "constexpr bool is_tuned(Bucket b) {\n";
  if (tuned.empty()) {
    h << "  (void)b;\n  return false;\n";
  } else {
    h << "  return";
    bool first = true;
    for (const auto& b : m.buckets) {
      if (!tuned.count(b.name)) continue;
      h << (first ? " " : " || ") << "b == Bucket::" << b.name;
      first = false;
    }
    h << ";\n";
  }
  h << "}\n\n";

  // Measured problems of tuned buckets, for the nearest-bucket fallback.
  std::vector<std::pair<std::string, const Problem*>> measured;
  for (const auto& b : m.buckets) {
    auto it = tuned.find(b.name);
    if (it == tuned.end()) continue;
    for (const auto& rp : it->second.recorded->problems) {
      bool complete = rp.problem.dims().size() == m.dims.size();
      for (const auto& d : m.dims) complete = complete && rp.problem.has(d.name);
      if (complete) {
        measured.emplace_back(b.name, &rp.problem);
      } else {
        warnings.push_back("recorded problem " + problem_text(rp.problem) + " does not match the space's dimensions; not used for nearest-bucket lookup");
      }
    }
  }
  h << "// A problem whose own bucket has no winner takes the bucket of the nearest measured problem:\n"
       "// distance in powers of two over the integer dimensions; symbolic dimensions must match.\n";
  h << "constexpr Bucket nearest_tuned_bucket(const Problem& p) {\n";
  if (measured.empty()) {
    h << "  (void)p;\n  return Bucket::none;\n}\n\n";
  } else {
    h << "  struct Measured {\n    Bucket bucket;\n    Problem problem;\n  };\n";
    h << "  constexpr Measured measured[] = {\n";
    for (const auto& [bucket, problem] : measured) {
      h << "      {Bucket::" << bucket << ", {";
      bool first = true;
      for (const auto& d : m.dims) {
        const auto& value = *std::find_if(problem->dims().begin(), problem->dims().end(),
                                          [&](const auto& kv) { return kv.first == d.name; });
        h << (first ? "" : ", ");
        if (const auto* i = std::get_if<std::int64_t>(&value.second)) {
          h << integer_literal(*i);
        } else {
          h << "::kiln::Choice{" << cpp_string(std::get<std::string>(value.second)) << "}";
        }
        first = false;
      }
      h << "}},\n";
    }
    h << "  };\n";
    h << "  Bucket best = Bucket::none;\n  std::int64_t best_distance = -1;\n";
    h << "  for (const auto& m : measured) {\n";
    bool any_symbolic = false;
    for (const auto& d : m.dims) {
      if (!d.symbolic) continue;
      h << (any_symbolic ? "" : "    if (") << (any_symbolic ? " || " : "") << "m.problem." << d.name << " != p." << d.name;
      any_symbolic = true;
    }
    if (any_symbolic) h << ") continue;\n";
    h << "    const std::int64_t distance =";
    bool first_term = true;
    for (const auto& d : m.dims) {
      if (d.symbolic) continue;
      h << (first_term ? " " : " + ") << "::kiln::log2_distance(m.problem." << d.name << ", p." << d.name << ")";
      first_term = false;
    }
    if (first_term) h << " 0";
    h << ";\n";
    h << "    if (best_distance < 0 || distance < best_distance) {\n      best = m.bucket;\n      best_distance = distance;\n    }\n";
    h << "  }\n  return best;\n}\n\n";
  }

  h << "// Exact bucket, else the nearest tuned bucket, else Bucket::none (the default configuration).\n";
  h << "constexpr Bucket tuned_bucket(const Problem& p) {\n  const Bucket own = bucket_of(p);\n"
       "  return is_tuned(own) ? own : nearest_tuned_bucket(p);\n}\n\n";

  h << "// Calls launch(Config{}) with the configuration tuned for the problem.\n";
  h << "template <class Launch>\ndecltype(auto) dispatch(const Problem& p, Launch&& launch) {\n  switch (tuned_bucket(p)) {\n";
  for (const auto& b : m.buckets) {
    auto it = tuned.find(b.name);
    if (it == tuned.end()) continue;
    h << "    case Bucket::" << b.name << ":\n      return launch(" << config_struct_name(m, it->second.winner->name) << "{});\n";
  }
  h << "    default:\n      return launch(DefaultConfig{});\n  }\n}\n\n";

  h << "// Where the configuration for a problem comes from, and what it measured.\n";
  h << "constexpr ::kiln::Provenance provenance(const Problem& p) {\n";
  h << "  const Bucket chosen = tuned_bucket(p);\n";
  h << "  const char* selection = chosen == Bucket::none ? \"default, not tuned\"\n"
       "                          : chosen == bucket_of(p) ? \"exact bucket\"\n"
       "                                                   : \"nearest tuned bucket\";\n";
  h << "  switch (chosen) {\n";
  for (const auto& b : m.buckets) {
    auto it = tuned.find(b.name);
    if (it == tuned.end()) continue;
    const RecordedBucket& rb = *it->second.recorded;
    double ratio = rb.floor_s > 0 ? rb.time_s / rb.floor_s : 0.0;
    h << "    case Bucket::" << b.name << ":\n      return {" << cpp_string(it->second.winner->name) << ", "
      << cpp_string(b.name) << ", selection, " << cpp_string(record->device_name) << ", "
      << cpp_string(record->compute_capability) << ", " << cpp_string(record->driver) << ", "
      << cpp_string(record->cuda_runtime) << ", " << cpp_string(record->date) << ", " << number(rb.time_s, 6) << ", "
      << number(rb.floor_s, 6) << ", " << number(ratio, 4) << ", true};\n";
  }
  h << "    default:\n      return {" << cpp_string(default_variant.name)
    << ", \"\", selection, \"\", \"\", \"\", \"\", \"\", 0.0, 0.0, 0.0, false};\n  }\n}\n\n";
  h << "}  // namespace kiln::tuned::" << m.kernel << "\n";
  return h.str();
}

}  // namespace kiln::tuner
