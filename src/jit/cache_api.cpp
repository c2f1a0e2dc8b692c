#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "jit/disk_cache.hpp"
#include "xp/cache.hpp"

namespace xp {

namespace {

// Reads "label LEN\nVALUE\n" fields from the start of an entry's key material.
void describe(KernelCacheEntry& e) {
  const int fd = ::open(e.file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  std::string head(4096, '\0');
  const ssize_t n = ::read(fd, head.data(), head.size());
  ::close(fd);
  if (n <= 0) return;
  head.resize(static_cast<size_t>(n));
  auto field = [&](const std::string& label) -> std::string {
    const auto at = head.find("\n" + label + " ");
    if (at == std::string::npos) return {};
    const auto nl = head.find('\n', at + 1);
    if (nl == std::string::npos) return {};
    const size_t len = std::strtoul(head.c_str() + at + label.size() + 2, nullptr, 10);
    return head.substr(nl + 1, std::min(len, head.size() - nl - 1));
  };
  e.program = field("name");
  e.target = field("target");
  e.nvrtc = field("nvrtc");
}

}  // namespace

KernelCacheInfo kernel_cache_info() {
  auto& c = detail::DiskCache::instance();
  KernelCacheInfo i;
  i.folder = c.folder();
  i.usable = c.usable();
  i.folder_exists = c.folder_exists();
  i.problem = c.problem();
  i.max_bytes = c.max_bytes();
  for (const auto& e : c.entries()) {
    i.bytes += e.bytes;
    ++i.entries;
  }
  i.recent = c.recent().size();
  return i;
}

std::vector<KernelCacheEntry> kernel_cache_entries() {
  auto all = detail::DiskCache::checked().entries();
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.modified_ns < b.modified_ns; });
  std::vector<KernelCacheEntry> out;
  for (const auto& e : all) {
    KernelCacheEntry k;
    k.file = e.file;
    k.bytes = e.bytes;
    k.last_used_unix_ns = e.modified_ns;
    describe(k);
    out.push_back(std::move(k));
  }
  return out;
}

std::size_t clear_kernel_cache(std::vector<std::string>* failed) {
  return detail::DiskCache::checked().clear(failed);
}

}  // namespace xp
