// Derivative rules of the elementwise ops: Derivative<Op> gives, for the
// gradient g of a node's result, the gradient expression of each operand
// (over the node's operand expressions, recomputed inside the fused kernel).
// Edge cases follow PyTorch: relu'(0) = 0, abs'(0) = 0, sqrt'(0) = inf,
// pow(x, 0)' = 0.
#pragma once
#include <string>

#include "../math_composite.hpp"

namespace tsr::autograd {

[[noreturn]] inline void fail_no_derivative(const char* name) {
  detail::fail<Error>("autograd has no derivative rule for '", name,
                      "' yet: the inputs below it that require grad cannot get a gradient through it");
}

// Ops without a rule: backward through them fails with a clear error (only
// when a leaf below them needs a gradient).
template <class Op>
struct Derivative {
  template <class G, class E> static auto grad(const G& g, const E&) { fail_no_derivative(Op::name), (void)g; return g; }
  template <class G, class E> static auto grad_a(const G& g, const E&) { fail_no_derivative(Op::name), (void)g; return g; }
  template <class G, class E> static auto grad_b(const G& g, const E&) { fail_no_derivative(Op::name), (void)g; return g; }
  template <class G, class E> static auto grad_c(const G& g, const E&) { fail_no_derivative(Op::name), (void)g; return g; }
};

template <>
struct Derivative<ops::Add> {
  template <class G, class E> static auto grad_a(const G& g, const E&) { return g; }
  template <class G, class E> static auto grad_b(const G& g, const E&) { return g; }
};
template <>
struct Derivative<ops::Sub> {
  template <class G, class E> static auto grad_a(const G& g, const E&) { return g; }
  template <class G, class E> static auto grad_b(const G& g, const E&) { return -g; }
};
template <>
struct Derivative<ops::Mul> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g * e.b; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return g * e.a; }
};
template <>
struct Derivative<ops::Div> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g / e.b; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return -g * e.a / (e.b * e.b); }
};
template <>
struct Derivative<ops::Neg> {
  template <class G, class E> static auto grad(const G& g, const E&) { return -g; }
};
template <>
struct Derivative<ops::Square> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * (e.a * 2); }
};
template <>
struct Derivative<ops::Exp> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * exp(e.a); }
};
template <>
struct Derivative<ops::Log> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / e.a; }
};
template <>
struct Derivative<ops::Sin> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * cos(e.a); }
};
template <>
struct Derivative<ops::Cos> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * -sin(e.a); }
};
template <>
struct Derivative<ops::Tanh> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * (1 - square(tanh(e.a))); }
};
template <>
struct Derivative<ops::Sigmoid> {
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * (1 - sigmoid(e.a)) * sigmoid(e.a);
  }
};
template <>
struct Derivative<ops::Sqrt> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (sqrt(e.a) * 2); }
};
template <>
struct Derivative<ops::Relu> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return where(e.a > 0, g, 0); }
};
template <>
struct Derivative<ops::Abs> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * sign(e.a); }
};
template <>
struct Derivative<ops::PowScalar> {
  template <class G, class E> static auto grad(const G& g, const E& e) {
    // pow(x, 0) has zero gradient everywhere (PyTorch masks it the same way).
    return where(ScalarLeaf<bool>(e.op.e == 0), 0, g * e.op.e * pow(e.a, e.op.e - 1));
  }
};
template <>
struct Derivative<ops::Where> {
  template <class G, class E> static auto grad_a(const G& g, const E&) { return g; }  // the condition: unused
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return where(e.a, g, 0); }
  template <class G, class E> static auto grad_c(const G& g, const E& e) { return where(e.a, 0, g); }
};

// ----- more unary functions -----------------------------------------------------
template <>
struct Derivative<ops::Rsqrt> {  // -x^(-3/2) / 2
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * rsqrt(e.a) / e.a * -0.5; }
};
template <>
struct Derivative<ops::Reciprocal> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return -g * square(reciprocal(e.a)); }
};
template <>
struct Derivative<ops::Exp2> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * exp2(e.a) * 0.69314718055994530942; }
};
template <>
struct Derivative<ops::Expm1> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * (expm1(e.a) + 1); }
};
template <>
struct Derivative<ops::Log2> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (e.a * 0.69314718055994530942); }
};
template <>
struct Derivative<ops::Log10> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (e.a * 2.30258509299404568402); }
};
template <>
struct Derivative<ops::Log1p> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (e.a + 1); }
};
template <>
struct Derivative<ops::Tan> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * (1 + square(tan(e.a))); }
};
template <>
struct Derivative<ops::Asin> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * rsqrt(1 - square(e.a)); }
};
template <>
struct Derivative<ops::Acos> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return -g * rsqrt(1 - square(e.a)); }
};
template <>
struct Derivative<ops::Atan> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (square(e.a) + 1); }
};
template <>
struct Derivative<ops::Sinh> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * cosh(e.a); }
};
template <>
struct Derivative<ops::Cosh> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * sinh(e.a); }
};
template <>
struct Derivative<ops::Asinh> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * rsqrt(square(e.a) + 1); }
};
template <>
struct Derivative<ops::Atanh> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (1 - square(e.a)); }
};
template <>
struct Derivative<ops::Erf> {  // 2 / sqrt(pi) * exp(-x^2)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * exp(-square(e.a)) * 1.12837916709551257390;
  }
};
template <>
struct Derivative<ops::Erfc> {
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * exp(-square(e.a)) * -1.12837916709551257390;
  }
};
template <>
struct Derivative<ops::Silu> {  // s (1 + x (1 - s)) with s = sigmoid(x)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * sigmoid(e.a) * (1 + e.a * (1 - sigmoid(e.a)));
  }
};
template <>
struct Derivative<ops::Softplus> {  // beta 1, threshold 20, as the forward
  template <class G, class E> static auto grad(const G& g, const E& e) { return where(e.a > 20, g, g * sigmoid(e.a)); }
};

// maximum/minimum: ties split the gradient in half, as PyTorch 1.13 does.
template <>
struct Derivative<ops::Maximum> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) {
    return where(e.a < e.b, 0, where(e.a == e.b, g * 0.5, g));
  }
  template <class G, class E> static auto grad_b(const G& g, const E& e) {
    return where(e.a > e.b, 0, where(e.a == e.b, g * 0.5, g));
  }
};
template <>
struct Derivative<ops::Minimum> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) {
    return where(e.a > e.b, 0, where(e.a == e.b, g * 0.5, g));
  }
  template <class G, class E> static auto grad_b(const G& g, const E& e) {
    return where(e.a < e.b, 0, where(e.a == e.b, g * 0.5, g));
  }
};

// ----- the rest of the elementwise ops (PyTorch's formulas and edges) ------------
template <>
struct Derivative<ops::Acosh> {  // 1 / sqrt(x^2 - 1): inf at 1, NaN below
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * rsqrt(e.a * e.a - 1); }
};
// gelu: cdf(x) + x pdf(x); with approximate = tanh, the derivative of the
// tanh form (both are built; the flag picks one per element).
template <>
struct Derivative<ops::Gelu> {
  template <class G, class E> static auto grad(const G& g, const E& e) {
    constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;
    constexpr double kBeta = 0.79788456080286535588, kKappa = 0.044715;
    const auto& x = e.a;
    const auto exact = erfc(x * -kInvSqrt2) * 0.5 + x * exp(x * x * -0.5) * kInvSqrt2Pi;
    const auto t = tanh((x + x * x * x * kKappa) * kBeta);
    const auto approx = (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * ((x * x * (3 * kKappa) + 1) * kBeta);
    return g * where(ScalarLeaf<bool>(e.op.approximate), approx, exact);
  }
};
template <>
struct Derivative<ops::Atan2> {  // d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g * e.b / (e.a * e.a + e.b * e.b); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return -g * e.a / (e.a * e.a + e.b * e.b); }
};
template <>
struct Derivative<ops::Hypot> {  // d/da = a / hypot(a, b), d/db = b / hypot(a, b)
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g * e.a / hypot(e.a, e.b); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return g * e.b / hypot(e.a, e.b); }
};
// pow with a tensor exponent: 0 where the exponent is 0 (for the base), and
// where the base is 0 and the exponent >= 0 (for the exponent), as PyTorch.
template <>
struct Derivative<ops::Pow> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) {
    return where(e.b == 0, 0, g * e.b * pow(e.a, e.b - 1));
  }
  template <class G, class E> static auto grad_b(const G& g, const E& e) {
    return g * where(e.a == 0 && e.b >= 0, 0, pow(e.a, e.b) * log(e.a));
  }
};
// clamp: the gradient goes to whichever of x, lo, hi the result is; NaN x
// gets 0. (lo > hi gives hi, as the forward.)
template <>
struct Derivative<ops::Clamp> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return where(e.a >= e.b && e.a <= e.c, g, 0); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return where(e.a < e.b && e.b <= e.c, g, 0); }
  template <class G, class E> static auto grad_c(const G& g, const E& e) {
    return where(where(e.a < e.b, e.b > e.c, e.a > e.c), g, 0);
  }
};
template <>
struct Derivative<ops::Lerp> {  // a + w (b - a)
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g * (1 - e.c); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return g * e.c; }
  template <class G, class E> static auto grad_c(const G& g, const E& e) { return g * (e.b - e.a); }
};
template <>
struct Derivative<ops::Addcmul> {  // input + value t1 t2
  template <class G, class E> static auto grad_a(const G& g, const E&) { return g; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return g * e.op.value * e.c; }
  template <class G, class E> static auto grad_c(const G& g, const E& e) { return g * e.op.value * e.b; }
};
template <>
struct Derivative<ops::Remainder> {  // a - b floor(a / b)
  template <class G, class E> static auto grad_a(const G& g, const E&) { return g; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return -g * floor(e.a / e.b); }
};
template <>
struct Derivative<ops::Fmod> {  // a - b trunc(a / b)
  template <class G, class E> static auto grad_a(const G& g, const E&) { return g; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return -g * trunc(e.a / e.b); }
};
template <>
struct Derivative<ops::Frac> {
  template <class G, class E> static auto grad(const G& g, const E&) { return g; }
};
template <>
struct Derivative<ops::Fmax> {  // all of g to the result's operand: a on ties, the non-NaN one
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return where(isnan(e.b) | (e.a >= e.b), g, 0); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return where(isnan(e.b) | (e.a >= e.b), 0, g); }
};
template <>
struct Derivative<ops::Fmin> {
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return where(isnan(e.b) | (e.a <= e.b), g, 0); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return where(isnan(e.b) | (e.a <= e.b), 0, g); }
};
template <>
struct Derivative<ops::Hardtanh> {  // g strictly inside the bounds; 0 on them, beyond, and at NaN
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return where((e.a > e.op.lo) & (e.a < e.op.hi), g, 0);
  }
};
template <>
struct Derivative<ops::Threshold> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return where(e.a <= e.op.threshold, 0, g); }
};
template <>
struct Derivative<ops::NanToNum> {  // 1 where x is finite, 0 where it was replaced
  template <class G, class E> static auto grad(const G& g, const E& e) { return where(isfinite(e.a), g, 0); }
};

// Piecewise constant functions: a zero gradient (of g's shape), as PyTorch.
struct ZeroDerivative {
  template <class G, class E> static auto grad(const G& g, const E&) { return where(ScalarLeaf<bool>(false), g, 0); }
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return grad(g, e); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return grad(g, e); }
};
template <> struct Derivative<ops::Floor> : ZeroDerivative {};
template <> struct Derivative<ops::Ceil> : ZeroDerivative {};
template <> struct Derivative<ops::Round> : ZeroDerivative {};
template <> struct Derivative<ops::Trunc> : ZeroDerivative {};
template <> struct Derivative<ops::Sign> : ZeroDerivative {};
template <> struct Derivative<ops::FloorDivide> : ZeroDerivative {};

}  // namespace tsr::autograd
