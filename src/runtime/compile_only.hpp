#pragma once

#include <string>

namespace xp::detail {

// The compile-only GPU: a process-wide choice, made before anything in the process has looked for
// CUDA, after which the process sees one GPU of architecture `arch` (an sm number: 90) whatever the
// machine has. On it xp runs as on any GPU up to the driver: kernels are generated, compiled and
// stored in the kernel caches under the keys a real GPU of that architecture looks up, modules
// "load" and launches are accepted, and nothing runs (memory is host memory, so copies move real
// bytes; what a kernel would write is never written). `xp cache warm --arch` prepares a kernel
// cache this way on a machine without a GPU (docs/design.md, "Caches").
// Returns "" when chosen (again: the same architecture), else why not: CUDA was already looked for
// in this process, another architecture was chosen, or `arch` is not one.
std::string use_compile_only_gpu(int arch);

// The architecture chosen, 0 when none.
int compile_only_arch() noexcept;

}  // namespace xp::detail
