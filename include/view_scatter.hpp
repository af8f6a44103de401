// New tensors with one view of them written: select_scatter, slice_scatter,
// diagonal_scatter (a copy of x with the view replaced by src, which may be
// any expression of x's element type), diag_embed and diagflat (zeros with
// a diagonal filled in).
//
// Each is a copy, then copy_ into a view of it, so autograd sees an
// in-place write to a view: src receives the gradient of its slot, x the
// gradient everywhere else (PyTorch names these nodes SelectScatterBackward0
// and so on; here the write records CopySlices).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <type_traits>
#include "shape_ops.hpp"

namespace tsr {

namespace detail {
// x copied, with `slot_of(copy)` overwritten by src (which must fill it).
template <class T, class SlotOf>
Tensor<T> scatter_into_view(const Tensor<T>& x, const Tensor<T>& src, SlotOf slot_of) {
  const Shape slot_shape = slot_of(x).sizes();
  check(src.sizes() == slot_shape, "expected src to have a size equal to the slice of self. src size = ", src.sizes(),
        ", slice size = ", slot_shape);
  Tensor<T> out = x.clone();
  slot_of(out).copy_(src);
  return out;
}
}  // namespace detail

// x with x.select(dim, index) replaced by src.
template <class T>
Tensor<T> select_scatter(const Tensor<T>& x, const std::type_identity_t<Tensor<T>>& src, int64_t dim, int64_t index) {
  return detail::scatter_into_view(x, src, [&](const Tensor<T>& t) { return t.select(dim, index); });
}

// x with the slice start:end:step of dim replaced by src (unset bounds: the
// whole dim, as Python's).
template <class T>
Tensor<T> slice_scatter(const Tensor<T>& x, const std::type_identity_t<Tensor<T>>& src, int64_t dim = 0,
                        std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
                        int64_t step = 1) {
  detail::check(step > 0, "slice step must be positive");
  return detail::scatter_into_view(x, src, [&](const Tensor<T>& t) {
    const int64_t d = detail::wrap_dim(dim, t.dim());
    return t.slice(d, start.value_or(0), end.value_or(t.size(d)), step);
  });
}

// x with its diagonal (offset, dim1, dim2; see diagonal) replaced by src.
template <class T>
Tensor<T> diagonal_scatter(const Tensor<T>& x, const std::type_identity_t<Tensor<T>>& src, int64_t offset = 0,
                           int64_t dim1 = 0, int64_t dim2 = 1) {
  return detail::scatter_into_view(x, src, [&](const Tensor<T>& t) { return diagonal(t, offset, dim1, dim2); });
}

// A tensor whose 2-D planes along dim1 and dim2 are diagonal matrices with
// x's last dim on their offset-th diagonal; the other dims are x's leading
// ones. diag_embed of [2, 3] is [2, 3, 3].
template <class T>
Tensor<T> diag_embed(const Tensor<T>& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) {
  const int64_t rank = x.dim() + 1;
  const int64_t d1 = detail::wrap_dim(dim1, rank), d2 = detail::wrap_dim(dim2, rank);
  detail::check(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t side = x.size(-1) + std::abs(offset);
  Shape shape(x.sizes().begin(), x.sizes().end() - 1);
  shape.insert(static_cast<std::size_t>(std::min(d1, d2)), side);
  shape.insert(static_cast<std::size_t>(std::max(d1, d2)), side);
  Tensor<T> out = zeros<T>(shape, x.device());
  diagonal(out, offset, d1, d2).copy_(x);
  return out;
}

// The flattened x on the offset-th diagonal of a square matrix.
template <class T>
Tensor<T> diagflat(const Tensor<T>& x, int64_t offset = 0) {
  return diag(x.reshape({-1}), offset);
}

}  // namespace tsr
