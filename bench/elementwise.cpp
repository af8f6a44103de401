// bench/elementwise: tessera's fused elementwise expressions against the
// bandwidth of a plain triad loop (normal stores, so it also reads the line
// it writes; tessera writes outputs this large with streaming stores, which
// do not) and against Eigen, xtensor and libtorch when installed. One
// process, 1 and 2 threads, medians.
//   ./scripts/bench.sh elementwise
#include <tessera.hpp>

#include <cmath>
#include <cstdio>
#include <tuple>

#include "bench_util.hpp"

#ifdef TSR_BENCH_EIGEN
#include <Eigen/Core>
#endif
#ifdef TSR_BENCH_XTENSOR
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>
#endif
#ifdef TSR_BENCH_TORCH
#include <torch/torch.h>
#endif

using namespace tsr;

namespace {
constexpr int64_t N = int64_t{1} << 24;
constexpr int kReps = 11;

void row(const char* what, double ms, double bytes = 0) {
  if (bytes > 0) std::printf("  %-44s %9.2f ms  %6.1f GB/s\n", what, ms, bytes / ms / 1e6);
  else std::printf("  %-44s %9.2f ms\n", what, ms);
}
}  // namespace

int main() {
  bench::print_machine();
  manual_seed(1);
  auto a = rand({N}), b = rand({N}), c = rand({N}), d = rand({N});
  auto out = empty({N});
  float *pa = a.data_ptr(), *pb = b.data_ptr(), *pc = c.data_ptr(), *pd = d.data_ptr(), *po = out.data_ptr();
  const double bytes3 = 3.0 * N * sizeof(float), bytes5 = 5.0 * N * sizeof(float);

#ifdef TSR_BENCH_EIGEN
  Eigen::Map<Eigen::ArrayXf> ea(pa, N), eb(pb, N), ec(pc, N), ed(pd, N);
  Eigen::ArrayXf eo(N);
#endif
#ifdef TSR_BENCH_XTENSOR
  xt::xtensor<float, 1> xa = xt::xtensor<float, 1>::from_shape({std::size_t(N)}), xb = xa, xc = xa, xd = xa, xo = xa;
  std::copy(pa, pa + N, xa.begin());
  std::copy(pb, pb + N, xb.begin());
  std::copy(pc, pc + N, xc.begin());
  std::copy(pd, pd + N, xd.begin());
#endif
#ifdef TSR_BENCH_TORCH
  auto ta = torch::from_blob(pa, {N}), tb = torch::from_blob(pb, {N}), tc = torch::from_blob(pc, {N}),
       td = torch::from_blob(pd, {N});
  auto to = torch::empty({N});
#endif

  [[maybe_unused]] double eigen_trans = 0;
  for (int threads : {1, 2}) {
    bench::set_threads(threads);
    std::printf("\n== N = 2^24 floats, %d thread%s (medians of %d runs)\n", threads, threads > 1 ? "s" : "", kReps);

    const double triad = 1e3 * bench::median_seconds(kReps, [&] {
      bench::plain_parallel(N, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) po[i] = pb[i] + 3.f * pc[i];
      });
    });
    row("plain triad loop a = b + 3c", triad, bytes3);

    std::printf(" memory-bound chain a*b + c*d - 0.5a (5 streams):\n");
    const double chain_inplace = 1e3 * bench::median_seconds(kReps, [&] { out.copy_(a * b + c * d - 0.5f * a); });
    row("tessera out.copy_(expr)", chain_inplace, bytes5);
    Tensor<float> keep_alive;
    const double chain_alloc = 1e3 * bench::median_seconds(kReps, [&] {
      Tensor<float> r = a * b + c * d - 0.5f * a;
      keep_alive = r;
    });
    row("tessera Tensor r = expr (allocating)", chain_alloc, bytes5);
    const double plain_chain = 1e3 * bench::median_seconds(kReps, [&] {
      bench::plain_parallel(N, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) po[i] = pa[i] * pb[i] + pc[i] * pd[i] - 0.5f * pa[i];
      });
    });
    row("plain loop", plain_chain, bytes5);
#ifdef TSR_BENCH_EIGEN
    if (threads == 1) row("Eigen (1 thread)", 1e3 * bench::median_seconds(kReps, [&] { eo = ea * eb + ec * ed - 0.5f * ea; }), bytes5);
#endif
#ifdef TSR_BENCH_TORCH
    const double torch_chain = 1e3 * bench::median_seconds(kReps, [&] { bench::keep(ta * tb + tc * td - 0.5 * ta); });
    row("libtorch eager", torch_chain, bytes5);
#endif
    std::printf("  -> chain bandwidth / triad bandwidth = %.2f (target >= 0.9)\n", (bytes5 / chain_inplace) / (bytes3 / triad));
    std::printf("  -> allocating / in place = %.2f (target <= 1.2)\n", chain_alloc / chain_inplace);

    std::printf(" transcendental chain a*b + c*sin(d) - exp(-a):\n");
    auto tessera_trans = [&] { out.copy_(a * b + c * sin(d) - exp(-a)); };
    double trans = 0;
#ifdef TSR_BENCH_EIGEN
    // On one thread the two run in turns (bench::paired_ms): a burst of load
    // on the shared machine hits both sides.
    if (threads == 1)
      std::tie(trans, eigen_trans) = bench::paired_ms(kReps, tessera_trans, [&] { eo = ea * eb + ec * ed.sin() - (-ea).exp(); });
    else
#endif
      trans = 1e3 * bench::median_seconds(kReps, tessera_trans);
    row("tessera", trans, bytes5);
    const double hand = 1e3 * bench::median_seconds(kReps, [&] {
      bench::plain_parallel(N, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) po[i] = pa[i] * pb[i] + pc[i] * std::sin(pd[i]) - std::exp(-pa[i]);
      });
    });
    row("hand loop (std::sin/exp)", hand);
#ifdef TSR_BENCH_EIGEN
    // Eigen runs on one thread; at 2 threads tessera is compared with that.
    row("Eigen (1 thread)", eigen_trans, bytes5);
    std::printf("  -> tessera / Eigen speed = %.2f (target >= 1.5)\n", eigen_trans / trans);
#endif
#ifdef TSR_BENCH_XTENSOR
    if (threads == 1)
      row("xtensor (1 thread)", 1e3 * bench::median_seconds(kReps, [&] { xt::noalias(xo) = xa * xb + xc * xt::sin(xd) - xt::exp(-xa); }));
#endif
#ifdef TSR_BENCH_TORCH
    const double tt = 1e3 * bench::median_seconds(kReps, [&] { bench::keep(ta * tb + tc * torch::sin(td) - torch::exp(-ta)); });
    row("libtorch eager", tt);
    std::printf("  -> tessera / libtorch speed = %.1f (target >= 5)\n", tt / trans);
#endif
  }

  // Tiny tensors: the per-call cost. The contestants run in turns (see
  // bench::interleaved_ns_per_call); each line gives the median and the best
  // of the runs.
  set_num_threads(2);
  constexpr int kTinyReps = 31;
  std::printf("\n== a + b on 1000 floats, per call (%d runs of 20000 calls, in turns): median (best)\n", kTinyReps);
  auto sa = rand({1000}), sb = rand({1000});
  auto so = empty({1000});
  auto in_place = [&] { so.copy_(sa + sb); };
  auto allocating = [&] {
    Tensor<float> r = sa + sb;
    bench::keep(r);
  };
#ifdef TSR_BENCH_EIGEN
  Eigen::Map<Eigen::ArrayXf> esa(sa.data_ptr(), 1000), esb(sb.data_ptr(), 1000);
  Eigen::ArrayXf eso(1000);
  auto eigen = [&] {
    eso = esa + esb;
    bench::keep(eso);
  };
  const auto t = bench::interleaved_ns_per_call(kTinyReps, 20000, in_place, allocating, eigen);
#else
  const auto t = bench::interleaved_ns_per_call(kTinyReps, 20000, in_place, allocating);
#endif
  auto median = [](const std::vector<double>& v) { return v[v.size() / 2]; };
  std::printf("  %-44s %9.1f ns (%.1f)\n", "tessera out.copy_(a + b)", median(t[0]), t[0][0]);
  std::printf("  %-44s %9.1f ns (%.1f)  (target <= 60)\n", "tessera Tensor r = a + b", median(t[1]), t[1][0]);
#ifdef TSR_BENCH_EIGEN
  std::printf("  %-44s %9.1f ns (%.1f)\n", "Eigen out = a + b", median(t[2]), t[2][0]);
  std::printf("  -> in place / Eigen = %.2f (best %.2f; target <= 1.2)\n", median(t[0]) / median(t[2]),
              t[0][0] / t[2][0]);
#endif
#ifdef TSR_BENCH_TORCH
  auto tsa = torch::rand({1000}), tsb = torch::rand({1000}), tso = torch::empty({1000});
  std::printf("  %-44s %9.1f ns\n", "libtorch a + b", bench::median_ns_per_call(kReps, 20000, [&] { bench::keep(tsa + tsb); }));
  std::printf("  %-44s %9.1f ns\n", "libtorch add_out",
              bench::median_ns_per_call(kReps, 20000, [&] { torch::add_out(tso, tsa, tsb); }));
#endif
  return 0;
}
