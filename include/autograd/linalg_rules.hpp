// Backward of the matrix products: for C = A B, dA = dC B^T and dB = A^T dC,
// each one product through the same GEMM on transposed views (no copies),
// summed over the batch dims an operand was broadcast along. A 1-D operand
// is treated as the matrix PyTorch makes of it (a row for the left operand,
// a column for the right), so dot, mv, mm, bmm and every matmul share one
// rule.
#pragma once
#include "../linalg.hpp"
#include "function_node.hpp"

namespace tsr::autograd {
namespace detail_rules {

using tsr::detail::sum_to;

// Whether a matrix is stored column by column (a transposed view, as w.t()
// in linear): its gradient is then computed transposed, so that it comes
// out in the operand's own layout and the transpose's backward hands it on
// without a copy (PyTorch's mm_mat2_backward does the same).
template <class T>
bool column_major(const Tensor<T>& m) {
  return m.dim() == 2 && m.stride(0) == 1 && m.stride(1) != 1 && m.size(0) > 1;
}

// x y, or (y^T x^T)^T when the result should be stored column by column.
// (The public matmul: a recorded backward, create_graph, records it.)
template <class T>
Tensor<T> product(const Tensor<T>& x, const Tensor<T>& y, bool by_columns) {
  if (by_columns) return tsr::matmul(y.transpose(-1, -2), x.transpose(-1, -2)).transpose(-1, -2);
  return tsr::matmul(x, y);
}

// The matrix PyTorch makes of a 1-D operand: a row on the left, a column on
// the right.
template <class T>
Tensor<T> as_matrix(const Tensor<T>& t, bool left) {
  if (t.dim() != 1) return t;
  return left ? t.unsqueeze(0) : t.unsqueeze(1);
}

}  // namespace detail_rules

template <>
struct OpRule<tag::Matmul> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& b, const char* name) {
    struct Rule {
      SavedTensor<T> a, b;  // each kept only when the other needs a gradient
      Shape a_sizes, b_sizes;
      bool need_a, need_b;
      bool a_by_columns, b_by_columns;  // each operand's layout, for its gradient's
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_rules;
        // Both operands as (batched) matrices, and g shaped like their product.
        const Tensor<T> am = need_b ? as_matrix(a.get(), true) : Tensor<T>();
        const Tensor<T> bm = need_a ? as_matrix(b.get(), false) : Tensor<T>();
        Shape gm = g.sizes();
        if (a_sizes.size() == 1) gm.insert(gm.size() - (b_sizes.size() == 1 ? 0 : 1), 1);
        if (b_sizes.size() == 1) gm.push_back(1);
        const Tensor<T> g2 = g.reshape(gm);
        std::vector<GradRef> out(2);
        if (need_a) {
          Shape am_sizes = a_sizes;
          if (am_sizes.size() == 1) am_sizes.insert(0, 1);
          out[0] = sum_to(product(g2, bm.transpose(-1, -2), a_by_columns), am_sizes).reshape(a_sizes).impl_ptr();
        }
        if (need_b) {
          Shape bm_sizes = b_sizes;
          if (bm_sizes.size() == 1) bm_sizes.push_back(1);
          if (a_sizes.size() >= 3 && b_sizes.size() == 2) {
            // A batch of rows times one matrix (a Linear on a sequence): db is
            // one product over all the rows, not a product per batch entry
            // summed afterwards.
            const Tensor<T> rows = am.reshape({-1, am.size(-1)}), grads = g2.reshape({-1, g2.size(-1)});
            out[1] = product(rows.t(), grads, b_by_columns).impl_ptr();
          } else {
            out[1] = sum_to(product(am.transpose(-1, -2), g2, b_by_columns), bm_sizes).reshape(b_sizes).impl_ptr();
          }
        }
        return out;
      }
    };
    auto ea = tsr::detail::gradient_edge(a), eb = tsr::detail::gradient_edge(b);
    Rule rule{eb ? SavedTensor<T>(a) : SavedTensor<T>(), ea ? SavedTensor<T>(b) : SavedTensor<T>(), a.sizes(),
              b.sizes(), ea != nullptr, eb != nullptr, detail_rules::column_major(a), detail_rules::column_major(b)};
    set_rule(out, name, std::move(rule), {std::move(ea), std::move(eb)});
  }
};

// beta c + alpha (a b): dc = beta g summed to c's shape, da = alpha g b^T,
// db = alpha a^T g.
template <>
struct OpRule<tag::Addmm> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& c, const Tensor<T>& a, const Tensor<T>& b, T beta,
                     T alpha) {
    struct Rule {
      SavedTensor<T> a, b;
      Shape c_sizes;
      T beta, alpha;
      bool need_c, need_a, need_b;
      bool a_by_columns, b_by_columns;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        using namespace detail_rules;
        std::vector<GradRef> out(3);
        auto scaled = [](Tensor<T> t, T s) { return s == T(1) ? t : tsr::detail::backward_eval<T>(t * s); };
        if (need_c) out[0] = scaled(sum_to(g, c_sizes), beta).impl_ptr();
        if (need_a) out[1] = scaled(product(g, b.get().t(), a_by_columns), alpha).impl_ptr();
        if (need_b) out[2] = scaled(product(a.get().t(), g, b_by_columns), alpha).impl_ptr();
        return out;
      }
    };
    auto ec = tsr::detail::gradient_edge(c), ea = tsr::detail::gradient_edge(a), eb = tsr::detail::gradient_edge(b);
    Rule rule{eb ? SavedTensor<T>(a) : SavedTensor<T>(), ea ? SavedTensor<T>(b) : SavedTensor<T>(), c.sizes(), beta,
              alpha, ec != nullptr, ea != nullptr, eb != nullptr, detail_rules::column_major(a),
              detail_rules::column_major(b)};
    set_rule(out, "AddmmBackward0", std::move(rule), {std::move(ec), std::move(ea), std::move(eb)});
  }
};

}  // namespace tsr::autograd
