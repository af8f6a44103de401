// Integer arithmetic PyTorch has beside the operators: gcd, lcm and the
// bitwise shifts. int32 and int64 tensors (and numbers beside them); the
// results keep the operands' promoted type.
#pragma once
#include <type_traits>

#include "math.hpp"

namespace tsr {
namespace ops {

template <class V>
inline constexpr bool is_integer_v = std::is_integral_v<V> && !std::is_same_v<V, bool>;

// |v| as the unsigned type of the same width (the most negative value
// included, whose magnitude the signed type cannot hold).
template <class V>
TSR_HOST_DEVICE inline std::make_unsigned_t<V> magnitude(V v) {
  using U = std::make_unsigned_t<V>;
  return v < 0 ? U(U(0) - U(v)) : U(v);
}

template <class V>
TSR_HOST_DEVICE inline std::make_unsigned_t<V> gcd_of_magnitudes(V a, V b) {
  auto x = magnitude(a), y = magnitude(b);
  while (y != 0) {
    const auto r = x % y;
    x = y;
    y = r;
  }
  return x;
}

struct Gcd : SameTypeOp {
  static constexpr const char* name = "gcd";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(is_integer_v<V>, "gcd is only supported for integer tensors");
    return V(gcd_of_magnitudes(a, b));  // gcd(0, 0) = 0; the most negative value's magnitude wraps to itself
  }
};
struct Lcm : SameTypeOp {
  static constexpr const char* name = "lcm";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(is_integer_v<V>, "lcm is only supported for integer tensors");
    const auto g = gcd_of_magnitudes(a, b);
    return g == 0 ? V(0) : V(magnitude(a) / g * magnitude(b));  // wraps where the result does not fit
  }
};

// Shifts by a count outside [0, bits) are defined as PyTorch 2 defines them
// (1.13 left them to the CPU, which reduces the count modulo the width): a
// left shift gives 0, a right shift the sign (0 or -1).
struct BitwiseLeftShift : SameTypeOp {
  static constexpr const char* name = "bitwise_left_shift";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(is_integer_v<V>, "bitwise_left_shift is only supported for integer tensors");
    using U = std::make_unsigned_t<V>;
    if (b < 0 || b >= V(sizeof(V) * 8)) return V(0);
    return V(U(a) << b);
  }
};
struct BitwiseRightShift : SameTypeOp {
  static constexpr const char* name = "bitwise_right_shift";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(is_integer_v<V>, "bitwise_right_shift is only supported for integer tensors");
    if (b < 0 || b >= V(sizeof(V) * 8)) return a < 0 ? V(-1) : V(0);
    return V(a >> b);  // arithmetic: the sign fills in
  }
};

}  // namespace ops

// The greatest common divisor, always >= 0; gcd(0, 0) = 0.
template <class A, class B> requires Operands<A, B>
auto gcd(const A& a, const B& b) { return detail::make_binary<ops::Gcd>(a, b); }
// The least common multiple, always >= 0; 0 when either is 0.
template <class A, class B> requires Operands<A, B>
auto lcm(const A& a, const B& b) { return detail::make_binary<ops::Lcm>(a, b); }
// a shifted left by b bits (a * 2^b, wrapping); 0 for b outside [0, bits).
template <class A, class B> requires Operands<A, B>
auto bitwise_left_shift(const A& a, const B& b) { return detail::make_binary<ops::BitwiseLeftShift>(a, b); }
// a shifted right by b bits, the sign filling in (floor(a / 2^b)); the
// sign alone for b outside [0, bits).
template <class A, class B> requires Operands<A, B>
auto bitwise_right_shift(const A& a, const B& b) { return detail::make_binary<ops::BitwiseRightShift>(a, b); }

}  // namespace tsr
