// kiln merge: one worklog from several (the shards of a tuning run on a cluster, README "Tuning on
// a cluster"). Content-keyed: a session is the same session when its start, kernel, strategy,
// context, note and device are; an attempt the tuner wrote is the same when its kernel and
// evidence are, a person's when every field is; a link by its ends and kind; a measurement,
// failure, profile or sanitizer pass by its key (context, kernel, variant, variant hash, problem,
// phase). So merging the same worklog twice, or merging into an output that already holds an
// input, adds nothing. Two inputs with different content under one key (the same variant measured
// on two machines of one context) keep the newer row (created_at; the row's content breaks a tie),
// whatever the order of the inputs.
//
// Refused, with one message naming the file and what differs, and nothing written: a missing
// file, a file that is not a Kiln worklog or is corrupt, a worklog of a newer schema than this
// Kiln, one context described by different devices, and two inputs whose newest sessions of a
// kernel (the ones `kiln record` reads) are of different contexts: another device, another key
// version or Kiln version, or other kernel sources, compiler or flags. An existing output is
// history (earlier runs, an older Kiln, the kernel before an edit) and is compared for devices
// only. Inputs are opened read-only and never written; the output is written to a temporary file
// beside it and renamed over it when complete.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::worklog {

struct MergeCounts {
  std::int64_t sessions = 0, attempts = 0, links = 0, measurements = 0, failures = 0, profiles = 0, passes = 0;
  std::int64_t replaced = 0;  // rows under a key the output held with other content, where this one was newer
};

struct MergedInput {
  std::string path;
  MergeCounts added;
  bool is_output = false;  // the existing output, merged into
};

// Merges `inputs` (and `out` itself first, when it exists) into `out`. Throws kiln::Error.
std::vector<MergedInput> merge_worklogs(const std::vector<std::filesystem::path>& inputs,
                                        const std::filesystem::path& out);

}  // namespace kiln::worklog
