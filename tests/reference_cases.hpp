// The cases a reference script of tests/ref writes: cases.json (the cases, with offsets into the
// data) and data.bin (their inputs and NumPy's answers), read once per test process.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace xp_test {

struct ReferenceCases {
  TempDir dir;
  PythonReference ref;  // ref.missing or ref.error say why there are no cases
  nlohmann::json json;
  std::vector<char> data;
};

// Runs tests/ref/`script` with a folder of its own and reads what it wrote; the caller keeps the
// result for the process (a function-level static), as every test of a program reads the same cases.
inline ReferenceCases* load_reference_cases(const std::string& script) {
  auto* c = new ReferenceCases;
  c->ref = run_python_reference(script, {c->dir.path()});
  if (c->ref.missing || c->ref.error) return c;
  std::ifstream jf(c->dir / "cases.json");
  c->json = nlohmann::json::parse(jf, nullptr, /*allow_exceptions=*/false);
  std::ifstream df(c->dir / "data.bin", std::ios::binary | std::ios::ate);
  c->data.resize(static_cast<std::size_t>(df.tellg()));
  df.seekg(0);
  df.read(c->data.data(), static_cast<std::streamsize>(c->data.size()));
  if (c->json.is_discarded() || !df) c->ref.error = script + " wrote unreadable files";
  return c;
}

inline xp::Shape shape_of(const nlohmann::json& j) {
  xp::Shape s;
  for (const auto& d : j) s.push_back(d.get<std::int64_t>());
  return s;
}

inline std::int64_t count_of(const xp::Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

}  // namespace xp_test
