// The dispatch header of a space with a problem domain and no buckets: the learned tree from the
// record, written twice as nested if/else on the named dims (dispatch() launches each leaf's
// configuration, provenance() says what the leaf measured).
#include <algorithm>
#include <functional>
#include <limits>
#include <sstream>
#include <variant>

#include "header.hpp"
#include "header_parts.hpp"

namespace kiln::tuner {
namespace {

// A split's condition as C++ on the named dim or feature: `p.cols <= 1448`, `p.dtype == "bf16"`,
// `(p.G * p.Sq) <= 16`.
std::string condition(const Manifest& m, const TreeNode& n) {
  std::ostringstream c;
  const auto feature = std::find_if(m.features.begin(), m.features.end(), [&](const Feature& f) { return f.name == n.dim; });
  if (feature != m.features.end()) {
    // to_cpp() parenthesises every operation, so the comparison binds to the whole feature.
    c << feature->expr.to_cpp([](std::string_view name) { return "p." + std::string(name); });
  } else {
    c << "p." << n.dim;
  }
  if (n.threshold) {
    const bool fits = *n.threshold >= std::numeric_limits<int>::min() && *n.threshold <= std::numeric_limits<int>::max();
    c << " <= " << (fits ? std::to_string(*n.threshold) : integer_literal(*n.threshold));
  } else {
    c << " == " << cpp_string(*n.symbol);
  }
  return c.str();
}

// Why the tree cannot be used with this manifest (a dim it does not declare, or of the other
// kind), or nothing.
std::optional<std::string> unusable(const Manifest& m, const DispatchTree& tree) {
  for (const auto& n : tree.nodes) {
    if (n.is_leaf()) continue;
    const Dim* dim = nullptr;
    for (const auto& d : m.dims) {
      if (d.name == n.dim) dim = &d;
    }
    const bool feature =
        std::any_of(m.features.begin(), m.features.end(), [&](const Feature& f) { return f.name == n.dim; });
    if (feature) {
      if (n.symbol) return "the record's dispatch splits on '" + n.dim + "' as a symbolic dim; the space's is a feature";
      continue;
    }
    if (dim == nullptr) return "the record's dispatch splits on '" + n.dim + "', not a dim or feature of the space";
    if (dim->symbolic != n.symbol.has_value()) return "the record's dispatch splits on '" + n.dim + "' as the other kind of dim";
  }
  return std::nullopt;
}

class TreeWriter {
 public:
  TreeWriter(const Manifest& m, const DispatchTree& tree, std::ostream& h) : m_(m), tree_(tree), h_(h) {}

  // Writes the tree from the root; `leaf(index, number, indent)` writes a leaf's statement.
  void write(const std::function<void(const TreeNode&, std::size_t, const std::string&)>& leaf) {
    leaf_ = &leaf;
    next_leaf_ = 0;
    node(0, "  ");
  }

 private:
  void node(std::size_t i, const std::string& indent) {
    const TreeNode& n = tree_.nodes[i];
    if (n.is_leaf()) {
      (*leaf_)(n, next_leaf_++, indent);
      return;
    }
    h_ << indent << "if (" << condition(m_, n) << ") {\n";
    node(static_cast<std::size_t>(n.yes), indent + "  ");
    h_ << indent << "} else {\n";
    node(static_cast<std::size_t>(n.no), indent + "  ");
    h_ << indent << "}\n";
  }

  const Manifest& m_;
  const DispatchTree& tree_;
  std::ostream& h_;
  const std::function<void(const TreeNode&, std::size_t, const std::string&)>* leaf_ = nullptr;
  std::size_t next_leaf_ = 0;
};

// Whether a problem has exactly the space's dims, in its order and of their kinds.
bool problem_fits(const Manifest& m, const Problem& p) {
  if (p.dims().size() != m.dims.size()) return false;
  for (std::size_t i = 0; i < m.dims.size(); ++i) {
    const auto& [name, value] = p.dims()[i];
    if (name != m.dims[i].name || m.dims[i].symbolic != std::holds_alternative<std::string>(value)) return false;
  }
  return true;
}

// The condition that holds for exactly this problem: `p.B == 4 && ... && p.dtype == "bf16"`.
std::string exactly(const Problem& p) {
  std::string c;
  for (const auto& [name, value] : p.dims()) {
    if (!c.empty()) c += " && ";
    c += "p." + name + " == ";
    if (const auto* x = std::get_if<std::int64_t>(&value)) {
      const bool fits = *x >= std::numeric_limits<int>::min() && *x <= std::numeric_limits<int>::max();
      c += fits ? std::to_string(*x) : integer_literal(*x);
    } else {
      c += cpp_string(std::get<std::string>(value));
    }
  }
  return c;
}

std::string listed_note(const ListedPoint& l) {
  return "listed problem: " + number(l.time_s * 1e6, 3) + " us; the tree's " + number(l.tree_s * 1e6, 3) + " us (" +
         number(l.tree_s / l.time_s, 3) + "x)";
}

std::string leaf_note(const TreeNode& n, std::size_t number_of_leaf) {
  if (n.points == 0) {
    return "leaf " + std::to_string(number_of_leaf) +
           ": no coverage point, past the reach of the leaf before it (tuning.reach)";
  }
  return "leaf " + std::to_string(number_of_leaf) + ": " + std::to_string(n.points) + " coverage point" +
         (n.points == 1 ? "" : "s") + ", worst regret " + number(n.worst_regret, 3);
}

}  // namespace

std::string tree_dispatch_header(const Manifest& m, const std::optional<Record>& record,
                                 std::vector<std::string>& warnings) {
  const DispatchTree* tree = nullptr;
  if (record && record->domain && record->domain->tree) {
    if (auto why = unusable(m, *record->domain->tree)) {
      warnings.push_back(*why + "; every problem uses the default");
    } else {
      tree = &*record->domain->tree;
    }
  }
  const Variant& default_variant = m.variants[*m.variant_index(m.default_variant)];
  // Each leaf's configuration, or the default where the space no longer has the leaf's variant.
  auto config_of = [&](const TreeNode& leaf) -> const Variant* {
    auto index = m.variant_index(leaf.variant);
    return index ? &m.variants[*index] : nullptr;
  };
  std::vector<const Variant*> configs;
  std::vector<std::vector<std::string>> notes;  // per config: the leaves it serves
  if (tree != nullptr) {
    std::size_t number_of_leaf = 0;
    for (const auto& n : tree->nodes) {
      if (!n.is_leaf()) continue;
      const Variant* v = config_of(n);
      if (v == nullptr) {
        warnings.push_back("record variant " + n.variant + " of leaf " + std::to_string(number_of_leaf) +
                           " is not a feasible variant of the space any more; the leaf uses the default");
        v = &default_variant;
      }
      auto at = std::find(configs.begin(), configs.end(), v);
      if (at == configs.end()) {
        configs.push_back(v);
        notes.emplace_back();
        at = configs.end() - 1;
      }
      notes[static_cast<std::size_t>(at - configs.begin())].push_back(leaf_note(n, number_of_leaf++));
    }
  }
  // The listed problems dispatched exactly, ahead of the tree (a variant the space no longer has
  // leaves its problem to the tree).
  std::vector<std::pair<const ListedPoint*, const Variant*>> listed;
  if (tree != nullptr) {
    for (const auto& l : record->domain->listed) {
      auto index = m.variant_index(l.variant);
      if (!index || !problem_fits(m, l.problem)) {
        warnings.push_back("record variant " + l.variant + " of the listed problem " + l.problem.key() +
                           " is not a feasible variant of the space, or the problem not of its dims; the tree serves it");
        continue;
      }
      const Variant* v = &m.variants[*index];
      listed.emplace_back(&l, v);
      auto at = std::find(configs.begin(), configs.end(), v);
      if (at == configs.end()) {
        configs.push_back(v);
        notes.emplace_back();
        at = configs.end() - 1;
      }
      notes[static_cast<std::size_t>(at - configs.begin())].push_back("the listed problem " + l.problem.key());
    }
  }
  if (std::find(configs.begin(), configs.end(), &default_variant) == configs.end()) {
    configs.push_back(&default_variant);
    notes.emplace_back();
  }

  std::ostringstream h;
  write_preamble(h, m, tree != nullptr ? &*record : nullptr);
  write_problem_struct(h, m);
  h << "// Configurations dispatch can choose, named after their canonical variant names.\n";
  for (std::size_t c = 0; c < configs.size(); ++c) {
    for (const auto& note : notes[c]) h << "// Chosen at " << note << ".\n";
    if (configs[c] == &default_variant) h << "// The space's default configuration.\n";
    write_config_struct(h, m, *configs[c]);
  }
  h << "using DefaultConfig = " << config_struct_name(m, default_variant.name) << ";\n\n";

  if (tree == nullptr) {
    h << "// Calls launch(Config{}) with the configuration for the problem: the default (not tuned).\n";
    h << "template <class Launch>\ndecltype(auto) dispatch(const Problem& p, Launch&& launch) {\n"
         "  (void)p;\n  return launch(DefaultConfig{});\n}\n\n";
    h << "// Where the configuration for a problem comes from.\n";
    h << "constexpr ::kiln::Provenance provenance(const Problem& p) {\n  (void)p;\n  return {"
      << cpp_string(default_variant.name) << ", \"\", \"default, not tuned\", \"\", \"\", \"\", \"\", \"\", 0.0, 0.0, 0.0, false};\n}\n\n";
    h << "}  // namespace kiln::tuned::" << m.kernel << "\n";
    return h.str();
  }

  const RecordedDomain& d = *record->domain;
  TreeWriter writer(m, *tree, h);
  h << "// The dispatch learned from measurements at " << d.coverage_points << " coverage points of the domain: at\n"
    << "// each, the configuration of its leaf was within " << number(d.tolerance, 3)
    << "x of the fastest variant measured there\n// (worst regret " << number(d.coverage_worst_regret, 3) << ", median "
    << number(d.coverage_median_regret, 3) << "). Calls launch(Config{}) with the problem's configuration.\n";
  if (!listed.empty()) {
    h << "// Before it, the listed problems where the learned tree's configuration was slower than that\n"
      << "// tolerance: each gets the fastest variant measured on it.\n";
  }
  h << "template <class Launch>\ndecltype(auto) dispatch(const Problem& p, Launch&& launch) {\n";
  for (const auto& [l, v] : listed) {
    h << "  if (" << exactly(l->problem) << ") {\n    return launch(" << config_struct_name(m, v->name) << "{});  // "
      << listed_note(*l) << "\n  }\n";
  }
  writer.write([&](const TreeNode& n, std::size_t number_of_leaf, const std::string& indent) {
    const Variant* v = config_of(n);
    h << indent << "return launch(" << config_struct_name(m, (v != nullptr ? v : &default_variant)->name) << "{});  // "
      << leaf_note(n, number_of_leaf) << "\n";
  });
  h << "}\n\n";

  h << "// Where the configuration for a problem comes from, and what it measured: its leaf, and the\n"
       "// geometric means of its time and floor over the leaf's coverage points.\n";
  h << "constexpr ::kiln::Provenance provenance(const Problem& p) {\n";
  for (const auto& [l, v] : listed) {
    const double ratio = l->floor_s > 0 ? l->time_s / l->floor_s : 0.0;
    h << "  if (" << exactly(l->problem) << ") {\n    return {" << cpp_string(v->name) << ", "
      << cpp_string("listed problem") << ", \"listed problem\", " << cpp_string(record->device_name)
      << ", " << cpp_string(record->compute_capability) << ", " << cpp_string(record->driver) << ", "
      << cpp_string(record->cuda_runtime) << ", " << cpp_string(record->date) << ", " << number(l->time_s, 6) << ", "
      << number(l->floor_s, 6) << ", " << number(ratio, 4) << ", true};\n  }\n";
  }
  writer.write([&](const TreeNode& n, std::size_t number_of_leaf, const std::string& indent) {
    const Variant* v = config_of(n);
    if (v == nullptr) {
      h << indent << "return {" << cpp_string(default_variant.name)
        << ", \"\", \"default, not tuned\", \"\", \"\", \"\", \"\", \"\", 0.0, 0.0, 0.0, false};\n";
      return;
    }
    const double ratio = n.floor_s > 0 ? n.time_s / n.floor_s : 0.0;
    // A leaf past a variant's reach holds no coverage point: nothing was timed there (time 0).
    const char* selection = n.points == 0 ? "\"learned dispatch, past a reach\"" : "\"learned dispatch\"";
    h << indent << "return {" << cpp_string(v->name) << ", " << cpp_string("leaf " + std::to_string(number_of_leaf))
      << ", " << selection << ", " << cpp_string(record->device_name) << ", " << cpp_string(record->compute_capability)
      << ", " << cpp_string(record->driver) << ", " << cpp_string(record->cuda_runtime) << ", " << cpp_string(record->date)
      << ", " << number(n.time_s, 6) << ", " << number(n.floor_s, 6) << ", " << number(ratio, 4) << ", true};\n";
  });
  h << "}\n\n";
  h << "}  // namespace kiln::tuned::" << m.kernel << "\n";
  return h.str();
}

}  // namespace kiln::tuner
