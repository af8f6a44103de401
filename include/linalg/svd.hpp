// tsr::linalg::svd and svdvals: A = U diag(S) Vh for each matrix of A
// (*, m, n), S descending, as torch.linalg.svd (full_matrices = true gives
// U m x m and Vh n x n; false, U m x k and Vh k x n, k = min(m, n)).
// Computed by one-sided Jacobi rotations (Hestenes) in double on the
// columns of A (of A^T when it is wide), which gives every singular value
// to high relative accuracy; singular vectors for zero singular values,
// and those full_matrices adds, complete the others to an orthonormal
// basis through a Householder QR. A pair (u_i, v_i) is unique up to a
// common sign (and a rotation for repeated values): the signs need not be
// PyTorch's.
//
// Differentiable to any order with PyTorch 1.13's gradient (Townsend's
// formula; infinite for repeated singular values where U or Vh is used, as
// PyTorch's). U, S and Vh record a node each: U's and Vh's nodes keep A and
// their own output and recompute the rest from them; S's keeps U and Vh with
// their history.
#pragma once
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "qr.hpp"

namespace tsr::autograd::tag {
struct LinalgSvdU;
struct LinalgSvdS;
struct LinalgSvdVh;
}  // namespace tsr::autograd::tag

namespace tsr::detail {

// The SVD of one m x n matrix x (row-major, double) with m >= n: u (m x
// ucols, ucols >= n), s (n, descending) and v (n x n), row-major, the
// singular vectors in their columns. Returns false for a non-finite input.
inline bool svd_tall(const double* x, int64_t m, int64_t n, double* u, int64_t ucols, double* s, double* v) {
  std::vector<double> c(static_cast<std::size_t>(n * m)), vt(static_cast<std::size_t>(n * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[j * m + i] = x[i * n + j];  // row j of c: column j of x
  for (int64_t j = 0; j < n; ++j) vt[j * n + j] = 1;
  for (double e : c)
    if (!std::isfinite(e)) return false;
  const auto dot = [m](const double* a, const double* b) { return std::inner_product(a, a + m, b, 0.0); };
  // Columns whose cosine is below sqrt(m) ulps count as orthogonal, as in
  // LAPACK's one-sided Jacobi (gesvj).
  const double tolerance = std::sqrt(double(m)) * std::numeric_limits<double>::epsilon();
  // A column whose squared norm is below this is zero to rounding (of a
  // rank-deficient matrix): rotating it against others would go on forever.
  const double negligible = std::pow(std::numeric_limits<double>::epsilon(), 2) *
                            std::inner_product(c.begin(), c.end(), c.begin(), 0.0);
  bool converged = false;
  for (int sweep = 0; sweep < 100 && !converged; ++sweep) {
    converged = true;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        double* cp = c.data() + p * m;
        double* cq = c.data() + q * m;
        const double alpha = dot(cp, cp), beta = dot(cq, cq), gamma = dot(cp, cq);
        if (std::abs(gamma) <= tolerance * std::sqrt(alpha * beta) || alpha <= negligible || beta <= negligible)
          continue;  // orthogonal to rounding
        converged = false;
        // The rotation that makes columns p and q orthogonal.
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        const auto rotate = [cs, sn](double* a, double* b, int64_t len) {
          for (int64_t i = 0; i < len; ++i) {
            const double ai = a[i], bi = b[i];
            a[i] = cs * ai - sn * bi;
            b[i] = sn * ai + cs * bi;
          }
        };
        rotate(cp, cq, m);
        rotate(vt.data() + p * n, vt.data() + q * n, n);
      }
    }
  }
  if (!converged) return false;
  std::vector<double> norms(static_cast<std::size_t>(n));
  for (int64_t j = 0; j < n; ++j) norms[j] = std::sqrt(dot(c.data() + j * m, c.data() + j * m));
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return norms[a] > norms[b]; });
  int64_t rank = 0;
  std::fill(u, u + m * ucols, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t from = order[static_cast<std::size_t>(j)];
    s[j] = norms[from];
    // A column at the rounding level of A has no direction of its own: its
    // u comes from the completion below.
    const bool kept = s[j] * s[j] > negligible;
    if (kept) ++rank;
    for (int64_t i = 0; i < m; ++i) u[i * ucols + j] = kept ? c[from * m + i] / s[j] : 0.0;
    for (int64_t k = 0; k < n; ++k) v[k * n + j] = vt[from * n + k];
  }
  if (rank < ucols) {
    // Columns rank.. of the complete Q of [u_1 .. u_rank 0 ...]: an
    // orthonormal basis of what the singular vectors leave out.
    std::vector<double> w(static_cast<std::size_t>(m * ucols)), tau(static_cast<std::size_t>(std::min(m, ucols)));
    std::vector<double> q(static_cast<std::size_t>(m * m));
    std::copy(u, u + m * ucols, w.begin());
    householder_qr(w.data(), m, ucols, tau.data());
    householder_q(w.data(), m, ucols, tau.data(), q.data(), m, std::min(m, ucols));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = rank; j < ucols; ++j) u[i * ucols + j] = q[i * m + j];
  }
  return true;
}

template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<T>> svd_impl(const Tensor<T>& a, bool full_matrices, const char* fn) {
  check(a.dim() >= 2, fn, ": The input tensor A must have at least 2 dimensions.");
  check_on_cpu(a, fn);
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  const Shape batch = batch_of(a);
  const int64_t count = numel_of(batch);
  const Tensor<double> x = unrecorded([&] { return Tensor<double>(cast<double>(a)).contiguous(); });
  Shape u_shape = batch, s_shape = batch, vh_shape = batch;
  u_shape.push_back(m), u_shape.push_back(ucols);
  s_shape.push_back(k);
  vh_shape.push_back(vrows), vh_shape.push_back(n);
  Tensor<T> u = Tensor<T>::allocate(u_shape), s = Tensor<T>::allocate(s_shape), vh = Tensor<T>::allocate(vh_shape);
  std::vector<char> ok(static_cast<std::size_t>(count), 1);
  for_each_matrix(count, [&](int64_t b, bool) {
    const double* xb = x.data_ptr() + b * m * n;
    const bool tall = m >= n;
    // The tall problem: x itself, or x^T for a wide x (whose U and V swap).
    const int64_t tm = tall ? m : n, tn = k;
    std::vector<double> t(static_cast<std::size_t>(tm * tn));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) (tall ? t[i * n + j] : t[j * m + i]) = xb[i * n + j];
    const int64_t tucols = tall ? ucols : vrows;
    std::vector<double> tu(static_cast<std::size_t>(tm * tucols)), ts(static_cast<std::size_t>(tn)),
        tv(static_cast<std::size_t>(tn * tn));
    ok[static_cast<std::size_t>(b)] = svd_tall(t.data(), tm, tn, tu.data(), tucols, ts.data(), tv.data());
    T* ub = u.data_ptr() + b * m * ucols;
    T* sb = s.data_ptr() + b * k;
    T* vb = vh.data_ptr() + b * vrows * n;
    for (int64_t j = 0; j < k; ++j) sb[j] = static_cast<T>(ts[j]);
    if (tall) {  // U = tu; Vh = tv^T
      for (int64_t i = 0; i < m * ucols; ++i) ub[i] = static_cast<T>(tu[i]);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < n; ++c) vb[r * n + c] = static_cast<T>(tv[c * n + r]);
    } else {  // x^T = tu S tv^T: U = tv, Vh = tu^T
      for (int64_t i = 0; i < m * m; ++i) ub[i] = static_cast<T>(tv[i]);
      for (int64_t r = 0; r < vrows; ++r)
        for (int64_t c = 0; c < n; ++c) vb[r * n + c] = static_cast<T>(tu[c * vrows + r]);
    }
  });
  for (std::size_t b = 0; b < ok.size(); ++b)
    if (!ok[b])
      fail<LinAlgError>(fn, ": ", batch_element(a.dim() > 2, int64_t(b)),
                        "The algorithm failed to converge because the input matrix contained non-finite values.");
  record_op<autograd::tag::LinalgSvdU>(u, a, k);
  record_op<autograd::tag::LinalgSvdVh>(vh, a, k);
  record_op<autograd::tag::LinalgSvdS>(s, a, u, vh);
  return {std::move(u), std::move(s), std::move(vh)};
}

}  // namespace tsr::detail

namespace tsr::linalg {

// {U, S, Vh} with A = U diag(S) Vh.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>, Tensor<typename EA::value_type>> svd(
    const EA& ea, bool full_matrices = true) {
  using T = typename EA::value_type;
  static_assert(is_floating_v<T>, "linalg.svd: Expected a floating point or complex tensor as input");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("linalg.svd", "linalg_svd_cpu");
  } else {
    return detail::svd_impl(Tensor<T>(ea), full_matrices, "linalg.svd");
  }
}

// The singular values (*, k), descending.
template <Expression EA>
Tensor<typename EA::value_type> svdvals(const EA& ea) {
  using T = typename EA::value_type;
  static_assert(is_floating_v<T>, "linalg.svdvals: Expected a floating point or complex tensor as input");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("linalg.svdvals", "linalg_svd_cpu");
  } else {
    return std::get<1>(detail::svd_impl(Tensor<T>(ea), false, "linalg.svdvals"));
  }
}

}  // namespace tsr::linalg

namespace tsr::autograd {
namespace detail_linalg {

// (I - P P^T) g for P with orthonormal columns: g without its part in P's span.
template <class T>
Tensor<T> outside(const Tensor<T>& p, const Tensor<T>& g) {
  return Tensor<T>(g - matmul(p, matmul(mT(p), g)));
}

}  // namespace detail_linalg

// U's node: with V = A^T U S^-1 and S_i = |A^T u_i| recomputed from A and U,
// dA = U (F o skew(U^T gU)) S V^T + (I - U U^T) gU S^-1 V^T, where
// F_ij = 1 / (s_j^2 - s_i^2) (only U's first k columns count;
// full_matrices' others are arbitrary).
template <>
struct OpRule<tag::LinalgSvdU> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, int64_t k) {
    struct Rule {
      SavedTensor<T> a, u;
      int64_t k;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> uk = u.get().narrow(-1, 0, k), gu = g.narrow(-1, 0, k);
        const Tensor<T> atu = matmul(mT(a.get()), uk);
        const Tensor<T> s = sqrt(sum(square(atu), {-2}));
        const Tensor<T> v = atu / s.unsqueeze(-2);
        const Tensor<T> inner = inverse_gaps(Tensor<T>(square(s))) * skew(matmul(mT(uk), gu)) * s.unsqueeze(-2);
        Tensor<T> ga = matmul(matmul(uk, inner), mT(v));
        if (uk.size(-2) > k) ga = Tensor<T>(ga + matmul(outside(uk, gu) / s.unsqueeze(-2), mT(v)));
        return {ga.impl_ptr()};
      }
    };
    set_rule(out, "LinalgSvdBackward0", Rule{SavedTensor<T>(a), SavedTensor<T>::output(out), k},
             {tsr::detail::gradient_edge(a)});
  }
};

// Vh's node, the same with the roles of U and V swapped: with U = A V S^-1,
// dA = U S (F o skew(V^T gV)) V^T + U S^-1 gV^T (I - V V^T), gV = gVh^T.
template <>
struct OpRule<tag::LinalgSvdVh> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, int64_t k) {
    struct Rule {
      SavedTensor<T> a, vh;
      int64_t k;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> v = mT(vh.get().narrow(-2, 0, k)), gv = mT(g.narrow(-2, 0, k));
        const Tensor<T> av = matmul(a.get(), v);
        const Tensor<T> s = sqrt(sum(square(av), {-2}));
        const Tensor<T> u = av / s.unsqueeze(-2);
        const Tensor<T> inner = s.unsqueeze(-1) * (inverse_gaps(Tensor<T>(square(s))) * skew(matmul(mT(v), gv)));
        Tensor<T> ga = matmul(matmul(u, inner), mT(v));
        if (v.size(-2) > k) ga = Tensor<T>(ga + matmul(u / s.unsqueeze(-2), mT(outside(v, gv))));
        return {ga.impl_ptr()};
      }
    };
    set_rule(out, "LinalgSvdBackward0", Rule{SavedTensor<T>(a), SavedTensor<T>::output(out), k},
             {tsr::detail::gradient_edge(a)});
  }
};

// S's node: dA = U diag(gS) V^T, from U and Vh with their history.
template <>
struct OpRule<tag::LinalgSvdS> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& u, const Tensor<T>& vh) {
    struct Rule {
      SavedTensor<T> u, vh;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const int64_t k = g.size(-1);
        return {matmul(Tensor<T>(u.get().narrow(-1, 0, k) * g.unsqueeze(-2)), vh.get().narrow(-2, 0, k)).impl_ptr()};
      }
    };
    set_rule(out, "LinalgSvdBackward0", Rule{SavedTensor<T>(u), SavedTensor<T>(vh)}, {tsr::detail::gradient_edge(a)});
  }
};

}  // namespace tsr::autograd
