#include "cache_key.hpp"

#include <xxhash.h>

#include <cstdio>

#include "kiln/error.hpp"
#include "kiln/hash.hpp"
#include "kiln/worklog/worklog.hpp"

namespace kiln::tuner {

struct KeyHasher::State {
  Fnv1a64 fnv;
  XXH3_state_t* xxh = nullptr;
};

std::string_view key_hash_name(KeyVersion v) { return v == KeyVersion::fnv1a64 ? "FNV-1a 64" : "XXH3-128"; }

std::optional<KeyVersion> key_version_of(std::string_view key) {
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  if (key.size() == 16) return KeyVersion::fnv1a64;
  if (key.size() == 32) return KeyVersion::xxh3_128;
  return std::nullopt;
}

KeyVersion key_version_from(int stored) {
  if (stored == 1) return KeyVersion::fnv1a64;
  if (stored == 2) return KeyVersion::xxh3_128;
  throw Error("key version " + std::to_string(stored) + " is not one this Kiln knows (1: FNV-1a 64, 2: XXH3-128)");
}

KeyVersion context_key_version(const worklog::Worklog& log, std::string_view context_key) {
  for (const auto& s : log.sessions()) {
    if (s.context_key == context_key) return key_version_from(s.key_version);
  }
  if (auto v = key_version_of(context_key)) return *v;
  throw Error(log.path() + ": context " + std::string(context_key) + " has no session and is not a key Kiln makes");
}

KeyHasher::KeyHasher(KeyVersion version) : version_(version), state_(std::make_unique<State>()) {
  if (version_ == KeyVersion::xxh3_128) {
    state_->xxh = XXH3_createState();
    if (state_->xxh == nullptr || XXH3_128bits_reset(state_->xxh) != XXH_OK) throw Error("XXH3: cannot start a hash");
  }
}

KeyHasher::~KeyHasher() {
  if (state_ && state_->xxh) XXH3_freeState(state_->xxh);
}

KeyHasher& KeyHasher::update(std::string_view bytes) {
  if (version_ == KeyVersion::fnv1a64) {
    state_->fnv.update(bytes);
  } else if (XXH3_128bits_update(state_->xxh, bytes.data(), bytes.size()) != XXH_OK) {
    throw Error("XXH3: cannot hash");
  }
  return *this;
}

KeyHasher& KeyHasher::field(std::string_view bytes) {
  update(std::to_string(bytes.size()));
  update(":");
  return update(bytes);
}

std::string KeyHasher::hex() const {
  if (version_ == KeyVersion::fnv1a64) return state_->fnv.hex();
  const XXH128_hash_t h = XXH3_128bits_digest(state_->xxh);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string key_hash(KeyVersion version, std::string_view bytes) { return KeyHasher(version).update(bytes).hex(); }

std::uint64_t stable_hash(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

}  // namespace kiln::tuner
