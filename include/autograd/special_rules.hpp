// Derivative rules of tsr::special's functions, PyTorch's formulas
// (tools/autograd/derivatives.yaml), so the fused backward picks them up
// like any other elementwise op's.
#pragma once
#include "../special.hpp"
#include "derivatives.hpp"

namespace tsr::autograd {

inline constexpr double kTwoOverSqrtPi = 1.1283791670955126;
inline constexpr double kInvSqrt2Pi = 0.3989422804014327;

template <>
struct Derivative<ops::SpecialErf> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * exp(-square(e.a)) * kTwoOverSqrtPi; }
};
template <>
struct Derivative<ops::SpecialErfc> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * exp(-square(e.a)) * -kTwoOverSqrtPi; }
};
template <>
struct Derivative<ops::Erfcx> {  // 2 x erfcx(x) - 2 / sqrt(pi)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * (e.a * special::erfcx(e.a) * 2 - kTwoOverSqrtPi);
  }
};
template <>
struct Derivative<ops::Erfinv> {  // sqrt(pi) / 2 exp(erfinv(x)^2)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * exp(square(special::erfinv(e.a))) * 0.88622692545275801;
  }
};
template <>
struct Derivative<ops::SpecialExp2> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * special::exp2(e.a) * 0.69314718055994531; }
};
template <>
struct Derivative<ops::SpecialExpm1> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * (special::expm1(e.a) + 1); }
};
template <>
struct Derivative<ops::SpecialLog1p> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (e.a + 1); }
};
template <>
struct Derivative<ops::Expit> {
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * special::expit(e.a) * (1 - special::expit(e.a));
  }
};
template <>
struct Derivative<ops::Logit> {  // 1 / (x (1 - x))
  template <class G, class E> static auto grad(const G& g, const E& e) { return g / (e.a * (1 - e.a)); }
};
template <>
struct Derivative<ops::Ndtr> {  // the normal density
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * exp(square(e.a) * -0.5) * kInvSqrt2Pi; }
};
template <>
struct Derivative<ops::LogNdtr> {  // density / ndtr, as exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * exp(-(special::log_ndtr(e.a) + square(e.a) * 0.5)) * kInvSqrt2Pi;
  }
};
template <>
struct Derivative<ops::Ndtri> {  // sqrt(2 pi) exp(ndtri(p)^2 / 2)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * exp(square(special::ndtri(e.a)) * 0.5) * 2.5066282746310002;
  }
};
template <>
struct Derivative<ops::Digamma> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * special::polygamma(1, e.a); }
};
template <>
struct Derivative<ops::Polygamma> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * special::polygamma(e.op.fn.n + 1, e.a); }
};
template <>
struct Derivative<ops::Gammaln> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * special::digamma(e.a); }
};
template <>
struct Derivative<ops::Multigammaln> {  // sum_{j < p} digamma(x - j / 2)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * Unary<ops::MultiDigamma, std::remove_cvref_t<decltype(e.a)>>(e.a, ops::MultiDigamma{{}, {e.op.fn.p}});
  }
};
template <>
struct Derivative<ops::I0> {
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * special::i1(e.a); }
};
template <>
struct Derivative<ops::I0e> {  // i1e(x) - sign(x) i0e(x)
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return g * (special::i1e(e.a) - sign(e.a) * special::i0e(e.a));
  }
};
template <>
struct Derivative<ops::I1> {  // i0(x) - i1(x) / x, 1/2 at 0
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return where(e.a == 0, g * 0.5, g * (special::i0(e.a) - special::i1(e.a) / e.a));
  }
};
template <>
struct Derivative<ops::I1e> {  // i0e(x) - i1e(x) (sign(x) + 1 / x), 1/2 at 0
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return where(e.a == 0, g * 0.5, g * (special::i0e(e.a) - special::i1e(e.a) * (sign(e.a) + reciprocal(e.a))));
  }
};
template <>
struct Derivative<ops::Entr> {  // -(1 + log x)
  template <class G, class E> static auto grad(const G& g, const E& e) { return g * -(log(e.a) + 1); }
};
template <>
struct Derivative<ops::Sinc> {  // (cos(pi x) - sinc(x)) / x, 0 at 0
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return where(e.a == 0, g * 0, g * (cos(e.a * detail::special::kPi) - special::sinc(e.a)) / e.a);
  }
};
template <>
struct Derivative<ops::SphericalBesselJ0> {  // (cos x - j0(x)) / x, 0 at 0
  template <class G, class E> static auto grad(const G& g, const E& e) {
    return where(e.a == 0, g * 0, g * (cos(e.a) - special::spherical_bessel_j0(e.a)) / e.a);
  }
};
template <>
struct Derivative<ops::Xlogy> {  // log(y) where x != 0; x / y
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g * special::xlogy(e.a != 0, e.b); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return g * e.a / e.b; }
};
template <>
struct Derivative<ops::Xlog1py> {  // log1p(y) where x != 0; x / (1 + y)
  template <class G, class E> static auto grad_a(const G& g, const E& e) { return g * special::xlog1py(e.a != 0, e.b); }
  template <class G, class E> static auto grad_b(const G& g, const E& e) { return g * e.a / (e.b + 1); }
};
// The incomplete gamma functions: only x has a derivative (PyTorch neither
// has one for a), x^(a-1) e^-x / Gamma(a).
template <>
struct Derivative<ops::Gammainc> {
  template <class G, class E> static auto grad_a(const G& g, const E&) { fail_no_derivative("igamma: input"), (void)g; return g; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) {
    return g * exp((e.a - 1) * log(e.b) - e.b - special::gammaln(e.a));
  }
};
template <>
struct Derivative<ops::Gammaincc> {
  template <class G, class E> static auto grad_a(const G& g, const E&) { fail_no_derivative("igammac: input"), (void)g; return g; }
  template <class G, class E> static auto grad_b(const G& g, const E& e) {
    return -g * exp((e.a - 1) * log(e.b) - e.b - special::gammaln(e.a));
  }
};

}  // namespace tsr::autograd
