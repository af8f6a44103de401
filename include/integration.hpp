// Numerical integration along a dim by the trapezoidal rule: trapezoid and
// cumulative_trapezoid, of samples y spaced dx apart or at positions x.
// Written with PyTorch's operations in its order, so results match it and
// differentiate through their parts. Integer samples integrate to float.
#pragma once
#include "scan.hpp"

namespace tsr {
namespace detail {

template <class T>
int64_t integration_dim(const Tensor<T>& y, int64_t dim) {
  static_assert(!std::is_same_v<T, bool>, "trapezoid: bool tensors are not supported, as in PyTorch");
  check<IndexError>(y.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  return wrap_dim(dim, y.dim());
}

// The spacings of positions x along dim, seen with y's rank (a 1-D x along
// dim, a shorter one with leading 1s); they broadcast against y's.
template <class X>
Tensor<X> spacings(const Tensor<X>& x, int64_t rank, int64_t dim, int64_t n) {
  Tensor<X> along = x;
  if (x.dim() == 1) {
    check(x.size(0) == n, "trapezoid: There must be one `x` value for each sample point");
    Shape shape(static_cast<std::size_t>(rank), 1);
    shape[static_cast<std::size_t>(dim)] = n;
    along = x.view(shape);
  } else if (x.dim() < rank) {
    Shape shape(static_cast<std::size_t>(rank - x.dim()), 1);
    for (int64_t s : x.sizes()) shape.push_back(s);
    along = x.view(shape);
  }
  const int64_t m = along.size(dim);
  return Tensor<X>(along.narrow(dim, 1, m - 1) - along.narrow(dim, 0, m - 1));
}

}  // namespace detail

// The integral of y along dim for samples dx apart:
// dx (sum(y) - (y_first + y_last) / 2). No samples integrate to 0.
template <class T>
auto trapezoid(const Tensor<T>& y, double dx = 1, int64_t dim = -1) {
  using R = floating_t<T>;
  dim = detail::integration_dim(y, dim);
  if (y.size(dim) == 0) return zeros<R>(detail::reduced_shape(y.sizes(), uint64_t{1} << dim, false), y.device());
  return Tensor<R>((sum(y, {dim}) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx);
}
// The integral of y along dim for samples at positions x (1-D along dim, or
// broadcasting against y): the sum of (y_i + y_(i+1)) (x_(i+1) - x_i) / 2.
template <class T, class X>
auto trapezoid(const Tensor<T>& y, const Tensor<X>& x, int64_t dim = -1) {
  using R = floating_t<promote_t<T, X>>;
  dim = detail::integration_dim(y, dim);
  const int64_t n = y.size(dim);
  if (n == 0) return zeros<R>(detail::reduced_shape(y.sizes(), uint64_t{1} << dim, false), y.device());
  const Tensor<X> dx = detail::spacings(x, y.dim(), dim, n);
  return Tensor<R>(sum((y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)) * dx, {dim}) / 2.0);
}

// The running integral of y along dim (one element fewer than y there).
template <class T>
auto cumulative_trapezoid(const Tensor<T>& y, double dx = 1, int64_t dim = -1) {
  using R = floating_t<T>;
  dim = detail::integration_dim(y, dim);
  const int64_t m = std::max<int64_t>(y.size(dim) - 1, 0);
  return Tensor<R>(cumsum(dx / 2.0 * (y.narrow(dim, 0, m) + y.narrow(dim, y.size(dim) - m, m)), dim));
}
template <class T, class X>
auto cumulative_trapezoid(const Tensor<T>& y, const Tensor<X>& x, int64_t dim = -1) {
  using R = floating_t<promote_t<T, X>>;
  dim = detail::integration_dim(y, dim);
  const int64_t n = y.size(dim);
  if (n == 0) return zeros<R>(y.sizes(), y.device());
  const Tensor<X> dx = detail::spacings(x, y.dim(), dim, n);
  return Tensor<R>(cumsum((y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)) * dx, dim) / 2.0);
}

}  // namespace tsr
