// linalg.lstsq: least-squares solutions of A X = B, PyTorch 1.13's results
// for each of its CPU drivers, computed from the SVD.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "norms.hpp"

namespace tsr::linalg {

// {solution, residuals, rank, singular_values} of min ||A X - B|| for
// A (*, m, n) and B (*, m, k), or B (*, m) for vectors (B with one dim
// fewer than A); batch dims broadcast.
//
// The solution is the minimum-norm one, V diag(1 / s) U^T B with the
// singular values at or below rcond times the largest left out (rcond by
// default eps * max(m, n); a negative one means eps), which is what LAPACK's
// gelsy, gelsd and gelss compute; it is differentiable, to any order,
// through the SVD (PyTorch's gradient, pinv(A)'s, for A of full rank).
// The other results are not differentiable and are filled as the driver
// fills them in PyTorch:
//   rank, int64 over A's batch dims: all drivers but "gels";
//   singular_values (*, min(m, n)): "gelsd" and "gelss";
//   residuals, the squared norms of A X - B's columns, (*, k) (k = 1 for
//   vectors): all drivers but "gelsy", when m > n and, but for "gels",
//   every matrix has rank n.
// Each is an empty tensor (shape {0}) where the driver leaves it out.
// "gels" (QR without pivoting) assumes A has full rank; given a deficient
// one, LAPACK divides by a near-zero pivot while this gives the minimum-norm
// solution.
template <Expression EA, Expression EB>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>, Tensor<int64_t>,
           Tensor<typename EA::value_type>>
lstsq(const EA& ea, const EB& eb, std::optional<double> rcond = std::nullopt,
      const std::optional<std::string>& driver = std::nullopt) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename EB::value_type>,
                "torch.linalg.lstsq: Expected input and other to have the same dtype; cast one with tsr::cast<T>");
  const Tensor<T> a(ea), b(eb);
  detail::check(a.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  detail::check(b.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  detail::check(a.dim() >= b.dim() && a.dim() - b.dim() <= 1,
                "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                "other.dim()) <= 1");
  const bool vector_case = b.dim() == a.dim() - 1;
  const int64_t m = a.size(-2), n = a.size(-1);
  detail::check(vector_case ? b.size(-1) == m : b.size(-2) == m, "torch.linalg.lstsq: input.size(-2) should match ",
                vector_case ? "other.size(-1)" : "other.size(-2)");
  const std::string name = driver.value_or("gelsy");
  detail::check(name == "gels" || name == "gelsy" || name == "gelsd" || name == "gelss",
                "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  detail::check(a.device().is_cpu() && b.device().is_cpu(),
                "torch.linalg.lstsq: tessera computes linear algebra decompositions on the CPU; got tensors on ",
                a.device().str(), " and ", b.device().str(), " (move them with .to(tsr::kCPU))");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail<Error>("This function doesn't handle types other than float and double");
  } else {
    const Tensor<T> bm = vector_case ? b.unsqueeze(-1) : b;
    (void)detail::broadcast_shapes(detail::batch_of(a), detail::batch_of(bm));
    const double eps = double(std::numeric_limits<T>::epsilon());
    const double tolerance = !rcond ? eps * double(std::max(m, n)) : *rcond < 0 ? eps : *rcond;
    const auto [u, s, vh] = svd(a, false);
    const Tensor<bool> keep = detail::unrecorded([&] {
      return Tensor<bool>(s > detail_norm::cutoff(s, m, n, std::nullopt, tolerance));
    });
    const Tensor<T> inverse = where(keep, T(1) / where(keep, s, T(1)), T(0));
    const Tensor<T> x = matmul(vh.transpose(-1, -2), Tensor<T>(inverse.unsqueeze(-1) * matmul(u.transpose(-1, -2), bm)));
    const Tensor<T> none = zeros<T>({0});
    const Tensor<int64_t> kept = sum(cast<int64_t>(keep), {-1});
    const Tensor<int64_t> rank = name == "gels" ? zeros<int64_t>({0}) : kept;
    const Tensor<T> singular_values = name == "gelsd" || name == "gelss" ? s.detach() : none;
    Tensor<T> residuals = none;
    const bool full_rank = name == "gels" || all(Tensor<bool>(kept == n)).item();
    if (name != "gelsy" && m > n && full_rank)
      residuals = detail::unrecorded([&] { return Tensor<T>(sum(square(Tensor<T>(matmul(a, x) - bm)), {-2})); });
    return {vector_case ? x.squeeze(-1) : x, residuals, rank, singular_values};
  }
}

}  // namespace tsr::linalg
