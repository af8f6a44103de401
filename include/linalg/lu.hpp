// The LU family of PyTorch 1.13: linalg.lu_factor, lu_factor_ex, lu and
// lu_solve, and torch.lu_unpack and torch.lu_solve, for float and double
// matrices on the CPU, square or not (lu_solve: square), in batches.
//
// P A = L U with partial pivoting (LAPACK's getrf): for A (*, m, n) and
// k = min(m, n), L is m x k with a unit diagonal, U is k x n, and P is the
// m x m permutation. The packed form holds L's multipliers below the
// diagonal and U on and above it; pivots are PyTorch's: int32, 1-based,
// row j swapped with row pivots[j] at step j.
//
// All are differentiable, to any order. lu_factor records one node whose
// backward is PyTorch's (written with solve_triangular, so a recorded
// backward records it in turn); lu is lu_factor followed by lu_unpack, and
// lu_unpack and lu_solve are made of recorded ops (tril, triu, gathers and
// solve_triangular, which reads one triangle of the packed factors).
#pragma once
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "functions.hpp"

namespace tsr::linalg {
namespace detail_la {

// A (*, m, n): at least two dims and on the CPU.
template <class T>
void check_matrices(const Tensor<T>& a, const char* fn) {
  detail::check(a.dim() >= 2, fn, ": Expected tensor with 2 or more dimensions. Got size: ", a.sizes(), " instead");
  detail::check_on_cpu(a, fn);
}

template <class I>
constexpr void require_int32_pivots() {
  static_assert(std::is_same_v<I, int32_t>,
                "pivots must be Tensor<int32_t>, as linalg.lu_factor returns them (PyTorch: pivots should be a "
                "Tensor of scalar type torch.int32)");
}

// The row order of each factorization's permutation, from its pivots
// (*, k; 1-based, checked to lie in [1, m]): P^T A = A[order] along the
// rows. `order(inverse)` gives it, or its inverse (P X = X[inverse]), as
// an index of shape (*, m, 1) for take_along_dim.
class RowOrder {
 public:
  RowOrder(const Tensor<int32_t>& pivots, int64_t m, const char* too_large, const char* too_small)
      : batch_(pivots.sizes().begin(), pivots.sizes().end() - 1), m_(m) {
    const int64_t k = pivots.size(-1), count = detail::numel_of(batch_);
    const std::vector<int32_t> p = pivots.contiguous().to_vector();
    for (const int32_t v : p) {
      detail::check(v <= m, too_large);
      detail::check(v >= 1, too_small);
    }
    order_.resize(static_cast<std::size_t>(count * m));
    for (int64_t b = 0; b < count; ++b) {
      int64_t* order = order_.data() + b * m;
      for (int64_t i = 0; i < m; ++i) order[i] = i;
      for (int64_t j = 0; j < k; ++j) std::swap(order[j], order[p[static_cast<std::size_t>(b * k + j)] - 1]);
    }
  }
  Tensor<int64_t> order(bool inverse) const {
    Shape shape = batch_;
    shape.push_back(m_);
    shape.push_back(1);
    auto out = Tensor<int64_t>::allocate(shape);
    int64_t* o = out.data_ptr();
    for (std::size_t b = 0; b * static_cast<std::size_t>(m_) < order_.size(); ++b)
      for (int64_t i = 0; i < m_; ++i) {
        const int64_t v = order_[b * static_cast<std::size_t>(m_) + static_cast<std::size_t>(i)];
        if (inverse)
          o[static_cast<int64_t>(b) * m_ + v] = i;
        else
          o[static_cast<int64_t>(b) * m_ + i] = v;
      }
    return out;
  }
  // P itself, (*, m, m): P[order[i], i] = 1.
  template <class T>
  Tensor<T> matrix() const {
    Shape shape = batch_;
    shape.push_back(m_);
    shape.push_back(m_);
    Tensor<T> p = zeros<T>(shape);
    T* d = p.data_ptr();
    for (std::size_t b = 0; b * static_cast<std::size_t>(m_) < order_.size(); ++b)
      for (int64_t i = 0; i < m_; ++i)
        d[static_cast<int64_t>(b) * m_ * m_ + order_[b * static_cast<std::size_t>(m_) + static_cast<std::size_t>(i)] * m_ +
          i] = T(1);
    return p;
  }

 private:
  Shape batch_;
  int64_t m_;
  std::vector<int64_t> order_;
};

// The index of RowOrder::order for columns: (*, 1, m).
inline Tensor<int64_t> as_columns(const Tensor<int64_t>& order) { return order.transpose(-1, -2); }

// x's rows (dim -2) or columns (dim -1) in the order of `index` (of
// RowOrder::order or as_columns), their batch dims broadcast against each
// other (take_along_dim wants as many dims in both).
template <class T>
Tensor<T> permuted(Tensor<T> x, Tensor<int64_t> index, int64_t dim) {
  while (x.dim() < index.dim()) x = x.unsqueeze(0);
  while (index.dim() < x.dim()) index = index.unsqueeze(0);
  return take_along_dim(x, index, dim);
}

// L (m x k, unit diagonal) and U (k x n) of packed factors (*, m, n), as
// recorded ops; strictly_lower is L without its diagonal (the part of the
// packed factors, or of their gradient, that is L's).
template <class T>
Tensor<T> strictly_lower(const Tensor<T>& lu) {
  return tril(lu.narrow(-1, 0, std::min(lu.size(-2), lu.size(-1))), -1);
}
template <class T>
Tensor<T> unit_lower(const Tensor<T>& lu) {
  return Tensor<T>(strictly_lower(lu) + eye<T>(lu.size(-2), std::min(lu.size(-2), lu.size(-1))));
}
template <class T>
Tensor<T> upper(const Tensor<T>& lu) {
  return triu(lu.narrow(-2, 0, std::min(lu.size(-2), lu.size(-1))));
}

// A's gradient for the gradients of L and U, where P A = L U (PyTorch's
// linalg_lu_backward): with L1, U1 the leading k x k blocks,
//   square: P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T;
//   wide (m < n, U = [U1 U2]): L depends on A's first m columns alone, and
//     U2 = L^-1 P^T A2, so gU2 enters L's gradient: the lower part becomes
//     tril(L^T gL - gU2 U2^T, -1) and A2's gradient is P L^-T gU2;
//   tall (m > n, L = [L1; L2]): likewise L2 = (P^T A)2 U^-1, so the upper
//     part becomes triu(gU U^T - L2^T gL2) and the rows of L2 get gL2 U^-T.
template <class T>
Tensor<T> lu_backward(const Tensor<T>& gl, const Tensor<T>& gu, const RowOrder& order, const Tensor<T>& l,
                      const Tensor<T>& u) {
  const int64_t m = l.size(-2), n = u.size(-1), k = l.size(-1);
  const auto mT = [](const Tensor<T>& t) { return t.transpose(-1, -2); };
  const Tensor<T> l1 = l.narrow(-2, 0, k), u1 = u.narrow(-1, 0, k);
  Tensor<T> lower = matmul(mT(l1), gl.narrow(-2, 0, k)), above = matmul(gu.narrow(-1, 0, k), mT(u1));
  if (m < n) lower = Tensor<T>(lower - matmul(gu.narrow(-1, k, n - k), mT(u.narrow(-1, k, n - k))));
  if (m > n) above = Tensor<T>(above - matmul(mT(l.narrow(-2, k, m - k)), gl.narrow(-2, k, m - k)));
  const Tensor<T> phi = tril(lower, -1) + triu(above);
  // L1^-T X: a solve with L1^T, upper with a unit diagonal.
  const auto left_l1 = [&](const Tensor<T>& x) { return solve_triangular(mT(l1), x, true, true, true); };
  // X U1^-T: a solve from the right with U1^T, lower.
  const auto right_u1 = [&](const Tensor<T>& x) { return solve_triangular(mT(u1), x, false, false); };
  Tensor<T> ga;
  if (m == n)
    ga = right_u1(left_l1(phi));
  else if (m < n)
    ga = left_l1(cat({right_u1(phi), gu.narrow(-1, k, n - k)}, -1));
  else
    ga = right_u1(cat({left_l1(phi), gl.narrow(-2, k, m - k)}, -2));
  return take_along_dim(ga, order.order(/*inverse=*/true), -2);
}

// The packed factors (*, m, n), 0-based pivots (count x k) and each
// matrix's info (0, or 1 + the first zero pivot's index) of a copy of A.
template <class T>
struct Factored {
  Tensor<T> lu;
  Tensor<int32_t> pivots;
  std::vector<int64_t> info;
};
template <class T>
Factored<T> factor(const Tensor<T>& a, bool pivot) {
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const Shape batch = detail::batch_of(a);
  const int64_t count = detail::numel_of(batch);
  Factored<T> f{detail::dense_copy(a, a.sizes()), Tensor<int32_t>(), std::vector<int64_t>(static_cast<std::size_t>(count))};
  std::vector<int64_t> piv(static_cast<std::size_t>(count * k));
  if (count > 0 && m * n > 0)
    detail::for_each_matrix(count, [&](int64_t i, bool parallel) {
      f.info[static_cast<std::size_t>(i)] =
          detail::lu_factor(f.lu.data_ptr() + i * m * n, m, n, piv.data() + i * k, parallel, pivot);
    });
  Shape pivot_shape = batch;
  pivot_shape.push_back(k);
  f.pivots = Tensor<int32_t>::allocate(pivot_shape);
  for (std::size_t i = 0; i < piv.size(); ++i) f.pivots.data_ptr()[i] = static_cast<int32_t>(piv[i] + 1);
  return f;
}

// lu_factor_ex's work (fn, for the messages): the factors with their node,
// the pivots and the infos; a zero pivot throws with check_errors.
template <class T>
std::tuple<Tensor<T>, Tensor<int32_t>, Tensor<int32_t>> lu_factor_with_info(const Tensor<T>& a, bool pivot,
                                                                              const char* fn, const char* dims_fn,
                                                                              bool check_errors) {
  check_matrices(a, dims_fn);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>(fn, "lu_cpu");
  } else {
    Factored<T> f = factor(a, pivot);
    if (const int64_t bad = detail::first_failure(f.info); bad >= 0 && check_errors) {
      const int64_t v = f.info[static_cast<std::size_t>(bad)];
      detail::fail<Error>("torch.", fn, ": ", detail::batch_element(a.dim() > 2, bad), "U[", v, ",", v,
                          "] is zero and using it on lu_solve would result in a division by zero. If you still want "
                          "to perform the factorization, consider calling linalg.lu(A, pivot) or "
                          "linalg.lu_factor_ex(A, pivot)");
    }
    if (detail::grad_mode_flag() && a.requires_grad()) {
      struct Rule {
        autograd::SavedTensor<T> lu;
        Tensor<int32_t> pivots;
        std::vector<autograd::GradRef> backward(const Tensor<T>& g) const {
          const Tensor<T> packed = lu.get();
          const RowOrder order(pivots, packed.size(-2), "", "");
          return {lu_backward(strictly_lower(g), upper(g), order, unit_lower(packed), upper(packed)).impl_ptr()};
        }
      };
      autograd::set_rule(f.lu, "LinalgLuFactorExBackward0", Rule{autograd::SavedTensor<T>::output(f.lu), f.pivots},
                         {detail::gradient_edge(a)});
    }
    return {f.lu, f.pivots, detail::info_tensor(f.info, detail::batch_of(a))};
  }
}

}  // namespace detail_la

// The packed LU factors (*, m, n) and pivots (*, min(m, n); int32, 1-based)
// of each matrix of A (*, m, n). A zero pivot (a singular U, which lu_solve
// would divide by) throws, with PyTorch's message. With pivot = false, no
// rows are swapped (pivots 1, 2, ..., P = I), as PyTorch's CUDA path does
// (its CPU path refuses it): A = L U, which needs every leading minor
// nonsingular.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<int32_t>> lu_factor(const EA& ea, bool pivot = true) {
  auto [lu, pivots, info] = detail_la::lu_factor_with_info(Tensor<typename EA::value_type>(ea), pivot,
                                                           "linalg.lu_factor", "torch.lu_factor", true);
  return {lu, pivots};
}

// lu_factor's factors and pivots and, per matrix, info (int32 over the
// batch dims: 0, or the 1-based position of U's first zero on its
// diagonal); it throws only with check_errors.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<int32_t>, Tensor<int32_t>> lu_factor_ex(const EA& ea,
                                                                                           bool pivot = true,
                                                                                           bool check_errors = false) {
  return detail_la::lu_factor_with_info(Tensor<typename EA::value_type>(ea), pivot, "linalg.lu_factor_ex",
                                        "torch.lu_factor", check_errors);
}

}  // namespace tsr::linalg

namespace tsr {

// {P, L, U} of packed factors (*, m, n) and their pivots (*, min(m, n)), as
// torch.lu_unpack: P (*, m, m) in LU's dtype, L (*, m, k) and U (*, k, n),
// the last two differentiable with respect to LU. Without unpack_data, L
// and U are empty (shape {0}); without unpack_pivots, P is. Unlike PyTorch
// 1.13, which reads out of bounds there, pivots of another shape than
// (*, min(m, n)) throw.
template <class T, class I>
std::tuple<Tensor<T>, Tensor<T>, Tensor<T>> lu_unpack(const Tensor<T>& lu, const Tensor<I>& pivots,
                                                      bool unpack_data = true, bool unpack_pivots = true) {
  linalg::detail_la::require_int32_pivots<I>();
  linalg::detail_la::check_matrices(lu, "torch.lu_unpack");
  const int64_t m = lu.size(-2), k = std::min(m, lu.size(-1));
  Shape expected = detail::batch_of(lu);
  expected.push_back(k);
  detail::check(pivots.sizes() == expected, "torch.lu_unpack: Expected pivots of shape ", expected,
                " (LU.shape[:-2] and min(m, n)) for LU of shape ", lu.sizes(), ", but got pivots with shape ",
                pivots.sizes(), " instead");
  const linalg::detail_la::RowOrder order(
      pivots, m,
      "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the result of "
      "lu_factor?",
      "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the result of "
      "lu_factor?");
  const Tensor<T> p = unpack_pivots ? order.matrix<T>() : zeros<T>({0});
  if (!unpack_data) return {p, zeros<T>({0}), zeros<T>({0})};
  return {p, linalg::detail_la::unit_lower(lu), linalg::detail_la::upper(lu)};
}

}  // namespace tsr

namespace tsr::linalg {

// {P, L, U} with A = P L U for each matrix of A (*, m, n): lu_factor_ex
// (no error for a singular matrix) and lu_unpack. Differentiable through L
// and U (P is constant).
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>, Tensor<typename EA::value_type>> lu(
    const EA& ea, bool pivot = true) {
  using T = typename EA::value_type;
  auto [packed, pivots, info] =
      detail_la::lu_factor_with_info(Tensor<T>(ea), pivot, "linalg.lu", "linalg.lu", /*check_errors=*/false);
  return lu_unpack(packed, pivots);
}

// X with A X = B (left) or X A = B (right), or with A^T in A's place
// (adjoint), where A (*, n, n) is given by lu_factor's factors and pivots;
// B (*, n, k) or (*, k, n), batch dims broadcast. A X = B is
// X = U^-1 L^-1 P^T B: a gather of B's rows and two triangular solves on
// the packed factors, each reading its own triangle.
template <Expression ELU, class I, Expression EB>
Tensor<typename ELU::value_type> lu_solve(const ELU& elu, const Tensor<I>& pivots, const EB& eb, bool left = true,
                                          bool adjoint = false) {
  using T = typename ELU::value_type;
  static_assert(std::is_same_v<T, typename EB::value_type>,
                "linalg.lu_solve: Expected LU and B to have the same dtype (cast one with tsr::cast<T>)");
  detail_la::require_int32_pivots<I>();
  const Tensor<T> lu(elu), b(eb);
  detail::check_square_matrices(lu, "torch.linalg.lu_solve");
  detail::check(b.dim() >= 2, "linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
  const int64_t n = lu.size(-1);
  detail::check(left ? b.size(-2) == n : b.size(-1) == n, "linalg.lu_solve: Incompatible shapes of A and B for the equation ",
                left ? "AX = B (" : "XA = B (", n, "x", n, " and ", b.size(-2), "x", b.size(-1), ")");
  detail::check(pivots.dim() == lu.dim() - 1 && std::equal(pivots.sizes().begin(), pivots.sizes().end() - 1,
                                                            lu.sizes().begin()),
                "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
                pivots.sizes(), " instead");
  detail::check(pivots.size(-1) == n,
                "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
  if constexpr (!detail::linalg_type_v<T>) {
    if constexpr (is_floating_v<T>)
      detail::fail_kernel_dtype<T>("linalg.lu_solve", "linalg.lu_solve_cpu");
    else
      detail::fail_linalg_dtype<T>("torch.linalg.lu_solve", "linalg.lu_solve_cpu");
  } else {
    const detail_la::RowOrder order(
        pivots, n,
        "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly pass the result of "
        "lu_factor?",
        "Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the result of lu_factor?");
    const Tensor<T> lu_t = lu.transpose(-1, -2);
    if (left && !adjoint) {  // X = U^-1 L^-1 P^T B
      const Tensor<T> y = solve_triangular(lu, detail_la::permuted(b, order.order(false), -2), false, true, true);
      return solve_triangular(lu, y, true);
    }
    if (left) {  // A^T X = B: X = P L^-T U^-T B
      const Tensor<T> y = solve_triangular(lu_t, solve_triangular(lu_t, b, false), true, true, true);
      return detail_la::permuted(y, order.order(true), -2);
    }
    if (!adjoint) {  // X A = B: X = B U^-1 L^-1 P^T
      const Tensor<T> y = solve_triangular(lu, solve_triangular(lu, b, true, false), false, false, true);
      return detail_la::permuted(y, detail_la::as_columns(order.order(true)), -1);
    }
    // X A^T = B: X = B P L^-T U^-T
    const Tensor<T> bp = detail_la::permuted(b, detail_la::as_columns(order.order(false)), -1);
    return solve_triangular(lu_t, solve_triangular(lu_t, bp, true, false, true), false, false);
  }
}

}  // namespace tsr::linalg

namespace tsr {

// torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU_data, LU_pivots, b).
template <Expression EB, Expression ELU, class I>
Tensor<typename EB::value_type> lu_solve(const EB& b, const ELU& lu, const Tensor<I>& pivots) {
  return linalg::lu_solve(lu, pivots, b);
}

}  // namespace tsr
