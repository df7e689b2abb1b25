// CPU row top-k. A row, or a range of its columns, is scanned in order in blocks of BLOCK
// elements: the block's keys (topk_order.hpp) are computed with vector instructions and compared
// with the current threshold, the key of the k-th best entry so far; only a block holding a key
// above it is walked element by element. Scanning in column order is what makes a key equal to
// the threshold safe to reject: its column is higher than every kept one, so it ranks lower.
// ALGO keeps the best entries in
//   heap:   a binary min-heap of k packed entries (each accepted element replaces the worst);
//   buffer: an unordered buffer of 4k entries, cut back to the best k by nth_element when full
//           (cheaper per accepted element when many are accepted: early in a row, or for large k);
// or, with ALGO select, filters nothing: every element's packed entry goes to a scratch array and
// nth_element picks the best k (no branch per element; pays when a large share of the row is
// accepted anyway, k a sizeable fraction of n).
// OpenMP runs rows in parallel, each thread with one selector (its keeping or scratch, reused from
// row to row: rows of a few elements cost little more than their allocation otherwise), taking
// rows in runs so that many short rows are not one scheduling step each; when there are fewer rows
// than threads, each row is also split into parts of at least CHUNK columns, selected in parallel
// and merged per row.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/choice.hpp"
#include "topk_order.hpp"

namespace kiln::topk {

template <class Config>
struct CpuTraits {
  static constexpr bool kHeap = Config::ALGO == "heap";
  static constexpr bool kSelect = Config::ALGO == "select";
  static constexpr std::int64_t kChunk = Config::CHUNK;  // fewest columns of a part of a split row
  static constexpr int kBlock = Config::BLOCK;           // elements filtered per vector step
  static_assert(Config::ALGO == "heap" || Config::ALGO == "buffer" || Config::ALGO == "select",
                "ALGO: heap, buffer or select");
  static_assert(kBlock >= 8 && kBlock <= 256, "BLOCK must be 8..256");
  static_assert(kChunk >= 1024, "CHUNK must be at least 1024");
};

namespace cpu_detail {

// Keys of BLOCK consecutive elements, branch-free so that the compiler vectorises it; returns
// whether any key is above `threshold`.
template <int BLOCK>
inline bool block_keys(const float* x, std::uint32_t flip, std::uint32_t threshold, std::uint32_t* keys) {
  std::uint32_t above = 0;
  for (int i = 0; i < BLOCK; ++i) {
    std::uint32_t u = float_bits(x[i]);
    const std::uint32_t nan = (u & 0x7FFFFFFFu) > 0x7F800000u ? 0xFFFFFFFFu : 0u;
    u = u == 0x80000000u ? 0u : u;
    const std::uint32_t mask = (u >> 31) ? 0xFFFFFFFFu : 0x80000000u;
    const std::uint32_t key = ((u ^ mask) | nan) ^ flip;
    keys[i] = key;
    above |= key > threshold ? 1u : 0u;
  }
  return above != 0;
}

// Sorts packed entries best (largest) first. From 64 entries on, a least-significant-digit radix
// sort over the bytes that differ between them (a row's columns share their high bytes, and keys
// close to the k-th best share theirs): a few linear passes where std::sort of a k-entry row took
// most of a large-k selection's time. On the 2-core CPU machine (2026-11-30, 2000 sets of a row's
// best, keys sharing their top byte, best of 5): level with std::sort at 64 entries, 1.8x faster
// at 128, 3.6x at 1024. `spare` is its scratch, reused by the caller.
inline void sort_best_first(std::vector<std::uint64_t>& v, std::vector<std::uint64_t>& spare) {
  if (v.size() < 64) {
    std::sort(v.begin(), v.end(), std::greater<>());
    return;
  }
  std::uint64_t any = 0, all = ~std::uint64_t{0};
  for (const std::uint64_t e : v) {
    any |= e;
    all &= e;
  }
  const std::uint64_t differ = any ^ all;
  spare.resize(v.size());
  for (int shift = 0; shift < 64; shift += 8) {
    if (((differ >> shift) & 0xFFu) == 0) continue;
    std::uint32_t count[257] = {};
    // Digits of the complement: ascending order of ~e is descending order of e.
    for (const std::uint64_t e : v) ++count[((~e >> shift) & 0xFFu) + 1];
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (const std::uint64_t e : v) spare[count[(~e >> shift) & 0xFFu]++] = e;
    v.swap(spare);
  }
}

// The best `k` entries seen, in one of the two keepings.
template <bool HEAP>
class Keeper {
 public:
  // Empty, for k entries; the storage of earlier rows is kept.
  void reset(std::int64_t k) {
    k_ = static_cast<std::size_t>(k);
    kept_.clear();
    kept_.reserve(HEAP ? k_ : 4 * k_);
    full_ = false;
    threshold_ = 0;
  }

  bool full() const { return full_; }
  std::uint32_t threshold() const { return threshold_; }

  void add(std::uint64_t p) {
    if constexpr (HEAP) {
      if (kept_.size() < k_) {
        kept_.push_back(p);
        std::push_heap(kept_.begin(), kept_.end(), std::greater<>());
        if (kept_.size() == k_) set_threshold(kept_.front());
      } else if (p > kept_.front()) {
        std::pop_heap(kept_.begin(), kept_.end(), std::greater<>());
        kept_.back() = p;
        std::push_heap(kept_.begin(), kept_.end(), std::greater<>());
        set_threshold(kept_.front());
      }
    } else {
      if (full_ && packed_key(p) <= threshold_) return;
      kept_.push_back(p);
      if (kept_.size() == 4 * k_) cut();
    }
  }

  // The kept entries, best first (at most k).
  std::vector<std::uint64_t>& sorted() {
    if (kept_.size() > k_) cut();
    sort_best_first(kept_, spare_);
    return kept_;
  }

 private:
  void set_threshold(std::uint64_t worst) {
    full_ = true;
    threshold_ = packed_key(worst);
  }
  void cut() {
    std::nth_element(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(k_ - 1), kept_.end(), std::greater<>());
    kept_.resize(k_);
    set_threshold(*std::min_element(kept_.begin(), kept_.end()));
  }

  std::size_t k_ = 0;
  std::vector<std::uint64_t> kept_;
  std::vector<std::uint64_t> spare_;  // sort_best_first's scratch
  bool full_ = false;
  std::uint32_t threshold_ = 0;
};

// One thread's selection of the best min(k, end - begin) packed entries of columns [begin, end)
// of a row, best first; the storage is reused by the thread's next row.
template <class Tr>
class Selector {
 public:
  const std::vector<std::uint64_t>& select(const float* x, std::int64_t begin, std::int64_t end, std::int64_t k,
                                           bool smallest) {
    if constexpr (Tr::kSelect) {
      scratch_.resize(static_cast<std::size_t>(end - begin));
      for (std::int64_t c = begin; c < end; ++c) {
        scratch_[static_cast<std::size_t>(c - begin)] =
            pack(key_of(float_bits(x[c]), smallest), static_cast<std::uint32_t>(c));
      }
      const auto best = static_cast<std::ptrdiff_t>(std::min(k, end - begin));
      if (best < static_cast<std::ptrdiff_t>(scratch_.size())) {
        std::nth_element(scratch_.begin(), scratch_.begin() + (best - 1), scratch_.end(), std::greater<>());
        scratch_.resize(static_cast<std::size_t>(best));
      }
      sort_best_first(scratch_, spare_);
      return scratch_;
    } else {
      constexpr int B = Tr::kBlock;
      const std::uint32_t flip = smallest ? 0xFFFFFFFFu : 0u;
      keeper_.reset(std::min(k, end - begin));
      alignas(64) std::uint32_t keys[B];
      std::int64_t c = begin;
      // Until k entries are kept every element is accepted (a key 0 included), so no filter.
      for (; c < end && !keeper_.full(); ++c) {
        keeper_.add(pack(key_of(float_bits(x[c]), smallest), static_cast<std::uint32_t>(c)));
      }
      for (; c + B <= end; c += B) {
        if (!block_keys<B>(x + c, flip, keeper_.threshold(), keys)) continue;
        for (int i = 0; i < B; ++i) {
          if (keys[i] > keeper_.threshold()) keeper_.add(pack(keys[i], static_cast<std::uint32_t>(c + i)));
        }
      }
      for (; c < end; ++c) {
        const std::uint32_t key = key_of(float_bits(x[c]), smallest);
        if (key > keeper_.threshold()) keeper_.add(pack(key, static_cast<std::uint32_t>(c)));
      }
      return keeper_.sorted();
    }
  }

 private:
  Keeper<Tr::kHeap> keeper_;
  std::vector<std::uint64_t> scratch_;  // ALGO select: the entries of the range
  std::vector<std::uint64_t> spare_;    // and sort_best_first's scratch
};

inline void write_row(const float* x, const std::uint64_t* best, std::int64_t k, float* values, std::int64_t* indices) {
  for (std::int64_t j = 0; j < k; ++j) {
    const std::uint32_t c = packed_column(best[j]);
    values[j] = x[c];
    indices[j] = c;
  }
}

}  // namespace cpu_detail

// values, indices: rows x k. Requires 1 <= k <= n < 2^31 (checked by the public API).
template <class Config>
void topk_rows(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest, float* values,
               std::int64_t* indices) {
  using Tr = CpuTraits<Config>;
  const std::int64_t threads = omp_get_max_threads();
  const std::int64_t by_size = (n + Tr::kChunk - 1) / Tr::kChunk;
  const std::int64_t wanted = (threads + rows - 1) / rows;
  const std::int64_t parts = std::max<std::int64_t>(1, std::min(by_size, wanted));
  if (parts == 1) {
    // Runs of rows, about eight per thread: dynamic, so that a thread slowed by its rows' data
    // (many accepted elements) leaves the rest to the others, without one step per short row.
    const auto run = static_cast<int>(std::max<std::int64_t>(1, rows / (8 * threads)));
#pragma omp parallel
    {
      cpu_detail::Selector<Tr> selector;
#pragma omp for schedule(dynamic, run)
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* x = in + r * n;
        const std::vector<std::uint64_t>& best = selector.select(x, 0, n, k, smallest);
        cpu_detail::write_row(x, best.data(), k, values + r * k, indices + r * k);
      }
    }
    return;
  }
  // Split rows: every part's best (padded with 0, which no entry is), then a merge per row.
  std::vector<std::uint64_t> partial(static_cast<std::size_t>(rows * parts * k), 0);
  const std::int64_t span = (n + parts - 1) / parts;
#pragma omp parallel
  {
    cpu_detail::Selector<Tr> selector;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t t = 0; t < rows * parts; ++t) {
      const std::int64_t r = t / parts, begin = (t % parts) * span, end = std::min(n, begin + span);
      if (begin >= end) continue;
      const std::vector<std::uint64_t>& best = selector.select(in + r * n, begin, end, k, smallest);
      std::copy(best.begin(), best.end(), partial.begin() + t * k);
    }
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t r = 0; r < rows; ++r) {
    auto first = partial.begin() + r * parts * k, last = first + parts * k;
    std::partial_sort(first, first + k, last, std::greater<>());
    cpu_detail::write_row(in + r * n, &*first, k, values + r * k, indices + r * k);
  }
}

}  // namespace kiln::topk
