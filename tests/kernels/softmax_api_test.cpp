// The public softmax API (kiln/softmax.hpp) through the tuned library: bad arguments to every
// function throw kiln::SoftmaxError naming the function and the argument and write nothing; empty
// problems do nothing; in place equals out of place on the CPU. The CUDA functions check their
// arguments before any CUDA call, so their bad-argument cases run on machines without a GPU too.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "error_message.hpp"
#include "kiln/softmax.hpp"
#include "kiln_catch.hpp"

namespace {

using kiln_test::ContainsSubstring;

constexpr std::int64_t kRows = 3, kCols = 5;

// Runs a call that must throw SoftmaxError whose message names `function` and contains `what`.
void require_rejected(const std::function<void()>& call, const std::string& function, const std::string& what) {
  const std::string message = kiln_test::message_of<kiln::SoftmaxError>(call);
  INFO("message: " << message);
  REQUIRE_FALSE(message.empty());
  CHECK_THAT(message, ContainsSubstring(function));
  CHECK_THAT(message, ContainsSubstring(what));
}

// Every bad argument of one function, over float-sized (E = 4) or bf16-sized (E = 2) elements.
// `call(in, out, rows, cols)` calls the function with byte pointers cast to its element type.
template <class Call>
void check_bad_arguments(Call call, const std::string& function, std::size_t element_bytes, bool in_place) {
  alignas(16) unsigned char in[kRows * kCols * 4 + 16] = {};
  alignas(16) unsigned char out[kRows * kCols * 4 + 16];
  std::memset(out, 0x5a, sizeof out);
  unsigned char before[sizeof out];
  std::memcpy(before, out, sizeof out);

  require_rejected([&] { call(in, out, -1, kCols); }, function, "rows must be >= 0, got -1");
  require_rejected([&] { call(in, out, kRows, -7); }, function, "cols must be >= 0, got -7");
  require_rejected([&] { call(in, out, INT64_MAX / 2, 3); }, function, "bytes overflows 63 bits");
  // Elements that fit 63 bits, bytes that do not: the overlap test must not wrap around.
  const auto just_over = static_cast<std::int64_t>(INT64_MAX / static_cast<std::int64_t>(element_bytes) + 1);
  require_rejected([&] { call(in, out, just_over, 1); }, function, "bytes overflows 63 bits");
  require_rejected([&] { call(in, out, 1, just_over); }, function, "bytes overflows 63 bits");
  require_rejected([&] { call(nullptr, out, kRows, kCols); }, function, "in is null with 15 elements");
  require_rejected([&] { call(in, nullptr, kRows, kCols); }, function, "out is null with 15 elements");
  require_rejected([&] { call(in + 1, out, kRows, kCols); }, function,
                   "in must be " + std::to_string(element_bytes) + "-byte aligned");
  require_rejected([&] { call(in, out + 1, kRows, kCols); }, function,
                   "out must be " + std::to_string(element_bytes) + "-byte aligned");
  // out starting one element into in: overlapping, not in place.
  require_rejected([&] { call(out, out + element_bytes, kRows, kCols); }, function, "out overlaps in");
  require_rejected([&] { call(out + element_bytes, out, kRows, kCols); }, function, "out overlaps in");
  if (!in_place) require_rejected([&] { call(out, out, kRows, kCols); }, function, "out overlaps in");
  CHECK(std::memcmp(out, before, sizeof out) == 0);  // nothing written by any of them

  // Empty problems: nothing to read or write, null pointers accepted, nothing thrown.
  CHECK_NOTHROW(call(nullptr, nullptr, 0, kCols));
  CHECK_NOTHROW(call(nullptr, nullptr, kRows, 0));
  CHECK_NOTHROW(call(nullptr, nullptr, 0, 0));
}

}  // namespace

TEST_CASE("softmax api: bad arguments throw SoftmaxError naming the argument, writing nothing", "[softmax][api]") {
  check_bad_arguments(
      [](unsigned char* in, unsigned char* out, std::int64_t rows, std::int64_t cols) {
        kiln::cpu::softmax(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), rows, cols);
      },
      "kiln::cpu::softmax", 4, true);
  check_bad_arguments(
      [](unsigned char* in, unsigned char* out, std::int64_t rows, std::int64_t cols) {
        kiln::cpu::softmax_bf16(reinterpret_cast<const std::uint16_t*>(in), reinterpret_cast<std::uint16_t*>(out),
                                rows, cols);
      },
      "kiln::cpu::softmax_bf16", 2, true);
#if defined(KILN_HAVE_CUDA)
  // Host-side checks: the pointers are never dereferenced, so host memory stands for device
  // memory here and no GPU is needed.
  check_bad_arguments(
      [](unsigned char* in, unsigned char* out, std::int64_t rows, std::int64_t cols) {
        (void)kiln::cuda::softmax(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), rows, cols,
                                  nullptr);
      },
      "kiln::cuda::softmax (fp32)", 4, false);
  check_bad_arguments(
      [](unsigned char* in, unsigned char* out, std::int64_t rows, std::int64_t cols) {
        (void)kiln::cuda::softmax(reinterpret_cast<const __nv_bfloat16*>(in), reinterpret_cast<__nv_bfloat16*>(out),
                                  rows, cols, nullptr);
      },
      "kiln::cuda::softmax (bf16)", 2, false);
#endif
}

TEST_CASE("softmax api: in place equals out of place, and rows sum to one", "[softmax][api]") {
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 33}, {300, 64}, {5, 4099}}) {
    std::vector<float> in(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7919) % 97) / 9.0f - 5.0f;
    std::vector<float> out(in.size());
    kiln::cpu::softmax(in.data(), out.data(), rows, cols);
    std::vector<float> inout = in;
    kiln::cpu::softmax(inout.data(), inout.data(), rows, cols);
    INFO("rows=" << rows << " cols=" << cols);
    CHECK(std::memcmp(inout.data(), out.data(), out.size() * sizeof(float)) == 0);
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += out[static_cast<std::size_t>(r * cols + c)];
      CHECK(sum == kiln_test::Approx(1.0).epsilon(1e-5));
    }
  }
}
