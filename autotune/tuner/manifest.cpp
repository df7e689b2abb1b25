#include "manifest.hpp"

#include "kiln/gen/json_reader.hpp"

#include <fstream>
#include <stdexcept>

#include "process.hpp"

namespace kiln::tuner {
namespace {

gen::Value value_from_json(const nlohmann::ordered_json& j) {
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return j.get<std::string>();
}

}  // namespace

std::string value_text(const gen::Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

gen::Environment environment_of(const Problem& p) {
  gen::Environment env;
  for (const auto& [name, value] : p.dims()) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      env.set(name, *i);
    } else {
      env.set(name, std::get<std::string>(value));
    }
  }
  return env;
}

Manifest load_manifest(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) throw std::runtime_error(file.string() + ": no manifest (run `kiln generate` first)");
  const nlohmann::ordered_json j = gen::read_json_file(file, gen::kMaxManifestBytes).root;
  if (j.value("kiln_manifest", 0) != 1) throw std::runtime_error(file.string() + ": not a Kiln manifest (kiln_manifest: 1)");
  Manifest m;
  m.file = file;
  try {
    m.kernel = j.at("kernel").get<std::string>();
    m.backend = j.at("backend").get<std::string>();
    m.description = j.value("description", std::string{});
    m.space_file = j.at("space_file").get<std::string>();
    m.space_hash = j.at("space_hash").get<std::string>();
    m.target = j.value("target", std::string{});
    for (const auto& p : j.at("parameters")) {
      Parameter param;
      param.name = p.at("name").get<std::string>();
      for (const auto& v : p.at("values")) param.values.push_back(value_from_json(v));
      param.default_value = value_from_json(p.at("default"));
      m.parameters.push_back(std::move(param));
    }
    for (const auto& v : j.at("variants")) {
      VariantInfo info;
      info.name = v.at("name").get<std::string>();
      for (const auto& param : m.parameters) info.params.push_back(value_from_json(v.at("params").at(param.name)));
      info.source = v.at("source").get<std::string>();
      if (info.source.is_relative()) info.source = file.parent_path() / info.source;
      m.variants.push_back(std::move(info));
    }
    m.default_variant = j.at("default_variant").get<std::string>();
    m.pruned = j.value("pruned", nlohmann::ordered_json::object());
    const auto& problem = j.at("problem");
    for (const auto& [name, type] : problem.at("dims").items()) {
      Dim d;
      d.name = name;
      if (type.is_array()) {
        d.symbolic = true;
        d.domain = type.get<std::vector<std::string>>();
      } else if (type.is_object() && type.contains("domain")) {
        const auto& range = type.at("domain");
        d.min = range.at("min").get<std::int64_t>();
        d.max = range.at("max").get<std::int64_t>();
        d.log_scale = range.at("scale").get<std::string>() == "log";
      }
      m.dims.push_back(std::move(d));
    }
    const nlohmann::ordered_json work_section = problem.value("work", nlohmann::ordered_json::object());
    for (const auto& [resource, text] : work_section.items()) {
      m.work.emplace_back(resource, gen::Expr::parse(text.get<std::string>()));
    }
    for (const auto& p : j.at("problems")) m.problems.push_back(problem_from_json(p));
    for (const auto& p : j.value("checks", nlohmann::ordered_json::array())) m.checks.push_back(problem_from_json(p));
    for (const auto& p : j.value("coverage", nlohmann::ordered_json::array())) m.coverage.push_back(problem_from_json(p));
    for (const auto& p : j.value("held_out", nlohmann::ordered_json::array())) m.held_out.push_back(problem_from_json(p));
    for (const auto& b : j.at("buckets")) {
      m.buckets.push_back({b.at("name").get<std::string>(), gen::Expr::parse(b.at("when").get<std::string>())});
    }
    const nlohmann::ordered_json tolerance_section = j.value("tolerance", nlohmann::ordered_json::object());
    for (const auto& [dtype, tol] : tolerance_section.items()) {
      m.tolerance[dtype] = tol.get<double>();
    }
    const nlohmann::ordered_json tuning = j.value("tuning", nlohmann::ordered_json::object());
    m.timeout_s = tuning.value("timeout_s", m.timeout_s);
    m.regret_tolerance = tuning.value("regret_tolerance", m.regret_tolerance);
    checked_time_limit(m.timeout_s, file.string() + ": tuning.timeout_s");
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file.string() + ": manifest field missing or of the wrong type: " + e.what());
  } catch (const gen::ExprError& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
  if (!m.variant_index(m.default_variant)) {
    throw std::runtime_error(file.string() + ": default variant " + m.default_variant + " is not among the variants");
  }
  return m;
}

std::optional<std::size_t> Manifest::variant_index(const std::string& name) const {
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (variants[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> Manifest::bucket_of(const Problem& p) const {
  gen::Environment env = environment_of(p);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].when.evaluate(env) != 0) return i;
  }
  return std::nullopt;
}

std::map<std::string, double> Manifest::work_of(const Problem& p) const {
  gen::Environment env = environment_of(p);
  std::map<std::string, double> work;
  for (const auto& [resource, expr] : this->work) work[resource] = static_cast<double>(expr.evaluate(env));
  return work;
}

}  // namespace kiln::tuner
