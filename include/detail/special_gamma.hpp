// The gamma function family in double: digamma, trigamma, Hurwitz zeta,
// polygamma, and the regularized incomplete gamma functions. Special values
// follow PyTorch 1.13 (which follows Cephes and SciPy); where PyTorch's
// answer at a pole is a rounding artifact, the limit is returned instead
// (listed in docs/special.md).
#pragma once
#include "special_common.hpp"

namespace tsr::detail::special {

TSR_HOST_DEVICE inline bool is_integer(double x) { return x == std::floor(x); }

// psi(x) on [1, 2] by its Taylor series about its zero x0 = 1.46163...
// (coefficients psi^(k)(x0) / k! from tools/make_special_coeffs.py), which
// keeps full relative accuracy next to the zero.
TSR_HOST_DEVICE inline double digamma_near_root(double x) {
  constexpr double kDigammaAtRoot[] = {
      0.9676722454476212, -0.4427631689835921, 0.258499760955651,
      -0.16394270544240652, 0.10782405069126237, -0.07219956125645471,
      0.04880428816414311, -0.03316112647484736, 0.022597648232218104,
      -0.01542476590494896, 0.010538791616612175, -0.007204534386356869,
      0.004926781395729853, -0.003369801655439328, 0.002305126326734928,
      -0.0015769367714301972, 0.0010788252019162967, -0.0007380709389960052,
      0.000504953265834602, -0.0003454680251063077, 0.00023635601564027053,
      -0.00016170622091974803, 0.0001106337276874741, -7.569179582195066e-05,
      5.178575795222081e-05, -3.5430070947659604e-05, 2.424006611860132e-05,
      -1.6584242271854135e-05, 1.134638458466385e-05, -7.762817668462094e-06,
      5.3110609208898636e-06, -3.6336507898010456e-06, 2.486022733129538e-06,
      -1.7008538854332607e-06, 1.1636675363548843e-06, -7.96142543124197e-07,
      5.446941930669446e-07, -3.7266161283438227e-07, 2.549626552021554e-07,
      -1.7443695117727745e-07, 1.1934394829830244e-07, -8.165115189488409e-08,
      5.586299683532171e-08, -3.821960061917494e-08,
  };
  const double dx = (x - 1.4616321449683622) - 9.549995429965697e-17;  // x0 in two parts
  return dx * poly(kDigammaAtRoot, dx);
}

// psi(x) for x > 0: below 1 through psi(x) = psi(x + 1) - 1/x, on [1, 10)
// the Taylor series at psi(x - n) plus sum 1/(x - k), and from 10 on the
// asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k).
TSR_HOST_DEVICE inline double digamma_positive(double x) {
  if (x < 1e-8) return -1.0 / x - kEulerGamma;  // + (pi^2 / 6) x, below an ulp here
  if (x < 1.0) return digamma_near_root(x + 1.0) - 1.0 / x;
  if (x < 10.0) {
    double base = x;
    DD shift{0.0, 0.0};  // sum of 1/base, in double-double (up to 8 terms)
    while (base >= 2.0) {
      base -= 1.0;  // exact: base and 1 are both on the grid of x
      const double r = 1.0 / base;
      shift = dd_add(shift, DD{r, std::fma(-r, base, 1.0) / base});
    }
    const DD r = dd_add(shift, DD{digamma_near_root(base), 0.0});
    return r.hi + r.lo;
  }
  const double v = 1.0 / (x * x);
  constexpr double c[] = {1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760, 1.0 / 12,
                          -3617.0 / 8160};
  return std::log(x) + (-0.5 / x - v * poly(c, v));
}
TSR_HOST_DEVICE inline double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0.0) return std::copysign(kInf, -x);  // PyTorch: -inf at +0, +inf at -0
  if (x < 0.0) {
    if (is_integer(x)) return kNaN;  // the poles (and -inf)
    // Reflection: psi(x) = psi(1 - x) - pi cot(pi x).
    return digamma_positive(1.0 - x) - kPi * cospi(x) / sinpi(x);
  }
  if (std::isinf(x)) return x;
  return digamma_positive(x);
}

// psi'(x) = sum_k 1 / (x + k)^2: the recurrence up to x >= 10, then
// 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
TSR_HOST_DEVICE inline double trigamma_positive(double x) {
  double shift = 0.0;
  while (x < 10.0) {
    shift += 1.0 / (x * x);
    x += 1.0;
  }
  const double v = 1.0 / (x * x);
  constexpr double c[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6, -3617.0 / 510};
  return shift + (1.0 / x + 0.5 * v + v / x * poly(c, v));
}
TSR_HOST_DEVICE inline double trigamma(double x) {
  if (std::isnan(x) || x == -kInf) return kNaN;
  if (x <= 0.0 && is_integer(x)) return kInf;  // the poles
  if (x == kInf) return 0.0;
  if (x < 0.0) {
    // Reflection: psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x).
    const double s = kPi / sinpi(x);
    return s * s - trigamma_positive(1.0 - x);
  }
  return trigamma_positive(x);
}

// Hurwitz zeta(s, q) = sum_{k >= 0} (q + k)^-s, for s > 1: the first terms
// summed directly until q + n >= max(10, s / 2 + 10), the rest by
// Euler-Maclaurin with 12 Bernoulli terms. Domain as PyTorch (Cephes):
// s = 1 gives inf, s < 1 NaN; a non-positive integer q gives inf; a negative
// q with a non-integer s gives NaN.
TSR_HOST_DEVICE inline double zeta(double s, double q) {
  if (std::isnan(s) || std::isnan(q)) return kNaN;
  if (s == 1.0) return kInf;
  if (s < 1.0) return kNaN;
  if (q <= 0.0) {
    if (is_integer(q)) return kInf;
    if (!is_integer(s)) return kNaN;
  }
  if (s == kInf) return q == 1.0 ? 1.0 : q > 1.0 ? 0.0 : kInf;  // the limits (PyTorch: NaN but at q = 1)
  if (std::isinf(q)) return kNaN;  // as PyTorch
  const double start = s * 0.5 + 10.0 > 10.0 ? s * 0.5 + 10.0 : 10.0;
  double sum = 0.0, w = q;
  while (w < start) {
    sum += std::pow(w, -s);
    w += 1.0;
  }
  // Tail: w^(1-s)/(s-1) + w^-s/2 + sum_k B_2k/(2k)! s(s+1)...(s+2k-2) w^(-s-2k+1).
  constexpr double b2k_over_fact[] = {1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
                                      -691.0 / 1307674368000.0, 1.0 / 74724249600.0, -3617.0 / 10670622842880000.0,
                                      43867.0 / 5109094217170944000.0, -174611.0 / 802857662698291200000.0,
                                      77683.0 / 14101100039391805440000.0, -236364091.0 / 1693824136731743669452800000.0};
  const double ws = std::pow(w, -s);
  double tail = w * ws / (s - 1.0) + 0.5 * ws;
  double rising = s, power = ws / w;  // s (s+1) ... (s+2k-2) and w^(-s-2k+1)
  for (int k = 0; k < 12; ++k) {
    const double term = b2k_over_fact[k] * rising * power;
    tail += term;
    if (std::fabs(term) < 1e-18 * std::fabs(sum + tail)) break;
    rising *= (s + 2.0 * k + 1.0) * (s + 2.0 * k + 2.0);
    power /= w * w;
  }
  return sum + tail;
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2.
TSR_HOST_DEVICE inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  double factorial = 1.0;
  for (int64_t i = 2; i <= n; ++i) factorial *= static_cast<double>(i);
  const double sign = (n % 2 == 0) ? -1.0 : 1.0;
  if (x == -kInf) return sign * kInf;  // as PyTorch
  return sign * factorial * zeta(static_cast<double>(n + 1), x);
}

// ----- regularized incomplete gamma ------------------------------------------

// log(1 + t) - t without cancellation for small t.
TSR_HOST_DEVICE inline double log1pmx(double t) {
  if (std::fabs(t) > 0.25) return std::log1p(t) - t;
  double power = t * t, sum = 0.0;
  for (int k = 2; k < 60; ++k) {
    const double term = power / k;
    sum += (k % 2 == 0) ? -term : term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
    power *= t;
  }
  return sum;
}

// x^a e^-x / Gamma(a + 1), the factor in front of both expansions. For large
// a, through Stirling's formula: exp(a log1pmx((x - a) / a)) / (sqrt(2 pi a)
// exp(mu(a))) with mu(a) the Stirling correction, which keeps the exponent
// free of the cancellation between a log x and x.
TSR_HOST_DEVICE inline double igam_prefactor(double a, double x) {
  // (Below a = 100 and x = 700 neither factor overflows, and each is
  // within an ulp or two. Gamma(a + 1) is a Gamma(a) from 1 on: rounding
  // a + 1 would cost psi(a + 1) a ulps, 22 at a = 15.)
  if (a < 100.0 && x < 700.0)
    return std::pow(x, a) * std::exp(-x) / (a < 1.0 ? std::tgamma(a + 1.0) : a * std::tgamma(a));
  if (a < 100.0) return std::exp(a * std::log(x) - x - std::lgamma(a + 1.0));
  const double v = 1.0 / (a * a);
  const double mu = (1.0 / 12 - v * (1.0 / 360 - v * (1.0 / 1260 - v / 1680))) / a;
  // a (log(x / a) - (x - a) / a): near x = a through log1pmx; elsewhere
  // log(x / a) directly (log1p(t) near t = -1 would amplify t's rounding).
  const double t = (x - a) / a;
  const double e = std::fabs(t) < 0.25 ? a * log1pmx(t) : a * std::log(x / a) - (x - a);
  return std::exp(e - mu) / std::sqrt(2.0 * kPi * a);
}

// P(a, x) by its series x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a+1)...(a+k)), for x < a + 1.
TSR_HOST_DEVICE inline double igam_series(double a, double x) {
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return igam_prefactor(a, x) * sum;
}
// Q(a, x) by its continued fraction, for x >= a:
// x^a e^-x / Gamma(a) * 1 / (b0 + a1 / (b1 + a2 / (b2 + ...))) with
// b_i = x + 2i + 1 - a and a_i = -i (i - a). The modified Lentz recurrence
// finds how deep the fraction must go; it is then evaluated from the bottom
// up, since Lentz's running product of ~n factors would carry ~n roundings.
TSR_HOST_DEVICE inline double igamc_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b;
  int depth = 1;
  for (; depth < 100000; ++depth) {
    const double an = -depth * (depth - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    if (std::fabs(d * c - 1.0) < 1e-17) break;
  }
  depth += 4;
  double t = x + 2.0 * depth + 1.0 - a;
  for (int i = depth; i >= 1; --i) t = (x + 2.0 * (i - 1) + 1.0 - a) - i * (i - a) / t;
  return igam_prefactor(a, x) * a / t;  // x^a e^-x / Gamma(a) = a * prefactor
}

// log Gamma(1 + a) for |a| <= 1/2 by its Taylor series -gamma a + sum
// (-1)^k zeta(k) / k a^k (coefficients from tools/make_special_coeffs.py),
// else by the series of log Gamma(2 + b) about b = 0 near a = 1: both keep
// relative accuracy around the zeros of log Gamma at 1 and 2.
TSR_HOST_DEVICE inline double lgamma1p(double a) {
  constexpr double kLgamma1p[] = {
      0.8224670334241132, -0.40068563438653143, 0.27058080842778454,
      -0.20738555102867398, 0.1695571769974082, -0.1440498967688461,
      0.12550966952474304, -0.11133426586956469, 0.1000994575127818,
      -0.09095401714582904, 0.083353840546109, -0.0769325164113522,
      0.07143294629536133, -0.06666870588242046, 0.06250095514121304,
      -0.058823978658684585, 0.055555767627403614, -0.05263167937961666,
      0.05000004769810169, -0.047619070330142226, 0.04545455629320467,
      -0.04347826605304026, 0.04166666915034121, -0.04000000119214014,
      0.03846153903467518, -0.037037037312989324, 0.035714285847333355,
      -0.034482758684919304, 0.03333333336437758, -0.03225806453115042,
      0.03125000000727597, -0.030303030306558044, 0.029411764707594344,
      -0.02857142857226011, 0.027777777778181998, -0.027027027027223673,
      0.02631578947377995, -0.025641025641072283, 0.025000000000022737,
      -0.024390243902450117, 0.023809523809529224, -0.023255813953491015,
      0.02272727272727402, -0.022222222222222855, 0.021739130434782917,
      -0.021276595744681003, 0.02083333333333341, -0.02040816326530616,
      0.020000000000000018, -0.019607843137254912, 0.019230769230769235,
      -0.01886792452830189, 0.01851851851851852, -0.01818181818181818,
      0.017857142857142856, -0.017543859649122806,
  };
  if (std::fabs(a) <= 0.5) return a * (-kEulerGamma + a * poly(kLgamma1p, a));
  if (std::fabs(a - 1.0) < 0.5) {
    // log Gamma(2 + b), b = a - 1 (exact): (1 - gamma) b + sum (-1)^k (zeta(k) - 1) / k b^k.
    constexpr double kLgamma2p[] = {
        0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
        -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261,
        0.0005096695247430425, -0.00022315475845357939, 9.945751278180853e-05,
        -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
        4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
        -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07,
        4.7698101693639804e-08, -2.2711094608943164e-08, 1.0838659214896955e-08,
        -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
        5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
        -6.4229645638381e-11, 3.1044247747322276e-11, -1.5021384080754142e-11,
    };
    const double b = a - 1.0;
    return b * ((1.0 - kEulerGamma) + b * poly(kLgamma2p, b));
  }
  return std::lgamma(1.0 + a);
}

// Q(a, x) for small x, from gamma(a, x) = sum_n (-1)^n x^(a+n) / (n! (a+n)):
// Q = -expm1(E) - a e^E sum_{n>=1} (-1)^n x^n / (n! (a+n)) with
// E = a log x - log Gamma(1 + a), so 1 - x^a / Gamma(a + 1) keeps its digits
// where it is small (SciPy's igamc_series). The alternating sum (its terms
// cancel, and a + n rounds) and the final combination run in double-double:
// on a dense grid of a < 1, x in [0.1, 1.1] that took the worst error from
// 21 ulps to the figure in docs/special.md.
TSR_HOST_DEVICE inline double igamc_series(double a, double x) {
  DD power{1.0, 0.0}, sum{0.0, 0.0};
  for (int n = 1; n < 2000; ++n) {
    power = dd_div(dd_mul(power, -x), static_cast<double>(n));
    const DD term = dd_div(power, two_sum(a, static_cast<double>(n)));
    sum = dd_add(sum, term);
    if (std::fabs(term.hi) <= 1e-33 * std::fabs(sum.hi)) break;
  }
  // Q = -(u + v + u v) with u = expm1(E) and v = a S: u and v cancel by up
  // to a few times, so v and the sum keep double-double precision.
  const double u = std::expm1(a * std::log(x) - lgamma1p(a));
  const DD v = dd_mul(sum, a);
  const DD q = dd_add(dd_add(DD{u, 0.0}, v), dd_mul(v, u));
  return -(q.hi + q.lo);
}
// Whether Q(a, x) should come from igamc_series (SciPy's choice of regions).
TSR_HOST_DEVICE inline bool use_igamc_series(double a, double x) {
  if (x > 1.1) return false;
  return x <= 0.5 ? -0.4 / std::log(x) >= a : x * 1.1 >= a;
}

// Special values as PyTorch (SciPy's igam): NaN for negative a or x; a = 0
// gives 1 for x > 0 and NaN at x = 0; infinite a gives 0, or NaN with
// infinite x; infinite x gives 1.
TSR_HOST_DEVICE inline double gammainc(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0.0 || x < 0.0) return kNaN;
  if (a == 0.0) return x > 0.0 ? 1.0 : kNaN;
  if (x == 0.0) return 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1.0;
  return x < a + 1.0 ? igam_series(a, x) : 1.0 - igamc_fraction(a, x);
}
TSR_HOST_DEVICE inline double gammaincc(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0.0 || x < 0.0) return kNaN;
  if (a == 0.0) return x > 0.0 ? 0.0 : kNaN;
  if (x == 0.0) return 1.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0.0;
  if (use_igamc_series(a, x)) return igamc_series(a, x);
  // (From x = a on the fraction: 1 - P there would cancel by up to ~3x.)
  return x < a ? 1.0 - igam_series(a, x) : igamc_fraction(a, x);
}

// log of the multivariate gamma function of dimension p:
// p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(a - j / 2).
TSR_HOST_DEVICE inline double multigammaln(double a, int64_t p) {
  double sum = 0.25 * static_cast<double>(p) * static_cast<double>(p - 1) * 1.1447298858494002;  // log(pi)
  for (int64_t j = 0; j < p; ++j) sum += std::lgamma(a - 0.5 * static_cast<double>(j));
  return sum;
}

}  // namespace tsr::detail::special
