// A fake cuFFT for tests on the fake driver's hollow devices (XP_CUFFT points at it): the entry
// points xp resolves, recording plans and transforms and computing nothing. Reports cuFFT 12.0.0
// (CUDA 13); every plan needs a work area of 1 MiB. For the tests: xp_fake_cufft_count(what) with
// what "create", "destroy", "exec", "auto_allocation_on"; xp_fake_cufft_last_plan(i) (the last
// cufftMakePlanMany64's n, idist, odist, type, batch, istride, ostride); xp_fake_cufft_last_exec(i)
// (0: the direction, 1: the plan); xp_fake_cufft_stream(), xp_fake_cufft_work_area(),
// xp_fake_cufft_exec_in(), xp_fake_cufft_exec_out().
#include <atomic>
#include <cstddef>
#include <cstring>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {
std::atomic<long> g_create{0}, g_destroy{0}, g_exec{0}, g_auto_on{0};
std::atomic<long long> g_plan[7] = {};
std::atomic<long long> g_exec_args[2] = {};
std::atomic<void*> g_stream{nullptr}, g_work{nullptr}, g_in{nullptr}, g_out{nullptr};

int exec(int plan, void* in, void* out, int direction) {
  ++g_exec;
  g_exec_args[0] = direction;
  g_exec_args[1] = plan;
  g_in = in;
  g_out = out;
  return 0;
}
}  // namespace

FAKE_API int cufftGetVersion(int* v) {
  *v = 12000;
  return 0;
}
FAKE_API int cufftCreate(int* plan) {
  *plan = static_cast<int>(++g_create);
  return 0;
}
FAKE_API int cufftDestroy(int) {
  ++g_destroy;
  return 0;
}
FAKE_API int cufftSetAutoAllocation(int, int on) {
  if (on != 0) ++g_auto_on;
  return 0;
}
FAKE_API int cufftMakePlanMany64(int, int rank, long long* n, long long*, long long istride, long long idist,
                                 long long*, long long ostride, long long odist, int type, long long batch,
                                 std::size_t* work) {
  if (rank != 1) return 4;  // CUFFT_INVALID_VALUE
  g_plan[0] = n[0];
  g_plan[1] = idist;
  g_plan[2] = odist;
  g_plan[3] = type;
  g_plan[4] = batch;
  g_plan[5] = istride;
  g_plan[6] = ostride;
  *work = std::size_t{1} << 20;
  return 0;
}
FAKE_API int cufftSetStream(int, void* s) {
  g_stream = s;
  return 0;
}
FAKE_API int cufftSetWorkArea(int, void* w) {
  g_work = w;
  return 0;
}
FAKE_API int cufftExecC2C(int p, void* i, void* o, int d) {
  return exec(p, i, o, d);
}
FAKE_API int cufftExecZ2Z(int p, void* i, void* o, int d) {
  return exec(p, i, o, d);
}
FAKE_API int cufftExecR2C(int p, void* i, void* o) {
  return exec(p, i, o, -1);
}
FAKE_API int cufftExecD2Z(int p, void* i, void* o) {
  return exec(p, i, o, -1);
}
FAKE_API int cufftExecC2R(int p, void* i, void* o) {
  return exec(p, i, o, 1);
}
FAKE_API int cufftExecZ2D(int p, void* i, void* o) {
  return exec(p, i, o, 1);
}

FAKE_API long xp_fake_cufft_count(const char* what) {
  if (std::strcmp(what, "create") == 0) return g_create;
  if (std::strcmp(what, "destroy") == 0) return g_destroy;
  if (std::strcmp(what, "exec") == 0) return g_exec;
  if (std::strcmp(what, "auto_allocation_on") == 0) return g_auto_on;
  return -1;
}
FAKE_API long long xp_fake_cufft_last_plan(int i) {
  return i >= 0 && i < 7 ? g_plan[i].load() : -1;
}
FAKE_API long long xp_fake_cufft_last_exec(int i) {
  return i >= 0 && i < 2 ? g_exec_args[i].load() : -1;
}
FAKE_API void* xp_fake_cufft_stream() {
  return g_stream;
}
FAKE_API void* xp_fake_cufft_work_area() {
  return g_work;
}
FAKE_API void* xp_fake_cufft_exec_in() {
  return g_in;
}
FAKE_API void* xp_fake_cufft_exec_out() {
  return g_out;
}
