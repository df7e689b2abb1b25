// The last stage of `kiln tune`, and of `kiln record`: the record and the dispatch header written
// (each only when its bytes change, so that the build does not redo what depends on them), and
// what the tuning found, said in a few lines.
#pragma once
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <vector>

#include "manifest.hpp"
#include "record.hpp"

namespace kiln::tuner {

struct PublishPaths {
  std::filesystem::path record;
  std::vector<std::filesystem::path> record_copies;  // each one written is said on `out`
  std::optional<std::filesystem::path> header;
};

// Writes the record (and its copies) and the dispatch header; the header's warnings go to `err`.
void publish(const Manifest& m, const Record& record, const PublishPaths& paths, std::ostream& out, std::ostream& err);

// "kiln: <kernel> on <device>: N evaluated, ..." and each bucket's winner, ties and floors.
void print_summary(const Manifest& m, const Record& record, std::size_t evaluated, std::size_t ran, std::ostream& out);

}  // namespace kiln::tuner
