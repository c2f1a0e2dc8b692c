#pragma once

#include "backend/ir.hpp"

namespace xp::detail::cpu {

// Evaluates a fused elementwise program (see ir.hpp) on the CPU's threads.
void run_fused(const FusedProgram& program);

}  // namespace xp::detail::cpu
