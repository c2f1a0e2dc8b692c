#pragma once

// The CPU backend's discrete Fourier transforms (Backend::fft): xp's own code, no library.
//
// Every transform is reduced to one kernel: length-m transforms of L columns at once (L = 64 bytes
// of reals: 8 float64 or 16 float32 lanes), the real and imaginary parts of each row in their own
// vector, computed by Stockham passes of radix 4, 2, 3, 5 and any other prime up to 199 (an O(p^2)
// butterfly), so that every operation is a whole-vector one with a twiddle common to the lanes.
// A batch of rows fills the lanes with L rows; a single long row is cut by the four-step algorithm
// (n = n1 * n2: n2 columns of length n1, a twiddle, n1 rows of length n2, each pass L at a time);
// a length whose prime factors make that slower than three transforms of a smooth length at least
// 2n - 1 goes through Bluestein's algorithm. Inverse transforms swap the real and imaginary parts on
// the way in and out (ifft(x) = swap(fft(swap(x)))), so only forward kernels exist. Real transforms
// of even length are complex ones of half the length plus a pass that splits the even and odd
// parts; of odd length, complex ones of the whole length. float32 computes in float32 (twiddles are
// computed in double and rounded). The kernels are compiled for AVX-512F, AVX2 and the x86-64
// baseline and the best one this CPU has is used. Plans are cached per (length, precision, kind).

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace xp::detail::cpu {

// Backend::fft's contract (backend.hpp): C-contiguous views, the transform along the last axis.
void fft(const FftCall& call, const View& in, const View& out);

// How a complex transform of length n is computed for `batch` rows: "stockham" (the rows in the
// lanes), "four-step" or "bluestein". For tests.
std::string fft_method(std::int64_t n, std::int64_t batch);

// The instruction sets the kernels can use on this CPU, best first, ending with "baseline"; and a
// switch to another one of them (nullptr: the best again), false when it is not available. For tests;
// not for use while transforms run.
std::vector<std::string> fft_isas_available();
bool set_fft_isa_for_testing(const char* isa) noexcept;
const char* fft_isa() noexcept;

}  // namespace xp::detail::cpu
