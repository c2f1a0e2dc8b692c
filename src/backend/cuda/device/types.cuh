// xp's device code: the types every generated kernel starts with.
//
// The files of this folder are CUDA C++ that xp pastes, in order, into the source it gives NVRTC
// (CMake embeds them: xp_embed_text in cmake/embed_text.cmake); none of them names another, so a
// kernel's source is one self-contained translation unit. Each says what must come before it.
// tests/nvcc/ compiles them with nvcc where the toolkit is installed (the `nvcc.device_code` test),
// and the timing programs of bench/nvcc use them as they are.
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
#define XP_D __device__ __forceinline__
