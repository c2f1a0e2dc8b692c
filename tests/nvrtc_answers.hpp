// NVRTC's answers to the tests that compile every generated program, kept for the builds beside
// this one.
//
// Those tests (every reduction, every fused complex group, every codegen combination) ask NVRTC
// whether it takes a program, with which warnings and which kernels: the same questions in each build
// of a tree (release, then sanitize), several minutes of NVRTC each time. An answer is kept under
// <.venv>/xp-test-compiles/<key>, beside the NumPy references (test_util.hpp), the key a hash of
// everything NVRTC is given: the source, the program's name, options, headers, cubin or PTX, the
// architecture, and the NVRTC xp chose (its path and version) with the toolkit headers it passes.
// The program is still generated in every build (the code under test runs under each build's
// sanitizers); only NVRTC's work is skipped. A failed compile is never kept.
// XP_TEST_COMPILE_CACHE=0 compiles every program afresh.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/program.hpp"

namespace xp_test {

struct NvrtcAnswer {
  std::string log;                 // NVRTC's warnings
  std::vector<std::string> names;  // the kernels of the program
  bool kept = false;               // read from an earlier build's answer
};

namespace nvrtc_answers {

inline std::string key(const std::string& source, const xp::ProgramOptions& o, xp::Arch arch) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  using reference_cache::fnv;
  fnv(h, "xp-test-compile-1");
  const xp::CompilerInfo c = xp::compiler_info();
  fnv(h, c.nvrtc_path);
  fnv(h, c.nvrtc_version);
  fnv(h, c.toolkit_headers_version);
  for (const std::string& d : c.include_dirs) fnv(h, d);
  fnv(h, source);
  fnv(h, o.name);
  for (const std::string& s : o.options) fnv(h, s);
  fnv(h, "<names>");
  for (const std::string& s : o.name_expressions) fnv(h, s);
  fnv(h, "<headers>");
  for (const auto& [name, text] : o.headers) {
    fnv(h, name);
    fnv(h, text);
  }
  fnv(h, o.ptx ? "ptx" : "cubin");
  fnv(h, arch.str());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace nvrtc_answers

// Compiles `source` for `arch` (throwing what Program::compile throws), or reads the answer an
// earlier build kept for the same question.
inline NvrtcAnswer nvrtc_answer(const std::string& source, const xp::ProgramOptions& options, xp::Arch arch) {
  namespace fs = std::filesystem;
  const char* keep = std::getenv("XP_TEST_COMPILE_CACHE");
  const bool cached = keep == nullptr || std::string(keep) != "0";
  const fs::path entry =
      reference_cache::venv(XP_TEST_PYTHON) / "xp-test-compiles" / nvrtc_answers::key(source, options, arch);
  std::error_code ec;
  if (cached && fs::is_regular_file(entry, ec)) {
    // The kernel names, one a line, then a line "--log--" and NVRTC's log.
    std::ifstream f(entry, std::ios::binary);
    NvrtcAnswer a;
    a.kept = true;
    std::string line;
    bool log = false;
    while (std::getline(f, line)) {
      if (!log && line == "--log--") {
        log = true;
      } else if (log) {
        a.log += line + "\n";
      } else {
        a.names.push_back(line);
      }
    }
    if (log) return a;  // else a torn entry: compile again
  }
  xp::Program prog(source, options);
  NvrtcAnswer a;
  a.log = prog.compile(arch).log;
  a.names = prog.kernel_names(arch);
  if (cached) {
    fs::create_directories(entry.parent_path(), ec);
    // Written beside the entry, then renamed into place (threads of one process too: their tids).
    const fs::path tmp = entry.string() + ".tmp-" + std::to_string(::gettid());
    std::ofstream f(tmp, std::ios::binary);
    for (const std::string& n : a.names) f << n << "\n";
    f << "--log--\n" << a.log;
    f.close();
    if (!f.good() || std::rename(tmp.c_str(), entry.c_str()) != 0) fs::remove(tmp, ec);
  }
  return a;
}

}  // namespace xp_test
