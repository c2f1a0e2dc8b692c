#include "backend/ir.hpp"

namespace xp::detail {

namespace {
struct OpInfo {
  std::string_view name;
  int arity;
};
constexpr OpInfo kOps[] = {
    {"load", 0},        {"constant", 0},      {"cast", 1},        {"negative", 1},
    {"abs", 1},         {"sign", 1},          {"square", 1},      {"sqrt", 1},
    {"exp", 1},         {"expm1", 1},         {"log", 1},         {"log1p", 1},
    {"log2", 1},        {"log10", 1},         {"sin", 1},         {"cos", 1},
    {"tan", 1},         {"asin", 1},          {"acos", 1},        {"atan", 1},
    {"sinh", 1},        {"cosh", 1},          {"tanh", 1},        {"acosh", 1},
    {"asinh", 1},       {"atanh", 1},         {"floor", 1},       {"ceil", 1},
    {"round", 1},       {"trunc", 1},         {"isnan", 1},       {"isinf", 1},
    {"isfinite", 1},    {"signbit", 1},       {"logical_not", 1}, {"bitwise_invert", 1},
    {"real", 1},        {"imag", 1},          {"conj", 1},        {"add", 2},
    {"subtract", 2},    {"multiply", 2},      {"divide", 2},      {"floor_divide", 2},
    {"remainder", 2},   {"pow", 2},           {"atan2", 2},       {"hypot", 2},
    {"copysign", 2},    {"nextafter", 2},     {"minimum", 2},     {"maximum", 2},
    {"equal", 2},       {"not_equal", 2},     {"less", 2},        {"less_equal", 2},
    {"greater", 2},     {"greater_equal", 2}, {"logical_and", 2}, {"logical_or", 2},
    {"logical_xor", 2}, {"bitwise_and", 2},   {"bitwise_or", 2},  {"bitwise_xor", 2},
    {"left_shift", 2},  {"right_shift", 2},   {"complex", 2},     {"where", 3},
    {"clip", 3},        {"fma", 3},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kOpCount, "one entry per Op");
}  // namespace

std::string_view op_name(Op op) noexcept {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kOpCount ? kOps[i].name : std::string_view("?");
}

int op_arity(Op op) noexcept {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kOpCount ? kOps[i].arity : 0;
}

}  // namespace xp::detail
