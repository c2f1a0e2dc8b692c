// Checks at the edge of the public API: host data whose count does not match its shape, sizes,
// extents, offsets and strides whose arithmetic would overflow, more than 64 dimensions, negative
// extents; and messages that name what the user passed (item, out=, the path of a .npy file, the
// thread limit, what each CUDA launch or execution error 700 to 720 means). Each case would read
// past a buffer, overflow a signed integer (both caught by the sanitize preset) or mislead without
// its check.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "runtime/driver.hpp"
#include "test_util.hpp"
#include "xp/config.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// The ValueError's text, or "" when none (or another exception) is thrown.
template <class F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Array with_ndim(int nd) {
  return zeros(Shape(static_cast<std::size_t>(nd), 1), DType::float32);
}

}  // namespace

// ---- host data with a shape ----

TEST(ApiChecks, AsarrayRefusesAShapeOfAnotherSizeThanItsValues) {
  // Two values for six elements: reading them all would run past the vector.
  const std::string few = value_error([] { asarray(std::vector<float>{1, 2}, Shape{2, 3}); });
  EXPECT_TRUE(has(few, "asarray") && has(few, "2 values") && has(few, "(2, 3)") && has(few, "size 6")) << few;
  // Six values for four: silently cut before.
  const std::string many = value_error([] { asarray(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 2}); });
  EXPECT_TRUE(has(many, "6 values") && has(many, "(2, 2)") && has(many, "size 4")) << many;
  const std::string list = value_error([] { asarray({1.0, 2.0, 3.0}, Shape{4}); });
  EXPECT_TRUE(has(list, "3 values") && has(list, "(4,)")) << list;
  const double raw[2] = {1, 2};
  const std::string counted = value_error([&] { asarray(raw, 2, DType::float64, Shape{3}); });
  EXPECT_TRUE(has(counted, "2 values") && has(counted, "(3,)")) << counted;
  // A negative extent is refused whatever the count.
  EXPECT_TRUE(has(value_error([] { asarray(std::vector<float>{1, 2}, Shape{-1, -2}); }), "negative"));

  // The matching forms still work, a scalar from one value included.
  const Array a = asarray(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(asarray({7.0}, Shape{}).item<double>(), 7.0);
  EXPECT_EQ(asarray(std::vector<int>{}, Shape{0, 3}).size(), 0);
  EXPECT_EQ(asarray(raw, 2, DType::float64, Shape{2, 1}).to_vector<double>(), (std::vector<double>{1, 2}));
}

// ---- overflowing sizes, extents, offsets and strides ----

TEST(ApiChecks, ReshapeToAShapeWhoseSizeOverflowsIsAValueErrorNamingTheShape) {
  const Array a = zeros({1});
  const std::int64_t big = std::int64_t{1} << 40;
  const std::string e = value_error([&] { a.reshape({big, big}); });
  EXPECT_TRUE(has(e, "cannot reshape array of size 1") && has(e, "(1099511627776, 1099511627776)")) << e;
  const std::string unknown = value_error([&] { a.reshape({-1, big, big}); });
  EXPECT_TRUE(has(unknown, "(-1, 1099511627776, 1099511627776)")) << unknown;
  EXPECT_TRUE(has(value_error([&] { a.reshape({kMax, kMax, 0}); }), "cannot reshape"));
  EXPECT_EQ(zeros({6}).reshape({-1, 3}).shape(0), 2);
}

TEST(ApiChecks, EyeWithAnOffsetPastEitherEndIsAllZeros) {
  // As NumPy: a diagonal outside the matrix has no element in it (i + k must not overflow).
  for (const std::int64_t k : {kMax, kMin, kMax - 1, kMin + 1, std::int64_t{3}, std::int64_t{-3}}) {
    const Array e = eye(3, 3, k, DType::int64);
    EXPECT_EQ(e.to_vector<std::int64_t>(), std::vector<std::int64_t>(9, 0)) << k;
  }
  EXPECT_EQ(eye(2, 3, 1, DType::int64).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_TRUE(has(value_error([] { eye(-2); }), "(-2, -2)"));
}

TEST(ApiChecks, ConcatWhoseSizesAddUpPastInt64IsAValueError) {
  // Seventeen broadcast views of 2^59 - 1 elements each: their sum along axis 0 overflows int64.
  const Array big = broadcast_to(zeros({1}, DType::uint8), {(kMax / 16)});
  const std::vector<Array> parts(17, big);
  const std::string e = value_error([&] { concat(parts); });
  EXPECT_TRUE(has(e, "concat") && has(e, "add up")) << e;
}

TEST(ApiChecks, WrapRefusesStridesWhoseOffsetsOverflow) {
  std::vector<float> data(4);
  const std::string e = value_error([&] { wrap(data.data(), DType::float32, {3}, nullptr, Shape{kMax / 2}); });
  EXPECT_TRUE(has(e, "wrap") && has(e, "(3,)")) << e;
  EXPECT_FALSE(value_error([&] { wrap(data.data(), DType::float32, {3, 2}, nullptr, Shape{kMin / 2, 4}); }).empty());
  // Strides that stay in the memory given are fine, backwards ones included.
  const Array w = wrap(data.data() + 3, DType::float32, {4}, nullptr, Shape{-4});
  EXPECT_EQ(w.size(), 4);
}

// ---- dimensions and extents ----

TEST(ApiChecks, NoViewHasMoreThan64Dimensions) {
  const Array a = with_ndim(64);
  const std::string e = value_error([&] { expand_dims(a, 0); });
  EXPECT_TRUE(has(e, "expand_dims") && has(e, "64")) << e;
  EXPECT_THROW(a.slice({newaxis}), IndexError);
  EXPECT_THROW(a.slice({ellipsis, newaxis}), IndexError);
  EXPECT_THROW(stack({a, a}), ValueError);
  // 63 dimensions and one more is fine; an integer index frees a place for a newaxis.
  EXPECT_EQ(expand_dims(with_ndim(63), 0).ndim(), 64);
  EXPECT_EQ(a.slice({0, newaxis}).ndim(), 64);
  EXPECT_EQ(with_ndim(63).slice({newaxis}).ndim(), 64);
}

TEST(ApiChecks, NegativeExtentsAreRefusedWhereverAShapeComesIn) {
  const std::string b = value_error([] { broadcast_shapes({-3}, {1}); });
  EXPECT_TRUE(has(b, "negative") && has(b, "(-3,)")) << b;
  EXPECT_TRUE(has(value_error([] { broadcast_shapes({2}, {-1}); }), "(-1,)"));
  EXPECT_TRUE(has(value_error([] { broadcast_shapes({-1}, {-1}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { broadcast_to(zeros({1}), {-2}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { zeros({2, -1}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { empty({-1}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { ones({-1}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { full({-5}, 1.0); }), "negative"));
  EXPECT_TRUE(has(value_error([] { zeros({6}).reshape({-2, -3}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { random::Generator(1).uniform({-1}); }), "negative"));
  EXPECT_TRUE(has(value_error([] { random::Generator(1).integers(0, 3, {-1}); }), "negative"));
  EXPECT_EQ(broadcast_shapes({3, 1}, {4}), (Shape{3, 4}));
}

// ---- messages ----

TEST(ApiChecks, ItemNamesItselfTheSizeAndTheShape) {
  const Array a = zeros({3, 4}, DType::float32);
  const std::string e = value_error([&] { (void)a.item<float>(); });
  EXPECT_TRUE(has(e, "item") && has(e, "size 12") && has(e, "(3, 4)")) << e;
  EXPECT_FALSE(has(e, "copy_to_host")) << e;
  EXPECT_EQ(zeros({1, 1}).item<double>(), 0.0);
}

TEST(ApiChecks, EveryOutCheckSaysOutItsShapeAndTheExpectedShape) {
  const Array a = ones({3}, DType::float32);
  const Array out = empty({2}, DType::float32);
  const std::string e = value_error([&] { add(a, a, out); });
  EXPECT_TRUE(has(e, "add") && has(e, "out=") && has(e, "(2,)") && has(e, "expected shape (3,)")) << e;
  const std::string fewer = value_error([&] { negative(ones({2, 3}), empty({3})); });
  EXPECT_TRUE(has(fewer, "out=") && has(fewer, "(3,)") && has(fewer, "(2, 3)")) << fewer;
  const std::string three = value_error([&] { where(true, a, a, empty({4})); });
  EXPECT_TRUE(has(three, "where") && has(three, "out=") && has(three, "(4,)")) << three;
  // A result that broadcasts to out='s shape is fine, as in NumPy.
  const Array wide = empty({2, 3}, DType::float32);
  add(a, 1.0f, wide);
  EXPECT_EQ(wide.to_vector<float>(), std::vector<float>(6, 2.0f));
}

TEST(ApiChecks, LoadErrorsNameThePath) {
  xp_test::TempDir dir;
  const std::string path = dir / "huge.npy";
  // A valid version 1.0 header for a (0, 2^59) array: no data, but no xp array has that shape.
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 576460752303423488), }";
  header.resize((10 + header.size() + 1 + 63) / 64 * 64 - 10 - 1, ' ');  // the preamble padded to 64 bytes
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    load(path);
    FAIL() << "loaded";
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_TRUE(has(e.what(), path) && has(e.what(), "(0, 576460752303423488)")) << e.what();
  } catch (const Error& e) {
    FAIL() << "not a FileError: " << e.what();
  }
  const std::string empty_path = value_error([] { save("", zeros({1})); });
  EXPECT_TRUE(has(empty_path, "save") && has(empty_path, "''")) << empty_path;
}

TEST(ApiChecks, SetNumThreadsRefusesWhatXpNumThreadsRefuses) {
  const int before = num_threads();
  for (const int n : {0, -1, kMaxNumThreads + 1, 1000000}) {
    const std::string e = value_error([n] { set_num_threads(n); });
    EXPECT_TRUE(has(e, "set_num_threads") && has(e, std::to_string(n)) && has(e, "4096")) << n << ": " << e;
    EXPECT_EQ(num_threads(), before);
  }
  set_num_threads(kMaxNumThreads);  // the limit itself is accepted (no parallel region runs here)
  EXPECT_EQ(num_threads(), kMaxNumThreads);
  set_num_threads(before);
  // The environment variable stops at the same number.
  const xp_test::ProcessResult r =
      xp_test::run_child_case("ApiChecks.DISABLED_ConfigChild", {{"XP_NUM_THREADS", "4097"}});
  EXPECT_CHILD_CASE_PASSED(r);
}

TEST(ApiChecks, DISABLED_ConfigChild) {
  EXPECT_THROW(config(), ConfigError);
}

// ---- CUDA launch and execution errors ----

// The codes a module load returns (a cubin for another architecture, PTX newer than the driver, a
// driver without its JIT) are named even where no driver is loaded to name them (this process).
TEST(ApiChecks, ModuleLoadCodesAreNamedWithoutADriver) {
  const std::pair<int, const char*> cases[] = {
      {200, "CUDA_ERROR_INVALID_IMAGE"},
      {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
      {218, "CUDA_ERROR_INVALID_PTX"},
      {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
      {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
      {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
  };
  for (const auto& [code, name] : cases) {
    SCOPED_TRACE(code);
    try {
      detail::check(static_cast<detail::cu::CUresult>(code), "cuModuleLoadData");
      ADD_FAILURE() << "no error";
    } catch (const CudaError& e) {
      EXPECT_EQ(e.code(), code);
      EXPECT_EQ(e.name(), name);
      EXPECT_TRUE(has(e.what(), name)) << e.what();
    }
  }
  EXPECT_EQ(detail::driver_error_name(230), "CUDA_ERROR_UNRECOGNIZED");  // unassigned
}

TEST(ApiChecks, EveryCudaCodeFrom700To720SaysWhatItMeansAndWhetherTheContextSurvives) {
  struct Expect {
    int code;
    const char* name;  // "" for the unassigned 706 and 707
    bool sticky;
    const char* hint;  // a word of the advice
  };
  const Expect cases[] = {
      {700, "CUDA_ERROR_ILLEGAL_ADDRESS", true, "compute-sanitizer"},
      {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", false, "fewer threads per block"},
      {702, "CUDA_ERROR_LAUNCH_TIMEOUT", true, "watchdog"},
      {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", false, "texturing"},
      {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", false, "already enabled"},
      {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", false, "never enabled"},
      {706, "", false, ""},
      {707, "", false, ""},
      {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", false, "primary context"},
      {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", false, "destroyed"},
      {710, "CUDA_ERROR_ASSERT", true, "assert"},
      {711, "CUDA_ERROR_TOO_MANY_PEERS", false, "peer access"},
      {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", false, "already registered"},
      {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", false, "not the start of a registered"},
      {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", true, "stack"},
      {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", true, "illegal instruction"},
      {716, "CUDA_ERROR_MISALIGNED_ADDRESS", true, "not aligned"},
      {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", true, "address space"},
      {718, "CUDA_ERROR_INVALID_PC", true, "program counter"},
      {719, "CUDA_ERROR_LAUNCH_FAILED", true, "compute-sanitizer"},
      {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", false, "cooperative"},
  };
  for (const Expect& c : cases) {
    SCOPED_TRACE(c.code);
    EXPECT_EQ(detail::driver_error_sticky(c.code), c.sticky);
    try {
      detail::check(static_cast<detail::cu::CUresult>(c.code), "cuTestCall");
      ADD_FAILURE() << "no error";
    } catch (const CudaError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), c.code);
      EXPECT_EQ(e.call(), "cuTestCall");
      if (*c.name != '\0') {
        EXPECT_EQ(e.name(), c.name);
      }
      EXPECT_TRUE(has(what, c.hint)) << what;
      // Only a fault that spoils the context says so; none of the others calls itself a fault.
      EXPECT_EQ(has(what, "sticky"), c.sticky) << what;
      EXPECT_EQ(has(what, "every later CUDA call of this process fails"), c.sticky) << what;
      EXPECT_FALSE(has(what, "faulted")) << what;
      if (!c.sticky && *c.name != '\0') {
        EXPECT_TRUE(has(what, "context stays usable") || has(what, "Not a")) << what;
      }
    }
  }
}
