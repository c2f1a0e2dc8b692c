// A fake cuSOLVER for tests on the fake driver's hollow devices (XP_CUSOLVER points at it; their
// memory is host memory, so the fake can write the info words): every entry point xp resolves,
// recording its call and computing nothing. Reports cuSOLVER 12.0.4 (CUDA 13). Each *_bufferSize
// answers 1000 elements. XP_FAKE_CUSOLVER_INFO=i:v makes the i-th info word written (counting from
// 0 over the process, one per matrix) v; the others are 0. XP_FAKE_CUSOLVER_FAIL=create or stream
// makes that setup step return CUSOLVER_STATUS_INTERNAL_ERROR (7).
// For the tests: xp_fake_cusolver_calls(routine) (calls of "getrf", "potrfBatched", ... of any
// dtype), xp_fake_cusolver_arg(routine, i) (the last call's i-th integer argument, in the order of
// the signature, handle excluded), xp_fake_cusolver_dtype(routine) ('S', 'D', 'C' or 'Z' of the
// last call), xp_fake_cusolver_stream() (the stream last set), xp_fake_cusolver_work(routine) (the
// last work pointer), xp_fake_cusolver_creates().
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {
struct Record {
  long calls = 0;
  std::vector<long long> args;
  char dtype = 0;
  const void* work = nullptr;
};
std::mutex g_mutex;
std::map<std::string, Record>& records() {
  static auto* r = new std::map<std::string, Record>();
  return *r;
}
std::atomic<long> g_creates{0}, g_info_written{0};
std::atomic<void*> g_stream{nullptr};
int g_handles[64];

void record(const char* routine, char dtype, std::vector<long long> args, const void* work = nullptr) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Record& r = records()[routine];
  ++r.calls;
  r.args = std::move(args);
  r.dtype = dtype;
  r.work = work;
}
// Writes `count` info words at info, as XP_FAKE_CUSOLVER_INFO says.
void write_info(int* info, long count) {
  long at = -1, value = 0;
  if (const char* s = std::getenv("XP_FAKE_CUSOLVER_INFO"); s != nullptr) {
    at = std::strtol(s, nullptr, 10);
    if (const char* colon = std::strchr(s, ':'); colon != nullptr) value = std::strtol(colon + 1, nullptr, 10);
  }
  for (long i = 0; i < count; ++i) {
    const long k = g_info_written++;
    if (info != nullptr) info[i] = k == at ? static_cast<int>(value) : 0;
  }
}
int fail(const char* step) {
  const char* f = std::getenv("XP_FAKE_CUSOLVER_FAIL");
  return f != nullptr && std::strcmp(f, step) == 0 ? 7 : 0;
}
}  // namespace

FAKE_API int cusolverGetVersion(int* v) {
  *v = 12004;
  return 0;
}
FAKE_API int cusolverDnCreate(void** h) {
  if (const int s = fail("create"); s != 0) return s;
  *h = &g_handles[g_creates++ % 64];
  return 0;
}
FAKE_API int cusolverDnDestroy(void*) {
  return 0;
}
FAKE_API int cusolverDnSetStream(void*, void* stream) {
  if (const int s = fail("stream"); s != 0) return s;
  g_stream = stream;
  return 0;
}

// One definition per dtype letter of each routine.
#define FAKE_ROUTINES(X, T)                                                                                          \
  FAKE_API int cusolverDn##X##potrf_bufferSize(void*, int uplo, int n, void*, int lda, int* lwork) {                 \
    record("potrf_bufferSize", #X[0], {uplo, n, lda});                                                               \
    *lwork = 1000;                                                                                                   \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##potrf(void*, int uplo, int n, void*, int lda, void* work, int lwork, int* info) {      \
    record("potrf", #X[0], {uplo, n, lda, lwork}, work);                                                             \
    write_info(info, 1);                                                                                             \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##potrfBatched(void*, int uplo, int n, void**, int lda, int* info, int batch) {          \
    record("potrfBatched", #X[0], {uplo, n, lda, batch});                                                            \
    write_info(info, batch);                                                                                         \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##getrf_bufferSize(void*, int m, int n, void*, int lda, int* lwork) {                    \
    record("getrf_bufferSize", #X[0], {m, n, lda});                                                                  \
    *lwork = 1000;                                                                                                   \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##getrf(void*, int m, int n, void*, int lda, void* work, int*, int* info) {              \
    record("getrf", #X[0], {m, n, lda}, work);                                                                       \
    write_info(info, 1);                                                                                             \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##getrs(void*, int trans, int n, int nrhs, const void*, int lda, const int*, void*,      \
                                    int ldb, int* info) {                                                            \
    record("getrs", #X[0], {trans, n, nrhs, lda, ldb});                                                              \
    *info = 0;                                                                                                       \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##geqrf_bufferSize(void*, int m, int n, void*, int lda, int* lwork) {                    \
    record("geqrf_bufferSize", #X[0], {m, n, lda});                                                                  \
    *lwork = 1000;                                                                                                   \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##geqrf(void*, int m, int n, void*, int lda, void*, void* work, int lwork, int* info) {  \
    record("geqrf", #X[0], {m, n, lda, lwork}, work);                                                                \
    write_info(info, 1);                                                                                             \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##T##_bufferSize(void*, int m, int n, int k, const void*, int lda, const void*,          \
                                             int* lwork) {                                                           \
    record("orgqr_bufferSize", #X[0], {m, n, k, lda});                                                               \
    *lwork = 1000;                                                                                                   \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##T(void*, int m, int n, int k, void*, int lda, const void*, void* work, int lwork,      \
                                int* info) {                                                                         \
    record("orgqr", #X[0], {m, n, k, lda, lwork}, work);                                                             \
    *info = 0;                                                                                                       \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##gesvd_bufferSize(void*, int m, int n, int* lwork) {                                    \
    record("gesvd_bufferSize", #X[0], {m, n});                                                                       \
    *lwork = 1000;                                                                                                   \
    return 0;                                                                                                        \
  }                                                                                                                  \
  FAKE_API int cusolverDn##X##gesvd(void*, signed char jobu, signed char jobvt, int m, int n, void*, int lda, void*, \
                                    void*, int ldu, void*, int ldvt, void* work, int lwork, void*, int* info) {      \
    record("gesvd", #X[0], {jobu, jobvt, m, n, lda, ldu, ldvt, lwork}, work);                                        \
    write_info(info, 1);                                                                                             \
    return 0;                                                                                                        \
  }

#define FAKE_EIG(X, E)                                                                                            \
  FAKE_API int cusolverDn##X##E##_bufferSize(void*, int jobz, int uplo, int n, const void*, int lda, const void*, \
                                             int* lwork) {                                                        \
    record("syevd_bufferSize", #X[0], {jobz, uplo, n, lda});                                                      \
    *lwork = 1000;                                                                                                \
    return 0;                                                                                                     \
  }                                                                                                               \
  FAKE_API int cusolverDn##X##E(void*, int jobz, int uplo, int n, void*, int lda, void*, void* work, int lwork,   \
                                int* info) {                                                                      \
    record("syevd", #X[0], {jobz, uplo, n, lda, lwork}, work);                                                    \
    write_info(info, 1);                                                                                          \
    return 0;                                                                                                     \
  }

FAKE_ROUTINES(S, orgqr)
FAKE_ROUTINES(D, orgqr)
FAKE_ROUTINES(C, ungqr)
FAKE_ROUTINES(Z, ungqr)
#define FAKE_EIGJ(X, E)                                                                                       \
  FAKE_API int cusolverDn##X##E##Batched_bufferSize(void*, int jobz, int uplo, int n, const void*, int lda,   \
                                                    const void*, int* lwork, void*, int batch) {              \
    record("syevjBatched_bufferSize", #X[0], {jobz, uplo, n, lda, batch});                                    \
    *lwork = 1000;                                                                                            \
    return 0;                                                                                                 \
  }                                                                                                           \
  FAKE_API int cusolverDn##X##E##Batched(void*, int jobz, int uplo, int n, void*, int lda, void*, void* work, \
                                         int lwork, int* info, void*, int batch) {                            \
    record("syevjBatched", #X[0], {jobz, uplo, n, lda, lwork, batch}, work);                                  \
    write_info(info, batch);                                                                                  \
    return 0;                                                                                                 \
  }

FAKE_API int cusolverDnCreateSyevjInfo(void** info) {
  static int storage;
  *info = &storage;
  return 0;
}
FAKE_API int cusolverDnDestroySyevjInfo(void*) {
  return 0;
}

FAKE_EIGJ(S, syevj)
FAKE_EIGJ(D, syevj)
FAKE_EIGJ(C, heevj)
FAKE_EIGJ(Z, heevj)
FAKE_EIG(S, syevd)
FAKE_EIG(D, syevd)
FAKE_EIG(C, heevd)
FAKE_EIG(Z, heevd)

FAKE_API long xp_fake_cusolver_calls(const char* routine) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = records().find(routine);
  return it == records().end() ? 0 : it->second.calls;
}
FAKE_API long long xp_fake_cusolver_arg(const char* routine, int i) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = records().find(routine);
  if (it == records().end() || i < 0 || static_cast<std::size_t>(i) >= it->second.args.size()) return -999;
  return it->second.args[static_cast<std::size_t>(i)];
}
FAKE_API int xp_fake_cusolver_dtype(const char* routine) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = records().find(routine);
  return it == records().end() ? 0 : it->second.dtype;
}
FAKE_API const void* xp_fake_cusolver_work(const char* routine) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = records().find(routine);
  return it == records().end() ? nullptr : it->second.work;
}
FAKE_API void* xp_fake_cusolver_stream() {
  return g_stream;
}
FAKE_API long xp_fake_cusolver_creates() {
  return g_creates;
}
