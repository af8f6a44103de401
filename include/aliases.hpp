// PyTorch's function names for what tessera writes as an operator or names
// otherwise: torch.add(a, b, alpha=...), torch.eq, torch.bitwise_and,
// torch.clip, torch.arccos, torch.max(a, b), torch.div(..., rounding_mode),
// the top-level names of special functions (torch.lgamma, torch.xlogy),
// and a few functions made of existing ones (copysign, isposinf, inner,
// ravel, msort). So code ported from libtorch keeps its calls. Each is the
// expression (or result) of what it stands for: it fuses, broadcasts,
// promotes and differentiates the same way.
#pragma once
#include <numbers>
#include <string_view>
#include <type_traits>

#include "math_composite.hpp"
#include "products.hpp"
#include "sort.hpp"
#include "special.hpp"

namespace tsr {
namespace detail {
// alpha of add/sub: PyTorch refuses a floating alpha for integer operands
// and a non-bool one for bool operands.
template <class A, class B, class S>
constexpr void check_alpha() {
  using T = operands_t<A, B>;
  static_assert(!(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_floating_point_v<S>),
                "For integral input tensors, argument alpha must not be a floating point number.");
  static_assert(!std::is_same_v<T, bool> || std::is_same_v<S, bool>,
                "Boolean alpha only supported for Boolean results.");
}
}  // namespace detail

// ----- arithmetic -----------------------------------------------------------
// a + alpha * b (alpha = 1 adds b itself: the product is exact).
template <class A, class B, Scalar S = int> requires Operands<A, B>
auto add(const A& a, const B& b, S alpha = 1) {
  detail::check_alpha<A, B, S>();
  return a + b * alpha;
}
template <class A, class B, Scalar S = int> requires Operands<A, B>
auto sub(const A& a, const B& b, S alpha = 1) {
  detail::check_alpha<A, B, S>();
  return a - b * alpha;
}
template <class A, class B, Scalar S = int> requires Operands<A, B>
auto subtract(const A& a, const B& b, S alpha = 1) { return sub(a, b, alpha); }
// b - alpha * a: torch.rsub, subtraction with the operands swapped.
template <class A, class B, Scalar S = int> requires Operands<A, B>
auto rsub(const A& a, const B& b, S alpha = 1) { return sub(b, a, alpha); }
template <class A, class B> requires Operands<A, B>
auto mul(const A& a, const B& b) { return a * b; }
template <class A, class B> requires Operands<A, B>
auto multiply(const A& a, const B& b) { return a * b; }
// True division (integers divide in float, as `/`).
template <class A, class B> requires Operands<A, B>
auto div(const A& a, const B& b) { return a / b; }
template <class A, class B> requires Operands<A, B>
auto divide(const A& a, const B& b) { return a / b; }
template <class A, class B> requires Operands<A, B>
auto true_divide(const A& a, const B& b) { return a / b; }

// Division rounded toward zero ("trunc") or down ("floor"), in the operands'
// type: integers stay integers, as in PyTorch. The rounding mode is known at
// run time only, so the result is a tensor, not an expression.
template <class A, class B> requires Operands<A, B>
Tensor<detail::operands_t<A, B>> div(const A& a, const B& b, std::string_view rounding_mode) {
  using T = detail::operands_t<A, B>;
  static_assert(!std::is_same_v<T, bool>, "div: bool tensors with a rounding mode are not supported, as in PyTorch");
  if (rounding_mode == "floor") return floor_divide(a, b);
  detail::check(rounding_mode == "trunc", "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                          "found '", rounding_mode, "'");
  if constexpr (is_floating_v<T>) {
    return trunc(a / b);
  } else {
    // Floor division is one below where the quotient is inexact and negative.
    return floor_divide(a, b) + ((remainder(a, b) != T(0)) & ((a < T(0)) != (b < T(0))));
  }
}
template <class A, class B> requires Operands<A, B>
auto divide(const A& a, const B& b, std::string_view rounding_mode) { return div(a, b, rounding_mode); }

template <Expression E> auto negative(const E& e) { return -e; }
template <Expression E> auto absolute(const E& e) { return abs(e); }
// torch.fix is trunc.
template <Expression E> auto fix(const E& e) { return trunc(e); }

// |a| with the sign bit of b (-0.0 and a NaN with its sign bit count as
// negative); integers compute in float, as in PyTorch. The gradient is
// +-1 (0 where a is 0), as PyTorch's.
template <Expression A, class B> requires(Expression<B> || Scalar<B>)
auto copysign(const A& a, const B& b) {
  using P = detail::operands_t<A, B>;
  using R = std::conditional_t<is_floating_v<P>, P, float>;
  const auto x = cast<R>(a);
  if constexpr (Scalar<B>) {
    return where(ScalarLeaf<bool>(std::signbit(static_cast<double>(b))), -abs(x), abs(x));
  } else {
    return where(signbit(b), -abs(x), abs(x));
  }
}

// ----- clamping, extremes -----------------------------------------------------
template <Expression E, class L, class H>
  requires((Expression<L> || Scalar<L>) && (Expression<H> || Scalar<H>))
auto clip(const E& x, const L& lo, const H& hi) { return clamp(x, lo, hi); }
template <Expression E, class L> requires(Expression<L> || Scalar<L>)
auto clip(const E& x, const L& lo) { return clamp(x, lo); }
template <Expression E, class H> requires(Expression<H> || Scalar<H>)
auto clip(const E& x, std::nullopt_t, const H& hi) { return clamp(x, std::nullopt, hi); }
// torch.max(a, b) and torch.min(a, b) of two tensors are maximum and minimum
// (NaN wins); max(x, dim) reduces.
template <Expression A, Expression B>
auto max(const A& a, const B& b) { return maximum(a, b); }
template <Expression A, Expression B>
auto min(const A& a, const B& b) { return minimum(a, b); }

// ----- comparisons and bitwise operations -------------------------------------
template <class A, class B> requires Operands<A, B> auto eq(const A& a, const B& b) { return a == b; }
template <class A, class B> requires Operands<A, B> auto ne(const A& a, const B& b) { return a != b; }
template <class A, class B> requires Operands<A, B> auto not_equal(const A& a, const B& b) { return a != b; }
template <class A, class B> requires Operands<A, B> auto lt(const A& a, const B& b) { return a < b; }
template <class A, class B> requires Operands<A, B> auto less(const A& a, const B& b) { return a < b; }
template <class A, class B> requires Operands<A, B> auto le(const A& a, const B& b) { return a <= b; }
template <class A, class B> requires Operands<A, B> auto less_equal(const A& a, const B& b) { return a <= b; }
template <class A, class B> requires Operands<A, B> auto gt(const A& a, const B& b) { return a > b; }
template <class A, class B> requires Operands<A, B> auto greater(const A& a, const B& b) { return a > b; }
template <class A, class B> requires Operands<A, B> auto ge(const A& a, const B& b) { return a >= b; }
template <class A, class B> requires Operands<A, B> auto greater_equal(const A& a, const B& b) { return a >= b; }
template <class A, class B> requires Operands<A, B> auto bitwise_and(const A& a, const B& b) { return a & b; }
template <class A, class B> requires Operands<A, B> auto bitwise_or(const A& a, const B& b) { return a | b; }
template <class A, class B> requires Operands<A, B> auto bitwise_xor(const A& a, const B& b) { return a ^ b; }

// Whether an element is +inf (-inf); false for integers and bools.
template <Expression E> auto isposinf(const E& e) { return isinf(e) & (e > 0); }
template <Expression E> auto isneginf(const E& e) { return isinf(e) & (e < 0); }

// ----- trigonometric names ----------------------------------------------------
template <Expression E> auto arcsin(const E& e) { return asin(e); }
template <Expression E> auto arccos(const E& e) { return acos(e); }
template <Expression E> auto arctan(const E& e) { return atan(e); }
template <Expression E> auto arcsinh(const E& e) { return asinh(e); }
template <Expression E> auto arccosh(const E& e) { return acosh(e); }
template <Expression E> auto arctanh(const E& e) { return atanh(e); }
template <class A, class B> auto arctan2(const A& a, const B& b) { return atan2(a, b); }

// ----- torch's top-level names for special functions ----------------------------
template <Expression E> auto lgamma(const E& e) { return special::gammaln(e); }
template <Expression E> auto digamma(const E& e) { return special::digamma(e); }
template <Expression E> auto polygamma(int64_t n, const E& e) { return special::polygamma(n, e); }
template <Expression E> auto mvlgamma(const E& e, int64_t p) { return special::multigammaln(e, p); }
template <Expression E> auto erfinv(const E& e) { return special::erfinv(e); }
template <Expression E> auto i0(const E& e) { return special::i0(e); }
template <Expression E> auto sinc(const E& e) { return special::sinc(e); }
template <Expression E> auto logit(const E& e) { return special::logit(e); }
template <Expression E> auto logit(const E& e, double eps) { return special::logit(e, eps); }
template <class A, class B> auto xlogy(const A& a, const B& b) { return special::xlogy(a, b); }
template <class A, class B> auto igamma(const A& a, const B& x) { return special::gammainc(a, x); }
template <class A, class B> auto igammac(const A& a, const B& x) { return special::gammaincc(a, x); }

// ----- shapes and products ------------------------------------------------------
// The elements in row-major order as a 1-D tensor: a view where x is
// contiguous, else a copy (torch.ravel).
template <class T>
Tensor<T> ravel(const Tensor<T>& x) { return x.reshape({-1}); }
// x sorted along its first dim (torch.msort): the values of sort(x, 0).
template <Expression E>
auto msort(const E& e) { return std::get<0>(sort(e, 0)); }
// The sum of products over the last dims of a and b (a number times a
// tensor where one is 0-d): torch.inner.
template <class T>
Tensor<T> inner(const Tensor<T>& a, const Tensor<T>& b) {
  if (a.dim() == 0 || b.dim() == 0) return a * b;
  detail::check(a.size(-1) == b.size(-1), "inner() the last dimension must match on both input tensors but got "
                "shapes ", a.sizes(), " and ", b.sizes());
  return tensordot(a, b, Shape{-1}, Shape{-1});
}

}  // namespace tsr
