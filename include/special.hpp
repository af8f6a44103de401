// tsr::special: PyTorch's torch.special module as lazy elementwise ops, with
// PyTorch's names and argument order. Each function returns an expression
// node like tsr::sin does; it fuses into any expression, and autograd finds
// its derivative rule (include/autograd/special_rules.hpp).
//
// Accuracy: every function is computed in double (float inputs convert,
// compute and round once), with algorithms chosen to stay within a few ulps
// of the correctly rounded double value; docs/special.md lists the measured
// errors. A function with a batch form runs on xsimd vectors: in double
// vectors for float inputs, lane by lane in the scalar form for double inputs
// unless the vector form is as accurate.
#pragma once
#include "detail/special_bessel.hpp"
#include "detail/special_erf.hpp"
#include "detail/special_gamma.hpp"
#include "math.hpp"
#include "reduce_dims.hpp"
#include "statistics.hpp"

namespace tsr::ops {
namespace m {
template <class V>
inline constexpr bool is_batch_v = !std::is_arithmetic_v<V>;

}  // namespace m

template <class Fn>
inline constexpr bool batch_in_float_v = requires { requires Fn::batch_in_float; };

// A float batch of Fn, whose batch form is good in float arithmetic but for
// the lanes Fn::double_lanes(x...) marks where Fn has it (lanes whose float
// result would be subnormal, which xsimd's float exp flushes): those lanes
// are computed in double batches. Lane by lane, so that a lane's result never
// depends on its neighbours.
template <class Fn, class B, class... Bs>
B float_batch(const Fn& fn, const B& x, const Bs&... y) {
  if constexpr (requires { fn.double_lanes(x, y...); }) {
    const auto lanes = fn.double_lanes(x, y...);
    if (xsimd::any(lanes))
      return xsimd::select(lanes, m::in_double(x, y..., [&fn](auto... d) { return fn.batch(d...); }), fn.batch(x, y...));
  }
  return fn.batch(x, y...);
}

// One unary special function Fn as an op: Fn::eval(double) is the scalar
// form. Fn::simd says it has Fn::batch(B), a vector form. Float batches run
// it in double batches, or in float arithmetic itself where
// Fn::batch_in_float says that is within 2 ulps (measured on 2^21 points
// per function); Fn::batch_for_double says it is accurate enough for double
// inputs too (else doubles go lane by lane through the scalar form).
template <class Fn>
struct SpecialUnary : detail::FloatOp {
  static constexpr const char* name = Fn::name;
  static constexpr bool simd = Fn::simd;
  Fn fn;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    if constexpr (!m::is_batch_v<V>) {
      return static_cast<V>(fn.eval(static_cast<double>(x)));
    } else if constexpr (std::is_same_v<m::lane_t<V>, float>) {
      if constexpr (batch_in_float_v<Fn>) return float_batch(fn, x);
      else return m::in_double(x, [this](auto d) { return fn.batch(d); });
    } else if constexpr (Fn::batch_for_double) {
      return fn.batch(x);
    } else {
      return m::per_lane(x, [this](double d) { return fn.eval(d); });
    }
  }
};
template <class Fn>
struct SpecialBinary : detail::FloatOp {
  static constexpr const char* name = Fn::name;
  static constexpr bool simd = Fn::simd;
  Fn fn;
  template <class V> TSR_HOST_DEVICE V operator()(V x, V y) const {
    if constexpr (!m::is_batch_v<V>) {
      return static_cast<V>(fn.eval(static_cast<double>(x), static_cast<double>(y)));
    } else if constexpr (std::is_same_v<m::lane_t<V>, float>) {
      if constexpr (batch_in_float_v<Fn>) return float_batch(fn, x, y);
      else return m::in_double(x, y, [this](auto a, auto b) { return fn.batch(a, b); });
    } else if constexpr (Fn::batch_for_double) {
      return fn.batch(x, y);
    } else {
      return m::per_lane2(x, y, [this](double a, double b) { return fn.eval(a, b); });
    }
  }
};

namespace special_fn {
namespace sp = detail::special;

// Scalar-only functions: the name and the double form.
#define TSR_SPECIAL_SCALAR(Name, str, fn)                                 \
  struct Name {                                                           \
    static constexpr const char* name = str;                              \
    static constexpr bool simd = false, batch_for_double = false;         \
    TSR_HOST_DEVICE double eval(double x) const { return fn(x); }         \
  };
TSR_SPECIAL_SCALAR(Erfcx, "special_erfcx", sp::erfcx)
TSR_SPECIAL_SCALAR(Erfinv, "erfinv", sp::erfinv)
TSR_SPECIAL_SCALAR(Ndtri, "special_ndtri", sp::ndtri)
TSR_SPECIAL_SCALAR(Digamma, "digamma", sp::digamma)
TSR_SPECIAL_SCALAR(Gammaln, "lgamma", std::lgamma)
TSR_SPECIAL_SCALAR(I0, "i0", sp::i0)
TSR_SPECIAL_SCALAR(I0e, "special_i0e", sp::i0e)
TSR_SPECIAL_SCALAR(I1, "special_i1", sp::i1)
TSR_SPECIAL_SCALAR(I1e, "special_i1e", sp::i1e)
TSR_SPECIAL_SCALAR(SphericalBesselJ0, "special_spherical_bessel_j0", sp::spherical_bessel_j0)
TSR_SPECIAL_SCALAR(BesselJ0, "special_bessel_j0", sp::bessel_j0)
TSR_SPECIAL_SCALAR(BesselJ1, "special_bessel_j1", sp::bessel_j1)
TSR_SPECIAL_SCALAR(ScaledModifiedBesselK0, "special_scaled_modified_bessel_k0", sp::scaled_modified_bessel_k0)
TSR_SPECIAL_SCALAR(ScaledModifiedBesselK1, "special_scaled_modified_bessel_k1", sp::scaled_modified_bessel_k1)
TSR_SPECIAL_SCALAR(AiryAi, "special_airy_ai", sp::airy_ai)
#undef TSR_SPECIAL_SCALAR

// Functions with a batch form. `batch` takes double batches.
struct Erf {
  static constexpr const char* name = "erf";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  TSR_HOST_DEVICE double eval(double x) const { return std::erf(x); }
  template <class B> B batch(B x) const { return m::erf_for_float(x); }
};
struct Erfc {
  static constexpr const char* name = "erfc";
  static constexpr bool simd = true, batch_for_double = false;
  TSR_HOST_DEVICE double eval(double x) const { return std::erfc(x); }
  template <class B> B batch(B x) const { return m::erfc_for_float(x); }
};
// (xsimd's double exp2 and exp flush subnormal results to zero: doubles go
// through the C library.)
struct Exp2 {
  static constexpr const char* name = "exp2";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  TSR_HOST_DEVICE double eval(double x) const { return std::exp2(x); }
  template <class B> auto double_lanes(B x) const { return (x < B(-126.0f)) | (x > B(127.0f)); }
  template <class B> B batch(B x) const { return xsimd::exp2(x); }
};
struct Expm1 {
  static constexpr const char* name = "expm1";
  static constexpr bool simd = true, batch_for_double = true, batch_in_float = true;
  TSR_HOST_DEVICE double eval(double x) const { return std::expm1(x); }
  template <class B> B batch(B x) const { return xsimd::expm1(x); }
};
struct Log1p {
  static constexpr const char* name = "log1p";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  TSR_HOST_DEVICE double eval(double x) const { return std::log1p(x); }
  template <class B> B batch(B x) const { return xsimd::log1p(x); }
};
// 1 / (1 + e^-x), as e^x / (1 + e^x) for negative x so that tiny results
// keep their digits instead of overflowing e^-x.
struct Expit {
  static constexpr const char* name = "sigmoid";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  template <class B> auto double_lanes(B x) const { return x < B(-87.0f); }
  TSR_HOST_DEVICE double eval(double x) const {
    if (x < 0) {
      const double e = std::exp(x);
      return e / (1.0 + e);
    }
    return 1.0 / (1.0 + std::exp(-x));
  }
  template <class B> B batch(B x) const { return B(1.0) / (B(1.0) + xsimd::exp(-x)); }
};
struct Ndtr {
  static constexpr const char* name = "special_ndtr";
  static constexpr bool simd = true, batch_for_double = false;
  TSR_HOST_DEVICE double eval(double x) const { return sp::ndtr(x); }
  template <class B> B batch(B x) const { return B(0.5) * m::erfc_for_float(x * B(-sp::kInvSqrt2)); }
};
struct LogNdtr {
  static constexpr const char* name = "special_log_ndtr";
  static constexpr bool simd = true, batch_for_double = false;
  TSR_HOST_DEVICE double eval(double x) const { return sp::log_ndtr(x); }
  template <class B> B batch(B x) const {
    // As sp::log_ndtr, from one erfc: with u = |x| / sqrt 2 and E = erfc(u),
    // log1p(-E/2) for x > 0 and log(E/2) for x <= 0; where E would
    // underflow (u >= 26, float inputs below -36.7) log(erfcx(u) / 2) - u^2,
    // erfcx from its asymptotic series.
    const B u = xsimd::abs(x) * B(sp::kInvSqrt2);
    const B e = m::erfc_for_float(u);
    B r = xsimd::select(x > B(0.0), xsimd::log1p(B(-0.5) * e), xsimd::log(B(0.5) * e));
    const auto far = u >= B(26.0);
    if (xsimd::any(far)) {
      const B v = B(0.5) / (u * u);
      const B erfcx = B(sp::kInvSqrtPi) / u * (B(1.0) - v * (B(1.0) - v * (B(3.0) - B(15.0) * v)));
      r = xsimd::select(far & (x < B(0.0)), xsimd::log(B(0.5) * erfcx) - u * u, r);
    }
    return r;
  }
};
struct Sinc {
  static constexpr const char* name = "special_sinc";
  static constexpr bool simd = true, batch_for_double = false;
  TSR_HOST_DEVICE double eval(double x) const { return sp::sinc(x); }
  template <class B> B batch(B x) const {
    // sin(pi r) after the exact reduction r = x mod 2 in [-1, 1], folded to [-1/2, 1/2].
    const B r = x - B(2.0) * xsimd::nearbyint(x * B(0.5));
    const B folded = xsimd::select(r > B(0.5), B(1.0) - r, xsimd::select(r < B(-0.5), B(-1.0) - r, r));
    const B v = xsimd::sin(B(sp::kPi) * folded) / (B(sp::kPi) * x);
    return xsimd::select(x == B(0.0), B(1.0), xsimd::select(xsimd::isinf(x), B(sp::kNaN), v));
  }
};
// -x log x; 0 at 0, -inf for negative x.
struct Entr {
  static constexpr const char* name = "special_entr";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  // (xsimd's float log mishandles subnormal arguments.)
  template <class B> auto double_lanes(B x) const {
    return (x < B(std::numeric_limits<float>::min())) & (x > B(0.0f));
  }
  TSR_HOST_DEVICE double eval(double x) const {
    if (std::isnan(x)) return x;
    return x > 0 ? -x * std::log(x) : x == 0 ? 0.0 : -sp::kInf;
  }
  template <class B> B batch(B x) const {
    const B v = xsimd::select(x > B(0.0), -x * xsimd::log(x), xsimd::select(x == B(0.0), B(0.0), B(-sp::kInf)));
    return xsimd::select(xsimd::isnan(x), x, v);
  }
};
// log(x / (1 - x)). Around 1/2 it is log1p((2x - 1) / (1 - x)), which keeps
// the small result's digits.
struct Logit {
  static constexpr const char* name = "logit";
  static constexpr bool simd = true, batch_for_double = true;
  TSR_HOST_DEVICE double eval(double x) const {
    if (x >= 0.25 && x <= 0.75) return std::log1p((2.0 * x - 1.0) / (1.0 - x));
    return std::log(x / (1.0 - x));
  }
  template <class B> B batch(B x) const {
    const B middle = xsimd::log1p((B(2.0) * x - B(1.0)) / (B(1.0) - x));
    const B outer = xsimd::log(x / (B(1.0) - x));
    return xsimd::select((x >= B(0.25)) & (x <= B(0.75)), middle, outer);
  }
};
// polygamma(n, x), n >= 0.
struct Polygamma {
  static constexpr const char* name = "polygamma";
  static constexpr bool simd = false, batch_for_double = false;
  int64_t n = 0;
  TSR_HOST_DEVICE double eval(double x) const { return sp::polygamma(n, x); }
};
struct Multigammaln {
  static constexpr const char* name = "mvlgamma";
  static constexpr bool simd = false, batch_for_double = false;
  int64_t p = 1;
  TSR_HOST_DEVICE double eval(double x) const { return sp::multigammaln(x, p); }
};
// Its derivative: sum_{j < p} digamma(x - j / 2).
struct MultiDigamma {
  static constexpr const char* name = "mvlgamma_backward";
  static constexpr bool simd = false, batch_for_double = false;
  int64_t p = 1;
  TSR_HOST_DEVICE double eval(double x) const {
    double sum = 0.0;
    for (int64_t j = 0; j < p; ++j) sum += sp::digamma(x - 0.5 * static_cast<double>(j));
    return sum;
  }
};

// ----- binary -----------------------------------------------------------------
// x log y and x log1p y: 0 where x = 0 unless y is NaN.
struct Xlogy {
  static constexpr const char* name = "xlogy";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  // (xsimd's float log mishandles subnormal arguments.)
  template <class B> auto double_lanes(B, B y) const {
    return (y < B(std::numeric_limits<float>::min())) & (y > B(0.0f));
  }
  TSR_HOST_DEVICE double eval(double x, double y) const {
    if (std::isnan(y)) return y;
    return x == 0 ? 0.0 : x * std::log(y);
  }
  template <class B> B batch(B x, B y) const {
    return xsimd::select(xsimd::isnan(y), y, xsimd::select(x == B(0.0), B(0.0), x * xsimd::log(y)));
  }
};
struct Xlog1py {
  static constexpr const char* name = "special_xlog1py";
  static constexpr bool simd = true, batch_for_double = false, batch_in_float = true;
  TSR_HOST_DEVICE double eval(double x, double y) const {
    if (std::isnan(y)) return y;
    return x == 0 ? 0.0 : x * std::log1p(y);
  }
  template <class B> B batch(B x, B y) const {
    return xsimd::select(xsimd::isnan(y), y, xsimd::select(x == B(0.0), B(0.0), x * xsimd::log1p(y)));
  }
};
#define TSR_SPECIAL_SCALAR2(Name, str, fn)                                          \
  struct Name {                                                                     \
    static constexpr const char* name = str;                                        \
    static constexpr bool simd = false, batch_for_double = false;                   \
    TSR_HOST_DEVICE double eval(double x, double y) const { return fn(x, y); }      \
  };
TSR_SPECIAL_SCALAR2(Zeta, "special_zeta", sp::zeta)
TSR_SPECIAL_SCALAR2(Gammainc, "igamma", sp::gammainc)
TSR_SPECIAL_SCALAR2(Gammaincc, "igammac", sp::gammaincc)
#undef TSR_SPECIAL_SCALAR2
}  // namespace special_fn

// The op types autograd's rules name.
using Erfcx = SpecialUnary<special_fn::Erfcx>;
using Erfinv = SpecialUnary<special_fn::Erfinv>;
using Ndtri = SpecialUnary<special_fn::Ndtri>;
using Digamma = SpecialUnary<special_fn::Digamma>;
using Gammaln = SpecialUnary<special_fn::Gammaln>;
using I0 = SpecialUnary<special_fn::I0>;
using I0e = SpecialUnary<special_fn::I0e>;
using I1 = SpecialUnary<special_fn::I1>;
using I1e = SpecialUnary<special_fn::I1e>;
using SphericalBesselJ0 = SpecialUnary<special_fn::SphericalBesselJ0>;
using BesselJ0 = SpecialUnary<special_fn::BesselJ0>;
using BesselJ1 = SpecialUnary<special_fn::BesselJ1>;
using ScaledModifiedBesselK0 = SpecialUnary<special_fn::ScaledModifiedBesselK0>;
using ScaledModifiedBesselK1 = SpecialUnary<special_fn::ScaledModifiedBesselK1>;
using AiryAi = SpecialUnary<special_fn::AiryAi>;
using SpecialErf = SpecialUnary<special_fn::Erf>;
using SpecialErfc = SpecialUnary<special_fn::Erfc>;
using SpecialExp2 = SpecialUnary<special_fn::Exp2>;
using SpecialExpm1 = SpecialUnary<special_fn::Expm1>;
using SpecialLog1p = SpecialUnary<special_fn::Log1p>;
using Expit = SpecialUnary<special_fn::Expit>;
using Ndtr = SpecialUnary<special_fn::Ndtr>;
using LogNdtr = SpecialUnary<special_fn::LogNdtr>;
using Sinc = SpecialUnary<special_fn::Sinc>;
using Entr = SpecialUnary<special_fn::Entr>;
using Logit = SpecialUnary<special_fn::Logit>;
using Polygamma = SpecialUnary<special_fn::Polygamma>;
using Multigammaln = SpecialUnary<special_fn::Multigammaln>;
using MultiDigamma = SpecialUnary<special_fn::MultiDigamma>;
using Xlogy = SpecialBinary<special_fn::Xlogy>;
using Xlog1py = SpecialBinary<special_fn::Xlog1py>;
using Zeta = SpecialBinary<special_fn::Zeta>;
using Gammainc = SpecialBinary<special_fn::Gammainc>;
using Gammaincc = SpecialBinary<special_fn::Gammaincc>;

// round(x, decimals) in the input's precision, as PyTorch: x * 10^d rounded
// half to even, divided back (x / 10^-d and multiplied back for d < 0).
struct RoundDecimals : detail::SameTypeOp {
  static constexpr const char* name = "round";
  static constexpr bool simd = false;
  int64_t decimals = 0;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    static_assert(!std::is_integral_v<V>, "round with decimals expects a floating-point tensor");
    const V scale = static_cast<V>(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)));
    return decimals < 0 ? V(std::nearbyint(x / scale) * scale) : V(std::nearbyint(x * scale) / scale);
  }
};
}  // namespace tsr::ops

namespace tsr::special {

// clang-format off
template <Expression E> auto erf(const E& e) { return Unary<ops::SpecialErf, E>(e); }
template <Expression E> auto erfc(const E& e) { return Unary<ops::SpecialErfc, E>(e); }
template <Expression E> auto erfcx(const E& e) { return Unary<ops::Erfcx, E>(e); }
template <Expression E> auto erfinv(const E& e) { return Unary<ops::Erfinv, E>(e); }
template <Expression E> auto exp2(const E& e) { return Unary<ops::SpecialExp2, E>(e); }
template <Expression E> auto expm1(const E& e) { return Unary<ops::SpecialExpm1, E>(e); }
template <Expression E> auto log1p(const E& e) { return Unary<ops::SpecialLog1p, E>(e); }
template <Expression E> auto expit(const E& e) { return Unary<ops::Expit, E>(e); }
template <Expression E> auto ndtr(const E& e) { return Unary<ops::Ndtr, E>(e); }
template <Expression E> auto log_ndtr(const E& e) { return Unary<ops::LogNdtr, E>(e); }
template <Expression E> auto ndtri(const E& e) { return Unary<ops::Ndtri, E>(e); }
template <Expression E> auto digamma(const E& e) { return Unary<ops::Digamma, E>(e); }
template <Expression E> auto psi(const E& e) { return special::digamma(e); }
template <Expression E> auto gammaln(const E& e) { return Unary<ops::Gammaln, E>(e); }
template <Expression E> auto i0(const E& e) { return Unary<ops::I0, E>(e); }
template <Expression E> auto i0e(const E& e) { return Unary<ops::I0e, E>(e); }
template <Expression E> auto i1(const E& e) { return Unary<ops::I1, E>(e); }
template <Expression E> auto i1e(const E& e) { return Unary<ops::I1e, E>(e); }
template <Expression E> auto sinc(const E& e) { return Unary<ops::Sinc, E>(e); }
template <Expression E> auto entr(const E& e) { return Unary<ops::Entr, E>(e); }
template <Expression E> auto spherical_bessel_j0(const E& e) { return Unary<ops::SphericalBesselJ0, E>(e); }
template <Expression E> auto bessel_j0(const E& e) { return Unary<ops::BesselJ0, E>(e); }
template <Expression E> auto bessel_j1(const E& e) { return Unary<ops::BesselJ1, E>(e); }
template <Expression E> auto scaled_modified_bessel_k0(const E& e) { return Unary<ops::ScaledModifiedBesselK0, E>(e); }
template <Expression E> auto scaled_modified_bessel_k1(const E& e) { return Unary<ops::ScaledModifiedBesselK1, E>(e); }
template <Expression E> auto airy_ai(const E& e) { return Unary<ops::AiryAi, E>(e); }
// clang-format on

// logit(x): log(x / (1 - x)). logit(x, eps) first clamps x to [eps, 1 - eps]
// in x's precision (so its gradient is 0 outside, as PyTorch's).
template <Expression E>
auto logit(const E& e) {
  return Unary<ops::Logit, E>(e);
}
template <Expression E>
auto logit(const E& e, double eps) {
  return special::logit(tsr::clamp(e, eps, 1.0 - eps));
}

// polygamma(n, x): the n-th derivative of digamma.
template <Expression E>
auto polygamma(int64_t n, const E& e) {
  if (n < 0) detail::fail<Error>("polygamma(n, x) does not support negative n.");
  return Unary<ops::Polygamma, E>(e, ops::Polygamma{{}, {n}});
}

// multigammaln(a, p): log of the multivariate gamma function, the sum of
// lgamma(a - j / 2) for j < p plus a constant. Like PyTorch 1.13 it takes
// any a: at and below (p - 1) / 2 the sum meets lgamma's poles (inf) or
// its values for negative arguments.
template <Expression E>
auto multigammaln(const E& e, int64_t p) {
  if (p < 1) detail::fail<Error>("p has to be greater than or equal to 1");
  return Unary<ops::Multigammaln, E>(e, ops::Multigammaln{{}, {p}});
}

// round(x, decimals).
template <Expression E>
auto round(const E& e, int64_t decimals = 0) {
  return Unary<ops::RoundDecimals, E>(e, ops::RoundDecimals{{}, decimals});
}

template <class A, class B> requires Operands<A, B>
auto xlogy(const A& a, const B& b) { return tsr::detail::make_binary<ops::Xlogy>(a, b); }
template <class A, class B> requires Operands<A, B>
auto xlog1py(const A& a, const B& b) { return tsr::detail::make_binary<ops::Xlog1py>(a, b); }
// zeta(x, q): the Hurwitz zeta function sum_k (k + q)^-x.
template <class A, class B> requires Operands<A, B>
auto zeta(const A& x, const B& q) { return tsr::detail::make_binary<ops::Zeta>(x, q); }
// Regularized lower and upper incomplete gamma functions of (a, x).
template <class A, class B> requires Operands<A, B>
auto gammainc(const A& a, const B& x) { return tsr::detail::make_binary<ops::Gammainc>(a, x); }
template <class A, class B> requires Operands<A, B>
auto gammaincc(const A& a, const B& x) { return tsr::detail::make_binary<ops::Gammaincc>(a, x); }

// The reductions torch.special re-exports.
template <Expression E>
auto softmax(const E& e, int64_t dim) { return tsr::softmax(e, dim); }
template <Expression E>
auto log_softmax(const E& e, int64_t dim) { return tsr::log_softmax(e, dim); }
template <Expression E>
auto logsumexp(const E& e, Shape dims, bool keepdim = false) { return tsr::logsumexp(e, std::move(dims), keepdim); }

}  // namespace tsr::special

#include "autograd/special_rules.hpp"
