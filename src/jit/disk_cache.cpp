#include "jit/disk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string_view>

#include "jit/hash.hpp"
#include "runtime/log.hpp"
#include "xp/config.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {

constexpr char kMagic[8] = {'X', 'P', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr std::uint32_t kFormat = 1;
constexpr const char* kSuffix = ".xpk";
constexpr long kTouchAfterSeconds = 60;
// A writer takes milliseconds from mkostemp to rename: a temporary file older than this was left by
// a process that died in between.
constexpr long kStaleTemporarySeconds = 60;
// A writer's temporary file: ".tmp-" + the entry's name (32 hex digits, or "recent" for the recent
// list) + "-" + the writer's pid + "-" + mkostemp's six characters. Only files named so, and holding
// the start of what such a writer writes, are removed as a dead writer's (the folder may hold other
// programs' files). Names without the pid are those of earlier versions of xp.
constexpr const char* kTemporaryPrefix = ".tmp-";
constexpr const char* kRecentTemporaryName = "recent";
// The recent list: a header line, then one entry name per line.
constexpr const char* kRecentFile = ".recent";
constexpr const char* kRecentHeader = "xp-recent 1\n";
// What every version of the list begins with: a file named .recent without it is not xp's.
constexpr std::string_view kRecentMagic = "xp-recent ";
// The recent list holds kRecentNames lines of 33 bytes: a file claiming more is not read.
constexpr std::uint64_t kMaxRecentBytes = 65536;

void put_u64(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// The whole file into a buffer of its size, left uninitialised until read (a hit is on the path
// of a process's first kernel, where zero-filling 16 KB first is a cost of its own). False, with
// nothing allocated, for a file that claims more than `max_bytes` (a damaged or planted entry, or a
// sparse file of terabytes, must not take the process down with std::bad_alloc).
bool read_all(int fd, std::unique_ptr<char[]>& out, std::size_t& size, std::uint64_t max_bytes) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > max_bytes) return false;
  size = static_cast<std::size_t>(st.st_size);
  out.reset(new char[size > 0 ? size : 1]);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, out.get() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const std::vector<char>& data) {
  size_t put = 0;
  while (put < data.size()) {
    const ssize_t n = ::write(fd, data.data() + put, data.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    put += static_cast<size_t>(n);
  }
  return true;
}

// Creates each missing component of a path with mode 0700.
bool make_dirs(const std::string& path, std::string& why) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) {
      why = "cannot create " + cur + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

bool is_hex32(std::string_view s) {
  return s.size() == 32 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Whether a name in the folder is an entry's: exactly 32 lowercase hex digits and ".xpk".
bool entry_name(std::string_view name) {
  return name.size() == 36 && name.ends_with(kSuffix) && is_hex32(name.substr(0, 32));
}

// Whether a name in the folder is one of xp's temporary files (see kTemporaryPrefix), and which
// header its writer writes: the entry's magic or the recent list's first line.
bool temporary_name(std::string_view name, std::string_view& header) {
  if (!name.starts_with(kTemporaryPrefix)) return false;
  name.remove_prefix(std::strlen(kTemporaryPrefix));
  if (name.starts_with(kRecentTemporaryName)) {
    header = kRecentMagic;
    name.remove_prefix(std::strlen(kRecentTemporaryName));
  } else if (name.size() >= 32 && is_hex32(name.substr(0, 32))) {
    header = std::string_view(kMagic, 8);
    name.remove_prefix(32);
  } else {
    return false;
  }
  if (!name.starts_with('-')) return false;
  name.remove_prefix(1);
  if (const auto dash = name.find('-'); dash != std::string_view::npos) {  // the writer's pid
    if (dash == 0 || dash > 10 || name.substr(0, dash).find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    name.remove_prefix(dash + 1);
  }
  constexpr std::string_view kRandom = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return name.size() == 6 && name.find_first_not_of(kRandom) == std::string_view::npos;
}

// Whether an open file begins as `header` does. A file shorter than the header counts when its bytes
// begin it (the empty file a writer that died, or a crash after a rename, leaves behind).
bool begins_with(int fd, std::string_view header) {
  char head[32];
  const std::size_t want = std::min(header.size(), sizeof head);
  ssize_t n = 0;
  do {
    n = ::pread(fd, head, want, 0);
  } while (n < 0 && errno == EINTR);
  return n >= 0 && std::memcmp(head, header.data(), static_cast<std::size_t>(n)) == 0;
}

// An open folder's entry or temporary file, if it is a regular file that begins with `header`: the
// test every file passes before xp removes it from a folder other programs may share.
bool xp_file(int dir_fd, const std::string& name, std::string_view header, struct stat& st) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && begins_with(fd, header);
  ::close(fd);
  return ok;
}

// Why `folder` (lstat'ed into st) cannot hold xp's kernels, or empty when it can.
std::string folder_problem(const std::string& folder, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return folder + " is a symbolic link; xp does not follow links for its kernel cache";
  if (!S_ISDIR(st.st_mode)) return folder + " is not a folder";
  if (st.st_uid != ::geteuid())
    return folder + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
           std::to_string(::geteuid()) + "); a cubin is code, so xp uses only its own folder";
  if ((st.st_mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", st.st_mode & 0777);
    return folder + " is writable by group or others (mode " + mode + "); run chmod 700 on it";
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return folder + " is not writable: " + std::strerror(errno);
  return {};
}

// For a folder that does not exist: why a store could not create it (its nearest existing parent
// is not a folder, or not writable), or empty when it could.
std::string creation_problem(const std::string& folder) {
  const std::string head = "cannot create " + folder + ": ";
  std::size_t end = folder.size();
  for (;;) {
    const std::size_t slash = end == 0 ? std::string::npos : folder.find_last_of('/', end - 1);
    const std::string parent = slash == std::string::npos ? std::string(".") : folder.substr(0, slash == 0 ? 1 : slash);
    struct stat st {};
    if (::stat(parent.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return head + parent + " is not a folder";
      if (::access(parent.c_str(), W_OK | X_OK) != 0) return head + parent + ": " + std::strerror(errno);
      return {};
    }
    if (errno != ENOENT) return head + parent + ": " + std::strerror(errno);
    if (slash == std::string::npos || slash == 0) return head + "no parent folder exists";
    end = slash;
  }
}

}  // namespace

std::vector<char> encode_cache_entry(const std::string& key, const std::vector<char>& payload) {
  std::vector<char> out(kMagic, kMagic + 8);
  put_u64(out, kFormat);
  put_u64(out, key.size());
  out.insert(out.end(), key.begin(), key.end());
  put_u64(out, payload.size());
  const Hash128 h = hash128_bytes(payload.data(), payload.size(), 0x78702d6361636865ull);
  put_u64(out, h.lo);
  put_u64(out, h.hi);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

DiskCache::DiskCache(std::string folder, std::uint64_t max_bytes) : folder_(std::move(folder)), max_bytes_(max_bytes) {
  while (folder_.size() > 1 && folder_.back() == '/') folder_.pop_back();
  open_folder();
}

DiskCache& DiskCache::instance() {
  static DiskCache* cache = [] {  // never destroyed: compiles may run during static destruction
    try {
      const Config& c = config();
      return new DiskCache(c.cache_dir, c.cache_max_bytes);
    } catch (const ConfigError& e) {
      auto* d = new DiskCache(std::string(), 0);
      d->problem_ = e.what();
      d->config_error_ = e;
      return d;
    }
  }();
  return *cache;
}

DiskCache& DiskCache::checked() {
  DiskCache& c = instance();
  if (c.config_error_) throw *c.config_error_;
  return c;
}

void DiskCache::open_folder() {
  usable_ = false;
  if (folder_.empty()) {
    problem_ = "no cache folder";
    return;
  }
  if (max_bytes_ == 0) {
    problem_ = "XP_CACHE_MAX_BYTES is 0: no kernel is kept on disk";
    return;
  }
  // Nothing is created here: a missing folder (or its missing parents, $HOME included) is made by
  // the first store, so that looking at the cache (xp cache info, a process that only loads) leaves
  // the file system as it was. The usual case is one lstat.
  struct stat st {};
  if (::lstat(folder_.c_str(), &st) == 0) {
    problem_ = folder_problem(folder_, st);
    folder_exists_ = problem_.empty();
  } else if (errno == ENOENT || errno == ENOTDIR) {
    problem_ = creation_problem(folder_);
  } else {
    problem_ = "cannot read " + folder_ + ": " + std::strerror(errno);
  }
  if (problem_.empty()) {
    usable_ = true;
    return;
  }
  log_once(LogLevel::warn, "kernel disk cache disabled: " + problem_ + " (kernels are compiled in every process)");
}

bool DiskCache::have_folder(bool create) const {
  if (folder_exists_.load(std::memory_order_acquire)) return true;
  struct stat st {};
  if (::lstat(folder_.c_str(), &st) != 0) {
    if (!create || (errno != ENOENT && errno != ENOTDIR)) return false;
    std::string why;  // 0700 at every level made
    if (!make_dirs(folder_, why) || ::lstat(folder_.c_str(), &st) != 0) {
      log_once(LogLevel::warn, "kernel disk cache: " + (why.empty() ? "cannot create " + folder_ : why) +
                                   " (kernels are compiled in every process)");
      return false;
    }
  }
  // A folder that appeared since (made by this store or another process) is checked as the
  // constructor checks an existing one.
  if (const std::string why = folder_problem(folder_, st); !why.empty()) {
    if (create) log_once(LogLevel::warn, "kernel disk cache: " + why + " (kernels are compiled in every process)");
    return false;
  }
  folder_exists_.store(true, std::memory_order_release);
  return true;
}

std::string DiskCache::file_for(const Hash128& key_hash) const {
  return folder_ + "/" + key_hash.hex() + kSuffix;
}

namespace {

// The parts of an entry's bytes, or false when they are not a whole, intact entry of this format.
struct EntryParts {
  std::string_view key;
  const char* payload = nullptr;
  std::size_t payload_len = 0;
};
bool parse_entry(const char* data, std::size_t size, EntryParts& out) {
  const size_t header = 8 + 8 + 8;
  if (size < header || std::memcmp(data, kMagic, 8) != 0 || get_u64(data + 8) != kFormat) return false;
  const std::uint64_t key_len = get_u64(data + 16);
  if (key_len > size - header || size - header - key_len < 8 + 16) return false;
  const char* p = data + header;
  out.key = std::string_view(p, key_len);
  p += key_len;
  const std::uint64_t payload_len = get_u64(p);
  p += 8;
  const Hash128 stored{get_u64(p), get_u64(p + 8)};
  p += 16;
  if (payload_len != static_cast<std::uint64_t>(data + size - p)) return false;
  if (hash128_bytes(p, payload_len, 0x78702d6361636865ull) != stored) return false;
  out.payload = p;
  out.payload_len = payload_len;
  return true;
}

bool owned_regular_file(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 022) == 0;
}

}  // namespace

DiskCache::Lookup DiskCache::load(const std::string& key, const Hash128& key_hash, std::vector<char>& payload,
                                  std::string* file_out) {
  if (!usable_) return Lookup::disabled;
  const std::string file = file_for(key_hash);
  if (file_out != nullptr) *file_out = file;
  if (!have_folder(false)) return Lookup::miss;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Lookup::miss;  // absent, or a link (ELOOP): neither is used
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !begins_with(fd, std::string_view(kMagic, 8))) {
    // Not a file of xp's (another program's, under a name like an entry's): left alone.
    ::close(fd);
    return Lookup::foreign;
  }
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  // An entry larger than kMaxEntryBytes is not read (nor allocated for): it is removed as corrupt.
  const bool ok = owned_regular_file(st) && read_all(fd, bytes, size, kMaxEntryBytes);
  if (ok && ::time(nullptr) - st.st_mtim.tv_sec > kTouchAfterSeconds) {
    // Touch the entry: least recently used eviction reads the modification time. Within a minute
    // of the last touch the order is close enough, and a hit then costs no write.
    ::futimens(fd, nullptr);
  }
  ::close(fd);
  auto remove_corrupt = [&] {
    ::unlink(file.c_str());
    return Lookup::corrupt_removed;
  };
  if (!ok) return remove_corrupt();
  EntryParts parts;
  const char* const data = bytes.get();
  const size_t header = 8 + 8 + 8;
  // A key of another length or other bytes is foreign (a hash collision, or a planted file), and
  // left in place; only an entry that is not whole is removed.
  if (size >= header && std::memcmp(data, kMagic, 8) == 0 && get_u64(data + 8) == kFormat) {
    const std::uint64_t key_len = get_u64(data + 16);
    if (key_len <= size - header && size - header - key_len >= 8 + 16 &&
        (key_len != key.size() || std::memcmp(data + header, key.data(), key.size()) != 0))
      return Lookup::foreign;
  }
  if (!parse_entry(data, size, parts)) return remove_corrupt();
  payload.assign(parts.payload, parts.payload + parts.payload_len);
  return Lookup::hit;
}

bool DiskCache::read_entry(const std::string& file, std::string& key, std::vector<char>& payload,
                           std::int64_t* modified_ns) const {
  if (!usable_ || !have_folder(false)) return false;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && owned_regular_file(st) && read_all(fd, bytes, size, kMaxEntryBytes);
  ::close(fd);
  EntryParts parts;
  if (!ok || !parse_entry(bytes.get(), size, parts)) return false;
  if (modified_ns != nullptr)
    *modified_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  key.assign(parts.key);
  payload.assign(parts.payload, parts.payload + parts.payload_len);
  return true;
}

std::string DiskCache::file_of_name(const std::string& name) const {
  return folder_ + "/" + name + kSuffix;
}

std::vector<std::string> DiskCache::recent() const {
  std::vector<std::string> out;
  if (!usable_ || !have_folder(false)) return out;
  const std::string file = folder_ + "/" + kRecentFile;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return out;
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && owned_regular_file(st) && read_all(fd, bytes, size, kMaxRecentBytes);
  ::close(fd);
  if (!ok) return out;
  const std::string_view text(bytes.get(), size);
  if (!text.starts_with(kRecentHeader)) return out;
  std::size_t pos = std::strlen(kRecentHeader);
  while (pos < text.size() && out.size() < kRecentNames) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a last line without its newline is not whole
    const std::string_view name = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (name.size() != 32 || name.find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
  }
  return out;
}

bool DiskCache::remember(const std::vector<std::string>& used) {
  if (!usable_ || used.empty()) return false;
  const std::vector<std::string> old = recent();
  std::vector<std::string> list;
  auto add = [&](const std::string& n) {
    if (list.size() < kRecentNames && n.size() == 32 && std::find(list.begin(), list.end(), n) == list.end())
      list.push_back(n);
  };
  for (const auto& n : used) add(n);
  for (const auto& n : old) add(n);
  if (list == old || !have_folder(true)) return false;
  std::string text = kRecentHeader;
  for (const auto& n : list) text += n + '\n';
  std::string tmpl = temporary_template(kRecentTemporaryName);
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write_all(fd, std::vector<char>(text.begin(), text.end())) && ::fchmod(fd, 0600) == 0;
  ::close(fd);
  const std::string file = folder_ + "/" + kRecentFile;
  // A regular file named .recent that is not a list of xp's (another program's) is not replaced.
  const int existing = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  const bool foreign =
      existing >= 0 && ::fstat(existing, &st) == 0 && S_ISREG(st.st_mode) && !begins_with(existing, kRecentMagic);
  if (existing >= 0) ::close(existing);
  if (!ok || foreign || ::rename(tmpl.c_str(), file.c_str()) != 0) {
    ::unlink(tmpl.c_str());
    return false;
  }
  return true;
}

void DiskCache::touch(const std::string& file) const {
  if (!usable_ || file.empty()) return;
  ::utimensat(AT_FDCWD, file.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

std::string DiskCache::temporary_template(const std::string& name) const {
  return folder_ + "/" + kTemporaryPrefix + name + "-" + std::to_string(::getpid()) + "-XXXXXX";
}

std::string DiskCache::store(const std::string& key, const Hash128& key_hash, const std::vector<char>& payload) {
  if (!usable_ || !have_folder(true)) return {};
  if (8 + 8 + 8 + key.size() + 8 + 16 + payload.size() > kMaxEntryBytes) {  // it would be refused when read
    log_once(LogLevel::info,
             "kernel disk cache: an entry of more than " + std::to_string(kMaxEntryBytes) + " bytes is not kept");
    return {};
  }
  const std::string file = file_for(key_hash);
  std::string tmpl = temporary_template(key_hash.hex());
  int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {  // the folder was removed since: made again
    folder_exists_.store(false, std::memory_order_release);
    if (have_folder(true)) {
      tmpl = temporary_template(key_hash.hex());
      fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    }
  }
  if (fd < 0) {
    log_once(LogLevel::warn, "kernel disk cache: cannot write in " + folder_ + ": " + std::strerror(errno));
    return {};
  }
  const bool ok = write_all(fd, encode_cache_entry(key, payload)) && ::fchmod(fd, 0600) == 0;
  ::close(fd);
  // A regular file under the entry's name that is not one of xp's (another program's) is not
  // replaced: the kernel is then not kept. (A link there is replaced, never written through.)
  if (ok) {
    const int old = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st {};
    const bool foreign =
        old >= 0 && ::fstat(old, &st) == 0 && S_ISREG(st.st_mode) && !begins_with(old, std::string_view(kMagic, 8));
    if (old >= 0) ::close(old);
    if (foreign) {
      ::unlink(tmpl.c_str());
      log_once(LogLevel::warn, "kernel disk cache: " + file + " is not an entry of xp's; it is left in place");
      return {};
    }
  }
  if (!ok || ::rename(tmpl.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    log_once(LogLevel::warn, "kernel disk cache: cannot store an entry in " + folder_ + ": " + std::strerror(err));
    return {};
  }
  evict();
  // An entry larger than the cap is evicted at once: there is then no entry to name.
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) {
    log_once(LogLevel::info, "kernel disk cache: an entry of more than XP_CACHE_MAX_BYTES (" +
                                 std::to_string(max_bytes_) + " bytes) is not kept");
    return {};
  }
  return file;
}

void DiskCache::remove_stale_temporaries() const {
  if (!have_folder(false)) return;
  const int dir_fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;
  DIR* d = ::fdopendir(dir_fd);
  if (d == nullptr) {
    ::close(dir_fd);
    return;
  }
  const std::time_t now = ::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    std::string_view header;
    if (!temporary_name(name, header)) continue;
    struct stat st {};
    if (xp_file(dir_fd, name, header, st) && now - st.st_mtim.tv_sec > kStaleTemporarySeconds)
      ::unlinkat(dir_fd, name.c_str(), 0);
  }
  ::closedir(d);
}

std::vector<DiskCache::Entry> DiskCache::entries() const {
  std::vector<Entry> out;
  if (!usable_ || !have_folder(false)) return out;
  const int dir_fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return out;
  for (Entry& e : entries_by_name()) {
    const std::string name = e.file.substr(e.file.rfind('/') + 1);
    struct stat st {};
    // Only xp's: a regular file that begins as an entry does.
    if (!xp_file(dir_fd, name, std::string_view(kMagic, 8), st)) continue;
    out.push_back(Entry{std::move(e.file), static_cast<std::uint64_t>(st.st_size),
                        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
  }
  ::close(dir_fd);
  return out;
}

std::vector<DiskCache::Entry> DiskCache::entries_by_name() const {
  std::vector<Entry> out;
  if (!usable_ || !have_folder(false)) return out;
  const int dir_fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return out;
  DIR* d = ::fdopendir(dir_fd);
  if (d == nullptr) {
    ::close(dir_fd);
    return out;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st {};
    if (!entry_name(name) || ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    out.push_back(Entry{folder_ + "/" + name, static_cast<std::uint64_t>(st.st_size),
                        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
  }
  ::closedir(d);
  return out;
}

std::uint64_t DiskCache::total_bytes() const {
  std::uint64_t t = 0;
  for (const auto& e : entries()) t += e.bytes;
  return t;
}

std::size_t DiskCache::clear(std::vector<std::string>* failed) {
  std::size_t n = 0;
  // An entry another process removes meanwhile (ENOENT) is no failure; one stored after the listing
  // is not seen, so neither counted nor reported.
  for (const auto& e : entries()) {
    if (::unlink(e.file.c_str()) == 0) {
      ++n;
    } else if (errno != ENOENT && failed != nullptr) {
      failed->push_back(e.file + ": " + std::strerror(errno));
    }
  }
  if (usable_ && have_folder(false)) {
    const std::string recent = folder_ + "/" + kRecentFile;
    const int fd = ::open(recent.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st {};
    const bool ours = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && begins_with(fd, kRecentMagic);
    if (fd >= 0) ::close(fd);
    if (ours) ::unlink(recent.c_str());
    remove_stale_temporaries();
  }
  return n;
}

void DiskCache::evict() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!usable_) return;
  remove_stale_temporaries();
  // Listed by name and stat only; a file is read (its first bytes) only when it is next to go, so
  // that a store in a folder of many entries does not open each of them.
  auto all = entries_by_name();
  std::uint64_t total = 0;
  for (const auto& e : all) total += e.bytes;
  if (total <= max_bytes_) return;
  // Entries too large to be read go first (they are damaged), then the least recently used.
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    const bool a_big = a.bytes > kMaxEntryBytes, b_big = b.bytes > kMaxEntryBytes;
    if (a_big != b_big) return a_big;
    return a.modified_ns != b.modified_ns ? a.modified_ns < b.modified_ns : a.file < b.file;
  });
  const int dir_fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;
  for (const auto& e : all) {
    if (total <= max_bytes_) break;
    struct stat st {};
    // Another program's file under an entry's name is neither removed nor counted.
    if (!xp_file(dir_fd, e.file.substr(e.file.rfind('/') + 1), std::string_view(kMagic, 8), st)) {
      total -= e.bytes;
      continue;
    }
    // ENOENT: another process evicted it first; either way its bytes are gone.
    if (::unlink(e.file.c_str()) == 0 || errno == ENOENT) total -= e.bytes;
  }
  ::close(dir_fd);
}

}  // namespace xp::detail
