// Elementwise functions that PyTorch defines in terms of others: written
// here as expressions over math.hpp's, so that they fuse into the kernel of
// whatever uses them and differentiate through the rules of their parts.
// Dtype rules and error texts are PyTorch 1.13's.
#pragma once
#include <numbers>

#include "math.hpp"

namespace tsr {
namespace detail {
// The type two operands compute in (a number takes the other's type).
template <class A, class B>
using operands_t = promote_t<value_of_t<decltype(as_operand<B>(std::declval<A>()))>,
                             value_of_t<decltype(as_operand<A>(std::declval<B>()))>>;
}  // namespace detail

// x itself (torch.positive returns its input).
template <Expression E>
E positive(const E& e) {
  static_assert(!std::is_same_v<typename E::value_type, bool>, "The `+` operator, on a bool tensor is not supported.");
  return e;
}
// The sign, as torch.sgn (for the real dtypes tessera has, torch.sign).
template <Expression E>
auto sgn(const E& e) { return sign(e); }
// Whether the sign bit is set: true for -0.0 and for a NaN with the bit set.
template <Expression E>
auto signbit(const E& e) { return Unary<ops::Signbit, E>(e); }

// sqrt(a^2 + b^2), without overflow or underflow in the squares.
template <Expression A, Expression B>
auto hypot(const A& a, const B& b) {
  static_assert(is_floating_v<detail::operands_t<A, B>>,
                "hypot: integer and bool tensors are not supported, as in PyTorch");
  return detail::make_binary<ops::Hypot>(a, b);
}

// log(exp(a) + exp(b)) as max(a, b) + log1p(exp(-|a - b|)), which neither
// overflows nor loses the smaller term; where a and b are the same infinity
// the formula's inf - inf would give NaN, and the answer is that infinity.
template <Expression A, Expression B>
auto logaddexp(const A& a, const B& b) {
  static_assert(is_floating_v<detail::operands_t<A, B>>,
                "logaddexp: integer and bool tensors are not supported, as in PyTorch");
  return where(isinf(a) & (a == b), a, maximum(a, b) + log1p(exp(-abs(a - b))));
}
// log2(2^a + 2^b), the same way in base 2.
template <Expression A, Expression B>
auto logaddexp2(const A& a, const B& b) {
  static_assert(is_floating_v<detail::operands_t<A, B>>,
                "logaddexp2: integer and bool tensors are not supported, as in PyTorch");
  return where(isinf(a) & (a == b), a,
               maximum(a, b) + log1p(exp2(-abs(a - b))) * (1.0 / std::numbers::ln2));
}

// |a - b| <= atol + rtol |b|, or a == b (infinities of one sign included),
// or both NaN when equal_nan. As in PyTorch, a and b have one dtype, and
// integer and bool tensors compare their distance in float (a == b alone
// when both tolerances are 0).
template <Expression A, Expression B>
auto isclose(const A& a, const B& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) {
  using T = typename A::value_type;
  static_assert(std::is_same_v<T, typename B::value_type>,
                "isclose: expected `other` of the dtype of `input` (PyTorch: Float did not match Double)");
  detail::check(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  detail::check(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  const auto equal = (a == b) | (ScalarLeaf<bool>(equal_nan) & isnan(a) & isnan(b));
  const auto within = [&](const auto& x, const auto& y) {
    const auto error = abs(x - y);
    return ScalarLeaf<bool>(rtol != 0 || atol != 0) & isfinite(error) & (error <= atol + abs(rtol * y));
  };
  if constexpr (is_floating_v<T>) return equal | within(a, b);
  else return equal | within(cast<float>(a), cast<float>(b));
}

// input + value * tensor1 * tensor2 (one op: ops::Addcmul says why).
template <Expression E, Expression A, Expression B>
auto addcmul(const E& input, const A& tensor1, const B& tensor2, double value = 1.0) {
  using T = promote_t<promote_t<typename E::value_type, typename A::value_type>, typename B::value_type>;
  static_assert(!std::is_same_v<T, bool>, "addcmul: bool tensors are not supported, as in PyTorch");
  return detail::make_ternary<ops::Addcmul>(input, tensor1, tensor2, ops::Addcmul{{}, value});
}
// input + value * tensor1 / tensor2, a true division.
template <Expression E, Expression A, Expression B>
auto addcdiv(const E& input, const A& tensor1, const B& tensor2, double value = 1.0) {
  static_assert(is_floating_v<typename A::value_type> || is_floating_v<typename B::value_type>,
                "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
                "a true division of tensor1 and tensor2. (PyTorch's words; write input + value * tensor1 / tensor2)");
  using T = promote_t<promote_t<typename E::value_type, typename A::value_type>, typename B::value_type>;
  using detail::as_type;
  return as_type<T>(input) + value * as_type<T>(tensor1) / as_type<T>(tensor2);
}

// Angles: integer and bool tensors convert to float first.
template <Expression E>
auto deg2rad(const E& e) {
  return detail::as_type<floating_t<typename E::value_type>>(e) * (std::numbers::pi / 180.0);
}
template <Expression E>
auto rad2deg(const E& e) {
  return detail::as_type<floating_t<typename E::value_type>>(e) * (180.0 / std::numbers::pi);
}

// 0 where x < 0, values where x == 0, 1 where x > 0 (0 at NaN, as PyTorch).
template <Expression E, Expression V>
auto heaviside(const E& x, const V& values) {
  using T = typename E::value_type;
  static_assert(std::is_same_v<T, typename V::value_type>,
                "heaviside is not yet implemented for tensors with different dtypes.");
  return where(x == 0, values, cast<T>(x > 0));
}

// pow in double precision, whatever the operands' dtype.
template <class A, class B> requires Operands<A, B>
auto float_power(const A& a, const B& b) {
  const auto to_double = [](const auto& x) {
    if constexpr (Expression<std::decay_t<decltype(x)>>) return detail::as_type<double>(x);
    else return static_cast<double>(x);
  };
  return pow(to_double(a), to_double(b));
}

// x * 2^e, as PyTorch's ldexp (x * pow(2., e)): integer x gives float.
template <class A, class B>
  requires Operands<A, B>
auto ldexp(const A& x, const B& e) {
  return x * pow(2.0, e);
}

}  // namespace tsr
