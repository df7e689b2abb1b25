#include "record.hpp"

#include "kiln/model/json_reader.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "manifest.hpp"

namespace kiln::tuner {
namespace {

nlohmann::ordered_json domain_to_json(const RecordedDomain& d) {
  nlohmann::ordered_json j;
  j["regret_tolerance"] = d.tolerance;
  j["coverage"] = {{"points", d.coverage_points},
                   {"worst_regret", d.coverage_worst_regret},
                   {"median_regret", d.coverage_median_regret}};
  // Only with refinement, so records learned without it read as they were.
  if (d.refine_points > 0) j["coverage"]["refinement_points"] = d.refine_points;
  if (d.tree) {
    // Only when not 1, so records learned without the option read as they were.
    if (d.tree->min_leaf_points != 1) j["min_leaf_points"] = d.tree->min_leaf_points;
    j["tree"] = tree_to_json(*d.tree);
  }
  // Only when some, so records learned before them read as they were.
  if (!d.listed.empty()) {
    j["listed"] = nlohmann::ordered_json::array();
    for (const auto& p : d.listed) {
      j["listed"].push_back({{"problem", problem_to_json(p.problem)},
                             {"variant", p.variant},
                             {"time_s", p.time_s},
                             {"tree_variant", p.tree_variant},
                             {"tree_s", p.tree_s},
                             {"floor_s", p.floor_s}});
    }
  }
  j["finalists"] = d.finalists;
  j["held_out"] = nlohmann::ordered_json::array();
  for (const auto& p : d.held_out) {
    j["held_out"].push_back({{"problem", problem_to_json(p.problem)},
                             {"dispatched", p.dispatched},
                             {"dispatched_s", p.dispatched_s},
                             {"best", p.best},
                             {"best_s", p.best_s},
                             {"floor_s", p.floor_s},
                             {"bound", p.bound}});
  }
  return j;
}

// A count a record carries: a whole number >= 0 (a negative one would wrap around as a size).
std::size_t count_at(const nlohmann::ordered_json& j, const char* key, std::size_t missing) {
  if (!j.contains(key)) return missing;
  const auto& v = j.at(key);
  if (!v.is_number_unsigned()) throw std::runtime_error(std::string(key) + ": expected a count (a whole number >= 0), got " + v.dump());
  return v.get<std::size_t>();
}

RecordedDomain domain_from_json(const nlohmann::ordered_json& j) {
  RecordedDomain d;
  d.tolerance = j.at("regret_tolerance").get<double>();
  const auto& coverage = j.at("coverage");
  if (!coverage.contains("points")) throw std::runtime_error("coverage: points missing");
  d.coverage_points = count_at(coverage, "points", 0);
  d.coverage_worst_regret = coverage.at("worst_regret").get<double>();
  d.coverage_median_regret = coverage.at("median_regret").get<double>();
  d.refine_points = count_at(coverage, "refinement_points", 0);
  if (j.contains("tree")) {
    d.tree = tree_from_json(j.at("tree"));
    d.tree->min_leaf_points = j.value("min_leaf_points", std::size_t{1});
  }
  if (j.contains("listed")) {
    if (!d.tree) throw std::runtime_error("listed: exact dispatches without a learned tree");
    for (const auto& jp : j.at("listed")) {
      ListedPoint p;
      p.problem = problem_from_json(jp.at("problem"));
      p.variant = jp.at("variant").get<std::string>();
      p.time_s = jp.at("time_s").get<double>();
      p.tree_variant = jp.at("tree_variant").get<std::string>();
      p.tree_s = jp.at("tree_s").get<double>();
      p.floor_s = jp.at("floor_s").get<double>();
      if (!(p.time_s > 0) || !(p.tree_s > 0) || !(p.floor_s >= 0)) throw std::runtime_error("a listed problem's times must be > 0, its floor >= 0");
      d.listed.push_back(std::move(p));
    }
  }
  d.finalists = j.at("finalists").get<std::vector<std::string>>();
  for (const auto& jp : j.at("held_out")) {
    HeldOutPoint p;
    p.problem = problem_from_json(jp.at("problem"));
    p.dispatched = jp.at("dispatched").get<std::string>();
    p.dispatched_s = jp.at("dispatched_s").get<double>();
    p.best = jp.at("best").get<std::string>();
    p.best_s = jp.at("best_s").get<double>();
    p.floor_s = jp.at("floor_s").get<double>();
    p.bound = jp.at("bound").get<std::string>();
    if (!(p.dispatched_s > 0) || !(p.best_s > 0)) throw std::runtime_error("a held-out time is not positive");
    d.held_out.push_back(std::move(p));
  }
  return d;
}

}  // namespace

nlohmann::ordered_json record_to_json(const Record& r) {
  nlohmann::ordered_json j;
  j["kiln_record"] = 1;
  j["kernel"] = r.kernel;
  j["backend"] = r.backend;
  j["space_hash"] = r.space_hash;
  j["context_key"] = r.context_key;
  j["device"] = {{"preset", r.preset},
                 {"name", r.device_name},
                 {"compute_capability", r.compute_capability},
                 {"driver", r.driver},
                 {"cuda_runtime", r.cuda_runtime}};
  j["date"] = r.date;
  j["strategy"] = r.strategy;
  j["rates"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.rates) j["rates"][k] = v;
  j["counts"] = r.counts.is_null() ? nlohmann::ordered_json::object() : r.counts;
  j["buckets"] = nlohmann::ordered_json::array();
  for (const auto& b : r.buckets) {
    nlohmann::ordered_json jb;
    jb["name"] = b.name;
    if (b.winner) {
      jb["winner"] = *b.winner;
      jb["time_s"] = b.time_s;
      jb["floor_s"] = b.floor_s;
      jb["problems"] = nlohmann::ordered_json::array();
      for (const auto& p : b.problems) {
        jb["problems"].push_back({{"problem", problem_to_json(p.problem)},
                                  {"time_s", p.time_s},
                                  {"floor_s", p.floor_s},
                                  {"bound", p.bound}});
      }
      // Noise fields only when measured, so records made before them keep their bytes.
      if (b.noise) jb["noise"] = *b.noise;
      if (!b.choice.empty()) jb["choice"] = b.choice;
      jb["contenders"] = nlohmann::ordered_json::array();
      for (const auto& c : b.contenders) {
        nlohmann::ordered_json jc = {{"variant", c.variant}, {"time_s", c.time_s}};
        if (c.noise) jc["noise"] = *c.noise;
        if (c.within_noise) jc["within_noise"] = *c.within_noise;
        jb["contenders"].push_back(std::move(jc));
      }
    } else {
      jb["winner"] = nullptr;
      jb["reason"] = b.reason;
    }
    j["buckets"].push_back(std::move(jb));
  }
  // Only with a domain, so records of spaces without one keep their bytes.
  if (r.domain) j["domain"] = domain_to_json(*r.domain);
  return j;
}

Record record_from_json(const nlohmann::ordered_json& j, const std::string& origin) {
  if (!j.is_object() || j.value("kiln_record", 0) != 1) throw std::runtime_error(origin + ": not a Kiln record (kiln_record: 1)");
  Record r;
  try {
    r.kernel = j.at("kernel").get<std::string>();
    r.backend = j.at("backend").get<std::string>();
    r.space_hash = j.at("space_hash").get<std::string>();
    r.context_key = j.value("context_key", std::string{});
    const auto& d = j.at("device");
    r.preset = d.value("preset", std::string{});
    r.device_name = d.at("name").get<std::string>();
    r.compute_capability = d.value("compute_capability", std::string{});
    r.driver = d.value("driver", std::string{});
    r.cuda_runtime = d.value("cuda_runtime", std::string{});
    r.date = j.at("date").get<std::string>();
    r.strategy = j.value("strategy", std::string{});
    const nlohmann::ordered_json rates_section = j.value("rates", nlohmann::ordered_json::object());
    for (const auto& [k, v] : rates_section.items()) r.rates[k] = v.get<double>();
    r.counts = j.value("counts", nlohmann::ordered_json::object());
    for (const auto& jb : j.at("buckets")) {
      RecordedBucket b;
      b.name = jb.at("name").get<std::string>();
      if (jb.at("winner").is_null()) {
        b.reason = jb.value("reason", std::string{});
      } else {
        b.winner = jb.at("winner").get<std::string>();
        b.time_s = jb.at("time_s").get<double>();
        b.floor_s = jb.value("floor_s", 0.0);
        for (const auto& jp : jb.at("problems")) {
          RecordedProblem p;
          p.problem = problem_from_json(jp.at("problem"));
          p.time_s = jp.at("time_s").get<double>();
          p.floor_s = jp.value("floor_s", 0.0);
          p.bound = jp.value("bound", std::string{});
          b.problems.push_back(std::move(p));
        }
        if (jb.contains("noise")) b.noise = jb.at("noise").get<double>();
        b.choice = jb.value("choice", std::string{});
        for (const auto& jc : jb.value("contenders", nlohmann::ordered_json::array())) {
          RecordedContender c{jc.at("variant").get<std::string>(), jc.at("time_s").get<double>(), std::nullopt, std::nullopt};
          if (jc.contains("noise")) c.noise = jc.at("noise").get<double>();
          if (jc.contains("within_noise")) c.within_noise = jc.at("within_noise").get<bool>();
          b.contenders.push_back(std::move(c));
        }
      }
      r.buckets.push_back(std::move(b));
    }
    if (j.contains("domain")) r.domain = domain_from_json(j.at("domain"));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(origin + ": record field missing or of the wrong type: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(origin + ": domain: " + e.what());
  }
  return r;
}

Record load_record(const std::filesystem::path& file) {
  // Records travel between machines: the same bounded, strict reading as space files.
  return record_from_json(model::read_json_file(file).root, file.string());
}

std::string record_text(const Record& r) { return record_to_json(r).dump(2) + "\n"; }

bool write_if_changed(const std::filesystem::path& file, const std::string& content) {
  {
    std::ifstream in(file, std::ios::binary);
    if (in) {
      std::ostringstream existing;
      existing << in.rdbuf();
      if (existing.str() == content) return false;
    }
  }
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  std::filesystem::path tmp = file;
  tmp += ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  std::filesystem::rename(tmp, file);
  return true;
}

}  // namespace kiln::tuner
