#include "kiln/gen/generate.hpp"

#include <exception>
#include <ostream>

namespace kiln::gen {

GenerateResult generate(const std::filesystem::path& space_file, const std::filesystem::path& target_file,
                        const std::filesystem::path& out) {
  check_output_directory(out);
  const Device target = load_device(target_file);
  const Space space = load_space(space_file, target);
  const Enumeration enumeration = enumerate_variants(space, target);
  const std::vector<OutputFile> files = render_outputs(space, target, enumeration);
  // Everything above only reads; this is the first write.
  GenerateResult result;
  result.kernel = space.kernel;
  result.total = enumeration.total;
  result.feasible = enumeration.variants.size();
  result.files = write_outputs(out, files);
  return result;
}

int generate_command(const std::filesystem::path& space, const std::filesystem::path& target,
                     const std::filesystem::path& out, std::ostream& out_log, std::ostream& err) {
  try {
    const GenerateResult r = generate(space, target, out);
    out_log << "kiln: " << r.kernel << ": " << r.feasible << " variants (" << (r.total - r.feasible) << " of "
            << r.total << " pruned by constraints) -> " << out.string() << " (" << r.files.written.size()
            << " files written, " << r.files.removed.size() << " removed)\n";
    return 0;
  } catch (const std::exception& e) {
    err << e.what() << '\n';
    return 1;
  }
}

}  // namespace kiln::gen
