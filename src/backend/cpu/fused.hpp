#pragma once

#include "backend/ir.hpp"

namespace xp::detail::cpu {

// Evaluates a fused elementwise program (see ir.hpp) on the CPU's threads.
void run_fused(const FusedProgram& program);
// Backend::run_flat on the CPU: small operations (at most one parallel grain, which run_fused would
// run on the calling thread too) in tiles, with the kernel run_fused would pick; false otherwise.
bool run_flat(Op op, DType operand, DType result, const std::byte* const* args, int nargs, std::byte* out,
              std::int64_t n);

// Outputs (all contiguous) of at least this many bytes in all are written with streaming
// (non-temporal) stores on x86-64: kStreamBytes, 32 MiB, by default.
std::int64_t stream_threshold() noexcept;
// For tests: sets the threshold (0: every contiguous output streams; negative: the default) and
// returns the previous one.
std::int64_t set_stream_threshold(std::int64_t bytes) noexcept;
// The bytes each streaming store writes: 64 with AVX-512, 32 with AVX, else 16 (SSE2); 0 where
// there are no streaming stores. For tests, set_stream_width picks a narrower one (16, 32; 0 or
// anything wider than the CPU has: the widest) and returns the previous width.
int stream_width() noexcept;
int set_stream_width(int bytes) noexcept;
// For tests: how many programs have been run with streaming stores in this process.
std::uint64_t streamed_runs() noexcept;

}  // namespace xp::detail::cpu
