// The public top-k API (kiln/topk.hpp) through the tuned library: the documented order (NaN above
// +inf, -0 equal to +0, ties by lower index) in both modes; the streaming state gives the one-shot
// result bit for bit under several chunkings and merge orders; bad input to every function throws
// kiln::TopkError naming the function and the argument, and writes nothing.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kiln/topk.hpp"
#include "kiln_catch.hpp"

namespace {

using kiln::TopkMode;
using kiln_test::ContainsSubstring;

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float from_bits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

struct Result {
  std::vector<float> values;
  std::vector<std::int64_t> indices;
  bool operator==(const Result& o) const {
    return indices == o.indices && values.size() == o.values.size() &&
           std::memcmp(values.data(), o.values.data(), values.size() * sizeof(float)) == 0;
  }
};

Result one_shot(const std::vector<float>& in, std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode) {
  Result r{std::vector<float>(static_cast<std::size_t>(rows * k)), std::vector<std::int64_t>(static_cast<std::size_t>(rows * k))};
  kiln::cpu::topk(in.data(), rows, n, k, mode, r.values.data(), r.indices.data());
  return r;
}

// Columns [begin, end) of every row, as a chunk.
std::vector<float> columns(const std::vector<float>& in, std::int64_t rows, std::int64_t n, std::int64_t begin,
                           std::int64_t end) {
  std::vector<float> chunk;
  for (std::int64_t r = 0; r < rows; ++r) chunk.insert(chunk.end(), in.begin() + r * n + begin, in.begin() + r * n + end);
  return chunk;
}

Result finalize(const kiln::TopkState& s) {
  Result r{std::vector<float>(static_cast<std::size_t>(s.rows() * s.k())),
           std::vector<std::int64_t>(static_cast<std::size_t>(s.rows() * s.k()))};
  s.finalize(r.values.data(), r.indices.data());
  return r;
}

// Inputs with many ties (values from a small set) and NaN, infinities and signed zeros.
std::vector<float> tied_input(std::int64_t count, std::uint32_t seed) {
  std::vector<float> x(static_cast<std::size_t>(count));
  std::uint32_t h = seed;
  for (auto& v : x) {
    h = h * 1664525u + 1013904223u;
    const std::uint32_t pick = h >> 24;
    if (pick < 4) v = from_bits(0x7FC00000u | (h & 0xFFFu) | (pick == 0 ? 0x80000000u : 0u));
    else if (pick < 8) v = INFINITY;
    else if (pick < 12) v = -INFINITY;
    else if (pick < 16) v = -0.0f;
    else if (pick < 20) v = 0.0f;
    else v = static_cast<float>(static_cast<int>((h >> 8) % 41) - 20) * 0.25f;
  }
  return x;
}

}  // namespace

TEST_CASE("topk api: the documented order in both modes", "[topk][cpu]") {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const float neg_nan = from_bits(0xFFC00123u);
  const std::vector<float> x = {1.0f, qnan, -INFINITY, INFINITY, -0.0f, 0.0f, neg_nan, 1.0f};
  Result r = one_shot(x, 1, 8, 8, TopkMode::largest);
  CHECK(r.indices == std::vector<std::int64_t>{1, 6, 3, 0, 7, 4, 5, 2});
  // Values are the input elements, bit for bit: the NaN payloads and the zero's sign kept.
  for (std::size_t j = 0; j < 8; ++j) CHECK(bits(r.values[j]) == bits(x[static_cast<std::size_t>(r.indices[j])]));
  r = one_shot(x, 1, 8, 8, TopkMode::smallest);
  CHECK(r.indices == std::vector<std::int64_t>{2, 4, 5, 0, 7, 3, 1, 6});
  r = one_shot(x, 1, 8, 2, TopkMode::largest);
  CHECK(r.indices == std::vector<std::int64_t>{1, 6});
  r = one_shot(x, 1, 8, 3, TopkMode::smallest);
  CHECK(r.indices == std::vector<std::int64_t>{2, 4, 5});

  // Equal values: lower index first, over rows longer than every split of the row.
  const std::int64_t n = 300000;
  const std::vector<float> same(2 * n, 3.5f);
  r = one_shot(same, 2, n, 1000, TopkMode::smallest);
  for (std::int64_t j = 0; j < 1000; ++j) {
    CHECK(r.indices[j] == j);
    CHECK(r.indices[1000 + j] == j);
  }
  // rows == 0 does nothing.
  CHECK_NOTHROW(kiln::cpu::topk(nullptr, 0, 5, 2, TopkMode::largest, nullptr, nullptr));
}

TEST_CASE("topk api: streaming gives the one-shot result bit for bit", "[topk][cpu]") {
  const std::int64_t rows = 3, n = 100003;
  const std::vector<float> in = tied_input(rows * n, 11);
  for (const TopkMode mode : {TopkMode::largest, TopkMode::smallest}) {
    for (const std::int64_t k : {1, 37, 1024, 2048}) {
      INFO("k=" << k << " mode=" << (mode == TopkMode::largest ? "largest" : "smallest"));
      const Result expected = one_shot(in, rows, n, k, mode);
      // One state fed chunk after chunk, for several chunk sizes (smaller than k, prime, all).
      for (const std::int64_t chunk : {std::int64_t{7}, std::int64_t{1000}, std::int64_t{33331}, n}) {
        kiln::TopkState s(rows, k, mode);
        for (std::int64_t c = 0; c < n; c += chunk) {
          const std::int64_t end = std::min(n, c + chunk);
          s.feed(columns(in, rows, n, c, end).data(), end - c, c);
        }
        CHECK(s.seen() == n);
        CHECK(finalize(s) == expected);
      }
      // Three states over interleaved ranges (in no index order), merged in two orders.
      const std::int64_t cuts[] = {0, 20000, 51000, 77777, n};
      kiln::TopkState a(rows, k, mode), b(rows, k, mode), c(rows, k, mode);
      kiln::TopkState* owners[] = {&b, &a, &c, &a};
      for (int part = 3; part >= 0; --part)
        owners[part]->feed(columns(in, rows, n, cuts[part], cuts[part + 1]).data(), cuts[part + 1] - cuts[part], cuts[part]);
      kiln::TopkState ab = a, cb = c;
      ab.merge(b);
      ab.merge(c);
      cb.merge(b);
      cb.merge(a);
      CHECK(finalize(ab) == expected);
      CHECK(finalize(cb) == expected);
      CHECK(ab.seen() == n);
    }
  }
}

TEST_CASE("topk api: feed_selected adds another backend's selections", "[topk][cpu]") {
  const std::int64_t rows = 2, n = 5000, k = 100;
  const std::vector<float> in = tied_input(rows * n, 5);
  const Result expected = one_shot(in, rows, n, k, TopkMode::largest);
  kiln::TopkState s(rows, k, TopkMode::largest);
  for (std::int64_t c = 0; c < n; c += 2500) {
    Result part = one_shot(columns(in, rows, n, c, c + 2500), rows, 2500, k, TopkMode::largest);
    for (auto& i : part.indices) i += c;
    s.feed_selected(part.values.data(), part.indices.data(), k, 2500);
  }
  CHECK(finalize(s) == expected);
}

TEST_CASE("topk api: bad input throws TopkError naming the function and the argument", "[topk][cpu]") {
  std::vector<float> in(64, 1.0f), values(64, -7.0f);
  std::vector<std::int64_t> indices(64, -7);
  const auto untouched = [&] {
    for (std::size_t j = 0; j < 64; ++j) {
      if (values[j] != -7.0f || indices[j] != -7) return false;
    }
    return true;
  };
  const auto topk = [&](const float* i, std::int64_t rows, std::int64_t n, std::int64_t k, float* v, std::int64_t* x) {
    kiln::cpu::topk(i, rows, n, k, TopkMode::largest, v, x);
  };
  using kiln::TopkError;
  CHECK_THROWS_WITH(topk(in.data(), -1, 8, 2, values.data(), indices.data()), ContainsSubstring("kiln::cpu::topk: rows must be >= 0"));
  CHECK_THROWS_WITH(topk(in.data(), 1, 0, 1, values.data(), indices.data()), ContainsSubstring("n must be in 1.."));
  CHECK_THROWS_WITH(topk(in.data(), 1, -8, 1, values.data(), indices.data()), ContainsSubstring("n must be in 1.."));
  CHECK_THROWS_WITH(topk(in.data(), 1, 8, 9, values.data(), indices.data()), ContainsSubstring("k must be in 1..n (n = 8), got 9"));
  CHECK_THROWS_WITH(topk(in.data(), 1, 8, 0, values.data(), indices.data()), ContainsSubstring("k must be in 1..n"));
  CHECK_THROWS_WITH(topk(in.data(), 1, 8, -3, values.data(), indices.data()), ContainsSubstring("k must be in 1..n"));
  CHECK_THROWS_WITH(topk(nullptr, 2, 8, 2, values.data(), indices.data()), ContainsSubstring("in is null with 16 elements"));
  CHECK_THROWS_WITH(topk(in.data(), 2, 8, 2, nullptr, indices.data()), ContainsSubstring("values is null with 4 elements"));
  CHECK_THROWS_WITH(topk(in.data(), 2, 8, 2, values.data(), nullptr), ContainsSubstring("indices is null with 4 elements"));
  CHECK_THROWS_WITH(topk(in.data(), std::int64_t{1} << 40, std::int64_t{1} << 30, 2, values.data(), indices.data()),
                    ContainsSubstring("rows x n overflows"));
  CHECK_THROWS_AS(topk(reinterpret_cast<const float*>(reinterpret_cast<const char*>(in.data()) + 1), 1, 8, 2, values.data(),
                       indices.data()),
                  TopkError);
  CHECK_THROWS_WITH(topk(in.data(), 1, 8, 2, values.data(),
                         reinterpret_cast<std::int64_t*>(reinterpret_cast<char*>(indices.data()) + 4)),
                    ContainsSubstring("indices must be 8-byte aligned"));
  CHECK_THROWS_WITH(kiln::cpu::topk(in.data(), 1, 8, 2, static_cast<TopkMode>(7), values.data(), indices.data()),
                    ContainsSubstring("mode must be largest or smallest"));
  CHECK(untouched());

  CHECK_THROWS_WITH(kiln::TopkState(-1, 4, TopkMode::largest), ContainsSubstring("kiln::TopkState: rows must be >= 0"));
  CHECK_THROWS_WITH(kiln::TopkState(2, 0, TopkMode::largest), ContainsSubstring("k must be in 1.."));
  CHECK_THROWS_WITH(kiln::TopkState(2, 4, static_cast<TopkMode>(-1)), ContainsSubstring("mode must be largest or smallest"));

  kiln::TopkState s(2, 4, TopkMode::largest);
  CHECK_THROWS_WITH(s.feed(in.data(), -1, 0), ContainsSubstring("kiln::TopkState::feed: chunk_n must be >= 0"));
  CHECK_THROWS_WITH(s.feed(in.data(), 8, -5), ContainsSubstring("offset must be >= 0"));
  CHECK_THROWS_WITH(s.feed(nullptr, 8, 0), ContainsSubstring("chunk is null with 16 elements"));
  CHECK_THROWS_WITH(s.feed(in.data(), 8, INT64_MAX - 3), ContainsSubstring("offset + chunk_n overflows"));
  CHECK_THROWS_WITH(s.finalize(values.data(), indices.data()),
                    ContainsSubstring("kiln::TopkState::finalize: k = 4 needs at least k elements per row, 0 were fed"));
  CHECK_THROWS_WITH(s.feed_selected(values.data(), indices.data(), 3, 8), ContainsSubstring("count must be min(k, elements) = 4, got 3"));
  std::vector<std::int64_t> negative(8, -1);
  CHECK_THROWS_WITH(s.feed_selected(in.data(), negative.data(), 4, 8), ContainsSubstring("indices must be >= 0"));
  CHECK(s.seen() == 0);
  s.feed(in.data(), 8, 0);
  CHECK_THROWS_WITH(s.finalize(nullptr, indices.data()), ContainsSubstring("values is null with 8 elements"));
  CHECK_THROWS_WITH(s.finalize(values.data(), nullptr), ContainsSubstring("indices is null with 8 elements"));

  kiln::TopkState other_k(2, 5, TopkMode::largest), other_mode(2, 4, TopkMode::smallest), other_rows(3, 4, TopkMode::largest);
  CHECK_THROWS_WITH(s.merge(other_k), ContainsSubstring("kiln::TopkState::merge: states differ: rows 2 and 2, k 4 and 5"));
  CHECK_THROWS_WITH(s.merge(other_mode), ContainsSubstring("mode largest and smallest"));
  CHECK_THROWS_WITH(s.merge(other_rows), ContainsSubstring("rows 2 and 3"));
  CHECK_THROWS_WITH(s.merge(s), ContainsSubstring("cannot be merged with itself"));
  CHECK(s.seen() == 8);
  CHECK(untouched());
}
