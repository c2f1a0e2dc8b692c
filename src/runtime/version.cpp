#include "xp/version.hpp"

#define XP_STR2(x) #x
#define XP_STR(x) XP_STR2(x)

namespace xp {

std::string_view version() noexcept {
  return XP_STR(XP_VERSION_MAJOR) "." XP_STR(XP_VERSION_MINOR) "." XP_STR(XP_VERSION_PATCH);
}

}  // namespace xp
