// QR factors in LAPACK's compact form and the products of their Householder
// reflectors: tsr::geqrf (A as reflectors and R, with the reflectors'
// scales tau), tsr::linalg::householder_product (tsr::orgqr: the first n
// columns of Q = H_0 H_1 ... H_{k-1}) and tsr::ormqr (Q or Q^T times a
// matrix, on either side, without forming Q). Reflector j is
// H_j = I - tau_j v_j v_j^T, v_j = (0, ..., 0, 1, A[j+1:, j]), as LAPACK's
// geqrf writes it, so the three take PyTorch's inputs and give its results.
//
// householder_product is differentiable, to any order, as in PyTorch: where
// an input requires grad, Q is built from the reflectors with recorded ops
// (one rank-one update per reflector), whose gradients are those of the
// formula; elsewhere by a plain loop. geqrf and ormqr have no derivative in
// PyTorch 1.13; here an input that requires grad is refused when they are
// called.
#pragma once
#include <tuple>

#include "qr.hpp"

namespace tsr::detail {

// C (p x m, row-major, row stride ldc) times H_j from the right, for the
// reflector j of the factored a (row stride n): C -= tau (C v) v^T, a row
// at a time.
template <class T>
void apply_reflector_right(const T* a, int64_t m, int64_t n, int64_t j, T tau, T* c, int64_t ldc, int64_t p) {
  for (int64_t r = 0; r < p; ++r) {
    T* row = c + r * ldc;
    T s = row[j];
    for (int64_t i = j + 1; i < m; ++i) s += row[i] * a[i * n + j];
    row[j] -= tau * s;
    for (int64_t i = j + 1; i < m; ++i) row[i] -= tau * s * a[i * n + j];
  }
}

// The checks householder_product and ormqr share: tau one dim less than
// the input, with the input's batch dims.
template <class T>
void check_reflector_batch(const Tensor<T>& input, const Tensor<T>& tau, const char* fn) {
  check(input.dim() - tau.dim() == 1, fn, ": Expected tau to have one dimension less than input, but got tau.ndim "
        "equal to ", tau.dim(), " and input.ndim is equal to ", input.dim());
  const Shape tau_batch(tau.sizes().begin(), tau.sizes().end() - 1);
  check(tau_batch == batch_of(input), fn, ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
        tau_batch);
}

// Q (*, m, n) of householder_product with recorded ops: I's first n
// columns, then Q -= tau_j v_j (v_j^T Q) for j = k - 1 down to 0.
template <class T>
Tensor<T> householder_product_recorded(const Tensor<T>& a, const Tensor<T>& tau) {
  const int64_t m = a.size(-2), n = a.size(-1), k = tau.size(-1);
  const Shape batch = batch_of(a);
  Shape q_shape = batch;
  q_shape.push_back(m);
  q_shape.push_back(n);
  Tensor<T> q = eye<T>(m, n).expand(q_shape).clone();
  const auto block = [&](int64_t rows, T value) {
    Shape s = batch;
    s.push_back(rows);
    s.push_back(1);
    return full<T>(s, value);
  };
  for (int64_t j = k - 1; j >= 0; --j) {
    const Tensor<T> v = cat({block(j, T(0)), block(1, T(1)), a.narrow(-2, j + 1, m - j - 1).narrow(-1, j, 1)}, -2);
    const Tensor<T> t = tau.narrow(-1, j, 1).unsqueeze(-1);
    q = Tensor<T>(q - t * matmul(v, matmul(v.transpose(-1, -2), q)));
  }
  return q;
}

}  // namespace tsr::detail

namespace tsr {

// The QR factorization of each matrix of a (*, m, n) in LAPACK's compact
// form, as torch.geqrf: R on and above the diagonal, reflector j's vector
// below it; tau (*, min(m, n)) the reflectors' scales.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>> geqrf(const EA& ea) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check(a.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  static_assert(is_floating_v<T>, "torch.geqrf: Expected a floating point or complex tensor as input");
  detail::check_no_autograd("geqrf (PyTorch 1.13 has no derivative for it)", a);
  detail::check_on_cpu(a, "torch.geqrf");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("torch.geqrf", "geqrf_cpu");
  } else {
    const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
    Shape tau_shape = detail::batch_of(a);
    tau_shape.push_back(k);
    Tensor<T> f = detail::dense_copy(a, a.sizes()), tau = Tensor<T>::allocate(tau_shape);
    detail::for_each_matrix(detail::numel_of(detail::batch_of(a)), [&](int64_t i, bool) {
      detail::householder_qr(f.data_ptr() + i * m * n, m, n, tau.data_ptr() + i * k);
    });
    return {std::move(f), std::move(tau)};
  }
}

namespace linalg {

// The first n columns of the product H_0 H_1 ... H_{k-1} of the Householder
// reflectors in a (*, m, n), m >= n, and tau (*, k), k <= n, as
// torch.linalg.householder_product (Q of a QR factorization from geqrf's
// output).
template <Expression EA, Expression ET>
Tensor<typename EA::value_type> householder_product(const EA& ea, const ET& et) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename ET::value_type>,
                "torch.linalg.householder_product: tau and input must have the same dtype");
  const Tensor<T> a(ea), tau(et);
  constexpr const char* fn = "torch.linalg.householder_product";
  detail::check(a.dim() >= 2, fn, ": input must have at least 2 dimensions.");
  detail::check(a.size(-2) >= a.size(-1), fn, ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  detail::check(a.size(-1) >= tau.size(-1), fn, ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  detail::check_reflector_batch(a, tau, fn);
  static_assert(is_floating_v<T>, "torch.linalg.householder_product: Expected a floating point or complex tensor");
  detail::check_on_cpu(a, fn);
  detail::check_on_cpu(tau, fn);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>(fn, "orgqr_cpu");
  } else {
    if (detail::records(a) || detail::records(tau)) return detail::householder_product_recorded(a, tau);
    const int64_t m = a.size(-2), n = a.size(-1), k = tau.size(-1);
    const Tensor<T> f = a.contiguous(), t = tau.contiguous();
    Tensor<T> q = Tensor<T>::allocate(a.sizes());
    detail::for_each_matrix(detail::numel_of(detail::batch_of(a)), [&](int64_t i, bool) {
      detail::householder_q(f.data_ptr() + i * m * n, m, n, t.data_ptr() + i * k, q.data_ptr() + i * m * n, n, k);
    });
    return q;
  }
}

}  // namespace linalg

// torch.orgqr, the older name of linalg::householder_product.
template <Expression EA, Expression ET>
Tensor<typename EA::value_type> orgqr(const EA& a, const ET& tau) {
  return linalg::householder_product(a, tau);
}

// Q C, Q^T C (left), C Q or C Q^T (right) for the Q = H_0 ... H_{k-1} of
// the reflectors in a (*, mn, n) and tau (*, k), C (*, mn, p) or (*, p, mn),
// as torch.ormqr; Q is applied a reflector at a time, never formed.
template <Expression EA, Expression ET, Expression EC>
Tensor<typename EA::value_type> ormqr(const EA& ea, const ET& et, const EC& ec, bool left = true,
                                      bool transpose = false) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename ET::value_type> && std::is_same_v<T, typename EC::value_type>,
                "torch.ormqr: input, tau and other must have the same dtype");
  const Tensor<T> a(ea), tau(et), c(ec);
  constexpr const char* fn = "torch.ormqr";
  detail::check(a.dim() >= 2, fn, ": input must have at least 2 dimensions.");
  detail::check(c.dim() >= 2, fn, ": other must have at least 2 dimensions.");
  const int64_t side = left ? -2 : -1;
  detail::check(c.size(side) >= tau.size(-1), fn, ": other.shape[", side, "] must be greater than or equal to tau.shape[-1]");
  detail::check(c.size(side) == a.size(-2), fn, ": other.shape[", side, "] must be equal to input.shape[-2]");
  detail::check(tau.size(-1) <= a.size(-1), fn, ": tau.shape[-1] must be less than or equal to input.shape[-1]");
  detail::check_reflector_batch(a, tau, fn);
  detail::check(a.dim() == c.dim(), fn, ": Expected other to have the same number of dimensions as input, but got "
                "other.ndim equal to ", c.dim(), " and input.ndim is equal to ", a.dim());
  detail::check(detail::batch_of(c) == detail::batch_of(a), fn, ": Expected batch dimensions of other to be equal to "
                "input.shape[:-2], but got ", detail::batch_of(c));
  static_assert(is_floating_v<T>, "torch.ormqr: Expected a floating point or complex tensor");
  detail::check_no_autograd("ormqr (PyTorch 1.13 has no derivative for it)", a, tau, c);
  for (const Tensor<T>* t : {&a, &tau, &c}) detail::check_on_cpu(*t, fn);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>(fn, "ormqr_cpu");
  } else {
    const int64_t m = a.size(-2), n = a.size(-1), k = tau.size(-1), rows = c.size(-2), cols = c.size(-1);
    const Tensor<T> f = a.contiguous(), t = tau.contiguous();
    Tensor<T> out = detail::dense_copy(c, c.sizes());
    detail::for_each_matrix(detail::numel_of(detail::batch_of(a)), [&](int64_t i, bool) {
      const T* fi = f.data_ptr() + i * m * n;
      const T* ti = t.data_ptr() + i * k;
      T* oi = out.data_ptr() + i * rows * cols;
      std::vector<T> w(static_cast<std::size_t>(cols));
      // Q C = H_0 (... (H_{k-1} C)): the last reflector first; Q^T C the
      // first first. C Q = ((C H_0) ...) H_{k-1}: the first first; C Q^T
      // the last first.
      const bool last_first = left != transpose;
      for (int64_t s = 0; s < k; ++s) {
        const int64_t j = last_first ? k - 1 - s : s;
        if (left) detail::apply_reflector(fi, m, n, j, ti[j], oi, cols, 0, cols, w.data());
        else detail::apply_reflector_right(fi, m, n, j, ti[j], oi, cols, rows);
      }
    });
    return out;
  }
}

}  // namespace tsr
