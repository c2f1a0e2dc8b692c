#pragma once

// What the files of xp::ElementwiseKernel and xp::ReductionKernel share: parsed parameters, the
// plan of one call (bound types, shapes, strides), and the source generator
// (user_kernel_source.cpp).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xp/array.hpp"
#include "xp/kernels.hpp"
#include "xp/program.hpp"

namespace xp::detail {

// One "type name" of a parameter list: a dtype, or a placeholder (a single letter).
struct KernelParam {
  std::optional<DType> dtype;  // the named dtype; none for a placeholder
  char placeholder = 0;
  std::string name;
  bool raw = false;
};

// Parses "T x, raw float32 w"; `what` names the list in errors ("ElementwiseKernel 'k': in_params").
std::vector<KernelParam> parse_params(std::string_view text, const std::string& what);
// A type alone ("float32" or "T"), as reduce_type.
KernelParam parse_type(std::string_view text, const std::string& what);

// The C type of a supported dtype in generated source ("float", "long long", ...).
const char* c_type(DType t);

// One argument of a call as the kernel receives it.
struct BoundArg {
  const KernelParam* param = nullptr;
  bool output = false;
  bool scalar = false;
  DType type{};                       // the parameter's bound type
  DType stored{};                     // the array's dtype (== type for outputs and raw arrays), or type for a scalar
  Array array;                        // the array (broadcast for non-raw inputs; C-contiguous for raw ones)
  std::uint64_t bits = 0;             // a scalar's value in `type`, little-endian
  std::vector<std::int64_t> strides;  // bytes, per merged dimension (elementwise: all; reduction: kept)
  std::vector<std::int64_t> reduce_strides;  // reduction inputs: bytes, per merged reduced dimension
};

struct CallPlan {
  Device device;
  std::vector<BoundArg> args;      // the inputs, then the outputs
  std::map<char, DType> bound;     // placeholder -> dtype
  std::vector<Array> results;      // one per output parameter
  Shape shape;                     // elementwise: the broadcast shape; reduction: the input's
  std::int64_t size = 0;           // elements written (elementwise) or output rows (reduction)
  std::vector<std::int64_t> dims;  // merged dimensions (elementwise: all; reduction: the kept ones)
  bool contiguous = false;         // elementwise: every array walked as p[i]
  // Reductions.
  DType reduce_type{};
  std::int64_t reduce_size = 0;           // elements reduced into each output element
  std::vector<std::int64_t> reduce_dims;  // merged reduced dimensions
  std::string key;                        // what decides the source (with the kernel's own text)
};

struct UserKernelState {
  bool reduction = false;
  std::string kind;  // "ElementwiseKernel" or "ReductionKernel"
  std::string name;
  std::vector<KernelParam> in, out;
  std::string operation;                                       // elementwise
  std::string map_expr, reduce_expr, post_map_expr, identity;  // reduction
  std::optional<KernelParam> reduce_type;
  std::string preamble;
  std::vector<std::string> options;

  // Compiled programs by CallPlan::key, and their kernels by device.
  struct Entry {
    std::shared_ptr<Program> program;
    std::vector<std::pair<Device, std::vector<Kernel>>> kernels;  // [0] the kernel, [1] a reduction's second pass
  };
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Entry>> cache;

  std::string what() const { return kind + " '" + name + "'"; }
  // The generated kernel's symbol: the name with a prefix, so that a kernel may be named like a
  // function the kernel source can see (`fma`, `exp`, `max`: C linkage allows one of each name).
  std::string symbol() const { return "xpk_" + name; }
};

std::string elementwise_source(const UserKernelState& k, const CallPlan& plan);
std::string reduction_source(const UserKernelState& k, const CallPlan& plan);

}  // namespace xp::detail
