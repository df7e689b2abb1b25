#include "kiln/model/family.hpp"

#include <algorithm>

#include "kiln/join.hpp"
#include "kiln/model/json_reader.hpp"

namespace kiln::model {
namespace {

constexpr std::int64_t kFamilyVersion = 1;

// "B, Hq, dtype (bf16|fp16)": a problem's dims as a message shows them.
std::string dims_text(const std::vector<Dim>& dims) {
  std::vector<std::string> items;
  for (const Dim& d : dims) {
    std::string item = d.name;
    if (d.symbolic) item += " (" + join(d.domain, "|") + ")";
    items.push_back(item);
  }
  return join(items, ", ");
}

// The Problem struct a dispatch header writes depends on the dims' names, order, kinds and
// symbolic values; a problem domain's ranges do not enter it.
bool same_problem(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Dim& x, const Dim& y) {
    return x.name == y.name && x.symbolic == y.symbolic && x.domain == y.domain;
  });
}

// What the family needs from a member's space; a fault is reported in the space file, where the
// author fixes it.
void check_member(const Family& family, const FamilyMember& member) {
  const Manifest& m = member.manifest;
  const std::string space = m.space_file.string();
  const std::string parameters = pointer_append("", "parameters");
  const std::string of_family = "the key of family " + family.name + " (" + family.file.string() + ")";
  auto parameter = std::find_if(m.parameters.begin(), m.parameters.end(),
                                [&](const Parameter& p) { return p.name == family.key; });
  if (parameter == m.parameters.end()) {
    fail_at(space, parameters, "no parameter " + family.key + ", " + of_family);
  }
  const std::string values = pointer_append(pointer_append(parameters, family.key), "values");
  if (parameter->symbolic()) fail_at(space, values, family.key + " is " + of_family + ": its value must be an integer");
  if (parameter->values.size() != 1) {
    std::vector<std::string> texts;
    for (const Value& v : parameter->values) texts.push_back(value_text(v));
    fail_at(space, values,
            family.key + " is " + of_family + ": a member's space gives it one value, not " +
                std::to_string(texts.size()) + " (" + join(texts, ", ") + ")");
  }
}

void check_against(const Family& family, const FamilyMember& member, const FamilyMember& earlier) {
  const std::string space = member.manifest.space_file.string();
  const std::string earlier_text = "member " + earlier.kernel + " (" + earlier.manifest.space_file.string() + ")";
  if (member.key == earlier.key) {
    fail_at(space, pointer_append(pointer_append(pointer_append("", "parameters"), family.key), "values"),
            family.key + " = " + std::to_string(member.key) + " is the key of " + earlier_text +
                " too: each member of family " + family.name + " has a value of its own");
  }
  if (member.manifest.backend != earlier.manifest.backend) {
    fail_at(space, pointer_append("", "backend"),
            "\"" + member.manifest.backend + "\", where " + earlier_text + " is \"" + earlier.manifest.backend +
                "\": the members of family " + family.name + " share one backend");
  }
  if (!same_problem(member.manifest.dims, earlier.manifest.dims)) {
    fail_at(space, pointer_append(pointer_append("", "problem"), "dims"),
            "the dims " + dims_text(member.manifest.dims) + " differ from " + dims_text(earlier.manifest.dims) +
                " of " + earlier_text + ": the members of family " + family.name + " take one problem");
  }
}

}  // namespace

Family load_family(const std::filesystem::path& file) {
  const JsonFile json = read_json_file(file);
  const JsonNode root = JsonNode::root(json);
  root.require_object({"kiln_family", "family", "key", "members"}, {"kiln_family", "family", "key", "members"});
  const JsonNode version = root["kiln_family"];
  if (!version.is_integer() || version.integer() != kFamilyVersion) {
    version.fail("not a Kiln family file of a known version: expected 1, got " + describe_json(version.json()));
  }

  Family family;
  family.file = file;
  family.name = root["family"].identifier();
  family.key = root["key"].identifier();
  const JsonNode members = root["members"];
  members.require_array();
  if (members.json().empty()) members.fail("a family has at least one member");
  members.require_at_most(kMaxFamilyMembers, "members");

  const std::filesystem::path base = file.parent_path();
  for (const JsonNode& entry : members.elements()) {
    entry.require_object({"kernel", "manifest"}, {"kernel", "manifest"});
    FamilyMember member;
    const JsonNode kernel = entry["kernel"];
    member.kernel = kernel.identifier();
    for (const FamilyMember& earlier : family.members) {
      if (earlier.kernel == member.kernel) kernel.fail(member.kernel + " is a member already");
    }
    const JsonNode manifest = entry["manifest"];
    if (manifest.string().empty()) manifest.fail("expected the path of the member's manifest, got \"\"");
    member.manifest_file = manifest.string();
    if (member.manifest_file.is_relative()) member.manifest_file = base / member.manifest_file;
    member.manifest = load_manifest(member.manifest_file);
    if (member.manifest.kernel != member.kernel) {
      manifest.fail("the manifest " + member.manifest_file.string() + " is kernel " + member.manifest.kernel +
                    "'s, not " + member.kernel + "'s");
    }
    check_member(family, member);
    const auto& key_parameter = *std::find_if(member.manifest.parameters.begin(), member.manifest.parameters.end(),
                                              [&](const Parameter& p) { return p.name == family.key; });
    member.key = std::get<std::int64_t>(key_parameter.values.front());
    for (const FamilyMember& earlier : family.members) check_against(family, member, earlier);
    family.members.push_back(std::move(member));
  }
  family.backend = family.members.front().manifest.backend;
  return family;
}

}  // namespace kiln::model
