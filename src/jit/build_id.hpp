#pragma once

#include <string>

namespace xp::detail {

// The GNU build ID of the binary xp's code was linked into (libxp, or a program that links xp's
// objects directly), in hex: it changes whenever any of that code does. "" when the linker wrote
// none. Read once from the loaded image's notes.
const std::string& build_id();

}  // namespace xp::detail
