// `kiln tune --shard i/N`: one of N machines' share of a tuning run (README, "Tuning on a
// cluster"). Shard i measures the variants whose name hashes to i: XXH3-64 of the canonical
// variant name, modulo N, the same on every machine, so N shards cover every variant exactly once
// without talking to each other. A shard runs the search's part only (each variant of its share
// validated and timed on the listed problems); what needs every variant's results (near-ties
// re-measured in turns, a domain's coverage and held-out points on the finalists, the sanitizer
// gate, the record and the header) comes after kiln merge: `kiln record` on the merged worklog,
// or `kiln tune` without --shard, which takes every search result from it.
#pragma once
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "evaluate.hpp"
#include "manifest.hpp"
#include "search.hpp"

namespace kiln::tuner {

struct Shard {
  std::size_t index = 0;  // 0 .. count-1
  std::size_t count = 1;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "i/N" with 0 <= i < N <= 4096; throws kiln::Error saying what is wrong.
Shard parse_shard(std::string_view text);

// Whether the variant is in the shard's share: XXH3-64 of its name, modulo N, is i.
bool in_share(const Shard& shard, std::string_view variant_name);

// The variants of the manifest in the shard's share, in the manifest's order.
std::vector<std::size_t> share_of(const Shard& shard, const Manifest& m);

// The exhaustive search restricted to the shard's share. Throws kiln::Error for another strategy:
// a budgeted search's next proposal depends on every measurement before it, which the other
// shards hold.
std::unique_ptr<Searcher> shard_searcher(std::unique_ptr<Searcher> whole, const Manifest& m, const Shard& shard);

// What a shard's run measured: its share and how it went, and what comes next.
void print_shard_summary(const Manifest& m, const Shard& shard, const std::vector<VariantOutcome>& outcomes,
                         std::size_t ran, const std::string& worklog, std::ostream& out);

}  // namespace kiln::tuner
