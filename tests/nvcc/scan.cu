// The cumulative sums (device/scan.cuh), float32 (XP_SCAN_SERIAL 1) or int32 summed in u64 (0, the
// block scan): build.device_code compiles it with nvcc once with each -DXP_SCAN_SERIAL, and as the
// cumulative products (XP_SCAN_PROD 1, scan_prod.cu) likewise.
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
#if XP_SCAN_PROD
#define XP_SCAN_ID ((A)1)
#define XP_SCAN_OP(x, y) ((x) * (y))
#else
#define XP_SCAN_ID ((A)0)
#define XP_SCAN_OP(x, y) ((x) + (y))
#endif
#include "../../src/backend/cuda/device/scan.cuh"
