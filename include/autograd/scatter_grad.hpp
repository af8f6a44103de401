// Gradients that go back to scattered positions (index_select, gather,
// sort, max along a dim, masked_select): zeros with the gradient scattered
// in, computed so that a recorded backward (create_graph) records it.
#pragma once
#include "../indexing.hpp"
#include "function_node.hpp"

namespace tsr::autograd {
namespace detail_rules {

// Zeros of `sizes` with g scattered (add: scatter-added) at index along dim:
// in place into the zeros, or through the recorded out-of-place forms when
// the backward is recorded (create_graph) and g has a history.
template <class T>
Tensor<T> scattered(const Shape& sizes, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& g, bool add) {
  auto gx = zeros<T>(sizes, g.device());
  if (tsr::detail::grad_mode_flag() && g.requires_grad()) return add ? scatter_add(gx, dim, index, g) : scatter(gx, dim, index, g);
  return add ? scatter_add_(gx, dim, index, g) : scatter_(gx, dim, index, g);
}

// t's leading corner of `sizes` (a view): the part of an op's input that an
// index of those sizes reads (scatter's src may be larger than its index).
template <class T>
Tensor<T> corner(const Tensor<T>& t, const Shape& sizes) {
  Tensor<T> out = t;
  for (int64_t d = 0; d < out.dim(); ++d) out = out.narrow(d, 0, sizes[static_cast<std::size_t>(d)]);
  return out;
}

// t in the leading corner of zeros of `sizes` (t itself when it has them):
// the gradient of an input an index read only part of.
template <class T>
Tensor<T> padded_to(const Tensor<T>& t, const Shape& sizes) {
  if (t.sizes() == sizes) return t;
  auto padded = zeros<T>(sizes, t.device());
  corner(padded, t.sizes()).copy_(t);  // recorded under create_graph (CopySlices)
  return padded;
}

}  // namespace detail_rules

}  // namespace tsr::autograd
