// Covariance and correlation of variables observed together: cov and
// corrcoef, as torch.cov and torch.corrcoef (rows are variables, columns
// observations). PyTorch's computation in its order (a weighted mean, the
// centred observations' matrix product), differentiable through its parts.
// Integer observations give float results.
#pragma once
#include "linalg.hpp"
#include "statistics.hpp"

namespace tsr {
namespace detail {

// PyTorch's checks of cov's fweights or aweights against n observations.
template <class W>
void check_cov_weights(const Tensor<W>& w, int64_t n, const char* name) {
  check(w.dim() <= 1, "cov(): expected ", name, " to have one or fewer dimensions but got ", name, " with ", w.dim(),
        " dimensions");
  check(w.numel() == n, "cov(): expected ", name,
        " to have the same numel as there are observations in the input but got ", w.numel(), " != ", n);
  check(n == 0 || min(w).item() >= 0, "cov(): ", name, " cannot be negative");
}

}  // namespace detail

// The covariance matrix of the rows of x (a 1-D x: one variable, a 0-d
// result), with `correction` subtracted from the count (1: the unbiased
// estimate), observations repeated fweights times and weighted by aweights.
// Where the degrees of freedom are <= 0 the result divides by 0, as in
// PyTorch (which also warns).
template <class T>
auto cov(const Tensor<T>& x, int64_t correction = 1, const Tensor<int64_t>& fweights = {},
         const Tensor<floating_t<T>>& aweights = {}) {
  using F = floating_t<T>;
  static_assert(!std::is_same_v<T, bool>, "cov(): bool dtype is not supported for input");
  detail::check(x.dim() <= 2, "cov(): expected input to have two or fewer dimensions but got an input with ", x.dim(),
                " dimensions");
  const Tensor<F> in = Tensor<F>(cast<F>(x.dim() < 2 ? x.reshape({1, -1}) : x));
  const int64_t n = in.size(1);
  Tensor<F> w;
  if (fweights.defined()) {
    detail::check_cov_weights(fweights, n, "fweights");
    w = cast<F>(fweights);
  }
  if (aweights.defined()) {
    detail::check_cov_weights(aweights, n, "aweights");
    w = w.defined() ? Tensor<F>(w * aweights) : aweights;
  }
  const Tensor<F> w_sum = w.defined() ? sum(w) : full<F>(Shape{}, static_cast<F>(n), in.device());
  detail::check(!w.defined() || w_sum.item() != F(0), "cov(): weights sum to zero, can't be normalized");
  const Tensor<F> avg = w.defined() ? Tensor<F>(sum(in * w, {1}) / w_sum) : Tensor<F>(sum(in, {1}) / w_sum);
  Tensor<F> norm_factor = w.defined() && aweights.defined() && correction != 0
                              ? Tensor<F>(w_sum - static_cast<F>(correction) * sum(w * aweights) / w_sum)
                              : Tensor<F>(w_sum - static_cast<F>(correction));
  if (norm_factor.item() <= F(0)) norm_factor = zeros_like(norm_factor);
  const Tensor<F> centred = in - avg.unsqueeze(1);
  const Tensor<F> weighted = w.defined() ? Tensor<F>(centred * w) : centred;
  const Tensor<F> c = mm(centred, weighted.t());
  return Tensor<F>(c / norm_factor).squeeze();
}

// The correlation coefficients of the rows of x: the covariance normalized
// by the standard deviations, clipped to [-1, 1]; a 1-D x gives c / c (1, or
// NaN where its variance is 0, inf or NaN).
template <class T>
auto corrcoef(const Tensor<T>& x) {
  using F = floating_t<T>;
  detail::check(x.dim() <= 2, "corrcoef(): expected input to have two or fewer dimensions but got an input with ",
                x.dim(), " dimensions");
  const Tensor<F> c = cov(x);
  if (c.dim() == 0) return Tensor<F>(c / c);
  const Tensor<F> stddev = sqrt(diagonal(c));
  return Tensor<F>(clamp(c / stddev.view({-1, 1}) / stddev.view({1, -1}), -1, 1));
}

}  // namespace tsr
