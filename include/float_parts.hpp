// The parts of floating-point numbers: nextafter (the neighbouring
// representable value) and frexp (mantissa and exponent). float and double
// tensors, as PyTorch's CPU functions.
#pragma once
#include <cmath>
#include <tuple>

#include "autograd/derivatives.hpp"
#include "tensor.hpp"

namespace tsr {
namespace ops {

struct Nextafter : SameTypeOp {
  static constexpr const char* name = "nextafter";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(std::is_floating_point_v<V>, "nextafter is only supported for float and double tensors");
    return std::nextafter(a, b);
  }
};
// frexp's two results: x = mantissa * 2^exponent, |mantissa| in [0.5, 1)
// (x itself, with exponent 0, for 0, inf and NaN).
struct FrexpMantissa : SameTypeOp {
  static constexpr const char* name = "frexp";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    int e = 0;
    return std::frexp(x, &e);
  }
};
struct FrexpExponent : SameTypeOp {
  static constexpr const char* name = "frexp";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE int32_t operator()(V x) const {
    int e = 0;
    (void)std::frexp(x, &e);
    return std::isfinite(x) ? e : 0;  // C leaves it unspecified for inf and NaN
  }
};
// 2^-exponent: the mantissa's derivative (PyTorch's grad / exponent.exp2()).
struct FrexpScale : SameTypeOp {
  static constexpr const char* name = "frexp";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    return std::ldexp(V(1), -FrexpExponent{}(x));
  }
};

}  // namespace ops

namespace autograd {
template <>
struct Derivative<ops::FrexpMantissa> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * Unary<ops::FrexpScale, decltype(e.a)>(e.a); }
};
}  // namespace autograd

// The next representable value after a in the direction of b (b when they are equal).
template <class A, class B> requires Operands<A, B>
auto nextafter(const A& a, const B& b) { return detail::make_binary<ops::Nextafter>(a, b); }

// x as mantissa * 2^exponent: the mantissa (x's type, magnitude in [0.5, 1),
// differentiable) and the exponent (int32).
template <Expression E>
std::tuple<Tensor<typename E::value_type>, Tensor<int32_t>> frexp(const E& x) {
  using T = typename E::value_type;
  static_assert(std::is_floating_point_v<T>, "torch.frexp() only supports floating-point dtypes");
  Tensor<T> mantissa = Unary<ops::FrexpMantissa, E>(x);
  Tensor<int32_t> exponent = Unary<ops::FrexpExponent, E>(x);
  return {std::move(mantissa), std::move(exponent)};
}

}  // namespace tsr
