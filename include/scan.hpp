// Inclusive scans along a dim: cumsum and cumprod. Integer and bool inputs
// give int64 (PyTorch's rule); floats accumulate in double, as PyTorch's CPU
// kernels do, so long scans do not drift.
#pragma once
#include <memory>

#include "reduce_dims.hpp"

namespace tsr {
namespace detail {

template <class T>
using scan_acc_t = std::conditional_t<is_floating_v<T>, double, int64_t>;

// out[..., i, ...] = op(out[..., i - 1, ...], x[..., i, ...]) along dim, for
// a contiguous x viewed as [outer, len, inner]: the running values of a whole
// row of `inner` elements advance together (vectorizable, no strided walk).
template <class Out, class Acc, class T, class Op>
Tensor<Out> scan(const Tensor<T>& input, int64_t dim, Acc init, Op op) {
  const Tensor<T> x = input.contiguous();
  auto out = Tensor<Out>::allocate(x.sizes());
  if (x.numel() == 0) return out;
  dim = wrap_dim(dim, x.dim());
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t s = x.sizes()[static_cast<std::size_t>(d)];
    if (d < dim) outer *= s;
    else if (d == dim) len = s;
    else inner *= s;
  }
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

}  // namespace detail

template <Expression E>
auto cumsum(const E& e, int64_t dim) {
  using T = typename E::value_type;
  using Acc = detail::scan_acc_t<T>;
  auto out = detail::unrecorded([&] {
    return detail::scan<detail::sum_t<T>>(detail::unrecorded_tensor(e), dim, Acc(0),
                                          [](Acc a, Acc b) { return a + b; });
  });
  detail::record_op<autograd::tag::Cumsum>(out, e, e.dim() == 0 ? 0 : detail::wrap_dim(dim, e.dim()));
  return out;
}
template <Expression E>
auto cumprod(const E& e, int64_t dim) {
  using T = typename E::value_type;
  using Acc = detail::scan_acc_t<T>;
  auto out = detail::unrecorded([&] {
    return detail::scan<detail::sum_t<T>>(detail::unrecorded_tensor(e), dim, Acc(1),
                                          [](Acc a, Acc b) { return a * b; });
  });
  detail::record_op<autograd::tag::Cumprod>(out, e, e.dim() == 0 ? 0 : detail::wrap_dim(dim, e.dim()));
  return out;
}

}  // namespace tsr
