// The xp command line: doctor (and, as later work lands, bench, cache, compile).
#include <CLI/CLI.hpp>
#include <iostream>

#include "bench_launch.hpp"
#include "doctor.hpp"
#include "kernels.hpp"
#include "xp/xp.hpp"

int main(int argc, char** argv) {
  CLI::App app{"xp: NumPy-style arrays and run-time CUDA kernels, on the GPU when there is one"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(xp::version()));

  bool json = false;
  auto* doctor = app.add_subcommand("doctor", "Say what xp found (driver, NVRTC, GPUs) and how to fix what is wrong");
  doctor->add_flag("--json", json, "Print a stable JSON document (schema xp.doctor/1)");

  auto* version = app.add_subcommand("version", "Print xp's version");

  xp_cli::CompileArgs compile_args;
  auto* compile = app.add_subcommand("compile", "Compile a CUDA C++ file with NVRTC through xp's kernel caches");
  compile->add_option("file", compile_args.file, "The .cu file")->required();
  compile->add_option("--arch", compile_args.arch, "Target, e.g. sm_90 (default: the default GPU's)");
  compile->add_option("--kernel", compile_args.kernel, "Check that this kernel exists (and report its resources)");
  compile->add_flag("--ptx", compile_args.ptx, "PTX instead of a cubin");
  compile->add_option("nvrtc_options", compile_args.options, "NVRTC options, after --");
  compile->allow_extras(false);

  std::string cache_action;
  auto* cache = app.add_subcommand("cache", "The kernel disk cache: info, list or clear");
  cache->add_option("action", cache_action, "info | list | clear")
      ->required()
      ->check(CLI::IsMember({"info", "list", "clear"}));

  xp_cli::BenchLaunchArgs bench_args;
  auto* bench = app.add_subcommand("bench", "Benchmarks that measure xp against a baseline in the same run");
  bench->require_subcommand(1);
  auto* bench_launch = bench->add_subcommand(
      "launch", "vector_add through the raw driver API + NVRTC, xp (cold, warm, in-process) and nvcc");
  bench_launch->add_option("--n", bench_args.n, "Elements per buffer (default 2^27)")
      ->check(CLI::Range(1LL, 2147483647LL));
  bench_launch->add_option("--runs", bench_args.runs, "Runs of every row; medians are reported (default 5)")
      ->check(CLI::Range(1, 1000));
  bench_launch->add_option("--json", bench_args.json_file, "Also write everything to this JSON file");
  bench_launch->add_option("--kernel-file", bench_args.kernel_file, "bench/kernels/vector_add.cu (default: found)");
  bench_launch->add_option("--nvcc-exe", bench_args.nvcc_exe, "The nvcc-built baseline (default: found in the build)");
  // What the parent passes to its child processes; not for users.
  bench_launch->add_option("--row", bench_args.row)->group("");
  bench_launch->add_option("--label", bench_args.label)->group("");
  bench_launch->add_option("--driver", bench_args.driver_path)->group("");
  bench_launch->add_option("--nvrtc", bench_args.nvrtc_path)->group("");
  bench_launch->add_option("--nvrtc-include", bench_args.nvrtc_includes)->group("");
  bench_launch->add_option("--arch", bench_args.arch)->group("");
  bench_launch->add_option("--device", bench_args.device)->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*doctor) return xp_cli::doctor(json);
    if (*bench_launch) return xp_cli::bench_launch(bench_args);
    if (*compile) return xp_cli::compile(compile_args);
    if (*cache) return xp_cli::cache(cache_action);
    if (*version) {
      std::cout << xp::version() << "\n";
      return 0;
    }
  } catch (const xp::CompileError& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 1;
  } catch (const xp::ValueError& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 2;
  } catch (const xp::Error& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
