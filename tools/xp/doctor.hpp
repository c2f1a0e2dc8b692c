#pragma once

namespace xp_cli {

// `xp doctor [--json]`: what xp found and how to fix what is wrong. Returns the exit code:
// 0 when xp can run on some device, 1 when the user asked for something unavailable,
// 2 when the environment is broken (a malformed variable).
int doctor(bool json);

}  // namespace xp_cli
