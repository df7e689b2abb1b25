#include "shard.hpp"

#include <charconv>
#include <ostream>

#include "cache_key.hpp"
#include "kiln/error.hpp"

namespace kiln::tuner {
namespace {

class ShareSearch final : public Searcher {
 public:
  ShareSearch(std::unique_ptr<Searcher> whole, const Manifest& m, const Shard& shard)
      : whole_(std::move(whole)), manifest_(m), shard_(shard), planned_(share_of(shard, m).size()) {}
  std::string name() const override { return whole_->name(); }
  std::optional<std::size_t> propose() override {
    while (auto next = whole_->propose()) {
      if (in_share(shard_, manifest_.variants[*next].name)) return next;
    }
    return std::nullopt;
  }
  void observe(const Evaluation& e) override { whole_->observe(e); }
  // The whole search's committed proposals in this share: compiled on demand in one batch.
  std::vector<std::size_t> upcoming(std::size_t limit) const override {
    std::vector<std::size_t> mine;
    for (std::size_t v : whole_->upcoming(manifest_.variants.size())) {
      if (mine.size() >= limit) break;
      if (in_share(shard_, manifest_.variants[v].name)) mine.push_back(v);
    }
    return mine;
  }
  std::size_t planned() const override { return planned_; }
  std::string hypothesis() const override { return whole_->hypothesis() + " (shard " + shard_.text() + ")"; }

 private:
  std::unique_ptr<Searcher> whole_;
  const Manifest& manifest_;
  Shard shard_;
  std::size_t planned_;
};

std::optional<std::size_t> parse_count(std::string_view text) {
  std::size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const std::string shown = "--shard " + std::string(text);
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) throw Error(shown + ": expected i/N, e.g. 0/4 (shard i of N, from 0)");
  auto index = parse_count(text.substr(0, slash));
  auto count = parse_count(text.substr(slash + 1));
  if (!index || !count) throw Error(shown + ": expected i/N with whole numbers, e.g. 0/4");
  if (*count < 1 || *count > 4096) throw Error(shown + ": N must be 1 to 4096");
  if (*index >= *count) {
    throw Error(shown + ": i must be below N (shards are numbered from 0: 0/" + std::to_string(*count) + " to " +
                std::to_string(*count - 1) + "/" + std::to_string(*count) + ")");
  }
  return {*index, *count};
}

bool in_share(const Shard& shard, std::string_view variant_name) {
  return stable_hash(variant_name) % shard.count == shard.index;
}

std::vector<std::size_t> share_of(const Shard& shard, const Manifest& m) {
  std::vector<std::size_t> share;
  for (std::size_t i = 0; i < m.variants.size(); ++i) {
    if (in_share(shard, m.variants[i].name)) share.push_back(i);
  }
  return share;
}

std::unique_ptr<Searcher> shard_searcher(std::unique_ptr<Searcher> whole, const Manifest& m, const Shard& shard) {
  if (whole->name() != "exhaustive") {
    throw Error("--shard " + shard.text() + " needs the exhaustive search, not " + whole->name() +
                ": a budgeted search's next proposal depends on every measurement before it, and the other shards "
                "hold those");
  }
  return std::make_unique<ShareSearch>(std::move(whole), m, shard);
}

void print_shard_summary(const Manifest& m, const Shard& shard, const std::vector<VariantOutcome>& outcomes,
                         std::size_t ran, const std::string& worklog, std::ostream& out) {
  std::size_t passed = 0, invalid = 0, failed = 0;
  for (const auto& oc : outcomes) {
    if (!oc.failure) {
      ++passed;
    } else if (*oc.failure == worklog::FailureKind::correctness) {
      ++invalid;
    } else {
      ++failed;
    }
  }
  out << "kiln: " << m.kernel << " shard " << shard.text() << ": " << outcomes.size() << " of " << m.variants.size()
      << " variants evaluated, " << passed << " passed, " << invalid << " wrong, " << failed
      << " failed to build or run; " << ran << " measured now\n"
      << "kiln: no record or header from a shard: merge the shards' worklogs (kiln merge --out W " << worklog
      << " ...), then kiln record (or kiln tune without --shard) on W\n";
}

}  // namespace kiln::tuner
