// Sorting along a dim: sort, argsort and topk, with int64 indices.
//
// NaN sorts above +inf (last ascending, first descending), as in PyTorch.
// Equal elements keep their input order, so every sort here is stable
// (PyTorch's stable=True) and topk returns the first occurrences of ties.
#pragma once
#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "shape_ops.hpp"

namespace tsr {
namespace detail {

// a before b in ascending order, NaN greatest.
template <class A>
TSR_HOST_DEVICE bool sorts_before(A a, A b) {
  if constexpr (is_floating_v<A>) {
    if (b != b) return a == a;
    if (a != a) return false;
  }
  return a < b;
}

// The device backend's form (cuda/sort.hpp), in translation units that
// have it: values and indices of the first k of each line of a contiguous
// `lines` (its last dim), sorted.
namespace cuda {
template <class T>
void sort_lines(const Tensor<T>& values, const Tensor<int64_t>& indices, const Tensor<T>& lines, bool descending);
}  // namespace cuda

template <class T>
std::tuple<Tensor<T>, Tensor<int64_t>> sort_lines_on_device(const Tensor<T>& x, int64_t dim, int64_t k,
                                                             bool descending) {
  if constexpr (kCudaBackend) {
    const NoGradGuard no_grad;  // the caller records the result
    // The lines along the last dim (a 0-d x is one line of one).
    const int64_t last = x.dim() - 1;
    const Tensor<T> lines = x.dim() == 0 ? x.reshape({1}) : x.transpose(dim, last).contiguous();
    Shape shape = lines.sizes();
    shape.back() = k;
    auto values = Tensor<T>::allocate(shape, x.device());
    auto indices = Tensor<int64_t>::allocate(shape, x.device());
    cuda::sort_lines(values, indices, lines, descending);
    if (x.dim() == 0) return {values.reshape({}), indices.reshape({})};
    return {values.transpose(dim, last).contiguous(), indices.transpose(dim, last).contiguous()};
  } else {
    fail_compiled_without_cuda(x.device(), "sorting");
  }
}

// Calls visit(o, j, in, line, order) for every line along dim of a
// contiguous c: (o, j) its place in c seen as [outer, len, inner], `in` its
// first element (the others s.inner apart), `line` its values in the compute
// type, `order` the positions 0 .. len - 1, scratch for visit to permute.
// Sorting and the order statistics (order_statistics.hpp) read lines so.
template <class T, class Visit>
void for_each_line(const Tensor<T>& c, int64_t dim, int64_t cost, Visit visit) {
  const DimSplit s = split_at(c.sizes(), dim);
  const T* src = c.data_ptr();
  using A = acc_t<T>;
  run_units(s.outer * s.inner, cost, [&](int64_t u0, int64_t u1) {
    std::vector<int64_t> order(static_cast<std::size_t>(s.len));
    std::vector<A> line(static_cast<std::size_t>(s.len));
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t o = u / s.inner, j = u % s.inner;
      const T* in = src + o * s.len * s.inner + j;
      for (int64_t i = 0; i < s.len; ++i) line[static_cast<std::size_t>(i)] = convert<A>(in[i * s.inner]);
      std::iota(order.begin(), order.end(), int64_t{0});
      visit(o, j, in, line, order);
    }
  });
}

// Sorts each line along dim and writes the first k of each: values and
// their positions. Ties break by position, which makes the order total.
template <class T>
std::tuple<Tensor<T>, Tensor<int64_t>> sort_lines(const Tensor<T>& x, int64_t dim, int64_t k, bool descending) {
  if (!x.device().is_cpu()) return sort_lines_on_device(x, dim, k, descending);
  const Tensor<T> c = x.contiguous();
  Shape shape = c.sizes();
  if (!shape.empty()) shape[static_cast<std::size_t>(dim)] = k;
  auto values = Tensor<T>::allocate(shape);
  auto indices = Tensor<int64_t>::allocate(shape);
  const int64_t len = c.dim() == 0 ? 1 : c.size(dim), inner = split_at(c.sizes(), dim).inner;
  T* vout = values.data_ptr();
  int64_t* iout = indices.data_ptr();
  for_each_line(c, dim, c.numel() * 8, [&](int64_t o, int64_t j, const T* in, const auto& line, auto& order) {
    using A = typename std::decay_t<decltype(line)>::value_type;
    auto before = [&](int64_t a, int64_t b) {
      const A va = line[static_cast<std::size_t>(a)], vb = line[static_cast<std::size_t>(b)];
      if (descending ? sorts_before(vb, va) : sorts_before(va, vb)) return true;
      if (descending ? sorts_before(va, vb) : sorts_before(vb, va)) return false;
      return a < b;
    };
    if (k < len) std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    else std::sort(order.begin(), order.end(), before);
    const int64_t base = o * k * inner + j;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t from = order[static_cast<std::size_t>(i)];
      vout[base + i * inner] = in[from * inner];
      iout[base + i * inner] = from;
    }
  });
  return {std::move(values), std::move(indices)};
}

}  // namespace detail

// The elements sorted along dim and where each came from: {values, indices}.
template <Expression E>
auto sort(const E& e, int64_t dim = -1, bool descending = false) {
  using T = typename E::value_type;
  const Tensor<T> x(e);
  dim = detail::wrap_dim(dim, x.dim());
  auto r = detail::sort_lines(x, dim, x.dim() == 0 ? 1 : x.size(dim), descending);
  detail::record_op<autograd::tag::Sort>(std::get<0>(r), x, dim, std::get<1>(r), "SortBackward0");
  return r;
}

// The positions that sort x along dim.
template <Expression E>
Tensor<int64_t> argsort(const E& e, int64_t dim = -1, bool descending = false) {
  const NoGradGuard no_grad;  // positions have no gradient
  const auto x = detail::unrecorded_tensor(e);
  dim = detail::wrap_dim(dim, x.dim());
  return std::get<1>(detail::sort_lines(x, dim, x.dim() == 0 ? 1 : x.size(dim), descending));
}

// The k largest (or smallest) elements along dim, in order, and their
// positions: {values, indices}.
template <Expression E>
auto topk(const E& e, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) {
  (void)sorted;  // always sorted: the unsorted order is unspecified in PyTorch
  using T = typename E::value_type;
  static_assert(!std::is_same_v<T, bool>, "topk: bool tensors are not supported, as in PyTorch");
  const Tensor<T> x(e);
  dim = detail::wrap_dim(dim, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  detail::check(k >= 0 && k <= n, "selected index k out of range");
  auto r = detail::sort_lines(x, dim, k, largest);
  detail::record_op<autograd::tag::Sort>(std::get<0>(r), x, dim, std::get<1>(r), "TopkBackward0");
  return r;
}

}  // namespace tsr
