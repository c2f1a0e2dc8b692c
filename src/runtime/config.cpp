// Reads and validates every environment variable xp uses. No other file calls getenv.
#include <pwd.h>
#include <unistd.h>

extern char** environ;

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/environment.hpp"
#include "xp/config.hpp"
#include "xp/error.hpp"

namespace xp {
namespace detail {

std::optional<std::string> getenv_string(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

ForeignEnvironment foreign_environment() {
  ForeignEnvironment e;
  e.cuda_visible_devices = getenv_string("CUDA_VISIBLE_DEVICES");
  e.cuda_path = getenv_string("CUDA_PATH");
  e.cuda_home = getenv_string("CUDA_HOME");
  e.conda_prefix = getenv_string("CONDA_PREFIX");
  e.virtual_env = getenv_string("VIRTUAL_ENV");
  e.pythonpath = getenv_string("PYTHONPATH");
  e.home = getenv_string("HOME");
  e.xdg_cache_home = getenv_string("XDG_CACHE_HOME");
  e.openblas_coretype = getenv_string("OPENBLAS_CORETYPE");
  e.path = getenv_string("PATH");
  e.nvtx_injection64_path = getenv_string("NVTX_INJECTION64_PATH");
  return e;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::optional<bool> parse_bool_setting(const std::string& raw) {
  const std::string v = lower(trim(raw));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::optional<std::uint64_t> parse_u64(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_byte_count(const std::string& raw) {
  const std::string v = trim(raw);
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  auto n = parse_u64(std::string_view(v).substr(0, i));
  if (!n) return std::nullopt;
  const std::string suffix = lower(trim(v.substr(i)));
  std::uint64_t mul = 1;
  if (suffix.empty() || suffix == "b")
    mul = 1;
  else if (suffix == "k" || suffix == "kib")
    mul = 1ull << 10;
  else if (suffix == "m" || suffix == "mib")
    mul = 1ull << 20;
  else if (suffix == "g" || suffix == "gib")
    mul = 1ull << 30;
  else if (suffix == "t" || suffix == "tib")
    mul = 1ull << 40;
  else if (suffix == "kb")
    mul = 1000ull;
  else if (suffix == "mb")
    mul = 1000ull * 1000;
  else if (suffix == "gb")
    mul = 1000ull * 1000 * 1000;
  else if (suffix == "tb")
    mul = 1000ull * 1000 * 1000 * 1000;
  else
    return std::nullopt;
  if (*n > UINT64_MAX / mul) return std::nullopt;
  return *n * mul;
}

std::optional<MemoryLimit> parse_memory_limit(const std::string& raw) {
  const std::string v = trim(raw);
  MemoryLimit lim;
  if (!v.empty() && v.back() == '%') {
    // A plain decimal: digits with at most one point (no sign, exponent, hex, inf or nan, which
    // strtod would take), read the same in every locale.
    const std::string num = trim(v.substr(0, v.size() - 1));
    bool digit = false, point = false;
    for (char c : num) {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        digit = true;
      } else if (c == '.' && !point) {
        point = true;
      } else {
        return std::nullopt;
      }
    }
    if (!digit) return std::nullopt;
    double p = 0;
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), p, std::chars_format::fixed);
    if (ec != std::errc() || end != num.data() + num.size() || !(p > 0.0) || p > 100.0) return std::nullopt;
    lim.percent = p;
    return lim;
  }
  auto b = parse_byte_count(v);
  if (!b || *b == 0) return std::nullopt;
  lim.bytes = *b;
  return lim;
}

std::optional<DeviceRequest> parse_device_setting(const std::string& raw) {
  const std::string v = lower(trim(raw));
  DeviceRequest r;
  if (v == "cpu") {
    r.kind = DeviceRequest::Kind::cpu;
    return r;
  }
  if (v == "cuda") {
    r.kind = DeviceRequest::Kind::cuda_default;
    return r;
  }
  if (v.rfind("cuda:", 0) == 0) {
    auto n = parse_u64(std::string_view(v).substr(5));
    if (!n || *n > 1024) return std::nullopt;
    r.kind = DeviceRequest::Kind::cuda_index;
    r.index = static_cast<int>(*n);
    return r;
  }
  return std::nullopt;
}

}  // namespace detail

namespace {
using detail::parse_bool_setting;
using detail::parse_byte_count;
using detail::parse_device_setting;

struct VariableSpec {
  const char* name;
  const char* meaning;
  const char* accepted;
};

static_assert(kMaxNumThreads == 4096, "XP_NUM_THREADS's accepted text below names the limit");

constexpr VariableSpec kVariables[] = {
    {"XP_DEVICE", "default device", "cpu, cuda or cuda:N (N a device ordinal)"},
    {"FORCE_CPU", "1 = same as XP_DEVICE=cpu", "1, 0, true, false, yes, no, on, off"},
    {"XP_CUDA_DRIVER", "path of the CUDA driver library", "a path to libcuda.so.1"},
    {"XP_NVRTC", "path of the NVRTC library", "a path to libnvrtc.so.N"},
    {"XP_CUBLAS", "path of the cuBLAS library", "a path to libcublas.so.N"},
    {"XP_CUSOLVER", "path of the cuSOLVER library", "a path to libcusolver.so.N"},
    {"XP_CUFFT", "path of the cuFFT library", "a path to libcufft.so.N"},
    {"XP_HOST_CXX", "the C++ compiler that builds CUDA kernels for the CPU",
     "a compiler's path, or a name looked for on PATH (default c++)"},
    {"XP_CACHE_DIR", "kernel cache folder",
     "a folder path; a relative one is taken from the current folder, and ~ is not expanded (write $HOME)"},
    {"XP_CACHE_MAX_BYTES", "disk cache cap", "bytes, optionally with K, M, G, T (x1024) or KB, MB, GB, TB (x1000)"},
    {"XP_GPU_MEMORY_LIMIT", "GPU memory limit", "bytes (suffixes as XP_CACHE_MAX_BYTES) or a percentage such as 80%"},
    {"XP_LAZY", "0 = evaluate every operation eagerly", "1, 0, true, false, yes, no, on, off"},
    {"XP_NUM_THREADS", "CPU threads", "an integer from 1 to 4096"},  // 4096: kMaxNumThreads
    {"XP_PRELOAD_KERNELS",
     "modules of the kernels the last processes used, loaded onto a GPU in the background when xp starts using it",
     "an integer from 0 (none) to 1024"},
    {"XP_LOG", "log level", "error, warn, info, debug"},
    {"XP_NVTX",
     "1 = an NVTX range around each of xp's operations and kernel launches, for Nsight Systems "
     "(NVTX_INJECTION64_PATH's "
     "library, else libnvToolsExt.so.1)",
     "1, 0, true, false, yes, no, on, off"},
};

std::string default_cache_dir(const detail::ForeignEnvironment& env) {
  if (env.xdg_cache_home && !env.xdg_cache_home->empty() && (*env.xdg_cache_home)[0] == '/')
    return *env.xdg_cache_home + "/xp/kernels";
  std::string home = env.home.value_or("");
  if (home.empty()) {
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) home = pw->pw_dir;
  }
  if (home.empty()) home = "/tmp";
  return home + "/.cache/xp/kernels";
}

// Parses one variable into cfg; returns an error text (empty when fine).
std::string apply(Config& cfg, const VariableSpec& spec, const std::string& value) {
  const std::string name = spec.name;
  if (name == "XP_DEVICE") {
    auto d = parse_device_setting(value);
    if (!d) return "malformed";
    cfg.device = *d;
  } else if (name == "FORCE_CPU" || name == "XP_LAZY" || name == "XP_NVTX") {
    auto b = parse_bool_setting(value);
    if (!b) return "malformed";
    if (name == "FORCE_CPU")
      cfg.force_cpu = *b;
    else if (name == "XP_LAZY")
      cfg.lazy = *b;
    else
      cfg.nvtx = *b;
  } else if (name == "XP_CUDA_DRIVER") {
    cfg.cuda_driver = value;
  } else if (name == "XP_NVRTC") {
    cfg.nvrtc = value;
  } else if (name == "XP_CUBLAS") {
    cfg.cublas = value;
  } else if (name == "XP_CUSOLVER") {
    cfg.cusolver = value;
  } else if (name == "XP_CUFFT") {
    cfg.cufft = value;
  } else if (name == "XP_HOST_CXX") {
    cfg.host_cxx = value;
  } else if (name == "XP_CACHE_DIR") {
    // "~/x" in quotes reaches xp unexpanded: a folder named ~ in the current one is never meant.
    if (value[0] == '~') return "malformed";
    cfg.cache_dir = value;
    // Fixed once, so that a later chdir does not move the cache.
    if (value[0] != '/') {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd) == nullptr) return "malformed";
      cfg.cache_dir = std::string(cwd) + "/" + value;
    }
  } else if (name == "XP_CACHE_MAX_BYTES") {
    auto b = parse_byte_count(value);
    if (!b) return "malformed";
    cfg.cache_max_bytes = *b;
  } else if (name == "XP_GPU_MEMORY_LIMIT") {
    auto lim = detail::parse_memory_limit(value);
    if (!lim) return "malformed";
    cfg.gpu_memory_limit = *lim;
  } else if (name == "XP_NUM_THREADS") {
    auto n = detail::parse_u64(detail::trim(value));
    if (!n || *n < 1 || *n > static_cast<std::uint64_t>(kMaxNumThreads)) return "malformed";
    cfg.num_threads = static_cast<int>(*n);
  } else if (name == "XP_PRELOAD_KERNELS") {
    auto n = detail::parse_u64(detail::trim(value));
    if (!n || *n > 1024) return "malformed";
    cfg.preload_kernels = static_cast<std::size_t>(*n);
  } else if (name == "XP_LOG") {
    const std::string v = detail::lower(detail::trim(value));
    if (v == "error")
      cfg.log = LogLevel::error;
    else if (v == "warn" || v == "warning")
      cfg.log = LogLevel::warn;
    else if (v == "info")
      cfg.log = LogLevel::info;
    else if (v == "debug")
      cfg.log = LogLevel::debug;
    else
      return "malformed";
  }
  return {};
}

struct Parsed {
  Config config;
  std::vector<ConfigVariable> variables;
  std::optional<ConfigError> error;  // the first malformed variable
};

Parsed parse_environment() {
  Parsed out;
  const auto foreign = detail::foreign_environment();
  out.config.cache_dir = default_cache_dir(foreign);
  for (const auto& spec : kVariables) {
    ConfigVariable row;
    row.name = spec.name;
    row.meaning = spec.meaning;
    auto value = detail::getenv_string(spec.name);
    // An empty value counts as unset, the usual shell idiom (XP_DEVICE= cmd).
    if (value && !value->empty()) {
      row.set = true;
      row.value = *value;
      if (!apply(out.config, spec, *value).empty()) {
        row.error = std::string("accepted: ") + spec.accepted;
        if (!out.error) out.error.emplace(spec.name, *value, spec.accepted);
      }
    }
    out.variables.push_back(std::move(row));
  }
  if (out.config.force_cpu) out.config.device = DeviceRequest{DeviceRequest::Kind::cpu, 0};
  return out;
}

const Parsed& parsed() {
  static const Parsed p = parse_environment();
  return p;
}

}  // namespace

const Config& config() {
  const Parsed& p = parsed();
  if (p.error) throw *p.error;
  return p.config;
}

std::vector<ConfigVariable> config_variables() noexcept {
  try {
    return parsed().variables;
  } catch (...) {
    return {};
  }
}

namespace {
// Levenshtein distance, for the nearest known name.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::vector<UnknownVariable> unknown_config_variables() noexcept {
  std::vector<UnknownVariable> out;
  try {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string entry = *e;
      const std::size_t eq = entry.find('=');
      const std::string name = entry.substr(0, eq);
      if (name.rfind("XP_", 0) != 0) continue;
      // The test suite's own switches (XP_TEST_*) and its fake driver's (XP_FAKE_*) are not xp's.
      if (name.rfind("XP_TEST_", 0) == 0 || name.rfind("XP_FAKE_", 0) == 0) continue;
      bool known = false;
      std::string nearest;
      std::size_t best = 3;  // suggest only a name at most two edits away
      for (const auto& spec : kVariables) {
        if (name == spec.name) known = true;
        const std::size_t d = edit_distance(name, spec.name);
        if (d < best) best = d, nearest = spec.name;
      }
      if (!known) out.push_back({name, eq == std::string::npos ? std::string() : entry.substr(eq + 1), nearest});
    }
  } catch (...) {
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace xp
