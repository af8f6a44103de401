// The cross product of 3-vectors along a dim: tsr::linalg::cross (dim -1 by
// default) and tsr::cross (by default the first dim of size 3, as
// torch.cross without dim). Operands broadcast (with the same number of
// dims, as PyTorch 1.13 requires); each component is the difference of two
// products in the operands' type, as PyTorch's kernel computes it, written
// with recorded ops so that it differentiates to any order.
#pragma once
#include <cstdint>
#include <optional>

#include "shape_ops.hpp"

namespace tsr {
namespace linalg {
template <class T>
Tensor<T> cross(const Tensor<T>& a, const std::type_identity_t<Tensor<T>>& b, int64_t dim = -1) {
  detail::check(a.dim() == b.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = detail::wrap_dim(dim, a.dim());
  detail::check(a.size(d) == 3 && b.size(d) == 3, "linalg.cross: inputs dimension ", dim,
                " must have length 3. Got ", a.size(d), " and ", b.size(d));
  const Shape shape = detail::broadcast_shapes(a.sizes(), b.sizes());
  const Tensor<T> x = a.expand(shape), y = b.expand(shape);
  const auto at = [d](const Tensor<T>& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({Tensor<T>(at(x, 1) * at(y, 2) - at(x, 2) * at(y, 1)), Tensor<T>(at(x, 2) * at(y, 0) - at(x, 0) * at(y, 2)),
              Tensor<T>(at(x, 0) * at(y, 1) - at(x, 1) * at(y, 0))},
             d);
}
}  // namespace linalg

template <class T>
Tensor<T> cross(const Tensor<T>& a, const std::type_identity_t<Tensor<T>>& b, std::optional<int64_t> dim = std::nullopt) {
  if (!dim) {
    for (int64_t d = 0; d < a.dim() && !dim; ++d)
      if (a.size(d) == 3) dim = d;
    detail::check(dim.has_value(), "no dimension of size 3 in input");
  }
  return linalg::cross(a, b, *dim);
}

}  // namespace tsr
