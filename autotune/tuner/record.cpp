#include "record.hpp"

#include "kiln/model/json_reader.hpp"
#include "kiln/model/names.hpp"
#include "kiln/model/protocol_read.hpp"

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

// Reading a record: every value is checked for its type and range where it is read (the readers
// the protocol's types share), and a wrong one is one error naming the file and the field's JSON
// pointer ("<file>: /domain/held_out/3/best_s: expected a positive number, got 0"), whoever wrote
// the file. Keys a reader does not know are left alone, so that records written with more fields
// still read.
using model::JsonNode;
namespace read = model::protocol_read;

// `n[key]` as one line of text; without `missing` the key is required.
std::string line_or(const JsonNode& n, std::string_view key, const char* missing) {
  if (missing != nullptr && !n.has(key)) return missing;
  return model::one_line_text(n[key], "a record's text");
}

std::string text_or(const JsonNode& n, std::string_view key, std::string missing) {
  return n.has(key) ? n[key].string() : missing;
}
std::vector<JsonNode> array_at(const JsonNode& n) {
  n.require_array();
  return n.elements();
}

RecordedDomain domain_from_node(const JsonNode& j) {
  j.require_object();
  RecordedDomain d;
  d.tolerance = j["regret_tolerance"].positive_number();
  const JsonNode coverage = j["coverage"];
  coverage.require_object();
  d.coverage_points = read::count(coverage["points"]);
  d.coverage_worst_regret = coverage["worst_regret"].positive_number();
  d.coverage_median_regret = coverage["median_regret"].positive_number();
  d.refine_points = coverage.has("refinement_points") ? read::count(coverage["refinement_points"]) : 0;
  if (j.has("tree")) {
    d.tree = tree_from_node(j["tree"]);
    d.tree->min_leaf_points = j.has("min_leaf_points") ? read::count(j["min_leaf_points"]) : 1;
  }
  if (j.has("listed")) {
    if (!d.tree) j["listed"].fail("exact dispatches without a learned tree");
    for (const JsonNode& jp : array_at(j["listed"])) {
      jp.require_object();
      ListedPoint p;
      p.problem = read::problem(jp["problem"]);
      p.variant = jp["variant"].string();
      p.time_s = jp["time_s"].positive_number();
      p.tree_variant = jp["tree_variant"].string();
      p.tree_s = jp["tree_s"].positive_number();
      p.floor_s = read::non_negative(jp["floor_s"]);
      d.listed.push_back(std::move(p));
    }
  }
  for (const JsonNode& f : array_at(j["finalists"])) d.finalists.push_back(f.string());
  for (const JsonNode& jp : array_at(j["held_out"])) {
    jp.require_object();
    HeldOutPoint p;
    p.problem = read::problem(jp["problem"]);
    p.dispatched = jp["dispatched"].string();
    p.dispatched_s = jp["dispatched_s"].positive_number();
    p.best = jp["best"].string();
    p.best_s = jp["best_s"].positive_number();
    p.floor_s = read::non_negative(jp["floor_s"]);
    p.bound = jp["bound"].string();
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
  if (!j.is_object() || !j.contains("kiln_record")) throw model::InputError(origin + ": not a Kiln record (no kiln_record)");
  const model::JsonFile file{origin, "", j};
  const JsonNode root = JsonNode::root(file);
  if (!root["kiln_record"].is_integer() || root["kiln_record"].integer() != 1) {
    root["kiln_record"].fail("a record of format 1 is expected (this Kiln reads no other), got " +
                             model::describe_json(j.at("kiln_record")));
  }
  // Every text below reaches the dispatch header (its comments and provenance strings) and the
  // report: one line each, without control characters.
  Record r;
  r.kernel = line_or(root, "kernel", nullptr);
  r.backend = line_or(root, "backend", nullptr);
  r.space_hash = line_or(root, "space_hash", nullptr);
  r.context_key = line_or(root, "context_key", "");
  const JsonNode d = root["device"];
  d.require_object();
  r.preset = line_or(d, "preset", "");
  r.device_name = line_or(d, "name", nullptr);
  r.compute_capability = line_or(d, "compute_capability", "");
  r.driver = line_or(d, "driver", "");
  r.cuda_runtime = line_or(d, "cuda_runtime", "");
  r.date = line_or(root, "date", nullptr);
  r.strategy = line_or(root, "strategy", "");
  if (root.has("rates")) {
    root["rates"].require_object();
    for (const JsonNode& rate : root["rates"].members()) r.rates[rate.key()] = rate.positive_number();
  }
  if (root.has("counts")) {
    root["counts"].require_object();
    for (const JsonNode& c : root["counts"].members()) read::count(c);
    r.counts = j.at("counts");
  } else {
    r.counts = nlohmann::ordered_json::object();
  }
  for (const JsonNode& jb : array_at(root["buckets"])) {
    jb.require_object();
    RecordedBucket b;
    b.name = jb["name"].string();
    if (jb["winner"].json().is_null()) {
      b.reason = text_or(jb, "reason", "");
    } else {
      b.winner = jb["winner"].string();
      b.time_s = jb["time_s"].positive_number();
      b.floor_s = jb.has("floor_s") ? read::non_negative(jb["floor_s"]) : 0.0;
      for (const JsonNode& jp : array_at(jb["problems"])) {
        jp.require_object();
        RecordedProblem p;
        p.problem = read::problem(jp["problem"]);
        p.time_s = jp["time_s"].positive_number();
        p.floor_s = jp.has("floor_s") ? read::non_negative(jp["floor_s"]) : 0.0;
        p.bound = text_or(jp, "bound", "");
        b.problems.push_back(std::move(p));
      }
      if (jb.has("noise")) b.noise = read::non_negative(jb["noise"]);
      b.choice = text_or(jb, "choice", "");
      if (jb.has("contenders")) {
        for (const JsonNode& jc : array_at(jb["contenders"])) {
          jc.require_object();
          RecordedContender c{jc["variant"].string(), jc["time_s"].positive_number(), std::nullopt, std::nullopt};
          if (jc.has("noise")) c.noise = read::non_negative(jc["noise"]);
          if (jc.has("within_noise")) c.within_noise = read::boolean(jc["within_noise"]);
          b.contenders.push_back(std::move(c));
        }
      }
    }
    r.buckets.push_back(std::move(b));
  }
  if (root.has("domain")) r.domain = domain_from_node(root["domain"]);
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
