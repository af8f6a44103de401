// The error function family in double: erfcx, erfinv, ndtr, log_ndtr, ndtri.
// erf and erfc themselves are the C library's (correctly rounded to within
// an ulp in glibc and CUDA's libdevice).
#pragma once
#include "special_common.hpp"

namespace tsr::detail::special {

// 1/sqrt(2) as a double plus the double nearest to the rest: x / sqrt(2) as
// a sum hi + lo, since the rounding of x / sqrt(2) alone costs 2 z^2 ulps in
// erfc(z) far in the tail.
inline constexpr double kInvSqrt2 = 0.7071067811865476;
inline constexpr double kInvSqrt2Lo = -4.833646656726457e-17;

// exp(x^2) erfc(x).
TSR_HOST_DEVICE inline double erfcx_nonneg(double x) {
  if (x < 26.0) return exp_x2(x) * std::erfc(x);
  // Far out erfc underflows: the asymptotic series
  // 1 / (x sqrt(pi)) * sum_k (-1)^k (2k - 1)!! / (2 x^2)^k, whose terms fall
  // below 1e-17 by k = 8 for x >= 26.
  if (x > 1e8) return kInvSqrtPi / x;
  const double v = 1.0 / (2.0 * x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 10; ++k) {
    term *= -(2.0 * k - 1.0) * v;
    sum += term;
  }
  return kInvSqrtPi / x * sum;
}
TSR_HOST_DEVICE inline double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x >= 0) return erfcx_nonneg(x);
  if (x < -26.7) return kInf;
  return 2.0 * exp_x2(x) - erfcx_nonneg(-x);
}

// Inverse of erf: a single-precision initial guess (Giles, "Approximating
// the erfinv function", 2010), then two Halley steps on erf(x) = y (two, where
// float inputs reach), taken on
// erfc(x) = 1 - y in the tail so that the residual keeps its digits.
TSR_HOST_DEVICE inline double erfinv(double y) {
  if (std::isnan(y)) return y;
  const double a = std::fabs(y);
  if (a >= 1.0) return a == 1.0 ? std::copysign(kInf, y) : kNaN;
  if (a == 0.0) return y;
  double w = -std::log((1.0 - a) * (1.0 + a)), p;
  if (w < 5.0) {
    w -= 2.5;
    constexpr double c[] = {1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
                            -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08};
    p = poly(c, w);
  } else {
    w = std::sqrt(w) - 3.0;
    constexpr double c[] = {2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
                            -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257};
    p = poly(c, w);
  }
  // (The guess is good to ~1e-7 where float inputs reach; for the last
  // doubles below 1 it is a few percent off and needs a few more steps.)
  double x = p * a;
  for (int i = 0; i < 8; ++i) {
    const double f = a <= 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    const double u = f / (2.0 * kInvSqrtPi * exp_minus_x2(x));
    const double step = u / (1.0 + x * u);
    x -= step;
    if (std::fabs(step) <= 1e-17 * x) break;
  }
  return std::copysign(x, y);
}

// The standard normal CDF, 0.5 erfc(-x / sqrt 2), with the rounding of
// x / sqrt 2 corrected by one Taylor term.
TSR_HOST_DEVICE inline double ndtr(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return x > 0 ? 1.0 : 0.0;
  const double z = x * kInvSqrt2;
  const double zl = std::fma(x, kInvSqrt2, -z) + x * kInvSqrt2Lo;
  return 0.5 * std::erfc(-z) + zl * kInvSqrtPi * exp_minus_x2(z);
}

// log(ndtr(x)): log1p(-ndtr(-x)) on the right, where ndtr(x) is near 1;
// log(ndtr(x)) in the middle; on the left, where ndtr underflows,
// log(erfcx(t) / 2) - t^2 with t = -x / sqrt 2 and t^2 = x^2 / 2 exactly.
TSR_HOST_DEVICE inline double log_ndtr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return std::log1p(-ndtr(-x));
  if (x >= -1.0) return std::log(ndtr(x));
  if (std::isinf(x)) return -kInf;
  const DD x2 = two_prod(x, x);
  return (std::log(0.5 * erfcx(-x * kInvSqrt2)) - 0.5 * x2.lo) - 0.5 * x2.hi;
}

// The standard normal density.
TSR_HOST_DEVICE inline double normal_pdf(double x) { return exp_minus_x2(x * kInvSqrt2) / kSqrt2Pi; }

// Inverse of ndtr. In the middle sqrt(2) erfinv(2p - 1) (2p - 1 is exact
// there); in the tails Halley steps on ndtr(x) = p from the Abramowitz and
// Stegun 26.2.23 guess (error < 4.5e-4), the upper tail through 1 - p, which
// is exact for p >= 1/2.
TSR_HOST_DEVICE inline double ndtri_lower(double p) {  // 0 < p < 1/4
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int i = 0; i < 3; ++i) {
    const double u = (ndtr(x) - p) / normal_pdf(x);
    if (!std::isfinite(u)) break;
    x -= u / (1.0 + 0.5 * x * u);
  }
  return x;
}
TSR_HOST_DEVICE inline double ndtri(double p) {
  if (std::isnan(p)) return p;
  if (p <= 0.0 || p >= 1.0) return p == 0.0 ? -kInf : p == 1.0 ? kInf : kNaN;
  if (p < 0.25) return ndtri_lower(p);
  if (p > 0.75) return -ndtri_lower(1.0 - p);
  const double e = erfinv(2.0 * p - 1.0);
  const DD s = two_prod(1.4142135623730951, e);  // sqrt 2 carried in two parts
  return s.hi + (s.lo - 9.667293313452913e-17 * e);
}

}  // namespace tsr::detail::special
