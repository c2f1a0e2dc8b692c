// The gather kernel of take (device/take.cuh) for 4-byte elements: build.device_code compiles it with nvcc.
#include "../../src/backend/cuda/device/types.cuh"
typedef unsigned int E;
#define XP_TAKE_DIMS 8
#define XP_TAKE_BLOCK 256
#define XP_TAKE_ARGS 304
#include "../../src/backend/cuda/device/take.cuh"
