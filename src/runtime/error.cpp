#include "xp/error.hpp"

#include <utility>

namespace xp {

Error::Error(const std::string& what) : std::runtime_error(what) {}
Error::~Error() = default;

ConfigError::ConfigError(std::string variable, std::string value, std::string accepted)
    : Error(variable + "='" + value + "' is not valid; accepted: " + accepted),
      variable_(std::move(variable)),
      value_(std::move(value)),
      accepted_(std::move(accepted)) {}
ConfigError::~ConfigError() = default;

ValueError::ValueError(const std::string& what) : Error(what) {}
ValueError::~ValueError() = default;
LinAlgError::LinAlgError(const std::string& what, std::int64_t batch_index, std::int64_t info)
    : ValueError(what), batch_index_(batch_index), info_(info) {}
LinAlgError::~LinAlgError() = default;

namespace {
std::string cuda_error_text(int code, const std::string& name, const std::string& message, const std::string& call) {
  std::string s = call.empty() ? std::string("CUDA driver error") : call + " failed";
  s += ": " + (name.empty() ? std::string("CUDA_ERROR_UNKNOWN_CODE") : name) + " (" + std::to_string(code) + ")";
  if (!message.empty()) s += ": " + message;
  return s;
}
}  // namespace

CudaError::CudaError(int code, std::string name, std::string message, std::string call)
    : Error(cuda_error_text(code, name, message, call)),
      code_(code),
      name_(std::move(name)),
      message_(std::move(message)),
      call_(std::move(call)) {}
CudaError::~CudaError() = default;

DeviceUnavailable::DeviceUnavailable(const std::string& what) : Error(what) {}
DeviceUnavailable::~DeviceUnavailable() = default;

FileError::FileError(std::string path, std::string reason)
    : Error(path + ": " + reason), path_(std::move(path)), reason_(std::move(reason)) {}
FileError::~FileError() = default;

IndexError::IndexError(const std::string& what) : ValueError(what) {}
IndexError::~IndexError() = default;

TypeError::TypeError(const std::string& what) : ValueError(what) {}
TypeError::~TypeError() = default;

OverflowError::OverflowError(const std::string& what) : TypeError(what) {}
OverflowError::~OverflowError() = default;

DeviceMismatch::DeviceMismatch(const std::string& operation, const std::string& first, const std::string& second)
    : ValueError(operation + ": arrays on two devices, " + first + " and " + second +
                 " (xp never copies between devices silently: use to_device)") {}
DeviceMismatch::~DeviceMismatch() = default;

OutOfMemory::OutOfMemory(std::string device, std::uint64_t requested, std::uint64_t free, std::uint64_t limit,
                         std::uint64_t block)
    : Error("out of memory on " + device + ": " + std::to_string(requested) + " bytes requested" +
            (block > requested ? " (a block of " + std::to_string(block) + ")" : std::string()) +
            (free != 0 ? ", " + std::to_string(free) + " free" : std::string()) +
            (limit != 0 ? ", limit " + std::to_string(limit) : std::string())),
      device_(std::move(device)),
      requested_(requested),
      free_(free),
      limit_(limit),
      block_(block > requested ? block : requested) {}
OutOfMemory::~OutOfMemory() = default;

}  // namespace xp
