// Helpers shared by the benchmarks: medians of repeated runs, thread
// counts, and the plain parallel loop the peers' hand-written loops run on.
#pragma once
#include <tessera.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <strings.h>
#include <unistd.h>

#ifdef TSR_BENCH_TORCH
#include <torch/torch.h>
#endif
#ifdef TSR_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace bench {

// Sets the thread count of tessera and of the peers that have one.
inline void set_threads(int n) {
  tsr::set_num_threads(n);
#ifdef TSR_BENCH_TORCH
  at::set_num_threads(n);
#endif
#ifdef TSR_BENCH_OPENBLAS
  openblas_set_num_threads(n);
#endif
}

// Runs body(lo, hi) over [0, n) in 64 chunks on tessera's thread pool: the
// same threads everything else uses, so only the loop body differs.
template <class F>
void plain_parallel(int64_t n, F body) {
  tsr::detail::ThreadPool::instance().parallel_for(64, [&](int64_t b, int64_t e) { body(n * b / 64, n * e / 64); });
}

// Median wall time in seconds of `reps` runs of f (after one warm-up run).
// It first lets the machine settle: OpenMP and OpenBLAS workers keep spinning
// for a while after their last job, and on 2 cores a spinning peer thread
// halves the speed of whatever is measured next (seen here: tessera's
// 2-thread sum(a * b) right after at::set_num_threads took 4-7 ms instead of
// 3.3 ms).
template <class F>
double median_seconds(int reps, F&& f) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median time per call in nanoseconds of f called `calls` times per run.
template <class F>
double median_ns_per_call(int reps, int calls, F&& f) {
  return median_seconds(reps, [&] {
           for (int i = 0; i < calls; ++i) f();
         }) *
         1e9 / calls;
}

// Per-call times in nanoseconds of several contestants, measured in turns:
// run r of every contestant happens before run r + 1 of any, so a slow
// stretch of the shared machine (seen here: the same call on the same
// addresses taking 121 ns, then 190 ns for a second) hits all of them alike.
// Returns, per contestant, its sorted per-run times.
template <class... F>
std::vector<std::vector<double>> interleaved_ns_per_call(int reps, int calls, F&&... fs) {
  std::vector<std::vector<double>> out(sizeof...(F));
  auto one = [calls](auto& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / calls;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // see median_seconds
  (one(fs), ...);                                               // warm-up
  for (int r = 0; r < reps; ++r) {
    std::size_t k = 0;
    ((out[k++].push_back(one(fs))), ...);
  }
  for (auto& v : out) std::sort(v.begin(), v.end());
  return out;
}

// Median milliseconds of two contestants measured in turns (one call per run).
template <class F, class G>
std::pair<double, double> paired_ms(int reps, F&& f, G&& g) {
  const auto t = interleaved_ns_per_call(reps, 1, f, g);
  return {t[0][t[0].size() / 2] / 1e6, t[1][t[1].size() / 2] / 1e6};
}

// The CPU's model name, as the kernel reports it ("unknown CPU" elsewhere).
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown CPU";
}

#ifdef TSR_BENCH_OPENBLAS
// OpenBLAS's kernel for the instruction set this binary was compiled for:
// its AVX-512 kernel (SkylakeX) for an AVX-512 build, its AVX2 one (Haswell)
// for an AVX2 build, so that each build is measured against its like.
inline const char* openblas_kernel_for_build() {
  if constexpr (sizeof(xsimd::batch<float>) == 64) return "SkylakeX";
  else if constexpr (sizeof(xsimd::batch<float>) == 32 && xsimd::fma3<xsimd::avx2>::available()) return "Haswell";
  return nullptr;
}

// OpenBLAS chooses its kernel when it is loaded, from the CPUs it knows. On
// a CPU newer than the library it falls back to its generic SSE3 kernel
// (OpenBLAS 0.3.21 on an Emerald Rapids Xeon: "Prescott", 5-9 times slower
// than its AVX-512 kernel there), which is no peer to measure against; and
// an OPENBLAS_CORETYPE set for the whole machine (Haswell, on an AVX-512 AMD
// EPYC host) made an AVX-512 build look 1.5 times as fast as OpenBLAS. So a
// benchmark whose OpenBLAS runs another kernel than
// openblas_kernel_for_build() starts again with OPENBLAS_CORETYPE set to it
// (before main, so before MPI or any thread starts), unless
// TSR_BENCH_OPENBLAS_KERNEL=any says to keep OpenBLAS's own choice;
// print_machine() says which kernel ran, and what the variable was before.
inline bool match_openblas_kernel() {
  const char* want = openblas_kernel_for_build();
  const char* keep = std::getenv("TSR_BENCH_OPENBLAS_KERNEL");
  if (want == nullptr || (keep != nullptr && std::string_view(keep) == "any")) return false;
  if (::strcasecmp(openblas_get_corename(), want) == 0) return false;
  if (const char* before = std::getenv("OPENBLAS_CORETYPE")) {
    if (::strcasecmp(before, want) == 0) return false;  // set to it, and still not running it: say so below
    ::setenv("TSR_BENCH_OPENBLAS_CORETYPE_BEFORE", before, 1);
  }
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  if (args.empty() || ::setenv("OPENBLAS_CORETYPE", want, 1) != 0) return false;
  std::fflush(nullptr);
  ::execv("/proc/self/exe", argv.data());
  return false;  // exec failed: run with OpenBLAS's own choice, which print_machine() reports
}
inline const bool openblas_kernel_matched = match_openblas_kernel();
#endif

// The first line of every benchmark: what it runs on, and the instruction
// set its kernels were compiled for (figures from different ones are not
// comparable), and OpenBLAS's kernel where it is a peer.
inline void print_machine() {
  std::printf("machine: %s, %u hardware threads; compiled for %s (%zu-byte SIMD)\n", cpu_model().c_str(),
              std::thread::hardware_concurrency(), xsimd::default_arch::name(),
              static_cast<std::size_t>(xsimd::default_arch::alignment()));
#ifdef TSR_BENCH_OPENBLAS
  std::printf("OpenBLAS: %s; kernel %s", openblas_get_config(), openblas_get_corename());
  if (const char* set = std::getenv("OPENBLAS_CORETYPE")) {
    std::printf(" (OPENBLAS_CORETYPE=%s", set);
    if (const char* before = std::getenv("TSR_BENCH_OPENBLAS_CORETYPE_BEFORE"))
      std::printf(", set for this build in place of %s", before);
    std::printf(")\n");
  } else {
    std::printf(" (its own choice)\n");
  }
#endif
}

// Keeps the compiler from dropping a computed value.
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "g"(&v) : "memory");
}

// Milliseconds per step of each side, measured in turns of `block` steps
// each (the median over turns of a turn's mean): a side's first step in a
// turn may share the cores with the previous side's threads, which spin for
// a while after their last job (libtorch's OpenMP team, tessera's pool),
// and finds less of its data in cache when the previous side moved more.
// So the turns take the sides in every order in turn, and each side follows
// each other about equally often. The sides are tessera's first and
// libtorch's last, with any reference between them.
template <class... Sides>
std::array<double, sizeof...(Sides)> in_turns(int turns, int block, Sides&&... sides) {
  constexpr std::size_t kSides = sizeof...(Sides);
  std::array<std::vector<double>, kSides> times;
  auto time_block = [block](auto& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < block; ++i) f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / block;
  };
  // BENCH_ONLY=tessera or libtorch runs that side alone (a check that the
  // turns do not slow either down); the others report 0.
  const char* only = std::getenv("BENCH_ONLY");
  const auto runs = [only](std::size_t k) {
    return !only || (std::string(only) == "tessera" && k == 0) || (std::string(only) == "libtorch" && k == kSides - 1);
  };
  const std::array<std::function<void()>, kSides> side{std::ref(sides)...};
  std::array<std::size_t, kSides> order;
  for (std::size_t k = 0; k < kSides; ++k) {
    order[k] = k;
    if (runs(k)) side[k]();  // warm-up
  }
  for (int r = 0; r < turns; ++r) {
    for (const std::size_t k : order) times[k].push_back(runs(k) ? time_block(side[k]) : 0.0);
    std::next_permutation(order.begin(), order.end());
  }
  std::array<double, kSides> medians{};
  for (std::size_t k = 0; k < kSides; ++k) {
    std::sort(times[k].begin(), times[k].end());
    medians[k] = times[k][times[k].size() / 2];
  }
  return medians;
}

}  // namespace bench
