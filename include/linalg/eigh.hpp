// tsr::linalg::eigh and eigvalsh: the eigenvalues (ascending) and
// orthonormal eigenvectors (columns) of each symmetric matrix of A (*, n, n),
// read from its lower triangle (UPLO = "L") or its upper one ("U"), as
// torch.linalg.eigh. Computed by cyclic Jacobi rotations in double, which
// are accurate to the last bits for the eigenvalues of any symmetric matrix
// (float inputs round once at the end). Each eigenvector is unique up to its
// sign (and, for a repeated eigenvalue, to a rotation within its space):
// the signs need not be PyTorch's, which come from LAPACK's algorithm.
//
// Differentiable to any order, with PyTorch 1.13's gradient: the values
// and the vectors record a node each (the gradient is linear in the two);
// the vectors' node keeps A and the vectors and recomputes the values from
// them, so neither node refers to the other's.
#pragma once
#include <cmath>
#include <numeric>
#include <string_view>
#include <tuple>

#include "functions.hpp"

namespace tsr::autograd::tag {
struct LinalgEighValues;
struct LinalgEighVectors;
}  // namespace tsr::autograd::tag

namespace tsr::detail {

// Diagonalizes the symmetric n x n matrix a (row-major, full, in double) by
// cyclic Jacobi sweeps: on return its diagonal holds the eigenvalues and
// v's columns the eigenvectors. Returns false if it did not converge (a
// non-finite input).
inline bool jacobi_eigen(double* a, double* v, int64_t n) {
  std::fill(v, v + n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  double total = 0;
  for (int64_t i = 0; i < n * n; ++i) total += a[i] * a[i];
  if (!std::isfinite(total)) return false;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off <= 1e-32 * total || off == 0) return true;  // the off-diagonal is below rounding
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (apq == 0) continue;
        // The rotation (c, s) that zeroes a[p][q]: t = tan of its angle, the
        // smaller root of t^2 + 2 theta t - 1 = 0.
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const double t = std::copysign(1.0, theta) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // columns p and q
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {  // rows p and q
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        a[p * n + q] = a[q * n + p] = 0;
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  return false;
}

// The symmetric matrix the chosen triangle of a stands for.
template <class T>
Tensor<T> symmetric_from(const Tensor<T>& a, bool upper) {
  return upper ? Tensor<T>(triu(a) + triu(a, 1).transpose(-1, -2)) : Tensor<T>(tril(a) + tril(a, -1).transpose(-1, -2));
}

template <class T>
std::tuple<Tensor<T>, Tensor<T>> eigh_impl(const Tensor<T>& a, std::string_view uplo, bool want_vectors,
                                           const char* fn) {
  check(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
        "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_square_matrices(a, fn);
  const bool upper = uplo == "U" || uplo == "u";
  const int64_t n = a.size(-1), count = numel_of(batch_of(a));
  const Tensor<double> sym = unrecorded([&] { return Tensor<double>(cast<double>(symmetric_from(a, upper))).contiguous(); });
  Shape value_shape = batch_of(a);
  value_shape.push_back(n);
  Tensor<T> values = Tensor<T>::allocate(value_shape), vectors = Tensor<T>::allocate(a.sizes());
  std::vector<char> converged(static_cast<std::size_t>(count), 1);
  for_each_matrix(count, [&](int64_t i, bool) {
    std::vector<double> m(sym.data_ptr() + i * n * n, sym.data_ptr() + (i + 1) * n * n), v(n * n);
    converged[static_cast<std::size_t>(i)] = jacobi_eigen(m.data(), v.data(), n);
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return m[x * n + x] < m[y * n + y]; });
    T* lv = values.data_ptr() + i * n;
    T* vv = vectors.data_ptr() + i * n * n;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t from = order[static_cast<std::size_t>(j)];
      lv[j] = static_cast<T>(m[from * n + from]);
      for (int64_t r = 0; r < n; ++r) vv[r * n + j] = static_cast<T>(v[r * n + from]);
    }
  });
  for (std::size_t i = 0; i < converged.size(); ++i)
    if (!converged[i])
      fail<LinAlgError>(fn, ": ", batch_element(a.dim() > 2, int64_t(i)), "The algorithm failed to converge because "
                        "the input matrix is ill-conditioned or has too many repeated eigenvalues.");
  // The vectors record even when not returned: the values' backward is
  // made of them, and its own derivative needs theirs.
  record_op<autograd::tag::LinalgEighVectors>(vectors, a, upper);
  record_op<autograd::tag::LinalgEighValues>(values, a, vectors, upper);
  return {std::move(values), want_vectors ? std::move(vectors) : Tensor<T>::allocate({0})};
}

}  // namespace tsr::detail

namespace tsr::linalg {

// {eigenvalues (*, n), eigenvectors (*, n, n)}.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>> eigh(const EA& ea,
                                                                                   std::string_view uplo = "L") {
  using T = typename EA::value_type;
  static_assert(is_floating_v<T>, "linalg.eigh: Expected a floating point or complex tensor as input");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("linalg.eigh", "linalg_eigh_cpu");
  } else {
    return detail::eigh_impl(Tensor<T>(ea), uplo, true, "linalg.eigh");
  }
}

// The eigenvalues alone (*, n), ascending.
template <Expression EA>
Tensor<typename EA::value_type> eigvalsh(const EA& ea, std::string_view uplo = "L") {
  using T = typename EA::value_type;
  static_assert(is_floating_v<T>, "linalg.eigvalsh: Expected a floating point or complex tensor as input");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("linalg.eigvalsh", "linalg_eigh_cpu");
  } else {
    return std::get<0>(detail::eigh_impl(Tensor<T>(ea), uplo, false, "linalg.eigvalsh"));
  }
}

}  // namespace tsr::linalg

namespace tsr::autograd {

// The values' node: dA = V diag(gL) V^T.
template <>
struct OpRule<tag::LinalgEighValues> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& vectors, bool upper) {
    (void)upper;
    struct Rule {
      SavedTensor<T> v;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> vm = v.get();
        return {matmul(Tensor<T>(vm * g.unsqueeze(-2)), mT(vm)).impl_ptr()};
      }
    };
    set_rule(out, "LinalgEighBackward0", Rule{SavedTensor<T>(vectors)}, {tsr::detail::gradient_edge(a)});
  }
};

// The vectors' node: with X = V^T gV and E_ij = L_j - L_i,
// dA = V (skew(X) / E, zero diagonal) V^T, skew(X) = (X - X^T) / 2.
template <>
struct OpRule<tag::LinalgEighVectors> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, bool upper) {
    struct Rule {
      SavedTensor<T> a, v;
      bool upper;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> vm = v.get();
        // The values, recomputed as the Rayleigh quotients v_i^T A v_i.
        const Tensor<T> l = sum(vm * matmul(tsr::detail::symmetric_from(a.get(), upper), vm), {-2});
        const Tensor<T> x = matmul(mT(vm), g);
        const Tensor<T> inner = inverse_gaps(l) * skew(x) * T(0.5);
        return {matmul(matmul(vm, inner), mT(vm)).impl_ptr()};
      }
    };
    set_rule(out, "LinalgEighBackward0", Rule{SavedTensor<T>(a), SavedTensor<T>::output(out), upper},
             {tsr::detail::gradient_edge(a)});
  }
};

}  // namespace tsr::autograd
