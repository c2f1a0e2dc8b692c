#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "xp/program.hpp"

namespace xp::detail {

// A kernel of a program xp generates itself, found by a key that names everything its source
// depends on (the generator's key for it, the build ID of xp's code, the options, NVRTC's version
// and the target) rather than by the source, so that a process whose kernels are all in the disk
// cache never writes a source, hashes it or reads the toolkit headers (what a process's first
// kernel would otherwise pay). make_source is called on a miss only: the kernel is then compiled
// through xp::Program, with its own caches, and also stored under this key. Without a build ID
// every call goes through xp::Program.
Kernel generated_kernel(const std::string& generator_key, const std::function<std::string()>& make_source,
                        const ProgramOptions& options, std::string_view kernel_name, const Device& device);

// Another kernel of the module that k (a kernel generated_kernel gave) was found in: for a
// generated program of several kernels, found by the key of one of them (the others need no entry of
// their own in the caches). Throws ValueError when the module has no such kernel.
Kernel generated_sibling(const Kernel& k, std::string_view name, const ProgramOptions& options);

// Sets up once what the process's first generated_kernel lookup would otherwise set up on its way:
// the build ID, the chosen NVRTC and the disk cache's folder. The CUDA backend calls it when it is
// created for a device. Never throws: the same calls report a problem where a kernel is needed.
void prepare_generated_kernels(const Device& device) noexcept;

// What a preload of recently used kernels did on one device.
struct PreloadReport {
  bool ran = false;              // false: none ran for the device (XP_PRELOAD_KERNELS=0, or not yet)
  std::size_t entries_read = 0;  // entries of the recent list read whole, in its order
  std::size_t modules = 0;       // modules loaded onto the device
  std::size_t kernels = 0;       // generated kernels looked up in them, with their limits
  std::size_t failed = 0;        // entries whose module or kernel the driver refused (note: the last error)
  double ms = 0;
  std::string note;  // why it stopped early or did nothing, if it did
};

// The CUDA backend's start on a device: prepare_generated_kernels, then, on a thread of its own, the
// first XP_PRELOAD_KERNELS modules of the disk cache's recent list (DiskCache::recent: what the last
// processes used, first used first) that fit this xp, NVRTC and device loaded onto it, generated
// kernels looked up too, so that a process's first use of them reads no file and calls no driver
// function but the launch. A lookup that finds one notes and touches its entry then, as a disk hit
// does. At exit the thread is stopped and waited for, and the entries the process used are put
// ahead of the recent list (also with XP_PRELOAD_KERNELS=0). Never throws.
void start_kernel_preload(const Device& device) noexcept;
// Waits until no preload runs, and says what the last one on `device` did (for tests).
PreloadReport wait_for_kernel_preload(const Device& device);
// For tests: preloads started from now on pause this long once started, before they read anything
// (a slow thread, as on a busy machine).
void set_preload_delay_for_tests(int ms);

// The key material generated_kernel uses for a device of this architecture (sm number: 90); ""
// without a build ID. Exposed for tests.
std::string generated_key_material(const std::string& generator_key, const ProgramOptions& options,
                                   std::string_view kernel_name, int arch);

}  // namespace xp::detail
