#include "gpus.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "kiln/error.hpp"
#include "tools.hpp"

namespace kiln::tuner {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(trim(part));
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() <= 4 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

GpuRequest parse_gpu_request(const std::string& text) {
  const std::string t = trim(text);
  if (t == "all") return {true, {}};
  if (t.empty()) throw Error("--gpus: expected 'all' or GPU indices such as 0,2; got nothing");
  GpuRequest r;
  std::set<std::string> seen;
  for (const auto& part : split(t, ',')) {
    if (!is_index(part)) {
      throw Error("--gpus '" + text + "': '" + part + "' is not a GPU index (expected 'all' or indices such as 0,2)");
    }
    const std::string index = std::to_string(std::stoi(part));
    if (!seen.insert(index).second) throw Error("--gpus '" + text + "': GPU " + index + " is named twice");
    r.indices.push_back(index);
  }
  return r;
}

std::vector<Gpu> parse_gpu_list(const std::vector<std::string>& lines) {
  std::vector<Gpu> gpus;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    const auto fields = split(lines[i], ',');
    if (fields.size() != 3 || !is_index(fields[0]) || fields[1].empty() || fields[2].rfind("GPU-", 0) != 0) {
      throw Error("nvidia-smi --query-gpu=index,name,uuid: line " + std::to_string(i + 1) + " '" + lines[i] +
                  "' is not 'index, name, GPU-uuid'");
    }
    gpus.push_back({fields[0], fields[1], fields[2]});
  }
  return gpus;
}

std::vector<Gpu> select_gpus(const GpuRequest& request, const std::vector<Gpu>& present,
                             const std::optional<std::string>& visible) {
  if (present.empty()) throw Error("--gpus: nvidia-smi lists no GPU on this machine");
  // CUDA_VISIBLE_DEVICES as indices or UUIDs (a UUID may be given by a unique prefix).
  auto shown = [&](const Gpu& g) {
    if (!visible) return true;
    for (const auto& v : split(*visible, ',')) {
      if (v == g.index || (v.rfind("GPU-", 0) == 0 && g.uuid.rfind(v, 0) == 0)) return true;
    }
    return false;
  };
  std::vector<Gpu> chosen;
  if (request.all) {
    for (const auto& g : present) {
      if (shown(g)) chosen.push_back(g);
    }
    if (chosen.empty()) throw Error("--gpus all: CUDA_VISIBLE_DEVICES='" + visible.value_or("") + "' shows none of this machine's GPUs");
  } else {
    for (const auto& index : request.indices) {
      auto it = std::find_if(present.begin(), present.end(), [&](const Gpu& g) { return g.index == index; });
      if (it == present.end()) {
        throw Error("--gpus: this machine has no GPU " + index + " (nvidia-smi lists " + std::to_string(present.size()) +
                    ", numbered from 0)");
      }
      if (!shown(*it)) throw Error("--gpus: GPU " + index + " is hidden by CUDA_VISIBLE_DEVICES='" + *visible + "'");
      chosen.push_back(*it);
    }
  }
  std::map<std::string, std::vector<std::string>> by_model;
  for (const auto& g : chosen) by_model[g.name].push_back(g.index);
  if (by_model.size() > 1) {
    std::string what;
    for (const auto& [name, indices] : by_model) {
      std::string list;
      for (const auto& i : indices) list += (list.empty() ? "" : ",") + i;
      what += (what.empty() ? "" : "; ") + name + ": --gpus " + list;
    }
    throw Error("--gpus: the GPUs asked for are of " + std::to_string(by_model.size()) +
                " models, whose times are not comparable; tune on one model (" + what + ")");
  }
  return chosen;
}

std::vector<Gpu> gpus_here() {
  auto smi = find_tool("nvidia-smi");
  if (!smi) throw Error("--gpus: nvidia-smi not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)");
  ToolOutput q = run_tool({smi->string(), "--query-gpu=index,name,uuid", "--format=csv,noheader"}, 30);
  if (q.exit_code != 0) throw Error("--gpus: nvidia-smi --query-gpu=index,name,uuid failed (" + q.describe() + ")");
  return parse_gpu_list(q.lines);
}

std::string describe(const Gpu& gpu) { return "GPU " + gpu.index + " (" + gpu.name + ")"; }

}  // namespace kiln::tuner
