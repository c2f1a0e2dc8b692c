// Python package folders (site_packages.hpp).
#include "runtime/site_packages.hpp"

#include <glob.h>

#include <algorithm>
#include <cstddef>

namespace xp::detail {

namespace {

// The minor version of the last "python3.N" in a path (-1 without one): the globbed folder's, not
// one that the prefix (a virtual environment's own name, say) happens to hold.
int python_minor(const std::string& path) {
  const std::size_t at = path.rfind("python3.");
  if (at == std::string::npos) return -1;
  int v = -1;
  for (std::size_t i = at + 8; i < path.size() && path[i] >= '0' && path[i] <= '9' && v < 1000; ++i)
    v = (v < 0 ? 0 : v * 10) + (path[i] - '0');
  return v;
}

// The folders that match `pattern` (one python3* in it), newest Python first: python3.12 before
// python3.9, which a plain string order would put the other way round.
std::vector<std::string> glob_dirs(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    const int va = python_minor(a), vb = python_minor(b);
    return va != vb ? va > vb : a > b;
  });
  return out;
}

// The entries of a colon-separated list, empty ones left out.
std::vector<std::string> split_paths(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    std::size_t e = s.find(':', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> venv_site_packages(const std::string& virtual_env) {
  if (virtual_env.empty()) return {};
  return glob_dirs(virtual_env + "/lib/python3*/site-packages");
}

std::vector<std::string> other_site_packages(const ForeignEnvironment& env) {
  std::vector<std::string> out;
  if (env.pythonpath) out = split_paths(*env.pythonpath);
  if (env.home && !env.home->empty())
    for (auto& d : glob_dirs(*env.home + "/.local/lib/python3*/site-packages")) out.push_back(std::move(d));
  for (auto& d : glob_dirs("/usr/local/lib/python3*/dist-packages")) out.push_back(std::move(d));
  out.emplace_back("/usr/lib/python3/dist-packages");
  return out;
}

}  // namespace xp::detail
