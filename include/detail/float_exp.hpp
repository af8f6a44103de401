// exp of a float batch, inlined and branch-light.
//
// xsimd's float exp is the same Cephes method, but written as Horner's rule
// with two selects for the range ends, and our wrapper added a compare and a
// lane-by-lane fallback for subnormal results whose call kept the loop's
// vectors on the stack: on AVX-512 that made `exp` 1.5x slower than Eigen's
// and put the chain `a*b + c*sin(d) - exp(-a)` behind Eigen's on one thread.
// Here: x = n ln2 + r with |r| <= ln2/2 (two-part Cody-Waite with fused
// multiply-adds), exp(r) = 1 + r + r^2 p(r) with Cephes' degree-4 p
// evaluated in Estrin's order (two short chains instead of one long one),
// and 2^n put into the exponent bits by an integer add, which is exact
// because every result on this path is a normal float. Lanes whose result
// is subnormal or zero (x < kExpFastMin) and non-finite lanes take the C
// library, out of line, so the common loop carries no call. Checked against
// double-precision exp over every 61st float of the fast range: within
// 1.51 ulp of the exact value (test_elementwise walks every 509th).
#pragma once
#include <cmath>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "float_round.hpp"
#include "lanes_by_scalar.hpp"
#include "simd_fma.hpp"

namespace tsr::detail {

// Below this the result's exponent would leave the normal range (n = -126
// with r < 0); above the upper bound the result is inf.
inline constexpr float kExpFastMin = -87.3f;
inline constexpr float kExpFastMax = 88.72283f;  // largest float x with exp(x) <= FLT_MAX

// x = n ln2 + r with |r| <= ln2/2 (two-part Cody-Waite with fused
// multiply-adds; exact where |n| <= 255): returns r, sets n's integer bits
// (round_to_integer).
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> reduce_ln2(const xsimd::batch<float, A>& x,
                                                                xsimd::batch<int32_t, A>& n_bits) {
  using B = xsimd::batch<float, A>;
  const B n = round_to_integer(x * B(0x1.715476p+0f), n_bits);  // log2(e)
  const B r = detail::fnma(n, B(0.693359375f), x);  // ln2 rounded to 9 bits (Cephes' C1)
  return detail::fnma(n, B(-2.12194440e-4f), r);    // ln2 - C1
}

// exp(r) - 1 for |r| <= ln2/2: r + r^2 p(r), Cephes' expf polynomial p in
// Estrin's order (two short chains instead of one long one).
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> expm1_reduced(const xsimd::batch<float, A>& r) {
  using B = xsimd::batch<float, A>;
  const B r2 = r * r;
  const B lo = detail::fma(B(1.6666277e-01f), r, B(5.0000000e-01f));
  const B hi = detail::fma(B(8.3955629e-03f), r, B(4.1665401e-02f));
  const B p = detail::fma(B(1.3997796e-03f), r2 * r2, detail::fma(hi, r2, lo));
  return detail::fma(p, r2, r);
}

// v * 2^n by an integer add to the exponent bits (n_bits from
// round_to_integer: its low 9 bits are n's): exact where v and the result
// are normal floats.
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> times_pow2(const xsimd::batch<float, A>& v,
                                                                const xsimd::batch<int32_t, A>& n_bits) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  return xsimd::bitwise_cast<B>(xsimd::bitwise_cast<I>(v) + (n_bits << 23));
}

// exp(x) for x in [kExpFastMin, kExpFastMax] (other lanes give garbage).
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> exp_in_range(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  xsimd::batch<int32_t, A> n_bits;
  const B r = reduce_ln2(x, n_bits);
  return times_pow2(expm1_reduced(r) + B(1.f), n_bits);
}

template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> fast_exp(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  const B v = exp_in_range(x);
  const auto in_range = (x >= B(kExpFastMin)) & (x <= B(kExpFastMax));  // false for NaN
  if (!xsimd::all(in_range)) [[unlikely]]
    return replace_lanes(x, v, !in_range, [](float u) { return std::exp(u); });
  return v;
}

}  // namespace tsr::detail
