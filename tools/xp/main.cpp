// The xp command line: doctor (and, as later work lands, bench, cache, compile).
#include <CLI/CLI.hpp>
#include <iostream>

#include "doctor.hpp"
#include "xp/xp.hpp"

int main(int argc, char** argv) {
  CLI::App app{"xp: NumPy-style arrays and run-time CUDA kernels, on the GPU when there is one"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(xp::version()));

  bool json = false;
  auto* doctor = app.add_subcommand("doctor", "Say what xp found (driver, NVRTC, GPUs) and how to fix what is wrong");
  doctor->add_flag("--json", json, "Print a stable JSON document (schema xp.doctor/1)");

  auto* version = app.add_subcommand("version", "Print xp's version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*doctor) return xp_cli::doctor(json);
    if (*version) {
      std::cout << xp::version() << "\n";
      return 0;
    }
  } catch (const xp::Error& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
