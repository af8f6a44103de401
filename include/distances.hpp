// Distances between the rows of matrices: cdist (every row of one against
// every row of another, over batches) and pdist (every pair of rows of one).
// p-norms of the rows' differences, through norm: differentiable, and
// cdist's differences are never stored (the norm reduces the expression).
#pragma once
#include "indexing.hpp"
#include "statistics.hpp"

namespace tsr {

// out[..., i, j] = the p-norm of x1[..., i, :] - x2[..., j, :] (p = 0 counts
// the differing elements, inf takes the largest difference); the batch dims
// broadcast. Computed directly for every p: PyTorch computes p = 2 through
// a matrix product for more than 25 rows, whose rounding can leave a small
// distance between equal rows.
template <class T>
Tensor<T> cdist(const Tensor<T>& x1, const Tensor<T>& x2, double p = 2) {
  static_assert(is_floating_v<T>, "cdist only supports floating-point dtypes");
  detail::check(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  detail::check(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  detail::check(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
                " X2: ", x2.size(-1));
  detail::check(p >= 0, "cdist only supports non-negative p values");
  const auto differences = x1.unsqueeze(-2) - x2.unsqueeze(-3);  // [..., P, R, M], never materialized
  return norm(differences, p, Shape{static_cast<int64_t>(differences.sizes().size()) - 1});
}

// The p-norms of x[i] - x[j] for every pair of rows i < j, in row-major
// order of the pairs (the upper triangle of cdist(x, x), flattened).
template <class T>
Tensor<T> pdist(const Tensor<T>& x, double p = 2) {
  static_assert(is_floating_v<T>, "pdist only supports floating-point dtypes");
  detail::check(x.dim() == 2, "pdist only supports 2D tensors, got: ", x.dim(), "D");
  detail::check(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = x.size(0), pairs = n * (n - 1) / 2;
  auto first = Tensor<int64_t>::allocate({pairs}), second = Tensor<int64_t>::allocate({pairs});
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j, ++k) first.data_ptr()[k] = i, second.data_ptr()[k] = j;
  const Tensor<int64_t> a = detail::placed_on(first, x.device()), b = detail::placed_on(second, x.device());
  return norm(index_select(x, 0, a) - index_select(x, 0, b), p, Shape{1});
}

}  // namespace tsr
