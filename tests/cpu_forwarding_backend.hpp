// A second device for tests: the CPU backend's work behind another device's name (a test registers
// it for cuda:0 with xp::detail::register_backend). Every entry point the backend must have is
// forwarded to the CPU backend; the optional ones (run_flat, reduce_fused, linalg, fft) keep the
// Backend defaults ("not here"). A test derives from it and overrides what it counts or refuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/backend.hpp"

namespace xp_test {

class CpuForwardingBackend : public xp::detail::Backend {
 public:
  using View = xp::detail::View;
  xp::detail::Backend& cpu = xp::detail::cpu_backend();

  const char* name() const noexcept override { return "cpu-forwarding"; }
  xp::detail::Allocation allocate(std::size_t n) override { return cpu.allocate(n); }
  void run_fused(const xp::detail::FusedProgram& p) override { cpu.run_fused(p); }
  void reduce(xp::detail::ReduceOp op, const View& in, std::span<const int> axes, const View& out, double c) override {
    cpu.reduce(op, in, axes, out, c);
  }
  void cumulative(xp::detail::ReduceOp op, const View& in, int axis, const View& out, bool init) override {
    cpu.cumulative(op, in, axis, out, init);
  }
  void matmul(const View& a, const View& b, const View& out, xp::MatmulPrecision p) override {
    cpu.matmul(a, b, out, p);
  }
  void vecdot(const View& a, const View& b, const View& out) override { cpu.vecdot(a, b, out); }
  void take(const View& in, const View& ix, int axis, const View& out) override { cpu.take(in, ix, axis, out); }
  void sort(const View& k, const View& v, const View& i, bool d) override { cpu.sort(k, v, i, d); }
  void scatter(const View& dst, const View& ix, int axis, const View& v, bool u) override {
    cpu.scatter(dst, ix, axis, v, u);
  }
  std::int64_t count_true(const View& m) override { return cpu.count_true(m); }
  void flatnonzero(const View& m, const View& v, const View& out) override { cpu.flatnonzero(m, v, out); }
  void searchsorted(const View& s, const View& q, bool r, const View& out) override { cpu.searchsorted(s, q, r, out); }
  void fill_random(const xp::detail::RandomRequest& r, const View& out) override { cpu.fill_random(r, out); }
  void copy_to_host(const std::byte* s, void* d, std::size_t n) override { cpu.copy_to_host(s, d, n); }
  void copy_from_host(const void* s, std::byte* d, std::size_t n) override { cpu.copy_from_host(s, d, n); }
};

}  // namespace xp_test
