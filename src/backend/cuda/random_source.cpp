// Philox random numbers on a CUDA device (random_source.hpp): the kernels' source, compiled through
// xp::Program (memory and disk caches) with backend/philox.hpp as a header, and their launch.

#include "backend/cuda/random_source.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "backend/cuda/ew_source.hpp"
#include "backend/philox.hpp"
#include "xp/error.hpp"
#include "xp/program.hpp"
#include "xp_generated/philox_text.hpp"

namespace xp::detail::cuda {

namespace {

// Rounding float32 to the 16-bit formats, to nearest even, bit for bit as xp::float16(float) and
// xp::bfloat16(float) (docs/semantics.md); integer operations only.
constexpr const char* kPrelude = R"(#include "xp_philox.hpp"
namespace px = xp::philox;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

__device__ __forceinline__ u16 xp_f32_to_f16(float f) {
  const u32 x = __float_as_uint(f);
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return (u16)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));  // quiet NaN
  if (ax >= 0x477FF000u) return (u16)(sign | 0x7C00u);                         // from 65520: inf
  if (ax >= 0x38800000u) {                                                     // normal
    const u32 v = ax - 0x38000000u;
    return (u16)(sign | ((v + 0x0FFFu + ((v >> 13) & 1u)) >> 13));
  }
  const u32 e = ax >> 23;  // below 2^-14: units of 2^-24 (2^-25 itself rounds to 0)
  if (e < 102u) return (u16)sign;
  const u32 m = (ax & 0x7FFFFFu) | 0x800000u;
  const u32 shift = 126u - e;
  u32 q = m >> shift;
  const u32 rem = m & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u) != 0)) ++q;
  return (u16)(sign | q);
}
__device__ __forceinline__ u16 xp_f32_to_bf16(float f) {
  const u32 x = __float_as_uint(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (u16)((x >> 16) | 0x40u);
  return (u16)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
)";

// The kernel: thread b (grid-stride) computes Philox block b and writes the PER elements it gives,
// elements b * PER .. b * PER + PER - 1 of the draw.
constexpr const char* kKernel = R"(
extern "C" __global__ void __launch_bounds__(256) $NAME($T* out, u64 n, u64 seed, u64 stream, u64 low, u64 range) {
  $SETUP
  const u64 blocks = n / per + (n % per != 0 ? 1 : 0);
  const u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < blocks; b += step) {
    const px::Block x = px::stream_block(seed, stream, b);
    const u64 i0 = b * per;
    $BODY
  }
}
)";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

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
  return {"xp_philox.hpp", kPhiloxText};
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

RandomKernel random_kernel(RandomKind kind, DType dtype) {
  check_dtype(kind, dtype);
  std::string setup, body;
  const std::string dt(name(dtype));
  const char* kind_name = kind == RandomKind::uniform ? "uniform" : kind == RandomKind::normal ? "normal" : "integers";
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
  k.kernel_name = std::string("xp_random_") + kind_name + "_" + dt;
  std::string kernel = kKernel;
  replace_all(kernel, "$NAME", k.kernel_name);
  replace_all(kernel, "$T", c_type(dtype));
  replace_all(kernel, "$SETUP", setup);
  replace_all(kernel, "$BODY", body);
  k.source = std::string(kPrelude) + kernel;
  return k;
}

void fill_random(const Device& device, const RandomRequest& req, const View& out) {
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

  // Kernels by (kind, dtype, device), loaded once per process.
  static std::mutex mutex;
  static auto* kernels = new std::map<std::tuple<int, int, int>, Kernel>();  // never destroyed
  static auto* sm_counts = new std::map<int, int>();
  const auto key = std::make_tuple(static_cast<int>(req.kind), static_cast<int>(out.dtype), device.index());
  Kernel k;
  int sms = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernels->find(key);
    if (it == kernels->end()) {
      const RandomKernel rk = random_kernel(req.kind, out.dtype);
      ProgramOptions opt;
      opt.name = "xp_random.cu";
      opt.options = random_nvrtc_options();
      opt.headers = {philox_header()};
      Program prog(rk.source, opt);
      it = kernels->emplace(key, prog.kernel(rk.kernel_name, device)).first;
    }
    k = it->second;
    auto sit = sm_counts->find(device.index());
    if (sit == sm_counts->end()) sit = sm_counts->emplace(device.index(), gpu_info(device).sm_count).first;
    sms = sit->second;
  }
  const unsigned per = elements_per_block(req.kind, out.dtype, range);
  LaunchConfig cfg;
  cfg.grid = {random_grid(n, per, sms), 1, 1};
  cfg.block = {kRandomBlockSize, 1, 1};  // xp's stream of the device (the default)
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(out.data));
  k.launch(cfg, address, static_cast<std::uint64_t>(n), req.seed, req.stream, low, range);
}

}  // namespace xp::detail::cuda
