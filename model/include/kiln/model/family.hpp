// A kernel family (README.md, "Kernel families"): several spaces behind one API, one member per
// value of the family's key. The key is a parameter that each member's space gives exactly one
// integer value (attention: HEAD_DIM, 64 in attention_d64, 128 in attention_d128...), and every
// member takes the same problem, so one generated header (kiln/tuned/<family>.hpp) can switch on
// the key and hand the problem to the member's own dispatch.
//
// kiln_add_family() (cmake/KilnFamily.cmake) writes the family file for the build:
//   { "kiln_family": 1, "family": "attention", "key": "HEAD_DIM",
//     "members": [ { "kernel": "attention_d64", "manifest": ".../attention_d64/generated/manifest.json" }, ... ] }
// load_family() reads it strictly and joins it with the members' manifests.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/model/manifest.hpp"

namespace kiln::model {

// The most members a family may have: one generated `case` each.
inline constexpr std::size_t kMaxFamilyMembers = 64;

struct FamilyMember {
  std::string kernel;              // the member's kernel name, as its manifest gives it
  std::filesystem::path manifest_file;
  Manifest manifest;
  std::int64_t key = 0;            // the member's one value of the family's key
};

struct Family {
  std::filesystem::path file;      // the family file; messages about it start with it
  std::string name;                // a C++ identifier: the namespace kiln::tuned::<name>
  std::string key;                 // the key's parameter name
  std::string backend;             // every member's
  std::vector<FamilyMember> members;  // in the order the family declares them

  // The problem's dims, the same in every member.
  const std::vector<Dim>& dims() const { return members.front().manifest.dims; }
};

// Reads the family file and every member's manifest (relative paths are resolved against the
// family file's directory). Throws InputError with one message naming the file and the place:
// the family file for its own faults (a missing or unknown key, a member listed twice, a manifest
// of another kernel), the member's space file for what the family needs from a space (the key
// parameter missing, of several values or of identifiers, a key value another member has, another
// backend, other problem dims than the first member's).
Family load_family(const std::filesystem::path& file);

}  // namespace kiln::model
