#include "xp/version.hpp"

#include "runtime/source_hash.hpp"

#define XP_STR2(x) #x
#define XP_STR(x) XP_STR2(x)

namespace xp {

std::string_view version() noexcept {
  return XP_STR(XP_VERSION_MAJOR) "." XP_STR(XP_VERSION_MINOR) "." XP_STR(XP_VERSION_PATCH);
}

std::string_view source_hash() noexcept {
  return detail::kSourceHash;
}

}  // namespace xp
