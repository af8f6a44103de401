// linalg.tensorinv and linalg.tensorsolve: inv and solve of a tensor seen as
// a matrix (its leading dims the rows, the rest the columns), differentiable
// through inv, solve and reshapes.
#pragma once
#include <cstdint>
#include <optional>

#include "functions.hpp"

namespace tsr::linalg {

// The inverse of A with respect to tensordot over `ind` dims: A's first ind
// dims form the rows and the others the columns of a square matrix, whose
// inverse is returned with the shape A.shape[ind:] + A.shape[:ind].
template <Expression EA>
Tensor<typename EA::value_type> tensorinv(const EA& ea, int64_t ind = 2) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check(ind > 0, "Expected a strictly positive integer for 'ind', but got ", ind);
  detail::check(ind <= a.dim(), "linalg.tensorinv: Expected 'ind' to be at most the number of dims of the input (",
                a.dim(), "), but got ", ind);
  const Shape rows(a.sizes().begin(), a.sizes().begin() + ind), cols(a.sizes().begin() + ind, a.sizes().end());
  const int64_t n = detail::numel_of(rows);
  detail::check(detail::numel_of(cols) == n,
                "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got ",
                detail::numel_of(cols), " != ", n);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>("linalg.inv", nullptr);
  } else {
    Shape shape = cols;
    for (const int64_t r : rows) shape.push_back(r);
    return std::get<0>(detail_la::inverse_with_info(a.reshape({n, n}), "inv", true)).reshape(shape);
  }
}

// X with tensordot(A, X, X.dim()) = B: A's first B.dim() dims form the rows
// (as many elements as B) and the rest the columns, X's shape; `dims`, if
// given, are dims of A moved to the end first.
template <Expression EA, Expression EB>
Tensor<typename EA::value_type> tensorsolve(const EA& ea, const EB& eb, const std::optional<Shape>& dims = std::nullopt) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename EB::value_type>,
                "linalg.tensorsolve: A and B must have the same dtype; cast one with tsr::cast<T>");
  Tensor<T> a(ea);
  const Tensor<T> b(eb);
  if (dims) {
    Shape ends;
    for (std::size_t i = 0; i < dims->size(); ++i) ends.push_back(a.dim() - static_cast<int64_t>(dims->size() - i));
    a = movedim(a, *dims, ends);
  }
  const Shape result(a.sizes().begin() + std::min(b.dim(), a.dim()), a.sizes().end());
  const int64_t n = detail::numel_of(result);
  detail::check(n == b.numel(),
                "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                "prod(self.shape[:other.ndim]), but got ",
                n, " != ", b.numel());
  return solve(a.reshape({n, n}), b.reshape({n})).reshape(result);
}

}  // namespace tsr::linalg
