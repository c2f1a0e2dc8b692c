// Sorting and searching (device/sort.cuh) with 4-byte keys and positions (XP_SORT_WIDE 0) or 8-byte
// ones (1): build.device_code compiles it with nvcc once with each -DXP_SORT_WIDE.
#include "../../src/backend/cuda/device/types.cuh"
#if XP_SORT_WIDE
typedef u64 K;
typedef u64 P;
#else
typedef u32 K;
typedef u32 P;
#endif
#define XP_SORT_ARGS 192
#include "../../src/backend/cuda/device/sort.cuh"
