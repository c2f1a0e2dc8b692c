// A fake cuBLAS for tests on the fake driver's hollow devices (XP_CUBLAS points at it): the entry
// points xp resolves, each succeeding without doing anything (no GEMM runs), except the one that
// XP_FAKE_CUBLAS_FAIL names (create, stream, workspace, math or gemm), which returns
// CUBLAS_STATUS_EXECUTION_FAILED (13). Reports CUDA 13.0. Counters for the tests:
// xp_fake_cublas_creates(), _destroys(), _gemms(), _workspace_bytes() (of the last handle set up),
// and the last gemm's arguments: _last_gemm(what) with what 0 transa, 1 transb, 2 Atype,
// 3 computeType. The batched LU (cublas<t>getrfBatched, getrsBatched) writes 0 info words and
// records: xp_fake_cublas_batched(what) with what 0 getrfBatched calls, 1 getrsBatched calls, 2 the
// last n, 3 the last batch count, 4 getrs's trans, 5 getrs's nrhs, 6 getrs's ldb.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {
std::atomic<long> g_creates{0}, g_destroys{0}, g_gemms{0};
std::atomic<std::size_t> g_workspace_bytes{0};
std::atomic<int> g_last_gemm[4] = {-1, -1, -1, -1};
int handle_storage[64];
std::atomic<int> g_next{0};

int status_of(const char* call) {
  const char* fail = std::getenv("XP_FAKE_CUBLAS_FAIL");
  return fail != nullptr && std::strcmp(fail, call) == 0 ? 13 : 0;
}
}  // namespace

FAKE_API int cublasGetProperty(int type, int* value) {
  if (value == nullptr) return 7;  // CUBLAS_STATUS_INVALID_VALUE
  *value = type == 0 ? 13 : 0;     // MAJOR_VERSION 13, MINOR_VERSION 0, PATCH_LEVEL 0
  return 0;
}
FAKE_API int cublasCreate_v2(void** handle) {
  if (handle == nullptr) return 7;
  if (const int s = status_of("create"); s != 0) return s;
  ++g_creates;
  *handle = &handle_storage[g_next++ % 64];
  return 0;
}
FAKE_API int cublasDestroy_v2(void*) {
  ++g_destroys;
  return 0;
}
FAKE_API int cublasSetStream_v2(void*, void*) {
  return status_of("stream");
}
FAKE_API int cublasSetWorkspace_v2(void*, void*, std::size_t bytes) {
  g_workspace_bytes = bytes;
  return status_of("workspace");
}
FAKE_API int cublasSetMathMode(void*, int) {
  return status_of("math");
}
FAKE_API int cublasGemmStridedBatchedEx(void*, int transa, int transb, int, int, int, const void*, const void*,
                                        int a_type, int, long long, const void*, int, int, long long, const void*,
                                        void*, int, int, long long, int, int compute_type, int) {
  if (const int s = status_of("gemm"); s != 0) return s;
  ++g_gemms;
  g_last_gemm[0] = transa;
  g_last_gemm[1] = transb;
  g_last_gemm[2] = a_type;
  g_last_gemm[3] = compute_type;
  return 0;
}

namespace {
std::atomic<long long> g_batched[7] = {};
int getrf_batched(int n, int lda, int* info, int batch) {
  ++g_batched[0];
  g_batched[2] = n;
  g_batched[3] = batch;
  (void)lda;
  for (int i = 0; i < batch; ++i) info[i] = 0;  // hollow memory is host memory
  return 0;
}
int getrs_batched(int trans, int n, int nrhs, int ldb, int* info, int batch) {
  ++g_batched[1];
  g_batched[2] = n;
  g_batched[3] = batch;
  g_batched[4] = trans;
  g_batched[5] = nrhs;
  g_batched[6] = ldb;
  *info = 0;
  return 0;
}
}  // namespace
#define FAKE_BATCHED(X)                                                                                             \
  FAKE_API int cublas##X##getrfBatched(void*, int n, void**, int lda, int*, int* info, int batch) {                 \
    return getrf_batched(n, lda, info, batch);                                                                      \
  }                                                                                                                 \
  FAKE_API int cublas##X##getrsBatched(void*, int trans, int n, int nrhs, void**, int, const int*, void**, int ldb, \
                                       int* info, int batch) {                                                      \
    return getrs_batched(trans, n, nrhs, ldb, info, batch);                                                         \
  }
FAKE_BATCHED(S)
FAKE_BATCHED(D)
FAKE_BATCHED(C)
FAKE_BATCHED(Z)
FAKE_API long long xp_fake_cublas_batched(int what) {
  return what >= 0 && what < 7 ? g_batched[what].load() : -1;
}

FAKE_API long xp_fake_cublas_creates() {
  return g_creates;
}
FAKE_API long xp_fake_cublas_destroys() {
  return g_destroys;
}
FAKE_API long xp_fake_cublas_gemms() {
  return g_gemms;
}
FAKE_API int xp_fake_cublas_last_gemm(int what) {
  return what >= 0 && what < 4 ? g_last_gemm[what].load() : -1;
}
FAKE_API std::size_t xp_fake_cublas_workspace_bytes() {
  return g_workspace_bytes;
}
