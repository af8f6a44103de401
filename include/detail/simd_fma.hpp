// Fused multiply-add of batches that is fused on every instruction set.
//
// xsimd 8 (Debian 12's) has no AVX-512 kernel for fma and fnma: its generic
// fallback computes x * y + z as a multiply and an add, which the compiler
// fuses only when it may contract (GCC's default, not -ffp-contract=off,
// which our own builds use). On AVX-512 that made the float exp and sin
// polynomials, and the GEMM micro-kernel, round twice and take twice the
// instructions, while an AVX2 build of the same code used FMA instructions.
// These call the AVX-512 instructions directly and leave every other
// instruction set to xsimd (whose FMA3 kernels are fused).
#pragma once
#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace tsr::detail {

template <class A>
inline constexpr bool is_avx512_arch_v =
#if defined(__AVX512F__)
    std::is_base_of_v<xsimd::avx512f, A>;
#else
    false;
#endif

// x * y + z, rounded once.
template <class T, class A>
[[gnu::always_inline]] inline xsimd::batch<T, A> fma(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                                                     const xsimd::batch<T, A>& z) {
  if constexpr (is_avx512_arch_v<A> && std::is_same_v<T, float>) return _mm512_fmadd_ps(x, y, z);
  else if constexpr (is_avx512_arch_v<A> && std::is_same_v<T, double>) return _mm512_fmadd_pd(x, y, z);
  else return xsimd::fma(x, y, z);
}

// z - x * y, rounded once. (Not fma(-x, y, z): xsimd negates an AVX-512
// batch as 0 - x, two instructions the compiler does not fold into the
// negated multiply-add, and in reduce_ln2 and reduce_half_pi this is the
// hot loop.)
template <class T, class A>
[[gnu::always_inline]] inline xsimd::batch<T, A> fnma(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                                                      const xsimd::batch<T, A>& z) {
  if constexpr (is_avx512_arch_v<A> && std::is_same_v<T, float>) return _mm512_fnmadd_ps(x, y, z);
  else if constexpr (is_avx512_arch_v<A> && std::is_same_v<T, double>) return _mm512_fnmadd_pd(x, y, z);
  else return xsimd::fnma(x, y, z);
}

}  // namespace tsr::detail
