#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "xp/export.hpp"

namespace xp {

// Root of every exception xp throws.
class XP_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what);
  ~Error() override;
};

// A bad value in an XP_* (or FORCE_CPU) environment variable. Never replaced by a silent default.
class XP_API ConfigError : public Error {
 public:
  ConfigError(std::string variable, std::string value, std::string accepted);
  ~ConfigError() override;
  const std::string& variable() const noexcept { return variable_; }
  const std::string& value() const noexcept { return value_; }
  const std::string& accepted() const noexcept { return accepted_; }

 private:
  std::string variable_, value_, accepted_;
};

// A bad argument passed to an xp function (a malformed device name, say).
class XP_API ValueError : public Error {
 public:
  explicit ValueError(const std::string& what);
  ~ValueError() override;
};

// A CUDA driver call failed. Keeps the driver's number and name: CUDA_ERROR_NO_DEVICE (100).
class XP_API CudaError : public Error {
 public:
  CudaError(int code, std::string name, std::string message, std::string call);
  ~CudaError() override;
  int code() const noexcept { return code_; }
  const std::string& name() const noexcept { return name_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& call() const noexcept { return call_; }

 private:
  int code_;
  std::string name_, message_, call_;
};

// A device was asked for that this process cannot use: CUDA unusable (the reason is in the text),
// an ordinal past the device count, or CUDA used in a child after fork().
class XP_API DeviceUnavailable : public Error {
 public:
  explicit DeviceUnavailable(const std::string& what);
  ~DeviceUnavailable() override;
};

// A file could not be read or written: it is missing or unreadable, it is not in the expected
// format, or it is corrupt (a .npy file with a bad header or a truncated data section, say). Keeps
// the path and the reason; what() is "<path>: <reason>". A failed write leaves no partial file.
class XP_API FileError : public Error {
 public:
  FileError(std::string path, std::string reason);
  ~FileError() override;
  const std::string& path() const noexcept { return path_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_, reason_;
};

// An index out of range (a[7] on 5 elements, take() with a bad index): the index, the axis and
// its length are in the text.
class XP_API IndexError : public ValueError {
 public:
  explicit IndexError(const std::string& what);
  ~IndexError() override;
};

// An operation the dtypes do not support (bitwise_and on floats, uint8 + 300, an out= array the
// result cannot be cast to under NumPy's same_kind rule). Derives from ValueError.
class XP_API TypeError : public ValueError {
 public:
  explicit TypeError(const std::string& what);
  ~TypeError() override;
};

// A number that does not fit the integer dtype it must take: a C++ or Python integer beside an
// integer array (NEP 50: uint8 + 300), a fill value, an arange bound or value, copyto's value. A
// TypeError (what xp raised before it existed); Python's xp.OverflowError is also a builtin
// OverflowError, as NumPy raises there.
class XP_API OverflowError : public TypeError {
 public:
  explicit OverflowError(const std::string& what);
  ~OverflowError() override;
};

// A linear-algebra computation that has no answer for its input: a singular matrix (solve, inv),
// a matrix that is not positive definite (cholesky), an iteration that did not converge (eigh,
// svd). Names the function, the batch entry (its index in C order over the leading dimensions; 0
// for a single matrix) and LAPACK's or cuSOLVER's info code. Derives from ValueError (as NumPy's).
class XP_API LinAlgError : public ValueError {
 public:
  LinAlgError(const std::string& what, std::int64_t batch_index = 0, std::int64_t info = 0);
  ~LinAlgError() override;
  std::int64_t batch_index() const noexcept { return batch_index_; }
  std::int64_t info() const noexcept { return info_; }

 private:
  std::int64_t batch_index_, info_;
};

// Arrays on two devices in one operation: names both. Nothing is copied silently.
class XP_API DeviceMismatch : public ValueError {
 public:
  DeviceMismatch(const std::string& operation, const std::string& first, const std::string& second);
  ~DeviceMismatch() override;
};

// An allocation failed: the bytes asked for, and (where known, else 0) the bytes free and the limit.
class XP_API OutOfMemory : public Error {
 public:
  OutOfMemory(std::string device, std::uint64_t requested, std::uint64_t free = 0, std::uint64_t limit = 0,
              std::uint64_t block = 0);
  ~OutOfMemory() override;
  const std::string& device() const noexcept { return device_; }
  std::uint64_t requested() const noexcept { return requested_; }
  std::uint64_t free() const noexcept { return free_; }
  std::uint64_t limit() const noexcept { return limit_; }
  // The bytes the allocator asked for: `requested` rounded up to its block size (which is what had
  // to fit in `free`); equal to `requested` where nothing is rounded.
  std::uint64_t block() const noexcept { return block_; }

 private:
  std::string device_;
  std::uint64_t requested_, free_, limit_, block_;
};

}  // namespace xp
