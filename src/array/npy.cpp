// .npy files: the descr, the header dict and the file handling. Over 800 lines on purpose: the three
// parts share the file-local parsing helpers and error texts, and are read together.
#include "array/npy.hpp"
#include "array/shape_text.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "xp/error.hpp"

namespace xp::detail {

namespace {

// xp runs on x86-64: native order is little-endian, which is what xp writes ('<').
static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

constexpr char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kArrayAlign = 64;           // NumPy's ARRAY_ALIGN
constexpr std::size_t kGrowthAxisMaxDigits = 21;  // NumPy's GROWTH_AXIS_MAX_DIGITS
// NumPy refuses headers over 10,000 bytes unless told to trust the file; xp's largest is ~1.5 KB.
// Anything past this is not a header but damage, and is not worth allocating for.
constexpr std::uint64_t kMaxHeaderBytes = 1u << 20;
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string errno_text(int e) {
  return std::error_code(e, std::generic_category()).message();
}

// Text from a file, quoted for a message: non-printable bytes escaped, long text cut.
std::string quote_text(std::string_view text, std::size_t max_chars = 160) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      s += "\\n";
    } else if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  if (text.size() > max_chars) s += "...";
  return s;
}

std::string hex_bytes(const char* p, std::size_t n) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (i > 0) s += ' ';
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

// ---- descr ------------------------------------------------------------------------------------

struct Descr {
  DType dtype;
  bool swap;  // the file's data is big-endian
};

std::optional<DType> dtype_for(char kind, long size) {
  switch (kind) {
    case 'b':
      return size == 1 ? std::optional(DType::bool_) : std::nullopt;
    case 'i':
      if (size == 1) return DType::int8;
      if (size == 2) return DType::int16;
      if (size == 4) return DType::int32;
      if (size == 8) return DType::int64;
      return std::nullopt;
    case 'u':
      if (size == 1) return DType::uint8;
      if (size == 2) return DType::uint16;
      if (size == 4) return DType::uint32;
      if (size == 8) return DType::uint64;
      return std::nullopt;
    case 'f':
      if (size == 2) return DType::float16;
      if (size == 4) return DType::float32;
      if (size == 8) return DType::float64;
      return std::nullopt;
    case 'c':
      if (size == 8) return DType::complex64;
      if (size == 16) return DType::complex128;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// What NumPy calls a descr that is not an xp dtype, for the message ("" when not NumPy's either).
std::string numpy_name(char kind, long size, std::string_view rest) {
  switch (kind) {
    case 'c':
      return size > 16 ? "clongdouble" : "";
    case 'f':
      return size == 10 || size == 12 || size == 16 ? "longdouble" : "";
    case 'U':
      return "str, " + std::to_string(size) + " characters";
    case 'S':
    case 'a':
      return "bytes, " + std::to_string(size) + " long";
    case 'M':
      return "datetime64" + std::string(rest);
    case 'm':
      return "timedelta64" + std::string(rest);
    default:
      return "";
  }
}

Descr parse_descr(const std::string& path, const std::string& descr) {
  if (descr == "bfloat16") return {DType::bfloat16, false};
  std::string_view s = descr;
  char order = '=';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
    order = s[0];
    s.remove_prefix(1);
  }
  const char kind = s.empty() ? '\0' : s[0];
  std::size_t digits = 1;
  long size = 0;
  while (digits < s.size() && digits < 10 && s[digits] >= '0' && s[digits] <= '9') {
    size = size * 10 + (s[digits] - '0');
    ++digits;
  }
  const bool has_size = digits > 1;
  const std::string_view rest = s.substr(std::min(digits, s.size()));
  if (has_size && rest.empty()) {
    if (auto t = dtype_for(kind, size)) return {*t, order == '>' && size > 1};
  }
  // Built by appending: g++ 12 gives a false -Wrestrict on "'" + std::string&&.
  std::string q = "descr '";
  q += quote_text(descr);
  q += '\'';
  if (kind == 'O' && (rest.empty() || !has_size)) {
    throw FileError(path, q + " is an object array (pickled Python objects): xp has no object dtype and "
                              "does not unpickle");
  }
  if (kind == 'V' && has_size && rest.empty()) {
    if (size == 2) {
      throw FileError(path, q + " is a raw 2-byte void type, not an xp dtype. NumPy writes ml_dtypes' bfloat16 "
                                "this way, and nothing in the file tells it apart from other 2-byte data, so xp "
                                "does not guess: write bfloat16 with descr 'bfloat16' (as xp does), or save "
                                "a.view(numpy.uint16) and read it as uint16");
    }
    throw FileError(path, q + " (a raw " + std::to_string(size) + "-byte void type) is not an xp dtype");
  }
  const std::string np = has_size || kind == 'M' || kind == 'm' ? numpy_name(kind, size, rest) : "";
  if (!np.empty()) throw FileError(path, q + " (" + np + ") is not an xp dtype");
  throw FileError(path, q + " is not a dtype xp reads (xp reads '|b1', '|i1', '|u1', '<i2' to '<u8', '<f2', "
                            "'<f4', '<f8', '<c8', '<c16' in either byte order, and 'bfloat16')");
}

// ---- the header dict --------------------------------------------------------------------------

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// A strict parser of the Python dict literal NumPy writes.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text, bool python2_longs)
      : path_(path), text_(text), python2_longs_(python2_longs) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    expect('{', "the header must be a dict beginning with '{'");
    skip_space();
    while (!at('}')) {
      const std::size_t key_at = pos_;
      if (!at('\'') && !at('"') && !at('u') && !at('U')) fail("expected a quoted key or '}'");
      const std::string key = parse_string();
      skip_space();
      expect(':', "expected ':' after the key '" + quote_text(key) + "'");
      skip_space();
      auto once = [&](bool& seen) {
        if (seen) fail("the key '" + key + "' appears twice", key_at);
        seen = true;
      };
      if (key == "descr") {
        once(have_descr);
        if (at('[')) {
          throw FileError(path_,
                          "descr is a list: a structured array (named fields), which xp does not read; "
                          "xp arrays have one dtype");
        }
        if (!at('\'') && !at('"') && !at('u') && !at('U')) fail("descr must be a string");
        h.descr = parse_string();
      } else if (key == "fortran_order") {
        once(have_order);
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        once(have_shape);
        h.shape = parse_shape();
      } else {
        fail(
            "unexpected key '" + quote_text(key) + "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')",
            key_at);
      }
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        fail("expected ',' or '}' after the value of '" + key + "'");
      }
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the dict (only padding spaces and a newline may follow)");
    if (!have_descr) fail_whole("the key 'descr' is missing");
    if (!have_order) fail_whole("the key 'fortran_order' is missing");
    if (!have_shape) fail_whole("the key 'shape' is missing");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what, std::optional<std::size_t> at = std::nullopt) const {
    const std::size_t p = at.value_or(pos_);
    throw FileError(
        path_, "malformed header: " + what + " (at byte " + std::to_string(p) + " of the header '" + shown() + "')");
  }
  [[noreturn]] void fail_whole(const std::string& what) const {
    throw FileError(path_, "malformed header: " + what + " (header '" + shown() + "')");
  }
  // The header for a message, without its padding.
  std::string shown() const {
    std::string_view t = text_;
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    return quote_text(t);
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void expect(char c, const std::string& what) {
    if (!at(c)) fail(what);
    ++pos_;
  }
  // Python's whitespace between tokens inside brackets (newlines included).
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\f'))
      ++pos_;
  }
  // 'text' or "text", optionally u'text' (Python 2's unicode literal, still valid Python 3).
  // Escape sequences never occur in a header NumPy writes and are refused.
  std::string parse_string() {
    if (at('u') || at('U')) ++pos_;
    if (!at('\'') && !at('"')) fail("expected a quoted string");
    const char q = text_[pos_++];
    std::string s;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') fail("unterminated string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == static_cast<unsigned char>(q)) break;
      if (c == '\\') fail("escape sequences in strings are not supported");
      if (c < 0x20 || c >= 0x7f) fail("a string holds a byte that is not printable ASCII");
      s += static_cast<char>(c);
      ++pos_;
    }
    ++pos_;
    return s;
  }
  bool parse_bool() {
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        const std::size_t end = pos_ + word.size();
        if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) break;
        pos_ = end;
        return value;
      }
    }
    fail("fortran_order must be True or False");
  }
  std::int64_t parse_dimension() {
    if (at('-')) fail("a dimension is negative");
    const std::size_t start = pos_;
    std::int64_t v = 0;
    bool nonzero_seen = false;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int d = text_[pos_] - '0';
      // Python 3 accepts 0 and 00, not 07.
      if (pos_ > start && text_[start] == '0' && d != 0) fail("a dimension has a leading zero");
      nonzero_seen = nonzero_seen || d != 0;
      if (v > (kInt64Max - d) / 10) fail("a dimension does not fit in 64 bits");
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) fail("a dimension must be a non-negative decimal integer");
    if (python2_longs_ && (at('L') || at('l'))) ++pos_;  // Python 2's long suffix (versions 1.0 and 2.0)
    if (pos_ < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.'))
      fail("a dimension must be a non-negative decimal integer");
    return v;
  }
  std::vector<std::int64_t> parse_shape() {
    if (!at('(')) fail("shape must be a tuple: (), (n,) or (n, m, ...)");
    ++pos_;
    skip_space();
    std::vector<std::int64_t> shape;
    bool comma_after_last = false;
    while (!at(')')) {
      if (shape.size() == kNpyMaxDims) fail("the shape has more than " + std::to_string(kNpyMaxDims) + " dimensions");
      shape.push_back(parse_dimension());
      skip_space();
      comma_after_last = at(',');
      if (comma_after_last) {
        ++pos_;
        skip_space();
      } else if (!at(')')) {
        fail("expected ',' or ')' in the shape");
      }
    }
    // (3) is the integer 3 in Python, not a tuple.
    if (shape.size() == 1 && !comma_after_last) fail("shape must be a tuple: a 1-D shape is written (n,), not (n)");
    ++pos_;
    return shape;
  }

  const std::string& path_;
  std::string_view text_;
  bool python2_longs_;
  std::size_t pos_ = 0;
};

// ---- files ------------------------------------------------------------------------------------

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads up to n bytes; returns how many (fewer only at the end of the file).
std::size_t read_up_to(const std::string& path, int fd, void* buf, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, static_cast<char*>(buf) + got, std::min<std::size_t>(n - got, 1u << 30));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw FileError(path, "read failed: " + errno_text(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

std::uint64_t little_endian(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

void byte_swap(std::vector<std::byte>& data, std::size_t itemsize) {
  for (std::size_t i = 0; i + itemsize <= data.size(); i += itemsize)
    std::reverse(data.begin() + static_cast<std::ptrdiff_t>(i),
                 data.begin() + static_cast<std::ptrdiff_t>(i + itemsize));
}

// Bytes for a shape: the product of the nonzero dimensions times the item size must fit in int64
// (as NumPy checks it), and the result is 0 when a dimension is 0.
std::optional<std::int64_t> byte_count(std::span<const std::int64_t> shape, std::size_t itemsize) {
  std::int64_t n = static_cast<std::int64_t>(itemsize);
  bool empty = false;
  for (const std::int64_t d : shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > kInt64Max / d) return std::nullopt;
    n *= d;
  }
  return empty ? 0 : n;
}

std::string describe(DType t, std::span<const std::int64_t> shape) {
  return "shape " + shape_str(shape) + " of " + std::string(name(t));
}

// A temporary file beside the target, renamed over it on commit and removed otherwise. `target`
// is the file renamed over (the end of any symbolic links); errors name `shown`, the path given.
class TempFile {
 public:
  TempFile(const std::string& shown, const std::string& target) : shown_(shown), target_(target) {
    const std::size_t slash = target.rfind('/');
    const std::string folder = slash == std::string::npos ? "." : target.substr(0, slash == 0 ? 1 : slash);
    std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    if (base.size() > 200) base.resize(200);  // room for the suffix within NAME_MAX
    const std::string prefix = (slash == std::string::npos ? "" : target.substr(0, slash + 1)) + "." + base + ".tmp-";
    std::uint64_t seed = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^
                         static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                         reinterpret_cast<std::uintptr_t>(this);
    for (int attempt = 0; attempt < 100; ++attempt) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      static const char* hex = "0123456789abcdef";
      std::string name = prefix;
      for (int i = 0; i < 12; ++i) name += hex[(seed >> (60 - 4 * i)) & 15];
      // 0666 under the umask, as np.save (mkstemp would make it 0600).
      const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = fd;
        temp_ = name;
        return;
      }
      if (errno != EEXIST) {
        throw FileError(shown, "cannot create a temporary file in the folder '" + folder + "': " + errno_text(errno));
      }
    }
    throw FileError(shown, "cannot create a temporary file in the folder '" + folder + "': every name tried exists");
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, c, std::min<std::size_t>(n, 1u << 30));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail("cannot write the temporary file '" + temp_ + "'", errno);
      c += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  void commit() {
    // Only a regular file (or nothing) is renamed over: should the target have become something
    // else since it was looked at, the old thing stays and the write fails.
    struct stat st {};
    const bool exists = ::lstat(target_.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
      throw FileError(shown_, "'" + target_ + "' is no longer a regular file: it was not replaced");
    }
    // An existing target keeps its permission bits, as when np.save overwrites it.
    if (exists) ::fchmod(fd_, st.st_mode & 07777);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("cannot write the temporary file '" + temp_ + "'", errno);
    if (::rename(temp_.c_str(), target_.c_str()) != 0) {
      fail("cannot rename '" + temp_ + "' to " + (target_ == shown_ ? "it" : "'" + target_ + "'"), errno);
    }
    temp_.clear();
  }

 private:
  [[noreturn]] void fail(const std::string& what, int e) { throw FileError(shown_, what + ": " + errno_text(e)); }
  std::string shown_, target_, temp_;
  int fd_ = -1;
};

// While alive, a write to a pipe whose reader has gone fails with EPIPE in this thread instead of
// raising SIGPIPE, whose default action ends the process: the signal is blocked, and one that the
// write raised is taken back before the old mask returns.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    ::sigemptyset(&pipe_);
    ::sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    pending_before_ = pending();
  }
  ~SigpipeBlocked() {
    if (!pending_before_ && pending()) {
      const timespec zero{};
      ::sigtimedwait(&pipe_, nullptr, &zero);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  static bool pending() {
    sigset_t p;
    ::sigemptyset(&p);
    return ::sigpending(&p) == 0 && ::sigismember(&p, SIGPIPE) == 1;
  }
  sigset_t pipe_{}, old_{};
  bool pending_before_ = false;
};

// Writes into what is at `path` as it is, for character devices and FIFOs (/dev/null,
// /dev/stdout on a terminal or a pipe), and for files reached through /proc's fd links.
class InPlaceFile {
 public:
  // `regular_too`: the path is a /proc fd link, which may lead to a regular file (truncated then).
  InPlaceFile(const std::string& path, bool regular_too) : path_(path) {
    // O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of waiting for a reader.
    fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) {
      const int e = errno;
      if (e == ENXIO) {
        throw FileError(path,
                        "cannot open it for writing: no process has it open for reading (a FIFO without a "
                        "reader, or a socket): xp does not wait for a reader");
      }
      throw FileError(path, "cannot open it for writing: " + errno_text(e));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("cannot stat it", errno);
    if (const char* why = refused_kind(st.st_mode)) throw FileError(path, why);
    if (S_ISREG(st.st_mode) && !regular_too) throw FileError(path, "changed into a regular file while being saved");
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0) fail("cannot set it to blocking writes", errno);
    if (S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0) fail("cannot truncate it", errno);
  }
  ~InPlaceFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  InPlaceFile(const InPlaceFile&) = delete;
  InPlaceFile& operator=(const InPlaceFile&) = delete;

  void write(const void* p, std::size_t n) {
    const SigpipeBlocked no_sigpipe;  // a FIFO's reader that goes away is a FileError (EPIPE)
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, c, std::min<std::size_t>(n, 1u << 30));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail("cannot write to it", errno);
      if (w == 0) fail("cannot write to it", ENOSPC);
      c += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  void commit() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("cannot write to it", errno);
  }

  // Why xp does not write to a file of this kind in place (nullptr when it does).
  static const char* refused_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "is a folder: xp::save writes a file";
    if (S_ISBLK(mode)) return "is a block device: xp::save does not write to block devices";
    if (S_ISSOCK(mode)) return "is a socket: xp::save does not write to sockets";
    if (S_ISCHR(mode) || S_ISFIFO(mode) || S_ISREG(mode)) return nullptr;
    return "is not a file xp::save writes (a regular file, a character device or a FIFO)";
  }

 private:
  [[noreturn]] void fail(const std::string& what, int e) { throw FileError(path_, what + ": " + errno_text(e)); }
  std::string path_;
  int fd_ = -1;
};

// Where write_npy puts its bytes: a regular file (or nothing yet) is replaced atomically at
// `file`, the end of the symbolic links `path` goes through; a character device or a FIFO is
// written in place.
struct SaveTarget {
  bool in_place = false;
  bool proc_link = false;  // in place through a /proc fd link
  std::string file;        // the file renamed over (the end of the links) when not in place
};

bool in_procfs(const std::string& path) {
  struct statfs fs {};
  return ::statfs(path.c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

SaveTarget save_target(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops <= 40; ++hops) {  // Linux's limit on links followed in one lookup
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      // Nothing there (also the end of a dangling link): created, as np.save does.
      if (errno == ENOENT) return {false, false, p};
      const int e = errno;
      throw FileError(path, (p == path ? "cannot stat it: " : "cannot stat '" + p + "': ") + errno_text(e));
    }
    if (S_ISLNK(st.st_mode)) {
      // /proc/self/fd/1 and its kin (/dev/stdout) name an open file, not a path: their text
      // ("pipe:[123]") is not a place to rename to. What they lead to is written in place.
      if (in_procfs(folder_of(p))) return {true, true, path};
      std::string link(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
      const ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
      if (n < 0) throw FileError(path, "cannot read the symbolic link '" + p + "': " + errno_text(errno));
      if (static_cast<std::size_t>(n) >= link.size()) throw FileError(path, "the symbolic link '" + p + "' changed");
      link.resize(static_cast<std::size_t>(n));
      if (link.empty()) throw FileError(path, "the symbolic link '" + p + "' is empty");
      p = link[0] == '/' ? link : folder_of(p) + "/" + link;
      continue;
    }
    if (S_ISREG(st.st_mode)) return {false, false, p};
    if (const char* why = InPlaceFile::refused_kind(st.st_mode)) {
      throw FileError(path, p == path ? why : "leads to '" + p + "', which " + why);
    }
    return {true, false, p};  // a character device or a FIFO
  }
  throw FileError(path, "cannot resolve it: " + errno_text(ELOOP));
}

}  // namespace

std::int64_t NpyArray::size() const noexcept {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

std::vector<std::int64_t> NpyArray::byte_strides() const {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = static_cast<std::int64_t>(itemsize(dtype));
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::size_t i = fortran_order ? k : shape.size() - 1 - k;
    strides[i] = s;
    s *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::bool_:
      return "|b1";
    case DType::int8:
      return "|i1";
    case DType::int16:
      return "<i2";
    case DType::int32:
      return "<i4";
    case DType::int64:
      return "<i8";
    case DType::uint8:
      return "|u1";
    case DType::uint16:
      return "<u2";
    case DType::uint32:
      return "<u4";
    case DType::uint64:
      return "<u8";
    case DType::float16:
      return "<f2";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float32:
      return "<f4";
    case DType::float64:
      return "<f8";
    case DType::complex64:
      return "<c8";
    case DType::complex128:
      return "<c16";
  }
  throw ValueError("write_npy: unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

std::string npy_preamble(DType dtype, std::span<const std::int64_t> shape, bool fortran_order) {
  // Exactly as NumPy 2's _write_array_header: sorted keys, repr of each value, a trailing ", ",
  // spare spaces for the growth axis, then padding to 64 bytes and a newline.
  std::string dict = "{'descr': '" + npy_descr(dtype) + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                     ", 'shape': " + shape_str(shape) + ", }";
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[fortran_order ? shape.size() - 1 : 0]).size();
    dict.append(kGrowthAxisMaxDigits > digits ? kGrowthAxisMaxDigits - digits : 0, ' ');
  }
  const std::size_t hlen = dict.size() + 1;  // with the newline
  for (const int major : {1, 2}) {
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    const std::size_t padlen = kArrayAlign - (sizeof kMagic + 2 + length_bytes + hlen) % kArrayAlign;
    const std::uint64_t total = hlen + padlen;
    if (major == 1 && total > 0xffff) continue;
    std::string out(kMagic, sizeof kMagic);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((total >> (8 * i)) & 0xff);
    out += dict;
    out.append(padlen, ' ');
    out += '\n';
    return out;
  }
  throw ValueError("write_npy: the .npy header does not fit in 4 GiB");  // unreachable with 64 dimensions
}

NpyArray read_npy(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one, forever. Only a
  // regular file is read; the flag is cleared before reading it.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) throw FileError(path, "cannot open the file: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw FileError(path, "cannot stat the file: " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) throw FileError(path, "is a folder, not a .npy file");
  if (S_ISFIFO(st.st_mode)) throw FileError(path, "is a FIFO, not a regular file: xp::load reads regular files only");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    throw FileError(path, "is a device, not a regular file: xp::load reads regular files only");
  }
  if (!S_ISREG(st.st_mode)) throw FileError(path, "is not a regular file: xp::load reads regular files only");
  if (const int flags = ::fcntl(fd.get(), F_GETFL); flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    throw FileError(path, "cannot read the file: " + errno_text(errno));
  const std::uint64_t file_size = static_cast<std::uint64_t>(st.st_size);

  // Magic, version, and the header length (2 bytes in version 1.0, 4 after).
  unsigned char prefix[12] = {};
  const std::size_t got = read_up_to(path, fd.get(), prefix, 8);
  if (got < sizeof kMagic || std::memcmp(prefix, kMagic, sizeof kMagic) != 0) {
    if (got == 0) throw FileError(path, "not a .npy file: the file is empty");
    std::string why = "not a .npy file: it does not begin with the magic string \\x93NUMPY (its first bytes are " +
                      hex_bytes(reinterpret_cast<const char*>(prefix), std::min<std::size_t>(got, 6)) + ")";
    if (got >= 4 && std::memcmp(prefix, "PK\x03\x04", 4) == 0)
      why += "; it is a zip archive (a .npz file of several arrays?): read_npy reads one .npy file";
    throw FileError(path, why);
  }
  if (got < 8) throw FileError(path, "the file is truncated: it ends within the format version");
  const int major = prefix[6], minor = prefix[7];
  if (!(minor == 0 && (major == 1 || major == 2 || major == 3))) {
    throw FileError(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                              " (xp reads 1.0, 2.0 and 3.0)");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (read_up_to(path, fd.get(), prefix + 8, length_bytes) < length_bytes)
    throw FileError(path, "the file is truncated: it ends within the header length");
  const std::uint64_t header_len = little_endian(prefix + 8, length_bytes);
  const std::uint64_t data_offset = 8 + length_bytes + header_len;
  if (data_offset > file_size) {
    throw FileError(path, "the header is truncated: expected " + std::to_string(header_len) + " bytes, found " +
                              std::to_string(file_size - 8 - length_bytes));
  }
  if (header_len > kMaxHeaderBytes) {
    throw FileError(path, "the header length " + std::to_string(header_len) +
                              " is implausible (xp reads headers up to 1 MiB; NumPy writes about 128 bytes)");
  }
  std::string text(header_len, '\0');
  if (read_up_to(path, fd.get(), text.data(), text.size()) < text.size())
    throw FileError(path, "the header is truncated (the file shrank while being read)");

  // Version 3.0 headers are UTF-8, earlier ones latin-1: the ASCII-only parser serves all three.
  const Header h = HeaderParser(path, text, major <= 2).parse();
  const Descr d = parse_descr(path, h.descr);
  const std::size_t isize = itemsize(d.dtype);
  const auto nbytes = byte_count(h.shape, isize);
  if (!nbytes) {
    throw FileError(path, describe(d.dtype, h.shape) + " is too big: its byte count overflows a 64-bit integer");
  }
  const std::uint64_t expected = static_cast<std::uint64_t>(*nbytes);
  const std::uint64_t available = file_size - data_offset;
  if (available < expected) {
    throw FileError(path, "the data section is truncated: expected " + std::to_string(expected) + " bytes (" +
                              describe(d.dtype, h.shape) + "), found " + std::to_string(available));
  }
  if (available > expected) {
    throw FileError(path, "trailing data: " + std::to_string(available - expected) + " bytes after the " +
                              std::to_string(expected) + " bytes of the array (" + describe(d.dtype, h.shape) + ")");
  }

  NpyArray out;
  out.dtype = d.dtype;
  out.shape = h.shape;
  out.fortran_order = h.fortran_order;
  // The size is the file's own (checked against its length above), so only a file that big gets
  // this far; should the memory still not be there, that is an error about this file.
  try {
    out.data.resize(static_cast<std::size_t>(expected));
  } catch (const std::bad_alloc&) {
    throw FileError(path, "cannot allocate " + std::to_string(expected) + " bytes for its data (" +
                              describe(d.dtype, h.shape) + "): out of host memory");
  }
  const std::size_t n = read_up_to(path, fd.get(), out.data.data(), out.data.size());
  if (n < out.data.size()) {
    throw FileError(path, "the data section is truncated: expected " + std::to_string(expected) + " bytes, found " +
                              std::to_string(n) + " (the file shrank while being read)");
  }
  if (d.swap) byte_swap(out.data, kind(d.dtype) == DTypeKind::complex_floating ? isize / 2 : isize);  // by parts
  if (d.dtype == DType::bool_) {
    for (auto& b : out.data) b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  }
  return out;
}

void write_npy(const std::string& path, DType dtype, std::span<const std::int64_t> shape, const void* data,
               bool fortran_order) {
  if (path.empty()) throw ValueError("write_npy: the path is empty");
  if (shape.size() > kNpyMaxDims) {
    throw ValueError("write_npy: " + std::to_string(shape.size()) + " dimensions; .npy files (and xp) allow at most " +
                     std::to_string(kNpyMaxDims));
  }
  for (const std::int64_t d : shape) {
    if (d < 0) throw ValueError("write_npy: shape " + shape_str(shape) + " has a negative dimension");
  }
  const auto nbytes = byte_count(shape, itemsize(dtype));
  if (!nbytes) throw ValueError("write_npy: " + describe(dtype, shape) + " is too big: its byte count overflows");
  if (data == nullptr && *nbytes > 0) throw ValueError("write_npy: data is null for " + describe(dtype, shape));
  const std::string preamble = npy_preamble(dtype, shape, fortran_order);

  const SaveTarget target = save_target(path);
  auto write_all = [&](auto& f) {
    f.write(preamble.data(), preamble.size());
    if (*nbytes > 0) f.write(data, static_cast<std::size_t>(*nbytes));
    f.commit();
  };
  if (target.in_place) {
    InPlaceFile f(path, target.proc_link);  // opened through the links, so errors name the path given
    write_all(f);
  } else {
    TempFile f(path, target.file);
    write_all(f);
  }
}

}  // namespace xp::detail
