// The key material of xp's kernel cache entries (program_parts.hpp): its fields, the heads of a
// program's and a generated kernel's material, and the target of a device.
#include <cstdint>

#include "jit/build_id.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "jit/program_parts.hpp"
#include "xp/runtime.hpp"
#include "xp/version.hpp"

namespace xp::detail {

void put_field(std::string& out, const std::string& label, const std::string& value) {
  out += label;
  out += ' ';
  out += std::to_string(value.size());
  out += '\n';
  out += value;
  out += '\n';
}

void put_options(std::string& k, const ProgramOptions& options) {
  put_field(k, "name", options.name);
  put_field(k, "options", std::to_string(options.options.size()));
  for (const auto& o : options.options) put_field(k, "option", o);
  put_field(k, "expressions", std::to_string(options.name_expressions.size()));
  for (const auto& e : options.name_expressions) put_field(k, "expression", e);
  put_field(k, "headers", std::to_string(options.headers.size()));
  for (const auto& [n, c] : options.headers) {
    put_field(k, "header", n);
    put_field(k, "content", c);
  }
}

std::string program_key_head(const NvrtcCompiler& nvrtc, bool ptx, int target) {
  std::string k = "xp-kernel-cache 1\n";
  put_field(k, "xp", std::string(version()));
  put_field(k, "nvrtc", nvrtc.library().version);
  put_field(k, "toolkit-headers", nvrtc.headers_version());
  put_field(k, "target", (ptx ? "compute_" : "sm_") + std::to_string(target));
  return k;
}

std::string generated_key_head(const NvrtcCompiler& nvrtc, bool ptx, int target) {
  const std::string& id = build_id();
  if (id.empty()) return {};
  std::string k = "xp-generated-kernel 1\n";
  put_field(k, "build", id);
  put_field(k, "xp", std::string(version()));
  put_field(k, "nvrtc", nvrtc.library().version);
  put_field(k, "target", (ptx ? "compute_" : "sm_") + std::to_string(target));
  return k;
}

std::optional<std::string_view> field_value(std::string_view k, std::string_view label, std::size_t from) {
  std::size_t pos = from;
  while (pos < k.size()) {
    const std::size_t sp = k.find(' ', pos), nl = k.find('\n', pos);
    if (sp == std::string_view::npos || nl == std::string_view::npos || sp > nl || nl == sp + 1) return std::nullopt;
    std::uint64_t len = 0;
    for (std::size_t i = sp + 1; i < nl; ++i) {
      if (k[i] < '0' || k[i] > '9' || len > (std::uint64_t{1} << 40)) return std::nullopt;
      len = len * 10 + static_cast<std::uint64_t>(k[i] - '0');
    }
    if (len > k.size() - nl - 1 || k.size() - nl - 1 - len < 1 || k[nl + 1 + len] != '\n') return std::nullopt;
    if (k.substr(pos, sp - pos) == label) return k.substr(nl + 1, len);
    pos = nl + 1 + len + 1;
  }
  return std::nullopt;
}

int device_arch(const Device& device) {
  const DriverProbe& p = driver_probe();
  if (p.reason != CudaReason::available || device.index() >= static_cast<int>(p.gpus.size()))
    throw DeviceUnavailable(device.str() + " is not usable" + (p.detail.empty() ? "" : ": " + p.detail));
  const GpuInfo& g = p.gpus[static_cast<size_t>(device.index())];
  return g.cc_major * 10 + g.cc_minor;
}

}  // namespace xp::detail
