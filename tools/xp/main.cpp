// The xp command line: doctor, bench, cache, compile, version.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "bench_launch.hpp"
#include "doctor.hpp"
#include "kernels.hpp"
#include "xp/xp.hpp"

namespace {

// A command that needs a subcommand and got none: CLI11 says "A subcommand is required" whether
// the word was missing or unknown. Says which instead: `xp` (or `xp bench`) alone prints its help,
// an unknown word is named with the commands there are. Returns the exit code, or -1 when `e` is
// some other usage error.
int no_subcommand(CLI::App& app) {
  CLI::App* at = &app;
  std::string path = app.get_name();
  while (!at->get_subcommands().empty()) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  if (at->get_require_subcommand_min() == 0 || !at->get_subcommands().empty()) return -1;
  const std::vector<std::string> rest = at->remaining();
  if (rest.empty()) {
    std::cout << app.help();  // the root delegates to the selected subcommand, named from the root
    return 2;
  }
  std::string commands;
  for (const CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; }))
    commands += (commands.empty() ? "" : ", ") + sub->get_name();
  const bool option = rest[0].size() > 1 && rest[0][0] == '-';
  std::cerr << path << ": unknown " << (option ? "option" : "command") << " '" << rest[0] << "'; the commands are "
            << commands << " (" << path << " --help says what each does)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Named here: CLI11 would otherwise take argv[0], the path the binary was started by, for
  // `Usage:` lines.
  CLI::App app{"xp: NumPy-style arrays and run-time CUDA kernels, on the GPU when there is one", "xp"};
  app.require_subcommand(1);
  // The version and the hash of the source tree it was built from (scripts/source_hash.sh prints
  // the same for a checkout).
  const std::string version_line = std::string(xp::version()) + " (source " + std::string(xp::source_hash()) + ")";
  app.set_version_flag("--version", version_line);

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

  std::string cache_action, cache_arch;
  auto* cache = app.add_subcommand(
      "cache",
      "The kernel disk cache: info, list, clear, or warm (compile the common array kernels for the local GPU, or "
      "with --arch for a GPU this machine need not have)");
  cache->add_option("action", cache_action, "info | list | clear | warm")
      ->required()
      ->check(CLI::IsMember({"info", "list", "clear", "warm"}));
  cache->add_option("--arch", cache_arch,
                    "warm only: compile for this architecture (sm_90, ...) without using a GPU; the entries are the "
                    "ones a GPU of that architecture looks up");

  xp_cli::BenchLaunchArgs bench_args;
  auto* bench = app.add_subcommand("bench", "Benchmarks that measure xp against a baseline in the same run");
  bench->require_subcommand(1);
  auto* bench_launch = bench->add_subcommand(
      "launch",
      "vector_add and a*b+c through the raw driver API, xp, nvcc, CuPy, cuda.core, Numba, PyCUDA and PyTorch, "
      "sum of 2^28 float32 and 8192^3 matmul (float32, float16, float32 with TF32) in xp, CuPy and PyTorch (without a "
      "GPU: xp on the CPU against NumPy and numexpr), each row in two fresh processes");
  auto* bench_sweep = bench->add_subcommand(
      "sweep",
      "Every elementwise row of `bench launch` at n = 2^10 .. 2^28: JSON, CSV and an SVG plot of time and GB/s "
      "against n");
  for (auto* sub : {bench_launch, bench_sweep}) {
    sub->add_option("--json", bench_args.json_file, "Also write everything to this JSON file");
    sub->add_option("--md", bench_args.md_file, "Also write the tables to this Markdown file");
    sub->add_option("--kernel-file", bench_args.kernel_file, "bench/kernels/vector_add.cu (default: found)");
    sub->add_option("--nvcc-exe", bench_args.nvcc_exe, "The nvcc-built baseline (default: found in the build)");
    sub->add_option("--python", bench_args.python,
                    "The Python that runs the Python rows (default python3; none: no Python rows)");
    sub->add_option("--python-rows", bench_args.python_rows, "bench/python/launch_rows.py (default: found)");
    sub->add_option("--only", bench_args.only, "Only these rows (comma-separated ids, as in the JSON)");
    sub->add_flag("--cpu", bench_args.cpu, "The CPU rows, even where a GPU is usable");
  }
  bench_launch->add_option("--n", bench_args.n, "Elements per buffer (default 2^27 on a GPU, 2^24 on the CPU)")
      ->check(CLI::Range(1LL, 2147483647LL));
  bench_launch->add_option("--runs", bench_args.runs, "Runs of every row; medians are reported (default 5)")
      ->check(CLI::Range(1, 1000));
  bench_sweep->add_option("--min-log2", bench_args.min_log2, "Smallest n = 2^this (default 10)")
      ->check(CLI::Range(0, 30));
  bench_sweep->add_option("--max-log2", bench_args.max_log2, "Largest n = 2^this, capped by free memory (default 28)")
      ->check(CLI::Range(0, 30));
  bench_sweep->add_option("--csv", bench_args.csv_file, "Write the points to this CSV file");
  bench_sweep->add_option("--svg", bench_args.svg_file, "Write the plot to this SVG file");
  // What the parent passes to its child processes; not for users.
  bench_launch->add_option("--row", bench_args.row)->group("");
  bench_launch->add_option("--label", bench_args.label)->group("");
  bench_launch->add_option("--sizes", bench_args.sizes)->group("");
  bench_launch->add_option("--on", bench_args.on)->group("");
  bench_launch->add_option("--driver", bench_args.driver_path)->group("");
  bench_launch->add_option("--nvrtc", bench_args.nvrtc_path)->group("");
  bench_launch->add_option("--nvrtc-include", bench_args.nvrtc_includes)->group("");
  bench_launch->add_option("--arch", bench_args.arch)->group("");
  bench_launch->add_option("--device", bench_args.device)->group("");
  bench_launch->add_option("--cubin-dir", bench_args.cubin_dir)->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      if (const int code = no_subcommand(app); code >= 0) return code;
    }
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*doctor) return xp_cli::doctor(json);
    // Every other command acts on the configuration: a malformed XP_* variable stops it (exit 2),
    // where the doctor reports it.
    if (!*version) (void)xp::config();
    if (*bench_launch) return xp_cli::bench_launch(bench_args);
    if (*bench_sweep) return xp_cli::bench_sweep(bench_args);
    if (*compile) return xp_cli::compile(compile_args);
    if (*cache) return xp_cli::cache(cache_action, cache_arch);
    if (*version) {
      std::cout << version_line << "\n";
      return 0;
    }
  } catch (const xp::CompileError& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 1;
  } catch (const xp::ConfigError& e) {
    std::cerr << "xp: " << e.what() << " (xp doctor shows every variable)\n";
    return 2;
  } catch (const xp::ValueError& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 2;
  } catch (const xp::Error& e) {
    std::cerr << "xp: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
