// bench/special: throughput of special functions on 2^24 floats, 1 and 2
// threads, against the bandwidth of a plain triad loop (normal stores, which
// read each line they write; tessera writes outputs this large with
// streaming stores, which do not) and against libtorch's same function when
// installed. Medians.
//   ./scripts/bench.sh special
#include <tessera.hpp>

#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "bench_util.hpp"

#ifdef TSR_BENCH_TORCH
#include <torch/torch.h>
#endif

using namespace tsr;

namespace {
constexpr int64_t N = int64_t{1} << 24;
constexpr int kReps = 11;
}  // namespace

int main() {
  bench::print_machine();
  manual_seed(1);
  // Inputs spread over each function's interesting range: [-6, 6].
  Tensor<float> x = rand({N}) * 12.f - 6.f;
  Tensor<float> out = empty({N});
  const float* px = x.data_ptr();
  float* po = out.data_ptr();
  const double bytes2 = 2.0 * N * sizeof(float), bytes3 = 3.0 * N * sizeof(float);
#ifdef TSR_BENCH_TORCH
  auto tx = torch::from_blob(x.data_ptr(), {N});
  auto to = torch::from_blob(out.data_ptr(), {N});
#endif

  for (int threads : {1, 2}) {
    bench::set_threads(threads);
    std::printf("\n== N = 2^24 floats in [-6, 6], %d thread%s (medians of %d runs)\n", threads, threads > 1 ? "s" : "",
                kReps);
    const double triad = 1e3 * bench::median_seconds(kReps, [&] {
      bench::plain_parallel(N, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) po[i] = px[i] + 3.f * po[i];
      });
    });
    std::printf("  %-36s %8.2f ms  %6.1f GB/s\n", "plain triad loop", triad, bytes3 / triad / 1e6);
    const double copy_time = triad * bytes2 / bytes3;  // a one-in, one-out op at that bandwidth

    // One lambda per function for each side, run in the same order.
    const std::vector<std::pair<const char*, std::function<void()>>> ours = {
        {"erf", [&] { out.copy_(special::erf(x)); }},
        {"expit", [&] { out.copy_(special::expit(x)); }},
        {"log_ndtr", [&] { out.copy_(special::log_ndtr(x)); }},
        {"ndtr", [&] { out.copy_(special::ndtr(x)); }},
        {"sinc", [&] { out.copy_(special::sinc(x)); }},
        {"xlogy(x, x)", [&] { out.copy_(special::xlogy(x, x)); }},
    };
#ifdef TSR_BENCH_TORCH
    const std::vector<std::function<void()>> theirs = {
        [&] { torch::special_erf_out(to, tx); },      [&] { torch::special_expit_out(to, tx); },
        [&] { torch::special_log_ndtr_out(to, tx); }, [&] { torch::special_ndtr_out(to, tx); },
        [&] { torch::special_sinc_out(to, tx); },     [&] { torch::special_xlogy_out(to, tx, tx); },
    };
#endif
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const double t = 1e3 * bench::median_seconds(kReps, ours[i].second);
      std::printf("  %-12s tessera %8.2f ms (%5.2f x the bandwidth-bound time)", ours[i].first, t, t / copy_time);
#ifdef TSR_BENCH_TORCH
      const double tt = 1e3 * bench::median_seconds(kReps, theirs[i]);
      std::printf("   libtorch %8.2f ms  -> tessera / libtorch speed %.2f", tt, tt / t);
#endif
      std::printf("\n");
    }
  }
}
