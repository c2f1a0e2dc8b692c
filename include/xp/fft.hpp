#pragma once

// The Array API's `fft` extension (2024.12): every function, for float32, float64, complex64 and
// complex128 (float32 and complex64 compute in single precision, as the standard requires and
// NumPy 2 does not). On the CPU xp's own mixed-radix code (Bluestein's algorithm for lengths with
// a large prime factor); on a CUDA device cuFFT, opened at run time (XP_CUFFT names one), plans
// cached per shape. Results follow numpy.fft (docs/semantics.md, "FFT", states the accuracy).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "xp/array.hpp"

namespace xp::fft {

// How a transform is scaled: "backward" (the inverse divides by n), "ortho" (both by sqrt(n)),
// "forward" (the forward divides by n).
enum class Norm : std::uint8_t { backward, ortho, forward };
// "backward", "ortho" or "forward"; anything else is a ValueError.
XP_API Norm norm_from_string(std::string_view name);

// n: the transform's length along axis (x cut or zero-padded to it; default x's extent, for irfft
// and hfft 2 * (m - 1)). A real input is taken as complex; an integer or bool one is a TypeError.
XP_API Array fft(const Array& x, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
                 Norm norm = Norm::backward);
XP_API Array ifft(const Array& x, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
                  Norm norm = Norm::backward);
// s: the lengths along axes (default: x's extents; axes default: the last s.size() axes, or all).
XP_API Array fftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s = std::nullopt,
                  const std::optional<std::vector<int>>& axes = std::nullopt, Norm norm = Norm::backward);
XP_API Array ifftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s = std::nullopt,
                   const std::optional<std::vector<int>>& axes = std::nullopt, Norm norm = Norm::backward);
XP_API Array rfft(const Array& x, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
                  Norm norm = Norm::backward);
XP_API Array irfft(const Array& x, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
                   Norm norm = Norm::backward);
XP_API Array rfftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s = std::nullopt,
                   const std::optional<std::vector<int>>& axes = std::nullopt, Norm norm = Norm::backward);
XP_API Array irfftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s = std::nullopt,
                    const std::optional<std::vector<int>>& axes = std::nullopt, Norm norm = Norm::backward);
XP_API Array hfft(const Array& x, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
                  Norm norm = Norm::backward);
XP_API Array ihfft(const Array& x, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
                   Norm norm = Norm::backward);
// The sample frequencies [0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d * n) (rfftfreq: 0 .. n/2), of
// dtype float64 unless given (a real float dtype), on the device given (default: the default one).
XP_API Array fftfreq(std::int64_t n, double d = 1.0, std::optional<DType> dtype = std::nullopt,
                     std::optional<Device> device = std::nullopt);
XP_API Array rfftfreq(std::int64_t n, double d = 1.0, std::optional<DType> dtype = std::nullopt,
                      std::optional<Device> device = std::nullopt);
// The zero frequency moved to the middle (and back) along axes (default: all).
XP_API Array fftshift(const Array& x, const std::optional<std::vector<int>>& axes = std::nullopt);
XP_API Array ifftshift(const Array& x, const std::optional<std::vector<int>>& axes = std::nullopt);

}  // namespace xp::fft
