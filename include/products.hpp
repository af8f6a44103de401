// Products built on the matrix products: addmv, addr, addbmm and baddbmm
// (beta * input + alpha * a product), tensordot (contraction over chosen
// dims) and kron (the Kronecker product).
//
// Each is one call of the products in linalg.hpp (addmv, addr and addbmm are
// one addmm: a matrix-vector product is a product with one column, an outer
// product one with a single inner dim, and a sum of batched products one
// product over the batches laid side by side), so each runs on the packed
// GEMM and differentiates through it.
#pragma once
#include <numeric>
#include <vector>

#include "linalg.hpp"
#include "shape_ops.hpp"

namespace tsr {

// beta * c + alpha * (m @ v) for a matrix m and a vector v; c (1-D or 0-D)
// broadcasts to the result and is ignored where beta is 0.
template <Expression C, Expression M, Expression V, class Beta = double, class Alpha = double>
auto addmv(const C& c, const M& m, const V& v, Beta beta = 1, Alpha alpha = 1) {
  detail::check_matmul_types<M, V>();
  using T = detail::matmul_value_t<M, V>;
  const auto& tc = detail::tensor_operand<T>(c);
  const auto& tm = detail::tensor_operand<T>(m);
  const auto& tv = detail::tensor_operand<T>(v);
  detail::check(tm.dim() == 2 && tv.dim() == 1 && tc.dim() <= 1, "vector + matrix @ vector expected, got ", tc.dim(), ", ",
                tm.dim(), ", ", tv.dim());
  detail::check(tm.size(1) == tv.size(0) && (tc.numel() == tm.size(0) || tc.numel() == 1), "size mismatch, got ",
                tc.numel(), ", ", tm.size(0), "x", tm.size(1), ",", tv.size(0));
  return addmm(tc.expand({tm.size(0)}).unsqueeze(1), tm, tv.unsqueeze(1), beta, alpha).squeeze(1);
}

// beta * c + alpha * outer(u, v); c broadcasts to the result.
template <Expression C, Expression U, Expression V, class Beta = double, class Alpha = double>
auto addr(const C& c, const U& u, const V& v, Beta beta = 1, Alpha alpha = 1) {
  detail::check_matmul_types<U, V>();
  using T = detail::matmul_value_t<U, V>;
  const auto& tu = detail::tensor_operand<T>(u);
  const auto& tv = detail::tensor_operand<T>(v);
  detail::check(tu.dim() == 1, "addr: Expected 1-D argument vec1, but got ", tu.dim(), "-D");
  detail::check(tv.dim() == 1, "addr: Expected 1-D argument vec2, but got ", tv.dim(), "-D");
  return addmm(c, tu.unsqueeze(1), tv.unsqueeze(0), beta, alpha);
}

// beta * c + alpha * (the sum over i of b1[i] @ b2[i]) for batches of
// matrices b1 (b, n, k) and b2 (b, k, p): one product of the batches laid
// side by side, (n, b * k) @ (b * k, p).
template <Expression C, Expression B1, Expression B2, class Beta = double, class Alpha = double>
auto addbmm(const C& c, const B1& b1, const B2& b2, Beta beta = 1, Alpha alpha = 1) {
  detail::check_matmul_types<B1, B2>();
  using T = detail::matmul_value_t<B1, B2>;
  const auto& x = detail::tensor_operand<T>(b1);
  const auto& y = detail::tensor_operand<T>(b2);
  detail::check(x.dim() == 3, "batch1 must be a 3D tensor");
  detail::check(y.dim() == 3, "batch2 must be a 3D tensor");
  detail::check(x.size(0) == y.size(0), "batch1 and batch2 must have same number of batches, got ", x.size(0), " and ",
                y.size(0));
  detail::check(x.size(2) == y.size(1), "Incompatible matrix sizes for bmm (", x.size(1), "x", x.size(2), " and ",
                y.size(1), "x", y.size(2), ")");
  const int64_t inner = x.size(0) * x.size(2);
  return addmm(c, x.permute({1, 0, 2}).reshape({x.size(1), inner}), y.reshape({inner, y.size(2)}), beta, alpha);
}

// beta * c + alpha * bmm(b1, b2); c broadcasts to the (b, n, p) result and
// is ignored where beta is 0.
template <Expression C, Expression B1, Expression B2, class Beta = double, class Alpha = double>
auto baddbmm(const C& c, const B1& b1, const B2& b2, Beta beta = 1, Alpha alpha = 1) {
  using T = detail::matmul_value_t<B1, B2>;
  Tensor<T> product = bmm(b1, b2);
  const auto& tc = detail::tensor_operand<T>(c);
  const auto input = tc.expand(product.sizes());  // PyTorch's error where c does not broadcast
  if (static_cast<T>(alpha) != T(1)) product = product * static_cast<T>(alpha);
  if (static_cast<T>(beta) == T(0)) return product;
  return Tensor<T>(input * static_cast<T>(beta) + product);
}

// The contraction of a and b over dims_a of a and dims_b of b (pairwise
// equal sizes): the result has a's remaining dims, then b's. One matrix
// product of a's and b's remaining dims against the contracted ones.
template <Expression A, Expression B>
auto tensordot(const A& a, const B& b, const Shape& dims_a, const Shape& dims_b) {
  detail::check_matmul_types<A, B>();
  using T = detail::matmul_value_t<A, B>;
  const auto& ta = detail::tensor_operand<T>(a);
  const auto& tb = detail::tensor_operand<T>(b);
  detail::check(dims_a.size() == dims_b.size(), "both dimension lists should have same length");
  std::vector<bool> contracted_a(static_cast<std::size_t>(ta.dim())), contracted_b(static_cast<std::size_t>(tb.dim()));
  std::vector<int64_t> order_a, order_b, inner_a;  // a: free dims then contracted ones; b: contracted then free
  int64_t inner = 1;
  for (std::size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = detail::wrap_dim(dims_a[i], ta.dim()), db = detail::wrap_dim(dims_b[i], tb.dim());
    detail::check(ta.size(da) == tb.size(db), "contracted dimensions need to match, but first has size ", ta.size(da),
                  " in dim ", da, " and second has size ", tb.size(db), " in dim ", db);
    contracted_a[static_cast<std::size_t>(da)] = contracted_b[static_cast<std::size_t>(db)] = true;
    inner_a.push_back(da);
    order_b.push_back(db);
    inner *= ta.size(da);
  }
  Shape shape;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < ta.dim(); ++d)
    if (!contracted_a[static_cast<std::size_t>(d)]) order_a.push_back(d), shape.push_back(ta.size(d)), rows *= ta.size(d);
  order_a.insert(order_a.end(), inner_a.begin(), inner_a.end());
  for (int64_t d = 0; d < tb.dim(); ++d)
    if (!contracted_b[static_cast<std::size_t>(d)]) order_b.push_back(d), shape.push_back(tb.size(d)), cols *= tb.size(d);
  const Tensor<T> pa = ta.permute(Shape(order_a.begin(), order_a.end())).reshape({rows, inner});
  const Tensor<T> pb = tb.permute(Shape(order_b.begin(), order_b.end())).reshape({inner, cols});
  return mm(pa, pb).reshape(shape);
}
// The last `dims` dims of a against the first `dims` of b.
template <Expression A, Expression B>
auto tensordot(const A& a, const B& b, int64_t dims = 2) {
  detail::check(dims >= 0, "tensordot expects dims >= 0, but got dims=", dims);
  Shape dims_a, dims_b;
  for (int64_t i = 0; i < dims; ++i) dims_a.push_back(a.dim() - dims + i), dims_b.push_back(i);
  return tensordot(a, b, dims_a, dims_b);
}

// The Kronecker product: for tensors of the same rank (the smaller one
// taken with leading 1s), the block of a[i] * b at each index i of a. Mixed
// element types promote, as in PyTorch.
template <Expression A, Expression B>
auto kron(const A& a, const B& b) {
  const Tensor<typename A::value_type> ta(a);
  const Tensor<typename B::value_type> tb(b);
  const int64_t rank = std::max(ta.dim(), tb.dim());
  Shape spread_a, spread_b, shape;  // a at the even dims, b at the odd ones
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t sa = d < rank - ta.dim() ? 1 : ta.size(d - (rank - ta.dim()));
    const int64_t sb = d < rank - tb.dim() ? 1 : tb.size(d - (rank - tb.dim()));
    spread_a.push_back(sa), spread_a.push_back(1);
    spread_b.push_back(1), spread_b.push_back(sb);
    shape.push_back(sa * sb);
  }
  using T = typename decltype(ta * tb)::value_type;
  return Tensor<T>(ta.reshape(spread_a) * tb.reshape(spread_b)).reshape(shape);
}

}  // namespace tsr
