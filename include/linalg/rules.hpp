// The backward of tsr::linalg's functions (PyTorch 1.13's formulas), each
// written with tsr::linalg and matmul, so that a recorded backward
// (create_graph) records them in turn: derivatives of any order. A gradient
// is summed over the batch dims its operand was broadcast along.
#pragma once
#include "functions.hpp"

namespace tsr::autograd {
namespace detail_linalg {
using tsr::detail::sum_to;

template <class T>
Tensor<T> mT(const Tensor<T>& t) {
  return t.transpose(-1, -2);
}
template <class T>
GradRef sent_as(const Tensor<T>& grad, const Shape& sizes) {
  return sum_to(grad, sizes).impl_ptr();
}
// X - X^T.
template <class T>
Tensor<T> skew(const Tensor<T>& x) {
  return Tensor<T>(x - mT(x));
}
// F_ij = 1 / (x_j - x_i) off the diagonal, 0 on it: the spectral
// decompositions' gradients divide by the gaps between their values.
template <class T>
Tensor<T> inverse_gaps(const Tensor<T>& x) {
  const Tensor<bool> diagonal = eye<bool>(x.size(-1));
  return where(diagonal, T(0), T(1) / where(diagonal, T(1), x.unsqueeze(-2) - x.unsqueeze(-1)));
}
}  // namespace detail_linalg

// X = A^-1 B: dB = A^-T G, dA = -dB X^T.
template <>
struct OpRule<tag::LinalgSolve> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& b, bool vector_case) {
    struct Rule {
      SavedTensor<T> a, x;
      Shape a_sizes, b_sizes;
      bool vector_case, need_a, need_b;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> gb = linalg::solve(mT(a.get()), vector_case ? g.unsqueeze(-1) : g);
        std::vector<GradRef> grads(2);
        if (need_a) {
          const Tensor<T> xm = vector_case ? x.get().unsqueeze(-1) : x.get();
          grads[0] = sent_as(Tensor<T>(-matmul(gb, mT(xm))), a_sizes);
        }
        if (need_b) grads[1] = sent_as(vector_case ? gb.squeeze(-1) : gb, b_sizes);
        return grads;
      }
    };
    auto ea = tsr::detail::gradient_edge(a), eb = tsr::detail::gradient_edge(b);
    Rule rule{SavedTensor<T>(a), ea ? SavedTensor<T>::output(out) : SavedTensor<T>(), a.sizes(), b.sizes(),
              vector_case, ea != nullptr, eb != nullptr};
    set_rule(out, "LinalgSolveExBackward0", std::move(rule), {std::move(ea), std::move(eb)});
  }
};

// X = op(A)^-1 B (left) or B op(A)^-1 (right), op(A) A's triangle:
// dB = A^-T G (the other triangle, same side), dA = -dB X^T (left) or
// -X^T dB (right), kept to the triangle read (without its diagonal when
// unitriangular).
template <>
struct OpRule<tag::LinalgSolveTriangular> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& b, bool upper, bool left,
                     bool unitriangular) {
    struct Rule {
      SavedTensor<T> a, x;
      Shape a_sizes, b_sizes;
      bool upper, left, unitriangular, need_a, need_b;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> gb = linalg::solve_triangular(mT(a.get()), g, !upper, left, unitriangular);
        std::vector<GradRef> grads(2);
        if (need_a) {
          const Tensor<T> ga = left ? Tensor<T>(-matmul(gb, mT(x.get()))) : Tensor<T>(-matmul(mT(x.get()), gb));
          const int64_t diagonal = unitriangular ? (upper ? 1 : -1) : 0;
          grads[0] = sent_as(upper ? triu(ga, diagonal) : tril(ga, diagonal), a_sizes);
        }
        if (need_b) grads[1] = sent_as(gb, b_sizes);
        return grads;
      }
    };
    auto ea = tsr::detail::gradient_edge(a), eb = tsr::detail::gradient_edge(b);
    Rule rule{SavedTensor<T>(a), ea ? SavedTensor<T>::output(out) : SavedTensor<T>(), a.sizes(), b.sizes(), upper,
              left, unitriangular, ea != nullptr, eb != nullptr};
    set_rule(out, "LinalgSolveTriangularBackward0", std::move(rule), {std::move(ea), std::move(eb)});
  }
};

// Y = A^-1: dA = -Y^T G Y^T.
template <>
struct OpRule<tag::LinalgInv> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a) {
    struct Rule {
      SavedTensor<T> y;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> yt = mT(y.get());
        return {Tensor<T>(-matmul(yt, matmul(g, yt))).impl_ptr()};
      }
    };
    set_rule(out, "LinalgInvExBackward0", Rule{SavedTensor<T>::output(out)}, {tsr::detail::gradient_edge(a)});
  }
};

// d = det(A): dA = g d A^-T, zero where A is singular (as PyTorch 1.13's;
// the cofactors there are then constants of the recorded backward).
template <>
struct OpRule<tag::LinalgDet> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a) {
    struct Rule {
      SavedTensor<T> a, d;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> am = a.get(), dm = d.get();
        const Tensor<T> inverse = tsr::detail::any_zero(dm) ? tsr::detail::inverse_or_zeros(am) : linalg::inv(am);
        const Tensor<T> scale = Tensor<T>(g * dm).unsqueeze(-1).unsqueeze(-1);
        return {Tensor<T>(scale * mT(inverse)).impl_ptr()};
      }
    };
    set_rule(out, "LinalgDetBackward0", Rule{SavedTensor<T>(a), SavedTensor<T>::output(out)},
             {tsr::detail::gradient_edge(a)});
  }
};

// log|det(A)|: dA = g A^-T, which is not finite where A is singular.
template <>
struct OpRule<tag::LinalgSlogdet> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a) {
    struct Rule {
      SavedTensor<T> a;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> am = a.get();
        Tensor<T> inverse;
        try {
          inverse = linalg::inv(am);
        } catch (const LinAlgError&) {
          tsr::detail::fail<LinAlgError>("linalg.slogdet: the gradient of logabsdet is not finite at a singular matrix");
        }
        return {Tensor<T>(g.unsqueeze(-1).unsqueeze(-1) * mT(inverse)).impl_ptr()};
      }
    };
    set_rule(out, "LinalgSlogdetBackward0", Rule{SavedTensor<T>(a)}, {tsr::detail::gradient_edge(a)});
  }
};

// A = L L^T (Murray, arXiv 1602.07527, as PyTorch computes it): with
// P = tril(L^T G), dA = L^-T (P + tril(P, -1)^T) / 2 L^-1; an upper factor
// U = L^T takes the transposes.
template <>
struct OpRule<tag::LinalgCholesky> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, bool upper) {
    struct Rule {
      SavedTensor<T> factor;
      bool upper;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> l = upper ? mT(factor.get()) : factor.get(), gl = upper ? mT(g) : g;
        const Tensor<T> p = tril(matmul(mT(l), gl));
        const Tensor<T> phi = Tensor<T>(T(0.5) * (p + mT(tril(p, -1))));
        const Tensor<T> left = linalg::solve_triangular(mT(l), phi, /*upper=*/true);
        return {linalg::solve_triangular(l, left, /*upper=*/false, /*left=*/false).impl_ptr()};
      }
    };
    set_rule(out, "LinalgCholeskyExBackward0", Rule{SavedTensor<T>::output(out), upper},
             {tsr::detail::gradient_edge(a)});
  }
};

// X = (L L^T)^-1 B: dB = cholesky_solve(G, L), and with C = dB X^T + X dB^T,
// dL = -C L (or -U C with upper), PyTorch's formula, which differentiates
// the whole factor.
template <>
struct OpRule<tag::CholeskySolve> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& b, const Tensor<T>& l, bool upper) {
    struct Rule {
      SavedTensor<T> l, x;
      Shape b_sizes, l_sizes;
      bool upper, need_b, need_l;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_linalg;
        const Tensor<T> factor = l.get();
        const Tensor<T> gb = cholesky_solve(g, factor, upper);
        std::vector<GradRef> grads(2);
        if (need_b) grads[0] = sent_as(gb, b_sizes);
        if (need_l) {
          const Tensor<T> half = matmul(gb, mT(x.get()));
          const Tensor<T> common = Tensor<T>(half + mT(half));
          grads[1] = sent_as(Tensor<T>(-(upper ? matmul(factor, common) : matmul(common, factor))), l_sizes);
        }
        return grads;
      }
    };
    auto eb = tsr::detail::gradient_edge(b), el = tsr::detail::gradient_edge(l);
    Rule rule{SavedTensor<T>(l), el ? SavedTensor<T>::output(out) : SavedTensor<T>(), b.sizes(), l.sizes(), upper,
              eb != nullptr, el != nullptr};
    set_rule(out, "CholeskySolveBackward0", std::move(rule), {std::move(eb), std::move(el)});
  }
};

}  // namespace tsr::autograd
