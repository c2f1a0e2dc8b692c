#pragma once

namespace xp::detail {

// SHA-256 (hex) of the source files this library was built from, written at build time by
// cmake/source_hash.cmake; scripts/source_hash.sh prints the same for a checkout.
extern const char kSourceHash[];

}  // namespace xp::detail
