#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xp::detail {

// What a program's text pulls in through `#include`, as cache key material.
//
// NVRTC reads included files itself and cannot say which it opened, so xp follows the include
// directives the way NVRTC resolves them (checked against NVRTC 13):
//   - a name given as an in-memory header (ProgramOptions::headers) is that header, whatever the
//     folders hold; its own quoted includes start from the folder part of its name;
//   - `#include "x"` looks in the including file's folder first (for the program itself, the
//     folder part of its name, relative to the working folder), then in every -I folder;
//   - `#include <x>` looks in the -I folders only; xp's toolkit folders come before the user's;
//   - `--pre-include x` / `-include x` as a quoted include of the program.
// Every directive is followed, including those inside `#if 0` or comments-looking text that is
// not a comment: following more files than NVRTC reads only costs a recompile when they change.
// A file found in the toolkit's folders is keyed by the toolkit's version (already in the key),
// not read. A user file is keyed by its content. A place that was looked at and held nothing is in
// the key too, so that a file created later, which would shadow what was found, changes the key.
struct IncludeScan {
  std::string key;  // "file <path> <bytes> <hash>\n", "absent <path>\n", ... one line each
  bool cacheable = true;
  std::string why_not;    // when not cacheable: an include xp cannot follow
  std::size_t files = 0;  // user files read
};

struct IncludeScanInput {
  std::string_view source;
  std::string_view program_name;
  const std::vector<std::string>* options = nullptr;  // NVRTC options: -I, --include-path, --pre-include
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // in-memory (name, content)
  const std::vector<std::string>* toolkit_dirs = nullptr;                     // xp's own -I folders, given first
};

// Never throws for what it finds on disk: a file that cannot be read is key material too ("unreadable").
IncludeScan scan_includes(const IncludeScanInput& in);

// Caps on the scan: past them the program is not cached (compiled each time a process asks).
inline constexpr std::size_t kMaxIncludedFiles = 4096;
inline constexpr std::size_t kMaxIncludedFileBytes = std::size_t{64} << 20;

}  // namespace xp::detail
