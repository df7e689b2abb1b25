// `kiln generate --space S --target T --out DIR`: validate, enumerate, then write. Nothing is
// written unless the space, the target and the enumeration are all valid.
#pragma once
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>

#include "kiln/gen/emit.hpp"

namespace kiln::gen {

struct GenerateResult {
  std::string kernel;
  std::uint64_t total = 0;     // combinations of parameter values
  std::size_t feasible = 0;    // variants generated
  WriteReport files;
};

// Throws InputError (one message naming the file and the place) on any error.
GenerateResult generate(const std::filesystem::path& space, const std::filesystem::path& target,
                        const std::filesystem::path& out);

// The command: on success prints one summary line to `out_log` and returns 0; on error prints the
// one error message to `err` and returns 1.
int generate_command(const std::filesystem::path& space, const std::filesystem::path& target,
                     const std::filesystem::path& out, std::ostream& out_log, std::ostream& err);

}  // namespace kiln::gen
