// Bessel functions in double: the modified functions I0 and I1 (plain and
// exponentially scaled), J0 and J1, the scaled K0 and K1, Airy's Ai and the
// spherical j0.
//
// I0 and I1 are power series below x = 25 and Hankel's asymptotic expansion
// above. The series has positive terms, so it loses nothing to cancellation;
// it is summed in double-double because in plain double the rounding of
// x^2 / 4, raised to the k-th power, would cost k/2 ulps. Above 25 the
// asymptotic terms fall below 1e-17 before they diverge (the smallest is
// about e^-2x).
#pragma once
#include "special_common.hpp"

namespace tsr::detail::special {

// sum_k (x^2/4)^k / (k! (k + nu)!) for nu = 0 or 1, in double-double.
TSR_HOST_DEVICE inline DD bessel_i_series(double x, int nu) {
  const DD q = dd_div(two_prod(x, x), 4.0);
  DD term{nu == 0 ? 1.0 : 1.0, 0.0}, sum = term;
  for (int k = 1; k < 200; ++k) {
    term = dd_div(dd_mul(term, q), static_cast<double>(k) * static_cast<double>(k + nu));
    sum = dd_add(sum, term);
    if (term.hi < 1e-34 * sum.hi) break;
  }
  return sum;
}

// e^-x I_nu(x) sqrt(2 pi x) for x >= 20: 1 + sum_k prod_j (mu - (2j-1)^2) / (k! (-8x)^k), mu = 4 nu^2.
TSR_HOST_DEVICE inline double bessel_i_asymptotic(double x, int nu) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, tail = 0.0;  // the terms after 1, summed apart so 1 + tail rounds once
  for (int k = 1; k < 100; ++k) {
    const double next = term * -(mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term)) break;  // the series starts to diverge
    term = next;
    tail += term;
    if (std::fabs(term) < 1e-18) break;
  }
  return 1.0 + tail;
}

// I_nu(|x|) e^(-scale |x|), scale 0 or 1, for nu = 0 or 1 (sign handled by the callers).
TSR_HOST_DEVICE inline double bessel_i_abs(double ax, int nu, bool scaled) {
  if (ax < 25.0) {
    const DD s = bessel_i_series(ax, nu);
    double v = s.hi + s.lo;
    if (nu == 1) v *= 0.5 * ax;
    return scaled ? v * std::exp(-ax) : v;
  }
  if (std::isinf(ax)) return scaled ? 0.0 : kInf;
  const double s = bessel_i_asymptotic(ax, nu) / std::sqrt(2.0 * kPi * ax);
  if (scaled) return s;
  if (ax < 709.0) return std::exp(ax) * s;
  const double half = std::exp(0.5 * ax);  // e^x in two halves: finite results up to x ~ 713
  return half * (half * s);
}

TSR_HOST_DEVICE inline double i0(double x) { return std::isnan(x) ? x : bessel_i_abs(std::fabs(x), 0, false); }
TSR_HOST_DEVICE inline double i0e(double x) { return std::isnan(x) ? x : bessel_i_abs(std::fabs(x), 0, true); }
TSR_HOST_DEVICE inline double i1(double x) {
  return std::isnan(x) ? x : std::copysign(bessel_i_abs(std::fabs(x), 1, false), x);
}
TSR_HOST_DEVICE inline double i1e(double x) {
  return std::isnan(x) ? x : std::copysign(bessel_i_abs(std::fabs(x), 1, true), x);
}

// sin(x) / x.
TSR_HOST_DEVICE inline double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (x == 0.0) return 1.0;
  return std::sin(x) / x;
}

// ----- J0 and J1 ---------------------------------------------------------------
// Below |x| = 25 the power series sum_k (-x^2/4)^k / (k! (k+nu)!), whose
// alternating terms grow to ~e^x / x before they shrink: summed in
// double-double (32 digits), it keeps ~22 digits at x = 25. Above, Hankel's
// expansion sqrt(2 / (pi x)) (P cos chi - Q sin chi), chi = x - (2 nu + 1) pi / 4,
// whose terms reach ~e^-2x before they diverge.
TSR_HOST_DEVICE inline double bessel_j_series(double x, int nu) {
  const DD q = dd_div(two_prod(x, x), -4.0);
  DD term{1.0, 0.0}, sum = term;
  for (int k = 1; k < 200; ++k) {
    term = dd_div(dd_mul(term, q), static_cast<double>(k) * static_cast<double>(k + nu));
    sum = dd_add(sum, term);
    if (4.0 * k * k > -q.hi && std::fabs(term.hi) < 1e-34) break;
  }
  const double v = sum.hi + sum.lo;
  return nu == 0 ? v : 0.5 * x * v;
}
// P and Q of Hankel's expansion: the terms a_k(nu) / x^k, alternately into
// P and Q with alternating signs, a_k = prod_j (4 nu^2 - (2j - 1)^2) / (k! 8^k).
struct HankelPQ {
  double p, q;
};
TSR_HOST_DEVICE inline HankelPQ hankel_pq(double x, int nu) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, p = 1.0, q = 0.0;
  for (int k = 1; k < 200; ++k) {
    const double next = term * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term) || next == 0.0) break;
    term = next;
    const double signed_term = (k / 2) % 2 == 0 ? term : -term;  // k = 0,1: +; 2,3: -; ...
    if (k % 2 == 0) p += signed_term;
    else q += signed_term;
    if (std::fabs(term) < 1e-18) break;
  }
  return {p, q};
}
TSR_HOST_DEVICE inline double bessel_j0(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  if (ax < 25.0) return bessel_j_series(ax, 0);
  if (std::isinf(ax)) return 0.0;
  const HankelPQ h = hankel_pq(ax, 0);
  const double s = std::sin(ax), c = std::cos(ax);  // cos chi = (c + s) / sqrt 2, sin chi = (s - c) / sqrt 2
  return (h.p * (c + s) - h.q * (s - c)) / std::sqrt(kPi * ax);
}
TSR_HOST_DEVICE inline double bessel_j1(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  double v;
  if (ax < 25.0) {
    v = bessel_j_series(ax, 1);
  } else if (std::isinf(ax)) {
    v = 0.0;
  } else {
    const HankelPQ h = hankel_pq(ax, 1);
    const double s = std::sin(ax), c = std::cos(ax);  // cos chi = (s - c) / sqrt 2, sin chi = -(s + c) / sqrt 2
    v = (h.p * (s - c) + h.q * (s + c)) / std::sqrt(kPi * ax);
  }
  return std::signbit(x) ? -v : v;  // odd
}

// ----- scaled K0 and K1, and Ai ---------------------------------------------------
// e^x K_nu(x) = integral_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, by the
// trapezoidal rule: for an integrand analytic in a strip about the real axis
// it converges geometrically in 1/h (error ~ exp(-2 pi d / h) for strip
// half-width d), and all terms are positive. h shrinks like 1/sqrt(x) as
// the integrand narrows; cosh t - 1 is 2 sinh(t/2)^2 (no cancellation).
TSR_HOST_DEVICE inline double bessel_k_scaled_integral(double nu, double x) {
  const double h = x > 4.0 ? 0.35 / std::sqrt(x) : 0.175;
  DD sum{0.5, 0.0};  // the t = 0 term, halved
  for (int j = 1; j < 4000; ++j) {
    const double t = j * h;
    const double sh = std::sinh(0.5 * t);
    const double term = std::exp(-2.0 * x * sh * sh) * std::cosh(nu * t);
    sum = dd_add(sum, DD{term, 0.0});
    if (term < 1e-18 * sum.hi) break;
  }
  return h * (sum.hi + sum.lo);
}
// Below x = 1e-9 the leading terms: K0 ~ -log(x/2) - gamma, K1 ~ 1/x, times e^x.
TSR_HOST_DEVICE inline double scaled_modified_bessel_k0(double x) {
  if (std::isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return kInf;
  if (std::isinf(x)) return 0.0;
  if (x < 1e-9) return (-std::log(0.5 * x) - kEulerGamma) * (1.0 + x);
  return bessel_k_scaled_integral(0.0, x);
}
TSR_HOST_DEVICE inline double scaled_modified_bessel_k1(double x) {
  if (std::isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return kInf;
  if (std::isinf(x)) return 0.0;
  if (x < 1e-9) return 1.0 / x + 1.0;
  return bessel_k_scaled_integral(1.0, x);
}

// (2/3) x^(3/2) in double-double: the phase of Ai's oscillation for
// negative x and its decay exponent for positive x, where a rounded
// value would cost zeta ulps.
TSR_HOST_DEVICE inline DD airy_zeta(double x) {
  const double s = std::sqrt(x);
  const double s_lo = std::fma(-s, s, x) / (2.0 * s);
  DD p = two_prod(x, s);
  p.lo += x * s_lo;
  return dd_div(dd_mul(p, 2.0), 3.0);
}
// Ai(x): the Maclaurin series Ai(0) f(x) + Ai'(0) g(x) in double-double on
// [-10, 1] (its terms grow to ~e^zeta at x = -10, where 32 digits still
// leave 23); Ai(x) = sqrt(x / 3) / pi * K_1/3(zeta) above; and the
// asymptotic expansion (DLMF 9.7.9) below -10, whose terms reach e^-2zeta.
TSR_HOST_DEVICE inline double airy_ai(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0.0;
  if (x > 105.0) return 0.0;  // below the smallest subnormal
  if (x > 1.0) {
    const DD z = airy_zeta(x);
    return std::sqrt(x / 3.0) * kInvPi * std::exp(-z.hi) * (1.0 - z.lo) *
           bessel_k_scaled_integral(1.0 / 3.0, z.hi);
  }
  if (x >= -10.0) {
    const DD x3 = dd_mul(two_prod(x, x), x);
    DD f{1.0, 0.0}, g{x, 0.0}, tf = f, tg = g;
    for (int k = 1; k < 100; ++k) {
      tf = dd_div(dd_mul(tf, x3), (3.0 * k - 1.0) * (3.0 * k));
      tg = dd_div(dd_mul(tg, x3), (3.0 * k) * (3.0 * k + 1.0));
      f = dd_add(f, tf);
      g = dd_add(g, tg);
      if (std::fabs(tf.hi) + std::fabs(tg.hi) < 1e-34) break;
    }
    constexpr DD ai0{0.3550280538878172, 2.05233632436212e-17};     // Ai(0)
    constexpr DD dai0{-0.2588194037928068, 2.522243111610832e-17};  // Ai'(0)
    const DD r = dd_add(dd_mul(f, ai0), dd_mul(g, dai0));
    return r.hi + r.lo;
  }
  const double z = -x;
  const DD zeta = airy_zeta(z);
  // u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_(k-1); terms u_k / zeta^k, alternately into P and Q.
  double u = 1.0, p = 1.0, q = 0.0, prev = 1.0;
  for (int k = 1; k < 200; ++k) {
    u *= (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) / ((2.0 * k - 1.0) * 216.0 * k) / zeta.hi;
    if (std::fabs(u) >= prev) break;
    prev = std::fabs(u);
    const double signed_term = (k / 2) % 2 == 0 ? u : -u;
    if (k % 2 == 0) p += signed_term;
    else q += signed_term;
    if (std::fabs(u) < 1e-18) break;
  }
  // cos(zeta - pi/4) and sin(zeta - pi/4), with zeta's low part as a first-order correction.
  const double s = std::sin(zeta.hi), c = std::cos(zeta.hi);
  const double sin_z = s + zeta.lo * c, cos_z = c - zeta.lo * s;
  const double phase = p * (cos_z + sin_z) + q * (sin_z - cos_z);  // times 1/sqrt 2
  return phase * 0.7071067811865476 / (std::sqrt(kPi) * std::sqrt(std::sqrt(z)));
}

}  // namespace tsr::detail::special
