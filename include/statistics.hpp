// Composite reductions over dims: var, std, norm (and dist, renorm),
// logsumexp, softmax and log_softmax. Each is a few fused passes, never a
// per-element recomputation of a reduction: a reduction broadcast back into
// an elementwise consumer (x - amax(x, {1}, true)) is materialized once and
// read as a tensor.
#pragma once
#include <cmath>
#include <limits>

#include "math.hpp"
#include "reduce_dims.hpp"

namespace tsr {
namespace detail {

// A keepdim result viewed without the reduced dims when keepdim is false.
template <class T, class E>
Tensor<T> drop_reduced(Tensor<T> kept, const E& e, const Shape& dims, bool keepdim) {
  if (keepdim) return kept;
  return kept.view(reduced_shape(e.sizes(), reduce_mask(dims, e.dim()), false));
}

// The passes of the composite reductions below are the library's own
// (reduce_dims, materialize), not the public ops: those would compile the
// recording of nodes, and their backward, that never run inside them.

template <class T, Expression E>
Tensor<T> var_impl(const E& e, const Shape& dims, int64_t correction, bool keepdim) {
  using A = acc_t<T>;
  const auto x = as_type<A>(e);
  const double count = static_cast<double>(reduced_count(e, dims));
  // The mean with kept dims: it broadcasts against e.
  const Tensor<A> m = materialize<A>(reduce_dims<A, SumReducer, A>(x, dims, true) / A(count));
  const Tensor<A> ss = reduce_dims<A, SumReducer, A>(square(x - m), dims, keepdim);
  const double denom = std::max<double>(0, count - static_cast<double>(correction));
  return materialize<T>(as_type<T>(ss / A(denom)));
}

}  // namespace detail

// Variance over dims with Bessel's correction by default: two passes (the
// mean, then the sum of squared deviations), which keeps the result accurate
// when the mean is large against the spread. Divides by max(0, N - correction).
template <Expression E>
auto var(const E& e, const Shape& dims, int64_t correction = 1, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "std and var only support floating point and complex dtypes");
  auto out = detail::unrecorded([&] { return detail::var_impl<T>(e, dims, correction, keepdim); });
  detail::record_op<autograd::tag::Var>(out, e, dims, correction, false);
  return out;
}
template <Expression E>
auto std(const E& e, const Shape& dims, int64_t correction = 1, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "std and var only support floating point and complex dtypes");
  auto out = detail::unrecorded(
      [&] { return detail::materialize<T>(sqrt(detail::var_impl<T>(e, dims, correction, keepdim))); });
  detail::record_op<autograd::tag::Var>(out, e, dims, correction, true);
  return out;
}
// Over all elements, with Bessel's correction (torch::var(x), torch::std(x)).
template <Expression E>
auto var(const E& e) {
  return var(e, Shape{});
}
template <Expression E>
auto std(const E& e) {
  return tsr::std(e, Shape{});
}

// The variance (standard deviation) and the mean together: {var, mean}.
template <Expression E>
auto var_mean(const E& e, const Shape& dims, int64_t correction = 1, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "var_mean only support floating point and complex dtypes");
  const Tensor<T> x(e);
  return std::make_tuple(var(x, dims, correction, keepdim), mean(x, dims, keepdim));
}
template <Expression E>
auto std_mean(const E& e, const Shape& dims, int64_t correction = 1, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "std_mean only support floating point and complex dtypes");
  const Tensor<T> x(e);
  return std::make_tuple(tsr::std(x, dims, correction, keepdim), mean(x, dims, keepdim));
}
template <Expression E>
auto var_mean(const E& e) {
  return var_mean(e, Shape{});
}
template <Expression E>
auto std_mean(const E& e) {
  return std_mean(e, Shape{});
}

namespace detail {
template <class T, Expression E>
Tensor<T> norm_impl(const E& e, double p, const Shape& dims, bool keepdim) {
  using A = acc_t<T>;
  const auto x = as_type<A>(e);
  constexpr double inf = std::numeric_limits<double>::infinity();
  Tensor<A> r;
  if (p == inf || p == -inf) {
    const int64_t empty = detail::first_empty_reduced_dim(e, dims);
    // PyTorch's text, missing space included.
    detail::check(empty < 0, "linalg.vector_norm cannot compute the ", p > 0 ? "inf" : "-inf",
                  " norm on the dimension ", empty,
                  "because this dimension is empty and the operation does not have an identity");
    r = p > 0 ? reduce_dims<A, MaxReducer, A>(abs(x), dims, true) : reduce_dims<A, MinReducer, A>(abs(x), dims, true);
  } else if (p == 0) {
    r = reduce_dims<A, SumReducer, A>(cast<A>(x != A(0)), dims, true);
  } else if (p == 1) {
    r = reduce_dims<A, SumReducer, A>(abs(x), dims, true);
  } else if (p == 2) {
    if (e.numel() == 0) {
      r = reduce_dims<A, SumReducer, A>(x, dims, true);
    } else {
      const Tensor<A> scale = reduce_dims<A, MaxReducer, A>(abs(x), dims, true);
      const Tensor<A> safe = materialize<A>(where(scale > A(0) && isfinite(scale), scale, A(1)));
      const Tensor<A> ss = reduce_dims<A, SumReducer, A>(square(x / safe), dims, true);
      r = materialize<A>(where(isinf(scale), scale, safe * sqrt(ss)));
    }
  } else {
    r = materialize<A>(pow(reduce_dims<A, SumReducer, A>(pow(abs(x), A(p)), dims, true), A(1.0 / p)));
  }
  return detail::drop_reduced(materialize<T>(as_type<T>(r)), e, dims, keepdim);
}
}  // namespace detail

// The p-norm over dims (p = 2, 1, inf, -inf, 0 or any real). p = 2 is
// scaled by the largest magnitude, so norm([1e20f, 1e20f]) is finite as in
// NumPy (PyTorch overflows to inf there; see docs/differences.md).
template <Expression E>
auto norm(const E& e, double p, const Shape& dims, bool keepdim = false) {
  static_assert(is_floating_v<typename E::value_type>,
                "norm(): input dtype should be either floating point or complex (cast<float>(x) for integers)");
  using T = floating_t<typename E::value_type>;
  auto out = detail::unrecorded([&] { return detail::norm_impl<T>(e, p, dims, keepdim); });
  detail::record_op<autograd::tag::Norm>(out, e, p, dims);
  return out;
}
template <Expression E>
auto norm(const E& e, double p = 2) {
  return norm(e, p, Shape{}, false);
}

// The p-norm of a - b over all elements (a and b broadcast).
template <Expression A, Expression B>
auto dist(const A& a, const B& b, double p = 2) {
  return norm(a - b, p);
}

// x with each slice along dim (x.select(dim, i)) whose p-norm exceeds
// maxnorm scaled down to norm maxnorm (PyTorch's factor maxnorm / (norm +
// 1e-7)); the others unchanged.
template <Expression E>
auto renorm(const E& e, double p, int64_t dim, double maxnorm) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "renorm: integer and bool tensors are not supported, as in PyTorch");
  detail::check(p > 0, "renorm: non-positive-norm not supported");
  detail::check(maxnorm >= 0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm);
  const Tensor<T> x(e);
  detail::check(x.dim() > 1, "renorm: input needs at least 2 dimensions, got ", x.dim(), " dimensions");
  dim = detail::wrap_dim(dim, x.dim());
  Shape others;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim) others.push_back(d);
  using A = acc_t<T>;
  const Tensor<T> n = norm(x, p, others, true);
  const Tensor<T> factor = where(n > static_cast<A>(maxnorm), static_cast<A>(maxnorm) / (n + A(1e-7)), A(1));
  return Tensor<T>(x * factor);
}

namespace detail {
template <class T, Expression E>
Tensor<T> logsumexp_impl(const E& e, const Shape& dims, bool keepdim) {
  using A = acc_t<T>;
  const auto x = as_type<A>(e);
  Tensor<A> r;
  if (detail::reduced_count(e, dims) == 0) {
    r = full<A>(detail::reduced_shape(e.sizes(), detail::reduce_mask(dims, e.dim()), true),
                -std::numeric_limits<A>::infinity());
  } else {  // unrecorded passes, as in softmax_like
    const Tensor<A> m = reduce_dims<A, MaxReducer, A>(x, dims, true);
    const Tensor<A> shift = materialize<A>(where(isinf(m), A(0), m));
    r = materialize<A>(log(reduce_dims<A, SumReducer, A>(exp(x - shift), dims, true)) + shift);
  }
  return detail::drop_reduced(materialize<T>(as_type<T>(r)), e, dims, keepdim);
}
}  // namespace detail

// log(sum(exp(e))) over dims, shifted by the maximum so that large inputs do
// not overflow; an all -inf slice gives -inf, and +inf gives +inf.
template <Expression E>
auto logsumexp(const E& e, const Shape& dims, bool keepdim = false) {
  using T = floating_t<typename E::value_type>;
  auto out = detail::unrecorded([&] { return detail::logsumexp_impl<T>(e, dims, keepdim); });
  detail::record_op<autograd::tag::Logsumexp>(out, e, dims);
  return out;
}

// nansum: the sum over dims with NaN elements counted as zero (integers and
// bools sum to int64, as in sum). Its gradient is g where the element is
// not NaN and 0 where it is, as a product with that mask: a NaN g stays
// NaN there, as in PyTorch's NansumBackward0.
template <Expression E>
auto nansum(const E& e, const Shape& dims = {}, bool keepdim = false) {
  using T = typename E::value_type;
  if constexpr (is_floating_v<T>) {
    auto out = detail::unrecorded([&] { return sum(where(isnan(e), T(0), e), dims, keepdim); });
    detail::record_op<autograd::tag::Nansum>(out, e, dims);
    return out;
  } else {
    return sum(e, dims, keepdim);
  }
}
// nanmean: the mean over dims of the elements that are not NaN (NaN where
// there are none), nansum divided by their count, as PyTorch computes it.
template <Expression E>
auto nanmean(const E& e, const Shape& dims = {}, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "nanmean(): expected input to have floating point dtype");
  const Tensor<T> x = e;  // read twice
  const Tensor<T> count = sum(cast<T>(!isnan(x)), dims, keepdim);
  return Tensor<T>(nansum(x, dims, keepdim) / count);
}
template <Expression E, std::integral I>
auto nansum(const E& e, I dim, bool keepdim = false) { return nansum(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto nanmean(const E& e, I dim, bool keepdim = false) { return nanmean(e, Shape{int64_t(dim)}, keepdim); }

namespace detail {
// softmax (Log false) and log_softmax (true) along a wrapped dim: the row
// maximum m and the sum s of exp(x - m), both kept as dims of size 1 (two
// passes over e), then one output pass.
template <bool Log, Expression E>
Tensor<typename E::value_type> softmax_forward(const E& e, int64_t dim) {
  using T = typename E::value_type;
  using A = acc_t<T>;
  if (e.numel() == 0) return Tensor<T>::allocate(e.sizes());
  const auto x = as_type<A>(e);
  const Tensor<A> m = reduce_dims<A, MaxReducer, A>(x, Shape{dim}, true);
  const Tensor<A> s = reduce_dims<A, SumReducer, A>(exp(x - m), Shape{dim}, true);
  if constexpr (Log) {
    // (x - m) - log(s), not x - (m + log(s)): m + log(s) would round away
    // the digits of log(s) when m is large.
    const Tensor<A> log_s = materialize<A>(log(s));
    return materialize<T>(as_type<T>((x - m) - log_s));
  } else {
    return materialize<T>(as_type<T>(exp(x - m) / s));
  }
}

template <bool Log, Expression E>
Tensor<typename E::value_type> softmax_like(const E& e, int64_t dim) {
  dim = wrap_dim(dim, e.dim());
  auto out = unrecorded([&] { return softmax_forward<Log>(e, dim); });
  record_op<autograd::tag::Softmax>(out, e, dim, Log);
  return out;
}
}  // namespace detail

// softmax along dim: three passes (max, sum, output), stable for large inputs.
template <Expression E>
auto softmax(const E& e, int64_t dim) {
  static_assert(is_floating_v<typename E::value_type>,
                "softmax(): expected a floating point input (cast<float>(x) for integers)");
  return detail::softmax_like<false>(e, dim);
}
template <Expression E>
auto log_softmax(const E& e, int64_t dim) {
  static_assert(is_floating_v<typename E::value_type>,
                "log_softmax(): expected a floating point input (cast<float>(x) for integers)");
  return detail::softmax_like<true>(e, dim);
}

}  // namespace tsr
