// Following a program's #include directives for its cache key (see includes.hpp).
#include "jit/includes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "jit/hash.hpp"

namespace xp::detail {

namespace {

struct Directive {
  std::string name;
  bool angled = false;
  bool presence_only = false;  // __has_include: whether it exists decides, its content does not
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

// The include directives of one file's text, in order, and whether one names its file through a
// macro (which xp cannot follow). Comments are removed and continued lines joined, as the
// preprocessor does before it reads directives; string literals keep their text.
struct Directives {
  std::vector<Directive> list;
  std::string macro_include;  // the first such directive, as written
};

// `text` from `pos`: "..." or <...> after optional blanks; false when neither.
bool header_name(std::string_view text, std::size_t pos, Directive& d) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  if (pos >= text.size()) return false;
  const char open = text[pos];
  if (open != '"' && open != '<') return false;
  const char close = open == '"' ? '"' : '>';
  const std::size_t end = text.find(close, pos + 1);
  if (end == std::string_view::npos || end == pos + 1) return false;
  d.name = std::string(text.substr(pos + 1, end - pos - 1));
  d.angled = open == '<';
  return true;
}

void read_line(std::string_view line, Directives& out) {
  std::size_t p = 0;
  while (p < line.size() && is_space(line[p])) ++p;
  if (p >= line.size() || line[p] != '#') return;
  ++p;
  while (p < line.size() && is_space(line[p])) ++p;
  std::size_t q = p;
  while (q < line.size() && (std::isalnum(static_cast<unsigned char>(line[q])) || line[q] == '_')) ++q;
  const std::string_view word = line.substr(p, q - p);
  if (word == "include" || word == "include_next" || word == "import") {
    Directive d;
    if (header_name(line, q, d)) {
      out.list.push_back(std::move(d));
    } else {
      std::size_t r = q;
      while (r < line.size() && is_space(line[r])) ++r;
      if (r < line.size() && out.macro_include.empty()) out.macro_include = std::string(line);
    }
    return;
  }
  // __has_include("x") / __has_include(<x>) in #if and #elif lines
  for (std::size_t at = line.find("__has_include", q); at != std::string_view::npos;
       at = line.find("__has_include", at + 1)) {
    std::size_t r = at + std::strlen("__has_include");
    if (line.substr(r, 5) == "_next") r += 5;
    while (r < line.size() && is_space(line[r])) ++r;
    if (r >= line.size() || line[r] != '(') continue;
    Directive d;
    d.presence_only = true;
    if (header_name(line, r + 1, d)) out.list.push_back(std::move(d));
  }
}

Directives directives_of(std::string_view text) {
  Directives out;
  std::string line;
  bool in_comment = false;  // inside /* */, which may span lines
  bool in_string = false;   // inside "..." (ends at the line's end at the latest)
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      if (!line.empty() && line.back() == '\\') {  // a continued line
        line.pop_back();
        continue;
      }
      read_line(line, out);
      line.clear();
      in_string = false;
      continue;
    }
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (in_comment) {
      if (c == '*' && next == '/') {
        in_comment = false;
        ++i;
        line += ' ';
      }
      continue;
    }
    if (in_string) {
      line += c;
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '/' && next == '*') {
      in_comment = true;
      ++i;
      continue;
    }
    if (c == '/' && next == '/') {  // to the end of the line (a continued comment line too)
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;  // the newline: the next line continues the comment; drop it as well
        while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      }
      continue;
    }
    if (c == '"') in_string = true;
    line += c;
  }
  return out;
}

std::string folder_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// The -I folders and pre-included names of NVRTC's options, in order.
void parse_options(const std::vector<std::string>* options, std::vector<std::string>& dirs,
                   std::vector<std::string>& pre) {
  if (options == nullptr) return;
  const auto& o = *options;
  for (std::size_t i = 0; i < o.size(); ++i) {
    const std::string& a = o[i];
    auto value = [&](std::string_view flag, std::vector<std::string>& into) {
      if (a == flag) {
        if (i + 1 < o.size()) into.push_back(o[++i]);
        return true;
      }
      if (a.size() > flag.size() && a.compare(0, flag.size(), flag) == 0 && a[flag.size()] == '=') {
        into.push_back(a.substr(flag.size() + 1));
        return true;
      }
      return false;
    };
    if (value("--include-path", dirs) || value("--pre-include", pre) || value("-include", pre)) continue;
    if (a.size() > 2 && a.compare(0, 2, "-I") == 0) {
      dirs.push_back(a.substr(a[2] == '=' ? 3 : 2));
    } else if (a == "-I" && i + 1 < o.size()) {
      dirs.push_back(o[++i]);
    }
  }
}

class Scanner {
 public:
  explicit Scanner(const IncludeScanInput& in) : in_(in) { parse_options(in.options, user_dirs_, pre_includes_); }

  IncludeScan run() {
    for (const std::string& p : pre_includes_) follow(Directive{p, false, false}, std::string());
    queue_.push_back({in_.source, folder_of(in_.program_name)});
    while (!queue_.empty() && out_.cacheable) {
      Item item = std::move(queue_.front());
      queue_.pop_front();
      const Directives ds = directives_of(item.text);
      if (!ds.macro_include.empty()) {
        not_cacheable("an include names its file through a macro, which xp cannot follow: " + ds.macro_include);
        break;
      }
      for (const Directive& d : ds.list) {
        follow(d, item.folder);
        if (!out_.cacheable) break;
      }
    }
    if (!out_.cacheable) out_.key.clear();
    return std::move(out_);
  }

 private:
  struct Item {
    std::string_view text;  // into texts_ or the caller's strings
    std::string folder;     // where its quoted includes look first ("" for the working folder)
  };

  void note(const std::string& line) {
    if (emitted_.insert(line).second) {
      out_.key += line;
      out_.key += '\n';
    }
  }
  void not_cacheable(std::string why) {
    if (out_.cacheable) {
      out_.cacheable = false;
      out_.why_not = std::move(why);
    }
  }

  void follow(const Directive& d, const std::string& folder) {
    if (in_.headers != nullptr) {
      for (const auto& [name, content] : *in_.headers) {
        if (name != d.name) continue;
        // Its content is key material already; its own includes are followed once.
        if (!d.presence_only && memory_seen_.insert(name).second) queue_.push_back({content, folder_of(name)});
        return;
      }
    }
    std::vector<std::pair<std::string, bool>> places;  // path, in the toolkit's folders
    if (!d.name.empty() && d.name.front() == '/') {
      places.emplace_back(d.name, false);
    } else {
      if (!d.angled) places.emplace_back(join(folder, d.name), false);
      if (in_.toolkit_dirs != nullptr)
        for (const auto& t : *in_.toolkit_dirs) places.emplace_back(join(t, d.name), true);
      for (const auto& u : user_dirs_) places.emplace_back(join(u, d.name), false);
    }
    for (const auto& [path, toolkit] : places) {
      if (look(path, toolkit, d.presence_only)) return;
      if (!out_.cacheable) return;
    }
  }

  // Whether `path` ends the search for an include; its state goes into the key either way.
  bool look(const std::string& path, bool toolkit, bool presence_only) {
    // A path met before ends the search as it did then; its state is in the key already. (A
    // presence test reads nothing: a later #include of the same path still reads the file.)
    const auto key = std::make_pair(path, presence_only);
    if (const auto it = looked_.find(key); it != looked_.end()) return it->second;
    const bool ends = look_first(path, toolkit, presence_only);
    looked_.emplace(key, ends);
    return ends;
  }

  bool look_first(const std::string& path, bool toolkit, bool presence_only) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      const int e = errno;
      if (e == ENOENT || e == ENOTDIR) {
        note("absent " + path);
        return false;
      }
      if (e == EISDIR) {
        note("folder " + path);
        return false;
      }
      note("unreadable " + path + " " + std::strerror(e));
      return true;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      note("unreadable " + path + " " + std::strerror(errno));
      ::close(fd);
      return true;
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      note("folder " + path);
      return false;
    }
    if (toolkit) {  // keyed by the toolkit's version
      ::close(fd);
      note("toolkit " + path);
      return true;
    }
    if (presence_only) {
      ::close(fd);
      note("present " + path);
      return true;
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      not_cacheable(path + " is not a regular file");
      return true;
    }
    if (static_cast<std::uint64_t>(st.st_size) > kMaxIncludedFileBytes) {
      ::close(fd);
      not_cacheable(path + " is larger than " + std::to_string(kMaxIncludedFileBytes >> 20) + " MiB");
      return true;
    }
    if (out_.files >= kMaxIncludedFiles) {
      ::close(fd);
      not_cacheable("more than " + std::to_string(kMaxIncludedFiles) + " included files");
      return true;
    }
    // Read to the end (the size may change while reading), never past the cap.
    std::string text;
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    for (;;) {
      if (got == text.size()) {
        if (text.size() >= kMaxIncludedFileBytes) break;
        text.resize(std::min(kMaxIncludedFileBytes, text.size() + 4096));
      }
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        ::close(fd);
        note("unreadable " + path + " " + std::strerror(e));
        return true;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (got >= kMaxIncludedFileBytes) {
      not_cacheable(path + " is larger than " + std::to_string(kMaxIncludedFileBytes >> 20) + " MiB");
      return true;
    }
    text.resize(got);
    ++out_.files;
    note("file " + path + " " + std::to_string(got) + " " + hash128(text).hex());
    // A file met again (through another directive, a link) is followed again only from another
    // folder, where its quoted includes may find other files.
    if (visited_.insert({st.st_dev, st.st_ino, folder_of(path)}).second) {
      texts_.push_back(std::move(text));
      queue_.push_back({texts_.back(), folder_of(path)});
    }
    return true;
  }

  const IncludeScanInput& in_;
  std::vector<std::string> user_dirs_, pre_includes_;
  IncludeScan out_;
  std::set<std::string> emitted_, memory_seen_;
  std::map<std::pair<std::string, bool>, bool> looked_;
  std::set<std::tuple<dev_t, ino_t, std::string>> visited_;
  std::deque<std::string> texts_;  // stable addresses: the queue points into it
  std::deque<Item> queue_;
};

}  // namespace

IncludeScan scan_includes(const IncludeScanInput& in) {
  return Scanner(in).run();
}

}  // namespace xp::detail
