// Host-side checking shared by the CPU and CUDA top-k workloads: the problem's shape, the inputs
// (one counter-based formula for both backends), which rows are compared, the reference and the
// exact comparison.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "kiln/check.hpp"
#include "kiln/counter_random.hpp"
#include "kiln/error.hpp"
#include "kiln/numeric.hpp"
#include "kiln/problem.hpp"
#include "kiln/reference_store.hpp"
#include "kiln/rng.hpp"
#include "topk_order.hpp"

namespace kiln::topk {

// Problems up to this many input elements are compared in full; larger ones on kSampleRows rows
// drawn from the seed, always including the first and the last row.
inline constexpr std::int64_t kFullCheckElements = std::int64_t{1} << 24;
inline constexpr std::int64_t kSampleRows = 16;

// The poison of the index output (the value output takes kiln::poison::f32).
inline constexpr std::int64_t kPoisonIndex = -0x5A5A5A5A5A5A5A5Bll;

struct Shape {
  std::int64_t rows = 0, n = 0, k = 0;
  bool smallest = false;
  bool special = false;  // NaN, infinities, signed zeros and many ties (input "special")
};

inline Shape shape_of(const Problem& problem) {
  Shape s{problem.i("rows"), problem.i("n"), problem.i("k"), false, false};
  const std::string& mode = problem.s("mode");
  const std::string& input = problem.s("input");
  if (mode != "largest" && mode != "smallest") throw Error("topk: mode must be largest or smallest, got " + mode);
  if (input != "normal" && input != "special") throw Error("topk: input must be normal or special, got " + input);
  if (s.rows < 1 || s.n < 1 || s.n > 2147483647) throw Error("topk: rows must be positive and n in 1..2^31-1");
  if (s.k < 1 || s.k > s.n) throw Error("topk: k must be in 1..n");
  s.smallest = mode == "smallest";
  s.special = input == "special";
  return s;
}

// Element (row, column) of a problem's input, the same on the host and the device.
//   normal:  approximately standard normal (a sum of four 24-bit uniforms): ties are rare but
//            present in long rows;
//   special: integers -8..8 (ties everywhere), and in 1 of 8 elements each of NaN (varying sign
//            and payload), +inf, -inf, -0.0 and +0.0 in turn.
KILN_HOST_DEVICE inline float input_value(std::uint64_t seed, std::int64_t row, std::int64_t column, std::int64_t n,
                                          bool special) {
  const auto at = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(column);
  const std::uint64_t h = ::kiln::random::mix64(::kiln::random::mix64(seed ^ 0x70B6'4B00'5EEDull) + at);
  if (!special) {
    float s = 0.0f;
    for (int i = 0; i < 4; ++i) s += static_cast<float>((h >> (16 * i)) & 0xFFFFu) * 0x1.0p-16f;
    return (s - 2.0f) * 1.7320508f;
  }
  const std::uint32_t bits[5] = {0x7FC00000u | static_cast<std::uint32_t>((h >> 40) & 0x3FFFFFu) |
                                     (static_cast<std::uint32_t>(h >> 62) << 31),
                                 0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000000u};
  if ((h & 7u) == 0) {
    const std::uint32_t u = bits[(h >> 3) % 5];
    float x;
#if defined(__CUDA_ARCH__)
    x = __uint_as_float(u);
#else
    std::memcpy(&x, &u, sizeof x);
#endif
    return x;
  }
  return static_cast<float>(static_cast<int>((h >> 8) % 17) - 8);
}

// Sorted row indices to compare with the reference.
inline std::vector<std::int64_t> rows_to_compare(const Shape& s, std::uint64_t seed) {
  std::vector<std::int64_t> picked;
  if (s.rows * s.n <= kFullCheckElements || s.rows <= kSampleRows) {
    picked.resize(static_cast<std::size_t>(s.rows));
    std::iota(picked.begin(), picked.end(), std::int64_t{0});
    return picked;
  }
  Rng rng(seed ^ 0x70B6'C0DE'5A3Dull);
  picked = {0, s.rows - 1};
  while (static_cast<std::int64_t>(picked.size()) < kSampleRows) {
    const auto r = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(s.rows));
    if (std::find(picked.begin(), picked.end(), r) == picked.end()) picked.push_back(r);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// The reference top-k of one row: the columns ordered by a stable sort on the key (so equal keys
// keep the lower column first), the first k. Only the columns whose key is at least the k-th
// largest key (found by nth_element) are sorted, which is the same result for any row.
inline std::vector<std::int64_t> reference_row(const float* x, std::int64_t n, std::int64_t k, bool smallest) {
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(n));
  for (std::int64_t c = 0; c < n; ++c) keys[c] = key_of(float_bits(x[c]), smallest);
  std::vector<std::uint32_t> sorted = keys;
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<>());
  const std::uint32_t kth = sorted[k - 1];
  std::vector<std::int64_t> columns;
  for (std::int64_t c = 0; c < n; ++c)
    if (keys[c] >= kth) columns.push_back(c);
  std::stable_sort(columns.begin(), columns.end(), [&](std::int64_t a, std::int64_t b) { return keys[a] > keys[b]; });
  columns.resize(static_cast<std::size_t>(k));
  return columns;
}

// Whether one output row (k values, k indices) is exactly the top k of its input row x, without
// sorting or copying the row: the entries must be written, their indices in range with the value
// bits of that input element, their packed entries (topk_order.hpp) strictly decreasing (so
// distinct and in the reference's order), and exactly k elements of the row must rank at or above
// the last of them, counted in one pass. Packed entries are a total order, so the k entries at
// or above a threshold are the only k best; these conditions hold exactly when the output equals
// the reference. One pass of a key and a compare an element (the reference takes two key arrays
// of n and a selection over them: 8 GiB and a selection of 2^30 keys at n = 2^30).
inline bool agrees(const float* values, const std::int64_t* indices, const float* x, std::int64_t n, std::int64_t k,
                   bool smallest) {
  std::uint64_t previous = ~std::uint64_t{0};
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int64_t c = indices[j];
    if (c < 0 || c >= n || bits_of(values[j]) != bits_of(x[c])) return false;
    const std::uint64_t e = pack(key_of(float_bits(x[c]), smallest), static_cast<std::uint32_t>(c));
    if (e >= previous) return false;
    previous = e;
  }
  // pack(key, c) >= previous, written as the key above, or equal with the column at most (no
  // 64-bit pack an element, no branch: the loop vectorises).
  const std::uint32_t key = packed_key(previous), column = packed_column(previous);
  std::int64_t at_or_above = 0;
  for (std::int64_t c = 0; c < n; ++c) {
    const std::uint32_t e = key_of(float_bits(x[c]), smallest);
    at_or_above += (e > key) | ((e == key) & (static_cast<std::uint32_t>(c) <= column));
  }
  return at_or_above == k;
}

// Exact comparison of one output row (k values, k indices) with the reference columns of its
// input row x. An entry matches when its index is the reference's and its value has the bits of
// that input element. The result is output "topk" with dtype fp32 (its values): rel_l2 is 0 when
// every compared entry matches and 1 otherwise, so any difference fails at every tolerance;
// max_abs_err and worst_* describe the first mismatch (value and reference value, or index and
// reference index when the values agree). A written NaN or infinity is non_finite only where
// the reference entry is not that same element, since such inputs may rightly be selected.
class ExactComparison {
 public:
  ExactComparison() {
    result_.output = "topk";
    result_.dtype = "fp32";
  }

  // A row that agrees() with its input: k entries compared, all matching.
  void agreeing(std::int64_t k) {
    result_.elements += static_cast<std::uint64_t>(k);
    result_.compared += static_cast<std::uint64_t>(k);
  }

  void row(const float* values, const std::int64_t* indices, const float* x, const std::vector<std::int64_t>& ref) {
    for (std::size_t j = 0; j < ref.size(); ++j) {
      const auto at = static_cast<std::int64_t>(result_.elements++);
      ++result_.compared;
      const std::uint32_t bits = bits_of(values[j]);
      if (bits == poison::f32 || indices[j] == kPoisonIndex) {
        if (result_.unwritten++ == 0) result_.first_unwritten_at = at;
        continue;
      }
      const float expected = x[ref[j]];
      const bool match = indices[j] == ref[j] && bits == bits_of(expected);
      if (match) continue;
      if (!std::isfinite(values[j]) && result_.non_finite++ == 0) result_.first_non_finite_at = at;
      if (mismatches_++ == 0) {
        result_.worst_at = at;
        const bool index_differs = indices[j] != ref[j] && bits == bits_of(expected);
        result_.worst_value = index_differs ? static_cast<double>(indices[j]) : static_cast<double>(values[j]);
        result_.worst_reference = index_differs ? static_cast<double>(ref[j]) : static_cast<double>(expected);
        result_.max_abs_err = std::fabs(result_.worst_value - result_.worst_reference);
      }
    }
  }

  // Entries of rows not compared: examined for being written and having an index in range.
  void written(const float* values, const std::int64_t* indices, std::int64_t k, std::int64_t n) {
    for (std::int64_t j = 0; j < k; ++j) {
      const auto at = static_cast<std::int64_t>(result_.elements++);
      if (bits_of(values[j]) == poison::f32 || indices[j] == kPoisonIndex) {
        if (result_.unwritten++ == 0) result_.first_unwritten_at = at;
      } else if (indices[j] < 0 || indices[j] >= n) {
        ++result_.compared;
        if (mismatches_++ == 0) {
          result_.worst_at = at;
          result_.worst_value = static_cast<double>(indices[j]);
          result_.worst_reference = 0.0;
          result_.max_abs_err = std::fabs(result_.worst_value);
        }
      }
    }
  }

  std::uint64_t mismatches() const { return mismatches_; }

  CheckResult result() const {
    CheckResult r = result_;
    r.rel_l2 = mismatches_ > 0 ? 1.0 : 0.0;
    return r;
  }

 private:
  CheckResult result_;
  std::uint64_t mismatches_ = 0;
};

// Walks every output row: rows in `compared` (sorted) against their input, which input_row(r)
// returns as a pointer to n floats (agrees(), and the reference only for a row that does not, to
// report its first mismatch); the others for being written.
template <class InputRow>
CheckResult compare_rows(const float* values, const std::int64_t* indices, const Shape& s,
                         const std::vector<std::int64_t>& compared, InputRow&& input_row) {
  ExactComparison cmp;
  std::size_t next = 0;
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const float* v = values + r * s.k;
    const std::int64_t* i = indices + r * s.k;
    if (next < compared.size() && compared[next] == r) {
      ++next;
      const float* x = input_row(r);
      if (agrees(v, i, x, s.n, s.k, s.smallest)) {
        cmp.agreeing(s.k);
      } else {
        cmp.row(v, i, x, reference_row(x, s.n, s.k, s.smallest));
      }
    } else {
      cmp.written(v, i, s.k, s.n);
    }
  }
  return cmp.result();
}

// The reference store's key (kiln/reference_store.hpp) of a problem's compared rows: the shape,
// the input kind and the seed decide the inputs and which rows are compared.
inline std::string stored_key(const Shape& s, std::uint64_t seed) {
  return "topk rows=" + std::to_string(s.rows) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (s.smallest ? " smallest" : " largest") + (s.special ? " special" : " normal") + " seed=" + std::to_string(seed);
}

// compare_rows, told by the reference store what an earlier check of the same inputs proved: a
// passing output's entries of the compared rows (index and value bits, 12 bytes an entry). An
// output whose compared rows hold exactly those entries agrees with its input, as that one did,
// and is judged without reading the input (input_row is not called); any other output is
// compared with its input as always, and a passing one is stored for the next check.
template <class InputRow>
CheckResult check_rows(const float* values, const std::int64_t* indices, const Shape& s,
                       const std::vector<std::int64_t>& compared, std::uint64_t seed, InputRow&& input_row) {
  constexpr std::size_t kEntry = sizeof(std::int64_t) + sizeof(std::uint32_t);
  const std::string key = stored_key(s, seed);
  const auto k = static_cast<std::size_t>(s.k);
  if (const std::optional<std::string> stored = reference_store::load(key, compared.size() * k * kEntry)) {
    bool same = true;
    const char* at = stored->data();
    for (std::size_t j = 0; j < compared.size() && same; ++j) {
      const std::size_t base = static_cast<std::size_t>(compared[j]) * k;
      for (std::size_t e = 0; e < k; ++e, at += kEntry) {
        std::int64_t index = 0;
        std::uint32_t bits = 0;
        std::memcpy(&index, at, sizeof index);
        std::memcpy(&bits, at + sizeof index, sizeof bits);
        if (indices[base + e] != index || bits_of(values[base + e]) != bits) {
          same = false;
          break;
        }
      }
    }
    if (same) {
      ExactComparison cmp;
      std::size_t next = 0;
      for (std::int64_t r = 0; r < s.rows; ++r) {
        if (next < compared.size() && compared[next] == r) {
          ++next;
          cmp.agreeing(s.k);
        } else {
          cmp.written(values + r * s.k, indices + r * s.k, s.k, s.n);
        }
      }
      return cmp.result();
    }
  }
  CheckResult result = compare_rows(values, indices, s, compared, std::forward<InputRow>(input_row));
  if (result.compared > 0 && result.unwritten == 0 && result.non_finite == 0 && result.rel_l2 == 0) {
    std::string bytes;
    bytes.reserve(compared.size() * k * kEntry);
    for (std::int64_t r : compared) {
      for (std::size_t e = 0; e < k; ++e) {
        const std::size_t i = static_cast<std::size_t>(r) * k + e;
        const std::uint32_t bits = bits_of(values[i]);
        bytes.append(reinterpret_cast<const char*>(&indices[i]), sizeof(std::int64_t));
        bytes.append(reinterpret_cast<const char*>(&bits), sizeof bits);
      }
    }
    reference_store::store(key, bytes);
  }
  return result;
}

}  // namespace kiln::topk
