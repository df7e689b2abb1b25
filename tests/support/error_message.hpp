// What a test reads of an error: its message.
#pragma once
#include <string>

namespace kiln_test {

// The message of the `E` that `f` throws, or "" when it throws none.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace kiln_test
