// The dispatch header: the tuned choices of one kernel as C++ that reads like code
// (kiln/tuned/<kernel>.hpp). Made from the manifest and the tuning record alone, so the same
// record always gives the same bytes, on a GPU machine or off it.
#pragma once
#include <optional>
#include <string>
#include <vector>

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

// Canonical variant name without the "<kernel>__" prefix: the name of its config struct.
std::string config_struct_name(const Manifest& manifest, const std::string& variant);

}  // namespace kiln::tuner
