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

}  // namespace xp
