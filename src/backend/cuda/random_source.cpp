// Philox random numbers on a CUDA device (random_source.hpp): the kernels' source (device/random.cuh
// and a kernel per kind and dtype), found through the device's kernel cache with backend/philox.hpp
// as a header, and their launch.

#include "backend/cuda/random_source.hpp"

#include <algorithm>
#include <string>

#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/kernel_cache.hpp"
#include "backend/philox.hpp"
#include "xp/error.hpp"
#include "xp/program.hpp"
#include "xp_generated/device_code.hpp"
#include "xp_generated/philox_text.hpp"

namespace xp::detail::cuda {

namespace {

const char* c_type(DType t) {
  switch (t) {
    case DType::int8:
      return "signed char";
    case DType::int16:
      return "short";
    case DType::int32:
      return "int";
    case DType::int64:
      return "long long";
    case DType::uint8:
      return "unsigned char";
    case DType::uint16:
      return "unsigned short";
    case DType::uint32:
      return "unsigned int";
    case DType::uint64:
      return "unsigned long long";
    case DType::float16:
    case DType::bfloat16:
      return "u16";
    case DType::float32:
      return "float";
    case DType::float64:
      return "double";
    default:
      return nullptr;
  }
}

bool is_float(DType t) {
  return t == DType::float16 || t == DType::bfloat16 || t == DType::float32 || t == DType::float64;
}
bool is_integer(DType t) {
  return kind(t) == DTypeKind::signed_integer || kind(t) == DTypeKind::unsigned_integer;
}

void check_dtype(RandomKind kind, DType t) {
  if (kind == RandomKind::integers) {
    if (!is_integer(t)) throw ValueError("integers: not an integer dtype");
  } else if (!is_float(t)) {
    throw ValueError("random floats: not a float dtype");
  }
}

// Writes element i0 + s as `value` when it is below n.
std::string store(const std::string& slots, const std::string& value) {
  return "for (u32 s = 0; s < " + slots + "; ++s) {\n      if (i0 + s < n) out[i0 + s] = " + value + ";\n    }";
}

}  // namespace

std::pair<std::string, std::string> philox_header() {
  return {"xp_philox.hpp", std::string(philox_hpp)};
}

std::vector<std::string> random_nvrtc_options() {
  return nvrtc_options();
}

unsigned elements_per_block(RandomKind kind, DType dtype, std::uint64_t range) noexcept {
  if (kind == RandomKind::integers) return philox::integer_words(range) == 2 ? 2u : 1u;
  return dtype == DType::float64 ? 2u : 4u;
}

unsigned random_grid(std::int64_t n, unsigned per_block, int multiprocessors) noexcept {
  if (n <= 0 || per_block == 0) return 1;
  const auto blocks = static_cast<std::uint64_t>(n) / per_block + (static_cast<std::uint64_t>(n) % per_block != 0);
  const std::uint64_t needed = (blocks + kRandomBlockSize - 1) / kRandomBlockSize;
  const std::uint64_t cap = static_cast<std::uint64_t>(std::max(multiprocessors, 1)) * 16;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(needed, cap)));
}

std::string random_kernel_name(RandomKind kind, DType dtype) {
  const char* kind_name = kind == RandomKind::uniform ? "uniform" : kind == RandomKind::normal ? "normal" : "integers";
  return std::string("xp_random_") + kind_name + "_" + std::string(name(dtype));
}

std::string random_key(RandomKind kind, DType dtype) {
  return "xp-random-2:" + random_kernel_name(kind, dtype);
}

RandomKernel random_kernel(RandomKind kind, DType dtype) {
  check_dtype(kind, dtype);
  std::string setup, body;
  if (kind == RandomKind::integers) {
    // low + offset in unsigned 64-bit (wrapping), then converted: the CPU's int64 value, truncated.
    setup = "const bool two = px::integer_words(range) == 2;\n  const u64 per = two ? 2 : 1;";
    const std::string t = c_type(dtype);
    body = "if (two) {\n      " +
           store("2", "(" + t + ")(low + px::bounded_from_2_words(x.x[2 * s], x.x[2 * s + 1], range))") +
           "\n    } else if (i0 < n) {\n      out[i0] = (" + t +
           ")(low + px::bounded_from_4_words(x.x[0], x.x[1], x.x[2], x.x[3], range));\n    }";
  } else if (dtype == DType::float64) {
    setup = "const u64 per = 2;";
    body = kind == RandomKind::uniform ? store("2", "px::uniform_float64_from(x.x[2 * s], x.x[2 * s + 1])")
                                       : store("2", "px::normal_float64_from(x.x[0], x.x[1], x.x[2], x.x[3], s != 0)");
  } else {
    setup = "const u64 per = 4;";
    const std::string normal = "px::normal_float32_from(x.x[s & 2], x.x[(s & 2) + 1], (s & 1) != 0)";
    std::string value;
    if (kind == RandomKind::uniform) {
      value = dtype == DType::float32   ? "px::uniform_float32_from(x.x[s])"
              : dtype == DType::float16 ? "px::uniform_float16_bits_from(x.x[s])"
                                        : "px::uniform_bfloat16_bits_from(x.x[s])";
    } else {
      value = dtype == DType::float32   ? normal
              : dtype == DType::float16 ? "xp_f32_to_f16(" + normal + ")"
                                        : "xp_f32_to_bf16(" + normal + ")";
    }
    body = store("4", value);
  }
  RandomKernel k;
  k.kernel_name = random_kernel_name(kind, dtype);
  // The header first (random.cuh's px namespace is philox's), then the device code.
  k.source = "#include \"xp_philox.hpp\"\n// generated by xp: random numbers\n";
  k.source += device_code::types_cuh;
  k.source += device_code::half_cuh;
  k.source += device_code::random_cuh;
  k.source += "extern \"C\" __global__ void __launch_bounds__(256) " + k.kernel_name + "(" + c_type(dtype) +
              "* out, u64 n, u64 seed, u64 stream, u64 low, u64 range) {\n  " + setup +
              "\n  xp_random_blocks(n, seed, stream, per, [&](const px::Block& x, u64 i0) {\n    " + body +
              "\n  });\n}\n";
  return k;
}

void fill_random(const Device& device, int multiprocessors, const RandomRequest& req, const View& out) {
  check_dtype(req.kind, out.dtype);
  std::uint64_t low = 0, range = 0;
  if (req.kind == RandomKind::integers) {
    if (!(req.low < req.high)) {
      throw ValueError("integers: low (" + std::to_string(req.low) + ") must be less than high (" +
                       std::to_string(req.high) + ")");
    }
    low = static_cast<std::uint64_t>(req.low);
    range = static_cast<std::uint64_t>(req.high) - low;
  }
  if (!out.is_c_contiguous()) throw ValueError("fill_random: the output must be C-contiguous");
  const std::int64_t n = out.size();
  if (n == 0) return;

  const Kernel& k = kernel_cache(device).kernel(Generator::random, random_key(req.kind, out.dtype),
                                                random_kernel_name(req.kind, out.dtype),
                                                [&] { return random_kernel(req.kind, out.dtype).source; });
  const unsigned per = elements_per_block(req.kind, out.dtype, range);
  LaunchConfig cfg;
  cfg.grid = {random_grid(n, per, multiprocessors), 1, 1};
  cfg.block = {kRandomBlockSize, 1, 1};  // xp's stream of the device (the default)
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(out.data));
  k.launch(cfg, address, static_cast<std::uint64_t>(n), req.seed, req.stream, low, range);
}

}  // namespace xp::detail::cuda
