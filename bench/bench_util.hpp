// Timing helpers shared by the benchmarks: medians of repeated runs.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace bench {

// Median wall time in seconds of `reps` runs of f (after one warm-up run).
template <class F>
double median_seconds(int reps, F&& f) {
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

// Keeps the compiler from dropping a computed value.
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "g"(&v) : "memory");
}

}  // namespace bench
