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
constexpr const char* kTemporaryPrefix = ".tmp-";
// The recent list: a header line, then one entry name per line.
constexpr const char* kRecentFile = ".recent";
constexpr const char* kRecentHeader = "xp-recent 1\n";

void put_u64(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// The whole file into a buffer of its size, left uninitialised until read (a hit is on the path
// of a process's first kernel, where zero-filling 16 KB first is a cost of its own).
bool read_all(int fd, std::unique_ptr<char[]>& out, std::size_t& size) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < 0) return false;
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
  std::string why;
  struct stat existing {};
  // Only a missing folder is created (0700 at every level made); the usual case is one lstat.
  if (::lstat(folder_.c_str(), &existing) != 0 && !make_dirs(folder_, why)) {
    problem_ = why;
  } else {
    struct stat st {};
    if (::lstat(folder_.c_str(), &st) != 0) {
      problem_ = "cannot read " + folder_ + ": " + std::strerror(errno);
    } else if (S_ISLNK(st.st_mode)) {
      problem_ = folder_ + " is a symbolic link; xp does not follow links for its kernel cache";
    } else if (!S_ISDIR(st.st_mode)) {
      problem_ = folder_ + " is not a folder";
    } else if (st.st_uid != ::geteuid()) {
      problem_ = folder_ + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
                 std::to_string(::geteuid()) + "); a cubin is code, so xp uses only its own folder";
    } else if ((st.st_mode & 022) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%03o", st.st_mode & 0777);
      problem_ = folder_ + " is writable by group or others (mode " + mode + "); run chmod 700 on it";
    } else if (::access(folder_.c_str(), W_OK | X_OK) != 0) {
      problem_ = folder_ + " is not writable: " + std::strerror(errno);
    } else {
      usable_ = true;
      problem_.clear();
      return;
    }
  }
  log_once(LogLevel::warn, "kernel disk cache disabled: " + problem_ + " (kernels are compiled in every process)");
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
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Lookup::miss;  // absent, or a link (ELOOP): neither is used
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && read_all(fd, bytes, size);
  if (ok && owned_regular_file(st) && ::time(nullptr) - st.st_mtim.tv_sec > kTouchAfterSeconds) {
    // Touch the entry: least recently used eviction reads the modification time. Within a minute
    // of the last touch the order is close enough, and a hit then costs no write.
    ::futimens(fd, nullptr);
  }
  ::close(fd);
  auto remove_corrupt = [&] {
    ::unlink(file.c_str());
    return Lookup::corrupt_removed;
  };
  if (!ok || !owned_regular_file(st)) return remove_corrupt();
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
  if (!usable_) return false;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && owned_regular_file(st) && read_all(fd, bytes, size);
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
  if (!usable_) return out;
  const std::string file = folder_ + "/" + kRecentFile;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return out;
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && owned_regular_file(st) && st.st_size <= 65536 && read_all(fd, bytes, size);
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
  if (list == old) return false;
  std::string text = kRecentHeader;
  for (const auto& n : list) text += n + '\n';
  std::string tmpl = folder_ + "/" + kTemporaryPrefix + "recent-XXXXXX";
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write_all(fd, std::vector<char>(text.begin(), text.end())) && ::fchmod(fd, 0600) == 0;
  ::close(fd);
  if (!ok || ::rename(tmpl.c_str(), (folder_ + "/" + kRecentFile).c_str()) != 0) {
    ::unlink(tmpl.c_str());
    return false;
  }
  return true;
}

void DiskCache::touch(const std::string& file) const {
  if (!usable_ || file.empty()) return;
  ::utimensat(AT_FDCWD, file.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

std::string DiskCache::store(const std::string& key, const Hash128& key_hash, const std::vector<char>& payload) {
  if (!usable_) return {};
  const std::string file = file_for(key_hash);
  std::string tmpl = folder_ + "/.tmp-" + key_hash.hex() + "-XXXXXX";
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) {
    log_once(LogLevel::warn, "kernel disk cache: cannot write in " + folder_ + ": " + std::strerror(errno));
    return {};
  }
  const bool ok = write_all(fd, encode_cache_entry(key, payload)) && ::fchmod(fd, 0600) == 0;
  ::close(fd);
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
  DIR* d = ::opendir(folder_.c_str());
  if (d == nullptr) return;
  const std::time_t now = ::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(kTemporaryPrefix, 0) != 0) continue;
    const std::string path = folder_ + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtim.tv_sec > kStaleTemporarySeconds)
      ::unlink(path.c_str());
  }
  ::closedir(d);
}

std::vector<DiskCache::Entry> DiskCache::entries() const {
  std::vector<Entry> out;
  if (!usable_) return out;
  DIR* d = ::opendir(folder_.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, kSuffix) != 0 || name[0] == '.') continue;
    struct stat st {};
    const std::string path = folder_ + "/" + name;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back(Entry{path, static_cast<std::uint64_t>(st.st_size),
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

std::size_t DiskCache::clear() {
  std::size_t n = 0;
  for (const auto& e : entries()) n += ::unlink(e.file.c_str()) == 0 ? 1 : 0;
  if (usable_) {
    ::unlink((folder_ + "/" + kRecentFile).c_str());
    remove_stale_temporaries();
  }
  return n;
}

void DiskCache::evict() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!usable_) return;
  remove_stale_temporaries();
  auto all = entries();
  std::uint64_t total = 0;
  for (const auto& e : all) total += e.bytes;
  if (total <= max_bytes_) return;
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    return a.modified_ns != b.modified_ns ? a.modified_ns < b.modified_ns : a.file < b.file;
  });
  for (const auto& e : all) {
    if (total <= max_bytes_) break;
    // ENOENT: another process evicted it first; either way its bytes are gone.
    if (::unlink(e.file.c_str()) == 0 || errno == ENOENT) total -= e.bytes;
  }
}

}  // namespace xp::detail
