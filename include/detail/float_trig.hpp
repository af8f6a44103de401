// sin and cos of float batches, inlined for the common range.
//
// xsimd's float sin/cos keep their argument reduction in a function GCC
// does not inline (it holds the path for huge arguments), so every batch
// pays a call that spills the caller's live vectors: on this project's
// machines that made `sin` half as fast as Eigen's, and the fused chain
// `a*b + c*sin(d) - exp(-a)` slower than Eigen's. Here the reduction for
// |x| <= kFastTrigBound is a three-part Cody-Waite reduction by pi/2 with
// fused multiply-adds, followed by the classic minimax polynomials for sin
// and cos on [-pi/4, pi/4] (Cephes' sinf/cosf coefficients); lanes beyond
// the bound (and inf/nan) are computed one by one in double by the C library,
// out of line, so that every lane's result depends on its own value only.
// Checked over every float with |x| <= the bound against double-precision
// sin/cos: within 1 ulp, see docs/benchmarks.md.
#pragma once
#include <cmath>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "float_round.hpp"
#include "lanes_by_scalar.hpp"
#include "simd_fma.hpp"

namespace tsr::detail {

// Up to here the reduction keeps the result within 1 ulp (checked over every
// float below it).
inline constexpr float kFastTrigBound = 128.f;

// |x| reduced by pi/2: r in [-pi/4, pi/4] and the quadrant q (|x| = q*pi/2 + r;
// q's low bits are the quadrant's, as round_to_integer gives them).
template <class A>
[[gnu::always_inline]] inline void reduce_half_pi(const xsimd::batch<float, A>& ax, xsimd::batch<float, A>& r,
                           xsimd::batch<int32_t, A>& q) {
  using B = xsimd::batch<float, A>;
  // pi/2 in four floats (8, 12, 12 and 24 significant bits; 8e-20 short),
  // so that the subtractions stay exact enough where |x| is close to a
  // multiple of pi/2 (three parts left 6 ulps at x = 3 pi).
  constexpr float kP1 = 0x1.92p+0f, kP2 = 0x1.fb4p-12f, kP3 = 0x1.444p-24f, kP4 = 0x1.68c234p-39f;
  const B n = round_to_integer(ax * B(0x1.45f306p-1f), q);  // 2/pi; q's low bits are n's
  r = detail::fnma(n, B(kP1), ax);
  r = detail::fnma(n, B(kP2), r);
  r = detail::fnma(n, B(kP3), r);
  r = detail::fnma(n, B(kP4), r);
}

// sin(r) and cos(r) for |r| <= pi/4 (z = r*r).
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> sin_poly(const xsimd::batch<float, A>& r, const xsimd::batch<float, A>& z) {
  using B = xsimd::batch<float, A>;
  const B p = detail::fma(detail::fma(B(-1.9515295891e-4f), z, B(8.3321608736e-3f)), z, B(-1.6666654611e-1f));
  return detail::fma(p * z, r, r);
}
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> cos_poly(const xsimd::batch<float, A>& z) {
  using B = xsimd::batch<float, A>;
  const B p = detail::fma(detail::fma(B(2.443315711809948e-5f), z, B(-1.388731625493765e-3f)), z,
                         B(4.166664568298827e-2f));
  return detail::fma(z, B(-0.5f), p * z * z) + B(1.f);
}

// Quadrant q of |x|: sin(|x|) is +-sin(r) for even q, +-cos(r) for odd q,
// negative for q mod 4 in {2, 3}; cos(|x|) is the same one quadrant on.
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> quadrant_value(const xsimd::batch<float, A>& r, const xsimd::batch<int32_t, A>& q) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  const B z = r * r;
  const B odd = xsimd::bitwise_cast<B>(I(0) - (q & I(1)));  // all ones where q is odd
  const B v = (cos_poly(z) & odd) | (sin_poly(r, z) & ~odd);
  const B sign = xsimd::bitwise_cast<B>((q & I(2)) << 30);
  return v ^ sign;
}

// sin (Cos false) or cos of a float batch.
template <bool Cos, class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> fast_sin_cos(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  const B ax = xsimd::abs(x);
  const auto near = ax <= B(kFastTrigBound);
  B r;
  I q;
  reduce_half_pi(ax, r, q);  // (far lanes compute garbage here; they are replaced below)
  B v;
  if constexpr (Cos) v = quadrant_value(r, q + I(1));  // cos(x) = sin(|x| + pi/2)
  else v = quadrant_value(r, q) ^ (x & B(-0.f));       // sin is odd: x's sign
  if (!xsimd::all(near)) [[unlikely]]  // in double through the C library (correctly rounded but for rare cases)
    return replace_lanes(x, v, !near, [](float u) { return static_cast<float>(Cos ? std::cos(double(u)) : std::sin(double(u))); });
  return v;
}

template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> fast_sin(const xsimd::batch<float, A>& x) {
  return fast_sin_cos<false>(x);
}
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> fast_cos(const xsimd::batch<float, A>& x) {
  return fast_sin_cos<true>(x);
}

}  // namespace tsr::detail
