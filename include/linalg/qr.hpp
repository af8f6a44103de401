// tsr::linalg::qr: A = Q R for each matrix of A (*, m, n), by Householder
// reflections with LAPACK's conventions (geqrf's reflector, orgqr's Q), so
// the signs of Q's columns and R's rows are PyTorch's. Modes as
// torch.linalg.qr: "reduced" (Q m x k, R k x n, k = min(m, n)), "complete"
// (Q m x m, R m x n) and "r" (R only, Q empty).
//
// Differentiable (PyTorch 1.13's cases, to any order): Q and R each record
// a node of their own, whose backward is the gradient of A for that
// output's gradient alone (the gradient is linear in the two). The node of
// R keeps A and R, that of Q keeps Q and R with R's history, so that a
// recorded backward differentiates through both factors without a cycle.
#pragma once
#include <cmath>
#include <string_view>
#include <tuple>

#include "functions.hpp"

namespace tsr::autograd::tag {
struct LinalgQrQ;
struct LinalgQrR;
}  // namespace tsr::autograd::tag

namespace tsr::detail {

// Applies the reflector H_j = I - tau v v^T, v = (1, a[j+1][j], ...,
// a[m-1][j]) (column j of the factored a, row stride n), to rows j.. of the
// columns [c0, c0 + width) of c (row stride ldc): C -= tau v (v^T C), a row
// at a time. w holds width elements of scratch.
template <class T>
void apply_reflector(const T* a, int64_t m, int64_t n, int64_t j, T tau, T* c, int64_t ldc, int64_t c0,
                     int64_t width, T* w) {
  for (int64_t x = 0; x < width; ++x) w[x] = c[j * ldc + c0 + x];
  for (int64_t i = j + 1; i < m; ++i) {
    const T v = a[i * n + j];
    for (int64_t x = 0; x < width; ++x) w[x] += v * c[i * ldc + c0 + x];
  }
  for (int64_t x = 0; x < width; ++x) c[j * ldc + c0 + x] -= tau * w[x];
  for (int64_t i = j + 1; i < m; ++i) {
    const T tv = tau * a[i * n + j];
    for (int64_t x = 0; x < width; ++x) c[i * ldc + c0 + x] -= tv * w[x];
  }
}

// Factors the dense row-major m x n matrix a in place as geqrf does: R on
// and above the diagonal, reflector j's vector below it (its leading 1
// implied), tau[j] its scale, H_j = I - tau_j v_j v_j^T.
template <class T>
void householder_qr(T* a, int64_t m, int64_t n, T* tau) {
  const int64_t k = std::min(m, n);
  std::vector<T> w(static_cast<std::size_t>(n));
  for (int64_t j = 0; j < k; ++j) {
    const T alpha = a[j * n + j];
    double below = 0;  // the norm of the column under the diagonal, in double
    for (int64_t i = j + 1; i < m; ++i) below += double(a[i * n + j]) * double(a[i * n + j]);
    tau[j] = T(0);
    if (below == 0) continue;  // already triangular here: H_j = I, as LAPACK
    const T beta = T(-std::copysign(std::sqrt(double(alpha) * double(alpha) + below), double(alpha)));
    tau[j] = (beta - alpha) / beta;
    const T scale = T(1) / (alpha - beta);
    for (int64_t i = j + 1; i < m; ++i) a[i * n + j] *= scale;
    a[j * n + j] = beta;
    apply_reflector(a, m, n, j, tau[j], a, n, j + 1, n - j - 1, w.data());  // the trailing columns
  }
}

// Q's first q columns (m x q, row-major) from the first k reflectors in the
// factored a (m x n) and tau, as orgqr: H_0 ... H_{k-1} applied to the
// identity's columns, the last reflector first.
template <class T>
void householder_q(const T* a, int64_t m, int64_t n, const T* tau, T* q, int64_t cols, int64_t k) {
  std::fill(q, q + m * cols, T(0));
  for (int64_t i = 0; i < std::min(m, cols); ++i) q[i * cols + i] = T(1);
  std::vector<T> w(static_cast<std::size_t>(cols));
  for (int64_t j = k - 1; j >= 0; --j) {
    // Rows j.. of Q; its columns before j are still zero there.
    if (tau[j] != T(0)) apply_reflector(a, m, n, j, tau[j], q, cols, j, cols - j, w.data());
  }
}

}  // namespace tsr::detail

namespace tsr::linalg {

template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>> qr(const EA& ea,
                                                                                 std::string_view mode = "reduced") {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check(a.dim() >= 2, "linalg.qr: The input tensor A must have at least 2 dimensions.");
  detail::check(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
                "' but expected one of 'reduced' (default), 'r', or 'complete'");
  static_assert(is_floating_v<T>, "linalg.qr: Expected a floating point or complex tensor as input");
  detail::check_on_cpu(a, "linalg.qr");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("linalg.qr", "geqrf_cpu");
  } else {
    const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
    const bool complete = mode == "complete", want_q = mode != "r";
    const int64_t q_cols = complete ? m : k, r_rows = complete ? m : k;
    const Shape batch = detail::batch_of(a);
    const int64_t count = detail::numel_of(batch);
    Tensor<T> f = detail::dense_copy(a, a.sizes());
    Shape q_shape = batch, r_shape = batch;
    q_shape.push_back(want_q ? m : 0), q_shape.push_back(want_q ? q_cols : 0);
    r_shape.push_back(r_rows), r_shape.push_back(n);
    Tensor<T> q = Tensor<T>::allocate(want_q ? q_shape : Shape{0}), r = zeros<T>(r_shape);
    detail::for_each_matrix(count, [&](int64_t i, bool) {
      T* fi = f.data_ptr() + i * m * n;
      std::vector<T> tau(static_cast<std::size_t>(k));
      detail::householder_qr(fi, m, n, tau.data());
      T* ri = r.data_ptr() + i * r_rows * n;
      for (int64_t row = 0; row < std::min(r_rows, m); ++row)
        for (int64_t c = row; c < n; ++c) ri[row * n + c] = fi[row * n + c];
      if (want_q) detail::householder_q(fi, m, n, tau.data(), q.data_ptr() + i * m * q_cols, q_cols, k);
    });
    detail::record_op<autograd::tag::LinalgQrR>(r, a, want_q && !(complete && m > n), mode == "r");
    if (want_q) detail::record_op<autograd::tag::LinalgQrQ>(q, a, r, complete && m > n);
    return {std::move(q), std::move(r)};
  }
}

}  // namespace tsr::linalg

namespace tsr::autograd {
namespace detail_linalg {

// tril(M) + tril(M, -1)^T: the symmetric matrix M's lower triangle stands for.
template <class T>
Tensor<T> copy_lower_to_upper(const Tensor<T>& m) {
  return Tensor<T>(tril(m) + mT(tril(m, -1)));
}

// The gradient of A = Q R for a square or tall A (m >= n, R n x n
// invertible), given the gradients of Q and R (either may be absent):
// (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T (arXiv 2009.10071, section 4.3).
template <class T>
Tensor<T> qr_backward_tall(const Tensor<T>* gq, const Tensor<T>* gr, const Tensor<T>& q, const Tensor<T>& r) {
  Tensor<T> inner;
  if (gr) inner = matmul(r, mT(*gr));
  if (gq) inner = inner.defined() ? Tensor<T>(inner - matmul(mT(*gq), q)) : Tensor<T>(-matmul(mT(*gq), q));
  Tensor<T> lhs = matmul(q, copy_lower_to_upper(inner));
  if (gq) lhs = Tensor<T>(lhs + *gq);
  // X R^T = lhs: X = lhs R^-T, a solve with the lower triangular R^T on the right.
  return linalg::solve_triangular(mT(r), lhs, /*upper=*/false, /*left=*/false);
}

// The gradient of A for the gradients of Q and R, with A = [X | Y] where
// A is wide (m < n): X = Q R1 is square, Y = Q R2, so Y's gradient is Q gR2
// and X's is the square case with gQ + Y gR2^T.
template <class T>
Tensor<T> qr_backward(const Tensor<T>* gq, const Tensor<T>* gr, const Tensor<T>& a, const Tensor<T>& q,
                      const Tensor<T>& r) {
  const int64_t m = a.size(-2), n = a.size(-1);
  if (m >= n) return qr_backward_tall(gq, gr, q, r);
  const Tensor<T> y = a.narrow(-1, m, n - m), r1 = r.narrow(-1, 0, m);
  Tensor<T> gq_x, gr1, gy;
  if (gr) {
    const Tensor<T> gr2 = gr->narrow(-1, m, n - m);
    gr1 = gr->narrow(-1, 0, m);
    gy = matmul(q, gr2);
    gq_x = matmul(y, mT(gr2));
  }
  if (gq) gq_x = gq_x.defined() ? Tensor<T>(gq_x + *gq) : *gq;
  const Tensor<T> gx = qr_backward_tall(gq_x.defined() ? &gq_x : nullptr, gr ? &gr1 : nullptr, q, r1);
  return gy.defined() ? cat({gx, gy}, -1) : cat({gx, zeros<T>(y.sizes())}, -1);
}

}  // namespace detail_linalg

// R's node: A's gradient for gR alone. Q is recomputed as A R^-1 from the
// saved A and R (for a wide A, from its first m columns), so the node keeps
// no reference to Q's node.
template <>
struct OpRule<tag::LinalgQrR> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, bool differentiable, bool r_mode) {
    struct Rule {
      SavedTensor<T> a, r;
      bool differentiable, r_mode;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        tsr::detail::check(!r_mode, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                                    "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                                    "through linalg.qr.");
        tsr::detail::check(differentiable,
                           "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
        const Tensor<T> am = a.get(), rm = r.get();
        const int64_t m = am.size(-2), k = std::min(m, am.size(-1));
        const Tensor<T> q = linalg::solve_triangular(rm.narrow(-1, 0, k), am.narrow(-1, 0, k), /*upper=*/true,
                                                     /*left=*/false);
        return {qr_backward<T>(nullptr, &g, am, q, rm).impl_ptr()};
      }
    };
    set_rule(out, "LinalgQrBackward0", Rule{SavedTensor<T>(a), SavedTensor<T>::output(out), differentiable, r_mode},
             {tsr::detail::gradient_edge(a)});
  }
};

// Q's node: A's gradient for gQ alone, from Q and R (R with its history, so
// that a recorded backward differentiates through it too).
template <>
struct OpRule<tag::LinalgQrQ> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& r, bool complete_tall) {
    struct Rule {
      SavedTensor<T> q, r;
      bool complete_tall;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        tsr::detail::check(!complete_tall,
                           "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
        const Tensor<T> qm = q.get(), rm = r.get();
        const int64_t m = qm.size(-2), n = rm.size(-1);
        if (m >= n) return {qr_backward_tall<T>(&g, nullptr, qm, rm).impl_ptr()};
        // Wide: Q depends on the first m columns of A alone.
        const Tensor<T> gx = qr_backward_tall<T>(&g, nullptr, qm, rm.narrow(-1, 0, m));
        Shape y_shape = rm.sizes();
        y_shape.back() = n - m;
        return {cat({gx, zeros<T>(y_shape)}, -1).impl_ptr()};
      }
    };
    set_rule(out, "LinalgQrBackward0", Rule{SavedTensor<T>::output(out), SavedTensor<T>(r), complete_tall},
             {tsr::detail::gradient_edge(a)});
  }
};

}  // namespace tsr::autograd
