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

}  // namespace detail_rules

}  // namespace tsr::autograd
