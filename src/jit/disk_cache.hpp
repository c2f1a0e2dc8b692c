#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/hash.hpp"
#include "xp/error.hpp"

namespace xp::detail {

// Compiled kernels on disk, one file per entry, named by a 128-bit hash of the key material.
// An entry stores the whole key material and is used only when it matches byte for byte; its
// payload carries a checksum. Entries are written to a temporary file and renamed into place, so
// readers never see half an entry and concurrent writers of one key all succeed. The folder must
// be the user's own and not writable by others (a cubin is code); links are not followed. Only a
// store creates a missing folder. The folder may hold other programs' files: xp reads, replaces and
// removes only files whose name is an entry's (32 lowercase hex digits and .xpk) and whose bytes
// begin with an entry's magic, and temporary files of its own name pattern and header.
class DiskCache {
 public:
  // The largest entry read or stored. A cubin of even a very large program is a few MiB; an entry
  // claiming more than this is damaged or not xp's (a sparse file of terabytes costs no disk), and
  // allocating its claimed size would end the process with std::bad_alloc: it is treated as corrupt
  // (a load removes it and the kernel is compiled again) and the preload skips it.
  static constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{256} << 20;

  struct Entry {
    std::string file;  // full path
    std::uint64_t bytes = 0;
    std::int64_t modified_ns = 0;  // last use: entries are touched on every hit
  };
  enum class Lookup { hit, miss, corrupt_removed, foreign, disabled };

  // A cap of 0 keeps nothing: the cache is then disabled, without a warning (the user's choice).
  DiskCache(std::string folder, std::uint64_t max_bytes);
  // The process-wide cache at XP_CACHE_DIR (or its default), capped by XP_CACHE_MAX_BYTES. With a
  // malformed XP_* variable it is disabled, its problem the ConfigError's text, and never throws.
  static DiskCache& instance();
  // The same, for the paths that compile, store or remove: a malformed variable is the ConfigError
  // (as for every other xp call that reads the configuration), never a silently disabled cache.
  static DiskCache& checked();

  bool usable() const { return usable_; }
  const std::string& folder() const { return folder_; }
  std::uint64_t max_bytes() const { return max_bytes_; }
  // Whether the folder exists now (a usable cache's folder may not yet: the first store makes it).
  bool folder_exists() const { return usable_ && have_folder(false); }
  // Why the cache is disabled (empty when usable).
  const std::string& problem() const { return problem_; }

  Lookup load(const std::string& key, std::vector<char>& payload, std::string* file = nullptr) {
    return load(key, hash128(key), payload, file);
  }
  // The same with the key's hash128 already at hand (Program has it for its memory cache).
  Lookup load(const std::string& key, const Hash128& key_hash, std::vector<char>& payload, std::string* file = nullptr);
  // Returns the entry's path, or empty when the cache is not usable or the write failed.
  std::string store(const std::string& key, const std::vector<char>& payload) {
    return store(key, hash128(key), payload);
  }
  std::string store(const std::string& key, const Hash128& key_hash, const std::vector<char>& payload);

  // One entry's key material and payload, read from its file without knowing its key: false when
  // the file is missing, not a whole entry, or not the user's own regular file. Nothing is removed
  // or touched (the preload of recently used kernels reads entries it may never use).
  bool read_entry(const std::string& file, std::string& key, std::vector<char>& payload,
                  std::int64_t* modified_ns = nullptr) const;
  // Marks an entry as used now, for least recently used eviction (a kernel read before its use).
  void touch(const std::string& file) const;

  // The recent list (the file .recent in the folder): the names of the entries (file_for's, 32 hex
  // digits without the suffix) that the last processes used, first used first, at most
  // kRecentNames. The preload of recently used kernels reads it instead of listing the folder.
  static constexpr std::size_t kRecentNames = 64;
  std::vector<std::string> recent() const;
  // Puts `used` (names, first used first) ahead of the recent list, keeps kRecentNames, and writes
  // the list back only when that changes it (a temporary file renamed into place, as an entry).
  // Returns whether it wrote.
  bool remember(const std::vector<std::string>& used);
  std::string file_of_name(const std::string& name) const;

  std::string file_for(const std::string& key) const { return file_for(hash128(key)); }
  std::string file_for(const Hash128& key_hash) const;
  std::vector<Entry> entries() const;
  std::uint64_t total_bytes() const;
  // Removes every entry, the recent list, and the temporary files of writers that died (older than a minute): the
  // number of entries removed. An entry that another process removes meanwhile is not a failure, nor
  // is one stored after the listing counted; `failed` gets "file: reason" for each entry that could
  // not be removed.
  std::size_t clear(std::vector<std::string>* failed = nullptr);
  // Removes least recently used entries until the total is at most max_bytes (an entry another
  // process removed first counts as removed), and the temporary files of writers that died.
  // The files named as entries, regular ones, without reading them (entries() reads each one's
  // first bytes): eviction checks only those it is about to remove.
  std::vector<Entry> entries_by_name() const;
  void evict();

 private:
  void open_folder();
  // Whether the folder is there and fit for use (checked as the constructor checks it); with
  // `create`, a missing folder is made first (0700 at every missing level).
  bool have_folder(bool create) const;
  std::string temporary_template(const std::string& name) const;
  void remove_stale_temporaries() const;
  std::string folder_;
  std::uint64_t max_bytes_;
  bool usable_ = false;
  mutable std::atomic<bool> folder_exists_{false};
  std::string problem_;
  std::optional<ConfigError> config_error_;
  std::mutex mutex_;
};

// Serializes one entry (exposed for tests that plant damaged or foreign entries).
std::vector<char> encode_cache_entry(const std::string& key, const std::vector<char>& payload);

}  // namespace xp::detail
