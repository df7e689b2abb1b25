// Kiln's version, part of every cache key: a new harness may time differently.
#pragma once

namespace kiln::tuner {
inline constexpr const char* kiln_version = KILN_VERSION;
}  // namespace kiln::tuner
