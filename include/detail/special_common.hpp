// Building blocks of the special functions (include/special.hpp): exact
// products and sums (double-double arithmetic), sin(pi x) and cos(pi x) with
// exact argument reduction, and polynomial evaluation.
//
// Every function here is a plain scalar function of double, usable on host
// and device: no std:: special functions, no tables in global memory, no
// exceptions. Float results are computed in double and rounded once, which
// keeps them within an ulp of the correctly rounded value.
#pragma once
#include <cmath>
#include <limits>

#include "config.hpp"

namespace tsr::detail::special {

inline constexpr double kPi = 3.141592653589793;
inline constexpr double kPiLo = 1.2246467991473532e-16;  // pi - kPi
inline constexpr double kInvSqrtPi = 0.5641895835477563;
inline constexpr double kInvPi = 0.3183098861837907;
inline constexpr double kSqrt2Pi = 2.5066282746310007;
inline constexpr double kEulerGamma = 0.5772156649015329;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A value hi + lo with |lo| <= ulp(hi) / 2: about 32 significant digits.
struct DD {
  double hi, lo;
};

// a + b exactly (Knuth's two-sum).
TSR_HOST_DEVICE inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
// a * b exactly (the rounding error of a product is an fma away).
TSR_HOST_DEVICE inline DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
TSR_HOST_DEVICE inline DD dd_add(DD a, DD b) {
  const DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(s.lo, a.lo + b.lo);
  return two_sum(s.hi, t.hi + t.lo);
}
TSR_HOST_DEVICE inline DD dd_mul(DD a, DD b) {
  DD p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return two_sum(p.hi, p.lo);
}
TSR_HOST_DEVICE inline DD dd_mul(DD a, double b) { return dd_mul(a, DD{b, 0.0}); }
TSR_HOST_DEVICE inline DD dd_div(DD a, double b) {
  const double q = a.hi / b;
  const DD r = two_prod(q, b);  // a - q b, exactly up to a.lo's contribution
  const double rest = ((a.hi - r.hi) - r.lo + a.lo) / b;
  return two_sum(q, rest);
}

// a / b for a double-double b: one correction step on a.hi / b.hi.
TSR_HOST_DEVICE inline DD dd_div(DD a, DD b) {
  const double q = a.hi / b.hi;
  const DD p = dd_mul(b, q);
  const DD r = dd_add(a, DD{-p.hi, -p.lo});
  return two_sum(q, r.hi / b.hi);
}

// exp(x * x) without the rounding error of x * x (which, multiplied by
// x * x up to ~700, would cost hundreds of ulps).
TSR_HOST_DEVICE inline double exp_x2(double x) {
  const DD s = two_prod(x, x);
  return std::exp(s.hi) * (1.0 + s.lo);
}
// exp(-x * x), the same way.
TSR_HOST_DEVICE inline double exp_minus_x2(double x) {
  const DD s = two_prod(x, x);
  return std::exp(-s.hi) * (1.0 - s.lo);
}

// sin(pi r) for |r| <= 1/4, with pi r carried in double-double.
TSR_HOST_DEVICE inline double sin_pi_reduced(double r) {
  const DD p = two_prod(kPi, r);
  const double hi = p.hi, lo = p.lo + kPiLo * r;
  return std::sin(hi) + lo * std::cos(hi);
}
TSR_HOST_DEVICE inline double cos_pi_reduced(double r) {
  const DD p = two_prod(kPi, r);
  const double hi = p.hi, lo = p.lo + kPiLo * r;
  return std::cos(hi) - lo * std::sin(hi);
}

// sin(pi x): exact at integers (0) and accurate everywhere, since x is
// reduced modulo 2 exactly before pi multiplies it.
TSR_HOST_DEVICE inline double sinpi(double x) {
  if (!std::isfinite(x)) return kNaN;
  double r = x - 2.0 * std::nearbyint(x * 0.5);  // exact, in [-1, 1]
  const double sign = r < 0 ? -1.0 : 1.0;
  r = std::fabs(r);
  if (r > 0.5) r = 1.0 - r;  // sin(pi (1 - r)) = sin(pi r); exact for r in [1/2, 1]
  if (r == 0.0) return sign * 0.0;
  const double v = r <= 0.25 ? sin_pi_reduced(r) : cos_pi_reduced(0.5 - r);
  return sign * v;
}
// cos(pi x), exactly 0 at half-integers.
TSR_HOST_DEVICE inline double cospi(double x) {
  if (!std::isfinite(x)) return kNaN;
  double r = std::fabs(x - 2.0 * std::nearbyint(x * 0.5));  // in [0, 1]
  double sign = 1.0;
  if (r > 0.5) {
    r = 1.0 - r;  // cos(pi (1 - r)) = -cos(pi r)
    sign = -1.0;
  }
  if (r == 0.5) return 0.0;
  const double v = r <= 0.25 ? cos_pi_reduced(r) : sin_pi_reduced(0.5 - r);
  return sign * v;
}

// sin(pi x) / (pi x), exactly 0 at nonzero integers.
TSR_HOST_DEVICE inline double sinc(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return kNaN;  // as PyTorch
  if (std::fabs(x) < 1e-9) return 1.0;  // 1 - (pi x)^2 / 6 rounds to 1
  return sinpi(x) / x * kInvPi;
}

// c[0] + c[1] x + ... + c[n-1] x^(n-1).
template <int N>
TSR_HOST_DEVICE inline double poly(const double (&c)[N], double x) {
  double r = c[N - 1];
  for (int i = N - 2; i >= 0; --i) r = r * x + c[i];
  return r;
}

}  // namespace tsr::detail::special
