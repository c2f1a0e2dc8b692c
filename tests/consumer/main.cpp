// Uses an installed xp through find_package(xp): prints the library's version and whether CUDA is
// usable here (either answer is fine; what matters is that it links, loads and runs).
#include <iostream>
#include <xp/xp.hpp>

int main() {
  std::cout << "xp " << xp::version() << "\n";
  const xp::CudaStatus status = xp::cuda_status();
  std::cout << "cuda: " << xp::to_string(status.reason);
  if (!status.detail.empty()) std::cout << " (" << status.detail << ")";
  std::cout << "\n";
  return 0;
}
