// The dispatch header: the tuned choices of one kernel as C++ that reads like code
// (kiln/tuned/<kernel>.hpp). Made from the manifest and the tuning record alone, so the same
// record always gives the same bytes, on a GPU machine or off it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kiln/model/family.hpp"
#include "manifest.hpp"
#include "record.hpp"

namespace kiln::tuner {

// `warnings` receives one line per record entry that no longer fits the space (a winner the
// space no longer has, a bucket it no longer declares); those buckets fall back as untuned.
// Throws when the record is for another kernel.
std::string dispatch_header(const Manifest& manifest, const std::optional<Record>& record,
                            std::vector<std::string>& warnings);

// The header of a space with a domain and no buckets: the record's learned dispatch as nested
// if/else over the named dims, each leaf launching its configuration (header_tree.cpp).
std::string tree_dispatch_header(const Manifest& manifest, const std::optional<Record>& record,
                                 std::vector<std::string>& warnings);

// The header of a kernel family (kiln/tuned/<family>.hpp, header_family.cpp): the problem every
// member takes, the key's values, and dispatch() and provenance() that switch on the key and hand
// the problem to the member's own header. Made from the family and its members' manifests alone.
std::string family_header(const model::Family& family);

// Canonical variant name without the "<kernel>__" prefix: the name of its config struct.
std::string config_struct_name(const Manifest& manifest, const std::string& variant);

}  // namespace kiln::tuner
