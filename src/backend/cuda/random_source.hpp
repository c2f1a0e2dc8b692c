#pragma once

// Random numbers on a CUDA device: the Philox streams of backend/philox.hpp, computed by kernels
// that include that very file (its text is embedded at build time and handed to NVRTC as a
// header), with the CPU backend's element-to-counter mapping (philox.cpp's for_each_element): one
// thread per Philox block, which serves 4 (32-bit and 16-bit floats), 2 (float64, and integers of a
// range up to 2^32) or 1 (integers of a wider range) consecutive elements. Uniform floats and
// integers are the CPU's bit for bit; normals differ from the CPU's by at most the two bounds of
// philox.hpp (kNormalUlpBoundCpu + kNormalUlpBoundGpu ulp), as CUDA's logf/sinf/cosf are not
// glibc's; float16 and bfloat16 normals are those float32 values rounded to nearest even.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"

namespace xp::detail::cuda {

// One kernel: (RandomKind, DType) decides the source.
struct RandomKernel {
  std::string source;       // the translation unit; includes philox_header()'s name
  std::string kernel_name;  // extern "C" __global__
};

// Throws ValueError for a dtype the kind does not take, with the CPU backend's message: uniform and
// normal take float dtypes, integers every integer dtype but bool.
RandomKernel random_kernel(RandomKind kind, DType dtype);
// The kernel's name ("xp_random_normal_bfloat16") and its program's key in the kernel cache, without
// its source.
std::string random_kernel_name(RandomKind kind, DType dtype);
std::string random_key(RandomKind kind, DType dtype);

// ("xp_philox.hpp", the text of backend/philox.hpp), for ProgramOptions::headers.
std::pair<std::string, std::string> philox_header();

// The NVRTC options of the kernels (the elementwise kernels' ones: --fmad=false).
std::vector<std::string> random_nvrtc_options();

// Elements each Philox block gives: 4, 2 or 1. `range` (high - low as unsigned 64-bit) matters for
// integers only.
unsigned elements_per_block(RandomKind kind, DType dtype, std::uint64_t range) noexcept;

// The kernels' block size (their __launch_bounds__), and a grid for n elements: one thread per
// Philox block, at most 16 blocks per multiprocessor (the threads loop over the rest).
constexpr unsigned kRandomBlockSize = 256;
unsigned random_grid(std::int64_t n, unsigned per_block, int multiprocessors) noexcept;

// The kernel's arguments, in order (8 bytes each): out (the device address), n, seed, stream,
// low (as unsigned 64-bit), range = high - low (unsigned 64-bit; integers only, else 0).

// Fills `out` (C-contiguous, on `device`) with draw (seed, stream) elements 0 .. n-1 as
// CpuBackend::fill_random does, on xp's stream of the device; throws ValueError for what the CPU
// refuses (a bad dtype, low >= high), before anything is launched. `multiprocessors`: the device's.
void fill_random(const Device& device, int multiprocessors, const RandomRequest& request, const View& out);

}  // namespace xp::detail::cuda
