// The extra driver entry points of driver_ext.hpp, from the driver library driver.cpp opened.
#include "runtime/driver_ext.hpp"

#include <type_traits>

#include "runtime/driver.hpp"
#include "runtime/dynlib.hpp"

namespace xp::detail {

const DriverExtApi& driver_ext_api() {
  api_for_use();  // DeviceUnavailable when CUDA is not usable
  static const DriverExtApi table = [] {
    DriverExtApi t;
    // dlopen of the path the probe loaded returns that same, already loaded library.
    DynLib lib = DynLib::open(driver_probe().lib.path);
    auto get_proc =
        lib.ok() ? reinterpret_cast<cu::PFN_cuGetProcAddress_v2>(lib.symbol("cuGetProcAddress_v2")) : nullptr;
    if (get_proc != nullptr) {
      auto resolve = [&](const char* name, auto& slot) {
        cu::CUdriverProcAddressQueryResult status = cu::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        void* fn = nullptr;
        const cu::CUresult r = get_proc(name, &fn, cu::kAbiVersion, cu::CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
        // An absent symbol can come back as success with a null pointer: the pointer decides.
        if (r != cu::CUDA_SUCCESS || status != cu::CU_GET_PROC_ADDRESS_SUCCESS) fn = nullptr;
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
      };
      resolve("cuPointerGetAttribute", t.cuPointerGetAttribute);
      resolve("cuStreamWaitEvent", t.cuStreamWaitEvent);
      resolve("cuEventQuery", t.cuEventQuery);
    }
    lib.release();  // the driver stays loaded for the life of the process
    return t;
  }();
  return table;
}

}  // namespace xp::detail
