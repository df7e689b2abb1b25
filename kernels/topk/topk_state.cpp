// kiln::TopkState: the streaming top-k. Entries are ranked as the one-shot call ranks them (key
// descending, then global index ascending), and that order is total, so the best k of a union
// are the best k of the parts' best k: feeding and merging in any grouping gives the one-shot
// result.
#include <algorithm>
#include <string>

#include "kiln/topk.hpp"
#include "topk_args.hpp"
#include "topk_order.hpp"

namespace kiln {

namespace {

using ::kiln::topk::reject;

}  // namespace

TopkState::TopkState(std::int64_t rows, std::int64_t k, TopkMode mode) : rows_(rows), k_(k), mode_(mode) {
  constexpr const char* kWho = "kiln::TopkState";
  if (rows < 0) reject(kWho, "rows must be >= 0, got " + std::to_string(rows));
  if (k < 1 || k > kTopkMaxN) reject(kWho, "k must be in 1.." + std::to_string(kTopkMaxN) + ", got " + std::to_string(k));
  if (rows > 0 && rows > INT64_MAX / k) reject(kWho, "rows x k overflows 64 bits");
  ::kiln::topk::require_mode(kWho, mode);
  best_.resize(static_cast<std::size_t>(rows));
}

void TopkState::absorb(std::int64_t row, std::vector<Entry>& incoming) {
  auto& best = best_[static_cast<std::size_t>(row)];
  const auto before = [](const Entry& a, const Entry& b) { return a.key != b.key ? a.key > b.key : a.index < b.index; };
  std::sort(incoming.begin(), incoming.end(), before);
  std::vector<Entry> merged;
  merged.reserve(best.size() + incoming.size());
  std::merge(best.begin(), best.end(), incoming.begin(), incoming.end(), std::back_inserter(merged), before);
  if (static_cast<std::int64_t>(merged.size()) > k_) merged.resize(static_cast<std::size_t>(k_));
  best = std::move(merged);
}

void TopkState::feed(const float* chunk, std::int64_t chunk_n, std::int64_t offset) {
  constexpr const char* kWho = "kiln::TopkState::feed";
  if (chunk_n < 0) reject(kWho, "chunk_n must be >= 0, got " + std::to_string(chunk_n));
  if (chunk_n > kTopkMaxN) reject(kWho, "chunk_n must be at most " + std::to_string(kTopkMaxN));
  if (offset < 0) reject(kWho, "offset must be >= 0, got " + std::to_string(offset));
  if (offset > INT64_MAX - chunk_n) reject(kWho, "offset + chunk_n overflows 64 bits");
  if (rows_ > 0 && chunk_n > 0 && rows_ > INT64_MAX / chunk_n) reject(kWho, "rows x chunk_n overflows 64 bits");
  ::kiln::topk::require_pointer(kWho, "chunk", chunk, rows_ * chunk_n);
  if (chunk_n == 0 || rows_ == 0) {
    seen_ += chunk_n;
    return;
  }
  const std::int64_t count = std::min(k_, chunk_n);
  std::vector<float> values(static_cast<std::size_t>(rows_ * count));
  std::vector<std::int64_t> indices(values.size());
  ::kiln::cpu::topk(chunk, rows_, chunk_n, count, mode_, values.data(), indices.data());
  for (auto& i : indices) i += offset;
  feed_selected(values.data(), indices.data(), count, chunk_n);
}

void TopkState::feed_selected(const float* values, const std::int64_t* indices, std::int64_t count,
                              std::int64_t elements) {
  constexpr const char* kWho = "kiln::TopkState::feed_selected";
  if (elements < 0) reject(kWho, "elements must be >= 0, got " + std::to_string(elements));
  if (count != std::min(k_, elements))
    reject(kWho, "count must be min(k, elements) = " + std::to_string(std::min(k_, elements)) + ", got " +
                     std::to_string(count));
  if (seen_ > INT64_MAX - elements) reject(kWho, "the elements seen overflow 64 bits");
  ::kiln::topk::require_pointer(kWho, "values", values, rows_ * count);
  ::kiln::topk::require_pointer(kWho, "indices", indices, rows_ * count);
  for (std::int64_t j = 0; j < rows_ * count; ++j)
    if (indices[j] < 0) reject(kWho, "indices must be >= 0, got " + std::to_string(indices[j]) + " at " + std::to_string(j));
  const bool smallest = mode_ == TopkMode::smallest;
  std::vector<Entry> incoming(static_cast<std::size_t>(count));
  for (std::int64_t r = 0; r < rows_; ++r) {
    for (std::int64_t j = 0; j < count; ++j) {
      const float v = values[r * count + j];
      incoming[j] = {::kiln::topk::key_of(::kiln::topk::float_bits(v), smallest), indices[r * count + j], v};
    }
    absorb(r, incoming);
  }
  seen_ += elements;
}

void TopkState::merge(const TopkState& other) {
  constexpr const char* kWho = "kiln::TopkState::merge";
  if (&other == this) reject(kWho, "a state cannot be merged with itself (its elements would count twice)");
  if (other.rows_ != rows_ || other.k_ != k_ || other.mode_ != mode_)
    reject(kWho, "states differ: rows " + std::to_string(rows_) + " and " + std::to_string(other.rows_) + ", k " +
                     std::to_string(k_) + " and " + std::to_string(other.k_) + ", mode " +
                     (mode_ == TopkMode::largest ? "largest" : "smallest") + " and " +
                     (other.mode_ == TopkMode::largest ? "largest" : "smallest"));
  if (seen_ > INT64_MAX - other.seen_) reject(kWho, "the elements seen overflow 64 bits");
  for (std::int64_t r = 0; r < rows_; ++r) {
    std::vector<Entry> incoming = other.best_[static_cast<std::size_t>(r)];
    absorb(r, incoming);
  }
  seen_ += other.seen_;
}

void TopkState::finalize(float* values, std::int64_t* indices) const {
  constexpr const char* kWho = "kiln::TopkState::finalize";
  if (rows_ > 0 && seen_ < k_)
    reject(kWho, "k = " + std::to_string(k_) + " needs at least k elements per row, " + std::to_string(seen_) + " were fed");
  ::kiln::topk::require_pointer(kWho, "values", values, rows_ * k_);
  ::kiln::topk::require_pointer(kWho, "indices", indices, rows_ * k_);
  for (std::int64_t r = 0; r < rows_; ++r) {
    const auto& best = best_[static_cast<std::size_t>(r)];
    for (std::int64_t j = 0; j < k_; ++j) {
      values[r * k_ + j] = best[static_cast<std::size_t>(j)].value;
      indices[r * k_ + j] = best[static_cast<std::size_t>(j)].index;
    }
  }
}

}  // namespace kiln
