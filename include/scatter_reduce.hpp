// scatter_reduce: src's elements reduced into a copy of self at the
// positions index names along dim ("sum", "prod", "mean", "amax", "amin";
// with include_self, self's own value takes part), with PyTorch's
// gradients for each reduction.
#pragma once
#include <string_view>
#include <vector>

#include "autograd/scatter_grad.hpp"
#include "index_reduce.hpp"

namespace tsr {
namespace detail {

enum class ScatterReduction { Sum, Prod, Mean, Amax, Amin };

inline ScatterReduction scatter_reduction(std::string_view reduce) {
  if (reduce == "sum") return ScatterReduction::Sum;
  if (reduce == "prod") return ScatterReduction::Prod;
  if (reduce == "mean") return ScatterReduction::Mean;
  if (reduce == "amax") return ScatterReduction::Amax;
  if (reduce == "amin") return ScatterReduction::Amin;
  fail<Error>("reduce argument must be either sum, prod, mean, amax or amin.");
}

// The reduction into self, a contiguous tensor on the CPU (the caller's
// own copy), in index order. Elements no index names keep their value.
template <class T>
void scatter_reduce_into(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& src,
                         ScatterReduction reduce, bool include_self) {
  using A = acc_t<T>;
  using R = ScatterReduction;
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check_indices(index, 0, size, dim);
  const int64_t step = self.dim() == 0 ? 0 : self.stride(dim);
  T* out = self.data_ptr();
  const T* from = src.data_ptr();
  // How many values each element holds: for the mean, and to know an
  // element's first value when self's own does not count.
  std::vector<int64_t> count;
  if (reduce == R::Mean || !include_self) count.assign(static_cast<std::size_t>(self.numel()), include_self ? 1 : 0);
  walk_index(index, dim, self.strides(), src.strides(), [&](int64_t v, int64_t self_off, int64_t src_off) {
    const int64_t o = self_off + v * step;
    const A s = convert<A>(from[src_off]), d = convert<A>(out[o]);
    if (!include_self && count[static_cast<std::size_t>(o)] == 0) {
      out[o] = from[src_off];
    } else {
      switch (reduce) {
        case R::Sum:
        case R::Mean: out[o] = convert<T>(d + s); break;
        case R::Prod: out[o] = convert<T>(d * s); break;
        case R::Amax: out[o] = better<true>(s, d) ? from[src_off] : out[o]; break;
        case R::Amin: out[o] = better<false>(s, d) ? from[src_off] : out[o]; break;
      }
    }
    if (!count.empty()) ++count[static_cast<std::size_t>(o)];
  });
  if (reduce != R::Mean) return;
  for (int64_t o = 0; o < self.numel(); ++o) {
    const int64_t c = count[static_cast<std::size_t>(o)];
    if (c <= 1) continue;
    if constexpr (std::is_integral_v<T>) out[o] = ops::FloorDivide{}(out[o], static_cast<T>(c));
    else out[o] = convert<T>(convert<A>(out[o]) / static_cast<A>(c));
  }
}

// The values of scatter_reduce, unrecorded, on self's device.
template <class T>
Tensor<T> scatter_reduce_values(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                                const Tensor<T>& src, ScatterReduction reduce, bool include_self) {
  if (src.device() != self.device()) [[unlikely]]
    fail_mixed_devices(self.device(), src.device());
  return unrecorded([&] {
    Tensor<T> out = host_contiguous(self).clone();
    scatter_reduce_into(out, dim, host_indices(index, self.device()), host_contiguous(src), reduce, include_self);
    return placed_on(out, self.device());
  });
}

}  // namespace detail

namespace autograd {
// PyTorch's gradients of scatter_reduce (its scatter_reduce_backward),
// written with recorded ops so that a recorded backward (create_graph)
// differentiates them again.
template <class T>
struct ScatterReduceRule {
  int64_t dim;
  Tensor<int64_t> index;
  SavedTensor<T> self, src, result;
  tsr::detail::ScatterReduction reduce;
  bool include_self, need_self, need_src;

  std::vector<GradRef> backward(const Tensor<T>& g) const {
    using R = tsr::detail::ScatterReduction;
    const Tensor<T> x = self.get(), s = src.get();
    const Tensor<int64_t> at = index;
    // The source's share of each gathered position (index may cover less than src).
    const auto to_src = [&](const Tensor<T>& t) { return detail_rules::padded_to(gather(t, dim, at), s.sizes()); };
    Tensor<T> gx, gs;
    switch (reduce) {
      case R::Sum:
        gx = g;
        gs = to_src(g);
        break;
      case R::Mean: {
        Tensor<T> n = include_self ? ones<T>(x.sizes(), x.device()) : zeros<T>(x.sizes(), x.device());
        n = scatter_add(n, dim, at, ones<T>(at.sizes(), x.device()));
        const Tensor<T> shared = g / masked_fill(n, n == T(0), T(1));
        gx = shared;
        gs = to_src(shared);
        break;
      }
      case R::Prod: {
        // Dividing the product by a factor that is 0 would lose the others:
        // self's zeros and src's lone zeros get the product without them.
        const Tensor<T> out = result.get();
        const Tensor<T> masked_self = masked_fill(x, x == T(0), T(1));
        gx = g * scatter_reduce(masked_self, dim, at, s, "prod", include_self) / masked_self;
        const Tensor<T> read = detail_rules::corner(s, at.sizes());
        const Tensor<bool> src_zero = read == T(0);
        const Tensor<T> zeros_there = gather(scatter_add(zeros<T>(x.sizes(), x.device()), dim, at, Tensor<T>(cast<T>(src_zero))), dim, at);
        const Tensor<bool> lone_zero = src_zero && (zeros_there == T(1));
        // (PyTorch's limit: its second derivative is not defined there.)
        tsr::detail::check(!tsr::detail::grad_mode_flag() || !any(zeros_there > T(1)).item(),
                           "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
                           "scattered to the same position. Please use reduce='sum' or 'mean' instead.");
        const Tensor<T> without_it = scatter_reduce(x, dim, at, masked_fill(s, detail_rules::padded_to(lone_zero, s.sizes()), T(1)), "prod", include_self);
        gs = detail_rules::padded_to(Tensor<T>(where(lone_zero, gather(Tensor<T>(g * without_it), dim, at),
                                                     gather(Tensor<T>(g * out), dim, at) / masked_fill(read, src_zero, T(1)))),
                                     s.sizes());
        break;
      }
      case R::Amax:
      case R::Amin: {
        // The gradient is shared evenly among the values equal to the result.
        const Tensor<T> out = result.get();
        const Tensor<T> value = gather(out, dim, at);
        const Tensor<T> self_is = cast<T>(x == out);
        const Tensor<T> src_is = cast<T>(detail_rules::corner(s, at.sizes()) == value);
        const Tensor<T> shared = g / scatter_add(self_is, dim, at, src_is);
        gx = self_is * shared;
        gs = detail_rules::padded_to(Tensor<T>(src_is * gather(shared, dim, at)), s.sizes());
        break;
      }
    }
    if (!include_self) gx = scatter(gx, dim, at, T(0));  // self's own value took no part where index points
    return {need_self ? gx.impl_ptr() : nullptr, need_src ? gs.impl_ptr() : nullptr};
  }
};
}  // namespace autograd

// A copy of self with src's elements reduced into it along dim: for dim 1,
// out[i][index[i][j][k]][k] = reduce(self's value if include_self, the
// src[i][j][k] pointing there). reduce is "sum", "prod", "mean" (integers:
// rounded down), "amax" or "amin" (NaN wins); elements no index names keep
// self's value. index has self's number of dims and at most src's sizes.
template <class T>
Tensor<T> scatter_reduce(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& src,
                         std::string_view reduce, bool include_self = true) {
  const auto r = detail::scatter_reduction(reduce);
  dim = detail::wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  detail::check_scatter_shapes(self, dim, index, &src);
  Tensor<T> out = detail::scatter_reduce_values(self, dim, index, src, r, include_self);
  if constexpr (is_floating_v<T>) {
    if (detail::grad_mode_flag() && (self.requires_grad() || src.requires_grad())) {
      auto es = detail::gradient_edge(self), ec = detail::gradient_edge(src);
      autograd::ScatterReduceRule<T> rule{dim, index, autograd::SavedTensor<T>(self), autograd::SavedTensor<T>(src),
                                          autograd::SavedTensor<T>::output(out), r, include_self, es != nullptr,
                                          ec != nullptr};
      autograd::set_rule(out, "ScatterReduceBackward0", std::move(rule), {std::move(es), std::move(ec)});
    }
  }
  return out;
}

// In place: self becomes scatter_reduce(self, ...).
template <class T>
Tensor<T>& scatter_reduce_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& src,
                           std::string_view reduce, bool include_self = true) {
  return self.copy_(scatter_reduce(self, dim, index, src, reduce, include_self));
}

}  // namespace tsr
