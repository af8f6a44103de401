// Reductions that return positions: max/min over a dim with their indices,
// argmax and argmin. Ties give the first occurrence; NaN wins and the first
// NaN's index is returned, as in PyTorch.
#pragma once
#include <memory>
#include <tuple>

#include "reduce_dims.hpp"

namespace tsr {
namespace detail {

// Whether v replaces the current best b (Max: greater, Min: smaller, NaN
// always, unless b is already NaN).
template <bool Max, class A>
TSR_HOST_DEVICE inline bool better(A v, A b) {
  if constexpr (is_floating_v<A>) {
    if (b != b) return false;
    if (v != v) return true;
  }
  return Max ? v > b : v < b;
}

// values[o] and indices[o] for every output o of reducing e over dim.
template <bool Max, class T, Expression E>
void index_reduce_into(T* values, int64_t* indices, const E& e, int64_t dim) {
  const ReducePlan rp = make_reduce_plan(e, uint64_t{1} << dim);
  if (rp.outputs == 0) return;
  using A = acc_t<T>;
  const Plan& p = rp.plan;
  const auto ev = e.evaluator(p);
  const int64_t len = rp.count;
  if (!rp.kept_inner) {  // the reduced dim is the inner one: scan each row
    run_units(rp.outputs, rp.outputs * len, [&](int64_t ob, int64_t oe) {
      auto local = ev;
      int64_t idx[kMaxEvalDims];
      for (int64_t o = ob; o < oe; ++o) {
        rp.set_outer(o, idx);
        idx[p.ndim - 1] = 0;
        local.set_row(idx, p.ndim);
        A best = convert<A>(local[0]);
        int64_t at = 0;
        for (int64_t i = 1; i < len; ++i) {
          const A v = convert<A>(local[i]);
          if (better<Max>(v, best)) best = v, at = i;
        }
        values[o] = convert<T>(best);
        indices[o] = at;
      }
    });
    return;
  }
  // The reduced dim is outer: walk its rows, comparing a chunk of columns.
  for_each_column_unit(rp, ev, [&](auto& local, int64_t* idx, int64_t at, int64_t width) {
    std::unique_ptr<A[]> best(new A[static_cast<std::size_t>(width)]);
    for (int64_t r = 0; r < len; ++r) {
      rp.set_row(r, idx, local);
      for (int64_t j = 0; j < width; ++j) {
        const A v = convert<A>(local[j]);
        if (r == 0 || better<Max>(v, best[j])) best[j] = v, indices[at + j] = r;
      }
    }
    for (int64_t j = 0; j < width; ++j) values[at + j] = convert<T>(best[j]);
  });
}

// The device backend's form (cuda/reduce.hpp), in translation units that
// have it: one thread per output scans the reduced dim.
namespace cuda {
template <bool Max, class T, class E>
void index_reduce_into(const Tensor<T>& values, const Tensor<int64_t>& indices, const E& e, const ReducePlan& rp);
}  // namespace cuda

template <bool Max, class T, Expression E>
void index_reduce_on_device(const Tensor<T>& values, const Tensor<int64_t>& indices, const E& e, int64_t dim) {
  check_same_device(values.device(), e);
  if constexpr (kCudaBackend) {
    ReducePlan rp = make_reduce_plan(e, uint64_t{1} << dim);
    rp.plan.on_device = true;
    cuda::index_reduce_into<Max>(values, indices, e, rp);
  } else {
    fail_compiled_without_cuda(values.device(), "max/min over a dimension");
  }
}

// The values and indices, unrecorded (argmax and argmin use the indices
// alone: recording would compile a node that never runs).
template <bool Max, Expression E>
std::tuple<Tensor<typename E::value_type>, Tensor<int64_t>> index_reduce_unrecorded(const E& e, int64_t dim,
                                                                                     bool keepdim, const char* name) {
  using T = typename E::value_type;
  dim = wrap_dim(dim, e.dim());
  if (e.dim() > 0)
    check<IndexError>(e.sizes()[static_cast<std::size_t>(dim)] != 0, name, "(): Expected reduction dim ", dim,
          " to have non-zero size.");
  const Shape shape = reduced_shape(e.sizes(), e.dim() == 0 ? 0 : uint64_t{1} << dim, keepdim);
  const Device device = expr_device(e);
  auto values = Tensor<T>::allocate(shape, device);
  auto indices = Tensor<int64_t>::allocate(shape, device);
  if (device.is_cpu()) index_reduce_into<Max>(values.data_ptr(), indices.data_ptr(), e, e.dim() == 0 ? 0 : dim);
  else index_reduce_on_device<Max>(values, indices, e, e.dim() == 0 ? 0 : dim);
  return std::make_tuple(std::move(values), std::move(indices));
}

template <bool Max, Expression E>
auto index_reduce(const E& e, int64_t dim, bool keepdim, const char* name) {
  auto result = index_reduce_unrecorded<Max>(e, dim, keepdim, name);
  record_op<autograd::tag::IndexReduce>(std::get<0>(result), e, e.dim() == 0 ? 0 : wrap_dim(dim, e.dim()),
                                        std::get<1>(result), Max ? "MaxBackward0" : "MinBackward0");
  return result;
}

}  // namespace detail

// The largest values along dim and their indices: auto [v, i] = max(x, 1);
template <Expression E>
auto max(const E& e, int64_t dim, bool keepdim = false) {
  return detail::index_reduce<true>(e, dim, keepdim, "max");
}
template <Expression E>
auto min(const E& e, int64_t dim, bool keepdim = false) {
  return detail::index_reduce<false>(e, dim, keepdim, "min");
}
template <Expression E>
auto argmax(const E& e, int64_t dim, bool keepdim = false) {
  static_assert(!std::is_same_v<typename E::value_type, bool>, "argmax: bool tensors are not supported, as in PyTorch");
  return std::get<1>(detail::index_reduce_unrecorded<true>(e, dim, keepdim, "argmax"));
}
template <Expression E>
auto argmin(const E& e, int64_t dim, bool keepdim = false) {
  static_assert(!std::is_same_v<typename E::value_type, bool>, "argmin: bool tensors are not supported, as in PyTorch");
  return std::get<1>(detail::index_reduce_unrecorded<false>(e, dim, keepdim, "argmin"));
}
// Over all elements: the index into the flattened input.
template <Expression E>
auto argmax(const E& e) {
  static_assert(!std::is_same_v<typename E::value_type, bool>, "argmax: bool tensors are not supported, as in PyTorch");
  detail::check_nonempty_for_index(e, "argmax");
  const NoGradGuard no_grad;  // the flattening view is not part of a graph
  const auto flat = detail::unrecorded_tensor(e).reshape({-1});
  return std::get<1>(detail::index_reduce_unrecorded<true>(flat, 0, false, "argmax"));
}
template <Expression E>
auto argmin(const E& e) {
  static_assert(!std::is_same_v<typename E::value_type, bool>, "argmin: bool tensors are not supported, as in PyTorch");
  detail::check_nonempty_for_index(e, "argmin");
  const NoGradGuard no_grad;  // the flattening view is not part of a graph
  const auto flat = detail::unrecorded_tensor(e).reshape({-1});
  return std::get<1>(detail::index_reduce_unrecorded<false>(flat, 0, false, "argmin"));
}

}  // namespace tsr
