# The hash of xp's own source files, for a build to name the tree it came from (a copy without .git
# included). Run as a script at every build (cmake -P): ROOT is the source tree, OUT the C++ file to
# write, which is rewritten only when the hash changes.
#
# The files: CMakeLists.txt, CMakePresets.json, pyproject.toml and everything under cmake/,
# include/, src/, tools/, bench/ but bench/results/, and python/ but python/tests/ (the Python
# package's sources; Python's __pycache__ folders, which running a script writes, left out too). The hash: SHA-256 of "<path>\n<SHA-256 of the file>\n" for each
# file, sorted by path (bytes). scripts/source_hash.sh computes the same for any checkout.
cmake_minimum_required(VERSION 3.22)
set(files)
foreach(top CMakeLists.txt CMakePresets.json pyproject.toml)
  if(EXISTS "${ROOT}/${top}")
    list(APPEND files "${top}")
  endif()
endforeach()
foreach(dir cmake include src tools bench python)
  file(GLOB_RECURSE found LIST_DIRECTORIES false RELATIVE "${ROOT}" "${ROOT}/${dir}/*")
  foreach(f IN LISTS found)
    if(NOT f MATCHES "^bench/results/" AND NOT f MATCHES "^python/tests/" AND NOT f MATCHES "/__pycache__/")
      list(APPEND files "${f}")
    endif()
  endforeach()
endforeach()
list(SORT files COMPARE STRING)
set(material "")
foreach(f IN LISTS files)
  file(SHA256 "${ROOT}/${f}" h)
  string(APPEND material "${f}\n${h}\n")
endforeach()
string(SHA256 hash "${material}")
list(LENGTH files count)
set(text "// Written by cmake/source_hash.cmake at build time: the hash of ${count} source files.\n")
string(APPEND text "#include \"runtime/source_hash.hpp\"\n\n")
string(APPEND text "namespace xp::detail {\nconst char kSourceHash[] = \"${hash}\";\n}  // namespace xp::detail\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
