// The sources a tuning context is keyed by: the ones the build names and every file they include
// from the kernel's own folders. A variant compiles all of them, so a header the build forgot to
// name must key the context too: topk_cuda's build had not named three of the headers its
// variants include, and a tuning after an edit of one of them continued the context of the old
// code (2026-11-30), holding the times of two kernels under one key.
#pragma once
#include <filesystem>
#include <vector>

namespace kiln::tuner {

// `listed` in its order, then each file they include, directly or through another, that is not
// listed, in the order first met. A quoted include is looked for beside the including file, then
// in `include_dirs`; an angle-bracket include in `include_dirs` only, as the compiler looks for
// them. What is found in neither (the system's, the compiler's and Kiln's own headers, which the
// compiler and Kiln's version key instead) is left out, as are includes inside comments. Only C,
// C++ and CUDA files are read for includes. A listed set that already names everything its files
// include comes back unchanged, so the keys of such contexts do not move.
std::vector<std::filesystem::path> source_closure(const std::vector<std::filesystem::path>& listed,
                                                  const std::vector<std::filesystem::path>& include_dirs);

// Writes `files` as a Make dependency file of `target` (what a build tool's DEPFILE reads: the
// build runs the step again when one of them changes, named among the sources or not), whole or
// not at all (written beside, then renamed into place). Throws kiln::Error when it cannot.
void write_depfile(const std::filesystem::path& depfile, const std::filesystem::path& target,
                   const std::vector<std::filesystem::path>& files);

}  // namespace kiln::tuner
