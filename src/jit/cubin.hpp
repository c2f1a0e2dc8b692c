#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace xp::detail {

// What a compiled module says about itself, read without a GPU: the ELF header of a cubin (its SM)
// and its entry-point symbols, or the .entry lines of PTX. Every offset and size in a cubin is
// checked against the buffer: a truncated or damaged image is `valid = false` with the reason in
// `error`, and nothing outside [data, data + size) is read (PTX needs no terminating NUL).
struct ModuleInfo {
  bool valid = false;
  bool is_ptx = false;
  int arch = 0;                      // 90 for sm_90 (cubin) or compute_90 (PTX .target)
  std::vector<std::string> kernels;  // __global__ functions, as the module names them
  // Parameter sizes in bytes, by kernel, from the cubin's .nv.info.<kernel> records (one
  // EIATTR_KPARAM_INFO per parameter). Absent for PTX, or when the records do not add up.
  std::map<std::string, std::vector<std::size_t>> params;
  std::string error;
};

ModuleInfo inspect_module(const char* data, std::size_t size);

}  // namespace xp::detail
