// The hash of the worklog's cache keys: the context key, each variant's source hash and the
// fingerprints of problem sets. Keys are versioned (worklog schema version 6 says why): version 2,
// XXH3-128 (32 hex digits), for every new context; version 1, FNV-1a 64 (16 hex digits), for the
// contexts a worklog started before, so that their rows stay found. Other hashes Kiln takes (the
// space hash a record names, seeds, the domain's sample) are no cache keys and stay FNV-1a 64
// (kiln/hash.hpp): changing them would change the committed records and headers.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::tuner {

enum class KeyVersion { fnv1a64 = 1, xxh3_128 = 2 };
inline constexpr KeyVersion current_key_version = KeyVersion::xxh3_128;

// "FNV-1a 64" or "XXH3-128".
std::string_view key_hash_name(KeyVersion v);
// The version of a stored key from its form (16 or 32 hex digits), or nothing for another form.
std::optional<KeyVersion> key_version_of(std::string_view key);
// The version a session's key_version column holds; throws kiln::Error for another number.
KeyVersion key_version_from(int stored);

}  // namespace kiln::tuner
namespace kiln::worklog {
class Worklog;
}
namespace kiln::tuner {

// The key version of a context in a worklog: its sessions' key_version, or the key's form when no
// session names it; throws kiln::Error when neither says.
KeyVersion context_key_version(const worklog::Worklog& log, std::string_view context_key);

class KeyHasher {
 public:
  explicit KeyHasher(KeyVersion version);
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;

  KeyHasher& update(std::string_view bytes);
  // Feeds a length prefix first, so that ("ab","c") and ("a","bc") differ.
  KeyHasher& field(std::string_view bytes);
  std::string hex() const;  // lower-case, 16 (version 1) or 32 (version 2) digits

 private:
  struct State;
  KeyVersion version_;
  std::unique_ptr<State> state_;
};

std::string key_hash(KeyVersion version, std::string_view bytes);

// A stable 64-bit hash of a name (XXH3-64, seed 0), the same on every machine and in every Kiln
// that has XXH3: what `kiln tune --shard` splits the work by.
std::uint64_t stable_hash(std::string_view bytes);

}  // namespace kiln::tuner
