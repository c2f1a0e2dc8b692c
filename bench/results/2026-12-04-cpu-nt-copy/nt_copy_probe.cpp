// Does a GiB copied into a small ring of buffers (as xp's pinned staging does) evict a warm working
// set from the host's caches, with memcpy and with NTA prefetches plus streaming stores?
//   nt_copy_probe [STATE_MIB = 8] [ROUNDS = 5]
// Per round and mode: the working set (a pointer chase over STATE_MIB in a shuffled order of
// 64-byte lines) is walked once to warm it, then the GiB is copied (or not), then the walk is timed.
// Build: g++ -O2 -std=c++20 nt_copy_probe.cpp -o nt_copy_probe -pthread
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

void stream_copy(char* d, const char* s, std::size_t n) {
  const std::size_t head = std::min(n, (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    _mm_prefetch(s + i + 1024, _MM_HINT_NTA);
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, n - i);
  _mm_sfence();
}

// The source in chunks of 8 MiB into two ring buffers, each chunk in 1 MiB pieces over `threads`.
double copy_gib(const std::vector<char>& src, std::vector<char>& ring, bool streaming, int threads) {
  constexpr std::size_t kChunk = std::size_t{8} << 20, kPiece = std::size_t{1} << 20;
  const auto t0 = Clock::now();
  for (std::size_t c = 0; c * kChunk < src.size(); ++c) {
    char* dst = ring.data() + (c % 2) * kChunk;
    const char* s = src.data() + c * kChunk;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t p = static_cast<std::size_t>(t); p * kPiece < kChunk; p += static_cast<std::size_t>(threads))
          streaming ? stream_copy(dst + p * kPiece, s + p * kPiece, kPiece)
                    : (void)std::memcpy(dst + p * kPiece, s + p * kPiece, kPiece);
      });
    for (auto& th : pool) th.join();
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t state_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::size_t lines = (state_mib << 20) / 64;
  std::vector<std::uint64_t> state(lines * 8);
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  for (std::size_t i = 0; i < lines; ++i) state[order[i] * 8] = order[(i + 1) % lines] * 8;
  const auto walk = [&] {
    std::uint64_t p = order[0] * 8;
    for (std::size_t i = 0; i < lines; ++i) p = state[p];
    return p;
  };
  std::vector<char> src(std::size_t{1} << 30, 1), ring(std::size_t{16} << 20, 0);
  std::uint64_t sink = 0;
  std::printf("state %zu MiB (%zu lines), %d copy threads\n", state_mib, lines, threads);
  for (int r = 0; r < rounds; ++r) {
    for (const char* mode : {"none", "memcpy", "stream"}) {
      sink += walk();
      double copy_s = 0;
      if (std::strcmp(mode, "none") != 0) copy_s = copy_gib(src, ring, std::strcmp(mode, "stream") == 0, threads);
      const auto t0 = Clock::now();
      sink += walk();
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      std::printf("round %d %-6s: walk after %.0f us (%.1f ns/line), copy %.1f GB/s\n", r, mode, us,
                  us * 1e3 / static_cast<double>(lines), copy_s > 0 ? 1.073741824 / copy_s : 0.0);
    }
  }
  return sink == 42 ? 1 : 0;
}
