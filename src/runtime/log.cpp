#include "runtime/log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

#include "xp/error.hpp"

namespace xp::detail {

namespace {
LogLevel threshold() {
  try {
    return config().log;
  } catch (const ConfigError&) {
    return LogLevel::warn;
  }
}
const char* label(LogLevel l) {
  switch (l) {
    case LogLevel::error:
      return "error";
    case LogLevel::warn:
      return "warning";
    case LogLevel::info:
      return "info";
    case LogLevel::debug:
      return "debug";
  }
  return "";
}
}  // namespace

bool log_enabled(LogLevel level) noexcept {
  return static_cast<int>(level) <= static_cast<int>(threshold());
}

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  std::fprintf(stderr, "xp: %s: %s\n", label(level), message.c_str());
}

void log_once(LogLevel level, const std::string& message) {
  static std::mutex m;
  static std::set<std::string> said;
  {
    std::lock_guard<std::mutex> lock(m);
    if (!said.insert(message).second) return;
  }
  log(level, message);
}

}  // namespace xp::detail
