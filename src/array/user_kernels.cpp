// xp::ElementwiseKernel and xp::ReductionKernel (include/xp/kernels.hpp): parameter lists, the
// binding of a call's arguments to types and shapes, the cache of generated programs, and the
// launches. The source itself comes from user_kernel_source.cpp; it runs through the public
// Program and Kernel on the arrays' device.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <utility>

#include "array/user_kernels.hpp"

namespace xp {

namespace detail {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || (std::isalpha(static_cast<unsigned char>(s[0])) == 0 && s[0] != '_')) return false;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> w;
  std::size_t p = 0;
  while (p < s.size()) {
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p])) != 0) ++p;
    const std::size_t b = p;
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p])) == 0) ++p;
    if (p > b) w.push_back(s.substr(b, p - b));
  }
  return w;
}

bool supported(DType t) {
  return c_type(t) != nullptr;
}

const char* kSupported = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64";

void check_supported(DType t, const std::string& what, const std::string& param) {
  if (!supported(t)) {
    throw TypeError(what + ": " + std::string(name(t)) + " (parameter '" + param +
                    "') is not supported by user kernels (supported: " + kSupported + ")");
  }
}

// NumPy's same_kind casting among the supported dtypes: bool < integers < floats.
int kind_rank(DType t) {
  switch (kind(t)) {
    case DTypeKind::boolean:
      return 0;
    case DTypeKind::signed_integer:
    case DTypeKind::unsigned_integer:
      return 1;
    default:
      return 2;
  }
}

// A scalar's value in dtype t, little-endian; TypeError when it does not convert under same_kind or
// does not fit an integer type.
std::uint64_t scalar_bits(const Scalar& s, DType t, const std::string& what, const std::string& param) {
  const auto fail = [&](const std::string& why) {
    throw TypeError(what + ": the scalar for parameter '" + param + "' " + why + " " + std::string(name(t)));
  };
  if (s.kind() == ScalarKind::complex) fail("is complex; it cannot become");
  if (s.kind() == ScalarKind::floating && kind_rank(t) < 2) fail("is a float; it cannot become");
  if (s.kind() == ScalarKind::integer && t == DType::bool_) fail("is an integer; it cannot become");
  if (s.kind() == ScalarKind::integer && kind_rank(t) == 1) {
    const bool fits = s.is_large_unsigned() ? value_fits(t, s.as_uint()) : value_fits(t, s.as_int());
    if (!fits) fail("does not fit");
  }
  std::uint64_t bits = 0;
  const auto put = [&](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  const bool integer = s.kind() != ScalarKind::floating;
  switch (t) {
    case DType::bool_:
      put(static_cast<std::uint8_t>(s.as_int() != 0 ? 1 : 0));
      break;
    case DType::int8:
      put(static_cast<std::int8_t>(s.as_int()));
      break;
    case DType::int16:
      put(static_cast<std::int16_t>(s.as_int()));
      break;
    case DType::int32:
      put(static_cast<std::int32_t>(s.as_int()));
      break;
    case DType::int64:
      put(static_cast<std::int64_t>(s.as_int()));
      break;
    case DType::uint8:
      put(static_cast<std::uint8_t>(s.as_uint()));
      break;
    case DType::uint16:
      put(static_cast<std::uint16_t>(s.as_uint()));
      break;
    case DType::uint32:
      put(static_cast<std::uint32_t>(s.as_uint()));
      break;
    case DType::uint64:
      put(static_cast<std::uint64_t>(s.as_uint()));
      break;
    case DType::float32:
      // An integer scalar converts as C++ does (to nearest), as NumPy converts it.
      put(integer ? (s.is_large_unsigned() ? static_cast<float>(s.as_uint()) : static_cast<float>(s.as_int()))
                  : static_cast<float>(s.as_double()));
      break;
    case DType::float64:
      put(integer ? (s.is_large_unsigned() ? static_cast<double>(s.as_uint()) : static_cast<double>(s.as_int()))
                  : s.as_double());
      break;
    default:
      break;
  }
  return bits;
}

std::string shape_text(std::span<const std::int64_t> s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// Drops dimensions of length 1 and merges neighbours that every array walks as one.
void merge_dims(std::vector<std::int64_t>& dims, const std::vector<std::vector<std::int64_t>*>& strides) {
  std::vector<std::int64_t> d;
  std::vector<std::vector<std::int64_t>> s(strides.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    bool merge = !d.empty();
    for (std::size_t a = 0; merge && a < strides.size(); ++a) merge = s[a].back() == (*strides[a])[k] * dims[k];
    if (merge) {
      d.back() *= dims[k];
      for (std::size_t a = 0; a < strides.size(); ++a) s[a].back() = (*strides[a])[k];
    } else {
      d.push_back(dims[k]);
      for (std::size_t a = 0; a < strides.size(); ++a) s[a].push_back((*strides[a])[k]);
    }
  }
  dims = std::move(d);
  for (std::size_t a = 0; a < strides.size(); ++a) *strides[a] = std::move(s[a]);
}

// The arguments of a call: inputs, then outputs (given or not), checked against the parameters.
struct Given {
  std::vector<const Operand*> in;
  std::vector<const Array*> out;  // null where not given
};

Given split_arguments(const UserKernelState& k, std::span<const Operand> args, const std::vector<Array>& out) {
  const std::size_t nin = k.in.size(), nout = k.out.size();
  Given g;
  if (args.size() != nin && args.size() != nin + nout) {
    throw ValueError(k.what() + ": takes " + std::to_string(nin) + " input" + (nin == 1 ? "" : "s") + " (or " +
                     std::to_string(nin + nout) + " with the outputs), got " + std::to_string(args.size()) +
                     " arguments");
  }
  if (args.size() == nin + nout && nout > 0 && !out.empty())
    throw ValueError(k.what() + ": outputs given both after the inputs and as out");
  if (!out.empty() && out.size() != nout) {
    throw ValueError(k.what() + ": out has " + std::to_string(out.size()) + " arrays for " + std::to_string(nout) +
                     " output parameters");
  }
  for (std::size_t i = 0; i < nin; ++i) g.in.push_back(&args[i]);
  for (std::size_t o = 0; o < nout; ++o) {
    const Array* a = nullptr;
    if (args.size() == nin + nout) {
      if (!args[nin + o].is_array())
        throw TypeError(k.what() + ": output '" + k.out[o].name + "' is given a scalar, not an array");
      a = &args[nin + o].array();
    } else if (!out.empty()) {
      a = &out[o];
    }
    if (a != nullptr && !a->valid()) throw ValueError(k.what() + ": output '" + k.out[o].name + "' is an empty handle");
    g.out.push_back(a);
  }
  for (std::size_t i = 0; i < nin; ++i) {
    if (g.in[i]->is_array() && !g.in[i]->array().valid())
      throw ValueError(k.what() + ": input '" + k.in[i].name + "' is an empty handle");
    if (k.in[i].raw && !g.in[i]->is_array())
      throw TypeError(k.what() + ": raw parameter '" + k.in[i].name + "' is given a scalar, not an array");
  }
  for (std::size_t o = 0; o < nout; ++o)
    if (k.out[o].raw && g.out[o] == nullptr)
      throw ValueError(k.what() + ": raw output '" + k.out[o].name +
                       "' must be given (its shape is the kernel's to know)");
  return g;
}

// The device of the arrays (DeviceMismatch for two), else the default device.
Device device_of(const UserKernelState& k, const Given& g) {
  std::optional<Device> d;
  std::string first;
  const auto see = [&](const Array& a, const std::string& param) {
    const Device ad = a.device();
    if (!d) {
      d = ad;
      first = param;
    } else if (ad != *d) {
      throw DeviceMismatch(k.what() + " ('" + first + "', '" + param + "')", d->str(), ad.str());
    }
  };
  for (std::size_t i = 0; i < g.in.size(); ++i)
    if (g.in[i]->is_array()) see(g.in[i]->array(), k.in[i].name);
  for (std::size_t o = 0; o < g.out.size(); ++o)
    if (g.out[o] != nullptr) see(*g.out[o], k.out[o].name);
  return d ? *d : default_device();
}

// Binds the placeholders and fills plan.args (arrays not yet broadcast, outputs not yet allocated).
void bind(const UserKernelState& k, const Given& g, CallPlan& plan) {
  std::map<char, std::string> by;  // the parameter that bound each placeholder
  const auto bind_one = [&](char p, DType t, const std::string& param) {
    const auto it = plan.bound.find(p);
    if (it == plan.bound.end()) {
      plan.bound[p] = t;
      by[p] = param;
    } else if (it->second != t) {
      throw TypeError(k.what() + ": placeholder " + std::string(1, p) + " is " + std::string(name(it->second)) +
                      " from '" + by[p] + "' but " + std::string(name(t)) + " from '" + param + "'");
    }
  };
  for (std::size_t i = 0; i < g.in.size(); ++i) {
    if (!g.in[i]->is_array()) continue;
    check_supported(g.in[i]->array().dtype(), k.what(), k.in[i].name);
    if (k.in[i].placeholder != 0) bind_one(k.in[i].placeholder, g.in[i]->array().dtype(), k.in[i].name);
  }
  for (std::size_t o = 0; o < g.out.size(); ++o) {
    if (g.out[o] == nullptr) continue;
    check_supported(g.out[o]->dtype(), k.what(), k.out[o].name);
    if (k.out[o].placeholder != 0) bind_one(k.out[o].placeholder, g.out[o]->dtype(), k.out[o].name);
  }
  // Placeholders that only scalars give: the scalars' own dtypes, promoted together.
  std::map<char, DType> from_scalars;
  for (std::size_t i = 0; i < g.in.size(); ++i) {
    const char p = k.in[i].placeholder;
    if (g.in[i]->is_array() || p == 0 || plan.bound.count(p) != 0) continue;
    const DType t = g.in[i]->scalar().default_dtype();
    if (!supported(t)) check_supported(t, k.what(), k.in[i].name);
    const auto it = from_scalars.find(p);
    from_scalars[p] = it == from_scalars.end() ? t : result_type(it->second, t);
  }
  for (const auto& [p, t] : from_scalars) plan.bound[p] = t;

  const auto type_of = [&](const KernelParam& param) {
    if (param.dtype) return *param.dtype;
    const auto it = plan.bound.find(param.placeholder);
    if (it == plan.bound.end()) {
      throw TypeError(k.what() + ": the type of '" + param.name + "' is unknown: no argument binds placeholder " +
                      std::string(1, param.placeholder));
    }
    return it->second;
  };
  for (std::size_t i = 0; i < g.in.size(); ++i) {
    BoundArg a;
    a.param = &k.in[i];
    a.type = type_of(k.in[i]);
    if (g.in[i]->is_array()) {
      a.array = g.in[i]->array();
      a.stored = a.array.dtype();
      if (k.in[i].raw && a.stored != a.type) {
        throw TypeError(k.what() + ": raw parameter '" + k.in[i].name + "' is " + std::string(name(a.type)) +
                        ", the array given is " + std::string(name(a.stored)));
      }
      if (kind_rank(a.stored) > kind_rank(a.type)) {
        throw TypeError(k.what() + ": input '" + k.in[i].name + "' is " + std::string(name(a.type)) +
                        "; the array given is " + std::string(name(a.stored)) +
                        ", which does not convert to it under the same_kind rule");
      }
    } else {
      a.scalar = true;
      a.stored = a.type;
      a.bits = scalar_bits(g.in[i]->scalar(), a.type, k.what(), k.in[i].name);
    }
    plan.args.push_back(std::move(a));
  }
  for (std::size_t o = 0; o < g.out.size(); ++o) {
    BoundArg a;
    a.param = &k.out[o];
    a.output = true;
    a.type = type_of(k.out[o]);
    a.stored = a.type;
    if (g.out[o] != nullptr) {
      a.array = *g.out[o];
      if (a.array.dtype() != a.type) {
        throw TypeError(k.what() + ": output '" + k.out[o].name + "' is " + std::string(name(a.type)) +
                        ", the out array is " + std::string(name(a.array.dtype())));
      }
      if (a.array.is_read_only()) throw ValueError(k.what() + ": output '" + k.out[o].name + "' is read-only");
    }
    plan.args.push_back(std::move(a));
  }
  if (k.reduction) {
    plan.reduce_type = k.reduce_type ? type_of(*k.reduce_type) : plan.args[g.in.size()].type;
  }
}

// Raw arrays as the kernel indexes them: C-contiguous (an input is copied when not).
void prepare_raw(const UserKernelState& k, CallPlan& plan) {
  for (BoundArg& a : plan.args) {
    if (!a.param->raw) continue;
    if (a.array.is_c_contiguous()) continue;
    if (a.output) throw ValueError(k.what() + ": raw output '" + a.param->name + "' must be C-contiguous");
    a.array = a.array.copy();
  }
}

void append_code(std::string& key, const BoundArg& a) {
  key += a.scalar ? 's' : (a.param->raw ? 'r' : (a.output ? 'o' : 'a'));
  key += static_cast<char>('A' + static_cast<int>(a.stored));
  key += static_cast<char>('A' + static_cast<int>(a.type));
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t n = 1;
  for (std::int64_t d : v) n *= d;
  return n;
}

bool walked(const BoundArg& a) {
  return !a.scalar && !a.param->raw;
}

CallPlan plan_elementwise(const UserKernelState& k, std::span<const Operand> args, const ElementwiseCall& how) {
  const Given g = split_arguments(k, args, how.out);
  CallPlan plan;
  plan.device = device_of(k, g);
  bind(k, g, plan);
  prepare_raw(k, plan);

  // The broadcast shape of the inputs; an output given may be larger, if the inputs broadcast to it.
  bool any = false;
  Shape shape;
  try {
    for (const BoundArg& a : plan.args) {
      if (!walked(a) || a.output) continue;
      const Shape s(a.array.shape().begin(), a.array.shape().end());
      shape = any ? broadcast_shapes(shape, s) : s;
      any = true;
    }
  } catch (const ValueError& e) {
    throw ValueError(k.what() + ": the inputs do not broadcast together: " + e.what());
  }
  for (const BoundArg& a : plan.args) {
    if (!a.output || !walked(a) || !a.array.valid()) continue;
    const Shape s(a.array.shape().begin(), a.array.shape().end());
    bool fits = true;
    try {
      fits = !any || broadcast_shapes(shape, s) == s;
    } catch (const ValueError&) {
      fits = false;
    }
    if (!fits) {
      throw ValueError(k.what() + ": output '" + a.param->name + "' has shape " + shape_text(s) + ", the result's is " +
                       shape_text(shape));
    }
    shape = s;
    any = true;
  }
  if (how.size && any) throw ValueError(k.what() + ": size is for kernels whose arguments are all raw or scalars");
  if (!any) {
    if (!how.size) throw ValueError(k.what() + ": no array argument gives the shape; pass size");
    if (*how.size < 0) throw ValueError(k.what() + ": size must be at least 0, not " + std::to_string(*how.size));
    shape = {*how.size};
  }
  for (const BoundArg& a : plan.args) {
    if (a.output && walked(a) && a.array.valid() &&
        !std::equal(shape.begin(), shape.end(), a.array.shape().begin(), a.array.shape().end())) {
      throw ValueError(k.what() + ": output '" + a.param->name + "' has shape " + shape_text(a.array.shape()) +
                       ", another output's is " + shape_text(shape));
    }
  }
  plan.shape = shape;
  plan.size = product(shape);

  // Outputs not given; views of the inputs with the broadcast shape.
  for (BoundArg& a : plan.args) {
    if (a.output && !a.array.valid()) a.array = empty(shape, a.type, plan.device);
    if (walked(a) && !a.output) a.array = broadcast_to(a.array, shape);
  }
  plan.dims = shape;
  std::vector<std::vector<std::int64_t>*> strides;
  for (BoundArg& a : plan.args) {
    if (!walked(a)) continue;
    a.strides.assign(a.array.strides().begin(), a.array.strides().end());
    strides.push_back(&a.strides);
  }
  merge_dims(plan.dims, strides);
  plan.contiguous = plan.dims.size() <= 1;
  for (const BoundArg& a : plan.args)
    if (walked(a) && !plan.dims.empty() && a.strides[0] != static_cast<std::int64_t>(itemsize(a.stored)))
      plan.contiguous = false;

  plan.key = "e";
  plan.key += std::to_string(plan.contiguous ? 0 : plan.dims.size());
  plan.key += ':';
  for (const BoundArg& a : plan.args) append_code(plan.key, a);
  for (BoundArg& a : plan.args) plan.results.push_back(a.output ? a.array : Array());
  plan.results.erase(plan.results.begin(), plan.results.begin() + static_cast<std::ptrdiff_t>(k.in.size()));
  return plan;
}

CallPlan plan_reduction(const UserKernelState& k, std::span<const Operand> args, const ReductionCall& how) {
  const Given g = split_arguments(k, args, how.out);
  CallPlan plan;
  plan.device = device_of(k, g);
  bind(k, g, plan);
  prepare_raw(k, plan);

  bool any = false;
  Shape shape;
  try {
    for (const BoundArg& a : plan.args) {
      if (!walked(a) || a.output) continue;
      const Shape s(a.array.shape().begin(), a.array.shape().end());
      shape = any ? broadcast_shapes(shape, s) : s;
      any = true;
    }
  } catch (const ValueError& e) {
    throw ValueError(k.what() + ": the inputs do not broadcast together: " + e.what());
  }
  if (!any) throw ValueError(k.what() + ": no input is an array (a reduction needs one)");
  const int nd = static_cast<int>(shape.size());
  std::vector<bool> reduced(shape.size(), how.axis.all());
  for (int axis : how.axis.list()) {
    if (axis < -nd || axis >= nd)
      throw ValueError(k.what() + ": axis " + std::to_string(axis) + " is out of bounds for " + std::to_string(nd) +
                       " dimensions");
    const int a = axis < 0 ? axis + nd : axis;
    if (reduced[a]) throw ValueError(k.what() + ": axis " + std::to_string(axis) + " is repeated");
    reduced[a] = true;
  }
  Shape out_shape;
  std::vector<int> kept, red;
  for (int d = 0; d < nd; ++d) {
    (reduced[d] ? red : kept).push_back(d);
    if (!reduced[d])
      out_shape.push_back(shape[d]);
    else if (how.keepdims)
      out_shape.push_back(1);
  }
  for (BoundArg& a : plan.args) {
    if (!a.output || !walked(a)) continue;
    if (!a.array.valid()) {
      a.array = empty(out_shape, a.type, plan.device);
    } else if (!std::equal(out_shape.begin(), out_shape.end(), a.array.shape().begin(), a.array.shape().end())) {
      throw ValueError(k.what() + ": output '" + a.param->name + "' has shape " + shape_text(a.array.shape()) +
                       ", the result's is " + shape_text(out_shape));
    }
  }
  plan.shape = shape;
  for (int d : kept) plan.dims.push_back(shape[d]);
  for (int d : red) plan.reduce_dims.push_back(shape[d]);
  std::vector<std::vector<std::int64_t>*> kept_strides, red_strides;
  for (BoundArg& a : plan.args) {
    if (!walked(a)) continue;
    if (a.output) {
      const auto s = a.array.strides();
      for (std::size_t j = 0; j < kept.size(); ++j) a.strides.push_back(s[how.keepdims ? kept[j] : j]);
    } else {
      a.array = broadcast_to(a.array, shape);
      const auto s = a.array.strides();
      for (int d : kept) a.strides.push_back(s[d]);
      for (int d : red) a.reduce_strides.push_back(s[d]);
      red_strides.push_back(&a.reduce_strides);
    }
    kept_strides.push_back(&a.strides);
  }
  merge_dims(plan.dims, kept_strides);
  merge_dims(plan.reduce_dims, red_strides);
  plan.size = product(plan.dims);
  plan.reduce_size = product(plan.reduce_dims);

  plan.key = "r";
  plan.key += std::to_string(plan.dims.size());
  plan.key += ',';
  plan.key += std::to_string(plan.reduce_dims.size());
  plan.key += static_cast<char>('A' + static_cast<int>(plan.reduce_type));
  for (const BoundArg& a : plan.args) append_code(plan.key, a);
  for (std::size_t o = k.in.size(); o < plan.args.size(); ++o) plan.results.push_back(plan.args[o].array);
  return plan;
}

// The kernels of a plan on its device: generated and compiled at the first call of their kind.
std::vector<Kernel> kernels_for(UserKernelState& k, const CallPlan& plan) {
  std::shared_ptr<UserKernelState::Entry> entry;
  {
    const std::lock_guard<std::mutex> lock(k.mutex);
    auto& e = k.cache[plan.key];
    if (!e) {
      e = std::make_shared<UserKernelState::Entry>();
      ProgramOptions o;
      o.name = k.name + ".cu";
      o.options = {"--fmad=false"};
      o.options.insert(o.options.end(), k.options.begin(), k.options.end());
      e->program = std::make_shared<Program>(k.reduction ? reduction_source(k, plan) : elementwise_source(k, plan), o);
    }
    entry = e;
    for (const auto& [d, ks] : entry->kernels)
      if (d == plan.device) return ks;
  }
  // Compiled and loaded outside the lock of the cache's map, under the entry's own ordering: two
  // threads may both compile; Program's caches make the second cheap, and the first result stays.
  std::vector<Kernel> ks{entry->program->kernel(k.symbol(), plan.device)};
  if (k.reduction) ks.push_back(entry->program->kernel(k.symbol() + "_final", plan.device));
  const std::lock_guard<std::mutex> lock(k.mutex);
  for (const auto& [d, existing] : entry->kernels)
    if (d == plan.device) return existing;
  entry->kernels.emplace_back(plan.device, ks);
  return ks;
}

// A launch's argument bytes, in the order of the generated parameter list (user_kernel_source.cpp).
class ArgPack {
 public:
  explicit ArgPack(const Device& device, std::size_t arrays)
      : refs_(arrays + 1), context_(device, refs_.data(), arrays + 1) {}
  void word(std::uint64_t v, std::size_t bytes = 8) { add({v}, bytes); }
  void dims(const std::vector<std::int64_t>& v) {
    // At least one word (a 0-d shape); sized first, not grown (GCC 13 warned, falsely, of a delete
    // at an offset in push_back's path).
    std::vector<std::uint64_t> w(std::max<std::size_t>(v.size(), 1), 0);
    std::copy(v.begin(), v.end(), w.begin());
    add(w, w.size() * 8);
  }
  std::uint64_t address(const Array& a) { return kernel_arg(a, context_); }
  // May be called more than once (a reduction's two passes): each launch holds its own references.
  void launch(const Kernel& kernel, const LaunchConfig& config) {
    std::vector<void*> p;
    for (auto& w : words_) p.push_back(w.data());
    std::vector<std::shared_ptr<const void>> refs(refs_.begin(),
                                                  refs_.begin() + static_cast<std::ptrdiff_t>(context_.kept()));
    kernel.launch_holding(config, p.data(), sizes_.data(), p.size(), refs.data(), refs.size(),
                          context_.stream_ordered());
  }

 private:
  void add(std::vector<std::uint64_t> w, std::size_t bytes) {
    words_.push_back(std::move(w));
    sizes_.push_back(bytes);
  }
  std::vector<std::vector<std::uint64_t>> words_;
  std::vector<std::size_t> sizes_;
  std::vector<std::shared_ptr<const void>> refs_;
  KernelArgContext context_;
};

void pack_arguments(ArgPack& pack, const CallPlan& plan, bool reduction) {
  for (const BoundArg& a : plan.args) {
    if (a.scalar) {
      pack.word(a.bits, itemsize(a.type));
    } else if (a.param->raw) {
      const std::uint64_t p = pack.address(a.array);
      pack.dims({static_cast<std::int64_t>(p), a.array.size()});
    } else {
      pack.word(pack.address(a.array));
      if (reduction || !plan.contiguous) pack.dims(a.strides);
      if (reduction && !a.output) pack.dims(a.reduce_strides);
    }
  }
}

std::size_t array_count(const CallPlan& plan) {
  std::size_t n = 0;
  for (const BoundArg& a : plan.args) n += a.scalar ? 0 : 1;
  return n;
}

unsigned pow2_at_least(std::int64_t n, unsigned lo, unsigned hi) {
  unsigned b = lo;
  while (b < hi && static_cast<std::int64_t>(b) < n) b *= 2;
  return b;
}

unsigned grid_of(std::int64_t blocks) {
  return static_cast<unsigned>(std::min<std::int64_t>(blocks, std::int64_t{1} << 30));
}

void run_elementwise(UserKernelState& k, const CallPlan& plan) {
  if (plan.size == 0) return;
  const std::vector<Kernel> ks = kernels_for(k, plan);
  ArgPack pack(plan.device, array_count(plan));
  pack_arguments(pack, plan, false);
  // A block takes `per` consecutive elements. GPU: 256 threads, two elements each (0.97x of xp's
  // fused expression at 2^26 float32 on an H100: the second element's loads wait for the first
  // one's store, which may alias them). CPU: one thread a block, walking its range in order (a
  // block's threads run one after another there, so more of them would each stride through
  // memory), a few blocks per thread of xp's.
  std::int64_t per = 0;
  LaunchConfig config;
  if (plan.device.is_cuda()) {
    config.block = Dim3(256);
    per = 512;
  } else {
    config.block = Dim3(1);
    const std::int64_t blocks = std::int64_t{num_threads()} * 4;
    per = std::max<std::int64_t>(4096, (plan.size + blocks - 1) / blocks);
  }
  pack.word(static_cast<std::uint64_t>(plan.size));
  pack.word(static_cast<std::uint64_t>(per));
  if (!plan.contiguous) pack.dims(plan.dims);
  config.grid = Dim3(grid_of((plan.size + per - 1) / per));
  pack.launch(ks[0], config);
}

void run_reduction(UserKernelState& k, const CallPlan& plan) {
  if (plan.size == 0) return;
  const std::vector<Kernel> ks = kernels_for(k, plan);
  const bool gpu = plan.device.is_cuda();
  // Blocks wanted to fill the device; the reduced elements of a row are split into chunks when the
  // rows alone are fewer, each chunk long enough to be worth a block.
  const std::int64_t want = gpu ? 1024 : std::int64_t{num_threads()} * 4;
  const std::int64_t min_chunk = gpu ? 256 * 16 : 4096;
  std::int64_t chunks = 1;
  if (plan.size < want)
    chunks = std::max<std::int64_t>(
        1, std::min((want + plan.size - 1) / plan.size, (plan.reduce_size + min_chunk - 1) / min_chunk));
  const Array part = empty({chunks > 1 ? plan.size * chunks : 1}, plan.reduce_type, plan.device);
  ArgPack pack(plan.device, array_count(plan) + 1);
  pack_arguments(pack, plan, true);
  pack.word(pack.address(part));
  pack.word(static_cast<std::uint64_t>(plan.size));
  pack.word(static_cast<std::uint64_t>(plan.reduce_size));
  pack.word(static_cast<std::uint64_t>(chunks));
  pack.dims(plan.dims);
  pack.dims(plan.reduce_dims);
  LaunchConfig config;
  const std::int64_t per_chunk = (plan.reduce_size + chunks - 1) / chunks;
  config.block = Dim3(gpu ? pow2_at_least(per_chunk, 32, 256) : 1);
  config.grid = Dim3(grid_of(plan.size * chunks));
  pack.launch(ks[0], config);
  if (chunks > 1) {
    config.block = Dim3(gpu ? pow2_at_least(chunks, 32, 256) : 1);
    config.grid = Dim3(grid_of(plan.size));
    pack.launch(ks[1], config);
  }
}

std::shared_ptr<UserKernelState> make_state(bool reduction, std::string in_params, std::string out_params,
                                            std::string name) {
  auto k = std::make_shared<UserKernelState>();
  k->reduction = reduction;
  k->kind = reduction ? "ReductionKernel" : "ElementwiseKernel";
  k->name = std::move(name);
  if (!is_identifier(k->name) || k->name.rfind("xp_", 0) == 0)
    throw ValueError(k->kind + ": the name '" + k->name + "' is not a C++ identifier that may name a kernel");
  k->in = parse_params(in_params, k->what() + ": in_params");
  k->out = parse_params(out_params, k->what() + ": out_params");
  std::vector<std::string> names;
  for (const auto* list : {&k->in, &k->out})
    for (const KernelParam& p : *list) {
      if (std::find(names.begin(), names.end(), p.name) != names.end())
        throw ValueError(k->what() + ": parameter '" + p.name + "' is declared twice");
      names.push_back(p.name);
    }
  if (k->out.empty()) throw ValueError(k->what() + ": out_params declares no output");
  return k;
}

}  // namespace

std::vector<KernelParam> parse_params(std::string_view text, const std::string& what) {
  std::vector<KernelParam> params;
  if (trim(text).empty()) return params;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = trim(text.substr(start, comma - start));
    const std::vector<std::string_view> w = words(item);
    const bool raw = !w.empty() && w[0] == "raw";
    if (w.size() != (raw ? 3u : 2u)) {
      throw ValueError(what + ": '" + std::string(item) + "' is not a parameter (\"type name\" or \"raw type name\")");
    }
    KernelParam p = parse_type(w[raw ? 1 : 0], what);
    p.raw = raw;
    p.name = std::string(w[raw ? 2 : 1]);
    if (!is_identifier(p.name))
      throw ValueError(what + ": '" + p.name + "' is not a C++ identifier that may name a parameter");
    for (const char* reserved : {"i", "_ind", "_in_ind", "_out_ind", "_type_reduce"})
      if (p.name == reserved) throw ValueError(what + ": '" + p.name + "' is a name the kernel defines itself");
    if (p.name.rfind("xp_", 0) == 0) throw ValueError(what + ": names beginning with xp_ are the kernel's own");
    params.push_back(std::move(p));
    start = comma + 1;
  }
  return params;
}

KernelParam parse_type(std::string_view text, const std::string& what) {
  KernelParam p;
  if (text.size() == 1 && std::isalpha(static_cast<unsigned char>(text[0])) != 0) {
    p.placeholder = text[0];
    return p;
  }
  const std::optional<DType> t = parse_dtype(text);
  if (!t) {
    throw TypeError(what + ": unknown type name '" + std::string(text) +
                    "' (a dtype name, or a single letter for a placeholder)");
  }
  if (!supported(*t)) {
    throw TypeError(what + ": " + std::string(text) + " is not supported by user kernels (supported: " + kSupported +
                    ")");
  }
  p.dtype = t;
  return p;
}

}  // namespace detail

// ---- ElementwiseKernel ----

ElementwiseKernel::ElementwiseKernel(std::string in_params, std::string out_params, std::string operation,
                                     std::string name, ElementwiseKernelOptions options)
    : state_(detail::make_state(false, std::move(in_params), std::move(out_params), std::move(name))) {
  if (detail::trim(operation).empty()) throw ValueError(state_->what() + ": the operation is empty");
  state_->operation = std::move(operation);
  state_->preamble = std::move(options.preamble);
  state_->options = std::move(options.options);
}

std::vector<Array> ElementwiseKernel::call(std::span<const Operand> args, const ElementwiseCall& how) const {
  const detail::CallPlan plan = detail::plan_elementwise(*state_, args, how);
  detail::run_elementwise(*state_, plan);
  return plan.results;
}

Array ElementwiseKernel::operator()(std::initializer_list<Operand> args, const ElementwiseCall& how) const {
  if (state_->out.size() != 1)
    throw ValueError(state_->what() + ": has " + std::to_string(state_->out.size()) + " outputs: use call()");
  return call(std::span<const Operand>(args.begin(), args.size()), how)[0];
}

std::string ElementwiseKernel::source(std::span<const Operand> args, const ElementwiseCall& how) const {
  return detail::elementwise_source(*state_, detail::plan_elementwise(*state_, args, how));
}

const std::string& ElementwiseKernel::name() const {
  return state_->name;
}
int ElementwiseKernel::nin() const {
  return static_cast<int>(state_->in.size());
}
int ElementwiseKernel::nout() const {
  return static_cast<int>(state_->out.size());
}

// ---- ReductionKernel ----

ReductionKernel::ReductionKernel(std::string in_params, std::string out_params, std::string map_expr,
                                 std::string reduce_expr, std::string post_map_expr, std::string identity,
                                 std::string name, ReductionKernelOptions options)
    : state_(detail::make_state(true, std::move(in_params), std::move(out_params), std::move(name))) {
  const auto need = [&](const std::string& text, const char* what) {
    if (detail::trim(text).empty()) throw ValueError(state_->what() + ": " + what + " is empty");
  };
  need(map_expr, "map_expr");
  need(reduce_expr, "reduce_expr");
  need(post_map_expr, "post_map_expr");
  need(identity, "identity");
  for (const auto* list : {&state_->in, &state_->out})
    for (const detail::KernelParam& p : *list)
      if (p.name == "a" || p.name == "b")
        throw ValueError(state_->what() + ": '" + p.name + "' names the reduced values; choose another parameter name");
  state_->map_expr = std::move(map_expr);
  state_->reduce_expr = std::move(reduce_expr);
  state_->post_map_expr = std::move(post_map_expr);
  state_->identity = std::move(identity);
  state_->preamble = std::move(options.preamble);
  state_->options = std::move(options.options);
  if (!detail::trim(options.reduce_type).empty())
    state_->reduce_type = detail::parse_type(detail::trim(options.reduce_type), state_->what() + ": reduce_type");
  if (state_->reduce_type && state_->reduce_type->placeholder != 0) {
    bool declared = false;
    for (const auto* list : {&state_->in, &state_->out})
      for (const detail::KernelParam& p : *list)
        declared = declared || p.placeholder == state_->reduce_type->placeholder;
    if (!declared) {
      throw TypeError(state_->what() + ": reduce_type " + std::string(1, state_->reduce_type->placeholder) +
                      " is a placeholder no parameter uses");
    }
  }
}

std::vector<Array> ReductionKernel::call(std::span<const Operand> args, const ReductionCall& how) const {
  const detail::CallPlan plan = detail::plan_reduction(*state_, args, how);
  detail::run_reduction(*state_, plan);
  return plan.results;
}

Array ReductionKernel::operator()(std::initializer_list<Operand> args, const ReductionCall& how) const {
  if (state_->out.size() != 1)
    throw ValueError(state_->what() + ": has " + std::to_string(state_->out.size()) + " outputs: use call()");
  return call(std::span<const Operand>(args.begin(), args.size()), how)[0];
}

std::string ReductionKernel::source(std::span<const Operand> args, const ReductionCall& how) const {
  return detail::reduction_source(*state_, detail::plan_reduction(*state_, args, how));
}

const std::string& ReductionKernel::name() const {
  return state_->name;
}
int ReductionKernel::nin() const {
  return static_cast<int>(state_->in.size());
}
int ReductionKernel::nout() const {
  return static_cast<int>(state_->out.size());
}

}  // namespace xp
