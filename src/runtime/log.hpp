#pragma once

#include <string>

#include "xp/config.hpp"

namespace xp::detail {

// Writes "xp: <level>: message" to stderr when XP_LOG lets that level through.
void log(LogLevel level, const std::string& message);
// Whether XP_LOG lets `level` through: test it before building a message on a path that runs often.
bool log_enabled(LogLevel level) noexcept;
// The same, at most once per process for a given message.
void log_once(LogLevel level, const std::string& message);

}  // namespace xp::detail
