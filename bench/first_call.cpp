// The first c = a + b of a new process (public API only), the process's first kernel: with a warm
// disk cache that is the generated source, the cache lookup, the module load, the result's
// allocation, the launch and the kernel's run. Prints one line per process; run it several times
// (bench/results/2026-12-03-h200-first-call/ did 5 per mode, alternating two builds of libxp).
//   xp_bench_first_call [MODE] [N]   N float32 elements (default 1024); MODE:
//     plain        nothing before the clock but the device, its context and the two inputs
//     nvrtc-first  also xp::compiler_info() (NVRTC's set-up) before the clock
//     prealloc     also a block of the result's size allocated and freed into xp's cache
//     both         nvrtc-first and prealloc
//     device-inputs  the inputs made on the device (cuMemsetD8 of 0x3f bytes, wrapped through
//                  __cuda_array_interface__): no host copy before the clock, and so host caches as
//                  the device's set-up left them, where plain uploads 2 N floats through the host
//     host-copy    device-inputs, then 2 N floats copied on the host (memcpy) before the clock: the
//                  uploads' host traffic without their driver calls
// It also prints the time of the two inputs' uploads (to a synchronize; host-copy: with its memcpy),
// and what the first a + b cost the process besides time (getrusage): minor and major page faults,
// voluntary and involuntary context switches.
//   xp_bench_first_call MODE N PREFAULT   PREFAULT (optional): before the clock, the page tables of
//     the executable segments of libxp (xp), of the CUDA driver (cuda) or of both (all) are filled
//     (madvise MADV_POPULATE_READ, else one read per page): what the first call's page faults on
//     code cost, measured by taking them away.
// The line ends with XP_PRELOAD_KERNELS: with it above 0 (the default), the kernels of earlier
// processes are loaded on a thread of xp's own from the device's first use, here the uploads.
// The result is checked (1.5 + 1.5 = 3 everywhere, or twice the 0x3f3f3f3f float); a mismatch exits 1.
#include <link.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "xp/interop.hpp"
#include "xp/xp.hpp"

using Clock = std::chrono::steady_clock;

namespace {
double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Fills the page tables of the executable PT_LOAD segments of every loaded object whose file name
// contains one of `names`; returns the bytes covered.
std::size_t prefault_code(const std::vector<std::string>& names) {
  struct Ctx {
    const std::vector<std::string>* names;
    std::size_t bytes = 0;
  } ctx{&names};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& c = *static_cast<Ctx*>(data);
        const std::string file = info->dlpi_name != nullptr ? info->dlpi_name : "";
        bool wanted = false;
        for (const auto& n : *c.names) wanted = wanted || file.find(n) != std::string::npos;
        if (!wanted) return 0;
        const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          const std::uintptr_t begin = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
          const std::uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
          constexpr int kPopulateRead = 22;  // MADV_POPULATE_READ, Linux 5.14
          if (madvise(reinterpret_cast<void*>(begin), end - begin, kPopulateRead) != 0) {
            for (std::uintptr_t p = begin; p < end; p += page) (void)*reinterpret_cast<const volatile char*>(p);
          }
          c.bytes += end - begin;
        }
        return 0;
      },
      &ctx);
  return ctx.bytes;
}

struct Usage {
  long minflt, majflt, nvcsw, nivcsw;
};
Usage usage() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return {r.ru_minflt, r.ru_majflt, r.ru_nvcsw, r.ru_nivcsw};
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "plain";
  if (mode != "plain" && mode != "nvrtc-first" && mode != "prealloc" && mode != "both" && mode != "device-inputs" &&
      mode != "host-copy") {
    std::fprintf(stderr, "mode %s: expected plain, nvrtc-first, prealloc, both, device-inputs or host-copy\n",
                 mode.c_str());
    return 2;
  }
  const bool nvrtc_first = mode == "nvrtc-first" || mode == "both";
  const bool prealloc = mode == "prealloc" || mode == "both";
  const long n = argc > 2 ? std::atol(argv[2]) : 1024;
  if (n < 1) {
    std::fprintf(stderr, "N %s: expected a positive count\n", argv[2]);
    return 2;
  }
  const std::string prefault = argc > 3 ? argv[3] : "none";
  if (prefault != "none" && prefault != "xp" && prefault != "cuda" && prefault != "all") {
    std::fprintf(stderr, "PREFAULT %s: expected none, xp, cuda or all\n", prefault.c_str());
    return 2;
  }
  const auto t0 = Clock::now();
  const xp::Device dev = xp::default_device();
  const auto t_detect = Clock::now();
  if ((mode == "device-inputs" || mode == "host-copy") && !dev.is_cuda()) {
    std::fprintf(stderr, "%s needs a CUDA device; the default device is %s\n", mode.c_str(), dev.str().c_str());
    return 2;
  }
  dev.activate();
  const auto t1 = Clock::now();
  double setup_ms = 0;
  if (nvrtc_first) {
    const auto a = Clock::now();
    (void)xp::compiler_info();
    setup_ms = ms(a, Clock::now());
  }
  const bool device_inputs = mode == "device-inputs" || mode == "host-copy";
  constexpr float kHostValue = 1.5f;
  const float value = device_inputs ? std::bit_cast<float>(0x3f3f3f3fu) : kHostValue;
  // Host memory stays alive through the clock (freeing a GiB just before it would time the kernel's
  // unmapping work too).
  std::vector<float> h, copied;
  if (!device_inputs || mode == "host-copy") h.assign(static_cast<std::size_t>(n), kHostValue);
  const auto t_up = Clock::now();
  const auto input = [&] {
    if (!device_inputs) return xp::asarray(h, xp::Shape{n}, dev);
    auto buf = std::make_shared<xp::Buffer>(dev, static_cast<std::size_t>(n) * sizeof(float));
    buf->fill_bytes(0x3f);
    xp::CudaArrayInterface cai;
    cai.shape = xp::Shape{n};
    cai.typestr = "<f4";
    cai.data = static_cast<std::uintptr_t>(buf->address());
    return xp::from_cuda_array_interface(cai, buf, dev);
  };
  const xp::Array a = input(), b = input();
  if (mode == "host-copy") {  // the uploads' host traffic without the driver: 2 N floats copied
    copied.resize(2 * h.size());
    std::memcpy(copied.data(), h.data(), h.size() * sizeof(float));
    std::memcpy(copied.data() + h.size(), h.data(), h.size() * sizeof(float));
  }
  xp::synchronize(dev);
  const auto t_up_done = Clock::now();
  if (prealloc) {  // freed at the end of the scope into xp's cache: the result reuses the block
    const xp::Array r = xp::empty(xp::Shape{n}, xp::DType::float32, dev);
  }
  xp::synchronize(dev);
  std::size_t prefaulted = 0;
  const auto t_pf = Clock::now();
  if (prefault == "xp" || prefault == "all") prefaulted += prefault_code({"libxp.so"});
  if (prefault == "cuda" || prefault == "all") prefaulted += prefault_code({"libcuda.so"});
  const double prefault_ms = ms(t_pf, Clock::now());
  const Usage u0 = usage();
  const auto t2 = Clock::now();
  xp::Array c = a + b;
  c.eval();
  xp::synchronize(dev);
  const auto t3 = Clock::now();
  const Usage u1 = usage();
  xp::Array d = a * b;
  d.eval();
  xp::synchronize(dev);
  const auto t4 = Clock::now();
  const std::vector<float> got = c.to_vector<float>();
  long bad = -1;
  for (long i = 0; i < n && bad < 0; ++i)
    if (got[static_cast<std::size_t>(i)] != value + value) bad = i;
  std::printf(
      "%s n=%ld default_device %.1f ms, activate %.1f ms, compiler_info %.3f ms, uploads %.3f ms, first a+b %.3f ms, "
      "then first a*b %.3f ms (%s, %s); first a+b: %ld minor, %ld major faults, %ld voluntary, %ld involuntary "
      "switches; prefault %s %zu KiB in %.3f ms; XP_PRELOAD_KERNELS %zu; xp source %s\n",
      mode.c_str(), n, ms(t0, t_detect), ms(t_detect, t1), setup_ms, ms(t_up, t_up_done), ms(t2, t3), ms(t3, t4),
      dev.str().c_str(), bad < 0 ? "a + b checked" : "a + b WRONG", u1.minflt - u0.minflt, u1.majflt - u0.majflt,
      u1.nvcsw - u0.nvcsw, u1.nivcsw - u0.nivcsw, prefault.c_str(), prefaulted / 1024, prefault_ms,
      xp::config().preload_kernels, std::string(xp::source_hash()).c_str());
  return bad < 0 ? 0 : 1;
}
