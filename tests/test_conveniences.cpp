// What C++ users reach for first: printing dtypes, shapes and devices; devices named by text where
// a Device is taken; an array in an if (NumPy's bool(a)); flatten and ravel; arrays from nested
// braced lists; and the dtype a braced list of int literals gets (int64, as NumPy's default).
// Written without `using namespace xp`, as user code is, so that argument-dependent lookup is what
// finds the operators.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "xp/xp.hpp"

namespace {

template <class T>
std::string printed(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Shape is a std::vector: its operator<< is found with a using-declaration (array.hpp says so).
template <class T>
std::string printed_shape(const T& v) {
  using xp::operator<<;
  std::ostringstream os;
  os << v;
  return os.str();
}

// The ValueError's text, or "" when none (or another exception) is thrown.
template <class F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const xp::ValueError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const void* address(const xp::Array& a) {
  return a.data();
}

}  // namespace

// ---- printing ----

TEST(Conveniences, DTypePrintsItsName) {
  EXPECT_EQ(printed(xp::DType::float32), "float32");
  EXPECT_EQ(printed(xp::DType::bool_), "bool");
  EXPECT_EQ(printed(xp::DType::bfloat16), "bfloat16");
  EXPECT_EQ(printed(xp::zeros({2}, xp::DType::uint16).dtype()), "uint16");
}

TEST(Conveniences, ShapePrintsAsNumPysTuple) {
  EXPECT_EQ(printed_shape(xp::Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(printed_shape(xp::Shape{5}), "(5,)");
  EXPECT_EQ(printed_shape(xp::Shape{}), "()");
  EXPECT_EQ(printed_shape(xp::Shape{0, 4, 1}), "(0, 4, 1)");
  // a.shape() is a span: the same text.
  EXPECT_EQ(printed_shape(xp::zeros({4, 1}).shape()), "(4, 1)");
  EXPECT_EQ(printed_shape(xp::zeros({}).shape()), "()");
}

TEST(Conveniences, DevicePrintsItsStr) {
  EXPECT_EQ(printed(xp::Device::cpu()), "cpu");
  EXPECT_EQ(printed(xp::Device::cuda(0)), "cuda:0");
  EXPECT_EQ(printed(xp::Device::cuda(3)), "cuda:3");
  EXPECT_EQ(printed(xp::zeros({1}, xp::DType::float32, xp::Device::cpu()).device()), "cpu");
}

// ---- devices from text ----

TEST(Conveniences, DeviceFromText) {
  EXPECT_EQ(xp::Device("cpu"), xp::Device::cpu());
  EXPECT_EQ(xp::Device("cuda"), xp::Device::cuda(0));
  EXPECT_EQ(xp::Device("cuda:0"), xp::Device::cuda(0));
  EXPECT_EQ(xp::Device(std::string("cuda:2")), xp::Device::cuda(2));
  // Implicit where a Device is taken: no device is used, so none needs to exist.
  const xp::Device d = "cuda:1";
  EXPECT_EQ(d, xp::Device::cuda(1));
  const xp::DeviceArg arg = std::string("cpu");
  EXPECT_EQ(*arg, xp::Device::cpu());

  const xp::Array z = xp::zeros({2}, xp::DType::float32, "cpu");
  EXPECT_EQ(z.device(), xp::Device::cpu());
  EXPECT_EQ(z.dtype(), xp::DType::float32);
  EXPECT_EQ(xp::ones({3}, xp::DType::float64, std::string("cpu")).device(), xp::Device::cpu());
  EXPECT_EQ(xp::arange(0, 4, 1, std::nullopt, "cpu").device(), xp::Device::cpu());
  EXPECT_EQ(z.to_device("cpu").device(), xp::Device::cpu());
}

TEST(Conveniences, BadDeviceTextIsAValueErrorNamingItAndTheAcceptedForms) {
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "CPU", ""}) {
    const std::string e = value_error([&] { xp::zeros({2}, xp::DType::float32, bad); });
    EXPECT_TRUE(has(e, std::string("'") + bad + "'") && has(e, "cpu, cuda or cuda:N")) << bad << ": " << e;
  }
  const std::string e = value_error([] {
    const xp::Device d = std::string("tpu:0");
    (void)d;
  });
  EXPECT_TRUE(has(e, "'tpu:0'")) << e;
}

// ---- truth value ----

TEST(Conveniences, OneElementArrayConvertsToBoolAsNumPy) {
  EXPECT_TRUE(static_cast<bool>(xp::asarray({1.0}, xp::Shape{})));
  EXPECT_FALSE(static_cast<bool>(xp::asarray({0.0}, xp::Shape{})));
  EXPECT_FALSE(static_cast<bool>(xp::asarray({-0.0}, xp::Shape{})));
  EXPECT_TRUE(static_cast<bool>(xp::asarray({std::numeric_limits<double>::quiet_NaN()})));  // bool(nan) is True
  EXPECT_TRUE(static_cast<bool>(xp::full({1, 1, 1}, 7)));  // one element, any number of axes
  EXPECT_FALSE(static_cast<bool>(xp::zeros({1, 1}, xp::DType::int8)));
  EXPECT_TRUE(static_cast<bool>(xp::asarray({0.5f})));
  // In conditions, a comparison included (a lazy array, evaluated here).
  const xp::Array a = xp::asarray({3.0}, xp::Shape{});
  bool taken = false;
  if (a > 2.0) taken = true;
  EXPECT_TRUE(taken);
  EXPECT_FALSE(a < 2.0 ? true : false);
  EXPECT_TRUE(xp::all(xp::asarray({1, 2}) > 0) && xp::any(xp::asarray({0, 1}) > 0));
}

TEST(Conveniences, TruthOfSeveralElementsOrNoneIsAValueError) {
  const std::string many = value_error([] { (void)static_cast<bool>(xp::zeros({2, 3})); });
  EXPECT_TRUE(has(many, "The truth value of an array with more than one element is ambiguous") && has(many, "(2, 3)") &&
              has(many, "xp::any") && has(many, "xp::all"))
      << many;
  const std::string two = value_error([] {
    if (xp::asarray({1.0, 2.0}) == 1.0) FAIL() << "no truth value";
  });
  EXPECT_TRUE(has(two, "more than one element")) << two;
  const std::string none = value_error([] { (void)static_cast<bool>(xp::zeros({0})); });
  EXPECT_TRUE(has(none, "The truth value of an empty array is ambiguous") && has(none, "(0,)")) << none;
}

// ---- flatten and ravel ----

TEST(Conveniences, FlattenIsAlwaysACopyInCOrder) {
  const xp::Array a = xp::arange(0, 6, 1, xp::DType::float32).reshape({2, 3});
  const xp::Array f = a.flatten();
  EXPECT_EQ(f.ndim(), 1);
  EXPECT_EQ(f.shape(0), 6);
  EXPECT_EQ(f.dtype(), xp::DType::float32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_NE(address(f), address(a));  // contiguous, yet a copy
  xp::Array g = f;
  g += 10.0f;
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // A transposed array flattens in C order of its own shape.
  EXPECT_EQ(a.T().flatten().to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // 0-d: one element, shape (1,).
  const xp::Array s = xp::asarray({4.0}, xp::Shape{}).flatten();
  EXPECT_EQ(s.ndim(), 1);
  EXPECT_EQ(s.shape(0), 1);
}

TEST(Conveniences, RavelIsAViewWhenContiguousElseACopy) {
  const xp::Array a = xp::arange(0, 6, 1, xp::DType::int32).reshape({2, 3});
  const xp::Array r = a.ravel();
  EXPECT_EQ(r.ndim(), 1);
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(address(r), address(a));
  r[4] = 40;  // writes through to a
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 40, 5}));

  const xp::Array t = a.T().ravel();
  EXPECT_EQ(t.to_vector<int>(), (std::vector<int>{0, 3, 1, 40, 2, 5}));
  t[0] = -1;  // a copy: a is unchanged
  EXPECT_EQ(a.to_vector<int>()[0], 0);
}

// ---- asarray of nested lists and the default integer dtype ----

TEST(Conveniences, AsarrayOfNestedListsHasTheirShape) {
  const xp::Array m = xp::asarray({{1.f, 2.f}, {3.f, 4.f}});
  EXPECT_EQ(std::vector<std::int64_t>(m.shape().begin(), m.shape().end()), (xp::Shape{2, 2}));
  EXPECT_EQ(m.dtype(), xp::DType::float32);
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));

  const xp::Array r = xp::asarray({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, "cpu");
  EXPECT_EQ(std::vector<std::int64_t>(r.shape().begin(), r.shape().end()), (xp::Shape{2, 3}));
  EXPECT_EQ(r.dtype(), xp::DType::float64);
  EXPECT_EQ(r[1].to_vector<double>(), (std::vector<double>{4, 5, 6}));

  const xp::Array c = xp::asarray({{{1, 2}, {3, 4}, {5, 6}}, {{7, 8}, {9, 10}, {11, 12}}});
  EXPECT_EQ(std::vector<std::int64_t>(c.shape().begin(), c.shape().end()), (xp::Shape{2, 3, 2}));
  EXPECT_EQ(c.dtype(), xp::DType::int64);
  EXPECT_EQ(c.to_vector<int>(), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));

  const xp::Array b = xp::asarray({{true, false}, {false, true}});
  EXPECT_EQ(b.dtype(), xp::DType::bool_);
  EXPECT_EQ(b.to_vector<int>(), (std::vector<int>{1, 0, 0, 1}));
  EXPECT_EQ(xp::asarray({{std::uint8_t{1}}}).dtype(), xp::DType::uint8);
}

TEST(Conveniences, RaggedNestedListsAreAValueErrorNamingTheRow) {
  const std::string e = value_error([] { xp::asarray({{1.f, 2.f}, {3.f, 4.f, 5.f}}); });
  EXPECT_TRUE(has(e, "ragged") && has(e, "row 1 has 3 elements") && has(e, "row 0 has 2")) << e;
  const std::string later = value_error([] { xp::asarray({{1.0}, {2.0}, {}}); });
  EXPECT_TRUE(has(later, "row 2 has 0 elements")) << later;
  const std::string deep = value_error([] { xp::asarray({{{1, 2}, {3, 4}}, {{5, 6}, {7}}}); });
  EXPECT_TRUE(has(deep, "row [1][1] has 1 element") && has(deep, "row [0][0] has 2")) << deep;
  const std::string outer = value_error([] { xp::asarray({{{1, 2}, {3, 4}}, {{5, 6}}}); });
  EXPECT_TRUE(has(outer, "row 1 has 1 element ") && has(outer, "row 0 has 2")) << outer;
}

TEST(Conveniences, IntLiteralsGiveInt64AsNumPy) {
  // np.asarray([1, 2, 3]).dtype is int64; so is a braced list of ints here, 2-D too.
  const xp::Array a = xp::asarray({1, 2, 3});
  EXPECT_EQ(a.dtype(), xp::DType::int64);
  EXPECT_EQ(a.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(xp::asarray({{1, 2}, {3, 4}}).dtype(), xp::DType::int64);
  EXPECT_EQ(xp::asarray({7}, xp::Shape{}).dtype(), xp::DType::int64);
  EXPECT_EQ(xp::asarray({-2147483647 - 1}).item<std::int64_t>(), -2147483648LL);
  // Other element types keep their own dtype; a vector is typed data and keeps it too.
  EXPECT_EQ(xp::asarray({1.0, 2.0}).dtype(), xp::DType::float64);
  EXPECT_EQ(xp::asarray({1.f, 2.f}).dtype(), xp::DType::float32);
  EXPECT_EQ(xp::asarray({std::int16_t{1}}).dtype(), xp::DType::int16);
  EXPECT_EQ(xp::asarray({1u, 2u}).dtype(), xp::DType::uint32);
  EXPECT_EQ(xp::asarray(std::vector<int>{1, 2}).dtype(), xp::DType::int32);
  // The same as the other places a C++ int has no array to follow.
  EXPECT_EQ(xp::full({3}, 1).dtype(), xp::DType::int64);
  EXPECT_EQ(xp::arange(3).dtype(), xp::DType::int64);
}
