// The nvcc row of `xp bench launch`: the vector_add snippet of bench/kernels/vector_add.cu, compiled
// ahead of time by nvcc (bench/CMakeLists.txt copies the snippet into vector_add_snippet.cuh and
// builds this program only when it finds nvcc), launched with <<<>>> through the CUDA runtime.
//
// It measures what the CLI's rows measure, on the same inputs and reference
// (tools/xp/bench_launch.hpp), and prints one JSON line on stdout for the parent to read:
//   xp_bench_vector_add_nvcc [--n N] [--device D]
// There is no build step to time: the runtime loads the module lazily, inside the first launch.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_launch.hpp"
#include "vector_add_snippet.cuh"

#ifndef XP_NVCC_ARCH
#define XP_NVCC_ARCH "unknown"
#endif

namespace {

namespace bn = xp_cli::bench;
using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
                             std::to_string(static_cast<int>(e)) + "): " + cudaGetErrorString(e));
}
#define CHECK(call) check((call), #call)

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

std::string json_number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

struct Result {
  bool ok = false;
  std::string error;
  double first_ms = -1, launch_call_ms = -1, steady_ms = -1, host_us = -1;
  bool checked = false, bits_ok = false;
  long long first_mismatch = -1;
  std::string mismatch, device_name;
};

struct DeviceBuffer {
  float* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { CHECK(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

void check_output(Result& r, const float* out, const float* ref, std::size_t n, const char* stage) {
  const long long i = bn::first_difference(out, ref, n);
  if (i < 0) {
    if (!r.checked) r.bits_ok = true;
    r.checked = true;
    return;
  }
  if (r.checked && !r.bits_ok) return;
  r.checked = true;
  r.bits_ok = false;
  r.first_mismatch = i;
  char text[200];
  const auto at = static_cast<std::size_t>(i);
  std::snprintf(text, sizeof text, "after the %s, index %lld holds 0x%08x, the reference 0x%08x", stage, i,
                bn::float_bits(out[at]), bn::float_bits(ref[at]));
  r.mismatch = text;
}

void run(Result& r, std::size_t n, int device) {
  CHECK(cudaSetDevice(device));
  CHECK(cudaFree(nullptr));  // the context exists before any clock starts
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  r.device_name = prop.name;

  const std::size_t bytes = n * sizeof(float);
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), ref(new float[n]), out(new float[n]);
  bn::make_inputs(a.get(), b.get(), ref.get(), n);
  DeviceBuffer da(bytes), db(bytes), dc(bytes);
  CHECK(cudaMemcpy(da.p, a.get(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db.p, b.get(), bytes, cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));  // as xp's and the raw row's streams
  cudaEvent_t start = nullptr, stop = nullptr;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  struct Cleanup {
    cudaStream_t s;
    cudaEvent_t e0, e1;
    ~Cleanup() {
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
      cudaStreamDestroy(s);
    }
  } cleanup{stream, start, stop};

  const int n_big = static_cast<int>(n);
  const int n_small = static_cast<int>(n < static_cast<std::size_t>(bn::kHostN) ? n : bn::kHostN);
  const unsigned grid_big = static_cast<unsigned>((n + bn::kBlock - 1) / bn::kBlock);
  const unsigned grid_small = static_cast<unsigned>((n_small + bn::kBlock - 1) / bn::kBlock);
  auto fill_nan = [&] {
    CHECK(cudaMemset(dc.p, 0xFF, bytes));
    CHECK(cudaDeviceSynchronize());  // the memset is on the legacy stream, which `stream` does not wait for
  };
  auto read_output = [&] {
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out.get(), dc.p, bytes, cudaMemcpyDeviceToHost));
  };

  // First launch, to completion: includes the runtime's lazy module load.
  fill_nan();
  const auto t0 = Clock::now();
  vector_add<<<grid_big, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, n_big);
  CHECK(cudaGetLastError());
  r.launch_call_ms = ms_between(t0, Clock::now());
  CHECK(cudaStreamSynchronize(stream));
  r.first_ms = ms_between(t0, Clock::now());
  read_output();
  check_output(r, out.get(), ref.get(), n, "first launch");

  // Steady state: events on the launching stream around 10 launches after 3 warm-ups.
  fill_nan();
  for (int i = 0; i < bn::kWarmups; ++i) vector_add<<<grid_big, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, n_big);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < bn::kTimed; ++i) vector_add<<<grid_big, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, n_big);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  r.steady_ms = ms / bn::kTimed;

  // Host cost per launch at n = 1024. Every launch is checked, as the other rows check every
  // cuLaunchKernel result.
  for (int i = 0; i < bn::kHostWarmups; ++i) {
    vector_add<<<grid_small, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, n_small);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaStreamSynchronize(stream));
  const auto h0 = Clock::now();
  for (int i = 0; i < bn::kHostLaunches; ++i) {
    vector_add<<<grid_small, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, n_small);
    CHECK(cudaGetLastError());
  }
  const auto h1 = Clock::now();
  CHECK(cudaStreamSynchronize(stream));
  r.host_us = ms_between(h0, h1) * 1e3 / bn::kHostLaunches;
  read_output();
  check_output(r, out.get(), ref.get(), n, "timed launches");
  r.ok = true;
}

// A sweep (--sizes): at each size, NaN-fill, 3 warm-ups, 10 launches between events on the
// stream, then the bit check of the first n elements; one "#progress K/M" line per size.
std::string sweep(const std::vector<std::size_t>& sizes, int device, Result& r) {
  CHECK(cudaSetDevice(device));
  CHECK(cudaFree(nullptr));
  std::size_t n = 0;
  for (std::size_t s : sizes) n = s > n ? s : n;
  const std::size_t bytes = n * sizeof(float);
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), ref(new float[n]), out(new float[n]);
  bn::make_inputs(a.get(), b.get(), ref.get(), n);
  DeviceBuffer da(bytes), db(bytes), dc(bytes);
  CHECK(cudaMemcpy(da.p, a.get(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db.p, b.get(), bytes, cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr, stop = nullptr;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::string points = "[";
  r.checked = true;
  r.bits_ok = true;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t m = sizes[k];
    const unsigned grid = static_cast<unsigned>((m + bn::kBlock - 1) / bn::kBlock);
    const int mi = static_cast<int>(m);
    CHECK(cudaMemset(dc.p, 0xFF, bytes));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < bn::kWarmups; ++i) vector_add<<<grid, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, mi);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < bn::kTimed; ++i) vector_add<<<grid, bn::kBlock, 0, stream>>>(da.p, db.p, dc.p, mi);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(out.get(), dc.p, m * sizeof(float), cudaMemcpyDeviceToHost));
    const long long bad = bn::first_difference(out.get(), ref.get(), m);
    if (bad >= 0 && r.bits_ok) {
      r.bits_ok = false;
      r.first_mismatch = bad;
      r.mismatch = "n = " + std::to_string(m) + ": index " + std::to_string(bad) + " differs";
    }
    const double steady = ms / bn::kTimed;
    points += std::string(k == 0 ? "" : ",") + "{\"n\":" + std::to_string(m) + ",\"steady_ms\":" + json_number(steady) +
              ",\"gbps\":" + json_number(bn::kBytesPerElement * static_cast<double>(m) / (steady * 1e-3) / 1e9) +
              ",\"bits_ok\":" + (bad < 0 ? "true" : "false") + "}";
    std::printf("#progress %zu/%zu\n", k + 1, sizes.size());
    std::fflush(stdout);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  r.ok = true;
  return points + "]";
}

}  // namespace

int main(int argc, char** argv) {
  long long n = 134217728;
  int device = 0;
  std::vector<std::size_t> sizes;
  Result r;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--n" || arg == "--device") && i + 1 < argc) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0') r.error = arg + ": not a number: " + argv[i];
      if (arg == "--n")
        n = v;
      else
        device = static_cast<int>(v);
    } else if (arg == "--sizes" && i + 1 < argc) {
      const std::string list = argv[++i];
      std::size_t pos = 0;
      while (pos <= list.size()) {
        std::size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        char* end = nullptr;
        const std::string item = list.substr(pos, comma - pos);
        const long long v = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > 2147483647LL)
          r.error = "--sizes: bad size '" + item + "'";
        else
          sizes.push_back(static_cast<std::size_t>(v));
        pos = comma + 1;
      }
    } else {
      r.error = "unknown argument " + arg + " (usage: " + argv[0] + " [--n N] [--device D] [--sizes N1,N2,...])";
    }
  }
  if (r.error.empty() && (n < 1 || n > 2147483647LL)) r.error = "--n must be in [1, 2147483647]";
  std::string points;
  if (r.error.empty()) {
    try {
      if (sizes.empty())
        run(r, static_cast<std::size_t>(n), device);
      else
        points = sweep(sizes, device, r);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
  }
  if (!sizes.empty()) {
    std::printf("{\"row\":\"nvcc\",\"ok\":%s,\"error\":%s,\"arch\":%s,\"bits_ok\":%s,\"mismatch\":%s,\"sweep\":%s}\n",
                r.ok ? "true" : "false", r.error.empty() ? "null" : json_string(r.error).c_str(),
                json_string(XP_NVCC_ARCH).c_str(), r.bits_ok ? "true" : "false",
                r.mismatch.empty() ? "null" : json_string(r.mismatch).c_str(), points.empty() ? "[]" : points.c_str());
    std::fflush(stdout);
    return r.ok ? 0 : 1;
  }
  const auto num = [](double x) { return x < 0 ? std::string("null") : json_number(x); };
  const double gbps = r.steady_ms > 0 ? bn::kBytesPerElement * static_cast<double>(n) / (r.steady_ms * 1e-3) / 1e9 : -1;
  std::printf(
      "{\"row\":\"nvcc\",\"ok\":%s,\"error\":%s,\"n\":%lld,\"arch\":%s,\"device_name\":%s,\"build_ms\":null,"
      "\"first_ms\":%s,\"total_ms\":%s,\"launch_call_ms\":%s,\"to_launch_ms\":%s,\"steady_ms\":%s,\"gbps\":%s,\"host_"
      "us\":%s,\"bits_ok\":%s,"
      "\"first_mismatch\":%s,\"mismatch\":%s}\n",
      r.ok ? "true" : "false", r.error.empty() ? "null" : json_string(r.error).c_str(), n,
      json_string(XP_NVCC_ARCH).c_str(), json_string(r.device_name).c_str(), num(r.first_ms).c_str(),
      num(r.first_ms).c_str(), num(r.launch_call_ms).c_str(), num(r.launch_call_ms).c_str(), num(r.steady_ms).c_str(),
      num(gbps).c_str(), num(r.host_us).c_str(), r.checked ? (r.bits_ok ? "true" : "false") : "null",
      r.first_mismatch < 0 ? "null" : std::to_string(r.first_mismatch).c_str(),
      r.mismatch.empty() ? "null" : json_string(r.mismatch).c_str());
  std::fflush(stdout);
  return r.ok ? 0 : 1;
}
