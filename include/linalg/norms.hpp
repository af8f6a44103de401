// Norms and the functions of a matrix's singular values, as torch.linalg:
// vector_norm, matrix_norm, norm, cond, matrix_rank and pinv. Each is made
// of differentiable ops (norm, sums, extrema, svdvals, svd, inv), so each
// differentiates, to any order, through them.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "svd.hpp"

namespace tsr::linalg {
namespace detail_norm {

// The two dims of a matrix norm, checked and wrapped, and A with them moved
// to the end (the singular values' dims).
template <class T>
std::pair<int64_t, int64_t> matrix_dims(const Tensor<T>& a, const Shape& dim) {
  tsr::detail::check(a.dim() >= 2, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  tsr::detail::check(dim.size() == 2, "linalg.matrix_norm: dim must be a 2-tuple. Got ", dim);
  const int64_t d0 = tsr::detail::wrap_dim(dim[0], a.dim()), d1 = tsr::detail::wrap_dim(dim[1], a.dim());
  tsr::detail::check(d0 != d1, "linalg.matrix_norm: dims must be different. Got (", dim[0], ", ", dim[1], ")");
  return {d0, d1};
}
// r reduced over the two matrix dims (moved to the end): the dims put back
// as size 1 with keepdim.
template <class T>
Tensor<T> with_kept_dims(const Tensor<T>& r, int64_t d0, int64_t d1, bool keepdim) {
  if (!keepdim) return r;
  Tensor<T> out = r;
  for (int64_t d : {std::min(d0, d1), std::max(d0, d1)}) out = out.unsqueeze(d);
  return out;
}
template <class T>
Tensor<T> singular_values(const Tensor<T>& a, int64_t d0, int64_t d1) {
  return svdvals(movedim(a, {d0, d1}, {-2, -1}));
}

}  // namespace detail_norm

// The ord-norm of x over `dim` (all elements when empty), as tsr::norm.
template <Expression E>
auto vector_norm(const E& x, double ord = 2, const Shape& dim = {}, bool keepdim = false) {
  return tsr::norm(x, ord, dim, keepdim);
}

// "fro" (the square root of the sum of squares) or "nuc" (the sum of the
// singular values) over the matrices in dims `dim`.
template <class T>
Tensor<T> matrix_norm(const Tensor<T>& a, std::string_view ord = "fro", const Shape& dim = {-2, -1},
                      bool keepdim = false) {
  const auto [d0, d1] = detail_norm::matrix_dims(a, dim);
  if (ord == "fro") return tsr::norm(a, 2, Shape{d0, d1}, keepdim);
  tsr::detail::check(ord == "nuc", "linalg.matrix_norm: Order ", ord, " not supported.");
  return detail_norm::with_kept_dims(Tensor<T>(sum(detail_norm::singular_values(a, d0, d1), {-1})), d0, d1, keepdim);
}
// ord 1 / -1: the largest / smallest column sum of |a|; inf / -inf: row
// sum; 2 / -2: the largest / smallest singular value.
template <class T>
Tensor<T> matrix_norm(const Tensor<T>& a, double ord, const Shape& dim = {-2, -1}, bool keepdim = false) {
  const auto [d0, d1] = detail_norm::matrix_dims(a, dim);
  constexpr double inf = std::numeric_limits<double>::infinity();
  tsr::detail::check(ord == 1 || ord == -1 || ord == 2 || ord == -2 || ord == inf || ord == -inf,
                     "linalg.matrix_norm: Order ", ord, " not supported.");
  if (std::abs(ord) == 2) {
    const Tensor<T> s = detail_norm::singular_values(a, d0, d1);
    return detail_norm::with_kept_dims(ord > 0 ? amax(s, {-1}) : amin(s, {-1}), d0, d1, keepdim);
  }
  // Sum over one dim (rows for 1, columns for inf), then the extreme over
  // the other, keeping dims so that the second index stays put.
  const int64_t summed = std::abs(ord) == 1 ? d0 : d1, over = std::abs(ord) == 1 ? d1 : d0;
  const Tensor<T> sums = sum(abs(a), {summed}, true);
  const Tensor<T> r = ord > 0 ? amax(sums, {over}, true) : amin(sums, {over}, true);
  return keepdim ? r : r.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
}

// torch.linalg.norm: without ord, the 2-norm of all elements (or of `dim`:
// one dim a vector norm, two the Frobenius norm); with ord and no dim, A
// must be a vector (vector_norm) or a matrix (matrix_norm).
template <class T>
Tensor<T> norm(const Tensor<T>& a, std::optional<double> ord = std::nullopt, std::optional<Shape> dim = std::nullopt,
               bool keepdim = false) {
  if (dim) {
    tsr::detail::check(dim->size() == 1 || dim->size() == 2, "linalg.norm: If dim is specified, it must be of "
                       "length 1 or 2. Got ", *dim);
    if (dim->size() == 2) return ord ? matrix_norm(a, *ord, *dim, keepdim) : matrix_norm(a, "fro", *dim, keepdim);
    return tsr::norm(a, ord.value_or(2), *dim, keepdim);
  }
  if (!ord) return tsr::norm(a, 2, Shape{}, keepdim);
  tsr::detail::check(a.dim() == 1 || a.dim() == 2, "linalg.norm: If dim is not specified but ord is, the input must "
                     "be 1D or 2D. Got ", a.dim(), "D.");
  return a.dim() == 1 ? Tensor<T>(tsr::norm(a, *ord, Shape{}, keepdim)) : matrix_norm(a, *ord, {-2, -1}, keepdim);
}
template <class T>
Tensor<T> norm(const Tensor<T>& a, std::string_view ord, std::optional<Shape> dim = std::nullopt,
               bool keepdim = false) {
  if (!dim) {
    tsr::detail::check(a.dim() == 2, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                       "Got ", a.dim(), "D.");
    dim = Shape{-2, -1};
  }
  tsr::detail::check(dim->size() == 2, "linalg.matrix_norm: dim must be a 2-tuple. Got ", *dim);
  return matrix_norm(a, ord, *dim, keepdim);
}

// The condition number: for ord 2 (the default) and -2 the ratio of the
// extreme singular values (any shape); otherwise norm(A) norm(A^-1) for
// square matrices.
template <class T>
Tensor<T> cond(const Tensor<T>& a, std::optional<double> ord = std::nullopt) {
  tsr::detail::check(a.dim() >= 2, "linalg.cond: The input tensor A must have at least 2 dimensions.");
  if (!ord || std::abs(*ord) == 2) {
    const Tensor<T> s = svdvals(a);
    const int64_t k = s.size(-1);
    const Tensor<T> first = s.narrow(-1, 0, 1).squeeze(-1), last = s.narrow(-1, k - 1, 1).squeeze(-1);
    return ord && *ord < 0 ? Tensor<T>(last / first) : Tensor<T>(first / last);
  }
  tsr::detail::check_square_matrices(a, tsr::detail::str("linalg.cond(ord=", *ord, ")").c_str());
  return matrix_norm(a, *ord) * matrix_norm(inv(a), *ord);
}
template <class T>
Tensor<T> cond(const Tensor<T>& a, std::string_view ord) {
  tsr::detail::check(a.dim() >= 2, "linalg.cond: The input tensor A must have at least 2 dimensions.");
  tsr::detail::check_square_matrices(a, tsr::detail::str("linalg.cond(ord=", ord, ")").c_str());
  return matrix_norm(a, ord) * matrix_norm(inv(a), ord);
}

namespace detail_norm {
// The cutoff below which singular values count as zero: max(atol, rtol
// times the largest), rtol by default eps * max(m, n) where atol is not
// given either, 0 where it is (PyTorch's rule); one per matrix, shaped to
// broadcast against the values.
template <class T>
Tensor<T> cutoff(const Tensor<T>& s, int64_t m, int64_t n, std::optional<double> atol, std::optional<double> rtol) {
  const double r = rtol ? *rtol : atol ? 0.0 : double(std::numeric_limits<T>::epsilon()) * double(std::max(m, n));
  const Tensor<T> largest = s.size(-1) == 0 ? zeros<T>(Shape(s.sizes().begin(), s.sizes().end() - 1))
                                            : Tensor<T>(s.narrow(-1, 0, 1).squeeze(-1));
  return Tensor<T>(maximum(largest * T(r), T(atol.value_or(0)))).unsqueeze(-1);
}
}  // namespace detail_norm

// The number of singular values above the cutoff (int64, one per matrix).
template <class T>
Tensor<int64_t> matrix_rank(const Tensor<T>& a, std::optional<double> atol = std::nullopt,
                            std::optional<double> rtol = std::nullopt) {
  static_assert(is_floating_v<T>, "This function doesn't handle types other than float and double");
  tsr::detail::check(a.dim() >= 2, "linalg.matrix_rank: The input tensor A must have at least 2 dimensions.");
  const Tensor<T> s = tsr::detail::unrecorded([&] { return svdvals(a); });
  return sum(cast<int64_t>(s > detail_norm::cutoff(s, a.size(-2), a.size(-1), atol, rtol)), {-1});
}

// The pseudoinverse V diag(1 / s) U^T, singular values at or below the
// cutoff left out (their reciprocal taken as 0).
template <class T>
Tensor<T> pinv(const Tensor<T>& a, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt) {
  static_assert(is_floating_v<T>, "linalg.pinv(: Expected a floating point or complex tensor as input");
  tsr::detail::check(a.dim() >= 2, "linalg.pinv: The input tensor A must have at least 2 dimensions.");
  const auto [u, s, vh] = svd(a, false);
  const Tensor<T> keep = tsr::detail::unrecorded([&] {
    return Tensor<T>(cast<T>(s > detail_norm::cutoff(s, a.size(-2), a.size(-1), atol, rtol)));
  });
  const Tensor<T> inverse = where(keep > T(0), T(1) / where(keep > T(0), s, T(1)), T(0));
  return matmul(Tensor<T>(vh.transpose(-1, -2) * inverse.unsqueeze(-2)), u.transpose(-1, -2));
}

}  // namespace tsr::linalg
