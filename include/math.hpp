// The public elementwise API: operators and functions over expressions.
// Each returns a lazy node; nothing is computed here.
#pragma once
#include <limits>
#include <optional>

#include "ops.hpp"

namespace tsr {
namespace detail {
template <class Op, class A, class B>
auto make_binary(const A& a, const B& b, Op op = {}) {
  using X = decltype(as_operand<B>(a));
  using Y = decltype(as_operand<A>(b));
  return Binary<Op, X, Y>(operand_ref<B>(a), operand_ref<A>(b), op);
}
template <class A, class B>
constexpr bool both_bool() {
  return std::is_same_v<value_of_t<decltype(as_operand<B>(std::declval<A>()))>, bool> &&
         std::is_same_v<value_of_t<decltype(as_operand<A>(std::declval<B>()))>, bool>;
}
}  // namespace detail

// ----- operators -------------------------------------------------------------
template <class A, class B> requires Operands<A, B>
auto operator+(const A& a, const B& b) { return detail::make_binary<ops::Add>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator-(const A& a, const B& b) {
  static_assert(!detail::both_bool<A, B>(), "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                            "Use the `^` or `logical_xor()` operator instead.");
  return detail::make_binary<ops::Sub>(a, b);
}
template <class A, class B> requires Operands<A, B>
auto operator*(const A& a, const B& b) { return detail::make_binary<ops::Mul>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator/(const A& a, const B& b) { return detail::make_binary<ops::Div>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator%(const A& a, const B& b) { return detail::make_binary<ops::Remainder>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator==(const A& a, const B& b) { return detail::make_binary<ops::Eq>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator!=(const A& a, const B& b) { return detail::make_binary<ops::Ne>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator<(const A& a, const B& b) { return detail::make_binary<ops::Lt>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator<=(const A& a, const B& b) { return detail::make_binary<ops::Le>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator>(const A& a, const B& b) { return detail::make_binary<ops::Gt>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator>=(const A& a, const B& b) { return detail::make_binary<ops::Ge>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator&&(const A& a, const B& b) { return detail::make_binary<ops::LogicalAnd>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator||(const A& a, const B& b) { return detail::make_binary<ops::LogicalOr>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator&(const A& a, const B& b) { return detail::make_binary<ops::BitwiseAnd>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator|(const A& a, const B& b) { return detail::make_binary<ops::BitwiseOr>(a, b); }
template <class A, class B> requires Operands<A, B>
auto operator^(const A& a, const B& b) { return detail::make_binary<ops::BitwiseXor>(a, b); }

template <Expression E>
auto operator-(const E& e) {
  static_assert(!std::is_same_v<typename E::value_type, bool>,
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
                "use the `~` or `logical_not()` operator instead.");
  return Unary<ops::Neg, E>(e);
}
template <Expression E>
auto operator!(const E& e) { return Unary<ops::LogicalNot, E>(e); }
template <Expression E>
auto operator~(const E& e) { return Unary<ops::BitwiseNot, E>(e); }

// ----- unary functions ----------------------------------------------------------
// clang-format off
template <Expression E> auto neg(const E& e) { return -e; }
template <Expression E> auto abs(const E& e) { return Unary<ops::Abs, E>(e); }
template <Expression E> auto sign(const E& e) { return Unary<ops::Sign, E>(e); }
template <Expression E> auto sqrt(const E& e) { return Unary<ops::Sqrt, E>(e); }
template <Expression E> auto rsqrt(const E& e) { return Unary<ops::Rsqrt, E>(e); }
template <Expression E> auto exp(const E& e) { return Unary<ops::Exp, E>(e); }
template <Expression E> auto exp2(const E& e) { return Unary<ops::Exp2, E>(e); }
template <Expression E> auto expm1(const E& e) { return Unary<ops::Expm1, E>(e); }
template <Expression E> auto log(const E& e) { return Unary<ops::Log, E>(e); }
template <Expression E> auto log2(const E& e) { return Unary<ops::Log2, E>(e); }
template <Expression E> auto log10(const E& e) { return Unary<ops::Log10, E>(e); }
template <Expression E> auto log1p(const E& e) { return Unary<ops::Log1p, E>(e); }
template <Expression E> auto sin(const E& e) { return Unary<ops::Sin, E>(e); }
template <Expression E> auto cos(const E& e) { return Unary<ops::Cos, E>(e); }
template <Expression E> auto tan(const E& e) { return Unary<ops::Tan, E>(e); }
template <Expression E> auto asin(const E& e) { return Unary<ops::Asin, E>(e); }
template <Expression E> auto acos(const E& e) { return Unary<ops::Acos, E>(e); }
template <Expression E> auto atan(const E& e) { return Unary<ops::Atan, E>(e); }
template <Expression E> auto sinh(const E& e) { return Unary<ops::Sinh, E>(e); }
template <Expression E> auto cosh(const E& e) { return Unary<ops::Cosh, E>(e); }
template <Expression E> auto tanh(const E& e) { return Unary<ops::Tanh, E>(e); }
template <Expression E> auto asinh(const E& e) { return Unary<ops::Asinh, E>(e); }
template <Expression E> auto acosh(const E& e) { return Unary<ops::Acosh, E>(e); }
template <Expression E> auto atanh(const E& e) { return Unary<ops::Atanh, E>(e); }
template <Expression E> auto sigmoid(const E& e) { return Unary<ops::Sigmoid, E>(e); }
template <Expression E> auto relu(const E& e) { return Unary<ops::Relu, E>(e); }
template <Expression E> auto gelu(const E& e, bool approximate = false) { return Unary<ops::Gelu, E>(e, ops::Gelu{{}, approximate}); }
template <Expression E> auto silu(const E& e) { return Unary<ops::Silu, E>(e); }
template <Expression E> auto softplus(const E& e) { return Unary<ops::Softplus, E>(e); }
template <Expression E> auto erf(const E& e) { return Unary<ops::Erf, E>(e); }
template <Expression E> auto erfc(const E& e) { return Unary<ops::Erfc, E>(e); }
template <Expression E> auto floor(const E& e) { return Unary<ops::Floor, E>(e); }
template <Expression E> auto ceil(const E& e) { return Unary<ops::Ceil, E>(e); }
template <Expression E> auto round(const E& e) { return Unary<ops::Round, E>(e); }
template <Expression E> auto trunc(const E& e) { return Unary<ops::Trunc, E>(e); }
template <Expression E> auto frac(const E& e) { return Unary<ops::Frac, E>(e); }
template <Expression E> auto reciprocal(const E& e) { return Unary<ops::Reciprocal, E>(e); }
template <Expression E> auto isnan(const E& e) { return Unary<ops::IsNan, E>(e); }
template <Expression E> auto isinf(const E& e) { return Unary<ops::IsInf, E>(e); }
template <Expression E> auto isfinite(const E& e) { return Unary<ops::IsFinite, E>(e); }
template <Expression E> auto logical_not(const E& e) { return !e; }
template <Expression E> auto bitwise_not(const E& e) { return ~e; }
// clang-format on

// PyTorch's square is pow(x, 2): a bool tensor squares to int64.
template <Expression E>
auto square(const E& e) {
  if constexpr (std::is_same_v<typename E::value_type, bool>)
    return Unary<ops::Square, Cast<int64_t, E>>(cast<int64_t>(e));
  else
    return Unary<ops::Square, E>(e);
}

// ----- binary functions ---------------------------------------------------------
template <class A, class B> requires Operands<A, B>
auto atan2(const A& a, const B& b) { return detail::make_binary<ops::Atan2>(a, b); }
template <class A, class B> requires Operands<A, B>
auto maximum(const A& a, const B& b) { return detail::make_binary<ops::Maximum>(a, b); }
template <class A, class B> requires Operands<A, B>
auto minimum(const A& a, const B& b) { return detail::make_binary<ops::Minimum>(a, b); }
template <class A, class B> requires Operands<A, B>
auto fmod(const A& a, const B& b) { return detail::make_binary<ops::Fmod>(a, b); }
template <class A, class B> requires Operands<A, B>
auto remainder(const A& a, const B& b) { return detail::make_binary<ops::Remainder>(a, b); }
template <class A, class B> requires Operands<A, B>
auto floor_divide(const A& a, const B& b) { return detail::make_binary<ops::FloorDivide>(a, b); }
template <class A, class B> requires Operands<A, B>
auto logical_and(const A& a, const B& b) { return a && b; }
template <class A, class B> requires Operands<A, B>
auto logical_or(const A& a, const B& b) { return a || b; }
template <class A, class B> requires Operands<A, B>
auto logical_xor(const A& a, const B& b) { return detail::make_binary<ops::Ne>(cast<bool>(detail::as_operand<B>(a)), cast<bool>(detail::as_operand<A>(b))); }

// pow(x, y): tensor exponent, or a scalar exponent (PyTorch's fast paths).
// An integer tensor to a negative integer scalar is refused, as PyTorch
// does (with a tensor of exponents it gives 0, or +-1 for bases +-1).
template <class A, class B> requires Operands<A, B>
auto pow(const A& a, const B& b) {
  if constexpr (Expression<A> && Scalar<B>) {
    if constexpr (std::is_same_v<typename A::value_type, bool> && std::is_integral_v<B>) {
      // A bool tensor to an integer power is int64, as in PyTorch (a bool
      // exponent makes the computation bool, which it refuses).
      static_assert(!std::is_same_v<B, bool>, "pow: bool tensors are not supported, as in PyTorch");
      return pow(cast<int64_t>(a), b);
    } else if constexpr (std::is_floating_point_v<B> || !is_integral_v<typename A::value_type>) {
      return Unary<ops::PowScalar, A>(a, ops::PowScalar{{}, static_cast<double>(b)});
    } else {
      if constexpr (std::is_signed_v<B>) detail::check(b >= 0, "Integers to negative integer powers are not allowed.");
      return Unary<ops::PowIntScalar, A>(a, ops::PowIntScalar{{}, static_cast<int64_t>(b)});
    }
  } else {
    return detail::make_binary<ops::Pow>(a, b);
  }
}

// ----- ternary functions ------------------------------------------------------
namespace detail {
template <class Op, class X, class A, class B>
auto make_ternary(const X& x, const A& a, const B& b, Op op = {}) {
  // Numbers take their type beside the first expression operand.
  using Ref = std::conditional_t<Expression<X>, X, std::conditional_t<Expression<A>, A, B>>;
  using X_ = decltype(as_operand<Ref>(x));
  using A_ = decltype(as_operand<Ref>(a));
  using B_ = decltype(as_operand<Ref>(b));
  return Ternary<Op, X_, A_, B_>(operand_ref<Ref>(x), operand_ref<Ref>(a), operand_ref<Ref>(b), op);
}
}  // namespace detail

// where(cond, a, b): a where cond is true, b elsewhere; cond must be bool.
template <Expression C, class A, class B>
  requires((Expression<A> || Scalar<A>) && (Expression<B> || Scalar<B>))
auto where(const C& cond, const A& a, const B& b) {
  static_assert(std::is_same_v<typename C::value_type, bool>,
                "where expected condition to be a boolean tensor");
  using Ref = std::conditional_t<Expression<A>, A, std::conditional_t<Expression<B>, B, C>>;
  using A_ = decltype(detail::as_operand<Ref>(a));
  using B_ = decltype(detail::as_operand<Ref>(b));
  return Ternary<ops::Where, C, A_, B_>(cond, detail::operand_ref<Ref>(a), detail::operand_ref<Ref>(b));
}
// Bounds and x compute in their common type; PyTorch has no clamp kernel
// for bool (with integer bounds a bool tensor computes in int64).
template <Expression E, class L, class H>
  requires((Expression<L> || Scalar<L>) && (Expression<H> || Scalar<H>))
auto clamp(const E& x, const L& lo, const H& hi) {
  auto node = detail::make_ternary<ops::Clamp>(x, lo, hi);
  static_assert(!std::is_same_v<typename decltype(node)::value_type, bool>,
                "clamp: bool tensors with bool bounds are not supported, as in PyTorch");
  return node;
}
// The larger (smaller) of a and b where one of them is NaN is the other.
template <class A, class B>
  requires(Expression<A> || Expression<B>)
auto fmax(const A& a, const B& b) { return detail::make_binary<ops::Fmax>(a, b); }
template <class A, class B>
  requires(Expression<A> || Expression<B>)
auto fmin(const A& a, const B& b) { return detail::make_binary<ops::Fmin>(a, b); }
// torch.nn.functional.hardtanh and threshold.
template <Expression E>
auto hardtanh(const E& x, double min_val = -1.0, double max_val = 1.0) {
  return Unary<ops::Hardtanh, E>(x, ops::Hardtanh{{}, min_val, max_val});
}
template <Expression E>
auto threshold(const E& x, double threshold, double value) {
  return Unary<ops::Threshold, E>(x, ops::Threshold{{}, threshold, value});
}
template <Expression E, class L>
auto clamp_min(const E& x, const L& lo) { return maximum(x, lo); }
template <Expression E, class H>
auto clamp_max(const E& x, const H& hi) { return minimum(x, hi); }
// One bound, as libtorch's clamp(x, min) and clamp(x, nullopt, max). A NaN
// bound propagates, as in clamp_min/clamp_max (PyTorch 1.13's one-bound
// clamp with a NaN scalar returns x unchanged; docs/differences.md).
// PyTorch refuses a bool clamp with a scalar bound (a bool tensor bound is
// the maximum or minimum of two bool tensors, which it takes).
template <Expression E, class L>
  requires(Expression<L> || Scalar<L>)
auto clamp(const E& x, const L& lo) {
  static_assert(!(Scalar<L> && detail::both_bool<E, L>()),
                "clamp: a bool tensor with a bool number as its min is not supported, as in PyTorch");
  return clamp_min(x, lo);
}
template <Expression E, class H>
  requires(Expression<H> || Scalar<H>)
auto clamp(const E& x, std::nullopt_t, const H& hi) {
  static_assert(!(Scalar<H> && detail::both_bool<E, H>()),
                "clamp: a bool tensor with a bool number as its max is not supported, as in PyTorch");
  return clamp_max(x, hi);
}
namespace detail {
// Whether X is a number or an expression of element type T (lerp's operands).
template <class X, class T>
constexpr bool number_or_of_type() {
  if constexpr (Expression<X>) return std::is_same_v<typename X::value_type, T>;
  else return true;
}
}  // namespace detail
// start + weight (end - start). As in PyTorch, the tensors are floating and
// of one dtype (a number takes theirs): no promotion.
template <class A, class B, class W>
  requires(Expression<A> || Expression<B>)
auto lerp(const A& a, const B& b, const W& w) {
  using T = detail::value_of_t<std::conditional_t<Expression<A>, A, B>>;
  static_assert(is_floating_v<T>, "lerp: integer and bool tensors are not supported, as in PyTorch");
  static_assert(detail::number_or_of_type<B, T>(),
                "lerp: expected dtype of `end` to be the dtype of `start` (PyTorch: expected dtype float for `end` "
                "but got dtype double)");
  static_assert(detail::number_or_of_type<W, T>(),
                "lerp: expected dtype of `weight` to be the dtype of `start` (PyTorch: expected dtype float for "
                "`weight` but got dtype double)");
  return detail::make_ternary<ops::Lerp>(a, b, w);
}

// nan_to_num: NaN -> nan, +inf -> posinf (default: the type's max), -inf -> neginf (default: lowest).
template <Expression E>
auto nan_to_num(const E& e, double nan = 0.0, std::optional<double> posinf = {}, std::optional<double> neginf = {}) {
  using T = typename E::value_type;
  using L = std::conditional_t<is_floating_v<T>, acc_t<T>, double>;
  const double hi = std::is_same_v<T, half> ? 65504.0 : std::is_same_v<T, bfloat16> ? 3.3895313892515355e38
                                                                                     : double(std::numeric_limits<L>::max());
  return Unary<ops::NanToNum, E>(e, ops::NanToNum{{}, nan, posinf.value_or(hi), neginf.value_or(-hi)});
}

template <class T>
template <class L, class H>
Tensor<T>& Tensor<T>::clamp_(const L& lo, const H& hi) {
  return update(clamp(*this, lo, hi));
}

}  // namespace tsr
