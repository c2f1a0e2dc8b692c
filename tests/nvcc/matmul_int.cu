// xp's integer matmul loop (device/matmul_int.cuh) for int32 (XP_MATMUL_LOGICAL 0) or bool (1):
// build.device_code compiles it with nvcc once with each -DXP_MATMUL_LOGICAL.
#include "../../src/backend/cuda/device/types.cuh"
#if XP_MATMUL_LOGICAL
typedef unsigned char S;
typedef unsigned char A;
#else
typedef int S;
typedef unsigned int A;
#endif
#include "../../src/backend/cuda/device/matmul_int.cuh"
