// The cumulative sums (device/scan.cuh), float32 (XP_SCAN_SERIAL 1) or int32 summed in u64 (0, the
// block scan): build.device_code compiles it with nvcc once with each -DXP_SCAN_SERIAL.
#include "../../src/backend/cuda/device/types.cuh"
#include "../../src/backend/cuda/device/half.cuh"
#include "../../src/backend/cuda/device/reduce_common.cuh"
#if XP_SCAN_SERIAL
typedef float S;
typedef float V;
typedef float A;
#else
typedef i32 S;
typedef i32 V;
typedef u64 A;
#endif
XP_D V xp_val(S s) { return s; }
XP_D void xp_put(u64 at, A v) { *(A*)at = v; }
#define XP_SCAN_ID ((A)0)  // a sum (cumulative_prod: ((A)1) and a product)
#define XP_SCAN_OP(x, y) ((x) + (y))
#include "../../src/backend/cuda/device/scan.cuh"
