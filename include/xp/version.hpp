#pragma once

#include <string_view>

#include "xp/export.hpp"

#define XP_VERSION_MAJOR 0
#define XP_VERSION_MINOR 1
#define XP_VERSION_PATCH 0

namespace xp {

// The version of the library loaded at run time ("0.1.0"); may differ from the header's macros
// when a program runs against a newer libxp.
XP_API std::string_view version() noexcept;

// The SHA-256 (64 hex digits) of the source files the loaded library was built from, computed at
// build time; `scripts/source_hash.sh` prints the same for a checkout. It names the tree a result
// came from where there is no git history (a copy of the tree).
XP_API std::string_view source_hash() noexcept;

}  // namespace xp
