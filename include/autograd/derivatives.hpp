// Derivative rules of the elementwise ops: Derivative<Op> gives, for the
// gradient g of a node's result, the gradient expression of each operand
// (over the node's operand expressions, recomputed inside the fused kernel).
// Edge cases follow PyTorch: relu'(0) = 0, abs'(0) = 0, sqrt'(0) = inf,
// pow(x, 0)' = 0.
#pragma once
#include <string>

#include "../math.hpp"

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

}  // namespace tsr::autograd
