// .npy files (src/array/npy.hpp): round trips for every dtype, hand-made headers in every form the
// format allows, every way a file can be wrong (each a FileError with its message checked), atomic
// writes, and NumPy 2 on the other side: files NumPy writes read back byte for byte, files xp
// writes load in NumPy (tests/ref/npy_reference.py).
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "array/npy.hpp"
#include "test_util.hpp"
#include "xp/error.hpp"

namespace fs = std::filesystem;
using xp::DType;
using xp::detail::NpyArray;
using xp::detail::read_npy;
using xp::detail::write_npy;
using Shape = std::vector<std::int64_t>;

namespace {

const std::vector<DType> kAllDTypes = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                                       DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                                       DType::bfloat16, DType::float32, DType::float64};

std::string make_temp_dir() {
  char tmpl[] = "/tmp/xp-test-npy-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (d == nullptr) throw std::runtime_error("mkdtemp failed");
  return d;
}

std::set<std::string> list_dir(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::int64_t element_count(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// Deterministic bytes that are a valid value of the dtype (bool bytes 0 or 1).
std::vector<std::byte> pattern(DType t, std::int64_t n, std::uint32_t seed) {
  std::vector<std::byte> v(static_cast<std::size_t>(n) * xp::itemsize(t));
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = std::byte(t == DType::bool_ ? (x >> 31) : (x >> 24));
  }
  return v;
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> v(s.size());
  if (!s.empty()) std::memcpy(v.data(), s.data(), s.size());  // never memcpy from/to null, even 0 bytes
  return v;
}

// A hand-made .npy file: magic, version, header length, the header as given (no padding added), data.
std::string npy_file(const std::string& header, const std::string& data = "", int major = 1, int minor = 0) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += static_cast<char>(minor);
  const std::size_t n = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return s + header + data;
}

// The elements of `a` in C order, whatever its layout.
std::vector<std::byte> c_order(const NpyArray& a) {
  if (!a.fortran_order || a.shape.size() < 2) return a.data;
  const std::size_t isize = xp::itemsize(a.dtype);
  const auto strides = a.byte_strides();
  std::vector<std::byte> out;
  out.reserve(a.data.size());
  Shape idx(a.shape.size(), 0);
  for (std::int64_t k = 0; k < a.size(); ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    out.insert(out.end(), a.data.begin() + off, a.data.begin() + off + static_cast<std::ptrdiff_t>(isize));
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < a.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// The FileError `fn` throws, checked to name `path`; its reason, or a note that nothing was thrown.
template <class Fn>
std::string file_error(const std::string& path, Fn fn) {
  try {
    fn();
  } catch (const xp::FileError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(std::string(e.what()), path + ": " + e.reason());
    return e.reason();
  } catch (const std::exception& e) {
    return std::string("<not a FileError: ") + e.what() + ">";
  }
  return "<no error>";
}

template <class Fn>
std::string value_error(Fn fn) {
  try {
    fn();
  } catch (const xp::ValueError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a ValueError: ") + e.what() + ">";
  }
  return "<no error>";
}

class Npy : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir(); }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

// ---- round trips --------------------------------------------------------------------------------

TEST_F(Npy, RoundTripEveryDTypeAndShape) {
  const std::vector<Shape> shapes = {{}, {7}, {2, 3, 4}, {3, 0, 2}, {0}, {1, 1, 1, 1, 1}, {5, 1}};
  std::uint32_t seed = 0;
  for (DType t : kAllDTypes) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(xp::name(t)) + " " + ::testing::PrintToString(shape));
      const auto data = pattern(t, element_count(shape), ++seed);
      const std::string p = path("a.npy");
      write_npy(p, t, shape, data.data());
      const std::string preamble = xp::detail::npy_preamble(t, shape, false);
      EXPECT_EQ(preamble.size() % 64, 0u);
      EXPECT_EQ(fs::file_size(p), preamble.size() + data.size());
      const NpyArray a = read_npy(p);
      EXPECT_EQ(a.dtype, t);
      EXPECT_EQ(a.shape, shape);
      EXPECT_FALSE(a.fortran_order);
      EXPECT_EQ(a.size(), element_count(shape));
      EXPECT_TRUE(a.data == data);
    }
  }
  EXPECT_EQ(list_dir(dir_), std::set<std::string>{"a.npy"});  // no temporary files left
}

TEST_F(Npy, RoundTripFortranOrder) {
  const Shape shape = {2, 3};
  const std::vector<float> f_order = {1, 4, 2, 5, 3, 6};  // [[1, 2, 3], [4, 5, 6]] column major
  write_npy(path("f.npy"), DType::float32, shape, f_order.data(), true);
  const NpyArray a = read_npy(path("f.npy"));
  EXPECT_TRUE(a.fortran_order);
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.byte_strides(), (Shape{4, 8}));
  std::vector<float> c(6);
  const auto cb = c_order(a);
  std::memcpy(c.data(), cb.data(), cb.size());
  EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  NpyArray b = a;
  b.fortran_order = false;
  EXPECT_EQ(b.byte_strides(), (Shape{12, 4}));
}

TEST_F(Npy, HeaderIsNumPys) {
  // What np.save writes for these (NumPy 2.4): sorted keys, the spare spaces for the growth axis
  // (the first, or the last in Fortran order), then spaces and a newline to 128 bytes.
  auto numpy = [](const std::string& dict) {
    std::string s = "\x93NUMPY\x01";
    s += '\0';
    s += 'v';  // 118 = 128 - 10
    s += '\0';
    return s + dict + std::string(128 - 10 - 1 - dict.size(), ' ') + "\n";
  };
  EXPECT_EQ(xp::detail::npy_preamble(DType::float32, Shape{2, 3}, false),
            numpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  EXPECT_EQ(xp::detail::npy_preamble(DType::bool_, Shape{}, false),
            numpy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }"));
  EXPECT_EQ(xp::detail::npy_preamble(DType::int16, Shape{7, 12345}, true),
            numpy("{'descr': '<i2', 'fortran_order': True, 'shape': (7, 12345), }"));
  const std::vector<std::string> descrs = {"|b1", "|i1", "<i2", "<i4",      "<i8", "|u1", "<u2",
                                           "<u4", "<u8", "<f2", "bfloat16", "<f4", "<f8"};
  for (std::size_t i = 0; i < kAllDTypes.size(); ++i) EXPECT_EQ(xp::detail::npy_descr(kAllDTypes[i]), descrs[i]);
}

TEST_F(Npy, OverwriteKeepsModeAndNewFilesFollowUmask) {
  const std::vector<std::int32_t> v = {1, 2, 3};
  const Shape shape = {3};
  const mode_t mask = ::umask(022);
  write_npy(path("new.npy"), DType::int32, shape, v.data());
  EXPECT_EQ(fs::status(path("new.npy")).permissions(), fs::perms(0644));
  ::chmod(path("new.npy").c_str(), 0640);
  const std::vector<std::int32_t> w = {4, 5, 6};
  write_npy(path("new.npy"), DType::int32, shape, w.data());
  ::umask(mask);
  EXPECT_EQ(fs::status(path("new.npy")).permissions(), fs::perms(0640));
  const auto a = read_npy(path("new.npy"));
  EXPECT_EQ(std::memcmp(a.data.data(), w.data(), 12), 0);
  EXPECT_EQ(list_dir(dir_), std::set<std::string>{"new.npy"});
}

// ---- headers in every form the format allows ------------------------------------------------------

TEST_F(Npy, HeaderForms) {
  std::string data(24, '\0');
  for (int i = 0; i < 6; ++i) {
    const float f = static_cast<float>(i) + 0.5f;
    std::memcpy(&data[static_cast<std::size_t>(i) * 4], &f, 4);
  }
  struct Case {
    std::string header;
    int major;
  };
  const std::vector<Case> cases = {
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}\n", 1},  // double quotes, no comma
      {"{'shape':(2,3),'descr':'<f4','fortran_order':False}", 1},                  // any order, no spaces
      {"{ 'fortran_order' : False ,\n 'shape' : ( 2 , 3 , ) ,\t'descr' : '<f4' , }   \n", 1},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n", 1},   // padded to 16, as old NumPy
      {"{u'descr': u'<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n", 1},  // Python 2
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2l, 3), }\n", 2},
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (2, 3), }\n", 2},
      {"{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3), }\n", 3},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3), }\n", 3},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(300, ' ') + "\n", 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.header);
    write_file(path("h.npy"), npy_file(c.header, data, c.major));
    const NpyArray a = read_npy(path("h.npy"));
    EXPECT_EQ(a.dtype, DType::float32);
    EXPECT_EQ(a.shape, (Shape{2, 3}));
    EXPECT_TRUE(a.data == bytes_of(data));
  }
  // A scalar, a 1-D shape, an empty one; 1-byte types in any byte order.
  write_file(path("s.npy"),
             npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (), }\n", std::string("\x2a\0\0\0", 4)));
  EXPECT_EQ(read_npy(path("s.npy")).shape, Shape{});
  EXPECT_EQ(read_npy(path("s.npy")).size(), 1);
  write_file(path("v.npy"), npy_file("{'descr': '>u1', 'fortran_order': True, 'shape': (3,), }\n", "abc"));
  EXPECT_EQ(read_npy(path("v.npy")).dtype, DType::uint8);
  EXPECT_TRUE(read_npy(path("v.npy")).data == bytes_of("abc"));
  write_file(path("e.npy"), npy_file("{'descr': '<i1', 'fortran_order': False, 'shape': (00, 3), }\n"));
  EXPECT_EQ(read_npy(path("e.npy")).shape, (Shape{0, 3}));
  EXPECT_EQ(read_npy(path("e.npy")).dtype, DType::int8);
}

TEST_F(Npy, BigEndianIsSwapped) {
  struct Case {
    std::string descr, file_bytes, native;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {">f4", std::string("\x3f\x80\x00\x00\xc0\x20\x00\x00", 8), std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0", 8),
       DType::float32},
      {">i8", std::string("\x00\x00\x00\x00\x00\x00\x01\x02\xff\xff\xff\xff\xff\xff\xff\xfe", 16),
       std::string("\x02\x01\x00\x00\x00\x00\x00\x00\xfe\xff\xff\xff\xff\xff\xff\xff", 16), DType::int64},
      {">u2", std::string("\x12\x34\xab\xcd", 4), std::string("\x34\x12\xcd\xab", 4), DType::uint16},
      {">f2", std::string("\x3c\x00\xc0\x00", 4), std::string("\x00\x3c\x00\xc0", 4), DType::float16},
      {">i4", std::string("\x80\x00\x00\x00\x00\x00\x00\x05", 8), std::string("\x00\x00\x00\x80\x05\x00\x00\x00", 8),
       DType::int32},
      {">f8", std::string("\x3f\xf0\x00\x00\x00\x00\x00\x00\x7f\xf8\x00\x00\x00\x00\x00\x01", 16),
       std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f\x01\x00\x00\x00\x00\x00\xf8\x7f", 16), DType::float64},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.descr);
    write_file(path("b.npy"),
               npy_file("{'descr': '" + c.descr + "', 'fortran_order': False, 'shape': (2,), }\n", c.file_bytes));
    const NpyArray a = read_npy(path("b.npy"));
    EXPECT_EQ(a.dtype, c.dtype);
    EXPECT_TRUE(a.data == bytes_of(c.native));
  }
  float f[2];
  write_file(path("b.npy"),
             npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", cases[0].file_bytes));
  std::memcpy(f, read_npy(path("b.npy")).data.data(), 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.5f);
}

TEST_F(Npy, BoolBytesReadAsZeroOrOne) {
  write_file(path("b.npy"), npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }\n",
                                     std::string("\x00\x01\x02\xff", 4)));
  EXPECT_TRUE(read_npy(path("b.npy")).data == bytes_of(std::string("\x00\x01\x01\x01", 4)));
}

// ---- every way a file can be wrong ----------------------------------------------------------------

TEST_F(Npy, FileErrors) {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  auto dict = [](const std::string& descr, const std::string& order, const std::string& shape) {
    return "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
  };
  std::string sixty_five = "(";
  for (int i = 0; i < 65; ++i) sixty_five += "1, ";
  sixty_five += ")";
  struct Case {
    std::string name, bytes, reason;
  };
  const std::vector<Case> cases = {
      {"empty", "", "not a .npy file: the file is empty"},
      {"text", "hello world",
       "not a .npy file: it does not begin with the magic string \\x93NUMPY (its first bytes are 68 65 6c 6c 6f 20)"},
      {"zip", std::string("PK\x03\x04\x14\x00\x00\x00", 8), "it is a zip archive"},
      {"magic only", "\x93NUMPY", "the file is truncated: it ends within the format version"},
      {"version 4.0", npy_file(ok_header, std::string(24, '\0'), 4, 0),
       "unsupported .npy format version 4.0 (xp reads 1.0, 2.0 and 3.0)"},
      {"version 1.1", npy_file(ok_header, std::string(24, '\0'), 1, 1), "unsupported .npy format version 1.1"},
      {"version 0.0", npy_file(ok_header, std::string(24, '\0'), 0, 0), "unsupported .npy format version 0.0"},
      {"length cut", std::string("\x93NUMPY\x02\x00\x10\x00", 10), "it ends within the header length"},
      {"header cut", npy_file(ok_header).substr(0, 40), "the header is truncated: expected 60 bytes, found 30"},
      // Malformed dicts.
      {"not a dict", npy_file("[1, 2]\n"), "malformed header: the header must be a dict beginning with '{'"},
      {"no shape", npy_file("{'descr': '<f4', 'fortran_order': False}\n"),
       "malformed header: the key 'shape' is missing"},
      {"no descr", npy_file("{'shape': (), 'fortran_order': False}\n"), "the key 'descr' is missing"},
      {"no order", npy_file("{'shape': (), 'descr': '<f4'}\n"), "the key 'fortran_order' is missing"},
      {"extra key", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'foo': 1}\n"),
       "unexpected key 'foo' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')"},
      {"twice", npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}\n"),
       "the key 'descr' appears twice"},
      {"int not tuple", npy_file(dict("'<f4'", "False", "(3)")), "a 1-D shape is written (n,), not (n)"},
      {"list shape", npy_file(dict("'<f4'", "False", "[3]")), "shape must be a tuple"},
      {"negative", npy_file(dict("'<f4'", "False", "(2, -3)")), "a dimension is negative"},
      {"float dim", npy_file(dict("'<f4'", "False", "(2, 3.0)")), "a dimension must be a non-negative decimal integer"},
      {"leading zero", npy_file(dict("'<f4'", "False", "(07,)")), "a dimension has a leading zero"},
      {"64 bits", npy_file(dict("'<f4'", "False", "(99999999999999999999,)")), "a dimension does not fit in 64 bits"},
      {"65 dims", npy_file(dict("'<f4'", "False", sixty_five)), "the shape has more than 64 dimensions"},
      {"long in 3.0", npy_file(dict("'<f4'", "False", "(2L,)"), "", 3), "a dimension must be a non-negative decimal"},
      {"order 0", npy_file(dict("'<f4'", "0", "(3,)")), "fortran_order must be True or False"},
      {"order Truee", npy_file(dict("'<f4'", "Truee", "(3,)")), "fortran_order must be True or False"},
      {"unterminated", npy_file("{'descr': '<f4, 'fortran_order': False, 'shape': (), }\n"), "malformed header"},
      {"unterminated 2", npy_file("{'descr': '<f4\n"), "unterminated string"},
      {"after dict", npy_file(dict("'<f4'", "False", "()") + "x"), "unexpected text after the dict"},
      {"no brace", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': () \n"), "expected ',' or '}'"},
      {"no comma", npy_file("{'descr': '<f4' 'fortran_order': False, 'shape': ()}\n"), "expected ',' or '}'"},
      {"no colon", npy_file("{'descr' '<f4'}\n"), "expected ':' after the key 'descr'"},
      {"bad key", npy_file("{descr: '<f4'}\n"), "expected a quoted key or '}'"},
      {"descr number", npy_file(dict("5", "False", "()")), "descr must be a string"},
      {"non-ASCII", npy_file(dict("'<f\xc3\xa9'", "False", "()")), "a string holds a byte that is not printable ASCII"},
      {"escape", npy_file(dict("'<f\\x34'", "False", "()")), "escape sequences in strings are not supported"},
      // Descrs that are not xp dtypes.
      {"complex256", npy_file(dict("'<c32'", "False", "()")), "descr '<c32' (clongdouble) is not an xp dtype"},
      {"complex32", npy_file(dict("'<c4'", "False", "()")), "descr '<c4' is not a dtype xp reads"},
      {"longdouble", npy_file(dict("'<f16'", "False", "()")), "descr '<f16' (longdouble) is not an xp dtype"},
      {"str", npy_file(dict("'<U5'", "False", "()")), "descr '<U5' (str, 5 characters) is not an xp dtype"},
      {"bytes", npy_file(dict("'|S3'", "False", "()")), "descr '|S3' (bytes, 3 long) is not an xp dtype"},
      {"datetime", npy_file(dict("'<M8[ns]'", "False", "()")), "descr '<M8[ns]' (datetime64[ns]) is not an xp dtype"},
      {"timedelta", npy_file(dict("'<m8[s]'", "False", "()")), "descr '<m8[s]' (timedelta64[s]) is not an xp dtype"},
      {"object", npy_file(dict("'|O'", "False", "(3,)")), "descr '|O' is an object array (pickled Python objects)"},
      {"void2", npy_file(dict("'<V2'", "False", "(3,)")),
       "descr '<V2' is a raw 2-byte void type, not an xp dtype. NumPy writes ml_dtypes' bfloat16 this way"},
      {"void8", npy_file(dict("'|V8'", "False", "(3,)")), "descr '|V8' (a raw 8-byte void type) is not an xp dtype"},
      {"structured", npy_file(dict("[('x', '<f4')]", "False", "(3,)")), "a structured array (named fields)"},
      {"i3", npy_file(dict("'<i3'", "False", "()")), "descr '<i3' is not a dtype xp reads"},
      {"big bfloat16", npy_file(dict("'>bfloat16'", "False", "()")), "descr '>bfloat16' is not a dtype xp reads"},
      {"empty descr", npy_file(dict("''", "False", "()")), "descr '' is not a dtype xp reads"},
      // Sizes.
      {"overflow", npy_file(dict("'<f8'", "False", "(4611686018427387904, 4)")),
       "shape (4611686018427387904, 4) of float64 is too big: its byte count overflows a 64-bit integer"},
      {"overflow with 0", npy_file(dict("'<f8'", "False", "(0, 4611686018427387904, 4)")), "its byte count overflows"},
      {"truncated", npy_file(ok_header, std::string(20, '\0')),
       "the data section is truncated: expected 24 bytes (shape (2, 3) of float32), found 20"},
      {"truncated huge", npy_file(dict("'<f8'", "False", "(1000000000000,)"), std::string(8, '\0')),
       "the data section is truncated: expected 8000000000000 bytes (shape (1000000000000,) of float64), found 8"},
      {"no data", npy_file(dict("'<i2'", "False", "()")), "expected 2 bytes (shape () of int16), found 0"},
      {"trailing", npy_file(ok_header, std::string(30, '\0')),
       "trailing data: 6 bytes after the 24 bytes of the array (shape (2, 3) of float32)"},
      {"trailing empty", npy_file(dict("'<f4'", "False", "(0,)"), "x"), "trailing data: 1 bytes after the 0 bytes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string p = path("bad.npy");
    write_file(p, c.bytes);
    const std::string reason = file_error(p, [&] { read_npy(p); });
    EXPECT_NE(reason.find(c.reason), std::string::npos) << reason;
  }
  // A header length past xp's limit, in a (sparse) file long enough to hold it.
  write_file(path("bad.npy"), std::string("\x93NUMPY\x02\x00\x00\x00\x00\x10", 12));
  fs::resize_file(path("bad.npy"), 12 + 0x10000000 + 100);
  EXPECT_EQ(file_error(path("bad.npy"), [&] { read_npy(path("bad.npy")); }),
            "the header length 268435456 is implausible (xp reads headers up to 1 MiB; NumPy writes about 128 bytes)");
  // A missing file, a folder.
  const std::string missing = path("missing.npy");
  EXPECT_EQ(file_error(missing, [&] { read_npy(missing); }), "cannot open the file: No such file or directory");
  EXPECT_EQ(file_error(dir_, [&] { read_npy(dir_); }), "is a folder, not a .npy file");
  // The header shows in the message, escaped.
  write_file(path("bad.npy"), npy_file("{'descr': '<f4', 'fortran_order': nope}\n"));
  EXPECT_NE(file_error(path("bad.npy"), [&] { read_npy(path("bad.npy")); })
                .find("(at byte 34 of the header '{'descr': '<f4', 'fortran_order': nope}\\n')"),
            std::string::npos);
}

// ---- writing: atomic, typed errors ----------------------------------------------------------------

TEST_F(Npy, WriteErrorsLeaveNothingBehind) {
  const std::vector<float> v(6, 1.5f);
  const Shape shape = {2, 3};
  // The folder does not exist.
  const std::string no_folder = path("nope/x.npy");
  std::string reason = file_error(no_folder, [&] { write_npy(no_folder, DType::float32, shape, v.data()); });
  EXPECT_EQ(reason, "cannot create a temporary file in the folder '" + dir_ + "/nope': No such file or directory");
  // The folder is a file.
  write_file(path("file.txt"), "x");
  const std::string under_file = path("file.txt/x.npy");
  reason = file_error(under_file, [&] { write_npy(under_file, DType::float32, shape, v.data()); });
  EXPECT_NE(reason.find("Not a directory"), std::string::npos) << reason;
  // The target is a folder: refused before anything is written (tests/test_file_safety.cpp has more).
  fs::create_directory(path("sub"));
  reason = file_error(path("sub"), [&] { write_npy(path("sub"), DType::float32, shape, v.data()); });
  EXPECT_EQ(reason, "is a folder: xp::save writes a file");
  EXPECT_EQ(list_dir(dir_), (std::set<std::string>{"file.txt", "sub"}));
  EXPECT_TRUE(fs::is_empty(path("sub")));
  // A folder the process may not write to (root may write anywhere: then the check is moot).
  if (::geteuid() != 0) {
    fs::create_directory(path("ro"));
    fs::permissions(path("ro"), fs::perms(0555));
    const std::string p = path("ro/x.npy");
    reason = file_error(p, [&] { write_npy(p, DType::float32, shape, v.data()); });
    EXPECT_NE(reason.find("Permission denied"), std::string::npos) << reason;
    EXPECT_TRUE(fs::is_empty(path("ro")));
  }
}

// A write that fails half way (the file size limit, as a full disk would) keeps the old file whole.
TEST_F(Npy, FailedWriteKeepsTheOldFile) {
  const std::vector<std::int64_t> old = {1, 2, 3};
  const Shape old_shape = {3};
  write_npy(path("keep.npy"), DType::int64, old_shape, old.data());
  const std::string before = read_file(path("keep.npy"));
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    const std::vector<double> big(100000, 2.0);
    const Shape shape = {100000};
    try {
      write_npy(path("keep.npy"), DType::float64, shape, big.data());
    } catch (const xp::FileError& e) {
      const std::string r = e.reason();
      const bool ok = r.find("cannot write the temporary file '" + dir_ + "/.keep.npy.tmp-") == 0 &&
                      r.find("File too large") != std::string::npos;
      ::_exit(ok ? 0 : 2);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(4);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: wrong message, 3: wrong exception, 4: no exception";
  EXPECT_EQ(read_file(path("keep.npy")), before);
  EXPECT_EQ(list_dir(dir_), std::set<std::string>{"keep.npy"});
}

TEST_F(Npy, WriteArgumentErrors) {
  const std::vector<float> v(6, 0.0f);
  const std::string p = path("x.npy");
  EXPECT_EQ(value_error([&] { write_npy("", DType::float32, Shape{2}, v.data()); }), "write_npy: the path is empty");
  EXPECT_EQ(value_error([&] {
              write_npy(p, DType::float32, Shape{2, -3}, v.data());
            }),
            "write_npy: shape (2, -3) has a negative dimension");
  EXPECT_EQ(value_error([&] { write_npy(p, DType::float32, Shape(65, 1), v.data()); }),
            "write_npy: 65 dimensions; .npy files (and xp) allow at most 64");
  EXPECT_EQ(value_error([&] {
              write_npy(p, DType::int64, Shape{std::int64_t{1} << 61, 4}, v.data());
            }),
            "write_npy: shape (2305843009213693952, 4) of int64 is too big: its byte count overflows");
  EXPECT_EQ(value_error([&] { write_npy(p, DType::float32, Shape{2}, nullptr); }),
            "write_npy: data is null for shape (2,) of float32");
  write_npy(p, DType::float32, Shape{0, 2}, nullptr);  // no bytes: null is fine
  EXPECT_EQ(read_npy(p).shape, (Shape{0, 2}));
  fs::remove(p);
  EXPECT_TRUE(fs::is_empty(dir_));
}

// ---- NumPy 2 on the other side ------------------------------------------------------------------

const std::string kScript = std::string(XP_SOURCE_DIR) + "/tests/ref/npy_reference.py";

// Why NumPy 2 with ml_dtypes cannot be used ("" when it can).
std::string numpy_problem() {
  static const std::string problem = [] {
    const std::string py = XP_TEST_PYTHON;
    if (::access(py.c_str(), X_OK) != 0) return "no Python at " + py + " (the test command creates the .venv)";
    const auto r = xp_test::run_process(
        {py, "-c", "import numpy, ml_dtypes; assert int(numpy.__version__.split('.')[0]) >= 2, numpy.__version__"});
    if (r.exit_code != 0) return py + " lacks numpy 2 or ml_dtypes: " + r.err;
    return std::string();
  }();
  return problem;
}

class NpyNumPy : public Npy {
 protected:
  void SetUp() override {
    Npy::SetUp();
    if (!numpy_problem().empty()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", numpy_problem());
  }
};

TEST_F(NpyNumPy, ReadsFilesNumPyWrites) {
  const auto r = xp_test::run_process({XP_TEST_PYTHON, kScript, "generate", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream mf(path("manifest.json"));
  const auto manifest = nlohmann::json::parse(mf);
  int read = 0, refused = 0;
  for (const auto& c : manifest) {
    const std::string file = c["file"];
    SCOPED_TRACE(file);
    const std::string p = path(file);
    if (c.contains("error")) {
      const std::string reason = file_error(p, [&] { read_npy(p); });
      EXPECT_NE(reason.find(c["error"].get<std::string>()), std::string::npos) << reason;
      ++refused;
      continue;
    }
    const NpyArray a = read_npy(p);
    const auto want = xp::parse_dtype(c["dtype"].get<std::string>());
    ASSERT_TRUE(want.has_value()) << c["dtype"];
    EXPECT_EQ(a.dtype, *want);
    EXPECT_EQ(a.shape, c["shape"].get<Shape>());
    EXPECT_EQ(a.fortran_order, c["fortran_order"].get<bool>());
    const auto raw = bytes_of(read_file(path(c["raw"])));
    const auto got = c_order(a);
    EXPECT_EQ(got.size(), raw.size());
    EXPECT_TRUE(got == raw) << "the data differ from NumPy's bytes";
    ++read;
  }
  EXPECT_EQ(read, 15 * 4 + 11 + 3 + 3);  // every dtype in 4 shapes, big-endian, Fortran, versions 2.0/3.0
  EXPECT_EQ(refused, 8);
  // The finding behind npy.hpp's bfloat16 note: np.save gives ml_dtypes' bfloat16 descr '<V2'.
  EXPECT_NE(read_file(path("bfloat16_ml_dtypes.npy")).find("{'descr': '<V2', "), std::string::npos);
}

TEST_F(NpyNumPy, NumPyLoadsFilesXpWrites) {
  nlohmann::json manifest = nlohmann::json::array();
  std::uint32_t seed = 100;
  auto add = [&](const std::string& file, DType t, const Shape& shape, bool fortran) {
    const auto data = pattern(t, element_count(shape), ++seed);
    write_npy(path(file), t, shape, data.data(), fortran);
    const std::string raw = file + ".raw";
    write_file(path(raw), std::string(reinterpret_cast<const char*>(data.data()), data.size()));
    manifest.push_back({{"file", file},
                        {"raw", raw},
                        {"dtype", std::string(xp::name(t))},
                        {"shape", shape},
                        {"fortran_order", fortran}});
  };
  const std::vector<Shape> shapes = {{}, {9}, {2, 3, 4}, {4, 0}, {1, 1}};
  for (DType t : kAllDTypes) {
    for (std::size_t i = 0; i < shapes.size(); ++i)
      add(std::string(xp::name(t)) + std::to_string(i) + ".npy", t, shapes[i], false);
    add(std::string(xp::name(t)) + "_fortran.npy", t, {3, 2, 5}, true);
  }
  add("long_axis.npy", DType::int8, {123456789, 0, 3}, false);
  add("long_axis_fortran.npy", DType::int8, {3, 0, 123456789}, true);
  write_file(path("manifest.json"), manifest.dump(1));
  const auto r = xp_test::run_process({XP_TEST_PYTHON, kScript, "check", dir_});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("checked " + std::to_string(manifest.size()) + " files written by xp: 0 failures"),
            std::string::npos)
      << r.out << r.err;
}

}  // namespace
