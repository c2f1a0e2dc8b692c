#pragma once

#include <string>

#include "xp/config.hpp"

namespace xp::detail {

// Writes "xp: <level>: message" to stderr when XP_LOG lets that level through.
void log(LogLevel level, const std::string& message);
// The same, at most once per process for a given message.
void log_once(LogLevel level, const std::string& message);

}  // namespace xp::detail
