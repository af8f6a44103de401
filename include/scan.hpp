// Inclusive scans along a dim: cumsum and cumprod, cummax and cummin,
// logcumsumexp; and vander, a matrix of running products.
// cumsum and cumprod of integer and bool inputs give int64 (PyTorch's rule);
// floats accumulate in double, as PyTorch's CPU kernels do, so long scans do
// not drift.
#pragma once
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>

#include "reduce_dims.hpp"
#include "shape_ops.hpp"

namespace tsr {
namespace detail {

template <class T>
using scan_acc_t = std::conditional_t<is_floating_v<T>, double, int64_t>;

struct ScanAdd {
  template <class A>
  TSR_HOST_DEVICE A operator()(A a, A b) const { return a + b; }
};
struct ScanMultiply {
  template <class A>
  TSR_HOST_DEVICE A operator()(A a, A b) const { return a * b; }
};

// log(exp(a) + exp(b)) for a running value a and the next element b, as
// PyTorch's logcumsumexp kernel forms it: the larger plus log1p(exp(smaller -
// larger)), NaN propagating; two equal infinities give a itself.
struct ScanLogAddExp {
  template <class A>
  TSR_HOST_DEVICE A operator()(A a, A b) const {
    const A lo = b != b ? b : (b < a ? b : a), hi = b != b ? b : (a < b ? b : a);
    if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
    return a;
  }
};

// The device backend's form (cuda/scan.hpp), in translation units that have it.
namespace cuda {
template <class Out, class Acc, class T, class Op>
void scan(const Tensor<Out>& out, const Tensor<T>& x, const DimSplit& s, Acc init, Op op);
}  // namespace cuda

// out[..., i, ...] = op(out[..., i - 1, ...], x[..., i, ...]) along dim, for
// a contiguous x viewed as [outer, len, inner]: the running values of a whole
// row of `inner` elements advance together (vectorizable, no strided walk).
// On a device, one thread per line runs the same sequence.
template <class Out, class Acc, class T, class Op>
Tensor<Out> scan(const Tensor<T>& input, int64_t dim, Acc init, Op op) {
  const Tensor<T> x = input.contiguous();
  auto out = Tensor<Out>::allocate(x.sizes(), x.device());
  if (x.numel() == 0) return out;
  dim = wrap_dim(dim, x.dim());
  const DimSplit split = split_at(x.sizes(), dim);
  if (!x.device().is_cpu()) {
    if constexpr (kCudaBackend) cuda::scan(out, x, split, init, op);
    else fail_compiled_without_cuda(x.device(), "cumsum and cumprod");
    return out;
  }
  const int64_t outer = split.outer, len = split.len, inner = split.inner;
  const T* src = x.data_ptr();
  Out* dst = out.data_ptr();
  run_units(outer, x.numel(), [&](int64_t ob, int64_t oe) {
    std::unique_ptr<Acc[]> acc(new Acc[static_cast<std::size_t>(inner)]);
    for (int64_t o = ob; o < oe; ++o) {
      std::fill(acc.get(), acc.get() + inner, init);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t base = (o * len + i) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          acc[j] = op(acc[j], static_cast<Acc>(convert<scan_acc_t<T>>(src[base + j])));
          dst[base + j] = convert<Out>(acc[j]);
        }
      }
    }
  });
  return out;
}

// Whether v takes over from the running extremum b: a later equal element
// does (PyTorch's >=), and NaN, once met, stays, at the latest NaN.
template <bool Max, class A>
bool takes_over(A v, A b) {
  if constexpr (is_floating_v<A>) {
    if (v != v) return true;
    if (b != b) return false;
  }
  return Max ? v >= b : v <= b;
}

// cummax (Max) or cummin along dim: the running extremum and the position
// it was reached at.
template <bool Max, class T>
std::tuple<Tensor<T>, Tensor<int64_t>> cumulative_extremum(const Tensor<T>& input, int64_t dim) {
  const Tensor<T> x = input.device().is_cpu() ? input.contiguous() : input.copy_to(kCPU).contiguous();
  auto values = Tensor<T>::allocate(x.sizes());
  auto indices = Tensor<int64_t>::allocate(x.sizes());
  const DimSplit s = split_at(x.sizes(), dim);
  const T* src = x.data_ptr();
  T* vout = values.data_ptr();
  int64_t* iout = indices.data_ptr();
  using A = acc_t<T>;
  run_units(s.outer, x.numel(), [&](int64_t ob, int64_t oe) {
    std::unique_ptr<A[]> best(new A[static_cast<std::size_t>(s.inner)]);
    std::unique_ptr<int64_t[]> at(new int64_t[static_cast<std::size_t>(s.inner)]);
    for (int64_t o = ob; o < oe; ++o)
      for (int64_t i = 0; i < s.len; ++i) {
        const int64_t base = (o * s.len + i) * s.inner;
        for (int64_t j = 0; j < s.inner; ++j) {
          const auto jj = static_cast<std::size_t>(j);
          const A v = convert<A>(src[base + j]);
          if (i == 0 || takes_over<Max>(v, best[jj])) best[jj] = v, at[jj] = i;
          vout[base + j] = src[(o * s.len + at[jj]) * s.inner + j];
          iout[base + j] = at[jj];
        }
      }
  });
  if (input.device().is_cpu()) return {std::move(values), std::move(indices)};
  return {values.copy_to(input.device()), indices.copy_to(input.device())};
}

template <bool Max, Expression E>
auto cumulative_extremum_recorded(const E& e, int64_t dim) {
  using T = typename E::value_type;
  const Tensor<T> x(e);
  dim = wrap_dim(dim, x.dim());
  auto r = cumulative_extremum<Max>(x, dim);
  record_op<autograd::tag::Gather>(std::get<0>(r), x, dim, std::get<1>(r), Max ? "CummaxBackward0" : "CumminBackward0");
  return r;
}

}  // namespace detail

// The running maximum along dim and where it was reached: auto [v, i] =
// cummax(x, 1); equal elements move the position on, NaN stays.
template <Expression E>
auto cummax(const E& e, int64_t dim) {
  return detail::cumulative_extremum_recorded<true>(e, dim);
}
// The running minimum along dim and where it was reached.
template <Expression E>
auto cummin(const E& e, int64_t dim) {
  return detail::cumulative_extremum_recorded<false>(e, dim);
}

template <Expression E>
auto cumsum(const E& e, int64_t dim) {
  using T = typename E::value_type;
  using Acc = detail::scan_acc_t<T>;
  auto out = detail::unrecorded([&] {
    return detail::scan<detail::sum_t<T>>(detail::unrecorded_tensor(e), dim, Acc(0), detail::ScanAdd{});
  });
  detail::record_op<autograd::tag::Cumsum>(out, e, e.dim() == 0 ? 0 : detail::wrap_dim(dim, e.dim()));
  return out;
}
template <Expression E>
auto cumprod(const E& e, int64_t dim) {
  using T = typename E::value_type;
  using Acc = detail::scan_acc_t<T>;
  auto out = detail::unrecorded([&] {
    return detail::scan<detail::sum_t<T>>(detail::unrecorded_tensor(e), dim, Acc(1), detail::ScanMultiply{});
  });
  detail::record_op<autograd::tag::Cumprod>(out, e, e.dim() == 0 ? 0 : detail::wrap_dim(dim, e.dim()));
  return out;
}

// log(cumsum(exp(x))) along dim without overflow: each step adds the next
// element in log space, in double for float inputs, as PyTorch's CPU kernel.
template <Expression E>
auto logcumsumexp(const E& e, int64_t dim) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "logcumsumexp: integer and bool tensors are not supported, as in PyTorch");
  using Acc = detail::scan_acc_t<T>;
  auto out = detail::unrecorded([&] {
    return detail::scan<T>(detail::unrecorded_tensor(e), dim, -std::numeric_limits<Acc>::infinity(),
                           detail::ScanLogAddExp{});
  });
  detail::record_op<autograd::tag::Logcumsumexp>(out, e, e.dim() == 0 ? 0 : detail::wrap_dim(dim, e.dim()));
  return out;
}

// The Vandermonde matrix of a 1-D x: columns of powers x^(n-1), ..., x, 1
// (increasing: 1, x, ..., x^(n-1)), n = x.numel() unless given; integer and
// bool x give int64, as in PyTorch. The powers are running products.
template <class T>
auto vander(const Tensor<T>& x, std::optional<int64_t> n = std::nullopt, bool increasing = false) {
  using R = std::conditional_t<is_floating_v<T>, T, int64_t>;
  detail::check(x.dim() == 1, "x must be a one-dimensional tensor.");
  const int64_t cols = n.value_or(x.numel());
  detail::check(cols >= 0, "N must be non-negative.");
  const Tensor<R> column = Tensor<R>(cast<R>(x)).unsqueeze(1);
  Tensor<R> powers = ones<R>({x.numel(), std::min<int64_t>(cols, 1)}, x.device());
  if (cols > 1) powers = cat({powers, cumprod(column.expand({x.numel(), cols - 1}), 1)}, 1);
  return increasing ? powers : flip(powers, {1});
}

}  // namespace tsr
