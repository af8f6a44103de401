// linalg.matrix_exp: the exponential of each square matrix, by scaling and
// squaring with the [13/13] Padé approximant (Higham, "The scaling and
// squaring method for the matrix exponential revisited", 2005), computed in
// double; and linalg.vecdot. Both differentiable.
#pragma once
#include <array>
#include <cmath>

#include "functions.hpp"

namespace tsr::linalg {
namespace detail_la {

// exp(A) of one n x n matrix in double (a contiguous tensor of its own),
// no autograd.
inline Tensor<double> pade13_exp(const Tensor<double>& a) {
  static constexpr std::array<double, 14> b = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                               1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                               670442572800.0,      33522128640.0,       1323241920.0,
                                               40840800.0,          960960.0,            16380.0,
                                               182.0,               1.0};
  // The largest 1-norm at which the approximant is exact to double's
  // precision (Higham's theta_13): larger matrices are scaled down by 2^s
  // first, and the result squared s times.
  constexpr double theta13 = 5.371920351148152;
  const int64_t n = a.size(0);
  const double norm1 = max(sum(abs(a), Shape{0})).item();
  const int s = norm1 > theta13 ? static_cast<int>(std::ceil(std::log2(norm1 / theta13))) : 0;
  const Tensor<double> x = a / std::ldexp(1.0, s);
  const Tensor<double> id = eye<double>(n);
  const Tensor<double> x2 = mm(x, x), x4 = mm(x2, x2), x6 = mm(x4, x2);
  const Tensor<double> u_inner = x6 * b[13] + x4 * b[11] + x2 * b[9];
  const Tensor<double> u = mm(x, Tensor<double>(mm(x6, u_inner) + x6 * b[7] + x4 * b[5] + x2 * b[3] + id * b[1]));
  const Tensor<double> v_inner = x6 * b[12] + x4 * b[10] + x2 * b[8];
  const Tensor<double> v = mm(x6, v_inner) + x6 * b[6] + x4 * b[4] + x2 * b[2] + id * b[0];
  Tensor<double> r = solve(Tensor<double>(v - u), Tensor<double>(v + u));
  for (int i = 0; i < s; ++i) r = mm(r, r);
  return r;
}

// exp of every matrix of a (*, n, n), unrecorded.
template <class T>
Tensor<T> matrix_exp_values(const Tensor<T>& a) {
  return detail::unrecorded([&] {
    const int64_t n = a.size(-1);
    if (a.numel() == 0) return Tensor<T>::allocate(a.sizes(), a.device());
    const Tensor<double> all = cast<double>(a).eval().reshape({-1, n, n});
    Tensor<double> out = Tensor<double>::allocate(all.sizes());
    for (int64_t i = 0; i < all.size(0); ++i) out.select(0, i).copy_(pade13_exp(all.select(0, i).contiguous()));
    return Tensor<T>(cast<T>(out.view(a.sizes())));
  });
}

}  // namespace detail_la

// exp(A) = I + A + A^2/2! + ... for each matrix of A (*, n, n). Its
// gradient, as PyTorch's, is the upper right block of the exponential of
// [[A^T, G], [0, A^T]], so a recorded backward differentiates it again.
template <Expression EA>
Tensor<typename EA::value_type> matrix_exp(const EA& ea) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check_square_matrices(a, "linalg.matrix_exp");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>("linalg.matrix_exp", "matrix_exp_cpu");
  } else {
    Tensor<T> out = detail_la::matrix_exp_values(a);
    if (detail::grad_mode_flag() && a.requires_grad()) {
      struct Rule {
        autograd::SavedTensor<T> a;
        std::vector<autograd::GradRef> backward(const Tensor<T>& g) const {
          const Tensor<T> at = a.get().transpose(-1, -2);
          const int64_t n = at.size(-1);
          const Tensor<T> top = cat({at, g}, -1), bottom = cat({zeros_like(at), at}, -1);
          const Tensor<T> e = matrix_exp(cat({top, bottom}, -2));
          return {e.narrow(-2, 0, n).narrow(-1, n, n).contiguous().impl_ptr()};
        }
      };
      autograd::set_rule(out, "LinalgMatrixExpBackward0", Rule{autograd::SavedTensor<T>(a)},
                         {detail::gradient_edge(a)});
    }
    return out;
  }
}

// The dot products of x and y along dim (they broadcast), torch.linalg.vecdot
// for real tensors.
template <Expression EX, Expression EY>
auto vecdot(const EX& x, const EY& y, int64_t dim = -1) {
  const auto product = x * y;
  return sum(product, Shape{detail::wrap_dim(dim, static_cast<int64_t>(product.sizes().size()))});
}

}  // namespace tsr::linalg
