// bench/reduce_linalg: tessera's fused, deterministic reductions against
// plain loops (32 independent accumulators, which the compiler vectorizes:
// the bandwidth-bound best case), Eigen and libtorch when installed; and its
// own packed GEMM against OpenBLAS, Eigen and libtorch. One process, 1 and 2
// threads, medians.
//   ./scripts/bench.sh reduce_linalg
#include <tessera.hpp>
#include <linalg/linalg.hpp>

#include <cmath>
#include <cstdio>

#include "bench_util.hpp"

#ifdef TSR_BENCH_EIGEN
#include <Eigen/Core>
#endif
#ifdef TSR_BENCH_TORCH
#include <torch/torch.h>
#endif
#ifdef TSR_BENCH_OPENBLAS
#include <cblas.h>
#endif

using namespace tsr;

namespace {
constexpr int kReps = 11;

// sum of f(i) for i in [lo, hi) with 32 independent float accumulators.
template <class F>
float plain_sum(int64_t lo, int64_t hi, F f) {
  float acc[32] = {};
  const int64_t body_end = lo + (hi - lo) / 32 * 32;
  for (int64_t i = lo; i < body_end; i += 32)
    for (int j = 0; j < 32; ++j) acc[j] += f(i + j);
  float s = 0;
  for (int64_t i = body_end; i < hi; ++i) s += f(i);
  for (float a : acc) s += a;
  return s;
}

void row(const char* what, double ms, double bytes) {
  std::printf("  %-46s %8.2f ms  %6.1f GB/s\n", what, ms, bytes / ms / 1e6);
}

void gflops_row(const char* what, double ms, double flops) {
  std::printf("  %-46s %8.3f ms  %6.1f GFLOP/s\n", what, ms, flops / ms / 1e6);
}

#ifdef TSR_BENCH_OPENBLAS
// tessera's and OpenBLAS's median milliseconds for a product. On one thread
// the two run in turns, call by call, so that a burst of load on the shared
// host hits both alike. On two, each side runs on its own: both keep their
// worker threads spinning for a while after a call (OpenBLAS's far longer),
// which in turns took a core from the other side's call (DGEMM n = 1024 on
// an AVX-512 Xeon: 0.55 of OpenBLAS in turns, 0.83-1.08 on its own in eight
// runs).
template <class F, class G>
std::pair<double, double> ours_and_openblas_ms(int reps, F&& ours, G&& openblas) {
  if (get_num_threads() == 1) return bench::paired_ms(reps, ours, openblas);
  return {1e3 * bench::median_seconds(reps, ours), 1e3 * bench::median_seconds(reps, openblas)};
}
#endif

// C = A B for n x n matrices: tessera's own GEMM against the peers.
template <class T>
void gemm_section(int64_t n) {
  auto a = rand<T>({n, n}), b = rand<T>({n, n});
  auto c = empty<T>({n, n});
  const int reps = n <= 256 ? 101 : n <= 1024 ? 11 : 5;
  const double flops = 2.0 * n * n * n;
  const char* type = std::is_same_v<T, float> ? "SGEMM" : "DGEMM";
  std::printf(" %s n = %lld:\n", type, (long long)n);
  const auto ours = [&] { bench::keep(mm(a, b)); };
  double best = 0;
#ifdef TSR_BENCH_OPENBLAS
  const auto [t_ours, t_blas] = ours_and_openblas_ms(reps, ours, [&] {
    const int N = static_cast<int>(n);
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.f, a.data_ptr(), N, b.data_ptr(), N, 0.f,
                  c.data_ptr(), N);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1., a.data_ptr(), N, b.data_ptr(), N, 0.,
                  c.data_ptr(), N);
    bench::keep(c);
  });
  gflops_row("tessera mm(a, b) (own kernel)", t_ours, flops);
  gflops_row("OpenBLAS cblas gemm", t_blas, flops);
  best = t_blas;
#else
  const double t_ours = 1e3 * bench::median_seconds(reps, ours);
  gflops_row("tessera mm(a, b) (own kernel)", t_ours, flops);
#endif
#ifdef TSR_BENCH_EIGEN
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Mat> ea(a.data_ptr(), n, n), eb(b.data_ptr(), n, n);
  Eigen::Map<Mat> ec(c.data_ptr(), n, n);
  const double t_eig = 1e3 * bench::median_seconds(reps, [&] {
    ec.noalias() = ea * eb;
    bench::keep(c);
  });
  gflops_row("Eigen noalias() = a * b", t_eig, flops);
#endif
#ifdef TSR_BENCH_TORCH
  const auto dtype = std::is_same_v<T, float> ? torch::kFloat : torch::kDouble;
  auto ta = torch::from_blob(a.data_ptr(), {n, n}, dtype), tb = torch::from_blob(b.data_ptr(), {n, n}, dtype);
  const double t_torch = 1e3 * bench::median_seconds(reps, [&] { bench::keep(torch::mm(ta, tb)); });
  gflops_row("libtorch mm", t_torch, flops);
#endif
  if (best > 0) std::printf("  -> tessera / OpenBLAS speed = %.2f (target >= 1.0)\n", best / t_ours);
}
// The products of training a 784-256-10 classifier at batch 64, forward
// (x W^T) and backward (g W, g^T x), transposed operands passed as views.
template <class T>
void training_shapes_section() {
  struct Product {
    int64_t m, n, k;
    bool ta, tb;
    const char* what;
  };
  const Product products[] = {
      {64, 256, 784, false, true, "x W1^T   64x784 . 784x256"}, {64, 784, 256, false, false, "g W1     64x256 . 256x784"},
      {256, 784, 64, true, false, "g^T x    256x64 . 64x784"},  {64, 10, 256, false, true, "h W2^T   64x256 . 256x10"},
      {64, 256, 10, false, false, "g W2     64x10 . 10x256"},   {10, 256, 64, true, false, "g^T h    10x64 . 64x256"},
  };
  std::printf(" %s, the products of a 784-256-10 MLP at batch 64:\n", std::is_same_v<T, float> ? "SGEMM" : "DGEMM");
  for (const Product& p : products) {
    // Stored as the layers hold them; the transposes are views.
    const auto a = p.ta ? rand<T>({p.k, p.m}) : rand<T>({p.m, p.k});
    const auto b = p.tb ? rand<T>({p.n, p.k}) : rand<T>({p.k, p.n});
    const auto av = p.ta ? a.t() : a, bv = p.tb ? b.t() : b;
    const double flops = 2.0 * p.m * p.n * p.k;
    const auto ours = [&] { bench::keep(mm(av, bv)); };
#ifdef TSR_BENCH_OPENBLAS
    auto c = empty<T>({p.m, p.n});
    const int M = static_cast<int>(p.m), N = static_cast<int>(p.n), K = static_cast<int>(p.k);
    const auto ta = p.ta ? CblasTrans : CblasNoTrans, tb = p.tb ? CblasTrans : CblasNoTrans;
    const int lda = p.ta ? M : K, ldb = p.tb ? K : N;
    const auto [t_ours, t_blas] = ours_and_openblas_ms(1001, ours, [&] {
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.f, a.data_ptr(), lda, b.data_ptr(), ldb, 0.f, c.data_ptr(), N);
      else
        cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1., a.data_ptr(), lda, b.data_ptr(), ldb, 0., c.data_ptr(), N);
      bench::keep(c);
    });
    std::printf("  %-28s tessera %7.1f GFLOP/s  OpenBLAS %7.1f GFLOP/s  -> tessera / OpenBLAS = %.2f (target >= 1.0)",
                p.what, flops / t_ours / 1e6, flops / t_blas / 1e6, t_blas / t_ours);
#else
    const double t_ours = 1e3 * bench::median_seconds(201, ours);
    std::printf("  %-28s tessera %7.1f GFLOP/s", p.what, flops / t_ours / 1e6);
#endif
    std::printf("\n");
  }
}
// tsr::linalg against libtorch's torch::linalg (its LAPACK: Debian's
// OpenBLAS) on well-conditioned matrices: a solve with one right-hand side,
// the inverse, the determinant, and the Cholesky factor of A A^T.
template <class T>
void linear_systems_section() {
  std::printf(" %s linear systems, medians in turns (tessera : libtorch ms, speed = libtorch / tessera):\n",
              std::is_same_v<T, float> ? "float" : "double");
  for (const int64_t n : {64, 256, 1000}) {
    const Tensor<T> a = Tensor<T>(randn<T>({n, n}) + T(n) * eye<T>(n)), b = randn<T>({n, 1});
    const Tensor<T> spd = Tensor<T>(matmul(a, a.t()));
    const int block = n <= 64 ? 50 : n <= 256 ? 5 : 1;
    auto report = [&](const char* what, auto&& ours, auto&& theirs) {
#ifdef TSR_BENCH_TORCH
      const auto [t_ours, t_torch] = bench::in_turns(9, block, ours, theirs);
      std::printf("  n = %4lld %-9s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx\n", (long long)n, what, t_ours,
                  t_torch, t_torch / t_ours);
#else
      (void)theirs;
      const auto [t_ours] = bench::in_turns(9, block, ours);
      std::printf("  n = %4lld %-9s tessera %8.3f ms\n", (long long)n, what, t_ours);
#endif
    };
    const auto solve = [&] { bench::keep(linalg::solve(a, b)); };
    const auto inverse = [&] { bench::keep(linalg::inv(a)); };
    const auto determinant = [&] { bench::keep(linalg::det(a)); };
    const auto factor = [&] { bench::keep(linalg::cholesky(spd)); };
#ifdef TSR_BENCH_TORCH
    const auto dtype = std::is_same_v<T, float> ? torch::kFloat : torch::kDouble;
    const auto ta = torch::from_blob(const_cast<T*>(a.data_ptr()), {n, n}, dtype).clone();
    const auto tb = torch::from_blob(const_cast<T*>(b.data_ptr()), {n, 1}, dtype).clone();
    const auto tspd = torch::from_blob(const_cast<T*>(spd.data_ptr()), {n, n}, dtype).clone();
    report("solve", solve, [&] { bench::keep(torch::linalg::solve(ta, tb, /*left=*/true)); });
    report("inv", inverse, [&] { bench::keep(torch::linalg::inv(ta)); });
    report("det", determinant, [&] { bench::keep(torch::linalg::det(ta)); });
    report("cholesky", factor, [&] { bench::keep(torch::linalg::cholesky(tspd)); });
#else
    for (const auto& [what, ours] : {std::pair<const char*, std::function<void()>>{"solve", solve}, {"inv", inverse},
                                     {"det", determinant}, {"cholesky", factor}})
      report(what, ours, [] {});
#endif
  }
}

}  // namespace

int main() {
  bench::print_machine();
  constexpr int64_t N = int64_t{1} << 24;
  constexpr int64_t M = 4096;
  manual_seed(1);
  auto a = rand({N}), b = rand({N});
  auto m = rand({M, M});
  const float *pa = a.data_ptr(), *pb = b.data_ptr(), *pm = m.data_ptr();
  std::vector<float> cols(M), rows(M);
#ifdef TSR_BENCH_EIGEN
  Eigen::Map<const Eigen::ArrayXf> ea(pa, N), eb(pb, N);
#endif
#ifdef TSR_BENCH_TORCH
  auto tm = torch::from_blob(m.data_ptr(), {M, M});
#endif

  for (int threads : {1, 2}) {
    bench::set_threads(threads);
    std::printf("\n== %d thread%s (medians of %d runs; tessera and its plain-loop peer run in turns; the products"
                " and OpenBLAS %s)\n",
                threads, threads > 1 ? "s" : "", kReps, threads > 1 ? "each on its own" : "in turns, call by call");
    std::printf(" sum(a * b), N = 2^24 floats:\n");
    std::vector<double> partial(64);
    const auto [t_sum, t_omp] = bench::paired_ms(
        kReps, [&] { bench::keep(sum(a * b).item()); },
        [&] {
          bench::plain_parallel(N, [&](int64_t lo, int64_t hi) {
            partial[static_cast<std::size_t>(lo * 64 / N)] = plain_sum(lo, hi, [&](int64_t i) { return pa[i] * pb[i]; });
          });
          double s = 0;
          for (double p : partial) s += p;
          bench::keep(s);
        });
    row("tessera sum(a * b)", t_sum, 8.0 * N);
    row("plain loop, 32 accumulators", t_omp, 8.0 * N);
    double best = t_omp;
#ifdef TSR_BENCH_EIGEN
    if (threads == 1) {
      const double t_eig = 1e3 * bench::median_seconds(kReps, [&] { bench::keep((ea * eb).sum()); });
      row("Eigen (a * b).sum() (1 thread)", t_eig, 8.0 * N);
      best = std::min(best, t_eig);
    }
#endif
    std::printf("  -> tessera / faster peer bandwidth = %.2f (target >= 0.9)\n", best / t_sum);

    std::printf(" %lld x %lld floats:\n", (long long)M, (long long)M);
    const double bytes = 4.0 * M * M;
    const auto [t_cols, t_cols_plain] = bench::paired_ms(
        kReps, [&] { bench::keep(sum(m, {0})); },
        [&] {
          tsr::detail::ThreadPool::instance().parallel_for(16, [&](int64_t cb, int64_t ce) {
            const int64_t c0 = cb * M / 16, c1 = ce * M / 16;
            for (int64_t c = c0; c < c1; ++c) cols[c] = 0;
            for (int64_t r = 0; r < M; ++r)
              for (int64_t c = c0; c < c1; ++c) cols[c] += pm[r * M + c];
          });
          bench::keep(cols);
        });
    row("tessera column sums sum(m, {0})", t_cols, bytes);
    row("plain loop (row by row, columns in parallel)", t_cols_plain, bytes);
    std::printf("  -> column sums / plain = %.2f (target >= 0.9)\n", t_cols_plain / t_cols);
    const auto [t_rows, t_rows_plain] = bench::paired_ms(
        kReps, [&] { bench::keep(sum(m, {1})); },
        [&] {
          tsr::detail::ThreadPool::instance().parallel_for(M, [&](int64_t rb, int64_t re) {
            for (int64_t r = rb; r < re; ++r) rows[r] = plain_sum(0, M, [&](int64_t c) { return pm[r * M + c]; });
          });
          bench::keep(rows);
        });
    row("tessera row sums sum(m, {1})", t_rows, bytes);
    row("plain loop (32 accumulators per row)", t_rows_plain, bytes);
    std::printf("  -> row sums / plain = %.2f (target >= 0.9)\n", t_rows_plain / t_rows);

    const double t_soft = 1e3 * bench::median_seconds(kReps, [&] { bench::keep(softmax(m, 1)); });
    row("tessera softmax(m, 1)", t_soft, 2 * bytes);
#ifdef TSR_BENCH_TORCH
    const double t_tsoft = 1e3 * bench::median_seconds(kReps, [&] { bench::keep(torch::softmax(tm, 1)); });
    row("libtorch softmax(m, 1)", t_tsoft, 2 * bytes);
    std::printf("  -> tessera / libtorch speed = %.2f\n", t_tsoft / t_soft);
#endif
    for (int64_t n : {256, 512, 1024, 2048}) gemm_section<float>(n);
    gemm_section<double>(1024);
    training_shapes_section<float>();
    linear_systems_section<float>();
    linear_systems_section<double>();
  }
  return 0;
}
