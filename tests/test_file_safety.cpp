// What xp::save and xp::load do with paths that are not plain files (symbolic links, devices,
// FIFOs, folders), sizes a .npy file claims that it does not hold, and the cubin inspector
// (src/jit/cubin.cpp) on truncated and damaged images: typed errors, nothing replaced that is not
// a regular file, no read outside a buffer (run under the sanitize preset too).
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "array/npy.hpp"
#include "jit/cubin.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace fs = std::filesystem;

namespace {

std::string make_temp_dir() {
  char tmpl[] = "/tmp/xp-test-files-XXXXXX";
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

// The FileError `fn` throws, checked to name `path`: its reason, or a note of what happened instead.
template <class Fn>
std::string file_error(const std::string& path, Fn fn) {
  try {
    fn();
  } catch (const xp::FileError& e) {
    EXPECT_EQ(e.path(), path);
    return e.reason();
  } catch (const std::exception& e) {
    return std::string("<not a FileError: ") + e.what() + ">";
  }
  return "<no error>";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The array the tests save, and the bytes np.save writes for it (checked against NumPy in test_npy).
xp::Array sample() {
  return xp::arange(0, 6, 1, xp::DType::int32).reshape({2, 3});
}
std::string sample_bytes() {
  const std::vector<std::int32_t> v = {0, 1, 2, 3, 4, 5};
  std::string s = xp::detail::npy_preamble(xp::DType::int32, std::vector<std::int64_t>{2, 3}, false);
  s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof v[0]);
  return s;
}

void expect_sample(const xp::Array& a) {
  ASSERT_EQ(xp::Shape(a.shape().begin(), a.shape().end()), (xp::Shape{2, 3}));
  ASSERT_EQ(a.dtype(), xp::DType::int32);
  const auto* p = static_cast<const std::int32_t*>(a.data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p[i], i);
}

// Runs `fn` in a child process; its exit status (or 128 + the signal that ended it). alarm() only
// turns a child that would hang (the bug some tests look for) into a failure, not a time limit.
template <class Fn>
int in_child(Fn fn) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::alarm(60);
    int code = 0;
    try {
      code = fn();
    } catch (...) {
      code = 99;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class FileSafety : public ::testing::Test {
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

}  // namespace

// ---- xp::save through symbolic links ------------------------------------------------------------

TEST_F(FileSafety, SaveThroughASymlinkWritesItsTarget) {
  write_file(path("data.npy"), "old");
  ::chmod(path("data.npy").c_str(), 0640);
  fs::create_symlink("data.npy", path("link.npy"));  // relative, as ln -s makes them
  xp::save(path("link.npy"), sample());
  EXPECT_TRUE(fs::is_symlink(path("link.npy")));
  EXPECT_EQ(fs::read_symlink(path("link.npy")), "data.npy");
  EXPECT_EQ(read_file(path("data.npy")), sample_bytes());
  expect_sample(xp::load(path("link.npy")));
  expect_sample(xp::load(path("data.npy")));
  struct stat st {};
  ASSERT_EQ(::stat(path("data.npy").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // the target keeps its mode, as np.save leaves it
  EXPECT_EQ(list_dir(dir_), (std::set<std::string>{"data.npy", "link.npy"}));
}

TEST_F(FileSafety, SaveThroughADanglingSymlinkCreatesItsTarget) {
  fs::create_directory(path("sub"));
  fs::create_symlink(path("sub/new.npy"), path("link.npy"));  // absolute, to nothing yet
  xp::save(path("link.npy"), sample());
  EXPECT_TRUE(fs::is_symlink(path("link.npy")));
  EXPECT_EQ(read_file(path("sub/new.npy")), sample_bytes());
  EXPECT_EQ(list_dir(path("sub")), std::set<std::string>{"new.npy"});
  // A dangling link into a folder that does not exist: an error, and nothing created.
  fs::create_symlink(path("nope/x.npy"), path("bad.npy"));
  const std::string reason = file_error(path("bad.npy"), [&] { xp::save(path("bad.npy"), sample()); });
  EXPECT_TRUE(contains(reason, "No such file or directory")) << reason;
  EXPECT_EQ(list_dir(dir_), (std::set<std::string>{"bad.npy", "link.npy", "sub"}));
}

TEST_F(FileSafety, SaveThroughASymlinkChain) {
  fs::create_directory(path("a"));
  fs::create_directory(path("b"));
  write_file(path("b/data.npy"), "old");
  fs::create_symlink("../b/data.npy", path("a/mid.npy"));  // relative to the link's own folder
  fs::create_symlink(path("a/mid.npy"), path("first.npy"));
  xp::save(path("first.npy"), sample());
  EXPECT_TRUE(fs::is_symlink(path("first.npy")));
  EXPECT_TRUE(fs::is_symlink(path("a/mid.npy")));
  EXPECT_EQ(read_file(path("b/data.npy")), sample_bytes());
  EXPECT_EQ(list_dir(path("a")), std::set<std::string>{"mid.npy"});
  EXPECT_EQ(list_dir(path("b")), std::set<std::string>{"data.npy"});
  // A loop of links is an error, not a hang, and changes nothing.
  fs::create_symlink("loop2", path("loop1"));
  fs::create_symlink("loop1", path("loop2"));
  const std::string reason = file_error(path("loop1"), [&] { xp::save(path("loop1"), sample()); });
  EXPECT_TRUE(contains(reason, "Too many levels of symbolic links")) << reason;
  EXPECT_TRUE(fs::is_symlink(path("loop1")));
  EXPECT_TRUE(fs::is_symlink(path("loop2")));
}

// ---- xp::save to devices, FIFOs and folders -------------------------------------------------------

TEST_F(FileSafety, SaveToDevNullWritesInPlace) {
  struct stat st {};
  if (::stat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode)) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_DEV", "no /dev/null");
  xp::save("/dev/null", sample());
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, ::makedev(1, 3));
}

TEST_F(FileSafety, SaveToDevFullIsATypedErrorAndTheDeviceStays) {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_DEV", "no /dev/full");
  const std::string reason = file_error("/dev/full", [&] { xp::save("/dev/full", sample()); });
  EXPECT_EQ(reason, "cannot write to it: No space left on device");
  ASSERT_EQ(::lstat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));  // not replaced by a regular file (which root could do)
  EXPECT_EQ(st.st_rdev, ::makedev(1, 7));
  for (const auto& e : fs::directory_iterator("/dev")) EXPECT_FALSE(contains(e.path().string(), ".full.tmp-"));
}

// The same on a device node of the test's own, where the system lets it make one (root, no
// container rule against mknod): a check that cannot damage /dev.
TEST_F(FileSafety, SaveToACharacterDeviceNodeWritesInPlace) {
  if (::mknod(path("full").c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0 ||
      ::mknod(path("null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_MKNOD", std::string("cannot make a device node: ") + std::strerror(errno));
  }
  const std::string reason = file_error(path("full"), [&] { xp::save(path("full"), sample()); });
  EXPECT_EQ(reason, "cannot write to it: No space left on device");
  fs::create_symlink("null", path("to-null"));
  xp::save(path("to-null"), sample());
  struct stat st {};
  ASSERT_EQ(::lstat(path("full").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::lstat(path("null").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_TRUE(fs::is_symlink(path("to-null")));
  EXPECT_EQ(list_dir(dir_), (std::set<std::string>{"full", "null", "to-null"}));
}

TEST_F(FileSafety, SaveToAFifoWritesInPlaceForAReader) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  // The reader opens first (without waiting for a writer); the array fits the pipe's buffer.
  const int reader = ::open(path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  xp::save(path("fifo"), sample());
  std::string got(4096, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  ::close(reader);
  ASSERT_GE(n, 0);
  got.resize(static_cast<std::size_t>(n));
  EXPECT_EQ(got, sample_bytes());
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(list_dir(dir_), std::set<std::string>{"fifo"});
}

// A reader that leaves half way: a FileError (EPIPE), not a SIGPIPE that would end the process.
TEST_F(FileSafety, SaveToAFifoWhoseReaderLeavesIsATypedError) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const std::string p = path("fifo");
  const int code = in_child([&] {
    // O_RDWR (Linux): the reader is a writer too, so its read waits for data instead of seeing an
    // end of file before xp opens the FIFO. It reads what arrives first, then closes: xp, blocked
    // on the full pipe, is left without a reader and gets EPIPE.
    const int reader = ::open(p.c_str(), O_RDWR);
    if (reader < 0) return 2;
    std::thread t([reader] {
      char buf[100];
      (void)!::read(reader, buf, sizeof buf);
      ::close(reader);
    });
    const std::string reason = file_error(p, [&] { xp::save(p, xp::zeros({1 << 20}, xp::DType::float64)); });
    t.join();
    sigset_t pending;
    ::sigemptyset(&pending);
    ::sigpending(&pending);
    if (::sigismember(&pending, SIGPIPE) == 1) return 3;
    if (reason != "cannot write to it: Broken pipe") std::fprintf(stderr, "reason: %s\n", reason.c_str());
    return reason == "cannot write to it: Broken pipe" ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "1: wrong error; 2: no reader; 3: a SIGPIPE left pending; 141: killed by SIGPIPE";
}

TEST_F(FileSafety, SaveToAFifoWithoutAReaderFailsAtOnce) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const std::string p = path("fifo");
  const int code = in_child([&] {
    const std::string reason = file_error(p, [&] { xp::save(p, sample()); });
    return contains(reason, "no process has it open for reading") ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "1: wrong error; 142: it waited for a reader (SIGALRM)";
  struct stat st {};
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(list_dir(dir_), std::set<std::string>{"fifo"});
}

// /dev/stdout names the process's standard output through /proc/self/fd/1: a pipe, a terminal or
// a file, written where it is (np.save(open('/dev/stdout', 'wb')) alike), never renamed over.
TEST_F(FileSafety, SaveToDevStdout) {
  struct stat st {};
  if (::lstat("/dev/stdout", &st) != 0) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_DEV", "no /dev/stdout");
  const bool was_link = S_ISLNK(st.st_mode);
  // Standard output a pipe.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  int code = in_child([&] {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    xp::save("/dev/stdout", sample());
    return 0;
  });
  ::close(fds[1]);
  std::string got(4096, '\0');
  std::size_t total = 0;
  for (ssize_t n; (n = ::read(fds[0], got.data() + total, got.size() - total)) > 0;)
    total += static_cast<std::size_t>(n);
  ::close(fds[0]);
  got.resize(total);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(got, sample_bytes());
  // Standard output a regular file (with something in it already): rewritten in place.
  write_file(path("out.npy"), std::string(1000, 'x'));
  const std::string out = path("out.npy");
  code = in_child([&] {
    const int fd = ::open(out.c_str(), O_WRONLY);
    if (fd < 0) return 2;
    ::dup2(fd, 1);
    ::close(fd);
    xp::save("/dev/stdout", sample());
    return 0;
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(read_file(out), sample_bytes());
  EXPECT_EQ(list_dir(dir_), std::set<std::string>{"out.npy"});
  ASSERT_EQ(::lstat("/dev/stdout", &st), 0);
  EXPECT_EQ(S_ISLNK(st.st_mode), was_link);
  for (const auto& e : fs::directory_iterator("/dev")) EXPECT_FALSE(contains(e.path().string(), ".stdout.tmp-"));
}

TEST_F(FileSafety, SaveToAFolderFailsAndLeavesNothing) {
  fs::create_directory(path("sub"));
  std::string reason = file_error(path("sub"), [&] { xp::save(path("sub"), sample()); });
  EXPECT_EQ(reason, "is a folder: xp::save writes a file");
  fs::create_symlink("sub", path("link"));
  reason = file_error(path("link"), [&] { xp::save(path("link"), sample()); });
  EXPECT_EQ(reason, "leads to '" + dir_ + "/sub', which is a folder: xp::save writes a file");
  reason = file_error(path("sub/"), [&] { xp::save(path("sub/"), sample()); });
  EXPECT_TRUE(contains(reason, "folder")) << reason;
  EXPECT_TRUE(fs::is_empty(path("sub")));
  EXPECT_TRUE(fs::is_symlink(path("link")));
  EXPECT_EQ(list_dir(dir_), (std::set<std::string>{"link", "sub"}));
}

// A folder the process may not write to: root may, so as root the check runs as nobody.
TEST_F(FileSafety, SavePermissionDeniedLeavesNothing) {
  fs::permissions(dir_, fs::perms(0755));
  fs::create_directory(path("ro"));
  write_file(path("ro/old.npy"), "old");
  fs::permissions(path("ro"), fs::perms(0555));
  ::chmod(path("ro/old.npy").c_str(), 0444);
  const std::string ro = path("ro");
  const int code = in_child([&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 3;
    for (const std::string name : {"x.npy", "old.npy"}) {
      const std::string p = ro + "/" + name;
      const std::string reason = file_error(p, [&] { xp::save(p, sample()); });
      if (!contains(reason, "Permission denied")) return 1;
    }
    return 0;
  });
  EXPECT_EQ(code, 0) << "1: not a FileError naming the path with EACCES; 3: cannot drop root";
  EXPECT_EQ(list_dir(ro), std::set<std::string>{"old.npy"});
  EXPECT_EQ(read_file(ro + "/old.npy"), "old");
}

// `xp bench launch` writes its --json and --md files the same way: through a link to its target,
// into a FIFO in place.
TEST_F(FileSafety, BenchOutputsThroughALinkAndIntoAFifo) {
  fs::create_directory(path("results"));
  write_file(path("results/r.json"), "old");
  fs::create_symlink("results/r.json", path("r.json"));
  ASSERT_EQ(::mkfifo(path("md").c_str(), 0600), 0);
  const int reader = ::open(path("md").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const auto r =
      xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1", "--python", "none",
                            "--only", "xp-add", "--json", path("r.json"), "--md", path("md")});
  std::string md(1 << 16, '\0');
  const ssize_t n = ::read(reader, md.data(), md.size());
  ::close(reader);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_symlink(path("r.json")));
  EXPECT_TRUE(contains(read_file(path("results/r.json")), "xp.bench.launch/"));
  ASSERT_GT(n, 0);
  EXPECT_TRUE(contains(md.substr(0, static_cast<std::size_t>(n)), "xp c = a + b"))
      << md.substr(0, static_cast<std::size_t>(n));
  struct stat st {};
  ASSERT_EQ(::lstat(path("md").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(list_dir(dir_), (std::set<std::string>{"md", "r.json", "results"}));
  EXPECT_EQ(list_dir(path("results")), std::set<std::string>{"r.json"});
}

// ---- xp::load: only regular files, sizes checked before allocating ------------------------------

TEST_F(FileSafety, LoadRefusesAFifoWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const std::string p = path("fifo");
  const int code = in_child([&] {
    const std::string reason = file_error(p, [&] { xp::load(p); });
    return reason == "is a FIFO, not a regular file: xp::load reads regular files only" ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "1: wrong error; 142: open() waited for a writer (SIGALRM)";
}

TEST_F(FileSafety, LoadRefusesDevices) {
  struct stat st {};
  if (::stat("/dev/zero", &st) != 0) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_DEV", "no /dev/zero");
  EXPECT_EQ(file_error("/dev/zero", [&] { xp::load("/dev/zero"); }),
            "is a device, not a regular file: xp::load reads regular files only");
}

TEST_F(FileSafety, LoadChecksClaimedSizesBeforeAllocating) {
  // A header length field (version 2.0: 4 bytes) far past the end of the file.
  const std::string p = path("bad.npy");
  write_file(p, std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14));
  EXPECT_EQ(file_error(p, [&] { xp::load(p); }), "the header is truncated: expected 4294967295 bytes, found 2");
  // A shape of 2^59 elements over 8 bytes of data.
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (576460752303423488,), }";
  header.append(127 - 10 - header.size(), ' ');
  header += '\n';
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size());
  file += '\0';
  write_file(p, file + header + std::string(8, '\0'));
  EXPECT_EQ(file_error(p, [&] { xp::load(p); }),
            "the data section is truncated: expected 576460752303423488 bytes (shape (576460752303423488,) of uint8), "
            "found 8");
  // 2^59 elements of float64 in each of two dimensions: the byte count overflows.
  header = "{'descr': '<f8', 'fortran_order': False, 'shape': (576460752303423488, 576460752303423488), }";
  header.append(127 - 10 - header.size(), ' ');
  header += '\n';
  file[8] = static_cast<char>(header.size());
  write_file(p, file + header);
  EXPECT_TRUE(contains(file_error(p, [&] { xp::load(p); }), "its byte count overflows a 64-bit integer"));
}

// ---- the cubin inspector on damaged images --------------------------------------------------------

namespace {

const char* kKernels = R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void scale(float* x, float s) { x[threadIdx.x] *= s; }
)";

// Inspects exactly `size` bytes held in a buffer of that size, so that ASan sees any read past it.
xp::detail::ModuleInfo inspect_exact(const char* data, std::size_t size) {
  std::unique_ptr<char[]> copy(new char[size > 0 ? size : 1]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  return xp::detail::inspect_module(copy.get(), size);
}

const std::vector<char>& real_cubin() {
  static const std::vector<char> bin = [] {
    xp::Program prog(kKernels, {.name = "damage.cu"});
    return prog.binary(xp::Arch::sm(90));
  }();
  return bin;
}

template <class T>
void put(std::vector<char>& image, std::size_t offset, T value) {
  ASSERT_LE(offset + sizeof value, image.size());
  std::memcpy(image.data() + offset, &value, sizeof value);
}

}  // namespace

TEST(CubinDamage, PtxTargetAtTheEndOfTheBuffer) {
  // The text stops after "sm_90"; bytes after it (digits here) are not the module's.
  const std::string buffer = ".version 8.0\n.target sm_90123";
  const std::size_t size = buffer.size() - 3;
  auto info = xp::detail::inspect_module(buffer.data(), size);
  EXPECT_TRUE(info.is_ptx);
  EXPECT_EQ(info.arch, 90);
  info = inspect_exact(buffer.data(), size);  // nothing after it: ASan sees a read past the end
  EXPECT_EQ(info.arch, 90);
  info = inspect_exact(".target sm_9", 12);  // no NUL after it
  EXPECT_EQ(info.arch, 9);
  info = inspect_exact(".target sm_", 11);
  EXPECT_FALSE(info.valid);
}

TEST(CubinDamage, TheRealCubinIsValid) {
  XP_REQUIRE_NVRTC();
  const auto& bin = real_cubin();
  const auto info = inspect_exact(bin.data(), bin.size());
  ASSERT_TRUE(info.valid) << info.error;
  EXPECT_EQ(info.arch, 90);
  EXPECT_EQ(info.kernels, (std::vector<std::string>{"add", "scale"}));
  EXPECT_EQ(info.params.at("add"), (std::vector<std::size_t>{8, 8, 8, 4}));
  EXPECT_EQ(info.params.at("scale"), (std::vector<std::size_t>{8, 4}));
}

TEST(CubinDamage, EveryTruncationIsInvalid) {
  XP_REQUIRE_NVRTC();
  const auto& bin = real_cubin();
  for (std::size_t cut = 0; cut < bin.size(); ++cut) {
    const auto info = inspect_exact(bin.data(), cut);
    EXPECT_FALSE(info.valid) << "cut at " << cut << " of " << bin.size();
    if (info.valid) break;
  }
}

TEST(CubinDamage, DamagedHeadersAreInvalid) {
  XP_REQUIRE_NVRTC();
  const auto& bin = real_cubin();
  Elf64_Ehdr eh{};
  ASSERT_GE(bin.size(), sizeof eh);
  std::memcpy(&eh, bin.data(), sizeof eh);
  struct Change {
    std::string name;
    std::size_t offset;
    std::uint64_t value;
    int bytes;
  };
  const std::uint64_t huge = ~std::uint64_t{0} - 0xff;
  std::vector<Change> changes = {
      {"e_shoff huge", offsetof(Elf64_Ehdr, e_shoff), huge, 8},
      {"e_shoff at the end", offsetof(Elf64_Ehdr, e_shoff), bin.size() - 8, 8},
      {"e_shoff past the end", offsetof(Elf64_Ehdr, e_shoff), bin.size() + 1, 8},
      {"e_shnum one past the end", offsetof(Elf64_Ehdr, e_shnum), (bin.size() - eh.e_shoff) / eh.e_shentsize + 1, 2},
      {"e_shnum max", offsetof(Elf64_Ehdr, e_shnum), 0xffff, 2},
      {"e_shnum 0", offsetof(Elf64_Ehdr, e_shnum), 0, 2},
      {"e_shentsize 0", offsetof(Elf64_Ehdr, e_shentsize), 0, 2},
      {"e_shentsize 1", offsetof(Elf64_Ehdr, e_shentsize), 1, 2},
      {"e_shentsize max", offsetof(Elf64_Ehdr, e_shentsize), 0xffff, 2},
      {"e_shstrndx = e_shnum", offsetof(Elf64_Ehdr, e_shstrndx), eh.e_shnum, 2},
      {"e_shstrndx max", offsetof(Elf64_Ehdr, e_shstrndx), 0xffff, 2},
      {"e_phoff huge", offsetof(Elf64_Ehdr, e_phoff), huge, 8},
      {"e_phnum max", offsetof(Elf64_Ehdr, e_phnum), 0xffff, 2},
  };
  // Every field of every section header that locates bytes.
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    const std::size_t at = eh.e_shoff + std::size_t{i} * eh.e_shentsize;
    Elf64_Shdr sh{};
    std::memcpy(&sh, bin.data() + at, sizeof sh);
    const std::string s = "section " + std::to_string(i) + " ";
    changes.push_back({s + "sh_name huge", at + offsetof(Elf64_Shdr, sh_name), 0xffffff00u, 4});
    if (sh.sh_type == SHT_NOBITS) continue;
    changes.push_back({s + "sh_offset huge", at + offsetof(Elf64_Shdr, sh_offset), huge, 8});
    changes.push_back({s + "sh_offset past the end", at + offsetof(Elf64_Shdr, sh_offset), bin.size() + 1, 8});
    changes.push_back({s + "sh_size huge", at + offsetof(Elf64_Shdr, sh_size), huge, 8});
    changes.push_back(
        {s + "sh_size to one past the end", at + offsetof(Elf64_Shdr, sh_size), bin.size() - sh.sh_offset + 1, 8});
    if (sh.sh_type == SHT_SYMTAB) {
      changes.push_back({s + "sh_link huge", at + offsetof(Elf64_Shdr, sh_link), 0xffffffffu, 4});
      changes.push_back({s + "sh_entsize 1", at + offsetof(Elf64_Shdr, sh_entsize), 1, 8});
    }
  }
  for (const auto& c : changes) {
    SCOPED_TRACE(c.name);
    std::vector<char> image = bin;
    if (c.bytes == 8) put<std::uint64_t>(image, c.offset, c.value);
    if (c.bytes == 4) put<std::uint32_t>(image, c.offset, static_cast<std::uint32_t>(c.value));
    if (c.bytes == 2) put<std::uint16_t>(image, c.offset, static_cast<std::uint16_t>(c.value));
    const auto info = inspect_exact(image.data(), image.size());
    EXPECT_FALSE(info.valid);
    EXPECT_FALSE(info.error.empty());
  }
}

// Symbol names and .nv.info records pointing outside their sections; then bytes flipped anywhere:
// whatever the verdict, nothing is read outside the buffer (the sanitize preset checks).
TEST(CubinDamage, DamagedTablesAreInvalidAndFlippedBytesAreSafe) {
  XP_REQUIRE_NVRTC();
  const auto& bin = real_cubin();
  Elf64_Ehdr eh{};
  std::memcpy(&eh, bin.data(), sizeof eh);
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (unsigned i = 0; i < eh.e_shnum; ++i)
    std::memcpy(&sections[i], bin.data() + eh.e_shoff + std::size_t{i} * eh.e_shentsize, sizeof(Elf64_Shdr));
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  int symbols = 0, records = 0;
  for (const auto& sh : sections) {
    if (sh.sh_type == SHT_SYMTAB) {
      for (std::size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
        const std::size_t at = sh.sh_offset + k * sizeof(Elf64_Sym);
        Elf64_Sym sym{};
        std::memcpy(&sym, bin.data() + at, sizeof sym);
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || (sym.st_other & 0x10) == 0) continue;
        std::vector<char> image = bin;
        put<std::uint32_t>(image, at + offsetof(Elf64_Sym, st_name), 0xfffffff0u);
        EXPECT_FALSE(inspect_exact(image.data(), image.size()).valid) << "symbol " << k;
        ++symbols;
      }
    }
    const std::string name(bin.data() + names.sh_offset + sh.sh_name);
    if (name.rfind(".nv.info.", 0) == 0 && sh.sh_size >= 4) {
      // The first record's length reaching past the section (a format-4 record's u16 length).
      std::vector<char> image = bin;
      image[sh.sh_offset] = 4;
      put<std::uint16_t>(image, sh.sh_offset + 2, static_cast<std::uint16_t>(sh.sh_size));
      EXPECT_FALSE(inspect_exact(image.data(), image.size()).valid) << name;
      ++records;
    }
  }
  EXPECT_EQ(symbols, 2);
  EXPECT_EQ(records, 2);
  std::uint32_t x = 12345;
  for (int round = 0; round < 3000; ++round) {
    std::vector<char> image = bin;
    for (int k = 0; k < 4; ++k) {
      x = x * 1664525u + 1013904223u;
      const std::size_t at = (x >> 8) % image.size();
      x = x * 1664525u + 1013904223u;
      image[at] = static_cast<char>(image[at] ^ (1 << ((x >> 16) & 7)));
    }
    const auto info = inspect_exact(image.data(), image.size());
    if (!info.valid) {
      EXPECT_FALSE(info.error.empty());
    }
  }
}
