#pragma once

// Internals of ew_math.cpp's dispatch, for its tests: which implementation paths this machine has,
// and a switch to run math_tile_fn on another one of them (the scalar fallback included).

#include <string>
#include <vector>

#include "backend/ir.hpp"

namespace xp::detail::cpu {

// The paths this CPU and C library support, best first, always ending with "scalar": a subset of
// {"avx512", "avx2", "sse4", "scalar"} ("avx512" etc. use glibc's libmvec vector functions).
std::vector<std::string> math_isas_available();

// Makes math_tile_fn, math_ulp_bound and math_isa use `isa` (one of math_isas_available()), or the
// best path again for nullptr. Returns false (and changes nothing) when `isa` is not available.
// Kernels returned before the switch keep their path. Not for concurrent use with math_tile_fn.
bool set_math_isa_for_testing(const char* isa) noexcept;

// What computes `op` on the current path: "libmvec" (a vector function) or "libm" (the C library's
// scalar function: the scalar path, or a libmvec without that function). nullptr when math_tile_fn
// has no kernel for (op, dtype).
const char* math_impl(Op op, DType dtype) noexcept;

}  // namespace xp::detail::cpu
