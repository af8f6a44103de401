// Materializing expressions: eval(e), e.eval(), e.item(), e.to_vector().
#pragma once
#include "detail/assign.hpp"

namespace tsr {

// Evaluates an expression into a new contiguous Tensor of its value type.
template <Expression E>
auto eval(const E& e) {
  return Tensor<typename E::value_type>(e);
}

template <class D>
auto ExprBase<D>::eval() const {
  return Tensor<typename D::value_type>(derived());
}
template <class D>
auto ExprBase<D>::item() const {
  if constexpr (std::is_same_v<D, Tensor<typename D::value_type>>) return derived().item();
  else return eval().item();
}
template <class D>
auto ExprBase<D>::to_vector() const {
  if constexpr (std::is_same_v<D, Tensor<typename D::value_type>>) return derived().to_vector();
  else return eval().to_vector();
}

}  // namespace tsr
